//! [`PeerBytes`]: the bytes a DirectPlay 4 endpoint sent to and received from each remote
//! instance, for a dashboard. Neither DirectPlay 4's TCP nor its UDP counts them (MC-DPL4CS
//! 2.1), so the runtime counts what passes its sockets, by the instance's addresses: its UDP
//! socket for datagrams both ways, its TCP listener for what we write to it. A connection the
//! instance opened to us comes from a port of no meaning; its bytes are the instance whose
//! listener the connection's first message names in its header's SockAddr (MC-DPL4CS 2.2.6),
//! at the connection's IP address (as the session answers it by default).

use std::collections::{HashMap, HashSet};
use std::net::{SocketAddr, SocketAddrV4};

use dplay_session::dp4::Dp4Session;
use dplay_wire::Reader;
use dplay_wire::dp4::header::SockAddrIn;

use crate::StreamId;

/// Addresses (and connections) counted at most: past it, the addresses of no instance are
/// forgotten ([`PeerBytes::retain`]), so spoofed datagrams cannot grow it.
pub const MAX_PEER_ADDRS: usize = 4096;

/// Bytes each way, for one remote instance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ByteCounts {
    /// Bytes we sent it (UDP payloads and TCP bytes).
    pub sent: u64,
    /// Bytes we received from it.
    pub received: u64,
}

/// Bytes to and from each remote address of a DirectPlay 4 endpoint (module documentation).
#[derive(Debug, Default)]
pub struct PeerBytes {
    by_addr: HashMap<SocketAddr, ByteCounts>,
    /// Connections whose first message named a listener.
    streams: HashMap<StreamId, SocketAddr>,
}

impl PeerBytes {
    /// Whether no new address can be counted until [`PeerBytes::retain`] forgets some.
    pub fn is_full(&self) -> bool {
        self.by_addr.len() >= MAX_PEER_ADDRS
    }

    fn entry(&mut self, addr: SocketAddr) -> Option<&mut ByteCounts> {
        let full = self.is_full();
        match self.by_addr.entry(addr) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.into_mut()),
            std::collections::hash_map::Entry::Vacant(_) if full => None,
            std::collections::hash_map::Entry::Vacant(e) => Some(e.insert(ByteCounts::default())),
        }
    }

    /// `n` bytes sent to `to` (a UDP socket or a TCP listener).
    pub(crate) fn sent(&mut self, to: SocketAddr, n: usize) {
        if let Some(c) = self.entry(to) {
            c.sent = c.sent.saturating_add(n as u64);
        }
    }

    /// A datagram of `n` bytes from `from`.
    pub(crate) fn datagram(&mut self, from: SocketAddr, n: usize) {
        if let Some(c) = self.entry(from) {
            c.received = c.received.saturating_add(n as u64);
        }
    }

    /// Bytes read from connection `stream` whose peer is `peer`: counted for the listener its
    /// first message names (the first read starts a message).
    pub(crate) fn stream(&mut self, stream: StreamId, peer: SocketAddr, data: &[u8]) {
        let listener = match self.streams.get(&stream) {
            Some(l) => *l,
            None => {
                let Some(l) = named_listener(peer, data) else { return };
                if self.streams.len() < MAX_PEER_ADDRS {
                    self.streams.insert(stream, l);
                }
                l
            }
        };
        if let Some(c) = self.entry(listener) {
            c.received = c.received.saturating_add(data.len() as u64);
        }
    }

    /// Connection `stream` closed.
    pub(crate) fn stream_closed(&mut self, stream: StreamId) {
        self.streams.remove(&stream);
    }

    /// Keeps the counts of `keep` only (the addresses of the instances in the session).
    pub fn retain(&mut self, keep: &HashSet<SocketAddr>) {
        self.by_addr.retain(|a, _| keep.contains(a));
    }

    /// When full, forgets every address that is no instance's of `session`.
    pub(crate) fn prune(&mut self, session: &Dp4Session) {
        if self.is_full() {
            let keep: HashSet<SocketAddr> = session
                .players()
                .values()
                .filter(|p| p.is_system() && !p.local)
                .filter_map(|p| p.addrs)
                .flat_map(|(stream, datagram)| [stream, datagram])
                .collect();
            self.retain(&keep);
        }
    }

    /// The bytes of the instance whose TCP listener and UDP socket are `addrs`.
    pub fn instance(&self, addrs: (SocketAddr, SocketAddr)) -> Option<ByteCounts> {
        let (a, b) = (self.by_addr.get(&addrs.0), self.by_addr.get(&addrs.1));
        if a.is_none() && b.is_none() {
            return None;
        }
        let (a, b) = (a.copied().unwrap_or_default(), b.copied().unwrap_or_default());
        Some(ByteCounts {
            sent: a.sent.saturating_add(b.sent),
            received: a.received.saturating_add(b.received),
        })
    }
}

/// The listener the DPSP header at the start of `data` names: its SockAddr's port at `peer`'s
/// IP address (MC-DPL4CS 2.2.6: size/token, then SockAddr).
fn named_listener(peer: SocketAddr, data: &[u8]) -> Option<SocketAddr> {
    let sock_addr: SocketAddrV4 = SockAddrIn::read(&mut Reader::new(data.get(4..20)?)).ok()?.addr;
    Some(SocketAddr::new(peer.ip(), sock_addr.port()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// A DPSP header: size/token, then SockAddr naming listener port `port` (MC-DPL4CS 2.2.6).
    fn header(port: u16) -> Vec<u8> {
        let mut b = vec![0x20, 0, 0xb0, 0xfa, 2, 0];
        b.extend_from_slice(&port.to_be_bytes());
        b.extend_from_slice(&[0; 12]);
        b
    }

    #[test]
    fn an_instance_is_counted_by_its_socket_its_listener_and_its_connections() {
        let mut bytes = PeerBytes::default();
        let (listener, socket) = (addr(2300), addr(2350));
        bytes.datagram(socket, 100);
        bytes.sent(socket, 40);
        bytes.sent(listener, 7);
        // A connection it opened, from a port of no meaning: its first message names 2300.
        let first = header(2300);
        bytes.stream(StreamId(9), addr(50123), &first);
        bytes.stream(StreamId(9), addr(50123), &[0; 5]);
        assert_eq!(
            bytes.instance((listener, socket)),
            Some(ByteCounts { sent: 47, received: 100 + first.len() as u64 + 5 })
        );
        assert_eq!(bytes.instance((addr(1), addr(2))), None);
        bytes.stream_closed(StreamId(9));
        // Too short to name a listener: not counted.
        bytes.stream(StreamId(10), addr(50124), &[1, 2, 3]);
        assert_eq!(bytes.instance((addr(50124), addr(50124))), None);
    }

    /// Whatever a connection starts with, it is counted only when a whole SockAddr names a
    /// listener, and nothing panics.
    #[test]
    fn any_first_read_is_taken_safely() {
        let mut bytes = PeerBytes::default();
        for len in 0..40u8 {
            let data: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37).wrapping_add(len)).collect();
            bytes.stream(StreamId(u64::from(len)), addr(40000), &data);
            assert_eq!(bytes.streams.len(), usize::from(len.saturating_sub(19)), "{len} bytes");
        }
        assert!(bytes.by_addr.len() <= bytes.streams.len());
    }

    #[test]
    fn spoofed_addresses_fill_it_only_up_to_its_cap() {
        let mut bytes = PeerBytes::default();
        let known = addr(2350);
        bytes.datagram(known, 1);
        for port in 0..u16::try_from(MAX_PEER_ADDRS + 10).unwrap() {
            bytes.datagram(SocketAddr::from(([10, 0, 0, 1], port)), 1);
        }
        assert!(bytes.is_full());
        assert_eq!(bytes.by_addr.len(), MAX_PEER_ADDRS);
        bytes.retain(&HashSet::from([known]));
        assert!(!bytes.is_full());
        assert_eq!(bytes.instance((addr(2300), known)), Some(ByteCounts { sent: 0, received: 1 }));
    }
}
