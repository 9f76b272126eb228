//! Small helpers for running commands from the workspace root.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};

/// The workspace root (the parent of `xtask/`).
pub(crate) fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// A `cargo` command run from the workspace root.
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Builds the `dplay` binary (debug) and returns its path.
pub(crate) fn build_dplay() -> anyhow::Result<PathBuf> {
    step("build dplay", cargo().args(["build", "-p", "dplay-cli", "--bin", "dplay"]))?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"));
    Ok(target.join("debug").join("dplay"))
}

/// Runs `cmd`, printing it first, and fails with its exit status.
pub(crate) fn step(step: &str, cmd: &mut Command) -> anyhow::Result<()> {
    println!("==> {step}: {cmd:?}");
    let status = cmd.status().with_context(|| format!("{step}: could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{step} failed ({status})");
    }
    Ok(())
}

/// True when `program` is on PATH.
pub(crate) fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program} >/dev/null 2>&1")])
        .status()
        .is_ok_and(|s| s.success())
}
