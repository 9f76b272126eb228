//! Criterion micro-benchmark of the dashboard's work on the protocol thread (issue 17,
//! docs/PERFORMANCE.md "The dashboard under 1,000 clients"): one publish of a DirectPlay 8
//! host's snapshot with 1,000 clients joined, in memory ([`dplay_bench::roster`]), against
//! the same call with nothing to publish; and, on the server's side, one `/api/players`
//! answer serialised from the published snapshot.
//!
//! `cargo bench -p dplay-bench --bench snapshot`
#![allow(missing_docs, clippy::print_stdout, clippy::disallowed_methods)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use dplay_bench::report;
use dplay_bench::roster;
use dplay_runtime::{Dp8Protocol, Protocol};
use dplay_web::{AdminCommand, Observed};

const N: usize = 1000;

fn main() {
    let quick = report::quick();
    let mut c = Criterion::default()
        .output_directory(&report::out_dir().join("criterion"))
        .sample_size(if quick { 10 } else { 50 })
        .warm_up_time(Duration::from_millis(if quick { 300 } else { 1000 }))
        .measurement_time(Duration::from_millis(if quick { 1000 } else { 3000 }))
        .configure_from_args();
    let epoch = Instant::now();
    let (loop_side, server_side) = dplay_web::link();
    let (mut host, now) = roster::joined(N, epoch, |_, config| {
        Observed::new(Dp8Protocol::new(config, epoch), loop_side, epoch)
    })
    .expect("the clients join in memory");
    host.handle_timeout(now);
    let players = server_side.snapshot().players.len();
    assert_eq!(players, N + 1, "every client is in the published snapshot");

    // A queued admin command (a no-op limit) makes the next call publish at once.
    c.bench_function("dashboard publish, 1,000 players (protocol thread)", |b| {
        b.iter(|| {
            server_side.admin(AdminCommand::MaxPlayers(0));
            host.handle_timeout(black_box(now));
        })
    });
    c.bench_function("no publish due (protocol thread)", |b| b.iter(|| host.handle_timeout(black_box(now))));
    c.bench_function("/api/players serialised, 1,000 players (server thread)", |b| {
        b.iter(|| black_box(serde_json::to_vec(&server_side.snapshot().players).map(|v| v.len())))
    });
    c.final_summary();
}
