//! [`NatQuery`]: a host's protocol with a NAT resolver query beside it (MC-DPLNAT 3.3). The
//! query goes from the host's own socket (3.3.6), so the resolver sees the address players
//! reach the session at; the resolver's responses are taken out before the session sees them.

use std::net::SocketAddr;
use std::time::Instant;

use crossbeam_channel::Sender;
use dplay_session::nat_resolver::{ResolverClient, ResolverOutcome};

use crate::protocol::{Path, Protocol, SocketId, StreamClosed, StreamId, StreamStatus, Transmit};

/// `inner` (a DirectPlay 8 host on [`SocketId::MAIN`]) with an optional NAT resolver query,
/// whose outcome goes to a channel once.
pub struct NatQuery<P> {
    inner: P,
    query: Option<(ResolverClient, Sender<ResolverOutcome>)>,
}

impl<P> NatQuery<P> {
    /// `inner` alone (`query` is `None`), or with `query`, whose outcome is sent on `outcome`.
    pub fn new(inner: P, query: Option<(ResolverClient, Sender<ResolverOutcome>)>) -> Self {
        Self { inner, query }
    }

    /// The wrapped protocol.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// Sends the outcome once it is known, and forgets the query.
    fn report(&mut self) {
        let Some((client, to)) = &mut self.query else { return };
        if let Some(outcome) = client.poll_outcome() {
            let _ = to.send(outcome);
            self.query = None;
        }
    }
}

impl<P: Protocol> Protocol for NatQuery<P> {
    type Command = P::Command;
    type Event = P::Event;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.handle_udp(now, SocketId::MAIN, from, data);
    }

    fn handle_udp(&mut self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) {
        if socket == SocketId::MAIN && self.query.as_mut().is_some_and(|(c, _)| c.handle_datagram(from, data))
        {
            return self.report();
        }
        self.inner.handle_udp(now, socket, from, data);
    }

    fn handle_stream(
        &mut self,
        now: Instant,
        stream: StreamId,
        peer: SocketAddr,
        data: &[u8],
    ) -> Result<StreamStatus, String> {
        self.inner.handle_stream(now, stream, peer, data)
    }

    fn handle_stream_accepted(
        &mut self,
        now: Instant,
        stream: StreamId,
        listener: SocketId,
        peer: SocketAddr,
    ) {
        self.inner.handle_stream_accepted(now, stream, listener, peer);
    }

    fn handle_stream_closed(&mut self, now: Instant, stream: StreamId, closed: &StreamClosed) {
        self.inner.handle_stream_closed(now, stream, closed);
    }

    fn handle_command(&mut self, now: Instant, command: P::Command) {
        self.inner.handle_command(now, command);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if let Some((client, _)) = &mut self.query {
            client.handle_timeout(now);
            self.report();
        }
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now);
        }
    }

    fn poll_send(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        if let Some((client, _)) = &mut self.query
            && let Some(to) = client.poll_transmit(buf)
        {
            return Some(Transmit { to, path: Path::Udp(SocketId::MAIN) });
        }
        self.inner.poll_send(now, buf)
    }

    fn poll_event(&mut self) -> Option<P::Event> {
        self.inner.poll_event()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let query = self.query.as_ref().and_then(|(c, _)| c.poll_timeout());
        match (query, self.inner.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    fn poll_abandon(&mut self) -> Option<SocketAddr> {
        self.inner.poll_abandon()
    }

    fn memory_budget(&self) -> Option<dplay_wire::budget::MemoryBudget> {
        self.inner.memory_budget()
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, SocketAddrV4};
    use std::time::Duration;

    use dplay_wire::Wire;
    use dplay_wire::dp8::path_test::NatResolverResponse;

    use super::*;

    /// A host stand-in that keeps what it is handed.
    #[derive(Default)]
    struct Inner {
        got: Vec<Vec<u8>>,
    }

    impl Protocol for Inner {
        type Command = ();
        type Event = ();
        fn handle_datagram(&mut self, _now: Instant, _from: SocketAddr, data: &[u8]) {
            self.got.push(data.to_vec());
        }
        fn handle_command(&mut self, _now: Instant, _command: ()) {}
        fn handle_timeout(&mut self, _now: Instant) {}
        fn poll_event(&mut self) -> Option<()> {
            None
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
    }

    /// The query leaves from the host's socket; the resolver's answer is taken and reported
    /// once; everything else, from the resolver's address too, reaches the host.
    #[test]
    fn the_query_beside_a_host() {
        let now = Instant::now();
        let resolver = SocketAddr::from((Ipv4Addr::new(198, 51, 100, 1), 2506));
        let (tx, rx) = crossbeam_channel::bounded(1);
        let mut p =
            NatQuery::new(Inner::default(), Some((ResolverClient::new(resolver, Vec::new(), 7, 9, now), tx)));
        assert_eq!(p.poll_timeout(), Some(now));
        p.handle_timeout(now);
        let mut buf = Vec::new();
        assert_eq!(
            p.poll_send(now, &mut buf),
            Some(Transmit { to: resolver, path: Path::Udp(SocketId::MAIN) })
        );
        assert_eq!(p.poll_timeout(), Some(now + Duration::from_secs(1)));
        p.handle_datagram(now, resolver, &[0x88, 0x01, 0, 0]);
        let answer = NatResolverResponse {
            message_id_echo: 7,
            source_id_echo: 9,
            address: Ipv4Addr::new(203, 0, 113, 7),
            port: 6073,
        };
        p.handle_datagram(now, resolver, &answer.to_vec().unwrap());
        assert_eq!(p.inner().got, vec![vec![0x88, 0x01, 0, 0]]);
        let public = SocketAddrV4::new(Ipv4Addr::new(203, 0, 113, 7), 6073);
        assert_eq!(rx.try_recv(), Ok(ResolverOutcome::Resolved(public)));
        assert_eq!(p.poll_timeout(), None, "the query is over");
        p.handle_datagram(now, resolver, &answer.to_vec().unwrap());
        assert_eq!(p.inner().got.len(), 2, "once it is over, the host gets everything");
    }
}
