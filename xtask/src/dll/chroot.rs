//! The Windows toolchain: a Debian 13 (trixie) chroot with Debian's `rustc-web`/`cargo-web` 1.96
//! and `rust-web-src` (std built from source for `i686-pc-windows-gnu`), mingw-w64 as linker and
//! C compiler, and 32-bit Wine for the tests (the facts behind each choice are in
//! docs/ARCHITECTURE.md, "The Windows DLLs").
//!
//! It lives at one fixed place outside the project, [`home`], and is reused when its stamp file
//! says it is complete. `proc`, `/dev` and the project are mounted only while a command runs
//! inside and always unmounted again, on failure too ([`Session`]'s `Drop`); mounts a killed run
//! left behind are removed before the next one mounts anew.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail, ensure};

use crate::util::{have, step};

/// What the stamp records: a toolchain made by another version of this script is made anew.
const STAMP: &str = "dplay-windows toolchain 1: trixie, rust-web 1.96, mingw-w64 i686, wine32 + wine64\n";

/// The Debian packages the chroot needs (`wine32:i386` after `dpkg --add-architecture i386`).
const PACKAGES: &[&str] = &[
    "ca-certificates",
    "rustc-web",
    "cargo-web",
    "rust-web-src",
    "gcc-mingw-w64-i686",
    "mingw-w64-i686-dev",
    "wine",
    "wine32:i386",
    "wine64",
];

/// Where `rust-web-src` puts std's sources in the chroot.
const RUST_SRC: &str = "/usr/src/rustc-1.96.0/library";

/// The Rust target of the DLL.
pub(crate) const TARGET: &str = "i686-pc-windows-gnu";

/// Inside the chroot: the project's mount point, the build's folder (target dir, objects).
pub(crate) const PROJECT: &str = "/project";
/// Inside the chroot: everything the build and tests write that is kept between runs.
pub(crate) const BUILD: &str = "/build";
/// Inside the chroot: one cargo target dir per project path ([`Session::target_dir`]).
const TARGETS: &str = "/build/targets";
/// Inside the chroot: `rsbegin.o` and `rsend.o` (the windows-gnu targets link every image with them).
pub(crate) const RTSTARTUP: &str = "/build/rtstartup";

/// The cache holding the chroot and Wine's prefixes: `$DPLAY_WINDOWS_CACHE` or
/// `/var/cache/dplay-windows`.
pub(crate) fn home() -> PathBuf {
    std::env::var_os("DPLAY_WINDOWS_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/dplay-windows"))
}

/// The toolchain chroot, ready to use.
pub(crate) struct Chroot {
    dir: PathBuf,
    /// Held while this process uses the chroot: two runs never mount over each other.
    _lock: File,
}

impl Chroot {
    /// The chroot, made (debootstrap, packages, `rsbegin.o`/`rsend.o`) when it is missing or
    /// incomplete, reused otherwise. Needs root.
    #[allow(clippy::disallowed_methods)] // times its own steps
    pub(crate) fn ensure() -> anyhow::Result<Self> {
        ensure!(is_root(), "cargo xtask dll needs root (debootstrap, chroot, mount): run it as root");
        let home = home();
        std::fs::create_dir_all(&home).with_context(|| format!("cannot create {}", home.display()))?;
        let lock = File::create(home.join("lock"))?;
        lock.lock().context("cannot lock the toolchain cache")?;
        let dir = home.join("chroot");
        unmount_below(&dir)?;
        let chroot = Chroot { dir, _lock: lock };
        let stamp = chroot.dir.join("dplay-ready");
        if std::fs::read_to_string(&stamp).is_ok_and(|s| s == STAMP) {
            println!("==> windows toolchain: reusing {}", chroot.dir.display());
            return Ok(chroot);
        }
        let started = Instant::now();
        if chroot.dir.exists() {
            println!("==> windows toolchain: {} is incomplete, making it anew", chroot.dir.display());
            std::fs::remove_dir_all(&chroot.dir)?;
        }
        chroot.bootstrap()?;
        chroot.install()?;
        chroot.rtstartup()?;
        std::fs::write(&stamp, STAMP)?;
        println!("==> windows toolchain: ready in {:.0} s", started.elapsed().as_secs_f64());
        Ok(chroot)
    }

    /// A path inside the chroot (`/build/...`) as the host sees it.
    pub(crate) fn host_path(&self, inside: &str) -> PathBuf {
        self.dir.join(inside.trim_start_matches('/'))
    }

    /// Mounts `proc`, `/dev` and `project` (at [`PROJECT`]) until the session is dropped.
    pub(crate) fn session(&self, project: &Path) -> anyhow::Result<Session<'_>> {
        let mut session = self.session_without_project()?;
        let project = project.to_str().context("the project's path is not UTF-8")?;
        session.mount(&["--bind", project], PROJECT.trim_start_matches('/'))?;
        session.target_dir = Some(target_dir(project));
        Ok(session)
    }

    fn bootstrap(&self) -> anyhow::Result<()> {
        if !have("debootstrap") {
            step(
                "install debootstrap",
                Command::new("sh")
                    .args([
                        "-c",
                        "export DEBIAN_FRONTEND=noninteractive; \
                     apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap",
                    ])
                    .stdout(std::io::stderr()),
            )?;
        }
        let dir = self.dir.to_str().context("the cache's path is not UTF-8")?;
        step(
            "debootstrap trixie",
            Command::new("debootstrap")
                .args(["--variant=minbase", "trixie", dir, "http://deb.debian.org/debian"])
                .stdout(std::io::stderr()),
        )
    }

    fn install(&self) -> anyhow::Result<()> {
        // cargo inside needs the host's CA bundle before ca-certificates is installed, and DNS.
        let certs = self.host_path("etc/ssl/certs");
        std::fs::create_dir_all(&certs)?;
        std::fs::copy("/etc/ssl/certs/ca-certificates.crt", certs.join("ca-certificates.crt"))
            .context("cannot copy the host's CA bundle (/etc/ssl/certs/ca-certificates.crt)")?;
        std::fs::copy("/etc/resolv.conf", self.host_path("etc/resolv.conf"))?;
        let session = self.session_without_project()?;
        let script = format!(
            "export DEBIAN_FRONTEND=noninteractive; dpkg --add-architecture i386 && apt-get update -qq && \
             apt-get install -y -qq --no-install-recommends {} >/dev/null && apt-get clean",
            PACKAGES.join(" ")
        );
        session.run("install the toolchain's packages", &script)?;
        // apt replaced the bundle with Debian's; keep the host's, which may hold a local CA.
        std::fs::copy("/etc/ssl/certs/ca-certificates.crt", certs.join("ca-certificates.crt"))?;
        Ok(())
    }

    /// `rsbegin.o` and `rsend.o` from the same sources as std (`#![no_core]` objects).
    fn rtstartup(&self) -> anyhow::Result<()> {
        let session = self.session_without_project()?;
        let script = format!(
            "mkdir -p {RTSTARTUP} && for o in rsbegin rsend; do RUSTC_BOOTSTRAP=1 \
             rustc --target {TARGET} --emit=obj -C panic=abort -O -o {RTSTARTUP}/$o.o {RUST_SRC}/rtstartup/$o.rs \
             || exit 1; done"
        );
        session.run("rsbegin.o and rsend.o", &script)
    }

    fn session_without_project(&self) -> anyhow::Result<Session<'_>> {
        let mut session = Session { chroot: self, mounted: Vec::new(), target_dir: None };
        session.mount(&["-t", "proc", "proc"], "proc")?;
        session.mount(&["--bind", "/dev"], "dev")?;
        Ok(session)
    }
}

/// The project's own cargo target dir inside the chroot: every checkout is mounted at
/// [`PROJECT`], so one shared dir made a CI clone and a developer checkout rebuild over each
/// other. Keyed by the host path (its last name, for the reader, and an FNV-1a hash of it all).
fn target_dir(project: &str) -> String {
    let hash = project
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let name: String = Path::new(project)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("root")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    format!("{TARGETS}/{name}-{hash:016x}")
}

/// The chroot with `proc`, `/dev` (and the project) mounted; unmounted in reverse order on drop.
pub(crate) struct Session<'a> {
    chroot: &'a Chroot,
    mounted: Vec<PathBuf>,
    /// The mounted project's cargo target dir, inside the chroot.
    target_dir: Option<String>,
}

impl Session<'_> {
    /// The chroot this session mounted.
    pub(crate) fn chroot(&self) -> &Chroot {
        self.chroot
    }

    /// The mounted project's cargo target dir inside the chroot ([`target_dir`]).
    pub(crate) fn target_dir(&self) -> anyhow::Result<&str> {
        self.target_dir.as_deref().context("no project is mounted in this session")
    }

    fn mount(&mut self, how: &[&str], at: &str) -> anyhow::Result<()> {
        let target = self.chroot.dir.join(at);
        std::fs::create_dir_all(&target)?;
        let status = Command::new("mount").args(how).arg(&target).status()?;
        ensure!(status.success(), "mount {how:?} {} failed ({status})", target.display());
        self.mounted.push(target);
        Ok(())
    }

    /// A `sh -c script` command inside the chroot, with a clean environment.
    pub(crate) fn command(&self, script: &str) -> Command {
        let mut cmd = Command::new("chroot");
        cmd.arg(&self.chroot.dir)
            .args(["/usr/bin/env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"])
            .args(["sh", "-c", script])
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `script` inside; fails with its exit status. Its output goes to stderr, so that
    /// stdout stays for results (`cargo xtask dll` prints the DLL's path there last).
    pub(crate) fn run(&self, what: &str, script: &str) -> anyhow::Result<()> {
        eprintln!("==> {what} (in the windows toolchain): {script}");
        let status = self.command(script).stdout(std::io::stderr()).status()?;
        if !status.success() {
            bail!("{what} failed ({status})");
        }
        Ok(())
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        for target in self.mounted.drain(..).rev() {
            unmount(&target);
        }
    }
}

fn unmount(target: &Path) {
    let ok = Command::new("umount").arg(target).status().is_ok_and(|s| s.success());
    if !ok {
        // Busy (a process still inside): detach it, so it goes once the last user exits.
        let _ = Command::new("umount").arg("-l").arg(target).status();
    }
}

/// Unmounts whatever is mounted below `dir` (left by a run that was killed), deepest first.
fn unmount_below(dir: &Path) -> anyhow::Result<()> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let prefix = format!("{}/", dir.display());
    let mut below: Vec<&str> =
        mounts.lines().filter_map(|l| l.split(' ').nth(1)).filter(|m| m.starts_with(&prefix)).collect();
    below.sort_by_key(|m| std::cmp::Reverse(m.len()));
    for m in below {
        eprintln!("==> unmounting {m} (left by an earlier run)");
        unmount(Path::new(m));
    }
    Ok(())
}

pub(crate) fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}
