//! Toy nodes for the simulator's own tests.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_sim::{Node, Transmit};

pub(crate) fn addr(last: u8, port: u16) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, last], port))
}

/// Sends `count` numbered datagrams of `len` bytes (the number as u32 LE first) to `peer`, one
/// every `interval` from `start`, on its own timer. Records what comes back.
pub(crate) struct Pinger {
    peer: SocketAddr,
    interval: Duration,
    len: usize,
    remaining: u32,
    next_seq: u32,
    next_send: Option<Instant>,
    due: bool,
    pub(crate) received: Vec<(Instant, Vec<u8>)>,
    pub(crate) timeouts: Vec<Instant>,
}

impl Pinger {
    pub(crate) fn new(peer: SocketAddr, start: Instant, interval: Duration, count: u32, len: usize) -> Self {
        assert!(len >= 4);
        Self {
            peer,
            interval,
            len,
            remaining: count,
            next_seq: 0,
            next_send: (count > 0).then_some(start),
            due: false,
            received: Vec::new(),
            timeouts: Vec::new(),
        }
    }
}

impl Node for Pinger {
    fn handle_datagram(&mut self, now: Instant, _from: SocketAddr, data: &[u8]) {
        self.received.push((now, data.to_vec()));
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.timeouts.push(now);
        self.due = true;
        self.next_send = None;
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        if !self.due {
            return None;
        }
        self.due = false;
        self.remaining -= 1;
        if self.remaining > 0 {
            self.next_send = Some(now + self.interval);
        }
        let mut contents = vec![0xAB; self.len];
        contents[..4].copy_from_slice(&self.next_seq.to_le_bytes());
        self.next_seq += 1;
        Some(Transmit { destination: self.peer, contents })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.next_send
    }
}

/// Records every datagram, sends nothing.
#[derive(Default)]
pub(crate) struct Sink {
    pub(crate) received: Vec<(Instant, SocketAddr, Vec<u8>)>,
}

impl Sink {
    /// The sequence numbers of the received datagrams, in arrival order.
    pub(crate) fn seqs(&self) -> Vec<u32> {
        self.received.iter().map(|(_, _, d)| u32::from_le_bytes(d[..4].try_into().unwrap())).collect()
    }
}

impl Node for Sink {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.received.push((now, from, data.to_vec()));
    }
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&mut self) -> Option<Instant> {
        None
    }
}

/// Sends every datagram back to where it came from.
#[derive(Default)]
pub(crate) struct Echo {
    pending: VecDeque<Transmit>,
}

impl Node for Echo {
    fn handle_datagram(&mut self, _now: Instant, from: SocketAddr, data: &[u8]) {
        self.pending.push_back(Transmit { destination: from, contents: data.to_vec() });
    }
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        self.pending.pop_front()
    }
    fn poll_timeout(&mut self) -> Option<Instant> {
        None
    }
}

/// Sends what a test queues through `Sim::node_mut`, to wherever the test says.
#[derive(Default)]
pub(crate) struct Sender {
    pub(crate) queue: VecDeque<Transmit>,
}

impl Sender {
    pub(crate) fn send(&mut self, destination: SocketAddr, contents: Vec<u8>) {
        self.queue.push_back(Transmit { destination, contents });
    }
}

impl Node for Sender {
    fn handle_datagram(&mut self, _now: Instant, _from: SocketAddr, _data: &[u8]) {}
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        self.queue.pop_front()
    }
    fn poll_timeout(&mut self) -> Option<Instant> {
        None
    }
}

/// Wakes up at fixed deadlines and records when it was woken.
pub(crate) struct Alarm {
    pub(crate) deadlines: VecDeque<Instant>,
    pub(crate) woken: Vec<Instant>,
}

impl Node for Alarm {
    fn handle_datagram(&mut self, _now: Instant, _from: SocketAddr, _data: &[u8]) {}
    fn handle_timeout(&mut self, now: Instant) {
        self.woken.push(now);
        self.deadlines.pop_front();
    }
    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&mut self) -> Option<Instant> {
        self.deadlines.front().copied()
    }
}
