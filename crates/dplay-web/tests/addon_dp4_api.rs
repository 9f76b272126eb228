//! The dashboard of a Flight Simulator 98 add-on host (the add-on over DirectPlay 4) on
//! loopback: a player flies, `/api/players` (with its round trip and bytes) and
//! `/api/traffic` list it with its aircraft, a
//! chat line from the dashboard reaches it as the add-on's CHAT_TEXT_SEND (not DPSP_MSG_CHAT),
//! a live player limit reaches it with SESSIONDESCCHANGED, a kick removes it (DELETEPLAYER),
//! and a banned name is removed at its CREATEPLAYER (docs/decisions.md).
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use dplay_addon::over_dp4::fs98_host_config;
use dplay_addon::units::Attitude;
use dplay_addon::{ClientConfig, Dialect, Event, HostConfig, HostPolicy, Position, Role};
use dplay_runtime::{
    AddonDp4Command, AddonDp4Event, AddonDp4Protocol, AddonDp4Role, Dp4Binding, Dp4Event, Runtime,
};
use dplay_session::dp4::{Dp4Config, Dp4Event as SessionEvent, EndReason};
use dplay_web::{Observed, WebServer};
use serde_json::Value;

const TOKEN: &str = "fs98-token";

fn request(at: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(at).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap();
    (status, response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default())
}

/// Polls `path` until `f` holds of its JSON (the loop publishes at most every 250 ms).
#[track_caller]
fn json_until(at: SocketAddr, path: &str, f: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = request(at, "GET", path, "");
        let value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if status == 200 && f(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "{path} never became as expected: {status} {body}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[track_caller]
fn wait_for<T>(events: &Receiver<AddonDp4Event>, mut f: impl FnMut(&AddonDp4Event) -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = events.recv_timeout(left).expect("the awaited event never came");
        if let Some(t) = f(&event) {
            return t;
        }
    }
}

fn ended(e: &AddonDp4Event) -> Option<EndReason> {
    match e {
        AddonDp4Event::Dp4(Dp4Event::Session(SessionEvent::Ended(r))) => Some(*r),
        _ => None,
    }
}

/// An FS98 player named `name` joining the host whose listener is `host`.
fn pilot(seed: u64, host: SocketAddr, name: &str) -> Runtime<AddonDp4Protocol> {
    let role = AddonDp4Role::Client(ClientConfig::new(Role::Player));
    let rt = AddonDp4Protocol::spawn(
        &Dp4Binding::client(Ipv4Addr::LOCALHOST),
        Dp4Config::default().with_seed(seed),
        role,
        name,
        None,
    )
    .unwrap();
    rt.command(AddonDp4Command::Join { host, password: None }).unwrap();
    rt
}

#[test]
fn fs98_players_traffic_chat_kick_and_name_ban() {
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let mut binding = Dp4Binding::host(Ipv4Addr::LOCALHOST);
    binding.enum_port = Some(0);
    let mut policy = HostPolicy::default();
    policy.allow_observers = true;
    let role = AddonDp4Role::Host(HostConfig::new(Dialect::Fs98, Role::Observer, policy));
    let config = Dp4Config::default().with_seed(1);
    let host = AddonDp4Protocol::spawn_wrapped(&binding, config, role, "fs-host", None, |p| {
        Observed::new(p, loop_side, start)
    })
    .unwrap();
    let web = WebServer::start("127.0.0.1:0".parse().unwrap(), server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    host.command(AddonDp4Command::Host(fs98_host_config("fs98 web"))).unwrap();
    let listener = host.socket_addr(Dp4Binding::LISTENER).unwrap();
    let session = json_until(at, "/api/session", |s| s["hosting"] == true && s["addon"] == true);
    assert_eq!(session["protocol"], "DirectPlay 4");
    assert_eq!(session["name"], "fs98 web");

    let alice = pilot(2, listener, "alice");
    wait_for(alice.events(), |e| matches!(e, AddonDp4Event::Addon(Event::Joined { .. })).then_some(()));
    let attitude = Attitude { pitch_deg: 0.0, bank_deg: 0.0, heading_deg: 90.0 };
    let position = Position {
        latitude_deg: 47.5,
        longitude_deg: -122.25,
        altitude_m: 1000.0,
        attitude,
        on_ground: false,
    };
    alice.command(AddonDp4Command::SetPosition(position, None)).unwrap();

    // The round trip from the dashboard's PING, bytes through the runtime's sockets.
    let players = json_until(at, "/api/players", |p| {
        p.as_array().is_some_and(|p| {
            p.iter().any(|p| {
                p["name"] == "alice"
                    && p["rtt_ms"].is_u64()
                    && p["bytes_sent"].as_u64().is_some_and(|b| b > 0)
                    && p["bytes_received"].as_u64().is_some_and(|b| b > 0)
            })
        })
    });
    let row = players.as_array().unwrap().iter().find(|p| p["name"] == "alice").unwrap().clone();
    assert_eq!(row["state"], "connected");
    assert!(row["address"].as_str().unwrap().starts_with("127.0.0.1:"), "{row}");
    let traffic = json_until(at, "/api/traffic", |t| {
        t["aircraft"]
            .as_array()
            .is_some_and(|a| a.iter().any(|a| a["name"] == "alice" && a["lat_deg"].is_f64()))
    });
    let plane = traffic["aircraft"].as_array().unwrap().iter().find(|a| a["name"] == "alice").unwrap();
    assert_eq!(plane["role"], "player");
    assert!((plane["lat_deg"].as_f64().unwrap() - 47.5).abs() < 1e-3, "{plane}");
    assert_eq!(plane["dpnid"], row["dpnid"], "the map and the player list name the same DPID");

    // The FS98 add-on's own chat packet, CHAT_TEXT_SEND (seed 004).
    assert_eq!(request(at, "POST", "/api/chat", r#"{"text":"hello <pilots>"}"#).0, 202);
    let text = wait_for(alice.events(), |e| match e {
        AddonDp4Event::Addon(Event::Chat { text, .. }) => Some(text.to_text()),
        _ => None,
    });
    assert_eq!(text, "hello <pilots>");

    // MC-DPL4CS 2.2.51: the live limit reaches the player.
    assert_eq!(request(at, "POST", "/api/settings", r#"{"max_players":7}"#).0, 202);
    let max = wait_for(alice.events(), |e| match e {
        AddonDp4Event::Dp4(Dp4Event::Session(SessionEvent::SessionDescChanged(d))) => Some(d.max_players),
        _ => None,
    });
    assert_eq!(max, 7);
    json_until(at, "/api/session", |s| s["max_players"] == 7);

    // MC-DPL4CS 3.1.5.14: the kick deletes alice's instance.
    let kick = format!("/api/players/{}/kick", row["dpnid"].as_str().unwrap());
    assert_eq!(request(at, "POST", &kick, "").0, 202);
    assert_eq!(wait_for(alice.events(), ended), EndReason::Removed);
    json_until(at, "/api/traffic", |t| {
        t["aircraft"].as_array().is_some_and(|a| a.iter().all(|a| a["name"] != "alice"))
    });

    // A banned name is removed once its player is created (DP4 joins are unnamed).
    assert_eq!(request(at, "POST", "/api/bans", r#"{"name":"Mallory"}"#).0, 200);
    let mallory = pilot(3, listener, "mallory");
    assert_eq!(wait_for(mallory.events(), ended), EndReason::Removed);
    let metrics = request(at, "GET", "/metrics", "").1;
    assert!(metrics.contains("dplay_players "), "{metrics}");
}
