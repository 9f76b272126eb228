//! The `dplay` command at second contact (issue 25): each item run as a user runs it, with
//! real processes on loopback ports these tests opened.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::free_port;

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
