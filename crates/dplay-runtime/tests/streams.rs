//! TCP in the runtime, with a toy protocol: listeners, reads until would-block, connections
//! opened on demand with bounded write buffers, and every way a connection ends.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use dplay_runtime::{
    CloseReason, Path, Protocol, Runtime, RuntimeConfig, SocketId, SocketSpec, StreamClosed, StreamId,
    StreamStatus, Transmit, WRITE_BACKLOG,
};
use dplay_wire::budget::MemoryBudget;

/// Counts bytes read; refuses a read containing `!`; sends what it is told; charges what it
/// queues to `budget`, if any.
#[derive(Default)]
struct Toy {
    queue: Vec<(SocketAddr, Vec<u8>)>,
    events: Vec<Ev>,
    budget: Option<MemoryBudget>,
}

#[derive(Debug, PartialEq)]
enum Ev {
    Read(usize),
    Closed(StreamClosed),
}

impl Protocol for Toy {
    type Command = (SocketAddr, Vec<u8>);
    type Event = Ev;

    fn handle_stream(
        &mut self,
        _now: Instant,
        _s: StreamId,
        _peer: SocketAddr,
        data: &[u8],
    ) -> Result<StreamStatus, String> {
        if data.contains(&b'!') {
            return Err("a bang".into());
        }
        self.events.push(Ev::Read(data.len()));
        Ok(StreamStatus::default())
    }

    fn handle_stream_closed(&mut self, _now: Instant, _s: StreamId, closed: &StreamClosed) {
        self.events.push(Ev::Closed(closed.clone()));
    }

    fn handle_command(&mut self, _now: Instant, command: (SocketAddr, Vec<u8>)) {
        self.queue.push(command);
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_send(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let (to, data) = (!self.queue.is_empty()).then(|| self.queue.remove(0))?;
        buf.extend_from_slice(&data);
        Some(Transmit { to, path: Path::Tcp })
    }

    fn poll_event(&mut self) -> Option<Ev> {
        (!self.events.is_empty()).then(|| self.events.remove(0))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn memory_budget(&self) -> Option<MemoryBudget> {
        self.budget.clone()
    }
}

fn runtime(write_limit: usize) -> Runtime<Toy> {
    runtime_with(write_limit, Toy::default())
}

fn runtime_with(write_limit: usize, toy: Toy) -> Runtime<Toy> {
    let udp = SocketSpec::udp("127.0.0.1:0".parse().unwrap());
    let listener = SocketSpec::tcp_listener("127.0.0.1:0".parse().unwrap());
    let mut config = RuntimeConfig::with_sockets(vec![udp, listener]);
    config.stream_write_limit = write_limit;
    config.connect_timeout = Duration::from_millis(500);
    Runtime::spawn(config, toy).unwrap()
}

#[track_caller]
fn closed(rt: &Runtime<Toy>) -> StreamClosed {
    loop {
        match rt.events().recv_timeout(Duration::from_secs(5)).expect("no close reported") {
            Ev::Closed(c) => return c,
            Ev::Read(_) => {}
        }
    }
}

/// MC-DPL4CS 2.1: a stream split into any number of reads reaches the protocol whole, and the
/// peer closing it is reported.
#[test]
fn reads_everything_then_reports_the_close() {
    let rt = runtime(1 << 20);
    let mut peer = TcpStream::connect(rt.socket_addr(SocketId(1)).unwrap()).unwrap();
    peer.write_all(&vec![7; 300_000]).unwrap();
    drop(peer);
    let mut total = 0;
    loop {
        match rt.events().recv_timeout(Duration::from_secs(5)).unwrap() {
            Ev::Read(n) => total += n,
            Ev::Closed(c) => {
                assert_eq!((c.reason, c.opened_to, c.unsent), (CloseReason::Closed, None, 0));
                break;
            }
        }
    }
    assert_eq!(total, 300_000);
}

/// The protocol refusing bytes closes the connection: the peer reads end-of-stream.
#[test]
fn refused_bytes_close_the_connection() {
    let rt = runtime(1 << 20);
    let mut peer = TcpStream::connect(rt.socket_addr(SocketId(1)).unwrap()).unwrap();
    peer.write_all(b"bad!").unwrap();
    assert_eq!(closed(&rt).reason, CloseReason::Rejected("a bang".into()));
    peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(peer.read(&mut [0; 8]).unwrap(), 0);
}

/// A connection opened on demand carries every byte queued, in order, across partial writes.
#[test]
fn opens_on_demand_and_writes_in_order() {
    let rt = runtime(4 << 20);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let to = listener.local_addr().unwrap();
    let first: Vec<u8> = (0..2_000_000u32).map(|i| (i % 251) as u8).collect();
    rt.command((to, first.clone())).unwrap();
    rt.command((to, b"tail".to_vec())).unwrap();
    let (mut conn, _) = listener.accept().unwrap();
    let mut got = Vec::new();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    while got.len() < first.len() + 4 {
        let mut buf = [0; 65536];
        let n = conn.read(&mut buf).unwrap();
        assert!(n > 0, "closed early after {} bytes", got.len());
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(&got[..first.len()], &first[..]);
    assert_eq!(&got[first.len()..], b"tail");
}

/// Connecting to a closed port is reported as a failed connect, with the destination.
#[test]
fn refused_connect_is_reported() {
    let rt = runtime(1 << 20);
    let to = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    rt.command((to, b"hello".to_vec())).unwrap();
    let c = closed(&rt);
    assert!(matches!(c.reason, CloseReason::ConnectFailed(_)), "{c:?}");
    assert_eq!((c.opened_to, c.unsent), (Some(to), 5));
}

/// More queued than the write limit closes the connection instead of growing without bound.
#[test]
fn overflow_closes_the_connection() {
    let rt = runtime(1024);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let to = listener.local_addr().unwrap();
    rt.command((to, vec![1; 4096])).unwrap();
    let c = closed(&rt);
    assert_eq!((c.reason, c.opened_to), (CloseReason::Overflow, Some(to)));
}

/// A listener whose accept queue is full: Linux drops further SYNs (the connect neither
/// completes nor fails), so a connect to it hangs without any network access.
fn full_listener() -> (socket2::Socket, Vec<TcpStream>) {
    use socket2::{Domain, Socket, Type};
    let listener = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    listener.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into()).unwrap();
    listener.listen(0).unwrap();
    let to = listener.local_addr().unwrap().as_socket().unwrap();
    let mut queued = Vec::new();
    for _ in 0..16 {
        match TcpStream::connect_timeout(&to, Duration::from_millis(300)) {
            Ok(s) => queued.push(s),
            Err(_) => return (listener, queued),
        }
    }
    panic!("the accept queue never filled");
}

/// MC-DPL4CS 2.1: a connect that never completes (a listener whose accept queue is full drops
/// our SYNs) fails when the connect timeout runs out; the protocol is told, with the
/// destination and the bytes that were never sent.
#[test]
fn connect_that_never_completes_times_out() {
    let (listener, _queued) = full_listener();
    let to = listener.local_addr().unwrap().as_socket().unwrap();
    let rt = runtime(1 << 20);
    let started = Instant::now();
    rt.command((to, b"hello".to_vec())).unwrap();
    let c = closed(&rt);
    assert_eq!(c.reason, CloseReason::ConnectFailed("no answer".into()), "{c:?}");
    assert_eq!((c.opened_to, c.unsent), (Some(to), 5));
    // The runtime's connect timeout is 500 ms.
    assert!(started.elapsed() >= Duration::from_millis(450), "failed after {:?}", started.elapsed());
}

/// A peer that accepts and then stops reading: the socket buffers fill, then our bounded
/// write buffer; the connection is dropped and reported as an overflow, with what was unsent.
#[test]
fn peer_that_stops_reading_overflows() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let to = listener.local_addr().unwrap();
    let rt = runtime(256 << 10);
    let chunk = vec![9; 64 << 10];
    rt.command((to, chunk.clone())).unwrap();
    let (_peer, _) = listener.accept().unwrap();
    // Up to 64 MiB: far beyond loopback's socket buffers and our 256 KiB limit.
    for _ in 0..1024 {
        rt.command((to, chunk.clone())).unwrap();
        match rt.events().recv_timeout(Duration::from_millis(5)) {
            Ok(Ev::Closed(c)) => {
                assert_eq!((c.reason, c.opened_to), (CloseReason::Overflow, Some(to)));
                assert!(c.unsent > 256 << 10, "{} bytes unsent", c.unsent);
                return;
            }
            Ok(Ev::Read(_)) | Err(_) => {}
        }
    }
    panic!("a peer that never reads did not overflow the write buffer");
}

/// docs/limits.md: the bytes queued for a peer are charged to the protocol's memory budget.
/// A peer that stops reading is closed as an overflow once it is [`WRITE_BACKLOG`] behind and
/// the budget is full, long before the 8 MiB write limit; what it held is released.
#[test]
fn peer_that_stops_reading_is_closed_when_the_budget_is_full() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let to = listener.local_addr().unwrap();
    let budget = MemoryBudget::new(2 * WRITE_BACKLOG);
    let rt = runtime_with(8 << 20, Toy { budget: Some(budget.clone()), ..Toy::default() });
    let chunk = vec![9; WRITE_BACKLOG];
    rt.command((to, chunk.clone())).unwrap();
    let (_peer, _) = listener.accept().unwrap();
    for _ in 0..1024 {
        rt.command((to, chunk.clone())).unwrap();
        match rt.events().recv_timeout(Duration::from_millis(5)) {
            Ok(Ev::Closed(c)) => {
                assert_eq!((c.reason, c.opened_to), (CloseReason::Overflow, Some(to)));
                // At least a backlog held, the chunk that did not fit refused with it.
                let refused_at = 2 * WRITE_BACKLOG..=3 * WRITE_BACKLOG;
                assert!(refused_at.contains(&c.unsent), "{} bytes unsent", c.unsent);
                assert!(budget.peak() <= 2 * WRITE_BACKLOG, "peak {}", budget.peak());
                assert_eq!(budget.held(), 0, "a connection gone releases what it held");
                return;
            }
            Ok(Ev::Read(_)) | Err(_) => {}
        }
    }
    panic!("a peer that never reads was not closed at the budget");
}
