//! The ENet baseline: rusty_enet (pure-Rust ENet) reliable packets on channel 0, driven the way
//! C ENet's `enet_host_service(host, &event, timeout)` is: wait for the socket (mio, at most
//! 1 ms so ENet's timers run), then service until no event is left, then flush.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dplay_bench::peer::Counters;
use dplay_bench::proxy::{Impairment, Proxy};
use dplay_bench::{BACKLOG, LOOPBACK, age_ns, stamp};
use mio::{Events, Interest, Poll, Token};
use rusty_enet as enet;

/// A mio socket for rusty_enet that remembers whether the last read found the socket empty
/// (mio is edge-triggered: a socket not read to empty signals no more).
struct MioSocket {
    socket: mio::net::UdpSocket,
    drained: bool,
}

impl enet::Socket for MioSocket {
    type Address = SocketAddr;
    type Error = io::Error;

    fn send(&mut self, address: SocketAddr, buffer: &[u8]) -> io::Result<usize> {
        match self.socket.send_to(buffer, address) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(e),
        }
    }

    fn receive(
        &mut self,
        buffer: &mut [u8; enet::MTU_MAX],
    ) -> io::Result<Option<(SocketAddr, enet::PacketReceived)>> {
        match self.socket.recv_from(buffer) {
            Ok((n, from)) => Ok(Some((from, enet::PacketReceived::Complete(n)))),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.drained = true;
                Ok(None)
            }
            // An ICMP error for an earlier send: ENet's timers notice the silence.
            Err(_) => Ok(None),
        }
    }
}

/// What one ENet host does.
#[derive(Clone, Copy)]
pub(crate) enum Role {
    Sink,
    Bulk { size: usize },
    Paced { size: usize, interval: Duration },
}

struct Side {
    addr: SocketAddr,
    connected: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Side {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Shared {
    counters: Arc<Counters>,
    epoch: Instant,
    latencies: Option<mpsc::Sender<u64>>,
}

fn spawn(role: Role, connect_to: Option<SocketAddr>, shared: Shared) -> io::Result<Side> {
    let mut socket = mio::net::UdpSocket::bind(LOOPBACK)?;
    let addr = socket.local_addr()?;
    let poll = Poll::new()?;
    poll.registry().register(&mut socket, Token(0), Interest::READABLE)?;
    let settings = enet::HostSettings { peer_limit: 4, channel_limit: 1, ..Default::default() };
    let host = enet::Host::new(MioSocket { socket, drained: false }, settings)
        .map_err(|e| io::Error::other(format!("{e:?}")))?;
    let connected = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let (connected, stop) = (Arc::clone(&connected), Arc::clone(&stop));
        std::thread::spawn(move || run(host, poll, role, connect_to, &shared, &connected, &stop))
    };
    Ok(Side { addr, connected, stop, thread: Some(thread) })
}

fn run(
    mut host: enet::Host<MioSocket>,
    mut poll: Poll,
    role: Role,
    connect_to: Option<SocketAddr>,
    shared: &Shared,
    connected: &AtomicBool,
    stop: &AtomicBool,
) {
    if let Some(to) = connect_to {
        let _ = host.connect(to, 1, 0);
    }
    let mut events = Events::with_capacity(16);
    let mut peer: Option<enet::PeerID> = None;
    let mut message = match role {
        Role::Sink => Vec::new(),
        Role::Bulk { size } | Role::Paced { size, .. } => vec![0x5a; size.max(8)],
    };
    let mut next_paced = Instant::now();
    while !stop.load(Ordering::Acquire) {
        let mut timeout = Duration::from_millis(1);
        if let (Role::Paced { .. }, Some(_)) = (role, peer) {
            timeout = timeout.min(next_paced.saturating_duration_since(Instant::now()));
        }
        if !host.socket().drained {
            timeout = Duration::ZERO;
        }
        if poll.poll(&mut events, Some(timeout)).is_err() {
            return;
        }
        host.socket_mut().drained = false;
        loop {
            match host.service() {
                Ok(Some(enet::Event::Connect { peer: p, .. })) => {
                    peer = Some(p.id());
                    connected.store(true, Ordering::Release);
                }
                Ok(Some(enet::Event::Receive { packet, .. })) => {
                    let data = packet.data();
                    shared.counters.deliver(data.len());
                    if let (Some(tx), Some(age)) = (&shared.latencies, age_ns(data, shared.epoch)) {
                        let _ = tx.send(age);
                    }
                }
                Ok(Some(enet::Event::Disconnect { .. })) => peer = None,
                Ok(None) | Err(_) => break,
            }
        }
        let Some(id) = peer else { continue };
        match role {
            Role::Sink => {}
            Role::Bulk { .. } => {
                while shared.counters.in_flight() < BACKLOG {
                    if host.peer_mut(id).send(0, &enet::Packet::reliable(message.as_slice())).is_err() {
                        break;
                    }
                    shared.counters.sent.add(1);
                }
            }
            Role::Paced { interval, .. } => {
                let now = Instant::now();
                if next_paced <= now {
                    stamp(&mut message, shared.epoch);
                    if host.peer_mut(id).send(0, &enet::Packet::reliable(message.as_slice())).is_ok() {
                        shared.counters.sent.add(1);
                    }
                    next_paced = (next_paced + interval).max(now);
                }
            }
        }
        host.flush();
    }
}

/// A connected ENet client and server, optionally through a proxy.
struct Link {
    _client: Side,
    _server: Side,
    _proxy: Option<Proxy>,
    counters: Arc<Counters>,
}

fn link(
    role: Role,
    impairment: Option<Impairment>,
    latencies: Option<mpsc::Sender<u64>>,
) -> io::Result<Link> {
    let counters = Arc::new(Counters::default());
    let epoch = Instant::now();
    let server = spawn(Role::Sink, None, Shared { counters: Arc::clone(&counters), epoch, latencies })?;
    let proxy = impairment.map(|i| Proxy::spawn(server.addr, i)).transpose()?;
    let target = proxy.as_ref().map_or(server.addr, Proxy::addr);
    let client =
        spawn(role, Some(target), Shared { counters: Arc::clone(&counters), epoch, latencies: None })?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !client.connected.load(Ordering::Acquire) {
        if Instant::now() > deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "ENet did not connect"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(Link { _client: client, _server: server, _proxy: proxy, counters })
}

/// Delivered payload bytes per second of `size`-byte reliable packets.
pub(crate) fn goodput(
    size: usize,
    impairment: Option<Impairment>,
    warmup: Duration,
    duration: Duration,
) -> io::Result<f64> {
    let link = link(Role::Bulk { size }, impairment, None)?;
    std::thread::sleep(warmup);
    let start = (Instant::now(), link.counters.delivered_bytes.get());
    std::thread::sleep(duration);
    let end = (Instant::now(), link.counters.delivered_bytes.get());
    Ok((end.1 - start.1) as f64 / (end.0 - start.0).as_secs_f64())
}

/// One-way latencies (ns) of `size`-byte reliable packets sent every `interval`.
pub(crate) fn paced(size: usize, interval: Duration, duration: Duration) -> io::Result<Vec<u64>> {
    let (tx, rx) = mpsc::channel();
    let _link = link(Role::Paced { size, interval }, None, Some(tx))?;
    let end = Instant::now() + duration;
    let mut samples = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        if let Ok(ns) = rx.recv_timeout(left) {
            samples.push(ns);
        }
    }
    Ok(samples)
}
