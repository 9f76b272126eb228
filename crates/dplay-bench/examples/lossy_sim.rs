//! The lossy goodput run on a virtual clock: two endpoints in memory, 10 ms each way, 5% loss
//! each way, 1 KiB reliable sequential messages for 5 s. Shows what the transport alone
//! reaches over the bench's impaired link, without sockets, threads or a loaded machine.
#![allow(missing_docs, clippy::print_stdout, clippy::disallowed_methods)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use dplay_bench::pair::{A, B};
use dplay_dframe::{Config, Endpoint, Event, MessageKind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A datagram on the wire: arrival time, send order (a tie-break), towards B, contents.
type InTransit = (Instant, u64, bool, Vec<u8>);

/// Usage: `cargo run --release -p dplay-bench --example lossy_sim [loss]` (default 0.05).
fn main() {
    let loss: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0.05);
    let delay = Duration::from_millis(10);
    let run = Duration::from_secs(5);
    let start = Instant::now();
    let mut now = start;
    let mut a = Endpoint::new(Config::default().with_seed(0), now);
    let mut b = Endpoint::new(Config::default().with_seed(1), now);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut wire: BinaryHeap<Reverse<InTransit>> = BinaryHeap::new();
    let mut order = 0u64;
    let _ = a.connect(now, B);
    let (mut up, mut sent, mut delivered, mut bytes) = (false, 0u64, 0u64, 0u64);
    let message = vec![7u8; 1024];
    while now < start + run {
        if up {
            while sent - delivered < 4096
                && a.send(now, B, &message, MessageKind::RELIABLE_SEQUENTIAL).is_ok()
            {
                sent += 1;
            }
        }
        for (ep, to_b) in [(&mut a, true), (&mut b, false)] {
            while let Some(t) = ep.poll_transmit() {
                order += 1;
                if rng.gen_bool(1.0 - loss) {
                    wire.push(Reverse((now + delay, order, to_b, t.contents)));
                }
            }
        }
        while let Some(e) = a.poll_event() {
            up |= matches!(e, Event::Connected { .. });
        }
        while let Some(e) = b.poll_event() {
            if let Event::Message { data, .. } = e {
                delivered += 1;
                bytes += data.len() as u64;
            }
        }
        let next_wire = wire.peek().map(|Reverse((at, ..))| *at);
        let next = [next_wire, a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min();
        let Some(next) = next else { break };
        now = now.max(next);
        while let Some(Reverse((at, ..))) = wire.peek()
            && *at <= now
        {
            let Some(Reverse((_, _, to_b, d))) = wire.pop() else { break };
            if to_b { b.handle_datagram(now, A, &d) } else { a.handle_datagram(now, B, &d) }
        }
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
    let s = a.stats(B);
    println!(
        "loss {loss}: {:.2} MB/s, {delivered} messages, stats {s:?}",
        bytes as f64 / run.as_secs_f64() / 1e6
    );
}
