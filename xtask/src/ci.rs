//! `cargo xtask ci`: everything CI checks, in the order a failure is cheapest to find.

use std::process::Command;
use std::time::Instant;

use anyhow::bail;

use crate::util::{cargo, have, step};

fn run_all() -> anyhow::Result<()> {
    ensure_test_tools()?;
    step("fmt", cargo().args(["fmt", "--all", "--check"]))?;
    step(
        "clippy",
        cargo().args(["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"]),
    )?;
    // The fuzz crate is outside the workspace; type-check its targets so they never rot.
    // Without default features libFuzzer's C++ is not built, which keeps this step short.
    step(
        "fuzz check",
        cargo().args([
            "check",
            "--manifest-path",
            "fuzz/Cargo.toml",
            "--all-targets",
            "--no-default-features",
            "--locked",
        ]),
    )?;
    // insta runs in check mode under CI=true; force it so a local run never writes snapshots.
    step(
        "test",
        cargo().args(["test", "--workspace", "--locked"]).env("INSTA_UPDATE", "no").env("CI", "true"),
    )?;
    // What a user of the crates gets: packaging, every example, a crate outside the workspace.
    crate::crates::run()?;
    crate::interop::run_if_present()?;
    crate::integration::run()?;
    crate::hostile::run()?;
    // The transport sim sweep: 200 seeds over every link profile.
    crate::sim::run(200)?;
    step(
        "doc",
        cargo().args(["doc", "--workspace", "--no-deps", "--locked"]).env("RUSTDOCFLAGS", "-D warnings"),
    )?;
    // dpnet.dll's own crate is outside the workspace: lint it and run its native tests (they
    // call the vtables as a game does, on loopback) before the Windows build.
    let dpnet = ["--manifest-path", "windows/dpnet/Cargo.toml", "--locked"];
    step("dpnet clippy", cargo().arg("clippy").args(dpnet).args(["--all-targets", "--", "-D", "warnings"]))?;
    step("dpnet test", cargo().arg("test").args(dpnet))?;
    // dpnet.dll: the Windows toolchain chroot (made once, reused), the DLL, the Wine tests
    // expected to pass; then the sans-IO crates' own tests as 32-bit Windows programs under
    // Wine (about 9 minutes with a cold build, 15 s warm: docs/decisions.md).
    crate::dll::test(false, &crate::dll::Selection::Expected)?;
    crate::dll::test(true, &crate::dll::Selection::Expected)?;
    Ok(())
}

/// Entry point with timing, so CI's budget stays visible.
#[allow(clippy::disallowed_methods)] // xtask times its own run; the rule is for protocol crates
pub(crate) fn run() -> anyhow::Result<()> {
    let started = Instant::now();
    let result = run_all();
    println!(
        "==> ci: {} after {:.0} s",
        if result.is_ok() { "ok" } else { "FAILED" },
        started.elapsed().as_secs_f64()
    );
    result
}

/// Tools the workspace's tests use and must never skip for on CI: tshark (the conformance
/// tests) and nftables (the runtime's silent-peer test); installed here, when missing, from
/// Debian's packages. (The integration cases install what they need themselves.)
fn ensure_test_tools() -> anyhow::Result<()> {
    let missing: Vec<&str> = [("tshark", "tshark"), ("nft", "nftables")]
        .into_iter()
        .filter(|(tool, _)| !have(tool))
        .map(|(_, p)| p)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages = missing.join(" ");
    println!("==> installing Debian's {packages} (needed by the workspace's tests)");
    let script = format!(
        "export DEBIAN_FRONTEND=noninteractive; \
        echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections; \
        apt-get update -qq && apt-get install -y -qq --no-install-recommends {packages}"
    );
    let sudo = if have("sudo") && !is_root() { "sudo " } else { "" };
    step("install test tools", Command::new("sh").args(["-c", &format!("{sudo}sh -c \"{script}\"")]))?;
    for tool in ["tshark", "nft"] {
        if !have(tool) {
            bail!("{tool} is still missing after apt-get; install Debian's {packages} and run again");
        }
    }
    Ok(())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"))
}
