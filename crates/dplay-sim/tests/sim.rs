//! The simulator's behaviour, checked with toy nodes.
#![allow(clippy::indexing_slicing, reason = "test code, as clippy.toml allows in unit tests")]

mod toys;

use std::time::Duration;

use dplay_sim::{LinkConfig, NodeId, Sim, run_seeds, seeds_from_env};
use toys::{Alarm, Echo, Pinger, Sender, Sink, addr};

const MS: Duration = Duration::from_millis(1);

/// A pinger at 10.0.0.1:6073 and an echo at 10.0.0.2:2302 on `link`, with the trace on.
fn ping_echo(seed: u64, link: LinkConfig, count: u32) -> (Sim, NodeId, NodeId) {
    let mut sim = Sim::new(seed);
    sim.enable_trace();
    sim.set_default_link(link);
    let start = sim.now();
    let pinger = sim.add_node(addr(1, 6073), Pinger::new(addr(2, 2302), start, 10 * MS, count, 16));
    let echo = sim.add_node(addr(2, 2302), Echo::default());
    (sim, pinger, echo)
}

/// `count` datagrams of `len` bytes from a pinger (10 ms apart) to a sink, run to the end.
#[track_caller]
fn blast(seed: u64, link: LinkConfig, count: u32, len: usize) -> (Sim, NodeId, NodeId) {
    let mut sim = Sim::new(seed);
    sim.set_default_link(link);
    let start = sim.now();
    let pinger = sim.add_node(addr(1, 6073), Pinger::new(addr(2, 2302), start, 10 * MS, count, len));
    let sink = sim.add_node(addr(2, 2302), Sink::default());
    assert!(sim.run_until_idle(Duration::from_secs(3600)));
    (sim, pinger, sink)
}

#[track_caller]
fn assert_near(value: u64, total: u64, p: f64, tolerance: f64) {
    let rate = value as f64 / total as f64;
    assert!((rate - p).abs() <= tolerance, "rate {rate} ({value}/{total}), expected {p} ± {tolerance}");
}

#[test]
fn a_clean_link_delivers_everything_in_order_after_its_latency() {
    let (sim, pinger, sink) = blast(1, LinkConfig::clean().with_latency(25 * MS), 100, 16);
    let received = &sim.node::<Sink>(sink).received;
    assert_eq!(sim.node::<Sink>(sink).seqs(), (0..100).collect::<Vec<_>>());
    let start = received[0].0 - 25 * MS;
    for (i, (at, from, _)) in (0u32..).zip(received) {
        assert_eq!(*at - start, 25 * MS + 10 * MS * i);
        assert_eq!(*from, addr(1, 6073));
    }
    let stats = sim.stats(pinger, sink);
    assert_eq!((stats.sent, stats.delivered, stats.dropped()), (100, 100, 0));
}

#[test]
fn the_same_seed_gives_the_same_trace_and_another_seed_another() {
    let run = |seed| {
        let (mut sim, _, _) = ping_echo(seed, LinkConfig::hostile(), 200);
        sim.run_for(Duration::from_secs(10));
        sim.trace().to_owned()
    };
    let first = run(7);
    assert!(first.lines().count() > 300, "{first}");
    assert_eq!(first, run(7));
    assert_ne!(first, run(8));
}

#[test]
fn loss_drops_about_the_configured_share() {
    let (sim, pinger, sink) = blast(2, LinkConfig::lossy(0.2), 10_000, 8);
    let stats = sim.stats(pinger, sink);
    assert_eq!(stats.sent, 10_000);
    assert_eq!(stats.delivered + stats.dropped_loss, 10_000);
    assert_eq!(sim.node::<Sink>(sink).received.len() as u64, stats.delivered);
    assert_near(stats.dropped_loss, stats.sent, 0.2, 0.02);
}

#[test]
fn duplication_delivers_a_second_copy() {
    let (sim, pinger, sink) = blast(3, LinkConfig::clean().with_duplicate(0.1), 5_000, 8);
    let stats = sim.stats(pinger, sink);
    assert_near(stats.duplicated, stats.sent, 0.1, 0.02);
    assert_eq!(stats.delivered, stats.sent + stats.duplicated);
    let seqs = sim.node::<Sink>(sink).seqs();
    assert_eq!(seqs.len() as u64, stats.delivered);
    let mut unique = seqs.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique, (0..5_000).collect::<Vec<_>>());
}

/// Count of datagrams that arrive after one with a higher sequence number.
fn overtaken(seqs: &[u32]) -> usize {
    let mut highest = None;
    let mut late = 0;
    for &s in seqs {
        if highest.is_some_and(|h| s < h) {
            late += 1;
        }
        highest = highest.max(Some(s));
    }
    late
}

#[test]
fn reordering_lets_later_datagrams_overtake() {
    let link = LinkConfig::clean().with_reorder(0.1);
    let (sim, pinger, sink) = blast(4, link, 2_000, 8);
    let stats = sim.stats(pinger, sink);
    assert_near(stats.reordered, stats.sent, 0.1, 0.03);
    let late = overtaken(&sim.node::<Sink>(sink).seqs());
    assert!(late > 50, "only {late} datagrams arrived late");
    assert_eq!(stats.delivered, 2_000);
}

#[test]
fn jitter_alone_never_reorders() {
    let link = LinkConfig::clean().with_jitter(40 * MS);
    let (sim, _, sink) = blast(5, link, 2_000, 8);
    let sink = sim.node::<Sink>(sink);
    assert_eq!(sink.seqs(), (0..2_000).collect::<Vec<_>>());
    let spacing: Vec<_> = sink.received.windows(2).map(|w| w[1].0 - w[0].0).collect();
    assert!(spacing.iter().any(|&d| d != 10 * MS), "jitter changed nothing");
}

#[test]
fn corruption_changes_bytes_and_only_when_configured() {
    let (sim, pinger, sink) = blast(6, LinkConfig::clean().with_corrupt(1.0), 500, 32);
    assert_eq!(sim.stats(pinger, sink).corrupted, 500);
    for (i, (_, _, data)) in (0u32..).zip(&sim.node::<Sink>(sink).received) {
        let mut sent = vec![0xAB; 32];
        sent[..4].copy_from_slice(&i.to_le_bytes());
        assert_eq!(data.len(), 32);
        let differing = data.iter().zip(&sent).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 1, "datagram {i}: {data:02x?}");
    }
    let (sim, pinger, sink) = blast(6, LinkConfig::clean(), 500, 32);
    assert_eq!(sim.stats(pinger, sink).corrupted, 0);
    assert!(sim.node::<Sink>(sink).received.iter().all(|(_, _, d)| d[4..].iter().all(|&b| b == 0xAB)));
}

#[test]
fn datagrams_over_the_mtu_are_dropped() {
    let mut sim = Sim::new(9);
    sim.enable_trace_with(|data| format!("fill={}", data[0]));
    sim.set_default_link(LinkConfig::clean().with_mtu(100));
    let sender = sim.add_node(addr(1, 6073), Sender::default());
    let sink = sim.add_node(addr(2, 2302), Sink::default());
    sim.node_mut::<Sender>(sender).send(addr(2, 2302), vec![1; 100]);
    sim.node_mut::<Sender>(sender).send(addr(2, 2302), vec![2; 101]);
    sim.run_for(Duration::from_secs(1));
    let received = &sim.node::<Sink>(sink).received;
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].2, vec![1; 100]);
    assert_eq!(sim.stats(sender, sink).dropped_mtu, 1);
    assert_eq!(
        sim.trace(),
        "t=0.000ms 10.0.0.1:6073 -> 10.0.0.2:2302 len=101 dropped(mtu) fill=2\n\
         t=10.000ms 10.0.0.1:6073 -> 10.0.0.2:2302 len=100 delivered fill=1\n"
    );
}

#[test]
fn a_scheduled_partition_drops_both_ways_until_it_heals() {
    let (mut sim, pinger, echo) = ping_echo(10, LinkConfig::clean(), 300);
    let start = sim.now();
    sim.schedule_partition(pinger, echo, start + Duration::from_secs(1), start + Duration::from_secs(2));
    sim.run_for(Duration::from_millis(1500));
    assert!(sim.is_partitioned(pinger, echo));
    sim.run_for(Duration::from_secs(5));
    assert!(!sim.is_partitioned(pinger, echo));

    let echoes: Vec<_> = sim.node::<Pinger>(pinger).received.iter().map(|(at, _)| *at - start).collect();
    // A ping sent at t reaches the echo at t + 10 ms and comes back at t + 20 ms. Both are
    // checked when sent and when they arrive, so the pings of 980 ms to 1990 ms (102 of them)
    // are lost one way or the other.
    assert_eq!(echoes.len(), 300 - 102);
    let cut = Duration::from_secs(1)..Duration::from_secs(2) + 20 * MS;
    assert!(echoes.iter().all(|t| !cut.contains(t)), "{echoes:?}");
    let dropped = sim.stats(pinger, echo).dropped_partition + sim.stats(echo, pinger).dropped_partition;
    assert_eq!(dropped, 102);
    assert!(sim.trace().contains("t=1000.000ms partition 10.0.0.1:6073 <-> 10.0.0.2:2302"));
    assert!(sim.trace().contains("t=2000.000ms heal 10.0.0.1:6073 <-> 10.0.0.2:2302"));
}

#[test]
fn partition_and_heal_by_hand_mid_run() {
    let mut sim = Sim::new(11);
    let a = sim.add_node(addr(1, 1), Sender::default());
    let b = sim.add_node(addr(2, 2), Sink::default());
    let c = sim.add_node(addr(3, 3), Sink::default());
    sim.partition_sets(&[a], &[b, c]);
    sim.node_mut::<Sender>(a).send(addr(2, 2), vec![1]);
    sim.run_for(Duration::from_secs(1));
    sim.heal(a, b);
    sim.node_mut::<Sender>(a).send(addr(2, 2), vec![2]);
    sim.node_mut::<Sender>(a).send(addr(3, 3), vec![3]);
    sim.run_for(Duration::from_secs(1));
    assert_eq!(sim.node::<Sink>(b).received.len(), 1);
    assert!(sim.node::<Sink>(c).received.is_empty());
    sim.heal_all();
    sim.isolate(c);
    assert!(sim.is_partitioned(c, a) && sim.is_partitioned(b, c) && !sim.is_partitioned(a, b));
}

#[test]
fn time_jumps_to_the_earliest_deadline_and_wakes_that_node() {
    let mut sim = Sim::new(12);
    let start = sim.now();
    let late = Alarm { deadlines: [start + 5 * MS * 1000].into(), woken: Vec::new() };
    let early = Alarm { deadlines: [start + 3 * MS * 1000, start + 3 * MS * 1000].into(), woken: Vec::new() };
    let late = sim.add_node(addr(1, 1), late);
    let early = sim.add_node(addr(2, 2), early);
    assert!(sim.step());
    assert_eq!(sim.elapsed(), Duration::from_secs(3));
    assert_eq!(sim.node::<Alarm>(early).woken, vec![start + Duration::from_secs(3)]);
    assert!(sim.node::<Alarm>(late).woken.is_empty());
    // The same deadline again is handled at once, without moving the clock.
    assert!(sim.step());
    assert_eq!(sim.elapsed(), Duration::from_secs(3));
    assert!(sim.step());
    assert_eq!(sim.node::<Alarm>(late).woken, vec![start + Duration::from_secs(5)]);
    assert!(!sim.step());
    assert!(sim.run_until_idle(Duration::from_secs(1)));
    sim.run_for(Duration::from_secs(10));
    assert_eq!(sim.elapsed(), Duration::from_secs(15));
}

#[test]
fn run_until_with_stops_when_the_condition_holds() {
    let (mut sim, pinger, _) = ping_echo(13, LinkConfig::clean(), 1_000);
    let deadline = sim.now() + Duration::from_secs(60);
    assert!(sim.run_until_with(deadline, |sim| sim.node::<Pinger>(pinger).received.len() == 3));
    // Echo 3 comes back at 2 x 10 ms of latency + 2 x 10 ms between pings.
    assert_eq!(sim.elapsed(), 40 * MS);
    let never = sim.now() + Duration::from_secs(1);
    assert!(!sim.run_until_with(never, |sim| sim.node::<Pinger>(pinger).received.len() > 1_000));
    assert_eq!(sim.now(), never);
    assert!(!sim.run_until_idle(Duration::from_secs(1)));
}

#[test]
fn unknown_destinations_and_injected_datagrams() {
    let mut sim = Sim::new(14);
    sim.enable_trace();
    let sender = sim.add_node(addr(1, 1), Sender::default());
    let sink = sim.add_node(addr(2, 2), Sink::default());
    sim.node_mut::<Sender>(sender).send(addr(9, 9), vec![0; 4]);
    let at = sim.now() + 5 * MS;
    sim.inject(at, addr(66, 666), sink, vec![0xFF; 3]);
    sim.run_for(Duration::from_secs(1));
    assert_eq!(sim.unroutable(), 1);
    assert_eq!(sim.node::<Sink>(sink).received, vec![(at, addr(66, 666), vec![0xFF; 3])]);
    assert_eq!(sim.node_at(addr(2, 2)), Some(sink));
    assert_eq!(sim.addr(sender), addr(1, 1));
    assert_eq!(sim.node_ids().collect::<Vec<_>>(), vec![sender, sink]);
    insta::assert_snapshot!("unroutable_and_injected", sim.trace());
}

#[test]
#[should_panic(expected = "is not a")]
fn asking_for_the_wrong_node_type_panics() {
    let mut sim = Sim::new(15);
    let sink = sim.add_node(addr(1, 1), Sink::default());
    sim.node::<Echo>(sink);
}

#[test]
fn one_way_links_and_totals() {
    let mut sim = Sim::new(16);
    let a = sim.add_node(addr(1, 1), Echo::default());
    let b = sim.add_node(addr(2, 2), Sender::default());
    sim.set_link_oneway(a, b, LinkConfig::lossy(1.0));
    assert_eq!(sim.link(a, b).loss, 1.0);
    assert_eq!(sim.link(b, a), &LinkConfig::clean());
    sim.node_mut::<Sender>(b).send(addr(1, 1), vec![5]);
    sim.run_for(Duration::from_secs(1));
    assert_eq!((sim.stats(b, a).delivered, sim.stats(a, b).dropped_loss), (1, 1));
    let total = sim.total_stats();
    assert_eq!((total.sent, total.delivered, total.dropped()), (2, 1, 1));
}

#[test]
fn derived_seeds_are_stable_and_distinct() {
    let sim = Sim::new(17);
    assert_eq!(sim.derive_seed(0), Sim::new(17).derive_seed(0));
    assert_ne!(sim.derive_seed(0), sim.derive_seed(1));
    assert_ne!(sim.derive_seed(0), Sim::new(18).derive_seed(0));
    assert_eq!(sim.seed(), 17);
}

#[test]
fn run_seeds_runs_each_seed_and_reraises_a_failure() {
    let mut seen = Vec::new();
    run_seeds(5, |seed| seen.push(seed));
    assert_eq!(seen, seeds_from_env(5).collect::<Vec<_>>());
    let failed = std::panic::catch_unwind(|| run_seeds(5, |_| panic!("boom")));
    assert!(failed.is_err());
}

#[test]
fn trace_snapshot_of_a_lossy_ping_exchange() {
    let link = LinkConfig { duplicate: 0.1, reorder: 0.1, corrupt: 0.1, ..LinkConfig::wan().with_loss(0.2) };
    let (mut sim, pinger, echo) = ping_echo(2302, link, 12);
    sim.note("start");
    sim.run_for(Duration::from_secs(1));
    let received = sim.node::<Pinger>(pinger).received.len();
    let stats = sim.stats(pinger, echo);
    sim.summary(&format!("echoes received: {received}\nping link: {stats:?}"));
    insta::assert_snapshot!("lossy_ping_exchange", sim.trace());
}
