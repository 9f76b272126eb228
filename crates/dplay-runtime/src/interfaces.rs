//! The local interface addresses, for a session whose socket is bound to 0.0.0.0 or ::: it
//! offers them as DN_ALTERNATE_ADDRESS records instead of the unspecified address
//! (MC-DPL8CS 2.2.9; `dplay_session::SessionConfig::interface_addrs`).

use std::net::IpAddr;

/// The addresses of the interfaces that are up, loopback last, of the family of `like`
/// (IPv4 or IPv6), each once. Empty where the system cannot be asked (no `getifaddrs`: not
/// Linux, macOS, a BSD or illumos) or refuses.
pub fn interface_addrs(like: IpAddr) -> Vec<IpAddr> {
    let mut addrs = system_addrs(like);
    addrs.sort_by_key(|ip| (ip.is_loopback(), *ip));
    addrs.dedup();
    addrs
}

#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_os = "illumos",
    target_os = "solaris"
))]
fn system_addrs(like: IpAddr) -> Vec<IpAddr> {
    use nix::net::if_::InterfaceFlags;
    let Ok(list) = nix::ifaddrs::getifaddrs() else { return Vec::new() };
    list.filter(|i| i.flags.contains(InterfaceFlags::IFF_UP))
        .filter_map(|i| i.address)
        .filter_map(|a| match (a.as_sockaddr_in(), a.as_sockaddr_in6()) {
            (Some(v4), _) => Some(IpAddr::V4(v4.ip())),
            (_, Some(v6)) => Some(IpAddr::V6(v6.ip())),
            _ => None,
        })
        .filter(|ip| ip.is_ipv4() == like.is_ipv4() && !ip.is_unspecified())
        .collect()
}

#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_os = "illumos",
    target_os = "solaris"
)))]
fn system_addrs(_like: IpAddr) -> Vec<IpAddr> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Never an unspecified address, never the other family.
    #[test]
    fn only_real_addresses_of_the_family() {
        for like in [IpAddr::from([0, 0, 0, 0]), IpAddr::from([0u16; 8])] {
            for ip in interface_addrs(like) {
                assert!(!ip.is_unspecified() && ip.is_ipv4() == like.is_ipv4(), "{ip}");
            }
        }
    }
}
