//! `dplay host --web` is private by default (issue 17 item 5): its reads need the printed
//! token, and `--web-public` opens them. A host on loopback ports this test chose, for a few
//! seconds.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::{Proc, free_port, spawn};
use serde_json::Value;

/// Starts `dplay host --web 0 --json` with `extra`; returns it with the dashboard's address
/// and token from its `web` event.
fn host(extra: &[&str]) -> (Proc, SocketAddr, String) {
    let bind = format!("127.0.0.1:{}", free_port());
    let mut args = vec!["host", "--json", "--bind", &bind, "--duration", "20", "--web", "0"];
    args.extend_from_slice(extra);
    let (host, lines) = spawn(&args);
    for line in lines {
        let v: Value = serde_json::from_str(&line.expect("UTF-8")).expect("JSON");
        if v["event"] == "web" {
            let url = v["url"].as_str().expect("url");
            let at = url.trim_start_matches("http://").trim_end_matches('/').parse().expect("an address");
            return (host, at, v["token"].as_str().expect("token").to_owned());
        }
    }
    panic!("no web event");
}

fn status(at: SocketAddr, path: &str, token: Option<&str>) -> u16 {
    let mut s = TcpStream::connect(at).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {at}\r\n{auth}Connection: close\r\n\r\n").expect("write");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

#[test]
fn reads_need_the_printed_token_unless_public() {
    let (_host, at, token) = host(&[]);
    assert!(at.ip().is_loopback(), "a port alone binds loopback: {at}");
    assert_eq!(status(at, "/api/players", None), 401);
    assert_eq!(status(at, "/metrics", None), 401);
    assert_eq!(status(at, "/api/players", Some(&token)), 200);
    assert_eq!(status(at, "/metrics", Some(&token)), 200);
    assert_eq!(status(at, "/", None), 200);

    let (_host, at, _) = host(&["--web-public"]);
    assert_eq!(status(at, "/api/players", None), 200);
    assert_eq!(status(at, "/metrics", None), 200);
}
