//! The `dplay` command at second contact (issue 25): each item run as a user runs it, with
//! real processes on loopback ports these tests opened.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Proc, free_port};

fn dplay() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dplay"))
}

/// Item 1: a joiner's hostile name and chat reach the host's text output and log escaped: no
/// escape sequence, no bell, no forged line.
#[test]
fn remote_text_is_escaped_in_text_and_logs() {
    let port = free_port();
    let target = format!("127.0.0.1:{port}");
    let host = dplay()
        .args(["host", "--bind", &target, "--duration", "4", "--echo"])
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the host");
    std::thread::sleep(Duration::from_millis(700));
    let forged = "x\n[ 9.999s] player left: host (0x00000000), left\x1b[2J\x07";
    let join = dplay()
        .args(["join", &target, "--name", forged, "--send", "hi\x1b]0;owned\x07\nthere", "--duration", "1"])
        .env("RUST_LOG", "debug")
        .output()
        .expect("run the joiner");
    assert!(join.status.success(), "{}", String::from_utf8_lossy(&join.stderr));
    let host = host.wait_with_output().expect("the host's output");
    for (who, out) in [("host", &host), ("joiner", &join)] {
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let text = String::from_utf8_lossy(bytes);
            assert!(!text.contains(['\x1b', '\x07']), "{who} {stream} has a raw control: {text}");
            assert!(
                !text.lines().any(|l| l.starts_with("[ 9.999s]")),
                "{who} {stream} has a forged line: {text}"
            );
        }
    }
    let text = String::from_utf8_lossy(&host.stdout);
    assert!(text.contains(r"x\n[ 9.999s] player left"), "the name is shown escaped: {text}");
}

/// Item 3: dashboard settings that weaken it are refused or said.
#[test]
fn weak_dashboard_settings() {
    let refused = |args: &[&str], says: &str| {
        let out = dplay().args(args).output().expect("run dplay");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2).filter(|_| !args.contains(&"--bans")).or(Some(1)),
            "{args:?}: {err}"
        );
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(&["host", "--web", "0", "--web-token", "", "--duration", "0"], "the token is empty");
    refused(&["host", "--web", "0", "--web-token", "a b", "--duration", "0"], "spaces");
    let missing =
        std::env::temp_dir().join(format!("dplay-no-such-folder-{}", std::process::id())).join("bans.txt");
    refused(
        &["host", "--bind", "127.0.0.1:0", "--bans", missing.to_str().unwrap(), "--duration", "0"],
        "its folder does not exist",
    );
    // Exposed: said in text and JSON. localhost works as --bind takes it.
    let bind = format!("127.0.0.1:{}", free_port());
    let out = dplay()
        .args(["host", "--bind", &bind, "--web", "0.0.0.0:0", "--web-token", "t+1", "--duration", "0"])
        .output()
        .expect("run dplay");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("EXPOSED") && text.contains("#token=t%2B1"), "{text}");
    let bind = format!("127.0.0.1:{}", free_port());
    let out = dplay()
        .args(["host", "--json", "--bind", &bind, "--web", "localhost:0", "--duration", "0"])
        .output()
        .expect("run dplay");
    let text = String::from_utf8_lossy(&out.stdout);
    let web = text.lines().find(|l| l.contains("\"web\"")).unwrap_or_else(|| panic!("no web event: {text}"));
    assert!(web.contains("http://127.0.0.1:") && web.contains("\"exposed\":false"), "{web}");
}

/// JSON lines of a finished run.
fn events(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// A `dplay host --json` at `bind` for `secs`, its output read when it ends.
fn host_for(bind: &str, secs: &str, extra: &[&str]) -> std::process::Child {
    let mut args = vec!["host", "--json", "--bind", bind, "--duration", secs];
    args.extend_from_slice(extra);
    let child =
        dplay().args(&args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("start the host");
    std::thread::sleep(Duration::from_millis(700));
    child
}

/// Items 4 and 6: after a peer crashes, the next joiner with the default --timeout gets in
/// (the host removes the dead peer first), and the host reports the crash as `connection lost`.
#[test]
fn a_joiner_outlasts_a_crashed_peer() {
    let target = format!("127.0.0.1:{}", free_port());
    let host = host_for(&target, "40", &[]);
    let mut alice = dplay()
        .args(["join", &target, "--name", "alice", "--duration", "60"])
        .stdout(Stdio::null())
        .spawn()
        .expect("start alice");
    std::thread::sleep(Duration::from_secs(2));
    alice.kill().expect("SIGKILL alice");
    let _ = alice.wait();
    let bob = dplay().args(["join", &target, "--name", "bob", "--duration", "1"]).output().expect("run bob");
    assert!(bob.status.success(), "bob: {}", String::from_utf8_lossy(&bob.stderr));
    let mut host = host;
    let _ = host.kill();
    let host = host.wait_with_output().expect("the host's output");
    let left = events(&host).into_iter().find(|e| e["event"] == "player_left" && e["name"] == "alice");
    assert_eq!(left.map(|e| e["reason"].clone()), Some("connection lost".into()));
}

/// Items 8, 12, 16: IPv6 targets, port 0 is no target, and `enum` returns at the answer.
#[test]
fn targets() {
    let out = dplay().args(["join", "127.0.0.1:0"]).output().expect("run dplay");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("port 0"));

    let target = format!("127.0.0.1:{}", free_port());
    let _host = Proc(host_for(&target, "20", &[]));
    #[allow(clippy::disallowed_methods)] // the wait is the behaviour under test, far from its bound
    let started = std::time::Instant::now();
    let out = dplay().args(["enum", &target, "--timeout", "3"]).output().expect("run enum");
    assert!(out.status.success());
    assert!(started.elapsed() < Duration::from_millis(2500), "enum waited {:?}", started.elapsed());

    let port = free_port();
    let v6 = format!("[::1]:{port}");
    if std::net::UdpSocket::bind(("::1", 0)).is_err() {
        return; // no IPv6 loopback on this machine
    }
    let _host6 = Proc(host_for(&v6, "20", &[]));
    let out = dplay().args(["enum", &v6, "--json", "--timeout", "3"]).output().expect("run enum");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = dplay().args(["join", &v6, "--duration", "1"]).output().expect("run join");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("Address family"));
}

/// Item 13: a failed --join-group exits 1; so does unbanning a name that is not banned.
#[test]
fn honest_exit_codes() {
    let target = format!("127.0.0.1:{}", free_port());
    let web = format!("127.0.0.1:{}", free_port());
    let _host = Proc(host_for(&target, "20", &["--web", &web, "--web-token", "tok"]));
    let out =
        dplay().args(["join", &target, "--join-group", "nosuch", "--duration", "2"]).output().expect("join");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let out = dplay().args(["admin", &web, "--token", "tok", "unban", "nobody"]).output().expect("admin");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not banned"));
    let out = dplay().args(["admin", &web, "--token", "tok", "ban", "mallory"]).output().expect("admin");
    assert!(out.status.success());
    let out = dplay().args(["admin", &web, "--token", "tok", "unban", "Mallory"]).output().expect("admin");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Item 18: `dplay manpage fs-host` (the page's own name) works.
#[test]
fn nested_manpage() {
    let out = dplay().args(["manpage", "fs-host"]).output().expect("run dplay");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("dplay-fs-host"));
}

/// Item 14: a join that fails ends its JSON with `join_failed`; `session_ended` reasons are
/// those docs/json-events.md lists.
#[test]
fn json_for_tool_builders() {
    let nothing = format!("127.0.0.1:{}", free_port());
    let out = dplay().args(["join", &nothing, "--json", "--timeout", "1"]).output().expect("run join");
    assert_eq!(out.status.code(), Some(1));
    let last = events(&out).pop().expect("a JSON line");
    assert_eq!(last["event"], "join_failed", "{last}");
    assert!(last["error"].as_str().is_some_and(|e| e.contains("no answer")), "{last}");

    let target = format!("127.0.0.1:{}", free_port());
    let _host = Proc(host_for(&target, "20", &["--password", "right"]));
    let out = dplay()
        .args(["join", &target, "--json", "--password", "wrong", "--timeout", "3"])
        .output()
        .expect("run join");
    let ended = events(&out).into_iter().find(|e| e["event"] == "session_ended").expect("session_ended");
    let reason = ended["reason"].as_str().expect("a reason");
    let docs = include_str!("../../../docs/json-events.md");
    let documented = reason.split(" DPNERR_").next().expect("a prefix");
    assert!(docs.contains(&format!("`{documented} DPNERR_...`")), "`{reason}` is not in docs/json-events.md");
}

/// Item 7: `--client-server` and `--peer` force the kind; not both.
#[test]
fn forced_session_kind() {
    let out = dplay().args(["join", "127.0.0.1", "--client-server", "--peer"]).output().expect("run join");
    assert_eq!(out.status.code(), Some(2));
    let target = format!("127.0.0.1:{}", free_port());
    let _host = Proc(host_for(&target, "20", &["--client-server"]));
    let out = dplay()
        .args(["join", &target, "--json", "--client-server", "--duration", "1"])
        .output()
        .expect("run join");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let joined = events(&out).into_iter().find(|e| e["event"] == "joined").expect("joined");
    assert_eq!(joined["mode"], "client-server");
}

/// Item 11: `join --pcap` records the enumeration probe too, with concrete addresses; an
/// existing file is replaced aloud; `--pcap -` is refused.
#[test]
fn join_captures() {
    let out = dplay().args(["join", "127.0.0.1", "--pcap", "-", "--timeout", "1"]).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give a file name"));

    let target = format!("127.0.0.1:{}", free_port());
    let _host = Proc(host_for(&target, "20", &[]));
    let pcap = common::temp("second-contact-join.pcap");
    std::fs::write(&pcap, b"old").expect("an old file");
    let out = dplay()
        .args(["join", &target, "--bind", "0.0.0.0", "--pcap", pcap.to_str().unwrap(), "--duration", "1"])
        .output()
        .expect("run join");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("replacing"));
    let decoded = dplay().args(["decode", "--json", pcap.to_str().unwrap()]).output().expect("decode");
    let text = String::from_utf8_lossy(&decoded.stdout);
    assert!(
        text.contains("EnumQuery") || text.contains("ENUM_QUERY"),
        "no probe in the capture: {text:.2000}"
    );
    assert!(!text.contains("0.0.0.0"), "the bind address in the capture: {text:.2000}");
}

/// Item 18: periods and retries that would be raised silently are refused.
#[test]
fn no_silent_clamps() {
    for args in [
        &["join", "127.0.0.1", "--keepalive", "0"][..],
        &["join", "127.0.0.1", "--send-retries", "0"],
        &["host", "--stats-every", "1ms"],
    ] {
        let out = dplay().args(args).output().expect("run dplay");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// Item 18: a request's completion names the request, in text and JSON.
#[test]
fn completions_name_the_operation() {
    let target = format!("127.0.0.1:{}", free_port());
    let _host = Proc(host_for(&target, "20", &[]));
    let out = dplay()
        .args(["join", &target, "--create-group", "wing", "--duration", "1"])
        .output()
        .expect("run join");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("create group done") && text.contains("add to group done"), "{text}");
    assert!(!text.contains("operation "), "{text}");
    let out = dplay()
        .args(["join", &target, "--json", "--create-group", "wing2", "--duration", "1"])
        .output()
        .expect("run join");
    let done = events(&out).into_iter().find(|e| e["event"] == "completed").expect("completed");
    assert_eq!(done["command"], "create group", "{done}");
}

/// Item 18: a refused join is one line on the host's output, not also a WARN log line.
#[test]
fn a_refusal_is_said_once() {
    let target = format!("127.0.0.1:{}", free_port());
    let host = dplay()
        .args(["host", "--bind", &target, "--duration", "4", "--max-name", "6"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the host");
    std::thread::sleep(Duration::from_millis(700));
    let join =
        dplay().args(["join", &target, "--name", "toolongname", "--timeout", "3"]).output().expect("join");
    assert_eq!(join.status.code(), Some(1));
    let host = host.wait_with_output().expect("the host's output");
    let (out, err) = (String::from_utf8_lossy(&host.stdout), String::from_utf8_lossy(&host.stderr));
    assert!(out.contains("join refused: toolongname"), "{out}");
    assert!(!err.contains("join refused"), "said twice: {err}");
}
