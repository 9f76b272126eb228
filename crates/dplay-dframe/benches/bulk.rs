//! Bulk transfer over dplay-sim: reliable sequential messages one way over a clean link, as
//! messages and bytes per second of CPU time (the sim's clock is virtual, so the wall time
//! criterion measures is the transport's and the sim's CPU time).
#![allow(missing_docs, clippy::indexing_slicing)]

#[path = "../tests/support/scenario.rs"]
mod scenario;

use std::net::SocketAddr;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dplay_dframe::{Event, MessageKind};
use dplay_sim::{LinkConfig, Sim};
use scenario::{Peer, sweep_config};

const MESSAGES: usize = 2000;

fn transfer(size: usize) {
    let a: SocketAddr = scenario::A.parse().unwrap();
    let b: SocketAddr = scenario::B.parse().unwrap();
    let mut sim = Sim::new(1);
    sim.set_default_link(LinkConfig::clean().with_latency(Duration::from_millis(5)));
    let now = sim.now();
    // The whole transfer is queued up front, so the send queue must hold it.
    let mut config = sweep_config(1);
    config.max_send_queue = 64 << 20;
    let na = sim.add_node(a, Peer::new(config, now));
    let nb = sim.add_node(b, Peer::new(sweep_config(2), now));
    sim.node_mut::<Peer>(na).with(now, |ep| ep.connect(now, b).unwrap());
    let data = vec![0x5a; size];
    for _ in 0..MESSAGES {
        let t = sim.now();
        sim.node_mut::<Peer>(na)
            .with(t, |ep| ep.send(t, b, &data, MessageKind::RELIABLE_SEQUENTIAL).unwrap());
    }
    let delivered = |sim: &Sim| {
        sim.node::<Peer>(nb).events.iter().filter(|(_, e)| matches!(e, Event::Message { .. })).count()
            == MESSAGES
    };
    let deadline = sim.now() + Duration::from_secs(3600);
    assert!(sim.run_until_with(deadline, delivered));
}

fn bulk(c: &mut Criterion) {
    let mut group = c.benchmark_group("bulk_transfer");
    group.sample_size(10);
    for size in [64usize, 1000, 8000] {
        group.throughput(Throughput::Elements(MESSAGES as u64));
        group.bench_function(format!("{MESSAGES}x{size}B messages"), |bench| bench.iter(|| transfer(size)));
        group.throughput(Throughput::Bytes((MESSAGES * size) as u64));
        group.bench_function(format!("{MESSAGES}x{size}B bytes"), |bench| bench.iter(|| transfer(size)));
    }
    group.finish();
}

criterion_group!(benches, bulk);
criterion_main!(benches);
