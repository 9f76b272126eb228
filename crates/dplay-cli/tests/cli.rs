//! The `dplay` command at first contact (issue #15): every command's --help and every argument
//! error as snapshots, and each defect found run as a user runs it. Network cases talk only to
//! loopback ports these tests opened, or inside a private network namespace.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use std::process::{Command as StdCommand, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use common::{Proc, free_port, spawn};
use serde_json::Value;

fn dplay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dplay"))
}

/// stderr of a run that must fail with `code`.
#[track_caller]
fn fails(args: &[&str], code: i32) -> String {
    let out = dplay().args(args).output().expect("run dplay");
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stderr).expect("UTF-8")
}

/// A `dplay host --json` on 127.0.0.1:`port`, once it hosts.
fn host(port: u16, extra: &[&str]) -> Proc {
    host_logged(port, extra).0
}

/// [`host`], with the JSON events it prints after `hosting`.
fn host_logged(port: u16, extra: &[&str]) -> (Proc, Arc<Mutex<Vec<Value>>>) {
    let bind = format!("127.0.0.1:{port}");
    let mut args = vec!["host", "--json", "--bind", &bind, "--duration", "30"];
    args.extend_from_slice(extra);
    let (host, mut lines) = spawn(&args);
    let hosting = lines.next().expect("a first line").expect("UTF-8");
    let v: Value = serde_json::from_str(&hosting).expect("JSON");
    assert_eq!(v["event"], "hosting", "{hosting}");
    // Keep reading so the host never blocks on a full pipe.
    let log = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if let (Ok(v), Ok(mut log)) = (serde_json::from_str(&line), kept.lock()) {
                log.push(v);
            }
        }
    });
    (host, log)
}

#[test]
fn help_of_every_command() {
    let commands: &[&[&str]] = &[
        &[],
        &["decode"],
        &["host"],
        &["enum"],
        &["join"],
        &["fs"],
        &["fs", "host"],
        &["fs", "join"],
        &["demo"],
        &["completions"],
        &["manpage"],
    ];
    for command in commands {
        let out = dplay().args(*command).arg("--help").output().expect("run dplay");
        assert!(out.status.success(), "{command:?}");
        let name = if command.is_empty() { "help".to_owned() } else { format!("help_{}", command.join("_")) };
        insta::assert_snapshot!(name, String::from_utf8(out.stdout).expect("UTF-8"));
    }
}

/// Issue #15 item 6: durations: no panic, no NaN, no negative, one message for each.
#[test]
fn bad_durations_are_refused() {
    let cases: &[(&str, &[&str])] = &[
        ("enum_timeout_inf", &["enum", "127.0.0.1", "--timeout", "inf"]),
        ("enum_timeout_1e300", &["enum", "127.0.0.1", "--timeout", "1e300"]),
        ("host_duration_inf", &["host", "--duration", "inf"]),
        ("demo_fly_nan", &["demo", "--fly", "nan"]),
        ("join_timeout_negative", &["join", "127.0.0.1", "--timeout=-1"]),
        ("join_keepalive_word", &["join", "127.0.0.1", "--keepalive", "soon"]),
        ("fs_join_timeout_too_long", &["fs", "join", "127.0.0.1", "--player", "--timeout", "31d"]),
    ];
    for (name, args) in cases {
        insta::assert_snapshot!(format!("error_{name}"), fails(args, 2));
    }
}

/// Units and plain seconds are both taken.
#[test]
fn durations_with_units() {
    let port = free_port().to_string();
    let target = format!("127.0.0.1:{port}");
    for timeout in ["250ms", "0.25"] {
        let err = fails(&["enum", &target, "--timeout", timeout], 1);
        insta::assert_snapshot!("error_enum_nothing", err.replace(&target, "ADDR"));
    }
}

/// Issue #15 item 5: host names resolve; a name that does not says so.
#[test]
fn host_names() {
    let port = free_port();
    let _host = host(port, &[]);
    let out = dplay()
        .args(["enum", &format!("localhost:{port}"), "--timeout", "3", "--json"])
        .output()
        .expect("run dplay");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(v["event"], "session");
    assert_eq!(v["host"], format!("127.0.0.1:{port}"));
    insta::assert_snapshot!("error_unknown_host", fails(&["join", "no-such-host.invalid"], 2));
    insta::assert_snapshot!("error_bad_port", fails(&["enum", "localhost:99999"], 2));
}

/// Issue #15 item 8: `join --timeout 1` gives up after about one second, not two.
#[test]
fn join_timeout_is_the_whole_wait() {
    let target = format!("127.0.0.1:{}", free_port());
    #[allow(clippy::disallowed_methods)] // the timeout is the behaviour under test
    let started = Instant::now();
    let err = fails(&["join", &target, "--timeout", "1"], 1);
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1800), "took {took:?}");
    insta::assert_snapshot!("error_join_nothing", err.replace(&target, "ADDR"));
}

/// Issue #15 item 1: `fs join` against nothing fails within its timeout, with a reason.
#[test]
fn fs_join_against_nothing() {
    let target = format!("127.0.0.1:{}", free_port());
    #[allow(clippy::disallowed_methods)] // the timeout is the behaviour under test
    let started = Instant::now();
    let err = fails(&["fs", "join", &target, "--player", "--timeout", "1", "--duration", "5"], 1);
    assert!(started.elapsed() < Duration::from_secs(4));
    insta::assert_snapshot!("error_fs_join_nothing", err.replace(&target, "ADDR"));
}

/// Issue #15 item 1: against a plain `dplay host` (no add-on), it says so. Since issue 16 `fs
/// join` is FS2004's by default, which the plain host (another application) refuses; in the
/// host's own application FS2004 has no handshake that could go unanswered.
#[test]
fn fs_join_against_a_plain_host() {
    let port = free_port();
    let _host = host(port, &[]);
    let target = format!("127.0.0.1:{port}");
    let err = fails(&["fs", "join", &target, "--observer", "--timeout", "1", "--duration", "5"], 1);
    insta::assert_snapshot!("error_fs_join_plain_host", err.replace(&target, "ADDR"));
}

/// Issue #15 items 8 and 11: flags as words, typed JSON, joinable addresses, `--echo`.
#[test]
fn dp8_output_and_echo() {
    let port = free_port();
    let _host = host(port, &["--echo"]);
    let target = format!("127.0.0.1:{port}");
    let out = dplay().args(["enum", &target, "--timeout", "3"]).output().expect("run dplay");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("flags migrate-host"), "{text}");
    assert!(!text.contains("ApplicationDescFlags"), "{text}");

    let out = dplay()
        .args(["join", &target, "--json", "--send", "ping", "--duration", "1"])
        .output()
        .expect("run dplay");
    assert!(out.status.success());
    let events: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let echoed = events.iter().find(|e| e["event"] == "message").expect("the echo");
    assert_eq!(echoed["text"], "ping");
    assert_eq!(echoed["chat"], true);
    let table = events.iter().find(|e| e["event"] == "name_table").expect("the name table");
    assert!(table["players"][0]["id"].is_string() && table["players"][0]["local"].is_boolean(), "{table}");
    assert_eq!(events.last().unwrap()["event"], "stopped");
}

/// Issue #15 item 11: a host bound to any address lists where players can join.
#[test]
fn joinable_addresses() {
    let port = free_port();
    let out =
        dplay().args(["host", "--bind", &format!("0.0.0.0:{port}"), "--duration", "0"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("players can join at") && text.contains(&format!("127.0.0.1:{port}")), "{text}");
}

/// Issue #15 item 11: completions and the manual page.
#[test]
fn completions_and_manpage() {
    for shell in ["bash", "zsh", "fish"] {
        let out = dplay().args(["completions", shell]).output().expect("run dplay");
        assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("dplay"), "{shell}");
    }
    let out = dplay().arg("manpage").output().expect("run dplay");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(".ie"), "roff");
    let out = dplay().args(["manpage", "fs"]).output().expect("run dplay");
    assert!(String::from_utf8_lossy(&out.stdout).contains(".TH dplay-fs"));
    // A subcommand's page: NAME reads dplay-host, the synopsis `dplay host`.
    let out = dplay().args(["manpage", "host"]).output().expect("run dplay");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".SH NAME\ndplay\\-host \\- Host a DirectPlay 8"), "{page}");
    assert!(page.contains(".SH SYNOPSIS\n\\fBdplay host\\fR"), "{page}");
    insta::assert_snapshot!("error_manpage_unknown", fails(&["manpage", "nope"], 1));
    insta::assert_snapshot!("error_completions_unknown", fails(&["completions", "cmd"], 2));
}

/// Issue #15 item 4: DirectPlay 8 enumeration by broadcast (SO_BROADCAST), inside a private
/// network namespace: its loopback broadcast address reaches a host bound to 0.0.0.0 there.
#[test]
#[allow(clippy::print_stderr)] // the loud skip
fn dp8_broadcast_enumeration() {
    let bin = env!("CARGO_BIN_EXE_dplay");
    let script = format!(
        "ip link set lo up && ({bin} host --bind 0.0.0.0:6073 --duration 4 >/dev/null 2>&1 &) && sleep 0.5 && \
         {bin} enum 127.255.255.255 --timeout 2 --json"
    );
    let Ok(out) = StdCommand::new("unshare").args(["-n", "sh", "-c", &script]).output() else {
        eprintln!("SKIPPED dp8_broadcast_enumeration: no unshare");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("unshare failed") || stderr.contains("Operation not permitted") {
        eprintln!("SKIPPED dp8_broadcast_enumeration: no private network namespace ({stderr})");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(v["event"], "session", "{v}");
}

/// Issue #15 item 8: a refusal names its DPNERR (a full session: DPNERR_SESSIONFULL, 0x80158610).
#[test]
fn refusal_names_the_dpnerr() {
    let port = free_port();
    let _host = host(port, &["--max-players", "1"]);
    let err = fails(&["join", &format!("127.0.0.1:{port}"), "--timeout", "3"], 1);
    assert!(err.contains("DPNERR_SESSIONFULL"), "{err}");
}

/// DirectPlay 4 runs over IPv4 only: an IPv6 address says so.
#[test]
fn dp4_over_ipv6_is_refused() {
    insta::assert_snapshot!(
        "error_dp4_ipv6",
        fails(&["host", "--dp4", "--bind", "::1", "--duration", "0"], 1)
    );
}

/// Issue #13 item 3: `join --create-group` creates a group and joins it, `join --join-group`
/// joins it by name, and the host logs every change (MC-DPL8CS 3.4.5.2; docs/json-events.md).
#[test]
fn groups_from_join() {
    let port = free_port();
    let (_host, log) = host_logged(port, &[]);
    let target = format!("127.0.0.1:{port}");
    let json = |out: &std::process::Output| -> Vec<Value> {
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    };
    let group = |events: &[Value], change: &str| -> Vec<Value> {
        events.iter().filter(|e| e["event"] == "group" && e["change"] == change).cloned().collect()
    };
    let alice = StdCommand::new(env!("CARGO_BIN_EXE_dplay"))
        .args(["join", &target, "--json", "--name", "alice", "--create-group", "crew", "--duration", "4"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start alice");
    std::thread::sleep(Duration::from_secs(2));
    let bob = dplay()
        .args(["join", &target, "--json", "--name", "bob", "--join-group", "crew", "--duration", "1"])
        .output()
        .expect("run bob");
    assert!(bob.status.success(), "{}", String::from_utf8_lossy(&bob.stderr));
    let alice = alice.wait_with_output().expect("alice");
    assert!(alice.status.success());
    let (alice, bob) = (json(&alice), json(&bob));
    let created = group(&alice, "created");
    assert_eq!(created.len(), 1, "{alice:?}");
    assert_eq!(created[0]["name"], "crew");
    let id = &created[0]["id"];
    let me = |events: &[Value]| events.iter().find(|e| e["event"] == "joined").map(|e| e["id"].clone());
    let added = |events: &[Value], who: &Option<Value>| {
        group(events, "player_added").iter().any(|e| &e["id"] == id && Some(&e["player"]) == who.as_ref())
    };
    let (a, b) = (me(&alice), me(&bob));
    assert!(added(&alice, &a) && added(&alice, &b), "{alice:?}");
    assert!(added(&bob, &b), "{bob:?}");
    let host = log.lock().unwrap().clone();
    assert_eq!(group(&host, "created").len(), 1, "{host:?}");
    assert!(added(&host, &a) && added(&host, &b), "{host:?}");
    assert!(fails(&["join", "--dp4", &target, "--join-group", "crew"], 1).contains("DirectPlay 8"));
}

/// `dplay admin`: one-line errors (no token, a bad address, nothing listening), and a ban file
/// read at start refuses a name with DPNERR_HOSTREJECTEDCONNECTION (issue 17).
#[test]
fn admin_errors_and_the_ban_file() {
    let no_token =
        dplay().args(["admin", "127.0.0.1:1", "bans"]).env_remove("DPLAY_WEB_TOKEN").output().unwrap();
    assert_eq!(no_token.status.code(), Some(1));
    let err = String::from_utf8(no_token.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("DPLAY_WEB_TOKEN"), "{err}");
    let err = fails(&["admin", "8080", "--token", "t", "bans"], 1);
    assert!(err.contains("HOST:PORT"), "{err}");
    // A port nothing listens on: the TCP port of a UDP socket we hold is not listened on.
    let err = fails(&["admin", &format!("127.0.0.1:{}", free_port()), "--token", "t", "chat", "hi"], 1);
    assert!(err.contains("cannot reach the dashboard"), "{err}");

    let dir = std::env::temp_dir().join(format!("dplay-cli-bans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bans = dir.join("bans.txt");
    std::fs::write(&bans, "# test\nname Mallory\n").unwrap();
    let port = free_port();
    let _host = host(port, &["--bans", bans.to_str().unwrap()]);
    let err = fails(&["join", &format!("127.0.0.1:{port}"), "--name", "mallory", "--timeout", "3"], 1);
    assert!(err.contains("DPNERR_HOSTREJECTEDCONNECTION"), "{err}");
    std::fs::write(&bans, "bogus line\n").unwrap();
    let err =
        fails(&["host", "--bind", "127.0.0.1:0", "--bans", bans.to_str().unwrap(), "--duration", "1"], 1);
    assert!(err.contains("line 1"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
