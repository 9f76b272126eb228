//! Running `dplay` as a user runs it, and reading what it printed.
#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead, BufReader, Lines, Write};
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Output, Stdio};

use serde_json::Value;

/// Runs `dplay args...`.
pub(crate) fn dplay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dplay")).args(args).output().expect("run dplay")
}

/// Runs `dplay args...` with `input` on its standard input.
pub(crate) fn dplay_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dplay"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run dplay");
    child.stdin.take().expect("stdin").write_all(input).expect("write stdin");
    child.wait_with_output().expect("dplay output")
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn json_lines(out: &Output) -> Vec<Value> {
    stdout(out).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

pub(crate) fn hex(s: &str) -> Vec<u8> {
    dplay_wire::hexdump::parse_hex(s).unwrap()
}

/// A path in this test target's temporary folder.
pub(crate) fn temp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// A loopback UDP port free a moment ago (the socket is closed before the command binds it).
pub(crate) fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").and_then(|s| s.local_addr()).expect("a free port").port()
}

/// A running `dplay`, killed when dropped.
pub(crate) struct Proc(pub(crate) Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `dplay args...` (standard input and error closed), killed when dropped, and the lines
/// of its standard output.
pub(crate) fn spawn(args: &[&str]) -> (Proc, Lines<BufReader<ChildStdout>>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dplay"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dplay");
    let stdout = child.stdout.take().expect("stdout");
    (Proc(child), BufReader::new(stdout).lines())
}
