//! The dashboard of an add-on host (FS2004 dialect over DirectPlay 8) on loopback: a player
//! flies, `/api/session` says it is an add-on session, `/api/traffic` lists the player's
//! aircraft with its title, position and trail, and a kick removes it.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{json_until, request};
use dplay_addon::packet::{ChangePlayerPlane, EngineType, PlayerInfo, PlayerInfoFlags, ZString};
use dplay_addon::units::Attitude;
use dplay_addon::{ClientConfig, Dialect, GUID_FS2004, HostConfig, HostPolicy, Position, Role};
use dplay_runtime::{
    AddonCommand, AddonEvent, AddonProtocol, AddonRole, Dp8Command, Dp8Event, Runtime, RuntimeConfig,
};
use dplay_session::{EndReason, Event, SessionConfig};
use dplay_web::{Observed, WebServer};

const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
const TOKEN: &str = "test-token";
const TITLE: &str = "Boeing <737>-800";

fn config(local: SocketAddr, name: &str, info: PlayerInfo, seed: u64) -> SessionConfig {
    let mut c = SessionConfig::new(GUID_FS2004, local, name);
    c.session_name = "fs web test".into();
    c.player_data = info.to_bytes().to_vec();
    c.rng_seed = seed;
    c
}

#[test]
fn traffic_of_an_addon_host_and_a_kick() {
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let observer = PlayerInfo { flags: PlayerInfoFlags::OBSERVER, aircraft: ZString::default() };
    let mut policy = HostPolicy::default();
    policy.max_players = None;
    policy.allow_observers = true;
    let role = AddonRole::Host(HostConfig::new(Dialect::Fs2004, Role::Observer, policy));
    let host = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Observed::new(
            AddonProtocol::new(config(local, "fs-host", observer, 1), role, start),
            loop_side,
            start,
        )
    })
    .unwrap();
    let web = WebServer::start(LOOPBACK, server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    host.command(AddonCommand::Session(Dp8Command::Host)).unwrap();
    json_until(at, "/api/session", None, |s| s["addon"] == true && s["hosting"] == true);

    let mut client = ClientConfig::new(Role::Player);
    client.dialect = Dialect::Fs2004;
    client.plane = Some(ChangePlayerPlane {
        engine_type: EngineType::ENGINE_TYPE_JET,
        aircraft_name: ZString::from_text(TITLE),
    });
    let info = client.player_info();
    let pilot = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        AddonProtocol::new(config(local, "pilot", info, 2), AddonRole::Client(client), Instant::now())
    })
    .unwrap();
    pilot
        .command(AddonCommand::Session(Dp8Command::Join { host: host.local_addr(), instance: None }))
        .unwrap();
    let attitude = Attitude { pitch_deg: 0.0, bank_deg: 0.0, heading_deg: 270.0 };
    let position = Position {
        latitude_deg: 47.5,
        longitude_deg: -122.25,
        altitude_m: 1000.0,
        attitude,
        on_ground: false,
    };
    pilot.command(AddonCommand::SetPosition(position, None)).unwrap();

    let traffic = json_until(at, "/api/traffic", None, |t| {
        t["aircraft"].as_array().is_some_and(|a| a.iter().any(|a| a["lat_deg"].is_f64()))
    });
    let plane = traffic["aircraft"].as_array().unwrap().iter().find(|a| a["name"] == "pilot").unwrap();
    assert_eq!(plane["role"], "player");
    assert_eq!(plane["title"], TITLE, "titles are returned as sent, for the page to insert as text");
    assert!((plane["lat_deg"].as_f64().unwrap() - 47.5).abs() < 1e-3, "{plane}");
    assert!((plane["lon_deg"].as_f64().unwrap() + 122.25).abs() < 1e-3, "{plane}");
    assert!((plane["heading_deg"].as_f64().unwrap() - 270.0).abs() < 1.0, "{plane}");
    assert!(plane["trail"].as_array().is_some_and(|t| !t.is_empty()), "{plane}");

    let kick = format!("/api/players/{}/kick", plane["dpnid"].as_str().unwrap());
    assert_eq!(request(at, "POST", &kick, Some(TOKEN)).0, 202);
    let deadline = Instant::now() + Duration::from_secs(5);
    let why = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match pilot.events().recv_timeout(left).expect("the pilot was never removed") {
            AddonEvent::Session(Dp8Event::Session(Event::SessionEnded { reason })) => break reason,
            _ => continue,
        }
    };
    assert_eq!(why, EndReason::Terminated);
    json_until(at, "/api/traffic", None, |t| {
        t["aircraft"].as_array().is_some_and(|a| a.iter().all(|a| a["name"] != "pilot"))
    });
}
