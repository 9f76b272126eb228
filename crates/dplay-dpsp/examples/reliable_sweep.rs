//! The MC-DPL4R sweep for `cargo xtask sim`: every profile of `tests/common/reliable_exchange.rs`
//! (hostile ordered, hostile unordered, 40% loss) over `--seeds N` seeds starting at
//! `--first S`. Its last line is `reliable-sim: <runs> runs, <messages> messages, <failures>
//! failures`; any failure exits with status 1 and prints `DPLAY_SIM_SEED=<seed>` to replay it
//! (`cargo test -p dplay-dpsp --test reliable_sim`).
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a command-line report")]
#![allow(missing_docs, unreachable_pub)]

#[path = "../tests/common/reliable_exchange.rs"]
mod exchange;

fn main() {
    let seeds = dplay_sim::sweep_args(std::env::args().skip(1));
    let (mut runs, mut messages, mut failures) = (0u64, 0u64, 0u64);
    for (name, link, ordered, count) in exchange::profiles() {
        let mut failed = 0u64;
        for seed in seeds.clone() {
            runs += 1;
            match exchange::exchange(seed, link.clone(), ordered, count, false) {
                Ok(o) => messages += o.messages,
                Err(why) => {
                    failed += 1;
                    eprintln!("failure: {name}: DPLAY_SIM_SEED={seed}: {why}");
                }
            }
        }
        println!("{name}: {} seeds, {failed} failures", seeds.end - seeds.start);
        failures += failed;
    }
    println!("reliable-sim: {runs} runs, {messages} messages, {failures} failures");
    if failures > 0 {
        std::process::exit(1);
    }
}
