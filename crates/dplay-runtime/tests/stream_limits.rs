//! The deadlines and caps of accepted TCP connections ([`StreamLimits`], issue 14), with a toy
//! protocol on loopback ports the test opened: a first whole message within a deadline, an idle
//! deadline while no known peer owns a connection, a deadline for partial messages, a cap per
//! source IP, the oldest unknown connection evicted when the table is full, and an idle
//! deadline for connections we opened.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use dplay_runtime::{
    CloseReason, Path, Protocol, Runtime, RuntimeConfig, SocketId, SocketSpec, StreamClosed, StreamDeadline,
    StreamId, StreamLimits, StreamRefusal, StreamStatus, Transmit,
};

/// A read ending in `.` completes a message (else part of one is held); `K` makes the
/// connection a known peer's.
/// Commands: send `x` to an address over TCP.
#[derive(Default)]
struct Toy {
    closed: Vec<(StreamId, StreamClosed)>,
    queue: Vec<SocketAddr>,
}

impl Protocol for Toy {
    type Command = SocketAddr;
    type Event = (StreamId, StreamClosed);

    fn handle_stream(
        &mut self,
        _: Instant,
        _: StreamId,
        _: SocketAddr,
        data: &[u8],
    ) -> Result<StreamStatus, String> {
        Ok(StreamStatus {
            message: data.contains(&b'.'),
            partial: data.last() != Some(&b'.'),
            known: data.contains(&b'K'),
        })
    }

    fn handle_stream_closed(&mut self, _: Instant, s: StreamId, closed: &StreamClosed) {
        self.closed.push((s, closed.clone()));
    }

    fn handle_command(&mut self, _: Instant, to: SocketAddr) {
        self.queue.push(to);
    }

    fn poll_send(&mut self, _: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let to = self.queue.pop()?;
        buf.push(b'x');
        Some(Transmit { to, path: Path::Tcp })
    }

    fn handle_timeout(&mut self, _: Instant) {}

    fn poll_event(&mut self) -> Option<(StreamId, StreamClosed)> {
        (!self.closed.is_empty()).then(|| self.closed.remove(0))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

const SHORT: Duration = Duration::from_millis(300);
const LONG: Duration = Duration::from_secs(60);

fn runtime(limits: StreamLimits, max_streams: usize) -> (Runtime<Toy>, SocketAddr) {
    let listener = SocketSpec::tcp_listener("127.0.0.1:0".parse().unwrap());
    let mut config = RuntimeConfig::with_sockets(vec![listener]);
    config.stream_limits = limits;
    config.max_streams = max_streams;
    let rt = Runtime::spawn(config, Toy::default()).unwrap();
    let addr = rt.socket_addr(SocketId(0)).unwrap();
    (rt, addr)
}

fn limits(first_message: Duration, idle_unknown: Duration, partial_message: Duration) -> StreamLimits {
    let mut l = StreamLimits::default();
    (l.first_message, l.idle_unknown, l.partial_message, l.max_per_source) =
        (first_message, idle_unknown, partial_message, 16);
    l
}

#[track_caller]
fn next_close(rt: &Runtime<Toy>) -> CloseReason {
    rt.events().recv_timeout(Duration::from_secs(5)).expect("no close reported").1.reason
}

/// The peer sees its connection closed (end of stream, or reset).
#[track_caller]
fn closed_by_us(mut peer: TcpStream) {
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut rest = Vec::new();
    // What we wrote first, then end of stream (or a reset); a timeout means still open.
    match peer.read_to_end(&mut rest) {
        Ok(_) => {}
        Err(e) => assert!(!matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut), "still open"),
    }
}

/// Connected and held by the runtime (accepted, nothing said) before the next step.
fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    s
}

/// A connection that never completes a message is closed at the first-message deadline.
#[test]
fn silent_connection_misses_the_first_message_deadline() {
    let (rt, addr) = runtime(limits(SHORT, LONG, LONG), 16);
    let started = Instant::now();
    let mut peer = connect(addr);
    peer.write_all(b"no end").unwrap();
    assert_eq!(next_close(&rt), CloseReason::TimedOut(StreamDeadline::FirstMessage));
    assert!(started.elapsed() >= SHORT - Duration::from_millis(50));
    closed_by_us(peer);
}

/// After whole messages, a connection no known peer owns is closed once idle that long.
#[test]
fn unknown_connection_misses_the_idle_deadline() {
    let (rt, addr) = runtime(limits(LONG, SHORT, LONG), 16);
    let mut peer = connect(addr);
    peer.write_all(b"hello.").unwrap();
    assert_eq!(next_close(&rt), CloseReason::TimedOut(StreamDeadline::IdleUnknown));
    closed_by_us(peer);
}

/// A known peer's connection may stay idle; a message begun on it must still end in time.
#[test]
fn known_connection_stays_idle_but_not_partial() {
    let (rt, addr) = runtime(limits(SHORT, SHORT, Duration::from_millis(800)), 16);
    let mut peer = connect(addr);
    peer.write_all(b"K.").unwrap();
    assert!(
        rt.events().recv_timeout(Duration::from_millis(900)).is_err(),
        "a known peer's idle connection closed"
    );
    peer.write_all(b"half a message").unwrap();
    let started = Instant::now();
    assert_eq!(next_close(&rt), CloseReason::TimedOut(StreamDeadline::PartialMessage));
    assert!(started.elapsed() >= Duration::from_millis(700), "after {:?}", started.elapsed());
    closed_by_us(peer);
}

/// One source IP gets at most `max_per_source` connections; more are closed at once and
/// reported; one closing makes room again.
#[test]
fn per_source_cap() {
    let mut limits = limits(LONG, LONG, LONG);
    limits.max_per_source = 2;
    let (rt, addr) = runtime(limits, 16);
    let (a, _b) = (connect(addr), connect(addr));
    let third = connect(addr);
    assert_eq!(next_close(&rt), CloseReason::Refused(StreamRefusal::PerSource));
    closed_by_us(third);
    drop(a);
    assert_eq!(next_close(&rt), CloseReason::Closed);
    let mut fourth = connect(addr);
    fourth.write_all(b"in.").unwrap();
    assert!(rt.events().recv_timeout(Duration::from_millis(300)).is_err(), "room was not made");
}

/// At the cap a newcomer evicts the oldest connection no known peer owns; when known peers own
/// them all, the newcomer is refused.
#[test]
fn full_table_evicts_the_oldest_unknown() {
    let (rt, addr) = runtime(limits(LONG, LONG, LONG), 3);
    let oldest = connect(addr);
    let mut known = connect(addr);
    known.write_all(b"K.").unwrap();
    let mut younger = connect(addr);
    let newcomer = connect(addr);
    assert_eq!(next_close(&rt), CloseReason::Evicted);
    closed_by_us(oldest);
    younger.write_all(b"K.").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut next = connect(addr);
    assert_eq!(next_close(&rt), CloseReason::Evicted, "the newcomer, now the oldest unknown");
    closed_by_us(newcomer);
    next.write_all(b"K.").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let last = connect(addr);
    assert_eq!(next_close(&rt), CloseReason::Refused(StreamRefusal::Full));
    closed_by_us(last);
}

/// Connections we opened count toward the cap too: a full table of them, idle, makes room by
/// closing the longest idle one (its peer sees it closed); accepted ones are not starved.
#[test]
fn idle_opened_connections_are_evicted_last() {
    let (rt, addr) = runtime(limits(LONG, LONG, LONG), 2);
    let peers: Vec<TcpListener> = (0..2).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let mut accepted = Vec::new();
    for p in &peers {
        rt.command(p.local_addr().unwrap()).unwrap();
        accepted.push(p.accept().unwrap().0);
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut known = connect(addr);
    known.write_all(b"K.").unwrap();
    let c = rt.events().recv_timeout(Duration::from_secs(5)).expect("no eviction").1;
    assert_eq!((c.reason, c.opened_to), (CloseReason::Evicted, Some(peers[0].local_addr().unwrap())));
    closed_by_us(accepted.remove(0));
    assert!(rt.events().recv_timeout(Duration::from_millis(300)).is_err(), "the newcomer was closed");
}

/// Issue 14: a connection we opened whose peer neither reads nor writes anything is closed
/// after `idle_opened`, its peer sees it closed, and the close is not an unreachable listener
/// (nothing was left unsent).
#[test]
fn opened_connection_misses_the_idle_deadline() {
    let mut l = limits(LONG, LONG, LONG);
    l.idle_opened = SHORT;
    let (rt, _) = runtime(l, 16);
    let peer = TcpListener::bind("127.0.0.1:0").unwrap();
    let started = Instant::now();
    rt.command(peer.local_addr().unwrap()).unwrap();
    let accepted = peer.accept().unwrap().0;
    let c = rt.events().recv_timeout(Duration::from_secs(5)).expect("no close reported").1;
    assert_eq!(c.reason, CloseReason::TimedOut(StreamDeadline::IdleOpened));
    assert_eq!((c.opened_to, c.unsent), (Some(peer.local_addr().unwrap()), 0));
    assert!(started.elapsed() >= SHORT - Duration::from_millis(50));
    closed_by_us(accepted);
}
