//! The dashboard's HTTP API against a DirectPlay 8 host and a joiner on loopback, with plain
//! HTTP/1.1 requests over a `TcpStream`: the session and players as JSON, the join and leave
//! events on the event stream, and a kick that needs the admin token.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::{players_until, request, request_with};
use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Runtime, RuntimeConfig};
use dplay_session::{EndReason, Event, SessionConfig};
use dplay_testkit::wait::wait_for;
use dplay_web::{Observed, WebServer};
use serde_json::Value;
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0);
const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
const TOKEN: &str = "test-token";
/// A name that would run script if a page inserted it as markup.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";

fn config(local: SocketAddr, name: &str, seed: u64) -> SessionConfig {
    let mut c = SessionConfig::new(APP, local, name);
    c.session_name = "web test".into();
    c.max_players = 8;
    c.rng_seed = seed;
    c
}

fn get_json(addr: SocketAddr, path: &str) -> Value {
    let (status, body) = request(addr, "GET", path, None);
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// Reads server-sent events until one named `name`; returns its data.
fn next_event(stream: &mut BufReader<TcpStream>, name: &str) -> Value {
    let mut current = String::new();
    loop {
        let mut line = String::new();
        assert!(stream.read_line(&mut line).unwrap() > 0, "event stream closed");
        let line = line.trim_end();
        if let Some(e) = line.strip_prefix("event: ") {
            current = e.to_owned();
        } else if let Some(data) = line.strip_prefix("data: ")
            && current == name
        {
            return serde_json::from_str(data).unwrap();
        }
    }
}

#[test]
fn session_players_events_and_kick() {
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let host: Runtime<Observed<Dp8Protocol>> = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Observed::new(Dp8Protocol::new(config(local, "host", 1), start), loop_side, start)
    })
    .unwrap();
    let web = WebServer::start(LOOPBACK, server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    host.command(Dp8Command::Host).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));

    let session = get_json(at, "/api/session");
    assert_eq!(session["name"], "web test");
    assert_eq!(session["mode"], "peer-to-peer");
    assert_eq!(session["max_players"], 8);
    assert_eq!(session["guid"].as_str().unwrap().len(), 36);
    assert_eq!(session["voice"], false);
    assert_eq!(request(at, "GET", "/api/voice", None).0, 404);

    // The event stream, opened before the join.
    let mut sse = TcpStream::connect(at).unwrap();
    sse.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(sse, "GET /api/events HTTP/1.1\r\nHost: {at}\r\n\r\n").unwrap();
    let mut sse = BufReader::new(sse);
    let mut status = String::new();
    sse.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");

    let joiner = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Dp8Protocol::new(config(local, HOSTILE, 2), Instant::now())
    })
    .unwrap();
    joiner.command(Dp8Command::Join { host: host.local_addr(), instance: None }).unwrap();
    let joined = next_event(&mut sse, "join");
    assert_eq!(joined["name"], HOSTILE);

    let players = players_until(at, None, |p| p.len() == 2);
    let guest = players.iter().find(|p| p["name"] == HOSTILE).unwrap();
    assert_eq!(guest["state"], "connected");
    assert_eq!(guest["dpnid"], joined["dpnid"]);
    assert_eq!(guest["address"], joiner.local_addr().to_string());
    assert!(guest["bytes_received"].as_u64().unwrap() > 0);
    let me = players.iter().find(|p| p["name"] == "host").unwrap();
    assert_eq!(me["state"], "local");
    assert_eq!(get_json(at, "/api/session")["players"], 2);
    assert_eq!(get_json(at, "/api/session")["host_migrations"], 0);

    // MS-DPDX 3.1.5.7: a DXDiag chat line reaches the stream with its sender's name. The host
    // lists the joiner before the joiner has its own name table: chat once it has joined.
    wait_for(joiner.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));
    joiner.command(Dp8Command::Chat("hello <b>all</b>".into())).unwrap();
    let chat = next_event(&mut sse, "chat");
    assert_eq!(chat["text"], "hello <b>all</b>");
    assert_eq!(chat["name"], HOSTILE);

    // Kicks need the token, a known player, and not the host itself.
    let kick = format!("/api/players/{}/kick", guest["dpnid"].as_str().unwrap());
    assert_eq!(request(at, "POST", &kick, None).0, 401);
    assert_eq!(request(at, "POST", &kick, Some("wrong")).0, 401);
    assert_eq!(request(at, "POST", "/api/players/0x7fffffff/kick", Some(TOKEN)).0, 404);
    let own = format!("/api/players/{}/kick", me["dpnid"].as_str().unwrap());
    assert_eq!(request(at, "POST", &own, Some(TOKEN)).0, 409);
    assert_eq!(request(at, "POST", &kick, Some(TOKEN)).0, 202);

    // MS-DPDX 3.1.5.5: the kicked player is out of the session; the others see it destroyed
    // by the host.
    let why = wait_for(joiner.events(), |e| match e {
        Dp8Event::Session(Event::SessionEnded { reason }) => Some(*reason),
        _ => None,
    });
    assert_eq!(why, EndReason::Terminated);
    let left = next_event(&mut sse, "leave");
    assert_eq!(left["name"], HOSTILE);
    assert_eq!(left["reason"], "DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER");
    players_until(at, None, |p| p.len() == 1);
}

#[test]
fn page_is_served_with_a_strict_policy_and_bodies_are_bounded() {
    let (_loop_side, server_side) = dplay_web::link();
    let web = WebServer::start(LOOPBACK, server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    let mut s = TcpStream::connect(at).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET / HTTP/1.1\r\nHost: {at}\r\nConnection: close\r\n\r\n").unwrap();
    let mut page = String::new();
    s.read_to_string(&mut page).unwrap();
    assert!(page.starts_with("HTTP/1.1 200"));
    assert!(page.contains("content-security-policy: default-src 'none'"));
    assert!(page.contains("textContent"));
    assert!(!page.contains("innerHTML"), "network strings go in as text only");
    assert!(page.contains(r#"<script src="/admin.js"></script>"#));
    let (status, admin) = request(at, "GET", "/admin.js", None);
    assert_eq!(status, 200);
    assert!(
        admin.contains("replaceChildren")
            && !admin.contains("innerHTML")
            && !admin.contains("insertAdjacentHTML")
    );

    // The vendored map files; no traffic on a session without the add-on.
    let (status, _) = request(at, "GET", "/assets/leaflet.js", None);
    assert_eq!(status, 200);
    assert_eq!(request(at, "GET", "/assets/nothing.js", None).0, 404);
    assert_eq!(request(at, "GET", "/api/traffic", None).0, 404);

    // A body over the limit is refused.
    let mut s = TcpStream::connect(at).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let body = vec![b'a'; dplay_web::MAX_BODY + 1];
    write!(
        s,
        "POST /api/players/1/kick HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    let _ = s.write_all(&body);
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

#[test]
fn connections_beyond_the_cap_wait_for_one_to_close() {
    let (_loop_side, server_side) = dplay_web::link();
    let web = WebServer::start(LOOPBACK, server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    let idle: Vec<TcpStream> =
        (0..dplay_web::MAX_CONNECTIONS).map(|_| TcpStream::connect(at).unwrap()).collect();
    let mut late = TcpStream::connect(at).unwrap();
    write!(late, "GET /api/session HTTP/1.1\r\nHost: {at}\r\nConnection: close\r\n\r\n").unwrap();
    late.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let mut byte = [0u8; 1];
    assert!(late.read(&mut byte).is_err(), "a connection over the cap was served");
    drop(idle);
    late.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut answer = String::new();
    late.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// The administration routes: bans refuse the next join with DPNERR_HOSTREJECTEDCONNECTION and
/// remove a banned player in the session; chat reaches the members; settings change the limit
/// the next join sees; all need the token and a well-formed body (docs/web-api.md).
#[test]
fn bans_chat_and_settings() {
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let host: Runtime<Observed<Dp8Protocol>> = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Observed::new(Dp8Protocol::new(config(local, "host", 11), start), loop_side, start)
    })
    .unwrap();
    let web = WebServer::start(LOOPBACK, server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    host.command(Dp8Command::Host).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));
    let joiner = |name: &str, seed| {
        let j = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
            Dp8Protocol::new(config(local, name, seed), Instant::now())
        })
        .unwrap();
        j.command(Dp8Command::Join { host: host.local_addr(), instance: None }).unwrap();
        j
    };
    let ended = |j: &Runtime<Dp8Protocol>| {
        wait_for(j.events(), |e| match e {
            Dp8Event::Session(Event::SessionEnded { reason }) => Some(*reason),
            _ => None,
        })
    };
    let bob = joiner("bob", 12);
    wait_for(bob.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));

    assert_eq!(request(at, "GET", "/api/bans", None).0, 401);
    assert_eq!(request_with(at, "POST", "/api/chat", None, r#"{"text":"hi"}"#).0, 401);
    assert_eq!(request_with(at, "POST", "/api/bans", Some(TOKEN), r#"{"nom":"x"}"#).0, 400);
    assert_eq!(request_with(at, "POST", "/api/bans", Some(TOKEN), r#"{"address":"nope"}"#).0, 400);
    assert_eq!(request_with(at, "POST", "/api/settings", Some(TOKEN), "{}").0, 400);

    // MS-DPDX 3.1.5.7: the operator's chat line reaches the member.
    let (status, _) = request_with(at, "POST", "/api/chat", Some(TOKEN), r#"{"text":"hello <b>bob</b>"}"#);
    assert_eq!(status, 202);
    let text = wait_for(bob.events(), |e| match e {
        Dp8Event::Session(Event::Chat { text, .. }) => Some(text.clone()),
        _ => None,
    });
    assert_eq!(text, "hello <b>bob</b>");

    // Refusals reach the event stream (opened now: it holds no history).
    let mut sse = TcpStream::connect(at).unwrap();
    sse.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(sse, "GET /api/events HTTP/1.1\r\nHost: {at}\r\n\r\n").unwrap();
    let mut sse = BufReader::new(sse);

    // A ban by name removes bob and refuses the next bob.
    let (status, list) = request_with(at, "POST", "/api/bans", Some(TOKEN), r#"{"name":"BOB"}"#);
    assert_eq!(status, 200, "{list}");
    assert_eq!(serde_json::from_str::<Value>(&list).unwrap()["names"][0], "bob");
    assert_eq!(ended(&bob), EndReason::Terminated);
    let again = joiner("Bob", 13);
    let refused = EndReason::Refused(dplay_session::DPNERR_HOSTREJECTEDCONNECTION);
    assert_eq!(ended(&again), refused);
    let event = next_event(&mut sse, "refused");
    assert_eq!(event["code"], "DPNERR_HOSTREJECTEDCONNECTION");
    assert_eq!(event["name"], "Bob");
    assert_eq!(event["address"], again.local_addr().to_string());
    let (status, list) = request_with(at, "DELETE", "/api/bans", Some(TOKEN), r#"{"name":"bob"}"#);
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&list).unwrap()["names"].as_array().unwrap().len(), 0);

    // Live settings: max players 1 (the host alone) refuses the next join.
    let (status, why) = request_with(at, "POST", "/api/settings", Some(TOKEN), r#"{"max_players":1}"#);
    assert_eq!(status, 202);
    assert!(why.contains("members are not told"), "{why}");
    let full = joiner("carol", 14);
    assert_eq!(ended(&full), EndReason::Refused(dplay_session::DPNERR_SESSIONFULL));
    let event = next_event(&mut sse, "refused");
    assert_eq!((event["code"].as_str(), event["name"].as_str()), (Some("DPNERR_SESSIONFULL"), Some("carol")));
    // Counted by code in /metrics (published with the next snapshot).
    let wanted = [
        "dplay_join_refusals_total{code=\"DPNERR_HOSTREJECTEDCONNECTION\"} 1",
        "dplay_join_refusals_total{code=\"DPNERR_SESSIONFULL\"} 1",
    ];
    common::metrics_until(at, None, &wanted);
    assert_eq!(get_json(at, "/api/session")["max_players"], 1);
}

/// An add-on host (`dplay fs host`) under the dashboard: the operator's chat line goes out as
/// CHAT_TEXT (seed 004), and a kick removes the player as on any DirectPlay 8 host.
#[test]
fn an_addon_host_chats_with_chat_text_and_kicks() {
    use dplay_addon::{ClientConfig, Dialect, HostConfig, HostPolicy, Role};
    use dplay_runtime::{AddonCommand, AddonEvent, AddonProtocol, AddonRole};
    let addon = |name: &str, seed, role| {
        Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
            AddonProtocol::new(config(local, name, seed), role, Instant::now())
        })
        .unwrap()
    };
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let role = AddonRole::Host(HostConfig::new(Dialect::Fs98, Role::Observer, HostPolicy::default()));
    let host: Runtime<Observed<AddonProtocol>> = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Observed::new(AddonProtocol::new(config(local, "host", 21), role, start), loop_side, start)
    })
    .unwrap();
    let web = WebServer::start(LOOPBACK, server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    host.command(AddonCommand::Session(Dp8Command::Host)).unwrap();
    let pilot = addon("pilot", 22, AddonRole::Client(ClientConfig::new(Role::Observer)));
    pilot
        .command(AddonCommand::Session(Dp8Command::Join { host: host.local_addr(), instance: None }))
        .unwrap();
    wait_for(pilot.events(), |e| {
        matches!(e, AddonEvent::Addon(dplay_addon::Event::Joined { .. })).then_some(())
    });

    let (status, _) = request_with(at, "POST", "/api/chat", Some(TOKEN), r#"{"text":"tower to all"}"#);
    assert_eq!(status, 202);
    let text = wait_for(pilot.events(), |e| match e {
        AddonEvent::Addon(dplay_addon::Event::Chat { text, .. }) => Some(text.to_text()),
        _ => None,
    });
    assert_eq!(text, "tower to all");

    let players = players_until(at, None, |p| p.len() == 2);
    let id = players.iter().find(|p| p["name"] == "pilot").unwrap()["dpnid"].as_str().unwrap().to_owned();
    assert_eq!(request(at, "POST", &format!("/api/players/{id}/kick"), Some(TOKEN)).0, 202);
    players_until(at, None, |p| p.len() == 1);
}
