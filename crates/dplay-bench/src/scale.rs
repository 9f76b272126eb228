//! Many client connections on one server runtime thread, each sending the add-on's 4 Hz
//! position update: the server thread's CPU use and the p99 delivery latency; and the memory
//! an idle connection costs.
//!
//! The clients run in one load thread of this process: one socket and one dplay-dframe
//! endpoint per client (the transport keys connections by address), their timers in a heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use dplay_addon::packet::{PositionLlapbh, ReducedLlapbh};
use dplay_addon::{Dialect, Packet};
use dplay_dframe::{Config, Endpoint, Event, MessageKind};
use dplay_runtime::{Runtime, RuntimeConfig};
use dplay_wire::Blob;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};

use crate::peer::{Counters, DframePeer, PeerEvent, Role};
use crate::stats::percentiles;
use crate::{LOOPBACK, stamp};

/// The p99 delivery latency the target allows, in milliseconds.
pub const P99_BUDGET_MS: f64 = 5.0;
/// The memory per idle connection the target allows, in bytes.
pub const IDLE_BUDGET_BYTES: f64 = 4096.0;
/// The add-on's position rate: 4 a second (FS98 SDK).
pub const POSITION_INTERVAL: Duration = Duration::from_millis(250);
const SERVER_THREAD: &str = "bench-scale-srv";

/// What one scale run measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScaleResult {
    /// Connections established.
    pub connections: usize,
    /// p99 of the one-way delivery latency, in milliseconds.
    pub p99_ms: f64,
    /// CPU time of the server thread over the measurement, in percent of one core.
    pub cpu_percent: f64,
    /// Positions delivered during the measurement.
    pub delivered: usize,
    /// Positions sent during the measurement (4 Hz times the connections times the seconds).
    pub expected: usize,
    /// Positions the clients actually sent during the measurement (fewer than `expected` when
    /// the load thread falls behind).
    pub sent: usize,
    /// UDP datagrams the kernel dropped for a full receive buffer during the measurement, on
    /// the whole machine (`RcvbufErrors` of /proc/net/snmp).
    pub rcvbuf_drops: u64,
}

/// `Udp: RcvbufErrors` of /proc/net/snmp.
fn rcvbuf_errors() -> Option<u64> {
    let snmp = std::fs::read_to_string("/proc/net/snmp").ok()?;
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (udp.next()?, udp.next()?);
    let i = names.split_whitespace().position(|n| n == "RcvbufErrors")?;
    values.split_whitespace().nth(i)?.parse().ok()
}

/// The datagram payload of one position update: an 8-byte timestamp, then the add-on's
/// POSITION_LLAPBH packet (FS98 dialect).
pub fn position(index: u32) -> Vec<u8> {
    let packet = Packet::PositionLlapbh(PositionLlapbh {
        application_time: 0,
        packet_index: index,
        reserved: 0,
        reduced_llapbh: ReducedLlapbh::default(),
        padding: Blob::new(&[]),
        unwritten: 0,
    });
    let mut out = vec![0u8; 8];
    out.extend(packet.to_vec(Dialect::Fs98).unwrap_or_default());
    out
}

/// Runs `n` clients against one server runtime: connects them all, then measures for
/// `duration` while each sends a position every 250 ms.
pub fn run(n: usize, duration: Duration) -> io::Result<ScaleResult> {
    let counters = Arc::new(Counters::default());
    let epoch = Instant::now();
    // Every client connects at once from one address: the half-open caps that guard a host on
    // the Internet (docs/limits.md) are raised to fit them.
    let mut config = Config::default();
    config.set_max_half_open(n.max(1024)).set_max_half_open_per_ip(n.max(16));
    let server_peer = DframePeer::new(config, Role::Sink { latency: true }, Arc::clone(&counters), epoch);
    let mut rc = RuntimeConfig::new(LOOPBACK);
    rc.thread_name = SERVER_THREAD.into();
    let server = Runtime::spawn(rc, server_peer).map_err(|e| io::Error::other(e.to_string()))?;
    let connected = Arc::new(AtomicUsize::new(0));
    let sent = Arc::new(AtomicUsize::new(0));
    let sending = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let load = {
        let mut clients = Clients::new(n, server.local_addr(), epoch)?;
        let (connected, sending, stop, sent) =
            (Arc::clone(&connected), Arc::clone(&sending), Arc::clone(&stop), Arc::clone(&sent));
        std::thread::Builder::new()
            .name("bench-scale-cli".into())
            .spawn(move || clients.run(&connected, &sending, &stop, &sent))?
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while connected.load(Ordering::Acquire) < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    sending.store(true, Ordering::Release);
    // One full round of positions before measuring, so every client is in its rhythm.
    std::thread::sleep(POSITION_INTERVAL * 2);
    while server.events().try_recv().is_ok() {}
    let cpu0 = thread_cpu(SERVER_THREAD);
    let drops0 = rcvbuf_errors();
    let sent0 = sent.load(Ordering::Acquire);
    let t0 = Instant::now();
    let end = t0 + duration;
    let mut samples = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        if let Ok(PeerEvent::Latency(ns)) = server.events().recv_timeout(left) {
            samples.push(ns);
        }
    }
    let elapsed = t0.elapsed();
    let cpu1 = thread_cpu(SERVER_THREAD);
    let drops1 = rcvbuf_errors();
    let sent = sent.load(Ordering::Acquire) - sent0;
    stop.store(true, Ordering::Release);
    load.join().map_err(|_| io::Error::other("load thread panicked"))??;
    let cpu = match (cpu0, cpu1) {
        (Some(a), Some(b)) => (b - a).as_secs_f64() / elapsed.as_secs_f64() * 100.0,
        _ => 0.0,
    };
    let delivered = samples.len();
    let p = percentiles(&mut samples);
    let conns = connected.load(Ordering::Acquire);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a count of seconds times clients
    let expected = (elapsed.as_secs_f64() / POSITION_INTERVAL.as_secs_f64() * conns as f64) as usize;
    let rcvbuf_drops = drops1.zip(drops0).map_or(0, |(b, a)| b.saturating_sub(a));
    Ok(ScaleResult {
        connections: conns,
        p99_ms: p.p99 / 1e6,
        cpu_percent: cpu,
        delivered,
        expected,
        sent,
        rcvbuf_drops,
    })
}

/// User plus system CPU time of this process's thread named `name` (Linux /proc).
pub(crate) fn thread_cpu(name: &str) -> Option<Duration> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
        // Fields after the parenthesised name: state is field 3, utime 14, stime 15 (proc(5)).
        let rest = stat.rsplit_once(')')?.1;
        let mut fields = rest.split_whitespace().skip(11);
        let utime: u64 = fields.next()?.parse().ok()?;
        let stime: u64 = fields.next()?.parse().ok()?;
        // Clock ticks of 1/100 s (USER_HZ on Linux).
        return Some(Duration::from_millis((utime + stime) * 10));
    }
    None
}

/// Resident memory of this process in bytes (Linux /proc, 4 KiB pages).
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Resident memory an idle accepted connection costs a server endpoint: the growth of this
/// process while one endpoint accepts `n` connections in memory, divided by `n`. Meaningful
/// in a fresh process (freed memory of earlier work would hide the growth).
pub fn bytes_per_connection(n: usize) -> f64 {
    let before = resident_bytes().unwrap_or(0);
    let server = crate::pair::server_with_connections(&Config::default(), n, Instant::now());
    let after = resident_bytes().unwrap_or(0);
    let held = server.connection_count().max(1);
    drop(server);
    after.saturating_sub(before) as f64 / held as f64
}

/// The load: one socket and one endpoint per client.
struct Clients {
    poll: Poll,
    server: SocketAddr,
    epoch: Instant,
    sockets: Vec<UdpSocket>,
    endpoints: Vec<Endpoint>,
    /// Timer deadlines by client, earliest first; stale entries are skipped when popped.
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    message: Vec<u8>,
}

impl Clients {
    fn new(n: usize, server: SocketAddr, epoch: Instant) -> io::Result<Self> {
        let poll = Poll::new()?;
        let mut sockets = Vec::with_capacity(n);
        for i in 0..n {
            let mut s = UdpSocket::bind(LOOPBACK)?;
            poll.registry().register(&mut s, Token(i), Interest::READABLE)?;
            sockets.push(s);
        }
        let mut config = Config::default();
        config.accept_incoming = false;
        let endpoints = (0..n).map(|_| Endpoint::new(config.clone(), epoch)).collect();
        Ok(Self { poll, server, epoch, sockets, endpoints, timers: BinaryHeap::new(), message: position(0) })
    }

    /// Sends what client `i` has queued and re-arms its timer.
    fn flush(&mut self, i: usize) {
        let (Some(ep), Some(socket)) = (self.endpoints.get_mut(i), self.sockets.get(i)) else { return };
        while let Some(t) = ep.poll_transmit() {
            // A full socket buffer loses the datagram; the transport retries reliable frames.
            let _ = socket.send_to(&t.contents, t.destination);
        }
        if let Some(at) = ep.poll_timeout() {
            self.timers.push(Reverse((at, i)));
        }
    }

    fn run(
        &mut self,
        connected: &AtomicUsize,
        sending: &AtomicBool,
        stop: &AtomicBool,
        sent: &AtomicUsize,
    ) -> io::Result<()> {
        let n = self.endpoints.len();
        let mut events = Events::with_capacity(1024);
        let mut buf = vec![0u8; 2048];
        let mut started = 0;
        let mut up = 0;
        let mut send_start: Option<Instant> = None;
        let mut sent_rounds = 0u64;
        let mut cursor = 0;
        let step = POSITION_INTERVAL / u32::try_from(n.max(1)).unwrap_or(u32::MAX);
        while !stop.load(Ordering::Acquire) {
            let now = Instant::now();
            // Connect in batches so the server's socket buffer is not flooded with CONNECTs.
            while started < n && started - up < 256 {
                if let Some(ep) = self.endpoints.get_mut(started) {
                    let _ = ep.connect(now, self.server);
                }
                self.flush(started);
                started += 1;
            }
            // Positions: client `cursor` of round `sent_rounds` at its slot in the 250 ms.
            if sending.load(Ordering::Acquire) {
                let start = *send_start.get_or_insert(now);
                loop {
                    let slot = u32::try_from(sent_rounds * n as u64 + cursor as u64).unwrap_or(u32::MAX);
                    if start + step * slot > now {
                        break;
                    }
                    stamp(&mut self.message, self.epoch);
                    if let Some(ep) = self.endpoints.get_mut(cursor)
                        && ep.send(now, self.server, &self.message, MessageKind::DATAGRAM).is_ok()
                    {
                        sent.fetch_add(1, Ordering::Relaxed);
                    }
                    self.flush(cursor);
                    cursor += 1;
                    if cursor == n {
                        cursor = 0;
                        sent_rounds += 1;
                    }
                }
            }
            while let Some(&Reverse((at, i))) = self.timers.peek() {
                if at > now {
                    break;
                }
                self.timers.pop();
                if let Some(ep) = self.endpoints.get_mut(i)
                    && ep.poll_timeout().is_some_and(|d| d <= now)
                {
                    ep.handle_timeout(now);
                    self.flush(i);
                }
            }
            let next_timer = self.timers.peek().map(|Reverse((at, _))| at.saturating_duration_since(now));
            let timeout = next_timer.unwrap_or(Duration::from_millis(5)).min(Duration::from_millis(1));
            self.poll.poll(&mut events, Some(timeout))?;
            for event in &events {
                let i = event.token().0;
                while let Some(socket) = self.sockets.get(i) {
                    match socket.recv_from(&mut buf) {
                        Ok((len, from)) => {
                            if let Some(ep) = self.endpoints.get_mut(i) {
                                ep.handle_datagram(Instant::now(), from, buf.get(..len).unwrap_or_default());
                                while let Some(e) = ep.poll_event() {
                                    if let Event::Connected { .. } = e {
                                        up += 1;
                                        connected.fetch_add(1, Ordering::AcqRel);
                                    }
                                }
                            }
                            self.flush(i);
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(_) => break,
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_scale_run_delivers_positions() {
        let r = run(20, Duration::from_millis(500)).unwrap();
        assert_eq!(r.connections, 20);
        assert!(r.delivered > 0, "{r:?}");
    }

    #[test]
    fn a_position_is_a_timestamp_and_the_add_on_packet() {
        let p = position(1);
        assert!(p.len() > 8 + 8);
        assert!(Packet::parse(Dialect::Fs98, &p[8..]).is_ok());
    }
}
