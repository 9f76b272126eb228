//! What the relay counts: per member, and what it refused (docs/relay.md).

use std::net::SocketAddr;

use dplay_wire::dp8::dpnid::Dpnid;

/// One member's relayed traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberStats {
    /// The member.
    pub dpnid: Dpnid,
    /// Its address as the host sees it (its NAT's public address and port).
    pub addr: SocketAddr,
    /// Its relay endpoint: where the other members reach it.
    pub endpoint: SocketAddr,
    /// Datagrams from it forwarded to others, and their bytes.
    pub datagrams_from: u64,
    /// Bytes of `datagrams_from`.
    pub bytes_from: u64,
    /// Datagrams forwarded to it, and their bytes.
    pub datagrams_to: u64,
    /// Bytes of `datagrams_to`.
    pub bytes_to: u64,
    /// Its datagrams dropped by its rate cap.
    pub rate_limited: u64,
}

impl MemberStats {
    /// One datagram of `len` bytes from this member was forwarded.
    pub(crate) fn count_from(&mut self, len: usize) {
        self.datagrams_from += 1;
        self.bytes_from += len as u64;
    }

    /// One datagram of `len` bytes was forwarded to this member.
    pub(crate) fn count_to(&mut self, len: usize) {
        self.datagrams_to += 1;
        self.bytes_to += len as u64;
    }
}

/// What the relay did, in total.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Relay endpoints, and how many a member holds.
    pub endpoints: usize,
    /// Endpoints held by members.
    pub endpoints_held: usize,
    /// Datagrams forwarded, and their bytes.
    pub datagrams: u64,
    /// Bytes of `datagrams`.
    pub bytes: u64,
    /// Datagrams from no member (or from a member we could not tell apart), dropped.
    pub strangers: u64,
    /// Datagrams whose receiver has not yet sent to the sender's endpoint: dropped, since an
    /// endpoint never sends first (the DirectPlay transport retries).
    pub unlatched: u64,
    /// Datagrams over their sender's rate cap, dropped.
    pub rate_limited: u64,
    /// Datagrams dropped because the host's memory budget or the queue was full.
    pub over_budget: u64,
    /// Member addresses learnt at endpoints (a PATH_TEST or a CONNECT).
    pub latched: u64,
    /// Each member's traffic, by DPNID.
    pub members: Vec<MemberStats>,
}
