//! Flag values `clarify serve` reads that clap cannot check alone.

/// A resume command's program: a full path, so that `PATH` never decides
/// what runs.
pub fn absolute_path(text: &str) -> Result<String, String> {
    if std::path::Path::new(text).is_absolute() {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "{text}: give the program's full path (e.g. /usr/local/bin/my-agent)"
        ))
    }
}

/// A network as CIDR (`10.0.0.0/8`) or one address (`127.0.0.1`).
pub fn network(text: &str) -> Result<ipnet::IpNet, String> {
    let text = text.trim();
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{text}: not a network (CIDR such as 10.0.0.0/8) or an address"))
}
