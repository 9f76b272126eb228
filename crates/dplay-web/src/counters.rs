//! What `/metrics` reports (docs/metrics.md): the [`Counters`] the protocol loop publishes with
//! each snapshot, and the [`Tally`] it keeps between two publishes. Everything here is counted
//! on the protocol thread with plain integer adds; the server only reads the published copy.

use dplay_session::Session;

/// Totals since the host started, and what is held now, as `/metrics` shows them.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Counters {
    /// Players that entered the name table, the host itself not counted.
    pub joins: u64,
    /// Players that left the name table, by DPNDESTROYPLAYERREASON name (MC-DPL8CS 2.2.2.2).
    pub leaves: Vec<(&'static str, u64)>,
    /// Drops and refusals at the transport and session layers, by reason (docs/limits.md).
    pub refusals: Vec<(&'static str, u64)>,
    /// Joins refused, by the DPNERR/DPERR code sent.
    pub join_refusals: Vec<(String, u64)>,
    /// UDP datagrams received on the host's socket.
    pub datagrams_received: u64,
    /// UDP datagrams sent from it.
    pub datagrams_sent: u64,
    /// Bytes of the datagrams received.
    pub bytes_received: u64,
    /// Bytes of the datagrams sent.
    pub bytes_sent: u64,
    /// DFRAMEs sent again (MC-DPL8R 3.1.6.5), on every connection so far.
    pub retransmissions: u64,
    /// Bytes held for reassembly now (MC-DPL8R 3.1.5.2.1, 3.1.5.2.6).
    pub reassembly_bytes: u64,
    /// Transport connections held now, lingering ones included.
    pub connections: u64,
    /// Inbound transport attempts not confirmed yet.
    pub half_open: u64,
    /// Joiners connected but not members yet.
    pub joining: u64,
}

/// The loop's running totals: datagrams and bytes each way, joins, leaves by reason.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    joins: u64,
    leaves: Vec<(&'static str, u64)>,
    /// By code: the few codes a host refuses with, so the list stays short.
    join_refusals: Vec<(String, u64)>,
    datagrams_received: u64,
    datagrams_sent: u64,
    bytes_received: u64,
    bytes_sent: u64,
}

impl Tally {
    /// One datagram of `len` bytes came in.
    pub(crate) fn received(&mut self, len: usize) {
        self.datagrams_received += 1;
        self.bytes_received += len as u64;
    }

    /// One datagram of `len` bytes went out.
    pub(crate) fn sent(&mut self, len: usize) {
        self.datagrams_sent += 1;
        self.bytes_sent += len as u64;
    }

    /// A player other than the host joined.
    pub(crate) fn join(&mut self) {
        self.joins += 1;
    }

    /// A player left for `reason` (one of the few DPNDESTROYPLAYERREASON names: the list
    /// stays short).
    pub(crate) fn leave(&mut self, reason: &'static str) {
        match self.leaves.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => self.leaves.push((reason, 1)),
        }
    }

    /// A join was refused with `code`.
    pub(crate) fn refused(&mut self, code: &str) {
        match self.join_refusals.iter_mut().find(|(c, _)| c == code) {
            Some((_, n)) => *n += 1,
            None => self.join_refusals.push((code.to_owned(), 1)),
        }
    }

    /// Puts the tally into `c`, whose other fields the protocol filled
    /// ([`session_counters`]).
    pub(crate) fn fill(&self, c: &mut Counters) {
        c.joins = self.joins;
        c.leaves.clone_from(&self.leaves);
        c.join_refusals.clone_from(&self.join_refusals);
        c.datagrams_received = self.datagrams_received;
        c.datagrams_sent = self.datagrams_sent;
        c.bytes_received = self.bytes_received;
        c.bytes_sent = self.bytes_sent;
    }
}

/// What a DirectPlay 8 `session` holds and refused so far (O(connections)); the tally's fields
/// are left for [`Tally::fill`].
pub(crate) fn session_counters(session: &Session) -> Counters {
    let refusals = session.refusals();
    let endpoint = session.endpoint();
    Counters {
        refusals: refusals.counts,
        retransmissions: endpoint.all_retransmissions(),
        reassembly_bytes: endpoint.reassembly_bytes() as u64,
        connections: refusals.connections as u64,
        half_open: refusals.half_open as u64,
        joining: refusals.joining as u64,
        ..Counters::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_are_counted_by_reason() {
        let mut t = Tally::default();
        t.leave("DPNDESTROYPLAYERREASON_NORMAL");
        t.leave("DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER");
        t.leave("DPNDESTROYPLAYERREASON_NORMAL");
        assert_eq!(
            t.leaves,
            [("DPNDESTROYPLAYERREASON_NORMAL", 2), ("DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER", 1)]
        );
        t.received(10);
        t.received(5);
        t.sent(7);
        assert_eq!((t.datagrams_received, t.bytes_received, t.datagrams_sent, t.bytes_sent), (2, 15, 1, 7));
    }
}
