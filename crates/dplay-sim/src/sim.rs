//! The simulator: nodes, links, the event queue and the virtual clock.

use std::any::Any;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::link::{LinkConfig, LinkStats};
use crate::nat::{Nat, NatConfig, NatId};
use crate::seed::{SEED_VAR, seed_from_env};
use crate::stream::{Conn, StreamConfig, StreamId, StreamStats};
use crate::trace::{Flags, Outcome, Trace};
use crate::{Node, Transmit};

mod streams;

use streams::StreamStep;

/// Steps at one instant after which the sim assumes a node keeps asking for the current time
/// (or keeps sending) forever, and panics rather than hang the test.
const LIVELOCK_STEPS: u64 = 1_000_000;

/// A node of a [`Sim`], numbered in the order they were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(usize);

impl NodeId {
    /// The node's position in the order of [`Sim::add_node`] calls, from 0.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A [`Node`] the sim can also hand back as its concrete type.
trait SimNode: Node + Any {}
impl<N: Node + Any> SimNode for N {}

struct Slot {
    addr: SocketAddr,
    node: Box<dyn SimNode>,
    deadline: Option<Instant>,
    /// Its process was killed ([`Sim::kill`]): it is never run again.
    dead: bool,
}

enum Event {
    Deliver { from: SocketAddr, sender: Option<NodeId>, to: NodeId, data: Vec<u8>, flags: Flags },
    Partition(NodeId, NodeId),
    Heal(NodeId, NodeId),
    Stream { conn: usize, step: StreamStep },
}

struct Queued {
    at: Instant,
    seq: u64,
    event: Event,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

fn pair(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    if a <= b { (a, b) } else { (b, a) }
}

/// Uniform in `0..=max`, at nanosecond resolution.
fn uniform(rng: &mut ChaCha8Rng, max: Duration) -> Duration {
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    if nanos == 0 { Duration::ZERO } else { Duration::from_nanos(rng.gen_range(0..=nanos)) }
}

/// True with probability `p`; draws nothing when `p <= 0`, so a disabled effect never changes
/// the rest of a run.
fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    p > 0.0 && rng.r#gen::<f64>() < p
}

/// A deterministic network of [`Node`]s on a virtual clock. See the crate documentation.
pub struct Sim {
    seed: u64,
    rng: ChaCha8Rng,
    base: Instant,
    now: Instant,
    slots: Vec<Slot>,
    by_addr: BTreeMap<SocketAddr, NodeId>,
    default_link: LinkConfig,
    links: BTreeMap<(NodeId, NodeId), LinkConfig>,
    /// Arrival time of the last in-order datagram per directed link, so jitter never reorders.
    last_arrival: BTreeMap<(NodeId, NodeId), Instant>,
    partitions: BTreeSet<(NodeId, NodeId)>,
    queue: BinaryHeap<Reverse<Queued>>,
    next_seq: u64,
    stats: BTreeMap<(NodeId, NodeId), LinkStats>,
    unroutable: u64,
    trace: Option<Trace>,
    steps_at_now: u64,
    nats: Vec<Nat>,
    /// Each NAT's TCP table (a NAT maps TCP and UDP apart).
    tcp_nats: Vec<Nat>,
    behind: BTreeMap<NodeId, NatId>,
    listeners: BTreeMap<SocketAddr, NodeId>,
    conns: Vec<Conn>,
    stream_ends: BTreeMap<(NodeId, StreamId), usize>,
    /// The next local port of a connection, per IP.
    ephemeral: BTreeMap<IpAddr, u16>,
    stream_config: StreamConfig,
    stream_stats: StreamStats,
}

impl Sim {
    /// A network with no nodes, every link [`LinkConfig::clean`], all randomness from `seed`.
    pub fn new(seed: u64) -> Self {
        #[allow(
            clippy::disallowed_methods,
            reason = "the one clock read: the base of the virtual clock; every later time is base + a simulated duration"
        )]
        let base = Instant::now();
        Self {
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
            base,
            now: base,
            slots: Vec::new(),
            by_addr: BTreeMap::new(),
            default_link: LinkConfig::clean(),
            links: BTreeMap::new(),
            last_arrival: BTreeMap::new(),
            partitions: BTreeSet::new(),
            queue: BinaryHeap::new(),
            next_seq: 0,
            stats: BTreeMap::new(),
            unroutable: 0,
            trace: None,
            steps_at_now: 0,
            nats: Vec::new(),
            tcp_nats: Vec::new(),
            behind: BTreeMap::new(),
            listeners: BTreeMap::new(),
            conns: Vec::new(),
            stream_ends: BTreeMap::new(),
            ephemeral: BTreeMap::new(),
            stream_config: StreamConfig::default(),
            stream_stats: StreamStats::default(),
        }
    }

    /// [`Sim::new`] with `DPLAY_SIM_SEED` if it is set, else `default_seed`.
    pub fn from_env(default_seed: u64) -> Self {
        Self::new(seed_from_env(default_seed))
    }

    /// The seed of this run: `DPLAY_SIM_SEED=<seed>` replays it.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// A seed for a node's own RNG (session ids, GUIDs, backoff jitter), derived from the run's
    /// seed and `stream` without disturbing the network's randomness. Give each node its own
    /// `stream` (its index, say) so that one seed decides the whole run.
    pub fn derive_seed(&self, stream: u64) -> u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(stream.wrapping_add(1));
        rng.r#gen()
    }

    /// The current virtual time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Virtual time since the sim was created.
    pub fn elapsed(&self) -> Duration {
        self.now - self.base
    }

    /// Binds `node` to `addr`. Datagrams sent to `addr` are delivered to it, and its datagrams
    /// arrive with `addr` as their source.
    ///
    /// # Panics
    ///
    /// If another node already has `addr`.
    #[track_caller]
    pub fn add_node<N: Node + Any>(&mut self, addr: SocketAddr, node: N) -> NodeId {
        let id = NodeId(self.slots.len());
        assert!(self.by_addr.insert(addr, id).is_none(), "two nodes at {addr}");
        self.slots.push(Slot { addr, node: Box::new(node), deadline: None, dead: false });
        id
    }

    /// Adds a NAT (a link model: it owns no node). Nodes put behind it with
    /// [`Sim::put_behind_nat`] send from its public IP and receive only what it lets in.
    pub fn add_nat(&mut self, config: NatConfig) -> NatId {
        self.nats.push(Nat::new(config));
        self.tcp_nats.push(Nat::new(config));
        NatId(self.nats.len() - 1)
    }

    /// Puts node `node` behind NAT `nat`: its datagrams leave from the NAT's public address,
    /// datagrams reach it only through the NAT's mappings, and nodes outside the NAT cannot
    /// reach its own (inside) address.
    pub fn put_behind_nat(&mut self, node: NodeId, nat: NatId) {
        self.behind.insert(node, nat);
    }

    /// Datagrams NAT `nat` refused from outside (no mapping, or filtered).
    pub fn nat_filtered(&self, nat: NatId) -> u64 {
        self.nats.get(nat.0).map_or(0, |n| n.filtered)
    }

    /// The node a datagram from node `from` (seen as `src` outside) to `destination` reaches,
    /// through the NATs: `None` when there is none or a NAT refuses it.
    fn route(&mut self, from: NodeId, src: SocketAddr, destination: SocketAddr) -> Option<NodeId> {
        if let Some(to) = self.node_at(destination) {
            let inside = self.behind.get(&to);
            return (inside.is_none() || inside == self.behind.get(&from)).then_some(to);
        }
        let nat = self.nats.iter_mut().find(|n| n.config.public_ip == destination.ip())?;
        let inside = nat.inbound(src, destination.port())?;
        self.node_at(inside)
    }

    /// The node `id` as its concrete type, to inspect its state.
    ///
    /// # Panics
    ///
    /// If `id` is not a node of this sim or the node is not an `N`.
    #[track_caller]
    pub fn node<N: Node + Any>(&self, id: NodeId) -> &N {
        let node: &dyn Any = self.slot(id).node.as_ref();
        node.downcast_ref().unwrap_or_else(|| panic!("node {} is not a {}", id.0, std::any::type_name::<N>()))
    }

    /// The node `id` as its concrete type, to give it commands (connect, send, close). Take the
    /// time from [`Sim::now`] first. Its transmits and deadline are collected at the next step.
    ///
    /// # Panics
    ///
    /// If `id` is not a node of this sim or the node is not an `N`.
    #[track_caller]
    pub fn node_mut<N: Node + Any>(&mut self, id: NodeId) -> &mut N {
        let node: &mut dyn Any = self.slot_mut(id).node.as_mut();
        node.downcast_mut().unwrap_or_else(|| panic!("node {} is not a {}", id.0, std::any::type_name::<N>()))
    }

    /// The address node `id` is bound to.
    #[track_caller]
    pub fn addr(&self, id: NodeId) -> SocketAddr {
        self.slot(id).addr
    }

    /// The node bound to `addr`, if any.
    pub fn node_at(&self, addr: SocketAddr) -> Option<NodeId> {
        self.by_addr.get(&addr).copied()
    }

    /// Every node, in the order they were added.
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + use<> {
        (0..self.slots.len()).map(NodeId)
    }

    #[track_caller]
    fn slot(&self, id: NodeId) -> &Slot {
        self.slots.get(id.0).unwrap_or_else(|| panic!("no node {} in this sim", id.0))
    }

    #[track_caller]
    fn slot_mut(&mut self, id: NodeId) -> &mut Slot {
        self.slots.get_mut(id.0).unwrap_or_else(|| panic!("no node {} in this sim", id.0))
    }

    /// The link used between nodes that have no link of their own. Applies to datagrams sent
    /// from now on.
    pub fn set_default_link(&mut self, config: LinkConfig) {
        self.default_link = config;
    }

    /// Sets both directions between `a` and `b`, for datagrams sent from now on.
    pub fn set_link(&mut self, a: NodeId, b: NodeId, config: LinkConfig) {
        self.links.insert((b, a), config.clone());
        self.links.insert((a, b), config);
    }

    /// Sets the direction `from` -> `to` only.
    pub fn set_link_oneway(&mut self, from: NodeId, to: NodeId, config: LinkConfig) {
        self.links.insert((from, to), config);
    }

    /// The configuration of the direction `from` -> `to`.
    pub fn link(&self, from: NodeId, to: NodeId) -> &LinkConfig {
        self.links.get(&(from, to)).unwrap_or(&self.default_link)
    }

    /// Cuts `a` and `b` apart both ways: everything sent between them, or arriving between them,
    /// is dropped until [`Sim::heal`].
    pub fn partition(&mut self, a: NodeId, b: NodeId) {
        if self.partitions.insert(pair(a, b)) {
            self.trace_pair("partition", a, b);
            self.streams_cut(a, b);
        }
    }

    /// Reconnects `a` and `b`.
    pub fn heal(&mut self, a: NodeId, b: NodeId) {
        if self.partitions.remove(&pair(a, b)) {
            self.trace_pair("heal", a, b);
        }
    }

    /// Cuts every node of `side_a` from every node of `side_b`.
    pub fn partition_sets(&mut self, side_a: &[NodeId], side_b: &[NodeId]) {
        for &a in side_a {
            for &b in side_b {
                self.partition(a, b);
            }
        }
    }

    /// Cuts `node` from every node added so far.
    pub fn isolate(&mut self, node: NodeId) {
        for other in self.node_ids().filter(|&o| o != node) {
            self.partition(node, other);
        }
    }

    /// Heals every partition.
    pub fn heal_all(&mut self) {
        for (a, b) in std::mem::take(&mut self.partitions) {
            self.trace_pair("heal", a, b);
        }
    }

    /// Whether `a` and `b` are cut apart now.
    pub fn is_partitioned(&self, a: NodeId, b: NodeId) -> bool {
        self.partitions.contains(&pair(a, b))
    }

    /// Partitions `a` and `b` at `from` and heals them at `until` (virtual times: build them from
    /// [`Sim::now`]). Datagrams already in flight when the partition starts are dropped.
    pub fn schedule_partition(&mut self, a: NodeId, b: NodeId, from: Instant, until: Instant) {
        self.enqueue(from, Event::Partition(a, b));
        self.enqueue(until, Event::Heal(a, b));
    }

    /// Delivers `data` to `to` at `at` as if sent from `from`, bypassing links and partitions:
    /// for hostile or hand-made datagrams. `from` need not be a node.
    pub fn inject(&mut self, at: Instant, from: SocketAddr, to: NodeId, data: Vec<u8>) {
        self.enqueue(at, Event::Deliver { from, sender: None, to, data, flags: Flags::default() });
    }

    /// What the direction `from` -> `to` has done so far.
    pub fn stats(&self, from: NodeId, to: NodeId) -> LinkStats {
        self.stats.get(&(from, to)).copied().unwrap_or_default()
    }

    /// The sum over every link.
    pub fn total_stats(&self) -> LinkStats {
        let mut total = LinkStats::default();
        for s in self.stats.values() {
            total += *s;
        }
        total
    }

    /// Node `node`'s process was killed: its connections are reset and its listeners gone
    /// ([`Sim::kill_streams`]), and it is never run again (it sends nothing, its timers never
    /// fire, datagrams that reach it are lost as at a closed port). Its machine still answers
    /// connects with an RST, and its NAT keeps its mappings until they expire.
    pub fn kill(&mut self, node: NodeId) {
        self.kill_streams(node);
        let slot = self.slot_mut(node);
        (slot.dead, slot.deadline) = (true, None);
    }

    /// Datagrams sent to an address no node is bound to, or to a killed node.
    pub fn unroutable(&self) -> u64 {
        self.unroutable
    }

    /// Starts recording the trace (see [`Sim::trace`]). Call it before the run.
    pub fn enable_trace(&mut self) {
        self.trace.get_or_insert_with(Trace::default);
    }

    /// Starts recording the trace, ending each datagram's line with `describe(bytes)` (when not
    /// empty): a test can name the frames its protocol sends (`CONNECT`, `DFRAME seq=3`) without
    /// this crate knowing the protocol. The bytes are those that arrived (after any corruption),
    /// or those that were dropped.
    pub fn enable_trace_with(&mut self, describe: impl Fn(&[u8]) -> String + 'static) {
        self.trace.get_or_insert_with(Trace::default).describe = Some(Box::new(describe));
    }

    /// The trace so far, one line per datagram copy: `t=12.345ms 10.0.0.1:6073 -> 10.0.0.2:2302
    /// len=16 delivered`, where the last word is `delivered`, `dropped(loss)`,
    /// `dropped(partition)`, `dropped(mtu)`, `dropped(no-route)`, or what the link did to a
    /// delivered copy (`duplicated`, `reordered`, `corrupted`, comma-separated). Drops are written
    /// when the datagram is sent, deliveries when it arrives. Empty unless
    /// [`Sim::enable_trace`] was called.
    pub fn trace(&self) -> &str {
        self.trace.as_ref().map_or("", |t| t.text.as_str())
    }

    /// Adds `t=<now> note: <text>` to the trace, to mark a test's own steps.
    pub fn note(&mut self, text: &str) {
        let t = self.elapsed();
        if let Some(trace) = &mut self.trace {
            trace.event(t, &format!("note: {text}"));
        }
    }

    /// Adds the test's summary (for example the final state of each node) to the trace, one
    /// `summary: ` line per line of `text`.
    pub fn summary(&mut self, text: &str) {
        if let Some(trace) = &mut self.trace {
            trace.summary(text);
        }
    }

    fn trace_pair(&mut self, what: &str, a: NodeId, b: NodeId) {
        let t = self.elapsed();
        let (aa, ba) = (self.addr(a), self.addr(b));
        if let Some(trace) = &mut self.trace {
            trace.event(t, &format!("{what} {aa} <-> {ba}"));
        }
    }

    fn trace_datagram(&mut self, from: SocketAddr, to: SocketAddr, data: &[u8], outcome: Outcome) {
        let t = self.elapsed();
        if let Some(trace) = &mut self.trace {
            trace.datagram(t, from, to, data, outcome);
        }
    }

    fn enqueue(&mut self, at: Instant, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.queue.push(Reverse(Queued { at, seq, event }));
    }

    fn stats_mut(&mut self, from: NodeId, to: NodeId) -> &mut LinkStats {
        self.stats.entry((from, to)).or_default()
    }

    /// Collects every node's transmits and deadline, in node order.
    fn flush(&mut self) {
        for index in 0..self.slots.len() {
            let id = NodeId(index);
            if self.slot(id).dead {
                continue;
            }
            let mut sent = 0u64;
            loop {
                let now = self.now;
                let Some(transmit) = self.slot_mut(id).node.poll_transmit(now) else { break };
                self.send(id, transmit);
                sent += 1;
                assert!(sent < LIVELOCK_STEPS, "node {index} never stops sending (seed {})", self.seed);
            }
            loop {
                let now = self.now;
                let Some(command) = self.slot_mut(id).node.poll_stream(now) else { break };
                self.stream_command(id, command);
                sent += 1;
                assert!(sent < LIVELOCK_STEPS, "node {index} never stops writing (seed {})", self.seed);
            }
            let slot = self.slot_mut(id);
            slot.deadline = slot.node.poll_timeout();
        }
    }

    /// Puts one datagram on the link `from` -> its destination.
    fn send(&mut self, from: NodeId, transmit: Transmit) {
        let Transmit { destination, contents: mut data } = transmit;
        let inside = self.addr(from);
        let src = match self.behind.get(&from).and_then(|n| self.nats.get_mut(n.0)) {
            Some(nat) => nat.outbound(inside, destination),
            None => inside,
        };
        let Some(to) = self.route(from, src, destination) else {
            self.unroutable += 1;
            self.trace_datagram(src, destination, &data, Outcome::DroppedNoRoute);
            return;
        };
        let config = self.link(from, to).clone();
        self.stats_mut(from, to).sent += 1;
        let drop = if self.is_partitioned(from, to) {
            Some(Outcome::DroppedPartition)
        } else if data.len() > config.mtu {
            Some(Outcome::DroppedMtu)
        } else if chance(&mut self.rng, config.loss) {
            Some(Outcome::DroppedLoss)
        } else {
            None
        };
        if let Some(outcome) = drop {
            let stats = self.stats_mut(from, to);
            match outcome {
                Outcome::DroppedPartition => stats.dropped_partition += 1,
                Outcome::DroppedMtu => stats.dropped_mtu += 1,
                _ => stats.dropped_loss += 1,
            }
            self.trace_datagram(src, destination, &data, outcome);
            return;
        }

        let mut flags = Flags::default();
        let delay = config.latency + uniform(&mut self.rng, config.jitter);
        let arrival = if chance(&mut self.rng, config.reorder) {
            flags.reordered = true;
            let extra = uniform(&mut self.rng, config.reorder_delay).max(Duration::from_micros(1));
            self.now + delay + extra
        } else {
            let earliest = self.last_arrival.get(&(from, to)).copied().unwrap_or(self.now);
            let arrival = (self.now + delay).max(earliest);
            self.last_arrival.insert((from, to), arrival);
            arrival
        };
        if chance(&mut self.rng, config.corrupt) && !data.is_empty() {
            let index = self.rng.gen_range(0..data.len());
            let mask: u8 = self.rng.gen_range(1..=u8::MAX);
            if let Some(byte) = data.get_mut(index) {
                *byte ^= mask;
                flags.corrupted = true;
            }
        }
        let duplicate = chance(&mut self.rng, config.duplicate);
        let stats = self.stats_mut(from, to);
        stats.reordered += u64::from(flags.reordered);
        stats.corrupted += u64::from(flags.corrupted);
        stats.duplicated += u64::from(duplicate);
        // The original is queued first, so it arrives first even when the copy has no extra delay.
        let copy = duplicate.then(|| data.clone());
        self.enqueue(arrival, Event::Deliver { from: src, sender: Some(from), to, data, flags });
        if let Some(data) = copy {
            let later = arrival + uniform(&mut self.rng, config.duplicate_delay);
            let flags = Flags { duplicated: true, ..flags };
            self.enqueue(later, Event::Deliver { from: src, sender: Some(from), to, data, flags });
        }
    }

    /// The time of the next event, after collecting every node's transmits and deadline.
    fn next_time(&mut self) -> Option<Instant> {
        self.flush();
        let queued = self.queue.peek().map(|q| q.0.at);
        let deadline = self.slots.iter().filter_map(|s| s.deadline).min();
        [queued, deadline].into_iter().flatten().min().map(|t| t.max(self.now))
    }

    /// Advances to `at` and handles the one event due there.
    fn process(&mut self, at: Instant) {
        if at > self.now {
            self.now = at;
            self.steps_at_now = 0;
        }
        self.steps_at_now += 1;
        assert!(
            self.steps_at_now < LIVELOCK_STEPS,
            "livelock: {LIVELOCK_STEPS} steps at t={:?} (seed {})",
            self.elapsed(),
            self.seed
        );
        let now = self.now;
        if self.queue.peek().is_some_and(|q| q.0.at <= now) {
            if let Some(Reverse(queued)) = self.queue.pop() {
                self.handle_event(queued.event);
            }
            return;
        }
        let due = self.slots.iter_mut().find(|s| s.deadline.is_some_and(|d| d <= now));
        if let Some(slot) = due {
            slot.deadline = None;
            slot.node.handle_timeout(now);
        }
    }

    fn handle_event(&mut self, event: Event) {
        match event {
            Event::Partition(a, b) => self.partition(a, b),
            Event::Heal(a, b) => self.heal(a, b),
            Event::Stream { conn, step } => self.handle_stream_step(conn, step),
            Event::Deliver { from, sender, to, data, flags } => {
                let dst = self.addr(to);
                if let Some(sender) = sender {
                    if self.is_partitioned(sender, to) {
                        self.stats_mut(sender, to).dropped_partition += 1;
                        self.trace_datagram(from, dst, &data, Outcome::DroppedPartition);
                        return;
                    }
                    self.stats_mut(sender, to).delivered += 1;
                }
                if self.slot(to).dead {
                    // A closed port: the datagram is lost (the ICMP answer is not modelled).
                    self.unroutable += 1;
                    return self.trace_datagram(from, dst, &data, Outcome::DroppedNoRoute);
                }
                self.trace_datagram(from, dst, &data, Outcome::Delivered(flags));
                let now = self.now;
                self.slot_mut(to).node.handle_datagram(now, from, &data);
            }
        }
    }

    /// Handles the next event (a datagram arrival, a scheduled partition change or a node
    /// deadline), advancing the clock to it. Returns `false`, doing nothing, when nothing is
    /// pending: no datagram in flight, nothing scheduled, no node deadline.
    pub fn step(&mut self) -> bool {
        match self.next_time() {
            Some(at) => {
                self.process(at);
                true
            }
            None => false,
        }
    }

    /// Handles every event up to and including `deadline`, then sets the clock to `deadline`
    /// (if it is later than now).
    pub fn run_until(&mut self, deadline: Instant) {
        while let Some(at) = self.next_time().filter(|&at| at <= deadline) {
            self.process(at);
        }
        self.now = self.now.max(deadline);
    }

    /// [`Sim::run_until`] `now + duration`.
    pub fn run_for(&mut self, duration: Duration) {
        self.run_until(self.now + duration);
    }

    /// Steps until `done(self)` holds, checking before the first step and after each one, but
    /// not past `deadline`. Returns whether `done` held; the clock is left at the step that
    /// satisfied it, or at `deadline`.
    pub fn run_until_with(&mut self, deadline: Instant, mut done: impl FnMut(&Sim) -> bool) -> bool {
        loop {
            if done(self) {
                return true;
            }
            match self.next_time().filter(|&at| at <= deadline) {
                Some(at) => self.process(at),
                None => {
                    self.now = self.now.max(deadline);
                    return done(self);
                }
            }
        }
    }

    /// Steps until nothing is pending, but not past `now + limit`. Returns whether the network
    /// went idle (`false`: something was still pending at the limit, such as a keepalive timer).
    pub fn run_until_idle(&mut self, limit: Duration) -> bool {
        let deadline = self.now + limit;
        while let Some(at) = self.next_time() {
            if at > deadline {
                self.now = deadline;
                return false;
            }
            self.process(at);
        }
        true
    }
}

impl Drop for Sim {
    /// A sim dropped by a panicking test says how to replay the run, and how it ended.
    fn drop(&mut self) {
        if std::thread::panicking() {
            #[allow(
                clippy::print_stderr,
                reason = "the seed of a failing run must reach the person replaying it"
            )]
            {
                eprintln!(
                    "dplay-sim: run failed at t={:?}; replay with {SEED_VAR}={}",
                    self.elapsed(),
                    self.seed
                );
                if let Some(trace) = &self.trace {
                    eprintln!("dplay-sim: last trace lines:\n{}", trace.tail());
                }
            }
        }
    }
}
