//! `cargo xtask sim --seeds N`: every simulated-network sweep over N seeds, in release mode.
//!
//! * the transport scenarios over every link profile (crates/dplay-dframe/examples/transport_sweep.rs);
//! * the session layer's name-table property (crates/dplay-testkit/examples/name_table_sweep.rs), at
//!   least 500 seeds;
//! * the DirectPlay 4 reliable protocol (MC-DPL4R) exchange over its link profiles
//!   (crates/dplay-dpsp/examples/reliable_sweep.rs);
//! * the relayed sessions behind NATs, DirectPlay 8 and DirectPlay 4 (TCP streams included),
//!   with joins and leaves under loss (crates/dplay-relay/tests/nat_sim.rs, dp4_nat_sim.rs),
//!   as tests with `DPLAY_SIM_SEEDS` set: each seed is a run; a failure is a violation.
//!
//! Its last line is `sim: <runs> runs, <messages> messages, <violations> violations`, counting
//! every sweep (a session or MC-DPL4R run that fails counts as a violation); any violation
//! fails.

use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::util::cargo;

/// Counts parsed from a sweep's last line.
#[derive(Default)]
struct Tally {
    runs: u64,
    messages: u64,
    violations: u64,
}

/// The session sweep's floor: the name-table property (groups, information updates and
/// migrations included) runs at least this many seeds, whatever `--seeds` says (a few
/// milliseconds each in release).
const SESSION_MIN_SEEDS: u64 = 500;

pub(crate) fn run(seeds: u64) -> anyhow::Result<()> {
    let session_seeds = seeds.max(SESSION_MIN_SEEDS).to_string();
    let seeds = seeds.to_string();
    let transport =
        sweep(cargo().args(example("dplay-dframe", "transport_sweep", &seeds)), "sim:", "transport")?;
    let session = sweep(
        cargo().args(example("dplay-testkit", "name_table_sweep", &session_seeds)),
        "session-sim:",
        "session",
    )?;
    let reliable =
        sweep(cargo().args(example("dplay-dpsp", "reliable_sweep", &seeds)), "reliable-sim:", "MC-DPL4R")?;
    let relay = relay_sweep(&seeds)?;
    let runs = transport.runs + session.runs + reliable.runs + relay.runs;
    let violations = transport.violations + session.violations + reliable.violations + relay.violations;
    let messages = transport.messages + reliable.messages;
    println!("sim: {runs} runs, {messages} messages, {violations} violations");
    if violations > 0 {
        bail!("{violations} violations: replay one with the DPLAY_SIM_SEED printed above");
    }
    Ok(())
}

/// How many seeds a sweep test runs (dplay-sim `SEEDS_VAR`; xtask does not depend on it).
const SEEDS_VAR: &str = "DPLAY_SIM_SEEDS";

/// The relay tests whose seeds [`SEEDS_VAR`] sets.
const RELAY_SWEEPS: [&str; 2] = ["nat_sim", "dp4_nat_sim"];

/// Runs the relay sweeps over `seeds` seeds each (their failing seed goes to stderr).
fn relay_sweep(seeds: &str) -> anyhow::Result<Tally> {
    let mut cmd = cargo();
    cmd.args(["test", "--release", "--quiet", "--locked", "-p", "dplay-relay"]);
    for test in RELAY_SWEEPS {
        cmd.args(["--test", test]);
    }
    cmd.env(SEEDS_VAR, seeds);
    println!("==> {cmd:?}");
    let status = cmd.stdout(Stdio::null()).status().with_context(|| format!("starting {cmd:?}"))?;
    let runs = seeds.parse::<u64>().unwrap_or(0) * RELAY_SWEEPS.len() as u64;
    let violations = u64::from(!status.success());
    println!("  relay sweep: {runs} runs, {violations} failures");
    Ok(Tally { runs, messages: 0, violations })
}

/// `cargo run` of one sweep example (each has its own name: examples of different packages
/// share one output directory).
fn example<'a>(package: &'a str, name: &'a str, seeds: &'a str) -> [&'a str; 11] {
    ["run", "--release", "--quiet", "--locked", "-p", package, "--example", name, "--", "--seeds", seeds]
}

/// Runs one sweep, echoing its report (its summary line labelled `label`), and reads the counts
/// from its line starting `prefix`.
fn sweep(cmd: &mut Command, prefix: &str, label: &str) -> anyhow::Result<Tally> {
    println!("==> {cmd:?}");
    let out = cmd.stderr(Stdio::inherit()).output().with_context(|| format!("starting {cmd:?}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut tally = None;
    for line in stdout.lines() {
        match line.strip_prefix(prefix) {
            Some(counts) => {
                println!("  {label} sweep:{counts}");
                tally = Some(parse_counts(counts));
            }
            None => println!("  {line}"),
        }
    }
    let tally = tally.with_context(|| format!("{cmd:?} printed no `{prefix}` line"))?;
    if !out.status.success() && tally.violations == 0 {
        bail!("{cmd:?} failed ({})", out.status);
    }
    Ok(tally)
}

/// Reads `<n> runs, <n> messages, <n> violations` (or `<n> failures`), in any order.
fn parse_counts(counts: &str) -> Tally {
    let mut tally = Tally::default();
    for part in counts.split(',') {
        let mut words = part.split_whitespace();
        let (Some(n), Some(what)) = (words.next().and_then(|n| n.parse().ok()), words.next()) else {
            continue;
        };
        match what {
            "runs" => tally.runs = n,
            "messages" => tally.messages = n,
            "violations" | "failures" => tally.violations = n,
            _ => {}
        }
    }
    tally
}
