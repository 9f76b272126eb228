//! `cargo xtask integration`: separate `dplay` processes on loopback, checked through their
//! `--json` output. Every process started is killed when the suite ends (also on failure), and
//! the whole suite has a time limit.
// serde_json's `value["key"]` gives Null for a missing key; it never panics.
#![allow(clippy::indexing_slicing)]

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use crate::util::build_dplay;

mod cdp;
mod cli_ux;
mod departures;
pub(crate) mod dp4;
mod dp4_cable;
mod dp4_cs;
mod dp4_reliable;
mod fs2004;
mod fs_capture;
mod fs_dp4;
mod honest_results;
mod live_table;
mod nat_resolver;
mod netns;
mod readme_sample;
mod relay_gone;
mod relay_nat;
mod relay_one_nat;
mod relay_web;
mod remote_text;
mod second_contact;
mod signing;
mod upnp;
mod voice;
mod web;
mod web_fs;
mod web_fs98;

/// The whole suite must finish within this (the cases run one after another; the NAT and relay
/// cases take 30 to 40 s each).
const SUITE_LIMIT: Duration = Duration::from_secs(600);

/// Builds `dplay` once and runs every case.
#[allow(clippy::disallowed_methods)] // the suite's own clock: deadlines for real processes
pub(crate) fn run() -> anyhow::Result<()> {
    // `DPLAY_INTEGRATION_ONLY=TEXT` runs only the cases whose name contains TEXT.
    let only = std::env::var("DPLAY_INTEGRATION_ONLY").unwrap_or_default();
    // What the UPnP case installs (apt-get) is installed before the suite's clock starts.
    if upnp::CASE.contains(only.as_str()) {
        upnp::prepare()?;
    }
    let suite = Suite::build(SUITE_LIMIT)?;
    // Every wait below ends at the deadline; this catches a wait that does not (a deadlock).
    // Children started with --duration end by themselves within a minute. The watchdog stands
    // down when `_suite_done` drops, so it never cuts into the steps that follow the suite.
    let (_suite_done, done) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if done.recv_timeout(SUITE_LIMIT + Duration::from_secs(30)) == Err(RecvTimeoutError::Timeout) {
            eprintln!("integration: over the time limit; giving up");
            std::process::exit(1);
        }
    });
    let cases: [(&str, Case); 59] = [
        ("enum and join across processes", enum_and_join),
        ("a join that fails says what to do", join_failure),
        ("a join through a lossy, duplicating, reordering proxy", join_through_proxy),
        ("a 16-peer session", sixteen_peers),
        ("an add-on session: a player and an observer", addon_session),
        ("dplay demo: every step happens", demo),
        ("the host killed with SIGKILL: the others migrate", host_killed),
        (
            "a fast-signed session of three processes; an unsigned joiner fails at once",
            signing::fast_signed_session,
        ),
        ("a refused join names its DPNERR code", signing::refusal_is_named),
        ("DirectPlay Voice: forwarding and echo hosts with --voice-test clients", voice::forwarding_and_echo),
        (
            "DirectPlay Voice over DirectPlay 4: forwarding and echo hosts with --voice-test clients",
            voice::over_dp4,
        ),
        ("a client/server join says so", signing::client_server_join_says_so),
        ("DirectPlay 4: enum, join, guaranteed messages both ways over TCP", dp4::tcp_session),
        ("DirectPlay 4: non-guaranteed messages both ways over UDP, fragmented", dp4::udp_messages),
        ("DirectPlay 4: bad streams and messages are dropped, the host goes on", dp4::bad_input),
        (
            "DirectPlay 4: a joiner killed with SIGKILL goes with all its players within a Ping period; it rejoins from its port",
            dp4::joiner_killed,
        ),
        (
            "DirectPlay 4: the host killed, the member that takes over answers enumeration",
            dp4::migrated_host_answers_enumeration,
        ),
        (
            "DirectPlay 4: joins that cannot work fail at once and say why (no listener, a long name, a password)",
            dp4::join_errors,
        ),
        ("an add-on session over DirectPlay 4: a player and an observer", fs_dp4::addon_session),
        ("dplay fs host --sim fs2004: found by FS2004's GUID and by --any-app", fs2004::host_found),
        ("a recorded add-on session on a non-default port, decoded", fs_capture::decoded),
        ("a recorded add-on session over DirectPlay 4, decoded", fs_capture::decoded_dp4),
        ("DirectPlay 4 RP: guaranteed messages both ways over MC-DPL4R", dp4_reliable::guaranteed),
        ("DirectPlay 4 client/server: two clients reach each other through the server", dp4_cs::session),
        (
            "DirectPlay 4 RP: MC-DPL4R through a lossy, duplicating, reordering proxy",
            dp4_reliable::through_proxy,
        ),
        ("fs join against nothing and a plain host: exit 1 within the timeout", cli_ux::fs_join_fails),
        ("host names: localhost for enum and join", cli_ux::host_names),
        (
            "--relay: three FS2004 pilots behind three NATs (one symmetric) see each other; a stranger is dropped",
            relay_nat::fs2004_behind_nat,
        ),
        (
            "--relay: three DirectPlay 8 members behind three NATs (one symmetric) get each other's first messages",
            relay_nat::dp8_behind_nat,
        ),
        (
            "--relay: three DirectPlay 4 members behind three NATs (one symmetric) get each other's messages",
            relay_nat::dp4_behind_nat,
        ),
        (
            "--relay: three FS98 pilots behind three NATs (one symmetric) see each other over DirectPlay 4",
            relay_nat::fs98_behind_nat,
        ),
        ("SIGTERM ends a DirectPlay 8 host's session: migration or TERMINATE_SESSION", cli_ux::sigterm_dp8),
        ("SIGTERM ends a DirectPlay 4 host's session: the member hears it leave", cli_ux::sigterm_dp4),
        (
            "the host's dashboard in a browser: hostile names and chat as text; chat, kick, ban by clicks; refusals listed",
            web::dashboard,
        ),
        (
            "--relay on the dashboard in a browser: members, endpoints, relayed datagrams, a stranger; the line on SIGUSR1",
            relay_web::dashboard,
        ),
        (
            "the add-on host's dashboard: two aircraft on the offline map, hostile names as text, kick and ban by clicks",
            web_fs::map,
        ),
        (
            "the FS98 host's dashboard over HTTP: players, traffic, kick, name and address bans",
            web_fs98::dashboard,
        ),
        (
            "dplay nat-resolver: a host learns its address; without the user string, one line and hosting goes on",
            nat_resolver::resolver_on_loopback,
        ),
        (upnp::CASE, upnp::mapped_host),
        (
            "a LAN without a default route: enum --dp4 broadcasts on the interface; a loopback DirectPlay 4 host answers on loopback only",
            second_contact::dp4_lan,
        ),
        (
            "a DirectPlay 8 command at a DirectPlay 4 host says try --dp4, and the reverse",
            second_contact::other_protocol,
        ),
        (
            "one --max-players in host, fs host and FS98, advertised and enforced; the summaries count refusals",
            second_contact::max_players,
        ),
        (
            "IPv6: fs host, fs join and enum with --bind [::1]; a --bind of the other family refused",
            second_contact::ipv6,
        ),
        (
            "words: a failed fs join says how long it waited; demo --fly refused out of range, said before",
            second_contact::words,
        ),
        ("two quick kicks of one player: the second says so and exits 1", second_contact::kicks),
        (
            "remote text: a hostile name, chat and rename escaped in the host's output and log; renames obey the limits; a refusal said once",
            remote_text::hostile_text,
        ),
        ("a client that says goodbye leaves a client/server host at once", departures::departed_client),
        (
            "a crashed peer, for join and fs join: a joiner is told the host checks it, the default --timeout gets in, the host says connection lost",
            departures::crashed_peer,
        ),
        (
            "options refused before anything runs (weak dashboard settings, port 0, clamps); an exposed dashboard said",
            honest_results::refused_options,
        ),
        (
            "enum returns at the answer; exit codes, named completions and JSON end events; --client-server forced",
            honest_results::answers_and_exit_codes,
        ),
        (
            "DirectPlay 4: the right password right after two wrong ones gets in",
            honest_results::password_retry,
        ),
        (
            "a LAN: join --bind 0.0.0.0 --pcap records the probe with concrete addresses; --pcap - refused",
            second_contact::join_capture,
        ),
        ("fs host on a terminal: the live table keeps where players join", live_table::keeps_where_to_join),
        ("README.md's enum and join sample is what the commands print", readme_sample::enum_and_join),
        (
            "DirectPlay 4: a joiner whose cable is pulled goes with all its players within two Ping periods; it rejoins from its port",
            dp4_cable::pulled_cable,
        ),
        (
            "--relay: two DirectPlay 4 members behind one cone NAT on one port and a third get each other's messages; FS98 pilots there see each other",
            relay_one_nat::dp4_behind_one_cone_nat,
        ),
        (
            "--relay: two DirectPlay 4 members behind one symmetric NAT on one port and a third get each other's messages; FS98 pilots there see each other",
            relay_one_nat::dp4_behind_one_symmetric_nat,
        ),
        (
            "--relay, a member vanishes: of three FS2004 pilots behind NATs one is killed, one's cable pulled; both go within the bound, endpoints freed, stale frames dropped, a new pilot gets in",
            relay_gone::dp8_member_vanishes,
        ),
        (
            "--relay, a member vanishes over DirectPlay 4: of three FS98 pilots behind NATs one is killed, one's cable pulled; both go within two Ping periods, endpoints freed, stale frames dropped, a new pilot gets in",
            relay_gone::dp4_member_vanishes,
        ),
    ];
    for (name, case) in cases.into_iter().filter(|(name, _)| name.contains(only.as_str())) {
        println!("==> integration: {name}");
        let started = Instant::now();
        case(&suite).with_context(|| format!("integration case failed: {name}"))?;
        println!("    ok ({:.1} s)", started.elapsed().as_secs_f64());
    }
    Ok(())
}

/// One integration case.
pub(crate) type Case = fn(&Suite) -> anyhow::Result<()>;

/// The `dplay` binary under test and the deadline every wait ends at.
pub(crate) struct Suite {
    bin: PathBuf,
    deadline: Instant,
}

/// One `dplay` process; killed when dropped. Its stdout lines are parsed as JSON as they come.
pub(crate) struct Proc {
    name: String,
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Suite {
    /// Builds `dplay` (debug) once; every wait of the suite ends within `limit` from now.
    /// `DPLAY_BIN` names another binary to run instead (e.g. an older build, to compare).
    #[allow(clippy::disallowed_methods)] // the suite's own clock
    pub(crate) fn build(limit: Duration) -> anyhow::Result<Self> {
        if let Some(bin) = std::env::var_os("DPLAY_BIN") {
            println!("==> testing {} (DPLAY_BIN)", PathBuf::from(&bin).display());
            return Ok(Suite { bin: PathBuf::from(bin), deadline: Instant::now() + limit });
        }
        Ok(Suite { bin: build_dplay()?, deadline: Instant::now() + limit })
    }

    /// Starts `dplay args...` with `--json` output collected.
    pub(crate) fn start(&self, name: &str, args: &[&str]) -> anyhow::Result<Proc> {
        self.start_with(name, args, Command::new(&self.bin).stderr(Stdio::inherit()))
    }

    /// As [`Suite::start`], with its log (stderr) at `RUST_LOG=info` written to `log`.
    pub(crate) fn start_logged(
        &self,
        name: &str,
        args: &[&str],
        log: &std::path::Path,
    ) -> anyhow::Result<Proc> {
        let file = std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
        self.start_with(name, args, Command::new(&self.bin).env("RUST_LOG", "info").stderr(file))
    }

    /// As [`Suite::start`], inside the network namespace `netns` (`ip netns exec`, which
    /// runs `dplay` itself: the process is `dplay`).
    pub(crate) fn start_in(&self, netns: &str, name: &str, args: &[&str]) -> anyhow::Result<Proc> {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", netns]).arg(&self.bin).stderr(Stdio::inherit());
        self.start_with(name, args, &mut command)
    }

    fn start_with(&self, name: &str, args: &[&str], command: &mut Command) -> anyhow::Result<Proc> {
        let mut child = command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", self.bin.display()))?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().context("no stdout")?;
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && let Ok(mut l) = sink.lock()
                {
                    l.push(v);
                }
            }
        });
        Ok(Proc { name: name.to_owned(), child, lines })
    }

    /// Waits until `p` printed an event that `want` accepts.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn expect(
        &self,
        p: &Proc,
        what: &str,
        limit: Duration,
        want: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<Value> {
        let until = (Instant::now() + limit).min(self.deadline);
        loop {
            if let Some(v) = p.lines.lock().ok().and_then(|l| l.iter().find(|v| want(v)).cloned()) {
                return Ok(v);
            }
            if Instant::now() >= until {
                let seen = p.lines.lock().map(|l| l.len()).unwrap_or(0);
                bail!("{} never printed {what} ({seen} events seen)", p.name);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for `p` to exit; its status code.
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn exit_code(&self, p: &mut Proc, limit: Duration) -> anyhow::Result<Option<i32>> {
        let until = (Instant::now() + limit).min(self.deadline);
        loop {
            if let Some(status) = p.child.try_wait()? {
                return Ok(status.code());
            }
            if Instant::now() >= until {
                bail!("{} did not exit in time", p.name);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Proc {
    /// Its name in messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every event printed so far that `want` accepts.
    pub(crate) fn events(&self, want: impl Fn(&Value) -> bool) -> Vec<Value> {
        self.lines.lock().map(|l| l.iter().filter(|v| want(v)).cloned().collect()).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free UDP port on 127.0.0.1.
pub(crate) fn free_addr() -> anyhow::Result<String> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    let addr: SocketAddr = socket.local_addr()?;
    Ok(addr.to_string())
}

pub(crate) fn is(event: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| v["event"] == event
}

pub(crate) fn event_with<'a>(event: &'a str, key: &'a str, value: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |v| v["event"] == event && v[key] == value
}

pub(crate) const WAIT: Duration = Duration::from_secs(15);

pub(crate) fn host<'a>(s: &Suite, addr: &'a str, extra: &[&'a str]) -> anyhow::Result<Proc> {
    let mut args = vec!["host", "--json", "--bind", addr, "--session", "integration", "--duration", "60"];
    args.extend_from_slice(extra);
    let p = s.start("host", &args)?;
    s.expect(&p, "joined", WAIT, is("joined"))?;
    Ok(p)
}

fn enum_and_join(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &[])?;
    let mut en = s.start("enum", &["enum", &addr, "--json", "--timeout", "2"])?;
    let found = s.expect(&en, "a session", WAIT, is("session"))?;
    ensure!(found["name"] == "integration", "enum reported {found}");
    ensure!(s.exit_code(&mut en, WAIT)? == Some(0), "enum did not exit 0");

    let mut alice = s.start(
        "alice",
        &["join", &addr, "--json", "--name", "alice", "--send", "hello from alice", "--duration", "2"],
    )?;
    let table = s.expect(&alice, "the name table", WAIT, is("name_table"))?;
    let names: Vec<&str> =
        table["players"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    ensure!(names.contains(&"host") && names.contains(&"alice"), "name table {table}");
    s.expect(&host, "alice joining", WAIT, event_with("player_joined", "name", "alice"))?;
    s.expect(&host, "alice's message", WAIT, event_with("message", "text", "hello from alice"))?;
    s.expect(&host, "alice leaving", WAIT, event_with("player_left", "name", "alice"))?;
    ensure!(s.exit_code(&mut alice, WAIT)? == Some(0), "join did not exit 0");
    Ok(())
}

fn join_failure(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let mut en = s.start("enum", &["enum", &addr, "--json", "--timeout", "1"])?;
    ensure!(s.exit_code(&mut en, WAIT)? == Some(1), "enum of nothing did not exit 1");
    // Its probe waits out the whole --timeout: it fails without a `joining` line (issue 25).
    let join = second_contact::run_here(s, &["join", &addr, "--timeout", "1"])?;
    let (code, err) = second_contact::ended(&join);
    let text = String::from_utf8_lossy(&join.stdout);
    ensure!(
        code == Some(1) && err.contains("no answer") && !text.contains("joining"),
        "a join with no host: exit {code:?}: {text}{err}"
    );
    Ok(())
}

fn sixteen_peers(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &[])?;
    let names: Vec<String> = (1..16).map(|i| format!("peer{i:02}")).collect();
    let mut peers = Vec::new();
    for name in &names {
        let p =
            s.start(name, &["join", &addr, "--json", "--name", name, "--duration", "60", "--timeout", "20"])?;
        // One at a time, as DirectPlay hosts take joins (MS-DPDX 4.3).
        s.expect(&p, "the name table", WAIT, is("name_table"))?;
        peers.push(p);
    }
    for name in &names {
        s.expect(&host, "every peer joining", WAIT, event_with("player_joined", "name", name))?;
    }
    // The first peer hears of every later one.
    if let Some(first) = peers.first() {
        for name in names.iter().skip(1) {
            s.expect(first, "every later peer", WAIT, event_with("player_joined", "name", name))?;
        }
    }
    Ok(())
}

fn host_killed(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    // With the spec's recommended timers a silent dead host is noticed after about a minute
    // (25 s to a KeepAlive, then 10 retries capped at 5 s); DirectPlay lets an application
    // shorten them (DPN_CAPS_EX), as here: a KeepAlive after 1-2 s of silence, then 5 retries
    // at most 0.5 s apart (docs/decisions.md).
    let fast = ["--keepalive", "1", "--send-retries", "5", "--max-retry-interval", "0.5"];
    let mut host = host(s, &addr, &fast)?;
    let mut peers = Vec::new();
    for name in ["older", "newer"] {
        let mut args = vec!["join", &addr, "--json", "--name", name, "--duration", "60"];
        args.extend(fast);
        let p = s.start(name, &args)?;
        s.expect(&p, "the name table", WAIT, is("name_table"))?;
        peers.push(p);
    }
    if let Some(newer) = peers.get(1) {
        s.expect(newer, "the older peer", WAIT, event_with("player_joined", "name", "older"))?;
    }
    // SIGKILL: no goodbye, the others find out from silence.
    host.child.kill()?;
    let _ = host.child.wait();
    for p in &peers {
        let migrated = s.expect(p, "host_migrated", Duration::from_secs(15), is("host_migrated"))?;
        ensure!(migrated["name"] == "older", "{} saw {migrated}", p.name);
    }
    Ok(())
}

/// A player and an observer: the observer sees the pilot's positions. The host and the pilot
/// run in text mode, so the words are checked where they appear (issue 25 item 18): the pilot
/// reads "an observer"; the host's position lines give feet (1000 m, 3281 ft) and its summary,
/// with the observer still in and the pilot gone, says "1 connection" and holds the pilot's
/// finished goodbye apart as lingering (not as a connection).
fn addon_session(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = remote_text::Texted::start(s, &["fs", "host", "--bind", &addr, "--duration", "8"])?;
    let observer = s.start(
        "observer",
        &["fs", "join", &addr, "--observer", "--name", "tower", "--json", "--duration", "60"],
    )?;
    s.expect(&observer, "addon_joined", WAIT, event_with("addon_joined", "role", "observer"))?;
    let player = remote_text::Texted::start(
        s,
        &["fs", "join", &addr, "--player", "--name", "pilot", "--duration", "4"],
    )?;
    expect_pilot_positions(s, &observer)?;
    let (code, pilot) = text_of(player.finish(s, WAIT)?);
    ensure!(code == Some(0), "the pilot exited {code:?}: {pilot}");
    ensure!(
        pilot.contains("fs-host is an observer") && pilot.contains("tower is an observer"),
        "the pilot's text: {pilot}"
    );
    ensure!(!pilot.contains(" a observer"), "the pilot's text: {pilot}");
    let (code, host) = text_of(host.finish(s, WAIT)?);
    ensure!(code == Some(0), "the host exited {code:?}: {host}");
    ensure!(
        host.contains("accepted pilot as player")
            && host.lines().any(|l| l.contains("position pilot: ") && l.contains(" 3281 ft heading ")),
        "the host's text: {host}"
    );
    ensure!(host.contains("held: 1 connection, 1 lingering, "), "the host's summary: {host}");
    Ok(())
}

/// A finished text-mode run's exit code and standard output.
fn text_of(out: std::process::Output) -> (Option<i32>, String) {
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Four updates a second: at least four within two seconds at `observer`, from the pilot at
/// 1000 m.
fn expect_pilot_positions(s: &Suite, observer: &Proc) -> anyhow::Result<()> {
    s.expect(observer, "a position", WAIT, is("position"))?;
    std::thread::sleep(Duration::from_secs(2));
    let positions =
        observer.lines.lock().map(|l| l.iter().filter(|v| v["event"] == "position").count()).unwrap_or(0);
    ensure!(positions >= 4, "only {positions} positions in two seconds");
    let position = s.expect(observer, "a position", WAIT, is("position"))?;
    ensure!(position["name"] == "pilot", "{position}");
    ensure!(position["alt_m"].as_f64().is_some_and(|a| (a - 1000.0).abs() < 1.0), "{position}");
    Ok(())
}

fn demo(s: &Suite) -> anyhow::Result<()> {
    let mut demo = s.start("demo", &["demo", "--fly", "2"])?;
    ensure!(s.exit_code(&mut demo, Duration::from_secs(60))? == Some(0), "dplay demo did not exit 0");
    Ok(())
}

fn join_through_proxy(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &[])?;
    let faults = crate::proxy::Faults { loss: 10, duplicate: 10, reorder: 10 };
    let proxy = crate::proxy::Proxy::start(addr.parse()?, faults, 0x5eed)?;
    let front = proxy.addr().to_string();
    let mut alice = s.start(
        "alice",
        &[
            "join",
            &front,
            "--json",
            "--name",
            "alice",
            "--set-name",
            "alice through the proxy",
            "--duration",
            "4",
            "--timeout",
            "20",
        ],
    )?;
    s.expect(&alice, "the name table", Duration::from_secs(25), is("name_table"))?;
    s.expect(&host, "alice joining", WAIT, event_with("player_joined", "name", "alice"))?;
    // A reliable session message through the faults: DN_REQ_UPDATE_INFO, then the host's
    // DN_UPDATE_INFO (MC-DPL8CS 3.5). A chat message would not do: it is sent unreliably
    // (MS-DPDX 3.1.4.1).
    s.expect(
        &host,
        "alice's new name",
        WAIT,
        event_with("player_renamed", "name", "alice through the proxy"),
    )?;
    ensure!(s.exit_code(&mut alice, WAIT)? == Some(0), "join did not exit 0");
    let c = &proxy.counts;
    let load = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "    proxy: {} forwarded, {} lost, {} duplicated, {} reordered",
        load(&c.forwarded),
        load(&c.lost),
        load(&c.duplicated),
        load(&c.reordered)
    );
    Ok(())
}
