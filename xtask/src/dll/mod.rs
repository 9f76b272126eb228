//! `cargo xtask dll`: the 32-bit `dpnet.dll` (windows/dpnet), built in the Windows toolchain
//! chroot ([`chroot`]); its path is the last line of stdout. `cargo xtask dll-test`: C programs
//! shaped like games run under Wine with that DLL against the native `dplay` ([`wine`]), and the
//! sans-IO crates' own tests as 32-bit Windows programs ([`crate_tests`]).

mod bench;
mod chroot;
mod crate_tests;
mod netns;
mod pe;
mod wine;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, ensure};

pub(crate) use chroot::Chroot;
use chroot::{BUILD, PROJECT, RTSTARTUP, Session, TARGET};
pub(crate) use wine::Selection;

use crate::util::root;

/// The names a game, COM or an installer looks up in `dpnet.dll` (Wine's `dpnet.spec`).
const EXPORTS: [&str; 5] =
    ["DirectPlay8Create", "DllCanUnloadNow", "DllGetClassObject", "DllRegisterServer", "DllUnregisterServer"];

/// `cargo xtask dll-test`: the Wine tests (`selection`), or with `crates` the sans-IO crates'
/// tests under Wine.
#[allow(clippy::disallowed_methods)] // times its own run
pub(crate) fn test(crates: bool, selection: &wine::Selection) -> anyhow::Result<()> {
    let started = Instant::now();
    let chroot = Chroot::ensure()?;
    let session = chroot.session(&root())?;
    let result = if crates { crate_tests::run(&session) } else { wine::run(&session, selection) };
    println!(
        "==> dll-test: {} after {:.0} s",
        if result.is_ok() { "ok" } else { "FAILED" },
        started.elapsed().as_secs_f64()
    );
    result
}

/// `cargo xtask dll-bench`: `n` messages of `size` bytes per figure.
#[allow(clippy::disallowed_methods)] // times its own run
pub(crate) fn bench(n: u32, size: u32) -> anyhow::Result<()> {
    let started = Instant::now();
    let chroot = Chroot::ensure()?;
    let result = bench::run(&chroot.session(&root())?, n, size);
    eprintln!("==> dll-bench: done in {:.0} s", started.elapsed().as_secs_f64());
    result
}

/// `cargo xtask dll`.
#[allow(clippy::disallowed_methods)] // times its own run
pub(crate) fn run() -> anyhow::Result<()> {
    let started = Instant::now();
    let chroot = Chroot::ensure()?;
    let dll = build(&chroot.session(&root())?)?;
    eprintln!("==> dll: done in {:.0} s", started.elapsed().as_secs_f64());
    println!("{}", dll.display());
    Ok(())
}

/// The environment every cargo run for the Windows target gets inside the chroot: std from
/// source on Debian's stable compiler (`RUSTC_BOOTSTRAP`), mingw-w64 as linker, the folder of
/// `rsbegin.o`/`rsend.o`, the project's own target dir and the registry kept in the chroot. A
/// new target dir starts as a copy of the last used one (outputs name only paths inside the
/// chroot, the same for every project), so a new checkout's first build is a warm one; the
/// copy forgets the fingerprints of the project's own crates, which cargo would otherwise
/// take as fresh whenever that checkout's sources are older than the seed's outputs (a
/// worktree made before another checkout's build: the DLL then linked that checkout's crates).
fn cargo_env(session: &Session<'_>) -> anyhow::Result<String> {
    let target_env = TARGET.to_uppercase().replace('-', "_");
    let dir = session.target_dir()?;
    Ok(format!(
        "if [ ! -d {dir} ]; then seed=$(ls -td {BUILD}/targets/*[0-9a-f]/ {BUILD}/target 2>/dev/null | head -n 1); \
         rm -rf {dir}.new && mkdir -p {dir}.new && \
         if [ -n \"$seed\" ]; then cp -a $seed/. {dir}.new/ && find {dir}.new -type d -path '*/.fingerprint/*' \
         \\( -name 'dplay-*' -o -name 'dpnet-*' \\) -prune -exec rm -rf {{}} +; fi && mv {dir}.new {dir}; fi; \
         export RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR={dir} \
         CARGO_TARGET_{target_env}_LINKER=i686-w64-mingw32-gcc \
         CARGO_TARGET_{target_env}_RUSTFLAGS='-L native={RTSTARTUP}' \
         RUSTDOCFLAGS='-L native={RTSTARTUP}' CARGO_TERM_COLOR=never;"
    ))
}

/// Builds the stripped release DLL, checks it is a PE32 i386 DLL with every export, and copies
/// it to `<target dir>/windows/dpnet.dll`, whose absolute path it returns.
fn build(session: &Session<'_>) -> anyhow::Result<PathBuf> {
    let script = format!(
        "{} cd {PROJECT}/windows/dpnet && cargo build --release --locked --target {TARGET} \
         -Z build-std=std,panic_unwind",
        cargo_env(session)?
    );
    session.run("build dpnet.dll", &script)?;
    let built = session.chroot().host_path(&format!("{}/{TARGET}/release/dpnet.dll", session.target_dir()?));
    let image = std::fs::read(&built).with_context(|| format!("no DLL at {}", built.display()))?;
    let exports = pe::pe32_dll_exports(&image).context("dpnet.dll is not what Windows loads")?;
    let missing: Vec<&str> = EXPORTS.into_iter().filter(|e| !exports.iter().any(|x| x == e)).collect();
    ensure!(missing.is_empty(), "dpnet.dll does not export {missing:?} (it exports {exports:?})");
    let out = out_dir()?;
    std::fs::create_dir_all(&out)?;
    let dll = out.join("dpnet.dll");
    std::fs::write(&dll, &image)?;
    eprintln!("==> dpnet.dll: PE32 i386 DLL, {} KB, exports {}", image.len() / 1024, exports.join(" "));
    Ok(dll)
}

/// `<target dir>/windows`, absolute.
fn out_dir() -> anyhow::Result<PathBuf> {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"));
    Ok(std::path::absolute(target)?.join("windows"))
}
