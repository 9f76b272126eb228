//! `cargo xtask dll-test --crates`: the sans-IO crates' own tests built for
//! `i686-pc-windows-gnu` and run as 32-bit Windows programs under Wine (cargo's target runner),
//! so what the DLL is made of is tested on the platform it runs on.

use super::chroot::{PROJECT, Session, TARGET};
use super::wine::WIN32_PREFIX;

/// The crates whose tests run under Wine (the runtime and above touch sockets and threads and
/// are tested through the DLL instead).
const CRATES: [&str; 5] = ["dplay-wire", "dplay-dframe", "dplay-dpsp", "dplay-session", "dplay-addon"];

/// How long building and running them all may take, in seconds (cold: about 9 minutes).
const LIMIT: u64 = 1500;

pub(crate) fn run(session: &Session<'_>) -> anyhow::Result<()> {
    super::wine::make_prefix(session, super::wine::Prefix::Win32, None)?;
    let target_env = TARGET.to_uppercase().replace('-', "_");
    let packages: Vec<String> = CRATES.iter().map(|c| format!("-p {c}")).collect();
    // insta cannot run `cargo metadata` from Windows: it is told the workspace root. With
    // RUST_BACKTRACE set, a failing test would symbolize through Wine's dbghelp, which crashes
    // on Rust's DWARF; so no debug info is built either (it made the build dir 3.6 GB, and the
    // link slower, for nothing).
    let script = format!(
        "{} export CARGO_TARGET_{target_env}_RUNNER=wine WINEPREFIX={WIN32_PREFIX} WINEDEBUG=-all \
         INSTA_WORKSPACE_ROOT={PROJECT} INSTA_UPDATE=no CI=true RUST_BACKTRACE=0 \
         CARGO_PROFILE_TEST_DEBUG=false; cd {PROJECT} && \
         timeout -k 10 {LIMIT} cargo test --locked --target {TARGET} -Z build-std=std,panic_unwind {}",
        super::cargo_env(session)?,
        packages.join(" ")
    );
    let result = session.run("the sans-IO crates' tests under Wine", &script);
    super::wine::kill_wine(session);
    result
}
