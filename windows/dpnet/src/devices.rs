//! A host on several device addresses (`IDirectPlay8Peer::Host` / `IDirectPlay8Server::Host`
//! with `cDeviceInfo` > 1): one UDP socket per device, one session behind them all. The
//! session has one socket in mind; [`Devices`] hands it every device's datagrams as the main
//! socket's and sends its answers to a remote from the socket that remote's datagrams came in
//! on, so each peer talks to the one address it chose (docs/decisions.md, "several device
//! addresses").

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_runtime::{Path, Protocol, SocketId, StreamClosed, StreamId, StreamStatus, Transmit};

/// How many remotes on the other devices are remembered: more than a session's players.
const MAX_ROUTES: usize = 4096;
/// A full table forgets the remotes silent this long (at most once per [`PURGE_EVERY`]); a
/// remote silent longer falls back to the first device until it speaks again.
const ROUTE_IDLE: Duration = Duration::from_secs(30);
const PURGE_EVERY: Duration = Duration::from_secs(5);

/// `P` on `devices` UDP sockets (`SocketId` 0 to `devices - 1`); sockets after them (the
/// enumeration helper's) are passed on to `P` unchanged.
pub(crate) struct Devices<P> {
    inner: P,
    devices: usize,
    /// The device socket of each remote heard on one other than the first, and when.
    routes: HashMap<SocketAddr, (SocketId, Instant)>,
    last_purge: Option<Instant>,
    full_logged: bool,
}

impl<P> Devices<P> {
    pub(crate) fn new(inner: P, devices: usize) -> Self {
        Self { inner, devices: devices.max(1), routes: HashMap::new(), last_purge: None, full_logged: false }
    }

    fn note(&mut self, now: Instant, socket: SocketId, from: SocketAddr) {
        if socket == SocketId::MAIN {
            self.routes.remove(&from);
            return;
        }
        if self.routes.len() >= MAX_ROUTES && !self.routes.contains_key(&from) {
            if self.last_purge.is_none_or(|t| now.duration_since(t) >= PURGE_EVERY) {
                self.last_purge = Some(now);
                self.routes.retain(|_, (_, seen)| now.duration_since(*seen) < ROUTE_IDLE);
            }
            if self.routes.len() >= MAX_ROUTES {
                if !self.full_logged {
                    self.full_logged = true;
                    tracing::warn!(
                        "{MAX_ROUTES} remotes on the other device addresses: answering {from} from the first"
                    );
                }
                return;
            }
        }
        self.routes.insert(from, (socket, now));
    }
}

impl<P: Protocol> Protocol for Devices<P> {
    type Command = P::Command;
    type Event = P::Event;

    fn handle_udp(&mut self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) {
        if socket.0 < self.devices {
            self.note(now, socket, from);
            self.inner.handle_udp(now, SocketId::MAIN, from, data);
        } else {
            self.inner.handle_udp(now, SocketId(socket.0 - self.devices + 1), from, data);
        }
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

    fn handle_stream_closed(&mut self, now: Instant, stream: StreamId, closed: &StreamClosed) {
        self.inner.handle_stream_closed(now, stream, closed);
    }

    fn handle_command(&mut self, now: Instant, command: P::Command) {
        self.inner.handle_command(now, command);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
    }

    fn poll_send(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let mut t = self.inner.poll_send(now, buf)?;
        // One device (every Connect, most Hosts): no route, no hashing per datagram.
        if t.path == Path::Udp(SocketId::MAIN)
            && !self.routes.is_empty()
            && let Some((socket, _)) = self.routes.get(&t.to)
        {
            t.path = Path::Udp(*socket);
        }
        Some(t)
    }

    fn poll_event(&mut self) -> Option<P::Event> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it is given; sends one datagram to each remote it heard.
    #[derive(Default)]
    struct Echo {
        heard: Vec<(SocketId, SocketAddr)>,
        replies: Vec<SocketAddr>,
    }

    impl Protocol for Echo {
        type Command = ();
        type Event = ();
        fn handle_udp(&mut self, _: Instant, socket: SocketId, from: SocketAddr, _: &[u8]) {
            self.heard.push((socket, from));
            self.replies.push(from);
        }
        fn handle_command(&mut self, _: Instant, (): ()) {}
        fn handle_timeout(&mut self, _: Instant) {}
        fn poll_transmit(&mut self, _: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
            buf.push(1);
            self.replies.pop()
        }
        fn poll_event(&mut self) -> Option<()> {
            None
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
    }

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn sent_from(d: &mut Devices<Echo>, now: Instant) -> Option<Transmit> {
        d.poll_send(now, &mut Vec::new())
    }

    #[test]
    fn answers_leave_from_the_device_the_remote_used() {
        let now = Instant::now();
        let mut d = Devices::new(Echo::default(), 2);
        d.handle_udp(now, SocketId(1), addr(9001), b"x");
        assert_eq!(sent_from(&mut d, now).map(|t| t.path), Some(Path::Udp(SocketId(1))));
        d.handle_udp(now, SocketId(0), addr(9002), b"x");
        assert_eq!(sent_from(&mut d, now).map(|t| t.path), Some(Path::Udp(SocketId(0))));
        // The session saw both as the main socket's.
        assert_eq!(d.inner.heard, [(SocketId::MAIN, addr(9001)), (SocketId::MAIN, addr(9002))]);
    }

    #[test]
    fn the_helper_socket_after_the_devices_is_the_sessions_second() {
        let now = Instant::now();
        let mut d = Devices::new(Echo::default(), 3);
        d.handle_udp(now, SocketId(3), addr(9001), b"x");
        assert_eq!(d.inner.heard, [(SocketId(1), addr(9001))]);
        assert_eq!(sent_from(&mut d, now).map(|t| t.path), Some(Path::Udp(SocketId::MAIN)));
    }

    #[test]
    fn a_full_table_forgets_the_silent_and_never_grows_past_its_cap() {
        let start = Instant::now();
        let mut d = Devices::new(Echo::default(), 2);
        for port in 0..MAX_ROUTES as u16 {
            d.note(start, SocketId(1), addr(port));
        }
        // Full: a new remote is answered from the first device.
        d.note(start, SocketId(1), addr(60_000));
        assert_eq!(d.routes.len(), MAX_ROUTES);
        assert!(!d.routes.contains_key(&addr(60_000)));
        // Once the others are silent long enough, it gets its route.
        let later = start + ROUTE_IDLE + PURGE_EVERY;
        d.note(later, SocketId(1), addr(60_000));
        assert_eq!(d.routes.len(), 1);
        assert_eq!(d.routes.get(&addr(60_000)).map(|r| r.0), Some(SocketId(1)));
    }
}
