//! `cargo xtask hostile`: floods, spoofed sources and forged messages against `dplay host`
//! (DirectPlay 8 and 4), each case bounded in count and time, with a real `dplay join` that must
//! succeed during and after.
//!
//! A DirectPlay 4 host that followed header addresses could reach other services on this
//! machine's loopback, and spoofed floods must not leave the box: as root the suite re-runs
//! itself inside a private network namespace (`unshare -n`, loopback only). Without root it runs
//! on the shared loopback, sending only to ports it opened itself, and says so.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::integration::Suite;
use crate::util::{have, step};

mod dp4;
mod dp8;
mod dp8_budget;
mod voice;

/// The whole suite must finish within this.
const SUITE_LIMIT: Duration = Duration::from_secs(240);

/// Set inside the namespace so the re-run does not unshare again.
const IN_NETNS: &str = "DPLAY_HOSTILE_NETNS";

/// Runs every case, inside a private network namespace when it can make one.
#[allow(clippy::disallowed_methods)] // the suite's own clock
pub(crate) fn run() -> anyhow::Result<()> {
    if std::env::var_os(IN_NETNS).is_none() && is_root() && have("unshare") && have("ip") {
        let me = std::env::current_exe().context("cannot find the xtask binary")?;
        println!("==> hostile: running inside a private network namespace (unshare -n)");
        return step(
            "hostile (netns)",
            Command::new("unshare")
                .args(["-n", "--", "sh", "-c", "ip link set lo up && exec \"$0\" hostile"])
                .arg(me)
                .env(IN_NETNS, "1"),
        );
    }
    if std::env::var_os(IN_NETNS).is_none() {
        println!("==> hostile: not root, no private network namespace: loopback only, own ports only");
    }
    let suite = Suite::build(SUITE_LIMIT)?;
    // `DPLAY_HOSTILE_ONLY=text` runs only the cases whose name contains it.
    let only = std::env::var("DPLAY_HOSTILE_ONLY").unwrap_or_default();
    let cases = dp8::CASES
        .iter()
        .chain(dp8_budget::CASES)
        .chain(dp4::CASES)
        .chain(voice::CASES)
        .filter(|(name, _)| name.contains(only.as_str()));
    for (name, case) in cases {
        println!("==> hostile: {name}");
        let started = Instant::now();
        case(&suite).with_context(|| format!("hostile case failed: {name}"))?;
        println!("    ok ({:.1} s)", started.elapsed().as_secs_f64());
    }
    Ok(())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"))
}
