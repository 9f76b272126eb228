//! One MC-DPL4R exchange over dplay-sim, shared by `tests/reliable_sim.rs` and the
//! `reliable_sweep` example (`cargo xtask sim`): two endpoints exchange messages of every size,
//! reliable and not, both ways, over a link that may lose, duplicate, delay and reorder
//! datagrams. Every reliable message must arrive exactly once, intact, and in order on an
//! ordered link; nothing may arrive twice or damaged (MC-DPL4R 3.1.5.2, 3.1.5.3).
#![allow(clippy::indexing_slicing, clippy::cast_possible_truncation)] // indexes bounded by `count`
#![allow(dead_code)] // each binary uses a subset

use std::net::SocketAddr;
use std::time::Duration;

use dplay_dpsp::reliable::{Config, Event, Reliable};
use dplay_sim::{LinkConfig, Node, Sim, Transmit};
use dplay_wire::Wire;
use dplay_wire::dp4::reliable::{FrameBody, ReliableFrame};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// A sim node: an endpoint and what it was handed up.
struct Peer {
    ep: Reliable,
    got: Vec<(bool, Vec<u8>)>,
    failed: bool,
}

impl Peer {
    fn collect(&mut self) {
        while let Some(e) = self.ep.poll_event() {
            match e {
                Event::Delivered { reliable, data, .. } => self.got.push((reliable, data)),
                Event::LinkFailed { .. } => self.failed = true,
            }
        }
    }
}

impl Node for Peer {
    fn handle_datagram(&mut self, now: std::time::Instant, from: SocketAddr, data: &[u8]) {
        self.ep.handle_datagram(now, from, data);
        self.collect();
    }
    fn handle_timeout(&mut self, now: std::time::Instant) {
        self.ep.handle_timeout(now);
        self.collect();
    }
    fn poll_transmit(&mut self, _now: std::time::Instant) -> Option<Transmit> {
        let t = self.ep.poll_transmit()?;
        // Our own frames always encode; an empty datagram would be dropped as malformed.
        Some(Transmit { destination: t.to, contents: t.to_vec().unwrap_or_default() })
    }
    fn poll_timeout(&mut self) -> Option<std::time::Instant> {
        self.ep.poll_timeout()
    }
}

/// Message `n` of a side: its number in the first 4 bytes, then filler, `len` long in all.
fn message(side: u8, n: u32, len: usize) -> Vec<u8> {
    let mut m = n.to_le_bytes().to_vec();
    m.push(side);
    m.extend((0..len.saturating_sub(5)).map(|i| (i as u8) ^ side ^ (n as u8)));
    m
}

fn number(m: &[u8]) -> u32 {
    m.get(..4).and_then(|b| b.try_into().ok()).map_or(u32::MAX, u32::from_le_bytes)
}

/// One line naming a frame: its type and sequencing fields.
fn describe(bytes: &[u8]) -> String {
    match ReliableFrame::parse(bytes).map(|f| f.body) {
        Ok(FrameBody::Data(d)) => format!(
            "DATA msg={} seq={} serial={} flags={:#04x} len={}",
            d.message_id,
            d.sequence,
            d.serial,
            d.flags.bits(),
            d.data.len()
        ),
        Ok(FrameBody::Ack(a)) => format!(
            "ACK msg={} seq={} serial={} bytes={}",
            a.message_id, a.sequence, a.serial, a.bytes_received
        ),
        Ok(FrameBody::Nack(n)) => {
            format!("NACK msg={} seq={} mask={:#x}/{}", n.message_id, n.sequence, n.nack.bits, n.nack.len)
        }
        Err(e) => format!("UNPARSED {e}"),
    }
}

/// What one exchange did.
pub(crate) struct Outcome {
    /// Frames resent, both sides.
    pub(crate) resent: u64,
    /// Messages sent, both sides.
    pub(crate) messages: u64,
    /// One line per datagram, when asked for.
    pub(crate) trace: String,
}

/// One exchange: `count` messages each way, sent in bursts, on `link`; an error naming the
/// first property that failed.
pub(crate) fn exchange(
    seed: u64,
    link: LinkConfig,
    ordered: bool,
    count: u32,
    trace: bool,
) -> Result<Outcome, String> {
    let mut sim = Sim::new(seed);
    sim.set_default_link(link);
    if trace {
        sim.enable_trace_with(describe);
    }
    let a_addr = SocketAddr::from(([10, 0, 0, 1], 2350));
    let b_addr = SocketAddr::from(([10, 0, 0, 2], 2350));
    let mut config = Config::default();
    config.mtu = 200;
    config.ordered = ordered;
    let mut a = Reliable::new(config.clone()).map_err(|e| e.to_string())?;
    let mut b = Reliable::new(config).map_err(|e| e.to_string())?;
    a.open_link(b_addr, 1, 2).map_err(|e| format!("{e:?}"))?;
    b.open_link(a_addr, 2, 1).map_err(|e| format!("{e:?}"))?;
    let na = sim.add_node(a_addr, Peer { ep: a, got: Vec::new(), failed: false });
    let nb = sim.add_node(b_addr, Peer { ep: b, got: Vec::new(), failed: false });
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xD94);
    let mut sent: [Vec<(bool, Vec<u8>)>; 2] = [Vec::new(), Vec::new()];
    for n in 0..count {
        for (side, (node, to)) in [(na, b_addr), (nb, a_addr)].into_iter().enumerate() {
            let len = match rng.next_u32() % 10 {
                0 => 5 + (rng.next_u32() % 3000) as usize,
                1..=3 => 5 + (rng.next_u32() % 600) as usize,
                _ => 5 + (rng.next_u32() % 150) as usize,
            };
            let reliable = rng.next_u32() % 4 != 0;
            let m = message(side as u8, n, len);
            let now = sim.now();
            sim.node_mut::<Peer>(node).ep.send(now, to, &m, reliable).map_err(|e| format!("send: {e:?}"))?;
            sent[side].push((reliable, m));
        }
        if rng.next_u32() % 3 == 0 {
            sim.run_for(Duration::from_millis(u64::from(rng.next_u32() % 200)));
        }
    }
    if !sim.run_until_idle(Duration::from_secs(600)) {
        return Err("never went idle".into());
    }
    for (side, (receiver, from)) in [(nb, 0usize), (na, 1usize)].into_iter().enumerate() {
        let peer = sim.node::<Peer>(receiver);
        if peer.failed {
            return Err(format!("side {side}: the link gave up"));
        }
        let mut seen = vec![false; count as usize];
        for (reliable, m) in &peer.got {
            let n = number(m) as usize;
            match seen.get_mut(n) {
                Some(s) if !*s => *s = true,
                Some(_) => return Err(format!("side {side}: message {n} delivered twice")),
                None => return Err(format!("side {side}: a message numbered {n} was never sent")),
            }
            if sent[from][n] != (*reliable, m.clone()) {
                return Err(format!("side {side}: message {n} damaged"));
            }
        }
        if let Some(n) = sent[from].iter().zip(&seen).position(|((reliable, _), seen)| *reliable && !seen) {
            return Err(format!("side {side}: reliable message {n} lost"));
        }
        let order: Vec<u32> = peer.got.iter().filter(|(r, _)| *r).map(|(_, m)| number(m)).collect();
        if ordered && !order.windows(2).all(|w| w[0] < w[1]) {
            return Err(format!("side {side}: reliable messages out of order: {order:?}"));
        }
    }
    Ok(Outcome {
        resent: [na, nb].iter().map(|&n| sim.node::<Peer>(n).ep.stats().frames_resent).sum(),
        messages: 2 * u64::from(count),
        trace: sim.trace().to_owned(),
    })
}

/// The hostile network of the sweeps: 30 ms ± 20 ms, 20% loss, 10% duplicates, 20% reordered.
pub(crate) fn hostile_network() -> LinkConfig {
    LinkConfig::clean()
        .with_latency(Duration::from_millis(30))
        .with_jitter(Duration::from_millis(20))
        .with_loss(0.2)
        .with_duplicate(0.1)
        .with_reorder(0.2)
}

/// The sweep's profiles: name, link, ordered, messages each way (`cargo xtask sim` runs each
/// for every seed; the tests run them for fewer).
pub(crate) fn profiles() -> [(&'static str, LinkConfig, bool, u32); 3] {
    [
        ("hostile, ordered", hostile_network(), true, 60),
        ("hostile, unordered", hostile_network(), false, 60),
        ("40% loss", LinkConfig::lossy(0.4), true, 30),
    ]
}
