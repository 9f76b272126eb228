//! What the dashboard's API tests share: one plain HTTP/1.1 request over a `TcpStream`, and
//! polling a JSON route until it holds (the loop publishes at most every 250 ms).
#![allow(dead_code)] // each test file uses its own part

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

/// One HTTP/1.1 request; returns the status and the body.
pub(crate) fn request(addr: SocketAddr, method: &str, path: &str, token: Option<&str>) -> (u16, String) {
    request_with(addr, method, path, token, "")
}

/// One HTTP/1.1 request with a JSON body; returns the status and the body.
pub(crate) fn request_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap();
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

/// Polls `path` until it answers 200 with JSON that `f` holds of; fails after five seconds.
#[track_caller]
pub(crate) fn json_until(
    addr: SocketAddr,
    path: &str,
    token: Option<&str>,
    f: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = request(addr, "GET", path, token);
        let value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if status == 200 && f(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "{path} never became as expected: {status} {body}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls `/metrics` until it has every one of `lines`; fails after five seconds.
#[track_caller]
pub(crate) fn metrics_until(addr: SocketAddr, token: Option<&str>, lines: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, metrics) = request(addr, "GET", "/metrics", token);
        if lines.iter().all(|want| metrics.lines().any(|l| l == *want)) {
            return;
        }
        assert!(Instant::now() < deadline, "/metrics never had {lines:?}:\n{metrics}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls `/api/players` until `f` holds of the list.
#[track_caller]
pub(crate) fn players_until(
    addr: SocketAddr,
    token: Option<&str>,
    f: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let players = json_until(addr, "/api/players", token, |v| v.as_array().is_some_and(|l| f(l)));
    players.as_array().cloned().unwrap_or_default()
}
