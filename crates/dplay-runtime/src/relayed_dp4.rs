//! [`SharedDp4Relay`]: a DirectPlay 4 host's [`Dp4Relay`] on the sockets after its
//! [`Dp4Binding`]'s (issue 23; docs/relay.md, "DirectPlay 4"): endpoint `i` is a UDP socket
//! and a TCP listener, sockets `first + 2i` and `first + 2i + 1`.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use dplay_relay::RelayStats;
use dplay_relay::dp4::{Dp4Endpoint, Dp4Forward, Dp4Relay, Dp4RelayConfig, Dp4StreamRead};
use dplay_session::dp4::config::GAME_PORT_LAST;
use dplay_session::dp4::{Dp4AddressMap, Dp4AddressMapHandle};

use dplay_session::dp4::Dp4Config;

use crate::relayed::{RelayIo, StreamRoute};
use crate::{
    Dp4Binding, Path, Protocol, Relayed, Runtime, RuntimeConfig, RuntimeError, SocketId, SocketSpec,
    StreamId, StreamStatus, Transmit,
};

/// The sockets of `endpoints` relay endpoints, after a DirectPlay 4 binding's: a UDP socket
/// and a TCP listener each, on the first free ports after the game ports (2401 on), so an
/// operator forwards one range.
pub fn dp4_relay_sockets(ip: IpAddr, endpoints: usize) -> Vec<SocketSpec> {
    let first = GAME_PORT_LAST + 1;
    let span = u16::try_from(endpoints.saturating_mul(2).max(16)).unwrap_or(u16::MAX);
    let ports = first..=first.saturating_add(span);
    let udp = SocketSpec::udp(SocketAddr::new(ip, 0)).first_free(ports.clone());
    let tcp = SocketSpec::tcp_listener(SocketAddr::new(ip, 0)).first_free(ports);
    (0..endpoints).flat_map(|_| [udp.clone(), tcp.clone()]).collect()
}

/// A DirectPlay 4 relay shared by the session (through its [`Dp4AddressMap`]), the protocol
/// loop and whoever reads its stats.
#[derive(Debug, Clone)]
pub struct SharedDp4Relay {
    relay: Arc<Mutex<Dp4Relay>>,
    /// The socket of endpoint 0's UDP socket; its listener is the next.
    first: usize,
}

impl SharedDp4Relay {
    /// A relay whose endpoints are the sockets after `binding`'s among `bound` (as the runtime
    /// bound [`Dp4Binding::runtime_config`] with [`Dp4Binding::relay_endpoints`]), advertised
    /// at `public` with their ports; `configure` may change its caps.
    pub fn new(
        binding: &Dp4Binding,
        bound: &[SocketAddr],
        public: IpAddr,
        configure: impl FnOnce(&mut Dp4RelayConfig),
    ) -> Self {
        let first = binding.session_sockets();
        let endpoints = bound
            .get(first..)
            .unwrap_or_default()
            .as_chunks::<2>()
            .0
            .iter()
            .map(|[datagram, stream]| Dp4Endpoint {
                datagram: SocketAddr::new(public, datagram.port()),
                stream: SocketAddr::new(public, stream.port()),
            })
            .collect();
        let mut cfg = Dp4RelayConfig::new(endpoints);
        configure(&mut cfg);
        Self { relay: Arc::new(Mutex::new(Dp4Relay::new(cfg))), first }
    }

    /// The handle a host's [`dplay_session::dp4::Dp4Config::address_map`] takes.
    pub fn address_map(&self) -> Dp4AddressMapHandle {
        let map: Arc<Mutex<dyn Dp4AddressMap>> = self.relay.clone();
        Dp4AddressMapHandle::new(map)
    }

    /// Charges what waits to be relayed to `budget`: the host session's.
    pub fn charge_to(&self, budget: &dplay_wire::budget::MemoryBudget) {
        self.lock().set_budget(budget);
    }

    /// The relay itself, locked.
    pub fn lock(&self) -> MutexGuard<'_, Dp4Relay> {
        self.relay.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Endpoint `i`'s index and whether the socket is its listener, for socket `socket`.
    fn endpoint_of(&self, socket: SocketId) -> Option<(usize, bool)> {
        let k = socket.0.checked_sub(self.first)?;
        Some((k / 2, k % 2 == 1))
    }
}

/// Starts a runtime on `rc` (a [`Dp4Binding::runtime_config`] of `binding`) driving the host
/// protocol `make` builds from `config` and the bound sockets, with a relay on
/// `binding.relay_endpoints` endpoints (none: no relay) advertised at the IP `public` gives for
/// the bound listener, inside the protocol `wrap` makes of them; the relay comes back too.
pub(crate) fn spawn<P: Protocol, W: Protocol>(
    binding: &Dp4Binding,
    rc: RuntimeConfig,
    mut config: Dp4Config,
    public: impl FnOnce(SocketAddr) -> IpAddr,
    make: impl FnOnce(Dp4Config, &[SocketAddr]) -> Result<P, RuntimeError>,
    wrap: impl FnOnce(Relayed<P, SharedDp4Relay>) -> W,
) -> Result<(Runtime<W>, Option<SharedDp4Relay>), RuntimeError> {
    let mut relay = None;
    let runtime = Runtime::try_spawn_with(rc, |local| {
        if binding.relay_endpoints > 0 {
            let listener = local.get(Dp4Binding::LISTENER.0).copied();
            let ip = listener.map_or(IpAddr::V4(binding.ip), public);
            let shared = SharedDp4Relay::new(binding, local, ip, |_| {});
            config.address_map = Some(shared.address_map());
            relay = Some(shared);
        }
        let p = make(config, local)?;
        if let (Some(r), Some(budget)) = (&relay, p.memory_budget()) {
            r.charge_to(&budget);
        }
        Ok(wrap(Relayed::new(p, relay.clone())))
    })?;
    Ok((runtime, relay))
}

impl RelayIo for SharedDp4Relay {
    fn udp(&self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) -> bool {
        match self.endpoint_of(socket) {
            Some((i, _)) => self.lock().handle_datagram(now, i, from, data),
            None if socket == Dp4Binding::GAME_SOCKET => self.lock().observe_game_datagram(from, data),
            None => {}
        }
        self.endpoint_of(socket).is_some()
    }

    fn stream_accepted(&self, stream: StreamId, listener: SocketId) {
        let endpoint = self.endpoint_of(listener).map(|(i, _)| i);
        self.lock().accepted(stream.0, endpoint);
    }

    fn stream(
        &self,
        now: Instant,
        stream: StreamId,
        peer: SocketAddr,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> StreamRoute {
        match self.lock().handle_stream(now, stream.0, peer, data, out) {
            Ok(Dp4StreamRead::Session) => StreamRoute::Protocol,
            Ok(Dp4StreamRead::SessionRewritten { held }) => StreamRoute::Rewritten { held },
            Ok(Dp4StreamRead::Relayed) => {
                StreamRoute::Relayed(Ok(StreamStatus { message: true, partial: false, known: true }))
            }
            Err(e) => StreamRoute::Relayed(Err(e.to_string())),
        }
    }

    fn stream_closed(&self, stream: StreamId) -> bool {
        self.lock().stream_closed(stream.0)
    }

    fn route(&self, t: Transmit) -> Transmit {
        let relay = self.lock();
        match t.path {
            Path::Tcp => match relay.route_stream(t.to) {
                Some(conn) => Transmit { to: t.to, path: Path::Stream(StreamId(conn)) },
                None => t,
            },
            Path::Udp(Dp4Binding::GAME_SOCKET) => match relay.route_datagram(t.to) {
                Some(to) => Transmit { to, path: t.path },
                None => t,
            },
            _ => t,
        }
    }

    fn undeliverable(&self, t: &Transmit) -> bool {
        let relay = self.lock();
        match t.path {
            Path::Tcp => relay.stream_unreachable(t.to),
            Path::Udp(Dp4Binding::GAME_SOCKET) => relay.datagram_unreachable(t.to),
            _ => false,
        }
    }

    fn poll_lost(&self) -> Option<SocketAddr> {
        self.lock().poll_lost()
    }

    fn poll_forward(&self, buf: &mut Vec<u8>) -> Option<Transmit> {
        let f = self.lock().poll_forward(buf)?;
        Some(match f {
            Dp4Forward::Stream { conn, peer } => Transmit { to: peer, path: Path::Stream(StreamId(conn)) },
            Dp4Forward::Datagram { endpoint, to } => {
                Transmit { to, path: Path::Udp(SocketId(self.first + 2 * endpoint)) }
            }
        })
    }

    fn stats(&self) -> RelayStats {
        self.lock().stats()
    }
}
