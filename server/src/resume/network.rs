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

/// An IPv6 address that carries an IPv4 address is judged as the IPv4
/// address it reaches (issue 26): mapped `::ffff:a.b.c.d`, compatible
/// `::a.b.c.d` (`::/96`), translated `::ffff:0:a.b.c.d`, NAT64
/// `64:ff9b::/96` and the local-use `64:ff9b:1::/48`, 6to4 `2002::/16`
/// (the address in bits 16–48), and Teredo `2001::/32` (the client's
/// address, stored inverted in the last 32 bits).
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 @ IpAddr::V4(_) => v4,
    }
}

fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let v4 = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        // Mapped and compatible (`::/96`, which holds `::` and `::1` too:
        // 0.0.0.0 and 0.0.0.1 are internal as well).
        [0, 0, 0, 0, 0, 0xffff | 0, g, h] => Some(v4(g, h)),
        // Translated (SIIT).
        [0, 0, 0, 0, 0xffff, 0, g, h] => Some(v4(g, h)),
        // NAT64, well-known prefix.
        [0x64, 0xff9b, 0, 0, 0, 0, g, h] => Some(v4(g, h)),
        // NAT64, local-use prefix: the address in the last 32 bits.
        [0x64, 0xff9b, 1, _, _, _, g, h] => Some(v4(g, h)),
        // 6to4.
        [0x2002, b, c, ..] => Some(v4(b, c)),
        // Teredo: the client's address, each bit inverted.
        [0x2001, 0, _, _, _, _, g, h] => Some(v4(!g, !h)),
        _ => None,
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

    /// Issue 26: every IPv6 form that carries an IPv4 address is judged by
    /// that address, one case per form; the same forms around a public
    /// address pass.
    #[test]
    fn ipv6_forms_carrying_an_internal_ipv4_address_are_refused() {
        let networks = WebhookNetworks::restricted(Vec::new());
        for (form, internal, public) in [
            ("mapped", "::ffff:127.0.0.1", "::ffff:8.8.8.8"),
            ("compatible ::/96", "::127.0.0.1", "::8.8.8.8"),
            (
                "translated ::ffff:0:0/96",
                "::ffff:0:127.0.0.1",
                "::ffff:0:8.8.8.8",
            ),
            ("NAT64 64:ff9b::/96", "64:ff9b::7f00:1", "64:ff9b::808:808"),
            (
                "local-use NAT64 64:ff9b:1::/48",
                "64:ff9b:1::7f00:1",
                "64:ff9b:1::808:808",
            ),
            ("6to4 2002::/16", "2002:7f00:1::", "2002:808:808::1"),
            ("6to4, metadata", "2002:a9fe:a9fe::1", "2002:101:101::"),
            // 127.0.0.1 inverted is 80ff:fffe; 8.8.8.8 inverted f7f7:f7f7.
            (
                "Teredo 2001::/32",
                "2001:0:4136:e378:8000:63bf:80ff:fffe",
                "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
            ),
        ] {
            assert!(
                !networks.admits(ip(internal)),
                "{form}: {internal} must be refused"
            );
            assert!(networks.admits(ip(public)), "{form}: {public} must pass");
        }
        let allowed = WebhookNetworks::restricted(vec!["127.0.0.0/8".parse().unwrap()]);
        assert!(
            allowed.admits(ip("2002:7f00:1::")),
            "judged as 127.0.0.1, which is allowed"
        );
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
