//! The dashboard of a Flight Simulator 98 add-on host (the add-on over DirectPlay 4) on
//! loopback: a player flies, `/api/players` (with its round trip and bytes) and
//! `/api/traffic` list it with its aircraft, a
//! chat line from the dashboard reaches it as the add-on's CHAT_TEXT_SEND (not DPSP_MSG_CHAT),
//! a live player limit reaches it with SESSIONDESCCHANGED, a kick removes it (DELETEPLAYER),
//! and a banned name is removed at its CREATEPLAYER (docs/decisions.md).
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use dplay_addon::over_dp4::fs98_host_config;
use dplay_addon::units::Attitude;
use dplay_addon::{ClientConfig, Dialect, Event, HostConfig, HostPolicy, Position, Role};
use dplay_runtime::{
    AddonDp4Command, AddonDp4Event, AddonDp4Protocol, AddonDp4Role, Dp4Binding, Dp4Event, Runtime,
};
use dplay_session::dp4::{Dp4Config, Dp4Event as SessionEvent, EndReason};
use dplay_testkit::wait::wait_for;
use dplay_web::{Observed, WebServer};

mod common;

use common::{json_until, request, request_with};

const TOKEN: &str = "fs98-token";

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
    let session = json_until(at, "/api/session", Some(TOKEN), |s| s["hosting"] == true && s["addon"] == true);
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
    let players = json_until(at, "/api/players", Some(TOKEN), |p| {
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
    let traffic = json_until(at, "/api/traffic", Some(TOKEN), |t| {
        t["aircraft"]
            .as_array()
            .is_some_and(|a| a.iter().any(|a| a["name"] == "alice" && a["lat_deg"].is_f64()))
    });
    let plane = traffic["aircraft"].as_array().unwrap().iter().find(|a| a["name"] == "alice").unwrap();
    assert_eq!(plane["role"], "player");
    assert!((plane["lat_deg"].as_f64().unwrap() - 47.5).abs() < 1e-3, "{plane}");
    assert_eq!(plane["dpnid"], row["dpnid"], "the map and the player list name the same DPID");

    // The FS98 add-on's own chat packet, CHAT_TEXT_SEND (seed 004).
    assert_eq!(request_with(at, "POST", "/api/chat", Some(TOKEN), r#"{"text":"hello <pilots>"}"#).0, 202);
    let text = wait_for(alice.events(), |e| match e {
        AddonDp4Event::Addon(Event::Chat { text, .. }) => Some(text.to_text()),
        _ => None,
    });
    assert_eq!(text, "hello <pilots>");

    // MC-DPL4CS 2.2.51: the live limit reaches the player.
    assert_eq!(request_with(at, "POST", "/api/settings", Some(TOKEN), r#"{"max_players":7}"#).0, 202);
    let max = wait_for(alice.events(), |e| match e {
        AddonDp4Event::Dp4(Dp4Event::Session(SessionEvent::SessionDescChanged(d))) => Some(d.max_players),
        _ => None,
    });
    assert_eq!(max, 7);
    json_until(at, "/api/session", Some(TOKEN), |s| s["max_players"] == 7);

    // MC-DPL4CS 3.1.5.14: the kick deletes alice's instance.
    let kick = format!("/api/players/{}/kick", row["dpnid"].as_str().unwrap());
    assert_eq!(request(at, "POST", &kick, Some(TOKEN)).0, 202);
    assert_eq!(wait_for(alice.events(), ended), EndReason::Removed);
    json_until(at, "/api/traffic", Some(TOKEN), |t| {
        t["aircraft"].as_array().is_some_and(|a| a.iter().all(|a| a["name"] != "alice"))
    });

    // A banned name is removed once its player is created (DP4 joins are unnamed).
    assert_eq!(request_with(at, "POST", "/api/bans", Some(TOKEN), r#"{"name":"Mallory"}"#).0, 200);
    let mallory = pilot(3, listener, "mallory");
    assert_eq!(wait_for(mallory.events(), ended), EndReason::Removed);
    let metrics = request(at, "GET", "/metrics", Some(TOKEN)).1;
    assert!(metrics.contains("dplay_players "), "{metrics}");
}
