//! Project automation, run as `cargo xtask <command>`.
//!
//! `ci` is the whole of CI: the README's test command and the only thing `.ci/run` calls.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bench;
mod ci;
mod crates;
mod dll;
mod fuzz;
mod hostile;
mod integration;
mod interop;
mod proxy;
mod sim;
mod stun;
mod tidy;
mod util;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "dplay project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Benchmarks against baselines: one table, rows in target/bench/summary.json.
    Bench {
        /// Short measurements (the whole run in under 5 minutes, after the build).
        #[arg(long)]
        quick: bool,
    },
    /// fmt, clippy (warnings denied), every test, docs, tidy, conformance and integration checks.
    Ci,
    /// Package every published crate, run every crate's example, and build and run the session
    /// example from a crate outside the workspace against `dplay host`.
    Crates,
    /// Build the 32-bit `dpnet.dll` (windows/dpnet) in the Windows toolchain chroot, made under
    /// /var/cache/dplay-windows when missing (root); its path is the last line of stdout.
    Dll,
    /// Messages per second and round trip through our dpnet.dll under 32-bit Wine against a
    /// native `dplay host --echo` (windows/tests/bench.c); not part of CI.
    DllBench {
        /// Messages per figure.
        #[arg(long, default_value_t = 2000)]
        count: u32,
        /// Bytes per message (small, as a flight simulator's position updates).
        #[arg(long, default_value_t = 64)]
        size: u32,
    },
    /// Game-shaped C programs under 32-bit Wine with our dpnet.dll against the native `dplay`
    /// (those expected to pass, or `--all`, or by name); `--crates`: the sans-IO crates' tests
    /// as 32-bit Windows programs under Wine.
    DllTest {
        /// Every Wine test, also those not expected to pass yet.
        #[arg(long)]
        all: bool,
        /// The sans-IO crates' own tests under Wine instead.
        #[arg(long, conflicts_with_all = ["all", "names"])]
        crates: bool,
        /// Tests to run by name (exports, enum, join, join-wow64, host, mesh, migrate,
        /// client-server, server-client, groups, big, cancel, dowork).
        names: Vec<String>,
    },
    /// Run one cargo-fuzz target: `cargo xtask fuzz <target> --secs N`.
    Fuzz {
        /// Target name (see `fuzz/fuzz_targets/`); `list` prints them.
        target: String,
        /// How long to run, in seconds.
        #[arg(long, default_value_t = 60)]
        secs: u64,
    },
    /// Floods, spoofed sources and forged messages against `dplay host` (a private network
    /// namespace when run as root).
    Hostile,
    /// Run `dplay` processes on loopback and check their JSON output.
    Integration,
    /// Decode every corpus item and capture of ../shared/interop (or $DPLAY_INTEROP_DIR):
    /// real Microsoft bytes, as its README expects.
    Interop,
    /// A STUN responder for the UPnP integration case, run inside its namespaces.
    #[command(hide = true)]
    StunResponder {
        /// The address to answer on.
        bind: String,
        /// How long to run, in seconds.
        secs: u64,
    },
    /// Run every transport scenario over N seeds and every link profile (release build).
    Sim {
        /// How many seeds per profile.
        #[arg(long, default_value_t = 200)]
        seeds: u64,
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Bench { quick } => bench::run(quick),
        Command::Ci => ci::run(),
        Command::Crates => crates::run(),
        Command::Dll => dll::run(),
        Command::DllBench { count, size } => dll::bench(count, size),
        Command::DllTest { all, crates, names } => {
            let selection = match (all, names.is_empty()) {
                (true, _) => dll::Selection::All,
                (false, true) => dll::Selection::Expected,
                (false, false) => dll::Selection::Named(names),
            };
            dll::test(crates, &selection)
        }
        Command::Fuzz { target, secs } => fuzz::run(&target, secs),
        Command::Sim { seeds } => sim::run(seeds),
        Command::Hostile => hostile::run(),
        Command::Integration => integration::run(),
        Command::Interop => interop::run(),
        Command::StunResponder { bind, secs } => stun::run(&bind, secs),
    }
}
