//! `cargo xtask sim --seeds N`: the transport scenarios over N seeds and every link profile,
//! in release mode (crates/dplay-dframe/examples/sim_sweep.rs). Its last line is
//! `sim: <runs> runs, <messages> messages, <violations> violations`; any violation fails.

use crate::util::{cargo, step};

pub(crate) fn run(seeds: u64) -> anyhow::Result<()> {
    let seeds = seeds.to_string();
    step(
        "sim",
        cargo().args([
            "run",
            "--release",
            "--quiet",
            "--locked",
            "-p",
            "dplay-dframe",
            "--example",
            "sim_sweep",
            "--",
            "--seeds",
            &seeds,
        ]),
    )
}
