//! The session layer's sweep for `cargo xtask sim`: the name-table property
//! ([`dplay_testkit::sim_check::name_table_property`]) over `--seeds N` seeds starting at
//! `--first S`. Its last line is `session-sim: <runs> runs, <failures> failures`; any failure
//! exits with status 1 and prints `DPLAY_SIM_SEED=<seed>` to replay it.
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a command-line report")]

use dplay_testkit::sim_check::run;

fn main() {
    let seeds = dplay_sim::sweep_args(std::env::args().skip(1));
    let summary = run(seeds);
    for (seed, why) in &summary.failures {
        eprintln!("failure: DPLAY_SIM_SEED={seed}: {why}");
    }
    println!("session-sim: {} runs, {} failures", summary.runs, summary.failures.len());
    if !summary.failures.is_empty() {
        std::process::exit(1);
    }
}
