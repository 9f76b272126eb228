//! The runtime over real loopback sockets, with a toy protocol.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_runtime::{Protocol, Runtime, RuntimeConfig, RuntimeError};

/// Echoes every datagram back; `Send(to, bytes)` sends one; events are the datagrams received.
/// A timer fires every 10 ms and counts.
#[derive(Default)]
struct Echo {
    echo: bool,
    queue: Vec<(SocketAddr, Vec<u8>)>,
    received: Vec<(SocketAddr, Vec<u8>)>,
    next_tick: Option<Instant>,
    ticks: u32,
}

enum Cmd {
    Send(SocketAddr, Vec<u8>),
    Ticks,
}

#[derive(Debug, PartialEq)]
enum Ev {
    Got(Vec<u8>),
    Ticks(u32),
}

impl Protocol for Echo {
    type Command = Cmd;
    type Event = Ev;

    fn handle_datagram(&mut self, _now: Instant, from: SocketAddr, data: &[u8]) {
        if self.echo {
            self.queue.push((from, data.to_vec()));
        }
        self.received.push((from, data.to_vec()));
    }

    fn handle_command(&mut self, now: Instant, command: Cmd) {
        match command {
            Cmd::Send(to, data) => self.queue.push((to, data)),
            Cmd::Ticks => {
                self.next_tick.get_or_insert(now + Duration::from_millis(10));
                self.received.push((SocketAddr::from(([0, 0, 0, 0], 0)), Vec::new()));
            }
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.ticks += 1;
        self.next_tick = (self.ticks < 3).then(|| now + Duration::from_millis(10));
    }

    fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let (to, data) = self.queue.pop()?;
        buf.extend_from_slice(&data);
        Some(to)
    }

    fn poll_event(&mut self) -> Option<Ev> {
        if self.ticks == 3 {
            self.ticks += 1;
            return Some(Ev::Ticks(3));
        }
        let (_, data) = self.received.pop()?;
        (!data.is_empty()).then_some(Ev::Got(data))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next_tick
    }
}

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

#[test]
fn datagrams_flow_both_ways() {
    let server =
        Runtime::spawn(RuntimeConfig::new(loopback()), Echo { echo: true, ..Echo::default() }).unwrap();
    let client = Runtime::spawn(RuntimeConfig::new(loopback()), Echo::default()).unwrap();
    for i in 0..100u8 {
        client.command(Cmd::Send(server.local_addr(), vec![i; 1 + usize::from(i)])).unwrap();
    }
    let mut got = Vec::new();
    while got.len() < 100 {
        match client.events().recv_timeout(Duration::from_secs(5)).expect("echo within 5 s") {
            Ev::Got(data) => got.push(data),
            Ev::Ticks(_) => {}
        }
    }
    got.sort();
    assert_eq!(got.first().map(Vec::len), Some(1));
    assert_eq!(got.last().map(Vec::len), Some(100));
    client.shutdown().unwrap();
    server.shutdown().unwrap();
}

#[test]
fn timers_fire_at_their_deadline() {
    let rt = Runtime::spawn(RuntimeConfig::new(loopback()), Echo::default()).unwrap();
    rt.command(Cmd::Ticks).unwrap();
    assert_eq!(rt.events().recv_timeout(Duration::from_secs(5)), Ok(Ev::Ticks(3)));
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let first = Runtime::spawn(RuntimeConfig::new(loopback()), Echo::default()).unwrap();
    let Err(err) = Runtime::spawn(RuntimeConfig::new(first.local_addr()), Echo::default()) else {
        panic!("binding the same port twice succeeded");
    };
    assert!(matches!(err, RuntimeError::AddrInUse { .. }), "{err:?}");
    assert!(err.to_string().contains("--bind"), "the message says what to do: {err}");
}

#[test]
fn dropping_the_runtime_stops_the_thread() {
    let rt = Runtime::spawn(RuntimeConfig::new(loopback()), Echo::default()).unwrap();
    assert!(rt.is_running());
    drop(rt);
}
