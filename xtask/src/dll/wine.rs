//! `cargo xtask dll-test`: C programs shaped like games (windows/tests/*.c, built with mingw-w64
//! against its public `dplay8.h`) run under 32-bit Wine with our `dpnet.dll` over the prefix's
//! own (`WINEDLLOVERRIDES=dpnet=n`), against the native `dplay` on loopback ports the test
//! opened, and one of them in a 64-bit (WoW64) prefix as Proton has it.
//!
//! [`EXPECTED`] lists the tests the DLL passes today; the others run only on request (`--all`
//! or by name) and are never reported as passed when not run. Every Wine run is bounded by
//! `timeout`, and `wineserver -k` ends what a test left behind.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use super::chroot::{BUILD, PROJECT, Session};
use super::netns::Netns;
use crate::integration::{Suite, WAIT, event_with, free_addr, host, is};

/// The tests the DLL is expected to pass: CI fails when one of them does not. A new test joins
/// this list once the DLL passes it.
const EXPECTED: &[&str] = &[
    "exports",
    "enum",
    "join",
    "join-wow64",
    "host",
    "mesh",
    "migrate",
    "client-server",
    "server-client",
    "groups",
    "big",
    "cancel",
    "dowork",
    "portless",
    "devices",
    "sends",
];

/// Every test: its name (also its C file's, unless it names another), and the run.
const TESTS: &[(&str, Case)] = &[
    ("exports", exports),
    ("enum", enumerate),
    ("join", join),
    ("join-wow64", join_wow64),
    ("host", host_for_native),
    ("mesh", mesh),
    ("migrate", migrate),
    ("client-server", client_server),
    ("server-client", server_client),
    ("groups", groups),
    ("big", big),
    ("cancel", cancel),
    ("dowork", dowork),
    ("portless", portless),
    ("devices", devices),
    ("sends", sends),
];

/// The application GUID of every test session (`GUID_TEST_APP` in windows/tests/game.h).
const APP_GUID: &str = "{5F0D8F1A-3C1B-4E7E-9A55-1D2B3C4D5E6F}";

/// The 32-bit prefix inside the chroot.
pub(crate) const WIN32_PREFIX: &str = "/build/wine32";

/// How long one Wine program may run.
const WINE_LIMIT: u64 = 60;

type Case = fn(&Ctx<'_>) -> anyhow::Result<()>;

/// A Wine prefix: 32-bit (`windows/system32`), or 64-bit WoW64 (`windows/syswow64`), as Proton.
#[derive(Clone, Copy)]
pub(crate) enum Prefix {
    Win32,
    Wow64,
}

impl Prefix {
    fn dir(self) -> &'static str {
        match self {
            Prefix::Win32 => WIN32_PREFIX,
            Prefix::Wow64 => "/build/wine64",
        }
    }

    /// Where a COM-activated game loads `dpnet.dll` from (Wine registers it there).
    fn dll_dir(self) -> &'static str {
        match self {
            Prefix::Win32 => "drive_c/windows/system32",
            Prefix::Wow64 => "drive_c/windows/syswow64",
        }
    }

    fn arch(self) -> &'static str {
        match self {
            Prefix::Win32 => "win32",
            Prefix::Wow64 => "win64",
        }
    }
}

/// What a test runs with: the chroot, the native `dplay`.
pub(super) struct Ctx<'a> {
    pub(super) session: &'a Session<'a>,
    pub(super) suite: Suite,
}

/// Which tests to run: the expected ones, all, or by name.
pub(crate) enum Selection {
    Expected,
    All,
    Named(Vec<String>),
}

/// Builds the DLL and the test programs, makes the prefixes, runs the selected tests and prints
/// one result line per test. Fails when a run test fails.
#[allow(clippy::disallowed_methods)] // times its tests
pub(crate) fn run(session: &Session<'_>, selection: &Selection) -> anyhow::Result<()> {
    if let Selection::Named(names) = selection {
        for name in names {
            ensure!(TESTS.iter().any(|(n, _)| n == name), "no Wine test is named {name}");
        }
    }
    let dll = super::build(session)?;
    compile(session)?;
    let dll_inside = format!("{BUILD}/dpnet.dll");
    std::fs::copy(&dll, session.chroot().host_path(&dll_inside))?;
    for prefix in [Prefix::Win32, Prefix::Wow64] {
        make_prefix(session, prefix, Some(&dll_inside))?;
    }
    let ctx = Ctx { session, suite: Suite::build(Duration::from_secs(900))? };
    let (mut passed, mut failed, mut skipped) = (0, Vec::new(), 0);
    for &(name, case) in TESTS {
        let wanted = match selection {
            Selection::Expected => EXPECTED.contains(&name),
            Selection::All => true,
            Selection::Named(names) => names.iter().any(|n| n == name),
        };
        if !wanted {
            println!(
                "dll-test {name}: not run (not expected to pass yet; `cargo xtask dll-test --all` runs it)"
            );
            skipped += 1;
            continue;
        }
        println!("==> dll-test {name}");
        let started = Instant::now();
        let result = case(&ctx);
        kill_wine(session);
        let secs = started.elapsed().as_secs_f64();
        match result {
            Ok(()) => {
                println!("dll-test {name}: PASS ({secs:.1} s)");
                passed += 1;
            }
            Err(e) => {
                println!("dll-test {name}: FAIL ({secs:.1} s): {e:#}");
                failed.push(name);
            }
        }
    }
    println!("==> dll-test: {passed} passed, {} failed, {skipped} not run", failed.len());
    let expected_failed: Vec<&&str> = failed.iter().filter(|n| EXPECTED.contains(n)).collect();
    match selection {
        Selection::Expected if !expected_failed.is_empty() => bail!("Wine tests failed: {expected_failed:?}"),
        Selection::All | Selection::Named(_) if !failed.is_empty() => bail!("Wine tests failed: {failed:?}"),
        _ => Ok(()),
    }
}

/// Every windows/tests/*.c to `/build/tests/NAME.exe`, with mingw-w64's public headers.
pub(super) fn compile(session: &Session<'_>) -> anyhow::Result<()> {
    let script = format!(
        "mkdir -p {BUILD}/tests && cd {PROJECT}/windows/tests && for c in *.c; do \
         i686-w64-mingw32-gcc -O1 -Wall -Werror -o {BUILD}/tests/${{c%.c}}.exe $c -lole32 -luuid -lws2_32 || exit 1; done"
    );
    session.run("build the C test programs", &script)
}

/// The prefix, made once (`wineboot`), with our DLL (when given) copied over Wine's
/// `dpnet.dll`.
pub(crate) fn make_prefix(session: &Session<'_>, prefix: Prefix, dll: Option<&str>) -> anyhow::Result<()> {
    let (dir, arch, target) = (prefix.dir(), prefix.arch(), prefix.dll_dir());
    let install = match dll {
        Some(dll) => format!("test -f {dir}/{target}/dpnet.dll && cp {dll} {dir}/{target}/dpnet.dll"),
        None => "true".into(),
    };
    let script = format!(
        "if [ ! -f {dir}/dplay-ready ]; then rm -rf {dir} && \
         WINEARCH={arch} WINEPREFIX={dir} WINEDEBUG=-all timeout -k 5 300 wineboot -i >/dev/null 2>&1; \
         WINEPREFIX={dir} wineserver -w; touch {dir}/dplay-ready; fi; {install}"
    );
    session.run(&format!("the {arch} Wine prefix"), &script)
}

/// Ends every Wine process of both prefixes.
pub(crate) fn kill_wine(session: &Session<'_>) {
    for prefix in [Prefix::Win32, Prefix::Wow64] {
        let _ = session
            .command(&format!("WINEPREFIX={} wineserver -k 2>/dev/null", prefix.dir()))
            .stdout(Stdio::null())
            .status();
    }
}

/// A test program running under Wine; its stdout lines are collected as they come.
pub(super) struct Wine {
    name: String,
    child: Child,
    pub(super) lines: Arc<Mutex<Vec<String>>>,
}

impl Ctx<'_> {
    /// Starts `NAME.exe args...` in `prefix`, our DLL chosen over Wine's, within [`WINE_LIMIT`].
    pub(super) fn wine(&self, prefix: Prefix, exe: &str, args: &[&str]) -> anyhow::Result<Wine> {
        self.wine_in(None, prefix, exe, args)
    }

    /// As [`Ctx::wine`], inside `netns` when given. Wine's sockets are made by its wineserver:
    /// the first Wine process of the prefix starts it, so none may run outside the namespace
    /// then ([`kill_wine`] first).
    fn wine_in(
        &self,
        netns: Option<&Netns>,
        prefix: Prefix,
        exe: &str,
        args: &[&str],
    ) -> anyhow::Result<Wine> {
        let script = format!(
            "cd {BUILD}/tests && WINEPREFIX={} WINEDLLOVERRIDES=dpnet=n WINEDEBUG=-all \
             timeout -k 5 {WINE_LIMIT} wine {exe}.exe {} 2>&1",
            prefix.dir(),
            args.join(" ")
        );
        let command = self.session.command(&script);
        let mut command = match netns {
            Some(ns) => ns.wrap(&command),
            None => command,
        };
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).spawn()?;
        let stdout = child.stdout.take().context("no stdout")?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let label = exe.to_owned();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("XDG_RUNTIME_DIR") {
                    continue;
                }
                println!("    [{label}] {line}");
                if let Ok(mut l) = sink.lock() {
                    l.push(line);
                }
            }
        });
        Ok(Wine { name: exe.to_owned(), child, lines })
    }
}

impl Wine {
    /// Waits until the program printed `line`; fails as soon as it exited without.
    #[allow(clippy::disallowed_methods)]
    fn wait_line(&mut self, line: &str) -> anyhow::Result<()> {
        let until = Instant::now() + WAIT;
        while Instant::now() < until {
            if self.lines.lock().is_ok_and(|l| l.iter().any(|x| x == line)) {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("{} exited ({status}) before printing {line:?}", self.name);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!("{} never printed {line:?}", self.name)
    }

    /// Waits for the program to exit 0 (it is bounded by `timeout` itself).
    pub(super) fn success(mut self) -> anyhow::Result<()> {
        let status = self.child.wait()?;
        ensure!(status.success(), "{} exited with {status}", self.name);
        Ok(())
    }
}

impl Drop for Wine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port of a `127.0.0.1:PORT` address.
pub(super) fn port(addr: &str) -> &str {
    addr.rsplit(':').next().unwrap_or(addr)
}

pub(super) fn native_host(
    ctx: &Ctx<'_>,
    addr: &str,
    extra: &[&str],
) -> anyhow::Result<crate::integration::Proc> {
    let mut args = vec!["--app-guid", APP_GUID];
    args.extend_from_slice(extra);
    host(&ctx.suite, addr, &args)
}

fn native_join(
    ctx: &Ctx<'_>,
    addr: &str,
    name: &str,
    extra: &[&str],
) -> anyhow::Result<crate::integration::Proc> {
    let mut args = vec!["join", addr, "--json", "--app-guid", APP_GUID, "--name", name];
    args.extend_from_slice(extra);
    ctx.suite.start(name, &args)
}

fn exports(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    ctx.wine(Prefix::Win32, "exports", &[])?.success()
}

fn enumerate(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let _host = native_host(ctx, &addr, &[])?;
    ctx.wine(Prefix::Win32, "enum", &[port(&addr), "integration"])?.success()
}

fn join_in(ctx: &Ctx<'_>, prefix: Prefix) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = native_host(ctx, &addr, &[])?;
    let mut wine = ctx.wine(prefix, "join", &[port(&addr)])?;
    wine.wait_line("ready")?;
    ctx.suite.expect(&host, "the Wine member joining", WAIT, event_with("player_joined", "name", "wine"))?;
    ctx.suite.expect(
        &host,
        "the Wine member's message",
        WAIT,
        event_with("message", "text", "hello from wine"),
    )?;
    let _native = native_join(ctx, &addr, "native", &["--send", "hello from native", "--duration", "2"])?;
    wine.success()?;
    ctx.suite.expect(&host, "the Wine member leaving", WAIT, event_with("player_left", "name", "wine"))?;
    Ok(())
}

fn join(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    join_in(ctx, Prefix::Win32)
}

fn join_wow64(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    join_in(ctx, Prefix::Wow64)
}

fn host_for_native(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    host_with_joiner(ctx, &[port(&addr)], &addr)
}

/// Host on two device addresses (two ports): a native member joins through the second.
fn devices(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let first = free_addr()?;
    let second = loop {
        let a = free_addr()?;
        if a != first {
            break a;
        }
    };
    host_with_joiner(ctx, &[port(&first), port(&second)], &second)
}

/// `host.exe ports...` hosting; a native enumeration at `join` shows its ENUM_HOSTS_QUERY
/// response data; a native member joins there, exchanges chat text and is removed with
/// DestroyPeer's data, which its `session_ended` shows.
fn host_with_joiner(ctx: &Ctx<'_>, ports: &[&str], join: &str) -> anyhow::Result<()> {
    let mut wine = ctx.wine(Prefix::Win32, "host", ports)?;
    wine.wait_line("ready")?;
    // ENUM_HOSTS_QUERY's response data ("wine host data") in the EnumResponse.
    let mut en = ctx
        .suite
        .start("native enum", &["enum", join, "--json", "--app-guid", APP_GUID, "--timeout", "2"])?;
    let found = ctx.suite.expect(&en, "the Wine host's session", WAIT, is("session"))?;
    let data = "77 69 6E 65 20 68 6F 73 74 20 64 61 74 61";
    let shown = found.get("application_data").and_then(|v| v.as_str());
    ensure!(shown == Some(data), "the native enumeration found {found}");
    ensure!(ctx.suite.exit_code(&mut en, WAIT)? == Some(0), "dplay enum did not exit 0");
    let native = native_join(ctx, join, "native", &["--send", "hello from native", "--duration", "3"])?;
    ctx.suite.expect(
        &native,
        "the Wine host's message",
        WAIT,
        event_with("message", "text", "hello from the wine host"),
    )?;
    // DestroyPeer's data (DN_TERMINATE_SESSION, MC-DPL8CS 2.2.2.1) in the joiner's output.
    let bye = "goodbye from the wine host";
    ctx.suite.expect(&native, "DestroyPeer's data", WAIT, event_with("session_ended", "text", bye))?;
    wine.success()
}

fn mesh(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let mut a = ctx.wine(Prefix::Win32, "mesh", &["host", port(&addr)])?;
    a.wait_line("ready")?;
    let native = native_join(ctx, &addr, "native", &["--duration", "8"])?;
    ctx.suite.expect(&native, "the name table", WAIT, crate::integration::is("name_table"))?;
    let b = ctx.wine(Prefix::Win32, "mesh", &["join", port(&addr)])?;
    for from in ["wine-host", "wine-join"] {
        let text = format!("hello from {from}");
        ctx.suite.expect(&native, &text, WAIT, event_with("message", "text", &text))?;
    }
    b.success()?;
    a.success()
}

fn migrate(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let mut a = ctx.wine(Prefix::Win32, "migrate", &["host", port(&addr)])?;
    a.wait_line("ready")?;
    let native = native_join(ctx, &addr, "native", &["--duration", "10"])?;
    ctx.suite.expect(&native, "the name table", WAIT, crate::integration::is("name_table"))?;
    let b = ctx.wine(Prefix::Win32, "migrate", &["join", port(&addr)])?;
    ctx.suite.expect(&native, "the host migrating", WAIT, crate::integration::is("host_migrated"))?;
    a.success()?;
    b.success()
}

fn client_server(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = native_host(ctx, &addr, &["--client-server"])?;
    ctx.wine(Prefix::Win32, "clientserver", &["client", port(&addr)])?.success()?;
    ctx.suite.expect(
        &host,
        "the Wine client's message",
        WAIT,
        event_with("message", "text", "hello from the wine client"),
    )?;
    Ok(())
}

fn server_client(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let mut wine = ctx.wine(Prefix::Win32, "clientserver", &["server", port(&addr)])?;
    wine.wait_line("ready")?;
    let native = native_join(ctx, &addr, "native", &["--send", "hello from native", "--duration", "3"])?;
    ctx.suite.expect(
        &native,
        "the Wine server's message",
        WAIT,
        event_with("message", "text", "hello from the wine server"),
    )?;
    wine.success()
}

fn groups(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = native_host(ctx, &addr, &[])?;
    let wine = ctx.wine(Prefix::Win32, "groups", &[port(&addr)])?;
    ctx.suite.expect(
        &host,
        "the Wine member's name",
        WAIT,
        event_with("player_joined", "name", "wine pilot"),
    )?;
    ctx.suite.expect(&host, "the Wine member's group", WAIT, event_with("group", "name", "wine squadron"))?;
    wine.success()
}

fn big(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let mut a = ctx.wine(Prefix::Win32, "big", &["host", port(&addr)])?;
    a.wait_line("ready")?;
    let b = ctx.wine(Prefix::Win32, "big", &["join", port(&addr)])?;
    b.success()?;
    a.success()
}

fn cancel(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let _host = native_host(ctx, &addr, &[])?;
    // A port nobody answers on, for an enumeration to cancel: bound here and kept, silent.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0")?;
    let silent_port = silent.local_addr()?.port().to_string();
    ctx.wine(Prefix::Win32, "cancel", &[port(&addr), &silent_port])?.success()
}

/// Send completion on acknowledgement, timeouts, priorities and the counters against a native
/// host; then, between two Wine members, an existing group's owner and DestroyPeer's data.
fn sends(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let _host = native_host(ctx, &addr, &[])?;
    ctx.wine(Prefix::Win32, "sends", &["join", port(&addr)])?.success()?;
    let addr = free_addr()?;
    let mut a = ctx.wine(Prefix::Win32, "sends", &["host", port(&addr)])?;
    a.wait_line("ready")?;
    ctx.wine(Prefix::Win32, "sends", &["member", port(&addr)])?.success()?;
    a.success()
}

fn dowork(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let _host = native_host(ctx, &addr, &[])?;
    ctx.wine(Prefix::Win32, "dowork", &[port(&addr)])?.success()
}

/// A port-less synchronous enumeration answered through UDP 6073 (MC-DPLHP 1.9): a Wine host on
/// another port is found there and joined at the port its response came from; with
/// DPNSESSION_NODPNSVR it is not found there; the native `dplay enum` of the bare address finds
/// it too. In a private network namespace, as 6073 is a
/// fixed port (another test on this machine may hold it); the program fails clearly when it is
/// taken all the same.
fn portless(ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let ns = Netns::new("portless")?;
    kill_wine(ctx.session);
    // The namespace is ours alone: DPNSVR's first port serves.
    let port = "2302";
    for mode in [None, Some("nodpnsvr")] {
        let args = |role| [role, port].into_iter().chain(mode).collect::<Vec<_>>();
        let mut host = ctx.wine_in(Some(&ns), Prefix::Win32, "portless", &args("host"))?;
        host.wait_line("ready")?;
        if mode.is_none() {
            // The native stack's port-less enumeration (6073) finds it too, at the game's port.
            let mut native = ctx.suite.start_in(
                ns.name(),
                "native enum",
                &["enum", "127.0.0.1", "--any-app", "--json", "--timeout", "2"],
            )?;
            let found = ctx.suite.expect(&native, "the Wine host's session", WAIT, is("session"))?;
            ensure!(
                found.get("name").and_then(|v| v.as_str()) == Some("portless session")
                    && found.get("host").and_then(|v| v.as_str()) == Some(&format!("127.0.0.1:{port}")),
                "the native enumeration found {found}"
            );
            ensure!(ctx.suite.exit_code(&mut native, WAIT)? == Some(0), "dplay enum did not exit 0");
        }
        ctx.wine_in(Some(&ns), Prefix::Win32, "portless", &args("find"))?.success()?;
        host.success()?;
    }
    kill_wine(ctx.session);
    Ok(())
}
