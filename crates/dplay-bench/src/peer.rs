//! A [`Protocol`] adapter around a dplay-dframe [`Endpoint`]: the transport alone, without the
//! session layer, driven by dplay-runtime. Traffic is generated and counted inside the network
//! thread, so the figures are the transport's and the runtime's, not a channel's.

use std::cell::Cell;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dplay_dframe::{Config, Endpoint, Event, MessageKind};
use dplay_runtime::Protocol;

use crate::{BACKLOG, age_ns, stamp};

/// A counter alone on its cache line: the sender bumps one and the receiver another from two
/// threads, and sharing a line would make every count a cross-core transfer.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Counter(AtomicU64);

impl Counter {
    /// The current value.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
}

/// Counters shared between the two ends of a run and the thread that measures it.
#[derive(Debug, Default)]
pub struct Counters {
    /// Messages handed to the transport by the sender.
    pub sent: Counter,
    /// Messages delivered to the receiver.
    pub delivered: Counter,
    /// Bytes delivered to the receiver.
    pub delivered_bytes: Counter,
}

impl Counters {
    /// Messages sent and not yet delivered.
    pub fn in_flight(&self) -> u64 {
        self.sent.get().saturating_sub(self.delivered.get())
    }

    /// Counts one delivered message of `len` bytes.
    pub fn deliver(&self, len: usize) {
        self.delivered.add(1);
        self.delivered_bytes.add(len as u64);
    }
}

/// What a [`DframePeer`] does with its connection.
#[derive(Debug, Clone, Copy)]
pub enum Role {
    /// Answers connections and counts what arrives; reports latencies when messages carry a
    /// timestamp and `latency` is set.
    Sink {
        /// Report the one-way latency of every message as [`PeerEvent::Latency`].
        latency: bool,
    },
    /// Keeps `size`-byte reliable sequential messages queued for `peer`, at most
    /// [`BACKLOG`] in flight.
    Bulk {
        /// The receiver.
        peer: SocketAddr,
        /// Message size in bytes.
        size: usize,
    },
    /// Sends one timestamped `size`-byte reliable sequential message to `peer` every
    /// `interval`.
    Paced {
        /// The receiver.
        peer: SocketAddr,
        /// Message size in bytes (at least 8, for the timestamp).
        size: usize,
        /// Time between two messages.
        interval: Duration,
    },
}

/// What the application asks of a [`DframePeer`].
#[derive(Debug, Clone, Copy)]
pub enum PeerCommand {
    /// Open a connection.
    Connect(SocketAddr),
    /// Start (or change) the traffic.
    Start(Role),
}

/// What a [`DframePeer`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerEvent {
    /// A connection is up.
    Connected(SocketAddr),
    /// A connection ended.
    Disconnected(SocketAddr),
    /// One-way latency of a timestamped message, in nanoseconds.
    Latency(u64),
}

/// The dplay-dframe transport as a [`Protocol`].
pub struct DframePeer {
    endpoint: Endpoint,
    role: Role,
    counters: Arc<Counters>,
    epoch: Instant,
    message: Vec<u8>,
    next_paced: Option<Instant>,
    events: VecDeque<PeerEvent>,
    /// The endpoint's deadline, computed once after each input: `Endpoint::poll_timeout` scans
    /// every connection, and the runtime asks twice a turn.
    deadline: Cell<Option<Option<Instant>>>,
}

impl DframePeer {
    /// A peer with `config`, starting as `role`; `epoch` is the origin of timestamps, shared
    /// by both ends.
    pub fn new(config: Config, role: Role, counters: Arc<Counters>, epoch: Instant) -> Self {
        let mut peer = Self {
            endpoint: Endpoint::new(config, epoch),
            role: Role::Sink { latency: false },
            counters,
            epoch,
            message: Vec::new(),
            next_paced: None,
            events: VecDeque::new(),
            deadline: Cell::new(None),
        };
        peer.start(epoch, role);
        peer
    }

    fn start(&mut self, now: Instant, role: Role) {
        self.role = role;
        match role {
            Role::Sink { .. } => self.next_paced = None,
            Role::Bulk { size, .. } => self.message = vec![0x5a; size],
            Role::Paced { size, .. } => {
                self.message = vec![0x5a; size.max(8)];
                self.next_paced = Some(now);
            }
        }
    }

    /// Generates what the role asks for at `now`.
    fn generate(&mut self, now: Instant) {
        match self.role {
            Role::Sink { .. } => {}
            Role::Bulk { peer, .. } => {
                while self.counters.in_flight() < BACKLOG {
                    if self.endpoint.send(now, peer, &self.message, MessageKind::RELIABLE_SEQUENTIAL).is_err()
                    {
                        break;
                    }
                    self.counters.sent.add(1);
                }
            }
            Role::Paced { peer, interval, .. } => {
                while let Some(at) = self.next_paced.filter(|at| *at <= now) {
                    stamp(&mut self.message, self.epoch);
                    if self.endpoint.send(now, peer, &self.message, MessageKind::RELIABLE_SEQUENTIAL).is_ok()
                    {
                        self.counters.sent.add(1);
                    }
                    // A late wake-up does not send a burst: the next message is one interval on.
                    self.next_paced = Some((at + interval).max(now));
                }
            }
        }
    }

    fn endpoint_deadline(&self) -> Option<Instant> {
        match self.deadline.get() {
            Some(cached) => cached,
            None => {
                let d = self.endpoint.poll_timeout();
                self.deadline.set(Some(d));
                d
            }
        }
    }

    fn drain_endpoint_events(&mut self) {
        while let Some(event) = self.endpoint.poll_event() {
            match event {
                Event::Connected { peer, .. } => self.events.push_back(PeerEvent::Connected(peer)),
                Event::Disconnected { peer, .. } => self.events.push_back(PeerEvent::Disconnected(peer)),
                Event::Message { data, .. } => {
                    self.counters.deliver(data.len());
                    if let Role::Sink { latency: true } = self.role
                        && let Some(age) = age_ns(&data, self.epoch)
                    {
                        self.events.push_back(PeerEvent::Latency(age));
                    }
                }
                Event::Unowned { .. } | Event::SendDone { .. } => {}
            }
        }
    }
}

impl Protocol for DframePeer {
    type Command = PeerCommand;
    type Event = PeerEvent;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.deadline.set(None);
        self.endpoint.handle_datagram(now, from, data);
        self.drain_endpoint_events();
        self.generate(now);
    }

    fn handle_command(&mut self, now: Instant, command: PeerCommand) {
        self.deadline.set(None);
        match command {
            PeerCommand::Connect(peer) => {
                // A second connect to the same peer is refused by the transport; nothing to do.
                let _ = self.endpoint.connect(now, peer);
            }
            PeerCommand::Start(role) => self.start(now, role),
        }
        self.generate(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        let due = self.endpoint_deadline().is_some_and(|at| at <= now);
        self.deadline.set(None);
        if due {
            self.endpoint.handle_timeout(now);
            self.drain_endpoint_events();
        }
        self.generate(now);
    }

    fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        self.endpoint.poll_transmit_into(buf)
    }

    fn poll_event(&mut self) -> Option<PeerEvent> {
        self.drain_endpoint_events();
        self.events.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match (self.endpoint_deadline(), self.next_paced) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
