//! Addresses on the command line: an IP, `ip:port`, or a host name (`localhost`,
//! `host.example:6073`) resolved through the system resolver.
//!
//! An address without a port gets port 0, which each command reads as its default. A name
//! resolving to both families resolves to its IPv4 address: DirectPlay 4 runs over IPv4 only,
//! and the DirectPlay hosts met in practice listen on IPv4.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// Parses `ip`, `ip:port`, `name` or `name:port`.
pub(crate) fn parse_host(text: &str) -> Result<SocketAddr, String> {
    // `[::1]` without a port too (issue 25 item 8), as `[::1]:6073` is written.
    let bare = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(text);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 0));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let (name, port) = match text.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') => {
            (name, port.parse::<u16>().map_err(|_| format!("`{port}` in `{text}` is not a port (0-65535)"))?)
        }
        _ => (text, 0),
    };
    if name.is_empty() {
        return Err(format!("`{text}` has no host: {EXAMPLE}"));
    }
    resolve(name, port).ok_or_else(|| format!("`{text}` is not an address or a known host name: {EXAMPLE}"))
}

/// Parses a target (`ip`, `ip:port`, `name`, `name:port`): port 0 means "any free port" for a
/// bind and names no host, so `:0` is refused (issue 25 item 12).
pub(crate) fn parse_target(text: &str) -> Result<SocketAddr, String> {
    let addr = parse_host(text)?;
    if addr.port() == 0 && text.ends_with(":0") {
        return Err(format!(
            "port 0 in `{text}` names no host's port (it means \"any free port\" only for --bind): give the host's port, or none for the default"
        ));
    }
    Ok(addr)
}

/// A host's `--bind`: its address, and its port only when one was given. `:0` is "any free
/// port"; no port, the command's default (issue 25 item 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bind {
    pub(crate) ip: IpAddr,
    pub(crate) port: Option<u16>,
}

impl Bind {
    /// The address to bind, with `default` when no port was given.
    pub(crate) fn or_port(self, default: u16) -> SocketAddr {
        SocketAddr::new(self.ip, self.port.unwrap_or(default))
    }
}

/// Parses a host's `--bind` (`ip`, `ip:port`, `name`, `name:port`).
pub(crate) fn parse_bind(text: &str) -> Result<Bind, String> {
    let addr = parse_host(text)?;
    let given =
        !text.ends_with(']') && text.parse::<IpAddr>().is_err() && (addr.port() != 0 || text.ends_with(":0"));
    Ok(Bind { ip: addr.ip(), port: given.then_some(addr.port()) })
}

const EXAMPLE: &str =
    "give an IP or a host name, with :port or without, such as 127.0.0.1, localhost:6073 or 192.168.1.10";

/// Where players can join a socket bound to `bound`: itself, or when bound to the unspecified
/// address, every interface address of its family (loopback last), with its port.
pub(crate) fn joinable(bound: SocketAddr) -> Vec<SocketAddr> {
    if !bound.ip().is_unspecified() {
        return vec![bound];
    }
    let mut ips: Vec<IpAddr> = if_addrs::get_if_addrs()
        .unwrap_or_default()
        .into_iter()
        .map(|i| i.ip())
        .filter(|ip| ip.is_ipv4() == bound.is_ipv4())
        .collect();
    ips.sort_by_key(|ip| (ip.is_loopback(), *ip));
    ips.dedup();
    match ips.is_empty() {
        true => vec![bound],
        false => ips.into_iter().map(|ip| SocketAddr::new(ip, bound.port())).collect(),
    }
}

/// The directed broadcast address of every IPv4 interface (of the one holding `bound`, when
/// bound to one): where a LAN enumeration goes (issue 25 item 9). The limited broadcast,
/// 255.255.255.255, follows the default route only, and fails without one ("Network is
/// unreachable"); empty when no interface has a broadcast address.
pub(crate) fn broadcasts(bound: std::net::Ipv4Addr) -> Vec<std::net::Ipv4Addr> {
    let mut all: Vec<std::net::Ipv4Addr> = if_addrs::get_if_addrs()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|i| match i.addr {
            if_addrs::IfAddr::V4(a) if bound.is_unspecified() || a.ip == bound => a.broadcast,
            _ => None,
        })
        .collect();
    all.sort();
    all.dedup();
    all
}

/// `a, b, c` for the text output.
pub(crate) fn list(addrs: &[SocketAddr]) -> String {
    addrs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// The first IPv4 address `name` resolves to, else the first address.
fn resolve(name: &str, port: u16) -> Option<SocketAddr> {
    let addrs: Vec<SocketAddr> = (name, port).to_socket_addrs().ok()?.collect();
    addrs.iter().find(|a| a.is_ipv4()).or_else(|| addrs.first()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_and_ports() {
        assert_eq!(parse_host("10.0.0.1"), Ok("10.0.0.1:0".parse().unwrap()));
        assert_eq!(parse_host("10.0.0.1:2300"), Ok("10.0.0.1:2300".parse().unwrap()));
        assert_eq!(parse_host("::1"), Ok("[::1]:0".parse().unwrap()));
        assert_eq!(parse_host("[::1]:6073"), Ok("[::1]:6073".parse().unwrap()));
        assert_eq!(parse_host("[::1]"), Ok("[::1]:0".parse().unwrap()));
        // Issue 25 item 12: port 0 is no target.
        assert!(parse_target("127.0.0.1:0").unwrap_err().contains("port 0"));
        assert!(parse_target("[::1]:0").is_err());
        assert_eq!(parse_target("127.0.0.1"), Ok("127.0.0.1:0".parse().unwrap()));
        // A bind's `:0` is any free port; no port, the default.
        let ip = IpAddr::from([127, 0, 0, 1]);
        assert_eq!(parse_bind("127.0.0.1:0"), Ok(Bind { ip, port: Some(0) }));
        assert_eq!(parse_bind("127.0.0.1"), Ok(Bind { ip, port: None }));
        assert_eq!(parse_bind("127.0.0.1:2300"), Ok(Bind { ip, port: Some(2300) }));
        assert_eq!(parse_bind("::0").map(|b| b.port), Ok(None));
        assert_eq!(parse_bind("[::1]:0").map(|b| b.port), Ok(Some(0)));
        assert_eq!(parse_bind("[::1]").map(|b| b.port), Ok(None));
        assert_eq!(parse_bind("localhost:0"), Ok(Bind { ip, port: Some(0) }));
    }

    /// Issue #15 item 5: host names resolve (`localhost` needs no DNS server).
    #[test]
    fn host_names() {
        assert_eq!(parse_host("localhost"), Ok("127.0.0.1:0".parse().unwrap()));
        assert_eq!(parse_host("localhost:6073"), Ok("127.0.0.1:6073".parse().unwrap()));
        assert_eq!(parse_host("localhost:47101"), Ok("127.0.0.1:47101".parse().unwrap()));
        assert!(parse_host("localhost:70000").unwrap_err().contains("not a port"));
        assert!(parse_host(":6073").unwrap_err().contains("no host"));
        assert!(parse_host("no-such-host.invalid").unwrap_err().contains("not an address"));
    }

    /// Issue #15 item 11: a host bound to 0.0.0.0 lists its interfaces' addresses.
    #[test]
    fn joinable_addresses() {
        let bound: SocketAddr = "127.0.0.1:6073".parse().unwrap();
        assert_eq!(joinable(bound), [bound]);
        let any = joinable("0.0.0.0:6073".parse().unwrap());
        assert!(any.contains(&bound), "{any:?}");
        assert!(any.iter().all(|a| a.is_ipv4() && a.port() == 6073 && !a.ip().is_unspecified()));
        assert_eq!(any.last(), Some(&bound), "loopback last");
    }
}
