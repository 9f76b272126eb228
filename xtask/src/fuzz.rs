//! `cargo xtask fuzz <target> --secs N`: cargo-fuzz on the pinned stable toolchain.

use std::process::Command;

use anyhow::Context;

use crate::util::{self, cargo, have, root};

/// The targets in `fuzz/fuzz_targets/`, sorted.
fn targets(fuzz_dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let mut names: Vec<_> = std::fs::read_dir(fuzz_dir.join("fuzz_targets"))
        .context("reading fuzz/fuzz_targets")?
        .filter_map(|e| e.ok()?.path().file_stem()?.to_str().map(String::from))
        .collect();
    names.sort();
    Ok(names)
}

pub(crate) fn run(target: &str, secs: u64) -> anyhow::Result<()> {
    let fuzz_dir = root().join("fuzz");
    let names = targets(&fuzz_dir)?;
    if target == "list" {
        println!("{}", names.join("\n"));
        return Ok(());
    }
    if !names.iter().any(|n| n == target) {
        anyhow::bail!("no fuzz target {target:?}; the targets are: {}", names.join(", "));
    }
    if !have("cargo-fuzz") {
        self::run_install()?;
    }
    // cargo-fuzz needs nightly flags (-Z sanitizer); RUSTC_BOOTSTRAP lets the stable compiler take them.
    let max_time = format!("-max_total_time={secs}");
    util::step(
        "fuzz",
        cargo().current_dir(&fuzz_dir).env("RUSTC_BOOTSTRAP", "1").args([
            "fuzz",
            "run",
            target,
            "--",
            &max_time,
            "-print_final_stats=1",
        ]),
    )
}

fn run_install() -> anyhow::Result<()> {
    util::step("install cargo-fuzz", Command::new("cargo").args(["install", "cargo-fuzz", "--locked"]))
}
