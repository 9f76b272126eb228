//! `/metrics` against a DirectPlay 8 host and a joiner on loopback: the join, the traffic
//! each way and the leave with its reason show up in the Prometheus text.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Runtime, RuntimeConfig};
use dplay_session::{Event, SessionConfig};
use dplay_testkit::wait::wait_for;
use dplay_web::{Observed, WebConfig, WebServer};
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def1);
const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
const TOKEN: &str = "metrics-token";

fn config(local: SocketAddr, name: &str, seed: u64) -> SessionConfig {
    let mut c = SessionConfig::new(APP, local, name);
    c.session_name = "metrics test".into();
    c.max_players = 4;
    c.rng_seed = seed;
    c
}

/// `/metrics` with the token, as `name value` pairs of its sample lines.
fn scrape(at: SocketAddr) -> Vec<(String, u64)> {
    let mut s = TcpStream::connect(at).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("content-type: application/openmetrics-text"), "{answer}");
    let body = answer.split_once("\r\n\r\n").unwrap().1;
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').map(|(k, v)| (k.to_owned(), v.parse().unwrap_or(0))))
        .collect()
}

fn value(metrics: &[(String, u64)], name: &str) -> Option<u64> {
    metrics.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
}

/// Scrapes until `f` holds (the loop publishes every 250 ms).
#[track_caller]
fn scrape_until(at: SocketAddr, f: impl Fn(&[(String, u64)]) -> bool) -> Vec<(String, u64)> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let m = scrape(at);
        if f(&m) {
            return m;
        }
        assert!(Instant::now() < deadline, "metrics never became as expected: {m:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn joins_traffic_and_leaves_are_counted() {
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let host: Runtime<Observed<Dp8Protocol>> = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Observed::new(Dp8Protocol::new(config(local, "host", 1), start), loop_side, start)
    })
    .unwrap();
    let web = WebServer::start_with(LOOPBACK, server_side, WebConfig::new(TOKEN.into())).unwrap();
    let at = web.local_addr();
    host.command(Dp8Command::Host).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));
    let before = scrape_until(at, |m| value(m, "dplay_hosting") == Some(1));
    assert_eq!(value(&before, "dplay_players"), Some(1));
    assert_eq!(value(&before, "dplay_joins_total"), Some(0), "the host itself is not a join");
    assert_eq!(value(&before, "dplay_max_players"), Some(4));

    let joiner = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Dp8Protocol::new(config(local, "guest", 2), Instant::now())
    })
    .unwrap();
    joiner.command(Dp8Command::Join { host: host.local_addr(), instance: None }).unwrap();
    wait_for(joiner.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));
    let joined = scrape_until(at, |m| value(m, "dplay_joins_total") == Some(1));
    assert_eq!(value(&joined, "dplay_players"), Some(2));
    assert_eq!(value(&joined, "dplay_connections"), Some(1));
    for name in ["dplay_datagrams_received_total", "dplay_datagrams_sent_total"] {
        assert!(value(&joined, name).unwrap() >= 3, "{name}: the handshake and the join");
    }
    // Every datagram of the joiner's is at least a 4-byte DFRAME header.
    let datagrams = value(&joined, "dplay_datagrams_received_total").unwrap();
    assert!(value(&joined, "dplay_received_bytes_total").unwrap() >= 4 * datagrams);
    assert_eq!(value(&joined, "dplay_reassembly_held_bytes"), Some(0));

    joiner.command(Dp8Command::Leave).unwrap();
    let left = scrape_until(at, |m| value(m, "dplay_players") == Some(1));
    let reasons: Vec<&str> =
        left.iter().filter(|(k, _)| k.starts_with("dplay_leaves_total{")).map(|(k, _)| k.as_str()).collect();
    assert_eq!(reasons, ["dplay_leaves_total{reason=\"DPNDESTROYPLAYERREASON_NORMAL\"}"]);
    assert!(value(&left, "dplay_datagrams_received_total").unwrap() > datagrams, "counters only grow");
}
