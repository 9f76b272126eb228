//! The transport sim sweep: every scenario over N seeds and every link profile.
//! `cargo xtask sim --seeds N` runs it in release mode. The last line is exactly
//! `sim: <runs> runs, <messages> messages, <violations> violations`; the exit status is
//! non-zero on any violation.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::indexing_slicing)]

#[path = "../tests/support/scenario.rs"]
mod scenario;

use scenario::Profile;

fn main() {
    let seeds = dplay_sim::sweep_args(std::env::args().skip(1));
    let (mut runs, mut messages, mut violations) = (0u64, 0u64, 0u64);
    for profile in Profile::ALL {
        let mut profile_violations = 0;
        for seed in seeds.clone() {
            let (outcome, _) = scenario::run(seed, profile, 40, false);
            runs += 1;
            messages += outcome.messages;
            for v in &outcome.violations {
                eprintln!("violation: DPLAY_SIM_SEED={seed} profile={}: {v}", profile.name());
            }
            profile_violations += outcome.violations.len() as u64;
        }
        println!("{}: {} seeds, {profile_violations} violations", profile.name(), seeds.end - seeds.start);
        violations += profile_violations;
    }
    println!("sim: {runs} runs, {messages} messages, {violations} violations");
    if violations > 0 {
        std::process::exit(1);
    }
}
