//! `dplay host --config FILE` as a user runs it: the file's options apply, the command line
//! wins over them, and a key that is not an option stops the command with one line naming the
//! key and the file. Network: a host on a loopback port, for one second.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use common::free_port;
use serde_json::Value;

fn config_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dplay-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the config");
    path
}

#[test]
fn the_file_applies_and_the_command_line_wins() {
    let port = free_port();
    let file = config_file(
        "host.toml",
        &format!(
            "session = \"from the file\"\nmax_players = 5\nbind = \"127.0.0.1:{port}\"\n\
             web = \"127.0.0.1:0\"\nweb_token = \"file-token\"\njson = true\nduration = \"1s\"\n"
        ),
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dplay"))
        .args(["host", "--config"])
        .arg(&file)
        .args(["--session", "from the command line"])
        .output()
        .expect("run dplay");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines: json = true came from the file"))
        .collect();
    let hosting = events.iter().find(|e| e["event"] == "hosting").expect("a hosting event");
    assert_eq!(hosting["session"], "from the command line");
    assert_eq!(hosting["addr"], format!("127.0.0.1:{port}"));
    let web = events.iter().find(|e| e["event"] == "web").expect("a web event");
    assert_eq!(web["token"], "file-token");
}

#[test]
fn an_unknown_key_is_one_line_naming_it_and_the_file() {
    let file = config_file("typo.toml", "sesion = \"x\"\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dplay"))
        .args(["host", "--config"])
        .arg(&file)
        .output()
        .expect("run dplay");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        format!("dplay: {}: unknown key `sesion` (not an option of `dplay host`)\n", file.display())
    );
}
