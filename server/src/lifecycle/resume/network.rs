//! Which addresses a resume webhook may reach. With auth on, a token holder
//! names the URL, so without this a webhook is a way into the server's own
//! network: loopback services, the cloud metadata endpoint, the LAN.
//! The check is made on the address actually connected to (see
//! [`super::webhook`]), so a name that resolves somewhere else at dispatch
//! time than at creation gains nothing.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::IpNet;

/// The networks a webhook may not reach unless the operator allows them:
/// everything that is not the public internet.
const INTERNAL: [&str; 17] = [
    "0.0.0.0/8",      // "this network", and the unspecified address
    "10.0.0.0/8",     // private (RFC 1918)
    "100.64.0.0/10",  // shared address space (carrier NAT; some clouds' metadata)
    "127.0.0.0/8",    // loopback
    "169.254.0.0/16", // link-local, cloud metadata (169.254.169.254)
    "172.16.0.0/12",  // private (RFC 1918)
    "192.0.0.0/24",   // IETF protocol assignments
    "192.168.0.0/16", // private (RFC 1918)
    "198.18.0.0/15",  // benchmarking
    "224.0.0.0/4",    // multicast
    "240.0.0.0/4",    // reserved, broadcast
    "::/128",         // unspecified
    "::1/128",        // loopback
    "fc00::/7",       // unique local
    "fe80::/10",      // link-local
    "fec0::/10",      // site-local (deprecated, still routed by some)
    "ff00::/8",       // multicast
];

/// Where webhooks may go.
#[derive(Debug, Clone, Default)]
pub struct WebhookNetworks {
    /// Refuse internal addresses (auth on: callers are not the machine's owner).
    restrict: bool,
    /// Internal networks the operator allowed anyway (`--allow-webhook-network`).
    allowed: Vec<IpNet>,
    /// Single sockets this process itself serves (the demo agent's webhook).
    own: Vec<SocketAddr>,
}

impl WebhookNetworks {
    /// No restriction: auth off, where the only caller is the machine's user.
    #[must_use]
    pub fn open() -> Self {
        Self::default()
    }

    /// Internal addresses refused, but for `allowed`.
    #[must_use]
    pub fn restricted(allowed: Vec<IpNet>) -> Self {
        Self {
            restrict: true,
            allowed,
            own: Vec::new(),
        }
    }

    /// Also admits `socket`, one this process serves itself.
    #[must_use]
    pub fn with_own(mut self, socket: SocketAddr) -> Self {
        self.own.push(socket);
        self
    }

    /// Whether a webhook may connect to `ip` (any port).
    #[must_use]
    pub fn admits(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        !self.restrict || !is_internal(ip) || self.allowed.iter().any(|net| net.contains(&ip))
    }

    /// Whether a webhook may connect to `socket`.
    #[must_use]
    pub fn admits_socket(&self, socket: SocketAddr) -> bool {
        self.admits(socket.ip()) || self.own.contains(&socket)
    }
}

/// Whether `ip` lies outside the public internet.
#[must_use]
pub fn is_internal(ip: IpAddr) -> bool {
    let ip = canonical(ip);
    INTERNAL
        .iter()
        .filter_map(|net| net.parse::<IpNet>().ok())
        .any(|net| net.contains(&ip))
}

/// IPv4 written as IPv6 (`::ffff:127.0.0.1`, NAT64's `64:ff9b::7f00:1`) is
/// judged as the IPv4 address it reaches.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let nat64 = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0);
            let [a, b, c, d, e, f, g, h] = v6.segments();
            if [a, b, c, d, e, f] == nat64.segments()[..6] {
                let [g1, g2] = g.to_be_bytes();
                let [h1, h2] = h.to_be_bytes();
                return IpAddr::V4(Ipv4Addr::new(g1, g2, h1, h2));
            }
            IpAddr::V6(v6)
        }
        v4 @ IpAddr::V4(_) => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn every_internal_range_is_refused_under_auth_and_public_addresses_pass() {
        let networks = WebhookNetworks::restricted(Vec::new());
        for internal in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(!networks.admits(ip(internal)), "{internal} must be refused");
        }
        for public in ["93.184.216.34", "1.1.1.1", "172.32.0.1", "2606:4700::1111"] {
            assert!(networks.admits(ip(public)), "{public} must pass");
        }
    }

    #[test]
    fn the_operator_allows_networks_and_auth_off_allows_everything() {
        let allowed = WebhookNetworks::restricted(vec!["127.0.0.0/8".parse().unwrap()]);
        assert!(allowed.admits(ip("127.0.0.1")));
        assert!(allowed.admits(ip("::ffff:127.0.0.1")), "mapped form too");
        assert!(!allowed.admits(ip("10.0.0.1")));
        assert!(WebhookNetworks::open().admits(ip("169.254.169.254")));
    }

    #[test]
    fn an_own_socket_is_admitted_exactly() {
        let own: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let networks = WebhookNetworks::restricted(Vec::new()).with_own(own);
        assert!(networks.admits_socket(own));
        assert!(!networks.admits_socket("127.0.0.1:4001".parse().unwrap()));
    }
}
