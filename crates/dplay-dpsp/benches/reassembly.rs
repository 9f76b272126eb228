//! Reassembling a 1 MiB message from 1404-byte fragments (MTU 1472), next to a plain copy of
//! 1 MiB in the same run, so the overhead of reassembly reads as a ratio.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput};
use dplay_dpsp::{Config, Dpsp, DpspMessage, Reliability};

const SIZE: usize = 1 << 20;

#[allow(clippy::disallowed_methods)] // a benchmark needs one real Instant to offset from
fn now() -> Instant {
    Instant::now()
}

fn bench(c: &mut Criterion) {
    let from = "10.0.0.1:2300".parse().unwrap();
    let to = "10.0.0.2:2300".parse().unwrap();
    let message: Vec<u8> = (0..SIZE).map(|i| u8::try_from(i % 251).unwrap_or(0)).collect();
    let t0 = now();
    let mut sender = Dpsp::new(Config::default()).unwrap();
    sender.send(t0, to, &message, Reliability::Unreliable).unwrap();
    let fragments: Vec<DpspMessage> =
        std::iter::from_fn(|| sender.poll_transmit()).map(|t| t.message).collect();

    let mut group = c.benchmark_group("1 MiB");
    group.throughput(Throughput::Bytes(SIZE as u64));
    group.bench_function("reassemble", |b| {
        b.iter(|| {
            let mut receiver = Dpsp::new(Config::default()).unwrap();
            for f in &fragments {
                receiver.handle_message(t0, from, f);
            }
            black_box(receiver.poll_event())
        });
    });
    group.bench_function("copy", |b| b.iter(|| black_box(black_box(&message).to_vec())));
    group.finish();
}

// What criterion_main! expands to, written out so that no undocumented item is generated.
fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
