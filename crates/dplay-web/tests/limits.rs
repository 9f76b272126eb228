//! The dashboard server is safe by default: reads need the token unless it is public, each
//! client address is held to a request rate (429), a client that never finishes its headers
//! is disconnected (slowloris), headers and event streams are bounded. Plain HTTP/1.1 over a
//! `TcpStream` to a server on a loopback port the test opened.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use dplay_web::{WebConfig, WebServer};

const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
const TOKEN: &str = "s3cret+token";

fn server(config: WebConfig) -> WebServer {
    let (_loop_side, server_side) = dplay_web::link();
    WebServer::start_with(LOOPBACK, server_side, config).unwrap()
}

/// One request with extra header lines; returns the status line and the whole answer.
fn request(at: SocketAddr, path: &str, headers: &str) -> (u16, String) {
    let mut s = TcpStream::connect(at).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {at}\r\n{headers}Connection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let status = answer.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, answer)
}

#[test]
fn reads_need_the_token_unless_public() {
    let private = server(WebConfig::new(TOKEN.into()));
    let at = private.local_addr();
    let bearer = format!("Authorization: Bearer {TOKEN}\r\n");
    for path in ["/api/session", "/api/players", "/metrics"] {
        assert_eq!(request(at, path, "").0, 401, "{path} without the token");
        assert_eq!(request(at, path, "Authorization: Bearer wrong\r\n").0, 401, "{path}, wrong token");
        assert_eq!(request(at, path, &bearer).0, 200, "{path} with the token");
    }
    // The event stream takes it in the query (EventSource cannot set headers), URL-encoded.
    assert_eq!(request(at, "/api/session?token=s3cret%2Btoken", "").0, 200);
    assert_eq!(request(at, "/api/session?token=s3cret", "").0, 401);
    // The page holds no data: always served.
    assert_eq!(request(at, "/", "").0, 200);
    // Kicks need the token either way.
    let public = server(WebConfig::new(TOKEN.into()).public(true));
    let at = public.local_addr();
    assert_eq!(request(at, "/api/session", "").0, 200);
    assert_eq!(request(at, "/metrics", "").0, 200);
    let mut s = TcpStream::connect(at).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "POST /api/players/1/kick HTTP/1.1\r\nHost: {at}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
}

#[test]
fn each_address_is_held_to_its_rate() {
    let mut config = WebConfig::new(TOKEN.into()).public(true);
    config.rate = 2;
    config.burst = 5;
    let web = server(config);
    let at = web.local_addr();
    let statuses: Vec<u16> = (0..8).map(|_| request(at, "/api/session", "").0).collect();
    assert_eq!(statuses[..5], [200; 5], "the burst is served");
    let (status, answer) = request(at, "/api/session", "");
    assert_eq!(status, 429, "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1"), "{answer}");
    // Two a second come back.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(request(at, "/api/session", "").0, 200);
}

#[test]
fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let mut config = WebConfig::new(TOKEN.into()).public(true);
    config.header_timeout = Duration::from_millis(300);
    let web = server(config);
    let at = web.local_addr();
    // Slowloris: a request line and one header, then nothing more; and a silent connection.
    let mut slow = TcpStream::connect(at).unwrap();
    write!(slow, "GET /api/session HTTP/1.1\r\nHost: {at}\r\n").unwrap();
    let silent = TcpStream::connect(at).unwrap();
    for mut s in [slow, silent] {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let t = Instant::now();
        let mut rest = Vec::new();
        // Closed by the server: end of stream (perhaps after a 408), or a reset.
        let _ = s.read_to_end(&mut rest);
        let waited = t.elapsed();
        assert!(waited < Duration::from_secs(4), "still open after {waited:?}");
        let text = String::from_utf8_lossy(&rest);
        assert!(text.is_empty() || text.starts_with("HTTP/1.1 408"), "{text}");
    }
    // A client that keeps to the deadline is served.
    assert_eq!(request(at, "/api/session", "").0, 200);
}

#[test]
fn headers_are_bounded() {
    let web = server(WebConfig::new(TOKEN.into()).public(true));
    let at = web.local_addr();
    let big = format!("X-Filler: {}\r\n", "a".repeat(dplay_web::MAX_HEADER_BYTES));
    let (status, answer) = request(at, "/api/session", &big);
    assert!(status == 431 || status == 0, "{answer}");
    assert_eq!(request(at, "/api/session", "").0, 200);
}

#[test]
fn event_streams_are_capped() {
    let web = server(WebConfig::new(TOKEN.into()));
    let at = web.local_addr();
    let open = |path: &str| {
        let mut s = TcpStream::connect(at).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: {at}\r\n\r\n").unwrap();
        let mut reader = BufReader::new(s);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        (status, reader)
    };
    let path = format!("/api/events?token={}", TOKEN.replace('+', "%2B"));
    let streams: Vec<_> = (0..dplay_web::MAX_STREAMS).map(|_| open(&path)).collect();
    assert!(streams.iter().all(|(status, _)| status.starts_with("HTTP/1.1 200")));
    assert!(open(&path).0.starts_with("HTTP/1.1 503"));
    drop(streams);
    // A freed slot is counted back once the server notices the closed stream.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if open(&path).0.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "the closed streams were never counted back");
        std::thread::sleep(Duration::from_millis(200));
    }
}
