//! [`Relayed`]: a host's protocol with its relay on the sockets after its own (issue 23;
//! docs/relay.md): a DirectPlay 8 [`SharedRelay`], whose session socket is
//! [`SocketId::MAIN`] and relay endpoint `i` socket `i + 1`, or a DirectPlay 4
//! [`crate::SharedDp4Relay`].

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use dplay_relay::{Relay, RelayConfig, RelayStats};
use dplay_session::AddressMapHandle;

use crate::{
    CloseReason, Path, Protocol, SocketId, SocketSpec, StreamClosed, StreamId, StreamStatus, Transmit,
};

/// What a relay does around the host protocol of a [`Relayed`]: it takes the datagrams and
/// connections of its endpoints, may send the protocol's own transmits another way, and has
/// its forwards to send.
pub trait RelayIo: Clone + Send + fmt::Debug + 'static {
    /// A datagram on UDP socket `socket`: true when it was an endpoint's (the relay's), false
    /// when it is the protocol's.
    fn udp(&self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) -> bool;
    /// Listener `listener` accepted connection `stream`.
    fn stream_accepted(&self, stream: StreamId, listener: SocketId) {
        let _ = (stream, listener);
    }
    /// Bytes on connection `stream`: an endpoint's, or the protocol's as read or as the relay
    /// wrote them to `out`.
    fn stream(
        &self,
        now: Instant,
        stream: StreamId,
        peer: SocketAddr,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> StreamRoute {
        let _ = (now, stream, peer, data, out);
        StreamRoute::Protocol
    }
    /// Connection `stream` closed: true when it was an endpoint's.
    fn stream_closed(&self, stream: StreamId) -> bool {
        let _ = stream;
        false
    }
    /// The protocol's transmit, sent another way where the relay knows one (a member behind
    /// NAT is answered where it sent from).
    fn route(&self, t: Transmit) -> Transmit {
        t
    }
    /// Whether the protocol's transmit `t` reaches nobody the relay knows a way to: a datagram
    /// is then dropped, and a TCP message reported to the protocol as a connect to `t.to` that
    /// failed (a DirectPlay 4 member with no connection left to the host; docs/decisions.md,
    /// "DP4 relay: a member that vanishes without leaving").
    fn undeliverable(&self, t: &Transmit) -> bool {
        let _ = t;
        false
    }
    /// The listener of a member whose last connection to the host, one of the relay's, closed:
    /// the protocol hears of it as of a connection to that listener its peer closed, and
    /// checks the member.
    fn poll_lost(&self) -> Option<SocketAddr> {
        None
    }
    /// The next forward: its bytes into `buf`.
    fn poll_forward(&self, buf: &mut Vec<u8>) -> Option<Transmit>;
    /// What the relay did so far.
    fn stats(&self) -> RelayStats;
}

/// The connection a TCP message the relay found undeliverable is reported on: none (the
/// runtime numbers its connections from 0 and never reaches it).
const NO_STREAM: StreamId = StreamId(u64::MAX);

/// What a relay made of bytes on a connection ([`RelayIo::stream`]).
#[derive(Debug)]
pub enum StreamRoute {
    /// An endpoint's connection: what the relay made of them.
    Relayed(Result<StreamStatus, String>),
    /// The protocol's, as read.
    Protocol,
    /// The protocol's, as the relay wrote them (a DirectPlay 4 member the session knows at
    /// another port than its header names); `held`: the relay holds part of a message.
    Rewritten {
        /// The relay holds part of a message.
        held: bool,
    },
}

/// The sockets of a relaying host: the session's on `bind`, then `endpoints` relay endpoints
/// on the first free ports after it (any free ports when `bind`'s port is 0).
pub fn relay_sockets(bind: SocketAddr, endpoints: usize) -> Vec<SocketSpec> {
    let first = bind.port().saturating_add(1);
    let span = u16::try_from(endpoints.saturating_mul(2).max(16)).unwrap_or(u16::MAX);
    let ports = if bind.port() == 0 { 0..=0 } else { first..=first.saturating_add(span) };
    let endpoint = SocketSpec::udp(SocketAddr::new(bind.ip(), 0)).first_free(ports);
    std::iter::once(SocketSpec::udp(bind)).chain(std::iter::repeat_n(endpoint, endpoints)).collect()
}

/// A relay shared by the session (through its [`dplay_session::AddressMap`]), the protocol
/// loop and whoever reads its stats (the command, the dashboard).
#[derive(Debug, Clone)]
pub struct SharedRelay {
    relay: Arc<Mutex<Relay>>,
    /// The endpoints' bound ports, by index.
    ports: Arc<[u16]>,
}

impl SharedRelay {
    /// A relay whose endpoints are the sockets after the first of `bound` (as the runtime
    /// bound [`relay_sockets`]), advertised at `public` with their ports; `configure` may
    /// change its caps.
    pub fn new(bound: &[SocketAddr], public: IpAddr, configure: impl FnOnce(&mut RelayConfig)) -> Self {
        let ports: Arc<[u16]> = bound.iter().skip(1).map(SocketAddr::port).collect();
        let endpoints = ports.iter().map(|p| SocketAddr::new(public, *p)).collect();
        let mut cfg = RelayConfig::new(endpoints);
        configure(&mut cfg);
        Self { relay: Arc::new(Mutex::new(Relay::new(cfg))), ports }
    }

    /// The host's router forwards public addresses to the endpoints (`--upnp`): `public`
    /// gives the one of a bound UDP port, if mapped. Members admitted from now on are given
    /// those ([`Relay::advertise`]); returns how many endpoints were mapped.
    pub fn advertise_mapped(&self, public: impl Fn(u16) -> Option<SocketAddr>) -> usize {
        let mut relay = self.lock();
        let mapped = self.ports.iter().enumerate().filter_map(|(i, p)| Some((i, public(*p)?)));
        mapped.map(|(i, addr)| relay.advertise(i, addr)).count()
    }

    /// The handle a host's [`dplay_session::SessionConfig::address_map`] takes.
    pub fn address_map(&self) -> AddressMapHandle {
        AddressMapHandle::new(self.relay.clone())
    }

    /// Charges the datagrams waiting to be relayed to `budget`: the host session's
    /// ([`dplay_session::Session::memory_budget`]; docs/limits.md).
    pub fn charge_to(&self, budget: &dplay_wire::budget::MemoryBudget) {
        self.lock().set_budget(budget);
    }

    /// What the relay did so far.
    pub fn stats(&self) -> RelayStats {
        self.lock().stats()
    }

    /// The relay itself, locked (the protocol thread locks it once per datagram): for tests
    /// and benchmarks that admit members without a session.
    pub fn lock(&self) -> MutexGuard<'_, Relay> {
        self.relay.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl RelayIo for SharedRelay {
    fn udp(&self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) -> bool {
        let Some(endpoint) = socket.0.checked_sub(1) else { return false };
        self.lock().handle_datagram(now, endpoint, from, data);
        true
    }

    fn poll_forward(&self, buf: &mut Vec<u8>) -> Option<Transmit> {
        let f = self.lock().poll_forward(buf)?;
        Some(Transmit { to: f.to, path: Path::Udp(SocketId(f.endpoint + 1)) })
    }

    fn stats(&self) -> RelayStats {
        SharedRelay::stats(self)
    }
}

/// A host protocol `P` (DirectPlay 8 or 4, or the add-on over them) with its relay `R` when
/// it has one: datagrams and connections of the endpoints are the relay's, the rest `P`'s.
/// Without a relay it is `P` (so a command builds one protocol type, relaying or not).
#[derive(Debug)]
pub struct Relayed<P, R = SharedRelay> {
    inner: P,
    relay: Option<R>,
    /// The bytes a relay rewrote for the protocol ([`StreamRoute::Rewritten`]).
    rewritten: Vec<u8>,
}

impl<P, R> Relayed<P, R> {
    /// `inner`, whose session was configured with `relay`'s address map (`None`: no relay).
    pub fn new(inner: P, relay: Option<R>) -> Self {
        Self { inner, relay, rewritten: Vec::new() }
    }

    /// The protocol underneath.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// The protocol underneath, to change.
    pub fn inner_mut(&mut self) -> &mut P {
        &mut self.inner
    }

    /// The relay, if any.
    pub fn relay(&self) -> Option<&R> {
        self.relay.as_ref()
    }
}

impl<P: Protocol, R: RelayIo> Protocol for Relayed<P, R> {
    type Command = P::Command;
    type Event = P::Event;

    fn handle_udp(&mut self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) {
        if !self.relay.as_ref().is_some_and(|r| r.udp(now, socket, from, data)) {
            self.inner.handle_udp(now, socket, from, data);
        }
    }

    fn handle_stream_accepted(
        &mut self,
        now: Instant,
        stream: StreamId,
        listener: SocketId,
        peer: SocketAddr,
    ) {
        if let Some(r) = &self.relay {
            r.stream_accepted(stream, listener);
        }
        self.inner.handle_stream_accepted(now, stream, listener, peer);
    }

    fn handle_stream(
        &mut self,
        now: Instant,
        stream: StreamId,
        peer: SocketAddr,
        data: &[u8],
    ) -> Result<StreamStatus, String> {
        let Some(r) = &self.relay else { return self.inner.handle_stream(now, stream, peer, data) };
        match r.stream(now, stream, peer, data, &mut self.rewritten) {
            StreamRoute::Relayed(relayed) => relayed,
            StreamRoute::Protocol => self.inner.handle_stream(now, stream, peer, data),
            StreamRoute::Rewritten { held } => {
                let bytes = std::mem::take(&mut self.rewritten);
                let status = self.inner.handle_stream(now, stream, peer, &bytes);
                self.rewritten = bytes;
                status.map(|s| StreamStatus { partial: s.partial || held, ..s })
            }
        }
    }

    fn handle_stream_closed(&mut self, now: Instant, stream: StreamId, closed: &StreamClosed) {
        if !self.relay.as_ref().is_some_and(|r| r.stream_closed(stream)) {
            return self.inner.handle_stream_closed(now, stream, closed);
        }
        while let Some(listener) = self.relay.as_ref().and_then(RelayIo::poll_lost) {
            let lost = StreamClosed {
                peer: closed.peer,
                opened_to: Some(listener),
                reason: CloseReason::Closed,
                unsent: 0,
            };
            self.inner.handle_stream_closed(now, stream, &lost);
        }
    }

    fn handle_command(&mut self, now: Instant, command: Self::Command) {
        self.inner.handle_command(now, command);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
    }

    fn poll_send(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        while let Some(t) = self.inner.poll_send(now, buf) {
            let Some(r) = &self.relay else { return Some(t) };
            if !r.undeliverable(&t) {
                return Some(r.route(t));
            }
            if t.path == Path::Tcp {
                let closed = StreamClosed {
                    peer: t.to,
                    opened_to: Some(t.to),
                    reason: CloseReason::ConnectFailed(
                        "a relayed member with no connection to the host".into(),
                    ),
                    unsent: buf.len(),
                };
                self.inner.handle_stream_closed(now, NO_STREAM, &closed);
            }
            buf.clear();
        }
        self.relay.as_ref()?.poll_forward(buf)
    }

    fn poll_event(&mut self) -> Option<Self::Event> {
        self.inner.poll_event()
    }

    fn memory_budget(&self) -> Option<dplay_wire::budget::MemoryBudget> {
        self.inner.memory_budget()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    fn poll_abandon(&mut self) -> Option<SocketAddr> {
        self.inner.poll_abandon()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// A protocol that sends what it is given and keeps the connection ends it hears of.
    #[derive(Default)]
    struct Recorder {
        out: VecDeque<Transmit>,
        closed: Vec<(StreamId, StreamClosed)>,
    }

    impl Protocol for Recorder {
        type Command = ();
        type Event = ();
        fn handle_command(&mut self, _: Instant, (): ()) {}
        fn handle_timeout(&mut self, _: Instant) {}
        fn handle_stream_closed(&mut self, _: Instant, stream: StreamId, closed: &StreamClosed) {
            self.closed.push((stream, closed.clone()));
        }
        fn poll_send(&mut self, _: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
            buf.extend_from_slice(b"ping");
            self.out.pop_front()
        }
        fn poll_event(&mut self) -> Option<()> {
            None
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
    }

    /// A relay for which nothing reaches `gone`, whose last connection, stream 7, closed.
    #[derive(Debug, Clone)]
    struct Vanished {
        gone: SocketAddr,
        lost: Arc<Mutex<Vec<SocketAddr>>>,
    }

    impl RelayIo for Vanished {
        fn udp(&self, _: Instant, _: SocketId, _: SocketAddr, _: &[u8]) -> bool {
            false
        }
        fn stream_closed(&self, stream: StreamId) -> bool {
            stream == StreamId(7)
        }
        fn undeliverable(&self, t: &Transmit) -> bool {
            t.to == self.gone
        }
        fn poll_lost(&self) -> Option<SocketAddr> {
            self.lost.lock().ok()?.pop()
        }
        fn poll_forward(&self, _: &mut Vec<u8>) -> Option<Transmit> {
            None
        }
        fn stats(&self) -> RelayStats {
            RelayStats::default()
        }
    }

    /// docs/decisions.md, "DP4 relay: a member that vanishes without leaving": a TCP message
    /// for a member the relay cannot reach is reported at once as a failed connect to its
    /// listener, a datagram for it dropped; the member's last relay connection closing is
    /// reported as one to its listener its peer closed.
    #[test]
    fn an_undeliverable_member_is_reported_not_connected_to() {
        let (gone, live): (SocketAddr, SocketAddr) =
            ("198.51.100.1:2300".parse().unwrap(), "198.51.100.2:2300".parse().unwrap());
        let relay = Vanished { gone, lost: Arc::new(Mutex::new(vec![gone])) };
        let mut p = Relayed::new(Recorder::default(), Some(relay));
        let inner = p.inner_mut();
        inner.out.push_back(Transmit { to: gone, path: Path::Tcp });
        inner.out.push_back(Transmit { to: gone, path: Path::Udp(SocketId::MAIN) });
        inner.out.push_back(Transmit { to: live, path: Path::Tcp });
        let (now, mut buf) = (Instant::now(), Vec::new());
        assert_eq!(p.poll_send(now, &mut buf), Some(Transmit { to: live, path: Path::Tcp }));
        assert_eq!(buf, b"ping", "what was dropped is not left in the buffer");
        let closed = std::mem::take(&mut p.inner_mut().closed);
        assert_eq!(closed.len(), 1);
        let (stream, c) = &closed[0];
        assert_eq!((*stream, c.opened_to, c.unsent), (NO_STREAM, Some(gone), 4));
        assert!(matches!(c.reason, CloseReason::ConnectFailed(_)));

        let end = StreamClosed {
            peer: live,
            opened_to: None,
            reason: CloseReason::Failed("reset".into()),
            unsent: 0,
        };
        p.handle_stream_closed(now, StreamId(7), &end);
        let closed = &p.inner().closed;
        assert_eq!(closed.len(), 1);
        assert_eq!(closed[0].1.opened_to, Some(gone));
        assert_eq!(closed[0].1.reason, CloseReason::Closed);
    }

    /// The router's mappings are matched to the endpoints by their bound ports; an endpoint
    /// left unmapped keeps its address.
    #[test]
    fn mapped_endpoints_are_advertised_by_their_bound_port() {
        let bound: Vec<SocketAddr> =
            ["0.0.0.0:6073", "0.0.0.0:6074", "0.0.0.0:6075"].iter().filter_map(|a| a.parse().ok()).collect();
        let relay = SharedRelay::new(&bound, IpAddr::from([192, 168, 77, 2]), |_| {});
        let public = SocketAddr::from(([198, 51, 100, 1], 7000));
        assert_eq!(relay.advertise_mapped(|port| (port == 6075).then_some(public)), 1);
        assert_eq!(relay.lock().endpoints(), &[SocketAddr::from(([192, 168, 77, 2], 6074)), public][..]);
    }
}
