//! "One runtime serves thousands of connections" (issue 7): one server runtime (client/server
//! [`Dp8Protocol`], MC-DPL8CS 3.1.5.1) accepts [`CLIENTS`] clients joining at once over loopback,
//! and every client exchanges a message with it. The clients are sans-IO [`Session`]s, each on
//! its own socket, multiplexed by this test on one mio poll. Prints the time to join them all
//! and the CPU time of the server's thread (run with `--nocapture` to see it).
#![allow(clippy::disallowed_methods)] // real sockets, real clock
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Runtime, RuntimeConfig};
use dplay_session::{Event, Mode, SendFlags, Session, SessionConfig};
use dplay_wire::dp8::dpnid::Dpnid;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x0bad_cafe_0000_4000_8000_0000_0000_1000);
const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
/// How many clients join.
const CLIENTS: usize = 1000;
/// The whole exchange must be over by then.
const LIMIT: Duration = Duration::from_secs(60);
const SERVER_THREAD: &str = "load-server";

fn config(local: SocketAddr, name: &str, seed: u64) -> SessionConfig {
    let mut c = SessionConfig::new(APP, local, name);
    c.mode = Mode::ClientServer;
    c.session_name = "load".into();
    c.rng_seed = seed;
    // A thousand joins at once from one address: the caps that guard a host on the Internet
    // (docs/limits.md) are raised to fit them.
    c.transport.set_max_half_open(CLIENTS).set_max_half_open_per_ip(CLIENTS);
    c.limits.set_max_pending_joins(CLIENTS).set_max_pending_joins_per_ip(CLIENTS);
    c.limits.memory_budget = usize::MAX;
    c
}

/// Many client sessions, each on its own non-blocking socket, driven from one poll.
struct Clients {
    poll: Poll,
    sockets: Vec<UdpSocket>,
    sessions: Vec<Session>,
    /// Per client: its message to the server went out.
    sent: Vec<bool>,
    /// Per client: the server's answer arrived.
    answered: Vec<bool>,
    buf: Vec<u8>,
}

impl Clients {
    fn new(n: usize, now: Instant) -> Self {
        let poll = Poll::new().unwrap();
        let mut sockets = Vec::with_capacity(n);
        let mut sessions = Vec::with_capacity(n);
        for i in 0..n {
            let mut socket = UdpSocket::bind(LOOPBACK).unwrap();
            poll.registry().register(&mut socket, Token(i), Interest::READABLE).unwrap();
            let local = socket.local_addr().unwrap();
            sessions.push(Session::new(config(local, &format!("client{i}"), 1000 + i as u64), now));
            sockets.push(socket);
        }
        Self { poll, sockets, sessions, sent: vec![false; n], answered: vec![false; n], buf: vec![0; 65_535] }
    }

    /// Writes client `i`'s datagrams; one the socket refuses is lost, as on a network.
    fn flush(&mut self, i: usize) {
        let (Some(session), Some(socket)) = (self.sessions.get_mut(i), self.sockets.get(i)) else { return };
        while let Some(t) = session.poll_transmit() {
            let _ = socket.send_to(&t.contents, t.destination);
        }
        while let Some(e) = session.poll_event() {
            if let Event::Message { data, .. } = e {
                assert_eq!(data, format!("pong {i}").as_bytes());
                self.answered[i] = true;
            }
        }
    }

    /// One turn: waits for datagrams (at most until the earliest timer, at most 10 ms), reads
    /// them, runs the timers that are due, writes what the sessions queued.
    fn turn(&mut self, events: &mut Events) {
        let now = Instant::now();
        let next = self.sessions.iter().filter_map(Session::poll_timeout).min();
        let wait = next.map_or(Duration::from_millis(10), |t| t.saturating_duration_since(now));
        self.poll.poll(events, Some(wait.min(Duration::from_millis(10)))).unwrap();
        for event in events.iter() {
            let i = event.token().0;
            while let Some(socket) = self.sockets.get(i) {
                match socket.recv_from(&mut self.buf) {
                    Ok((len, from)) => {
                        let data = &self.buf[..len];
                        self.sessions[i].handle_datagram(Instant::now(), from, data);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("client {i}: {e}"),
                }
            }
            self.flush(i);
        }
        let now = Instant::now();
        for i in 0..self.sessions.len() {
            if self.sessions[i].poll_timeout().is_some_and(|t| t <= now) {
                self.sessions[i].handle_timeout(now);
                self.flush(i);
            }
        }
    }

    /// Each client that has just joined sends its message to the server.
    fn ping_when_joined(&mut self, now: Instant) {
        let mut sent_now = Vec::new();
        for (i, (session, sent)) in self.sessions.iter_mut().zip(&mut self.sent).enumerate() {
            if !*sent && session.is_joined() {
                let server = session.host_dpnid();
                let ping = format!("ping {i}");
                session.send_to(now, server, ping.as_bytes(), SendFlags::RELIABLE_SEQUENTIAL).unwrap();
                *sent = true;
                sent_now.push(i);
            }
        }
        for i in sent_now {
            self.flush(i);
        }
    }

    fn joined(&self) -> usize {
        self.sessions.iter().filter(|s| s.is_joined()).count()
    }
}

/// CPU time (user + system) of this process's thread named `name`, from /proc (Linux).
fn thread_cpu(name: &str) -> Option<Duration> {
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        if std::fs::read_to_string(path.join("comm")).ok()?.trim() == name {
            return cpu_in_stat(&path.join("stat"));
        }
    }
    None
}

/// CPU time (user + system) from a /proc `stat` file.
fn cpu_in_stat(path: &std::path::Path) -> Option<Duration> {
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel's USER_HZ is 100 on every Linux this runs on.
    Some(Duration::from_millis(ticks * 10))
}

fn seconds(d: Option<Duration>) -> String {
    d.map_or("unknown".into(), |d| format!("{:.2} s", d.as_secs_f64()))
}

/// Prints the figures the issue asks for (shown with `--nocapture`).
#[allow(clippy::print_stdout)]
fn report(figures: String) {
    println!("{figures}");
}

/// MC-DPL8CS 3.1.5.1: a thousand clients join one server at once and each exchanges a message
/// with it; every join completes and every message is delivered, both ways.
#[test]
fn one_server_runtime_serves_a_thousand_clients() {
    let start = Instant::now();
    let mut runtime_config = RuntimeConfig::new(LOOPBACK);
    runtime_config.thread_name = SERVER_THREAD.into();
    let server = Runtime::spawn_with(runtime_config, |local| {
        Dp8Protocol::new(config(local, "server", 1), Instant::now())
    })
    .unwrap();
    server.command(Dp8Command::Host).unwrap();
    let server_addr = server.local_addr();

    let mut clients = Clients::new(CLIENTS, Instant::now());
    let joining = Instant::now();
    for i in 0..CLIENTS {
        clients.sessions[i].join(Instant::now(), server_addr, None).unwrap();
        clients.flush(i);
    }

    let mut events = Events::with_capacity(1024);
    let mut added = BTreeSet::new();
    let mut pinged = BTreeSet::new();
    let mut all_joined = None;
    while clients.answered.iter().any(|a| !a) {
        assert!(
            joining.elapsed() < LIMIT,
            "after {LIMIT:?}: {} joined, {} added by the server, {} pinged it, {} answered",
            clients.joined(),
            added.len(),
            pinged.len(),
            clients.answered.iter().filter(|a| **a).count()
        );
        clients.turn(&mut events);
        clients.ping_when_joined(Instant::now());
        if all_joined.is_none() && clients.sent.iter().all(|s| *s) {
            all_joined = Some(joining.elapsed());
        }
        while let Ok(e) = server.events().try_recv() {
            match e {
                Dp8Event::Session(Event::PlayerAdded { dpnid, .. }) => assert!(added.insert(dpnid)),
                Dp8Event::Session(Event::Message { from, data, .. }) => {
                    let text = String::from_utf8(data).unwrap();
                    let i = text.strip_prefix("ping ").unwrap();
                    assert!(pinged.insert(from), "two pings from {from}");
                    let pong = format!("pong {i}").into_bytes();
                    let flags = SendFlags::RELIABLE_SEQUENTIAL;
                    server.command(Dp8Command::SendTo { to: from, data: pong, flags }).unwrap();
                }
                Dp8Event::CommandFailed { command, error } => panic!("server: {command} failed: {error}"),
                _ => {}
            }
        }
    }
    let done = joining.elapsed();
    let server_cpu = thread_cpu(SERVER_THREAD);
    let process_cpu = cpu_in_stat(std::path::Path::new("/proc/self/stat"));

    assert_eq!(clients.joined(), CLIENTS);
    assert_eq!(added.len(), CLIENTS, "the server added every client");
    assert_eq!(pinged.len(), CLIENTS, "every client's message reached the server");
    let ids: BTreeSet<Dpnid> = clients.sessions.iter().map(Session::local_dpnid).collect();
    assert_eq!(ids, added, "the server's players are the clients");
    let retried: u64 = clients
        .sessions
        .iter()
        .filter_map(|s| s.endpoint().stats(server_addr))
        .map(|s| s.retransmissions)
        .sum();
    report(format!(
        "{CLIENTS} clients: all joined after {:.2} s, all messages exchanged after {:.2} s; \
         server thread CPU {}, whole process (clients included) {}; client retransmissions {retried}; whole test {:.2} s",
        all_joined.unwrap_or(done).as_secs_f64(),
        done.as_secs_f64(),
        seconds(server_cpu),
        seconds(process_cpu),
        start.elapsed().as_secs_f64(),
    ));
    server.shutdown().unwrap();
}
