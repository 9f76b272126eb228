//! A small simulated network for DirectPlay 4 endpoints: node `i` is at 10.0.0.(i+1) with its
//! TCP listener on 2300 and its UDP game socket on 2350 (MC-DPL4CS 2.1). UDP datagrams may be
//! lost, delayed and reordered; each TCP connection (one per ordered pair of nodes, opened by
//! the sender to the receiver's listener) delivers its bytes in order, cut at random points
//! into several reads, so the session's stream framing is exercised. Seeded and replayable.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_session::dp4::{Dp4Config, Dp4Transmit, Via};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// Every node's TCP listener port (MC-DPL4CS 2.1: 2300-2400).
pub(crate) const STREAM_PORT: u16 = 2300;
/// Every node's UDP game port.
pub(crate) const DGRAM_PORT: u16 = 2350;

/// The IP address of node `i`.
pub(crate) fn ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, u8::try_from(i + 1).expect("few nodes"))
}

/// The TCP listener of node `i`: where to join when it hosts.
pub(crate) fn listener(i: usize) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(ip(i)), STREAM_PORT)
}

/// The session configuration of node `i`: our ports (written as 0.0.0.0, "answer to the
/// address you saw", as Windows does) and a seed of its own.
pub(crate) fn dp4_config(i: usize, seed: u64) -> Dp4Config {
    let mut config = Dp4Config::default().with_seed(seed.wrapping_mul(31).wrapping_add(i as u64));
    config.stream_addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, STREAM_PORT);
    config.datagram_addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, DGRAM_PORT);
    config
}

/// What the links do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Links {
    /// One-way delay of every delivery.
    pub(crate) latency: Duration,
    /// Up to this much more, drawn per delivery (TCP keeps its order regardless).
    pub(crate) jitter: Duration,
    /// Probability that a UDP datagram is lost.
    pub(crate) udp_loss: f64,
    /// Probability that a UDP datagram is held back by `reorder_delay`, so later ones overtake it.
    pub(crate) udp_reorder: f64,
    /// How long a reordered datagram is held back.
    pub(crate) reorder_delay: Duration,
}

impl Links {
    /// 15 ms, no jitter, no loss.
    pub(crate) fn clean() -> Self {
        Self {
            latency: Duration::from_millis(15),
            jitter: Duration::ZERO,
            udp_loss: 0.0,
            udp_reorder: 0.0,
            reorder_delay: Duration::ZERO,
        }
    }

    /// 15 ms + up to 10 ms, `loss` of UDP lost, and 2% of datagrams held back 600 ms: long
    /// enough for the next positions (250 ms apart) to overtake them.
    pub(crate) fn lossy(loss: f64) -> Self {
        Self {
            jitter: Duration::from_millis(10),
            udp_loss: loss,
            udp_reorder: 0.02,
            reorder_delay: Duration::from_millis(600),
            ..Self::clean()
        }
    }
}

/// One delivery in flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// A UDP datagram from node `from`.
    Udp {
        /// Sender.
        from: usize,
        /// Receiver.
        to: usize,
        /// The datagram.
        bytes: Vec<u8>,
    },
    /// One read on the TCP connection `from` opened to `to`'s listener.
    Tcp {
        /// Sender (the connection's opener).
        from: usize,
        /// Receiver.
        to: usize,
        /// The bytes of this read.
        bytes: Vec<u8>,
    },
}

impl Delivery {
    /// The receiving node.
    pub(crate) fn to(&self) -> usize {
        match self {
            Self::Udp { to, .. } | Self::Tcp { to, .. } => *to,
        }
    }
}

impl Delivery {
    /// The source address the receiver sees: the game socket for UDP, an ephemeral port for
    /// the sender's outbound TCP connection.
    pub(crate) fn source(&self) -> SocketAddr {
        match self {
            Self::Udp { from, .. } => SocketAddr::new(IpAddr::V4(ip(*from)), DGRAM_PORT),
            Self::Tcp { from, .. } => {
                SocketAddr::new(IpAddr::V4(ip(*from)), 40000 + u16::try_from(*from).expect("few nodes"))
            }
        }
    }

    /// The receiver's id for the connection (one per sender).
    pub(crate) fn conn(&self) -> u64 {
        match self {
            Self::Udp { from, .. } | Self::Tcp { from, .. } => *from as u64,
        }
    }
}

/// One message put on a wire, for traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    /// When it was sent.
    pub(crate) at: Instant,
    /// Sender.
    pub(crate) from: usize,
    /// Receiver.
    pub(crate) to: usize,
    /// UDP or TCP.
    pub(crate) via: Via,
    /// The whole message.
    pub(crate) bytes: Vec<u8>,
    /// Lost on the way (UDP only).
    pub(crate) lost: bool,
}

/// Counters of the links.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LinkStats {
    /// UDP datagrams sent (one per receiver of a broadcast).
    pub(crate) udp_sent: u64,
    /// UDP datagrams lost.
    pub(crate) udp_lost: u64,
    /// UDP datagrams held back.
    pub(crate) udp_reordered: u64,
    /// TCP messages sent.
    pub(crate) tcp_messages: u64,
    /// TCP reads delivered.
    pub(crate) tcp_reads: u64,
}

/// The links between `n` nodes: what is in flight and when it arrives.
pub(crate) struct Wires {
    links: Links,
    rng: ChaCha8Rng,
    n: usize,
    /// Deliveries by (arrival, sequence number): ties keep the order of sending.
    in_flight: BTreeMap<(Instant, u64), Delivery>,
    seq: u64,
    /// Per TCP connection (from, to): the arrival of its last read, so later bytes never
    /// overtake earlier ones.
    tcp_tail: BTreeMap<(usize, usize), Instant>,
    /// Every message put on a wire, when tracing: (sent at, from, to, via, bytes, lost).
    pub(crate) trace: Option<Vec<Sent>>,
    /// Counters.
    pub(crate) stats: LinkStats,
}

impl Wires {
    /// `n` nodes on `links`, seeded by `seed`.
    pub(crate) fn new(n: usize, links: Links, seed: u64) -> Self {
        Self {
            links,
            rng: ChaCha8Rng::seed_from_u64(seed),
            n,
            in_flight: BTreeMap::new(),
            seq: 0,
            tcp_tail: BTreeMap::new(),
            trace: None,
            stats: LinkStats::default(),
        }
    }

    /// The node with `addr`'s IP address; every other node for the broadcast address.
    fn receivers(&self, from: usize, addr: SocketAddr) -> Vec<usize> {
        if addr.ip() == IpAddr::V4(Ipv4Addr::BROADCAST) {
            (0..self.n).filter(|&j| j != from).collect()
        } else {
            (0..self.n).filter(|&j| IpAddr::V4(ip(j)) == addr.ip()).collect()
        }
    }

    fn delay(&mut self) -> Duration {
        let jitter = self.links.jitter.as_micros();
        let extra = if jitter == 0 { 0 } else { self.rng.gen_range(0..=jitter) };
        self.links.latency + Duration::from_micros(u64::try_from(extra).expect("small jitter"))
    }

    fn schedule(&mut self, at: Instant, d: Delivery) {
        self.seq += 1;
        self.in_flight.insert((at, self.seq), d);
    }

    /// Puts one transmit of node `from`, sent at `now`, on the wire.
    pub(crate) fn send(&mut self, now: Instant, from: usize, t: Dp4Transmit) {
        for to in self.receivers(from, t.to) {
            let mut at = now + self.delay();
            match t.via {
                Via::Udp => {
                    self.stats.udp_sent += 1;
                    let lost = self.rng.gen_bool(self.links.udp_loss);
                    self.log(Sent { at: now, from, to, via: t.via, bytes: t.bytes.clone(), lost });
                    if lost {
                        self.stats.udp_lost += 1;
                        continue;
                    }
                    if self.rng.gen_bool(self.links.udp_reorder) {
                        self.stats.udp_reordered += 1;
                        at += self.links.reorder_delay;
                    }
                    self.schedule(at, Delivery::Udp { from, to, bytes: t.bytes.clone() });
                }
                Via::Tcp => {
                    self.stats.tcp_messages += 1;
                    self.log(Sent { at: now, from, to, via: t.via, bytes: t.bytes.clone(), lost: false });
                    let tail = self.tcp_tail.entry((from, to)).or_insert(at);
                    at = at.max(*tail);
                    *tail = at;
                    for read in self.cut(&t.bytes) {
                        self.schedule(at, Delivery::Tcp { from, to, bytes: read });
                    }
                }
            }
        }
    }

    fn log(&mut self, sent: Sent) {
        if let Some(trace) = &mut self.trace {
            trace.push(sent);
        }
    }

    /// Cuts a stream message into one to three reads at random points.
    fn cut(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut points: Vec<usize> =
            (0..self.rng.gen_range(0..3)).map(|_| self.rng.gen_range(1..bytes.len().max(2))).collect();
        points.push(bytes.len());
        points.sort_unstable();
        points.dedup();
        let mut start = 0;
        points
            .into_iter()
            .filter_map(|end| {
                let read = bytes.get(start..end)?.to_vec();
                start = end;
                Some(read)
            })
            .collect()
    }

    /// The arrival of the next delivery.
    pub(crate) fn next_arrival(&self) -> Option<Instant> {
        self.in_flight.keys().next().map(|(at, _)| *at)
    }

    /// The next delivery due at `now`, for a node that is up.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<Delivery> {
        let d = self.in_flight.first_entry().filter(|e| e.key().0 <= now)?.remove();
        self.stats.tcp_reads += u64::from(matches!(d, Delivery::Tcp { .. }));
        Some(d)
    }
}
