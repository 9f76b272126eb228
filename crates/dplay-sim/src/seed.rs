//! Seeds from the environment, and sweeps that say which seed failed.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// The environment variable that fixes the seed of a run: `DPLAY_SIM_SEED=42` (decimal, or hex
/// with `0x`).
pub const SEED_VAR: &str = "DPLAY_SIM_SEED";
/// The environment variable that sets how many seeds a sweep runs: `DPLAY_SIM_SEEDS=10000`.
pub const SEEDS_VAR: &str = "DPLAY_SIM_SEEDS";

fn parse_u64(var: &str, text: &str) -> u64 {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.unwrap_or_else(|_| panic!("{var}={text:?} is not a u64"))
}

fn env_u64(var: &str) -> Option<u64> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty()).map(|v| parse_u64(var, &v))
}

/// `DPLAY_SIM_SEED` if it is set, else `default`.
///
/// # Panics
///
/// If the variable is set but is not a number: a mistyped seed must not silently run another one.
pub fn seed_from_env(default: u64) -> u64 {
    env_u64(SEED_VAR).unwrap_or(default)
}

/// The seeds a sweep runs: only `DPLAY_SIM_SEED` if it is set (to replay one failure), else
/// `0..DPLAY_SIM_SEEDS`, else `0..default_count`.
///
/// # Panics
///
/// If either variable is set but is not a number.
pub fn seeds_from_env(default_count: u64) -> impl Iterator<Item = u64> {
    let (start, count) = match env_u64(SEED_VAR) {
        Some(seed) => (seed, 1),
        None => (0, env_u64(SEEDS_VAR).unwrap_or(default_count)),
    };
    (0..count).map(move |i| start.wrapping_add(i))
}

/// Runs `test` once per seed of [`seeds_from_env`]`(default_count)`. When a run panics, prints
/// `DPLAY_SIM_SEED=<seed>` (the command that replays it) and re-raises the panic.
pub fn run_seeds(default_count: u64, mut test: impl FnMut(u64)) {
    for seed in seeds_from_env(default_count) {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| test(seed))) {
            #[allow(clippy::print_stderr, reason = "the failing seed is the whole point of the sweep")]
            {
                eprintln!("dplay-sim: seed {seed} failed; replay with {SEED_VAR}={seed}");
            }
            resume_unwind(panic);
        }
    }
}

/// The seeds a sweep example (`transport_sweep`, `name_table_sweep`, `reliable_sweep`) runs, from its arguments `[--seeds N] [--first SEED]`
/// (default 200 seeds from 0), as `cargo xtask sim` passes them. Any other argument prints
/// the usage and exits with status 2.
pub fn sweep_args(args: impl IntoIterator<Item = String>) -> std::ops::Range<u64> {
    let (mut seeds, mut first) = (200u64, 0u64);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|v| v.parse().ok());
        match (arg.as_str(), value) {
            ("--seeds", Some(v)) => seeds = v,
            ("--first", Some(v)) => first = v,
            _ => {
                #[allow(clippy::print_stderr, reason = "a command-line usage error")]
                {
                    eprintln!("usage: [--seeds N] [--first SEED]");
                }
                std::process::exit(2);
            }
        }
    }
    first..first.saturating_add(seeds)
}
