//! MC-DPL4R over dplay-sim: two endpoints exchange messages of every size, reliable and not,
//! both ways, over links that lose, duplicate, delay and reorder datagrams. Every reliable
//! message arrives exactly once, intact, and in order on an ordered link; nothing arrives
//! twice or damaged. Seeds: `DPLAY_SIM_SEEDS` (default 40), replay with `DPLAY_SIM_SEED`.
#![allow(clippy::indexing_slicing, clippy::cast_possible_truncation)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

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
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.ep.handle_datagram(now, from, data);
        self.collect();
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.ep.handle_timeout(now);
        self.collect();
    }
    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        let t = self.ep.poll_transmit()?;
        Some(Transmit { destination: t.to, contents: t.to_vec().expect("our frames encode") })
    }
    fn poll_timeout(&mut self) -> Option<Instant> {
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
    u32::from_le_bytes(m[..4].try_into().unwrap())
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

/// One run: `count` messages each way, sent in bursts; returns the frames resent and the
/// trace (empty unless `trace`).
fn run_traced(seed: u64, link: LinkConfig, ordered: bool, count: u32, trace: bool) -> (u64, String) {
    let mut sim = Sim::new(seed);
    sim.set_default_link(link);
    if trace {
        sim.enable_trace_with(describe);
    }
    let (a_addr, b_addr): (SocketAddr, SocketAddr) =
        ("10.0.0.1:2350".parse().unwrap(), "10.0.0.2:2350".parse().unwrap());
    let config = Config { mtu: 200, ordered, ..Config::default() };
    let mut a = Reliable::new(config.clone()).unwrap();
    let mut b = Reliable::new(config).unwrap();
    a.open_link(b_addr, 1, 2).unwrap();
    b.open_link(a_addr, 2, 1).unwrap();
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
            sim.node_mut::<Peer>(node).ep.send(now, to, &m, reliable).expect("queue has room");
            sent[side].push((reliable, m));
        }
        if rng.next_u32() % 3 == 0 {
            sim.run_for(Duration::from_millis(u64::from(rng.next_u32() % 200)));
        }
    }
    assert!(sim.run_until_idle(Duration::from_secs(600)), "seed {seed}: never went idle");
    for (side, (receiver, from)) in [(nb, 0usize), (na, 1usize)].into_iter().enumerate() {
        let peer = sim.node::<Peer>(receiver);
        assert!(!peer.failed, "seed {seed}: link gave up");
        let got = &peer.got;
        let mut seen = vec![false; count as usize];
        for (reliable, m) in got {
            let n = number(m);
            assert!(!seen[n as usize], "seed {seed} side {side}: message {n} delivered twice");
            seen[n as usize] = true;
            assert_eq!(&sent[from][n as usize], &(*reliable, m.clone()), "seed {seed}: message {n} damaged");
        }
        for (n, (reliable, _)) in sent[from].iter().enumerate() {
            assert!(!reliable || seen[n], "seed {seed} side {side}: reliable message {n} lost");
        }
        if ordered {
            let order: Vec<u32> = got.iter().filter(|(r, _)| *r).map(|(_, m)| number(m)).collect();
            assert!(order.windows(2).all(|w| w[0] < w[1]), "seed {seed}: reliable out of order: {order:?}");
        }
    }
    let resent = [na, nb].iter().map(|&n| sim.node::<Peer>(n).ep.stats().frames_resent).sum();
    (resent, sim.trace().to_owned())
}

fn run(seed: u64, link: LinkConfig, ordered: bool, count: u32) -> u64 {
    run_traced(seed, link, ordered, count, false).0
}

/// A fixed-seed exchange over a 20%-loss link, one line per datagram: the reviewable record of
/// data frames, SAKs, ACKs, NACKs and resends (MC-DPL4R 2.2, 3.1.5).
#[test]
fn trace_of_an_exchange_over_20_percent_loss() {
    let link = LinkConfig::clean().with_latency(Duration::from_millis(20)).with_loss(0.2);
    let (_, trace) = run_traced(7, link, true, 4, true);
    insta::assert_snapshot!("dp4r_exchange_loss_20", trace);
}

fn hostile_network() -> LinkConfig {
    LinkConfig::clean()
        .with_latency(Duration::from_millis(30))
        .with_jitter(Duration::from_millis(20))
        .with_loss(0.2)
        .with_duplicate(0.1)
        .with_reorder(0.2)
}

/// MC-DPL4R 3.1.5.2, 3.1.5.3 under 20% loss, 10% duplication and 20% reordering, ordered.
#[test]
fn sweep_ordered_exactly_once_in_order() {
    dplay_sim::run_seeds(40, |seed| {
        run(seed, hostile_network(), true, 60);
    });
}

/// The same on an unordered link (DPSESSION_NOPRESERVEORDER): exactly once, any order.
#[test]
fn sweep_unordered_exactly_once() {
    dplay_sim::run_seeds(20, |seed| {
        run(seed, hostile_network(), false, 60);
    });
}

/// A clean link: everything arrives, and no frame is ever resent.
#[test]
fn clean_link_needs_no_resends() {
    assert_eq!(run(1, LinkConfig::clean().with_latency(Duration::from_millis(10)), true, 100), 0);
}

/// Heavy loss (40%) still converges.
#[test]
fn heavy_loss_converges() {
    dplay_sim::run_seeds(5, |seed| {
        run(seed, LinkConfig::lossy(0.4), true, 30);
    });
}
