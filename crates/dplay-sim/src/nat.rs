//! NATs as link models (RFC 4787's terms): nodes put behind a [`Nat`] send from its public IP,
//! on a port its mapping behaviour picks, and receive only what its filtering behaviour lets
//! in. Used by the relay's scenarios (issue 23; docs/relay.md).

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};

/// How a NAT maps an inside address to a public port (RFC 4787 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapping {
    /// One public port per inside address, whatever the destination (a "cone" NAT; Linux
    /// masquerade keeps the inside port when it is free, as this does).
    EndpointIndependent,
    /// A new public port per inside address and destination address and port (a "symmetric"
    /// NAT; Linux masquerade with `random`).
    AddressAndPortDependent,
}

/// Which datagrams from outside a NAT lets in through a mapping (RFC 4787 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filtering {
    /// Anyone's ("full cone").
    EndpointIndependent,
    /// Only from an address and port the inside address sent to through that mapping
    /// ("port-restricted"; Linux conntrack).
    AddressAndPortDependent,
}

/// A NAT's behaviour and public address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NatConfig {
    /// The public IP every inside node sends from.
    pub public_ip: IpAddr,
    /// Mapping behaviour.
    pub mapping: Mapping,
    /// Filtering behaviour.
    pub filtering: Filtering,
}

impl NatConfig {
    /// A port-restricted cone NAT: endpoint-independent mapping, address-and-port-dependent
    /// filtering (what Linux masquerade does by default).
    pub fn port_restricted_cone(public_ip: IpAddr) -> Self {
        Self {
            public_ip,
            mapping: Mapping::EndpointIndependent,
            filtering: Filtering::AddressAndPortDependent,
        }
    }

    /// A symmetric NAT: address-and-port-dependent mapping and filtering.
    pub fn symmetric(public_ip: IpAddr) -> Self {
        Self {
            public_ip,
            mapping: Mapping::AddressAndPortDependent,
            filtering: Filtering::AddressAndPortDependent,
        }
    }
}

/// Which NAT of a sim: what [`crate::Sim::add_nat`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NatId(pub(crate) usize);

/// One mapping: the inside address, and whom it sent to.
#[derive(Debug, Clone)]
struct Binding {
    inside: SocketAddr,
    sent_to: BTreeSet<SocketAddr>,
}

/// A NAT's state: its mappings both ways.
#[derive(Debug, Clone)]
pub(crate) struct Nat {
    pub(crate) config: NatConfig,
    /// (inside, destination when the mapping depends on it) to public port.
    out: BTreeMap<(SocketAddr, Option<SocketAddr>), u16>,
    by_port: BTreeMap<u16, Binding>,
    next_port: u16,
    /// Datagrams from outside the filtering refused or no mapping matched.
    pub(crate) filtered: u64,
}

/// Where symmetric mappings start, and cone ones whose inside port is taken.
const FIRST_PORT: u16 = 20_000;

impl Nat {
    pub(crate) fn new(config: NatConfig) -> Self {
        Self { config, out: BTreeMap::new(), by_port: BTreeMap::new(), next_port: FIRST_PORT, filtered: 0 }
    }

    /// The public source of a datagram from `inside` to `to`, mapping it when new.
    pub(crate) fn outbound(&mut self, inside: SocketAddr, to: SocketAddr) -> SocketAddr {
        let key = match self.config.mapping {
            Mapping::EndpointIndependent => (inside, None),
            Mapping::AddressAndPortDependent => (inside, Some(to)),
        };
        let port = match self.out.get(&key) {
            Some(p) => *p,
            None => {
                let preserve = self.config.mapping == Mapping::EndpointIndependent
                    && !self.by_port.contains_key(&inside.port());
                let port = if preserve { inside.port() } else { self.free_port() };
                self.out.insert(key, port);
                self.by_port.insert(port, Binding { inside, sent_to: BTreeSet::new() });
                port
            }
        };
        if let Some(b) = self.by_port.get_mut(&port) {
            b.sent_to.insert(to);
        }
        SocketAddr::new(self.config.public_ip, port)
    }

    /// The inside address a datagram from `from` to public port `port` goes to, if the NAT
    /// lets it in; else counted.
    pub(crate) fn inbound(&mut self, from: SocketAddr, port: u16) -> Option<SocketAddr> {
        let allowed = self.by_port.get(&port).filter(|b| match self.config.filtering {
            Filtering::EndpointIndependent => true,
            Filtering::AddressAndPortDependent => b.sent_to.contains(&from),
        });
        match allowed {
            Some(b) => Some(b.inside),
            None => {
                self.filtered += 1;
                None
            }
        }
    }

    fn free_port(&mut self) -> u16 {
        while self.by_port.contains_key(&self.next_port) {
            self.next_port = self.next_port.checked_add(1).unwrap_or(FIRST_PORT);
        }
        let port = self.next_port;
        self.next_port = self.next_port.checked_add(1).unwrap_or(FIRST_PORT);
        port
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn cone_keeps_one_port_and_filters_by_peer() {
        let mut nat = Nat::new(NatConfig::port_restricted_cone(a("198.51.100.1:0").ip()));
        let p1 = nat.outbound(a("192.168.1.10:2302"), a("203.0.113.1:6073"));
        let p2 = nat.outbound(a("192.168.1.10:2302"), a("203.0.113.1:6074"));
        assert_eq!((p1, p2), (a("198.51.100.1:2302"), a("198.51.100.1:2302")));
        assert_eq!(nat.inbound(a("203.0.113.1:6074"), 2302), Some(a("192.168.1.10:2302")));
        assert_eq!(nat.inbound(a("203.0.113.1:6075"), 2302), None, "never sent there");
        assert_eq!(nat.filtered, 1);
    }

    #[test]
    fn symmetric_maps_each_destination_to_its_own_port() {
        let mut nat = Nat::new(NatConfig::symmetric(a("198.51.100.2:0").ip()));
        let p1 = nat.outbound(a("192.168.1.10:2302"), a("203.0.113.1:6073"));
        let p2 = nat.outbound(a("192.168.1.10:2302"), a("203.0.113.1:6074"));
        assert_ne!(p1.port(), p2.port());
        assert_eq!(nat.inbound(a("203.0.113.1:6074"), p1.port()), None, "p1 is for 6073 only");
        assert_eq!(nat.inbound(a("203.0.113.1:6074"), p2.port()), Some(a("192.168.1.10:2302")));
    }
}
