//! The transport scenario run over dplay-sim by the sim sweep (`cargo xtask sim`), the
//! trace snapshot and the benchmark: two endpoints connect, exchange messages of every
//! category and size both ways, idle long enough for KeepAlives, and close gracefully.
#![allow(dead_code, reason = "each user of this shared file uses a different part")]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_dframe::{Config, DisconnectReason, Endpoint, Event, MessageKind};
use dplay_sim::{LinkConfig, Node, Sim, Transmit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Bytes the harness appends to every datagram: a checksum standing in for UDP's, which drops
/// damaged datagrams on real networks (DP8 has none of its own).
pub(crate) const CHECKSUM_LEN: usize = 4;

fn checksum(data: &[u8]) -> [u8; 4] {
    // FNV-1a: enough to catch the sim's single-byte damage.
    let mut h: u32 = 0x811c_9dc5;
    for &b in data {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h.to_le_bytes()
}

/// A sim node: an endpoint plus the events it reported.
pub(crate) struct Peer {
    pub(crate) ep: Endpoint,
    pub(crate) events: Vec<(Duration, Event)>,
    pub(crate) checksum_drops: u64,
    /// When set, one decoded line per datagram sent, for traces.
    pub(crate) sent_log: Option<Vec<(Duration, String)>>,
    start: Instant,
}

impl Peer {
    pub(crate) fn new(config: Config, now: Instant) -> Self {
        Self {
            ep: Endpoint::new(config, now),
            events: Vec::new(),
            checksum_drops: 0,
            sent_log: None,
            start: now,
        }
    }

    fn collect(&mut self, now: Instant) {
        while let Some(e) = self.ep.poll_event() {
            self.events.push((now - self.start, e));
        }
    }

    /// Runs a command on the endpoint and records what it reported.
    pub(crate) fn with(&mut self, now: Instant, f: impl FnOnce(&mut Endpoint)) {
        f(&mut self.ep);
        self.collect(now);
    }
}

impl Node for Peer {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let Some(split) = data.len().checked_sub(CHECKSUM_LEN) else {
            self.checksum_drops += 1;
            return;
        };
        let (body, sum) = data.split_at(split);
        if checksum(body) != sum {
            self.checksum_drops += 1;
            return;
        }
        self.ep.handle_datagram(now, from, body);
        self.collect(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.ep.handle_timeout(now);
        self.collect(now);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.ep.poll_transmit().map(|t| {
            if let Some(log) = &mut self.sent_log {
                log.push((now - self.start, describe(&t.contents)));
            }
            let mut contents = t.contents;
            let sum = checksum(&contents);
            contents.extend_from_slice(&sum);
            Transmit { destination: t.destination, contents }
        })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.ep.poll_timeout()
    }
}

/// One line naming a datagram's frame and its sequencing fields.
pub(crate) fn describe(bytes: &[u8]) -> String {
    use dplay_wire::Wire;
    use dplay_wire::dp8::cframe::Cframe;
    use dplay_wire::dp8::dframe::{DframeContext, DframeControl, DframeHeader};
    if bytes.first().is_some_and(|b| b & 1 == 1) {
        return match DframeHeader::parse(bytes, DframeContext::default()) {
            Ok((h, payload)) => {
                let name = if h.is_keepalive() {
                    "KEEPALIVE"
                } else if h.control.contains(DframeControl::END_STREAM) {
                    "END_OF_STREAM"
                } else {
                    "DFRAME"
                };
                format!(
                    "{name} seq={} nrcv={} cmd={:#04x} ctl={:#04x} sack={:#x} send={:#x} payload={}",
                    h.seq,
                    h.n_rcv,
                    h.command.bits(),
                    h.control().bits(),
                    h.masks.sack(),
                    h.masks.send(),
                    payload.len()
                )
            }
            Err(e) => format!("bad DFRAME: {e}"),
        };
    }
    match Cframe::parse(bytes) {
        Ok(Cframe::Connect(f) | Cframe::Connected(f)) => format!(
            "{} msg={} rsp={} poll={} version={:#010x}",
            Cframe::parse(bytes).map_or("?", |c| c.name()),
            f.msg_id,
            f.rsp_id,
            f.poll,
            f.protocol_version
        ),
        Ok(Cframe::Sack(s)) => format!(
            "SACK nseq={} nrcv={} retry={} sack={:#x} send={:#x}",
            s.n_seq,
            s.n_rcv,
            s.retry,
            s.masks.sack(),
            s.masks.send()
        ),
        Ok(other) => other.name().to_string(),
        Err(e) => format!("bad CFRAME: {e}"),
    }
}

/// A link profile of the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    Clean,
    Loss5,
    Loss20,
    Duplicate5,
    Reorder,
    Corrupt1,
    Partition,
    /// 20% loss between two fast-signing endpoints (MC-DPL8R 3.1.5.1.3: lost
    /// CONNECTED_SIGNED confirmations included).
    SignedLoss20,
}

impl Profile {
    pub(crate) const ALL: [Self; 8] = [
        Self::Clean,
        Self::Loss5,
        Self::Loss20,
        Self::Duplicate5,
        Self::Reorder,
        Self::Corrupt1,
        Self::Partition,
        Self::SignedLoss20,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::Loss5 => "loss-5%",
            Self::Loss20 => "loss-20%",
            Self::Duplicate5 => "duplicate-5%",
            Self::Reorder => "reorder-jitter-10ms",
            Self::Corrupt1 => "corrupt-1%",
            Self::Partition => "partition-2s",
            Self::SignedLoss20 => "signed-loss-20%",
        }
    }

    pub(crate) fn link(self) -> LinkConfig {
        let clean = LinkConfig::clean();
        match self {
            Self::Clean | Self::Partition => clean,
            Self::Loss5 => clean.with_loss(0.05),
            Self::Loss20 | Self::SignedLoss20 => clean.with_loss(0.20),
            Self::Duplicate5 => clean.with_duplicate(0.05),
            Self::Reorder => clean.with_jitter(Duration::from_millis(10)).with_reorder(0.2),
            Self::Corrupt1 => clean.with_corrupt(0.01),
        }
    }
}

/// The configuration both sides use in the sweep: the spec's recommended values, with the
/// datagram 4 bytes smaller to leave room for the checksum.
pub(crate) fn sweep_config(seed: u64) -> Config {
    let mut config = Config::default().with_seed(seed);
    config.set_max_datagram(LinkConfig::ETHERNET_MTU - CHECKSUM_LEN);
    config
}

/// `config` with `signing`.
fn signed(mut config: Config, signing: dplay_dframe::Signing) -> Config {
    config.signing = signing;
    config
}

/// Message sizes: from 1 byte to several frames.
const SIZES: [usize; 12] = [1, 2, 3, 7, 16, 100, 600, 1400, 1448, 1449, 3000, 6000];
const KINDS: [MessageKind; 4] =
    [MessageKind::RELIABLE_SEQUENTIAL, MessageKind::RELIABLE, MessageKind::SEQUENTIAL, MessageKind::DATAGRAM];

/// One planned message.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub(crate) index: u32,
    pub(crate) kind: MessageKind,
    pub(crate) data: Vec<u8>,
}

/// Message `index` from side `dir` with `len` bytes: the index in the first byte (so even a
/// 1-byte message names itself), then a pattern, so the receiver can check it is intact.
#[allow(clippy::cast_possible_truncation, reason = "a byte pattern: truncation is the point")]
fn message(dir: u8, index: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            if i == 0 {
                index as u8
            } else {
                (i as u32).wrapping_mul(31).wrapping_add(index + u32::from(dir)) as u8
            }
        })
        .collect()
}

/// A random index below `len`, drawn as a `u64`: rand samples a `usize` range with 32-bit words
/// on 32-bit targets, so a `usize` draw would make another run (and snapshot) there. On 64-bit
/// targets a `u64` draw gives the very values a `usize` one did.
fn draw_index(rng: &mut ChaCha8Rng, len: usize) -> usize {
    usize::try_from(rng.gen_range(0..len as u64)).unwrap_or(0)
}

fn plan(rng: &mut ChaCha8Rng, dir: u8, count: u32) -> Vec<Planned> {
    (0..count)
        .map(|index| {
            let len = SIZES[draw_index(rng, SIZES.len())];
            let kind = KINDS[draw_index(rng, KINDS.len())];
            Planned { index, kind, data: message(dir, index, len) }
        })
        .collect()
}

/// Who closes the connection at the end of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closing {
    A,
    B,
    Both,
}

impl Closing {
    fn for_seed(seed: u64) -> Self {
        match seed % 3 {
            0 => Self::A,
            1 => Self::B,
            _ => Self::Both,
        }
    }
}

/// What one run found.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) messages: u64,
    pub(crate) violations: Vec<String>,
}

pub(crate) const A: &str = "10.0.0.1:2302";
pub(crate) const B: &str = "10.0.0.2:2302";

/// Runs the scenario for `seed` over `profile` with `per_side` messages each way.
/// `per_side` is at most 256: the first byte of a message is its index.
pub(crate) fn run(seed: u64, profile: Profile, per_side: u32, trace: bool) -> (Outcome, Sim) {
    assert!(per_side <= 256);
    let a: SocketAddr = A.parse().unwrap();
    let b: SocketAddr = B.parse().unwrap();
    let mut sim = Sim::new(seed);
    if trace {
        sim.enable_trace();
    }
    sim.set_default_link(profile.link());
    let now = sim.now();
    let signing = if profile == Profile::SignedLoss20 {
        dplay_dframe::Signing::Fast
    } else {
        dplay_dframe::Signing::Off
    };
    let mut peers = [
        Peer::new(signed(sweep_config(seed.wrapping_mul(2)), signing), now),
        Peer::new(signed(sweep_config(seed.wrapping_mul(2) + 1), signing), now),
    ];
    if trace {
        peers.iter_mut().for_each(|p| p.sent_log = Some(Vec::new()));
    }
    let [pa, pb] = peers;
    let na = sim.add_node(a, pa);
    let nb = sim.add_node(b, pb);
    if profile == Profile::Partition {
        sim.schedule_partition(na, nb, now + Duration::from_millis(300), now + Duration::from_millis(2300));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(sim.derive_seed(7));
    let plans = [plan(&mut rng, 0, per_side), plan(&mut rng, 1, per_side)];
    let mut outcome = Outcome { messages: u64::from(per_side) * 2, ..Outcome::default() };

    sim.node_mut::<Peer>(na).with(now, |ep| ep.connect(now, b).unwrap());
    // Messages are sent in bursts every 20 ms, starting while the handshake is still running.
    let mut next = [0usize; 2];
    while next[0] < plans[0].len() || next[1] < plans[1].len() {
        for (side, (node, peer)) in [(na, b), (nb, a)].into_iter().enumerate() {
            let burst = draw_index(&mut rng, 4);
            for _ in 0..burst {
                let Some(p) = plans[side].get(next[side]) else { break };
                let t = sim.now();
                let peer_node = sim.node_mut::<Peer>(node);
                // B learns of the connection from its Connected event, as an application
                // does: an inbound attempt not confirmed yet may still be forgotten
                // (`half_open_timeout`), with whatever was queued on it.
                let connected = peer_node.events.iter().any(|(_, e)| matches!(e, Event::Connected { .. }));
                if side == 1 && !connected {
                    break;
                }
                peer_node.with(t, |ep| ep.send(t, peer, &p.data, p.kind).unwrap());
                next[side] += 1;
            }
        }
        sim.run_for(Duration::from_millis(20));
        if sim.elapsed() > Duration::from_secs(600) {
            outcome.violations.push("B never connected".into());
            return (outcome, sim);
        }
    }
    sim.run_for(Duration::from_secs(2));
    // Idle past the KeepAlive period, then close: from A, from B, or from both at once (a
    // disconnect crossing another), by seed.
    sim.run_for(Duration::from_secs(35));
    let t = sim.now();
    let closing = Closing::for_seed(seed);
    if closing != Closing::B {
        sim.node_mut::<Peer>(na).with(t, |ep| ep.disconnect(t, b));
    }
    if closing != Closing::A {
        sim.node_mut::<Peer>(nb).with(t, |ep| ep.disconnect(t, a));
    }
    let deadline = sim.now() + Duration::from_secs(600);
    let ended = |sim: &Sim, id| {
        sim.node::<Peer>(id).events.iter().any(|(_, e)| matches!(e, Event::Disconnected { .. }))
    };
    sim.run_until_with(deadline, |sim| ended(sim, na) && ended(sim, nb));
    // Let the linger timers run out: both endpoints end empty.
    sim.run_for(Duration::from_secs(30));

    check(&sim, na, nb, &plans, closing, &mut outcome);
    (outcome, sim)
}

fn check(
    sim: &Sim,
    na: dplay_sim::NodeId,
    nb: dplay_sim::NodeId,
    plans: &[Vec<Planned>; 2],
    closing: Closing,
    outcome: &mut Outcome,
) {
    let (by_a, by_b) = match closing {
        Closing::A => (DisconnectReason::Closed, DisconnectReason::ClosedByPeer),
        Closing::B => (DisconnectReason::ClosedByPeer, DisconnectReason::Closed),
        Closing::Both => (DisconnectReason::Closed, DisconnectReason::Closed),
    };
    let v = &mut outcome.violations;
    for (receiver, sender_plan, expect_reason) in [(nb, &plans[0], by_b), (na, &plans[1], by_a)] {
        let peer = sim.node::<Peer>(receiver);
        let name = if receiver == na { "A" } else { "B" };
        let mut seen = vec![0u32; sender_plan.len()];
        let mut last_sequential: Option<u32> = None;
        let mut connected = 0;
        let mut reasons = Vec::new();
        for (_, event) in &peer.events {
            match event {
                Event::Connected { .. } => connected += 1,
                Event::Disconnected { reason, .. } => reasons.push(*reason),
                Event::Message { data, reliable, sequential, .. } => {
                    let index = data.first().map_or(u32::MAX, |&b| u32::from(b));
                    let Some(p) = sender_plan.get(index as usize) else {
                        v.push(format!("{name}: unknown message {data:02x?}"));
                        continue;
                    };
                    if *data != p.data {
                        v.push(format!("{name}: message {index} damaged"));
                    }
                    if (*reliable, *sequential) != (p.kind.reliable, p.kind.sequential) {
                        v.push(format!("{name}: message {index} category changed"));
                    }
                    seen[index as usize] += 1;
                    if p.kind.sequential {
                        if last_sequential.is_some_and(|l| l >= index) {
                            v.push(format!("{name}: sequential message {index} after {last_sequential:?}"));
                        }
                        last_sequential = Some(index);
                    }
                }
                Event::Unowned { .. } => v.push(format!("{name}: unexpected unowned datagram")),
                Event::SendDone { .. } => v.push(format!("{name}: unexpected send completion")),
            }
        }
        for (p, n) in sender_plan.iter().zip(&seen) {
            if p.kind.reliable && *n != 1 {
                v.push(format!("{name}: reliable message {} delivered {n} times", p.index));
            } else if *n > 1 {
                v.push(format!("{name}: unreliable message {} delivered {n} times", p.index));
            }
        }
        if connected != 1 {
            v.push(format!("{name}: connected {connected} times"));
        }
        if reasons != [expect_reason] {
            v.push(format!("{name}: ended with {reasons:?}, expected [{expect_reason:?}]"));
        }
        if peer.ep.connection_count() != 0 {
            v.push(format!("{name}: {} connections left", peer.ep.connection_count()));
        }
    }
}
