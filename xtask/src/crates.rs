//! `cargo xtask crates`: the crates as someone who depends on them gets them.
//!
//! * **package**: `cargo package` of every published crate (metadata, files, dependency
//!   versions), without verification: verifying rebuilds each packaged crate and all its
//!   dependencies from scratch in `target/package`, minutes that the other steps, which build
//!   the same code, make redundant.
//! * **examples**: every crate's runnable example, each within a time limit.
//! * **outside**: a new crate under `target/outside/` depends on dplay-session and dplay-wire by
//!   path, with none of our workspace's lints or dependency table (only its dev profile, so
//!   the dependencies built for the workspace are reused), builds `dplay-session`'s
//!   `host_and_join` example as its `main`, and runs it against a `dplay host` on a free
//!   127.0.0.1 port: it must join, say hello, leave and exit 0, and the host must see all three.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::integration::{Suite, WAIT, event_with, free_addr, host};
use crate::util::{cargo, root, step};

/// The build of the outside crate, the host and the run together must finish within this.
const LIMIT: Duration = Duration::from_secs(120);

/// Each crate's example: package, example name. Each binds 127.0.0.1 port 0 only.
const EXAMPLES: [(&str, &str); 7] = [
    ("dplay-wire", "datagram"),
    ("dplay-dframe", "udp_pair"),
    ("dplay-dpsp", "fragments"),
    ("dplay-session", "host_and_join"),
    ("dplay-addon", "observer"),
    ("dplay-runtime", "embedded_host"),
    ("dplay-web", "dashboard"),
];

/// How long one example may run (each takes well under a second on loopback, the observer a
/// little more than one: it waits for five positions sent four times a second).
const EXAMPLE_LIMIT: Duration = Duration::from_secs(60);

pub(crate) fn run() -> anyhow::Result<()> {
    package()?;
    examples()?;
    outside()
}

/// `cargo package` of every crate that is published (`publish = false` ones are left out).
fn package() -> anyhow::Result<()> {
    let out = cargo().args(["metadata", "--no-deps", "--format-version", "1", "--locked"]).output()?;
    ensure!(out.status.success(), "cargo metadata failed ({})", out.status);
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let mut cmd = cargo();
    cmd.args(["package", "--workspace", "--no-verify", "--locked", "--allow-dirty", "--quiet"]);
    for package in metadata.get("packages").and_then(|p| p.as_array()).into_iter().flatten() {
        // `publish = false` reads as an empty list of registries.
        if package.get("publish").and_then(|p| p.as_array()).is_some_and(Vec::is_empty)
            && let Some(name) = package.get("name").and_then(|n| n.as_str())
        {
            cmd.args(["--exclude", name]);
        }
    }
    step("package", &mut cmd)
}

/// Builds, then runs, every example within [`EXAMPLE_LIMIT`].
fn examples() -> anyhow::Result<()> {
    for (package, example) in EXAMPLES {
        step(
            &format!("example {example}"),
            cargo().args(["build", "--locked", "--quiet", "-p", package, "--example", example]),
        )?;
        println!("==> run example {example} ({package})");
        let mut cmd = cargo();
        cmd.args(["run", "--locked", "--quiet", "-p", package, "--example", example]);
        run_with_limit(&mut cmd, EXAMPLE_LIMIT)?;
    }
    Ok(())
}

fn outside() -> anyhow::Result<()> {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"));
    let dir = target.join("outside");
    write_crate(&dir)?;
    // The workspace's target directory and lock file, so the dependencies built for the
    // workspace are reused rather than built again.
    step(
        "outside: build a crate that depends on dplay-session by path",
        cargo()
            .current_dir(&dir)
            .args(["build", "--quiet", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target),
    )?;
    let suite = Suite::build(LIMIT)?;
    let addr = free_addr()?;
    let host = host(&suite, &addr, &[])?;
    let program = target.join("debug").join("dplay-outside");
    println!("==> outside: {} {addr}", program.display());
    run_with_limit(Command::new(&program).arg(&addr), Duration::from_secs(30))?;
    suite.expect(&host, "alice joining", WAIT, event_with("player_joined", "name", "alice"))?;
    suite.expect(&host, "alice's hello", WAIT, event_with("message", "text", "hello"))?;
    suite.expect(&host, "alice leaving", WAIT, event_with("player_left", "name", "alice"))?;
    println!("    ok: built outside the workspace, joined `dplay host`, said hello and left");
    Ok(())
}

/// Writes the crate: a manifest of its own (an empty `[workspace]` keeps cargo from taking it
/// for a member of ours; the dev profile is ours, so no dependency is built twice), the
/// workspace's lock file (the same versions), and the example as `src/main.rs`.
fn write_crate(dir: &Path) -> anyhow::Result<()> {
    let crates = root().join("crates");
    let manifest = format!(
        r#"[package]
name = "dplay-outside"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
dplay-session = {{ path = "{}" }}
dplay-wire = {{ path = "{}" }}

[workspace]

[profile.dev.package."*"]
opt-level = 1
"#,
        crates.join("dplay-session").display(),
        crates.join("dplay-wire").display(),
    );
    std::fs::create_dir_all(dir.join("src")).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("Cargo.toml"), manifest)?;
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock"))?;
    std::fs::copy(crates.join("dplay-session/examples/host_and_join.rs"), dir.join("src/main.rs"))?;
    Ok(())
}

/// Runs `cmd`, which must exit 0 within `limit`; killed otherwise.
#[allow(clippy::disallowed_methods)] // xtask's own clock: a deadline for a real process
fn run_with_limit(cmd: &mut Command, limit: Duration) -> anyhow::Result<()> {
    let mut child = cmd.stdin(Stdio::null()).spawn().with_context(|| format!("cannot start {cmd:?}"))?;
    let until = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            ensure!(status.success(), "{cmd:?} failed ({status})");
            return Ok(());
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{cmd:?} did not exit within {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::EXAMPLES;
    use crate::util::root;

    /// Every published crate ships a README and both licence texts, and every example the
    /// `examples` step runs exists.
    #[test]
    fn published_crates_are_complete() {
        let mut dirs: Vec<_> =
            std::fs::read_dir(root().join("crates")).unwrap().flatten().map(|e| e.path()).collect();
        dirs.sort();
        for dir in dirs {
            let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            if manifest.contains("publish = false") {
                continue;
            }
            for file in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
                assert!(dir.join(file).is_file(), "{} has no {file}", dir.display());
            }
            for key in ["readme", "keywords", "categories", "description"] {
                assert!(manifest.contains(&format!("\n{key} = ")), "{} has no {key}", dir.display());
            }
        }
        for (package, example) in EXAMPLES {
            let file = root().join("crates").join(package).join("examples").join(format!("{example}.rs"));
            assert!(file.is_file(), "{} is missing", file.display());
        }
    }
}
