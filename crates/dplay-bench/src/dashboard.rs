//! The dashboard under load (issue 17): one DirectPlay 8 client/server host (the session layer,
//! `Dp8Protocol`) with `n` clients joined, each sending the add-on's 4 Hz position update, with
//! the dashboard (`dplay_web::Observed` and its server) on or off. Measured: the p99 of the
//! positions' one-way delivery into the protocol loop, and with the dashboard on, how long
//! `/api/players` takes to answer (the whole list, asked every [`POLL_INTERVAL`]) and how soon
//! the event stream reports a player who joins during the measurement.
//!
//! The clients are sans-IO `Session`s in one load thread, one socket each (as
//! dplay-runtime's many_clients test); the host's runtime thread is the one measured. With
//! `pinned`, the host's runtime thread runs alone on a core of its own and the rest of the
//! bench on the other ([`crate::pin`]), both measured threads `SCHED_FIFO` while measuring.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Protocol, Runtime, RuntimeConfig};
use dplay_session::{Event, Mode, SendFlags, Session, SessionConfig};
use dplay_web::{Observed, WebServer};
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use uuid::Uuid;

use crate::pin;
use crate::scale::POSITION_INTERVAL;
use crate::stats::percentiles;
use crate::{LOOPBACK, age_ns, stamp};

const APP: Uuid = Uuid::from_u128(0x0bad_cafe_0000_4000_8000_0000_0000_1717);
/// The budget the issue sets for `/api/players` with 1,000 clients.
pub const PLAYERS_BUDGET_MS: f64 = 100.0;
/// What "the page stays live" allows: a join on the event stream within a second (the page
/// also reloads its lists every 2 s).
pub const STREAM_BUDGET_MS: f64 = 1000.0;
/// The criterion: the loop's p99 with the dashboard on at most 10% above off.
pub const P99_TOLERANCE: f64 = 0.10;
/// How often the bench asks for `/api/players`: twice as often as the page reloads its lists.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The name of the client that joins during the measurement.
const LATE: &str = "late joiner";

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct DashboardRun {
    /// Clients joined when the measurement started.
    pub joined: usize,
    /// p99 of the positions' one-way delivery into the protocol loop, in milliseconds.
    pub p99_ms: f64,
    /// Positions delivered during the measurement.
    pub delivered: usize,
    /// `/api/players` answer times (request to last byte), in milliseconds; empty when off.
    pub players_ms: Vec<f64>,
    /// Players the last `/api/players` answer listed.
    pub players_listed: usize,
    /// From the late client's join request to its `join` event on the event stream, in
    /// milliseconds; `None` when off or never seen.
    pub stream_join_ms: Option<f64>,
    /// Whether the threads were placed as asked ([`crate::pin`]); why not, if they were not.
    pub pinned: Result<(), String>,
}

pub(crate) fn config(local: SocketAddr, name: &str, seed: u64, n: usize) -> SessionConfig {
    let mut c = SessionConfig::new(APP, local, name);
    c.mode = Mode::ClientServer;
    c.session_name = "dashboard bench".into();
    c.rng_seed = seed;
    // Every client joins at once from one address: the caps that guard a host on the Internet
    // (docs/limits.md) are raised to fit them.
    let n = n + 1;
    c.transport.set_max_half_open(n.max(1024)).set_max_half_open_per_ip(n.max(16));
    c.limits.set_max_pending_joins(n).set_max_pending_joins_per_ip(n);
    c.limits.memory_budget = usize::MAX;
    c
}

/// The host's protocol, measured: application messages that carry a timestamp are timed
/// where the loop hands them out, and not passed on (the bench has no use for them).
struct Timed<P> {
    inner: P,
    epoch: Instant,
    measuring: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<u64>>>,
    /// The protocol thread's ID, noted at the first command (0 before).
    tid: Arc<AtomicU32>,
}

impl<P: Protocol<Command = Dp8Command, Event = Dp8Event>> Protocol for Timed<P> {
    type Command = Dp8Command;
    type Event = Dp8Event;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.inner.handle_datagram(now, from, data);
    }

    fn handle_command(&mut self, now: Instant, command: Dp8Command) {
        if self.tid.load(Ordering::Relaxed) == 0 {
            self.tid.store(pin::current_tid().unwrap_or(u32::MAX), Ordering::Release);
        }
        self.inner.handle_command(now, command);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        self.inner.poll_transmit(now, buf)
    }

    fn poll_event(&mut self) -> Option<Dp8Event> {
        loop {
            let event = self.inner.poll_event()?;
            let Dp8Event::Session(Event::Message { data, .. }) = &event else { return Some(event) };
            if self.measuring.load(Ordering::Relaxed)
                && let Some(age) = age_ns(data, self.epoch)
                && let Ok(mut samples) = self.samples.lock()
            {
                samples.push(age);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

/// What the host's loop shares with the measuring thread.
#[derive(Clone)]
struct Probe {
    epoch: Instant,
    measuring: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<u64>>>,
    loop_tid: Arc<AtomicU32>,
    pinned: bool,
}

impl Probe {
    fn timed<P>(&self, inner: P) -> Timed<P> {
        Timed {
            inner,
            epoch: self.epoch,
            measuring: self.measuring.clone(),
            samples: self.samples.clone(),
            tid: self.loop_tid.clone(),
        }
    }
}

/// Runs `n` clients against one host, with the dashboard when `web`, measuring for `duration`;
/// with `pinned`, places the threads as [`crate::pin`] says (the calling thread stays on
/// [`pin::OTHER_CORE`] afterwards).
pub fn run(n: usize, duration: Duration, web: bool, pinned: bool) -> io::Result<DashboardRun> {
    let epoch = Instant::now();
    let probe = Probe {
        epoch,
        measuring: Arc::new(AtomicBool::new(false)),
        // Room for every position measured (4,000 a second at 1,000 clients), so that the
        // loop never stops to grow it.
        samples: Arc::new(Mutex::new(Vec::with_capacity(positions(n, duration)))),
        loop_tid: Arc::new(AtomicU32::new(0)),
        pinned,
    };
    // Threads inherit their creator's cores: the runtime's, the server's and the load's all
    // start on the other core; the runtime's is moved once it is known.
    let mut placed = Ok(());
    if pinned {
        placed = pin::current_tid()
            .ok_or_else(|| "no thread ID".to_owned())
            .and_then(|tid| pin::to_core(tid, pin::OTHER_CORE));
    }
    let spawn_error = |e: dplay_runtime::RuntimeError| io::Error::other(e.to_string());
    if web {
        let (loop_side, server_side) = dplay_web::link();
        let server = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
            let host = Dp8Protocol::new(config(local, "host", 1, n), epoch);
            probe.timed(Observed::new(host, loop_side, epoch))
        })
        .map_err(spawn_error)?;
        let dashboard = WebServer::start(LOOPBACK, server_side, "bench".into())?;
        drive(n, duration, &probe, server, Some(dashboard), placed)
    } else {
        let server = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
            probe.timed(Dp8Protocol::new(config(local, "host", 1, n), epoch))
        })
        .map_err(spawn_error)?;
        drive(n, duration, &probe, server, None, placed)
    }
}

/// Joins the clients to `server`, then measures.
fn drive<P: Protocol<Command = Dp8Command, Event = Dp8Event>>(
    n: usize,
    duration: Duration,
    probe: &Probe,
    server: Runtime<Timed<P>>,
    dashboard: Option<WebServer>,
    mut placed: Result<(), String>,
) -> io::Result<DashboardRun> {
    let (epoch, measuring, samples) = (probe.epoch, &probe.measuring, &probe.samples);
    server.command(Dp8Command::Host).map_err(|e| io::Error::other(e.to_string()))?;
    let loop_tid = if probe.pinned { known(&probe.loop_tid) } else { None };
    if probe.pinned {
        placed = placed.and_then(|()| {
            let tid = loop_tid.ok_or_else(|| "no protocol thread ID".to_owned())?;
            pin::to_core(tid, pin::LOOP_CORE)
        });
    }
    let host = server.local_addr();
    let joined = Arc::new(AtomicUsize::new(0));
    let sending = Arc::new(AtomicBool::new(false));
    let late_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let join_late = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let load_tid = Arc::new(AtomicU32::new(0));
    let load = {
        let mut clients = Clients::new(n, host, epoch)?;
        let (joined, sending, stop, join_late, late_at, tid) = (
            joined.clone(),
            sending.clone(),
            stop.clone(),
            join_late.clone(),
            late_at.clone(),
            load_tid.clone(),
        );
        std::thread::Builder::new().name("bench-dash-cli".into()).spawn(move || {
            tid.store(pin::current_tid().unwrap_or(u32::MAX), Ordering::Release);
            clients.run(&joined, &sending, &stop, &join_late, &late_at)
        })?
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while joined.load(Ordering::Acquire) < n && Instant::now() < deadline {
        while server.events().try_recv().is_ok() {}
        std::thread::sleep(Duration::from_millis(10));
    }
    let stream = dashboard.as_ref().map(|w| EventStream::open(w.local_addr())).transpose()?;
    if probe.pinned {
        // Real time for the measurement only: the joins above would hold both cores.
        let load_tid = known(&load_tid);
        placed = placed.and_then(|()| {
            let (Some(main), Some(load)) = (loop_tid, load_tid) else { return Err("no thread ID".into()) };
            pin::realtime(main, pin::LOOP_PRIORITY)?;
            pin::realtime(load, pin::LOAD_PRIORITY)
        });
    }
    sending.store(true, Ordering::Release);
    std::thread::sleep(POSITION_INTERVAL * 2);
    measuring.store(true, Ordering::Release);
    let t0 = Instant::now();
    let end = t0 + duration;
    let mut players_ms = Vec::new();
    let mut players_listed = 0;
    let mut next_poll = t0;
    while Instant::now() < end {
        while server.events().try_recv().is_ok() {}
        if Instant::now() >= t0 + duration / 2 {
            join_late.store(true, Ordering::Release);
        }
        if let Some(w) = &dashboard
            && Instant::now() >= next_poll
        {
            let (ms, listed) = players(w.local_addr())?;
            players_ms.push(ms);
            players_listed = listed;
            next_poll += POLL_INTERVAL;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    measuring.store(false, Ordering::Release);
    stop.store(true, Ordering::Release);
    load.join().map_err(|_| io::Error::other("load thread panicked"))??;
    let stream_join_ms = stream.and_then(|s| {
        let seen = s.finish()?;
        let asked = (*late_at.lock().ok()?)?;
        Some(seen.saturating_duration_since(asked).as_secs_f64() * 1e3)
    });
    let mut samples = samples.lock().map(|s| s.clone()).unwrap_or_default();
    let delivered = samples.len();
    let p = percentiles(&mut samples);
    drop(dashboard);
    let _ = server.shutdown();
    Ok(DashboardRun {
        joined: joined.load(Ordering::Acquire),
        p99_ms: p.p99 / 1e6,
        delivered,
        players_ms,
        players_listed,
        stream_join_ms,
        pinned: placed,
    })
}

/// Twice the positions `n` clients send in `duration`.
fn positions(n: usize, duration: Duration) -> usize {
    let per_client = duration.as_millis() / POSITION_INTERVAL.as_millis().max(1);
    n.saturating_mul(usize::try_from(per_client).unwrap_or(0).saturating_add(1)).saturating_mul(2)
}

/// The thread ID noted in `tid`, waiting a second at most for it.
fn known(tid: &AtomicU32) -> Option<u32> {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        match tid.load(Ordering::Acquire) {
            0 if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            0 | u32::MAX => return None,
            t => return Some(t),
        }
    }
}

/// `GET /api/players`: the time to the answer's last byte, and the players it lists.
fn players(at: SocketAddr) -> io::Result<(f64, usize)> {
    let t = Instant::now();
    let mut s = TcpStream::connect(at)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(s, "GET /api/players HTTP/1.1\r\nHost: {at}\r\nConnection: close\r\n\r\n")?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let body = answer.windows(4).position(|w| w == b"\r\n\r\n").and_then(|i| answer.get(i + 4..));
    let listed =
        body.and_then(|b| serde_json::from_slice::<Vec<serde_json::Value>>(b).ok()).map_or(0, |v| v.len());
    Ok((ms, listed))
}

/// A reader of `/api/events` on its own thread, noting when the late client's `join` came.
struct EventStream {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Option<Instant>>,
}

impl EventStream {
    fn open(at: SocketAddr) -> io::Result<Self> {
        let mut s = TcpStream::connect(at)?;
        s.set_read_timeout(Some(Duration::from_millis(200)))?;
        write!(s, "GET /api/events HTTP/1.1\r\nHost: {at}\r\n\r\n")?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name("bench-dash-sse".into()).spawn(move || {
            let mut lines = BufReader::new(s);
            let mut line = String::new();
            let mut seen = None;
            while !flag.load(Ordering::Acquire) {
                line.clear();
                match lines.read_line(&mut line) {
                    Ok(0) => break,
                    Ok(_) if seen.is_none() && line.starts_with("data:") && line.contains(LATE) => {
                        seen = Some(Instant::now());
                    }
                    _ => {}
                }
            }
            seen
        })?;
        Ok(Self { stop, thread })
    }

    fn finish(self) -> Option<Instant> {
        self.stop.store(true, Ordering::Release);
        self.thread.join().ok().flatten()
    }
}

/// The load: `n` client sessions and one more that joins on request, one socket each.
struct Clients {
    poll: Poll,
    host: SocketAddr,
    epoch: Instant,
    sockets: Vec<UdpSocket>,
    sessions: Vec<Session>,
    message: Vec<u8>,
    buf: Vec<u8>,
}

impl Clients {
    fn new(n: usize, host: SocketAddr, epoch: Instant) -> io::Result<Self> {
        let poll = Poll::new()?;
        let mut sockets = Vec::with_capacity(n + 1);
        let mut sessions = Vec::with_capacity(n + 1);
        for i in 0..=n {
            let mut socket = UdpSocket::bind(LOOPBACK)?;
            poll.registry().register(&mut socket, Token(i), Interest::READABLE)?;
            let name = if i == n { LATE.to_owned() } else { format!("client{i}") };
            sessions.push(Session::new(config(socket.local_addr()?, &name, 1000 + i as u64, n), epoch));
            sockets.push(socket);
        }
        let message = crate::scale::position(0);
        Ok(Self { poll, host, epoch, sockets, sessions, message, buf: vec![0; 65_535] })
    }

    /// Writes client `i`'s datagrams; one the socket refuses is lost, as on a network.
    fn flush(&mut self, i: usize) {
        let (Some(session), Some(socket)) = (self.sessions.get_mut(i), self.sockets.get(i)) else { return };
        while let Some(t) = session.poll_transmit() {
            let _ = socket.send_to(&t.contents, t.destination);
        }
        while session.poll_event().is_some() {}
    }

    fn run(
        &mut self,
        joined: &AtomicUsize,
        sending: &AtomicBool,
        stop: &AtomicBool,
        join_late: &AtomicBool,
        late_at: &Mutex<Option<Instant>>,
    ) -> io::Result<()> {
        let n = self.sessions.len() - 1;
        let mut events = Events::with_capacity(1024);
        let mut started = 0;
        let mut late_started = false;
        let mut send_start: Option<Instant> = None;
        let (mut rounds, mut cursor) = (0u64, 0usize);
        let step = POSITION_INTERVAL / u32::try_from(n.max(1)).unwrap_or(u32::MAX);
        while !stop.load(Ordering::Acquire) {
            let now = Instant::now();
            // Join in batches so the host's socket buffer is not flooded.
            let up = self.sessions.iter().take(n).filter(|s| s.is_joined()).count();
            joined.store(up, Ordering::Release);
            while started < n && started - up.min(started) < 128 {
                if let Some(s) = self.sessions.get_mut(started) {
                    let _ = s.join(now, self.host, None);
                }
                self.flush(started);
                started += 1;
            }
            if !late_started && join_late.load(Ordering::Acquire) {
                late_started = true;
                if let Ok(mut at) = late_at.lock() {
                    *at = Some(now);
                }
                if let Some(s) = self.sessions.get_mut(n) {
                    let _ = s.join(now, self.host, None);
                }
                self.flush(n);
            }
            // Positions: client `cursor` of round `rounds` at its slot in the 250 ms.
            if sending.load(Ordering::Acquire) {
                let start = *send_start.get_or_insert(now);
                loop {
                    let slot = u32::try_from(rounds * n as u64 + cursor as u64).unwrap_or(u32::MAX);
                    if start + step * slot > now {
                        break;
                    }
                    stamp(&mut self.message, self.epoch);
                    if let Some(s) = self.sessions.get_mut(cursor)
                        && s.is_joined()
                    {
                        let host = s.host_dpnid();
                        let _ = s.send_to(now, host, &self.message, SendFlags::DATAGRAM);
                    }
                    self.flush(cursor);
                    cursor += 1;
                    if cursor == n {
                        cursor = 0;
                        rounds += 1;
                    }
                }
            }
            let now = Instant::now();
            for i in 0..self.sessions.len() {
                if self.sessions.get(i).and_then(Session::poll_timeout).is_some_and(|t| t <= now) {
                    if let Some(s) = self.sessions.get_mut(i) {
                        s.handle_timeout(now);
                    }
                    self.flush(i);
                }
            }
            self.poll.poll(&mut events, Some(Duration::from_millis(1)))?;
            for event in &events {
                let i = event.token().0;
                while let Some(socket) = self.sockets.get(i) {
                    match socket.recv_from(&mut self.buf) {
                        Ok((len, from)) => {
                            let data = self.buf.get(..len).unwrap_or_default();
                            if let Some(s) = self.sessions.get_mut(i) {
                                s.handle_datagram(Instant::now(), from, data);
                            }
                        }
                        Err(_) => break,
                    }
                }
                self.flush(i);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_run_with_the_dashboard_lists_the_players_and_streams_a_join() {
        let r = run(20, Duration::from_secs(1), true, false).unwrap();
        assert_eq!(r.joined, 20);
        assert!(r.delivered > 0, "{r:?}");
        assert!(r.players_listed >= 21, "{r:?}");
        assert!(!r.players_ms.is_empty());
        assert!(r.stream_join_ms.is_some(), "{r:?}");
    }
}
