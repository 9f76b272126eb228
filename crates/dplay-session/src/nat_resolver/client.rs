//! The NAT resolver query client (MC-DPLNAT 3.3): a host asks a resolver server which public
//! address its queries come from, from the port it hosts on (3.3.6), so the answer is the
//! address players reach it at.

use std::net::{SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_wire::dp8::path_test::{NAT_RESOLVER_RESPONSE_DATA_KIND, NatResolverQuery, NatResolverResponse};
use dplay_wire::{Blob, Wire};

/// The Retry Timer's interval (MC-DPLNAT 3.3.2: 1 second).
pub const RETRY_INTERVAL: Duration = Duration::from_secs(1);

/// Queries sent at most (MC-DPLNAT 3.3.2: four attempts).
pub const MAX_TRIES: u32 = 4;

/// How a query ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolverOutcome {
    /// The resolver saw the queries come from this public address and port (MC-DPLNAT 3.3.5).
    Resolved(SocketAddrV4),
    /// No valid response after [`MAX_TRIES`] queries, [`RETRY_INTERVAL`] apart (3.3.6).
    GaveUp,
}

/// One NAT resolver query (MC-DPLNAT 3.3), sans-IO. Its datagrams go from the socket the host's
/// session uses; the runtime hands it the datagrams that come from the resolver
/// ([`ResolverClient::handle_datagram`] says whether it took one).
#[derive(Debug)]
pub struct ResolverClient {
    resolver: SocketAddr,
    user_data: Vec<u8>,
    source_id: u32,
    /// `wMessageID` of each query sent: a response may echo any of them.
    sent: Vec<u16>,
    next_message_id: u16,
    /// When the Retry Timer elapses next; `None` once done.
    timer: Option<Instant>,
    /// A query is due to go out.
    due: bool,
    outcome: Option<ResolverOutcome>,
    reported: bool,
}

impl ResolverClient {
    /// Starts a query to `resolver` at `now` (MC-DPLNAT 3.3.3), carrying `user_data` (empty
    /// for none). `message_id` and `source_id` are the first query's IDs, random in practice:
    /// each retry takes the next `wMessageID` (2.2.3: it SHOULD change per retry).
    pub fn new(
        resolver: SocketAddr,
        user_data: Vec<u8>,
        message_id: u16,
        source_id: u32,
        now: Instant,
    ) -> Self {
        Self {
            resolver,
            user_data,
            source_id,
            sent: Vec::new(),
            next_message_id: message_id,
            timer: Some(now),
            due: false,
            outcome: None,
            reported: false,
        }
    }

    /// The resolver asked.
    pub fn resolver(&self) -> SocketAddr {
        self.resolver
    }

    /// A datagram arrived from `from`: true when it was the resolver's response, taken here
    /// (valid or not: MC-DPLNAT 3.3.5 ignores a malformed one); false for any other datagram,
    /// which belongs to the session.
    pub fn handle_datagram(&mut self, from: SocketAddr, data: &[u8]) -> bool {
        if from != self.resolver || data.get(..2) != Some(&[0, NAT_RESOLVER_RESPONSE_DATA_KIND]) {
            return false;
        }
        let Ok(response) = NatResolverResponse::parse(data) else { return true };
        let ours = response.source_id_echo == self.source_id && self.sent.contains(&response.message_id_echo);
        if ours && self.outcome.is_none() {
            self.outcome =
                Some(ResolverOutcome::Resolved(SocketAddrV4::new(response.address, response.port)));
            self.timer = None;
            self.due = false;
        }
        true
    }

    /// The Retry Timer (MC-DPLNAT 3.3.6): sends the next query, or gives up after the last.
    pub fn handle_timeout(&mut self, now: Instant) {
        let Some(at) = self.timer else { return };
        if now < at {
            return;
        }
        if self.sent.len() >= MAX_TRIES as usize {
            self.outcome = Some(ResolverOutcome::GaveUp);
            self.timer = None;
            return;
        }
        self.due = true;
        self.timer = Some(now + RETRY_INTERVAL);
    }

    /// The query due, if any: written into `buf`, with its destination (the resolver).
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        if !std::mem::take(&mut self.due) {
            return None;
        }
        let query = NatResolverQuery {
            message_id: self.next_message_id,
            source_id: self.source_id,
            user_data: Blob::new(&self.user_data),
        };
        buf.resize(query.encoded_len(), 0);
        let len = query.emit(buf).ok()?;
        buf.truncate(len);
        self.sent.push(self.next_message_id);
        self.next_message_id = self.next_message_id.wrapping_add(1);
        Some(self.resolver)
    }

    /// When [`ResolverClient::handle_timeout`] must next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timer
    }

    /// How the query ended, once.
    pub fn poll_outcome(&mut self) -> Option<ResolverOutcome> {
        if self.reported {
            return None;
        }
        self.reported = self.outcome.is_some();
        self.outcome
    }

    /// Aborts the query: the local player is no longer the host (MC-DPLNAT 3.3.4).
    pub fn abort(&mut self) {
        self.timer = None;
        self.due = false;
    }
}
