//! The dashboard's API against a DirectPlay 4 host and a member on loopback: the Player List,
//! a kick (DELETEPLAYER: the member ends, removed), a ban of its address (DPERR_ACCESSDENIED
//! at the next join) and a live player limit (SESSIONDESCCHANGED at the member).
#![allow(clippy::disallowed_methods)] // real sockets, real clock

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use dplay_runtime::{Dp4Binding, Dp4Command, Dp4Event, Dp4Protocol, Runtime};
use dplay_session::dp4::{Dp4Config, Dp4Event as SessionEvent, EndReason, HostConfig, JoinError};
use dplay_testkit::wait::wait_for;
use dplay_web::{Observed, WebServer};
use serde_json::Value;
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x5bfdb060_06a4_11d0_9c4f_00a0c905425e);
const TOKEN: &str = "dp4-token";

/// One request with the admin token.
fn request(at: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    common::request_with(at, method, path, Some(TOKEN), body)
}

/// `/api/players` with the admin token, once `f` holds.
#[track_caller]
fn players_until(at: SocketAddr, f: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    common::players_until(at, Some(TOKEN), f)
}

fn member(seed: u64, host: SocketAddr) -> Runtime<Dp4Protocol> {
    let rt = Dp4Protocol::spawn(
        &Dp4Binding::client(Ipv4Addr::LOCALHOST),
        Dp4Config::default().with_seed(seed),
        None,
    )
    .unwrap();
    rt.command(Dp4Command::Join { host, password: None }).unwrap();
    rt
}

/// Creates our player once the join is done.
fn create(rt: &Runtime<Dp4Protocol>, name: &str) {
    wait_for(rt.events(), |e| matches!(e, Dp4Event::PlayerList(_)).then_some(()));
    rt.command(Dp4Command::CreatePlayer(name.into())).unwrap();
}

#[test]
fn dp4_players_kick_ban_and_limit() {
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let mut binding = Dp4Binding::host(Ipv4Addr::LOCALHOST);
    binding.enum_port = Some(0);
    let config = Dp4Config::default().with_seed(1);
    let host =
        Dp4Protocol::spawn_wrapped(&binding, config, None, |p| Observed::new(p, loop_side, start)).unwrap();
    let web = WebServer::start("127.0.0.1:0".parse().unwrap(), server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    host.command(Dp4Command::Host(HostConfig::new("dp4 web", APP))).unwrap();
    host.command(Dp4Command::CreatePlayer("host".into())).unwrap();
    let listener = host.socket_addr(Dp4Binding::LISTENER).unwrap();

    let bob = member(2, listener);
    create(&bob, "bob");
    let players = players_until(at, |p| p.iter().any(|p| p["name"] == "bob"));
    let session: Value = serde_json::from_str(&request(at, "GET", "/api/session", "").1).unwrap();
    assert_eq!(session["protocol"], "DirectPlay 4");
    assert_eq!(session["name"], "dp4 web");
    let row = players.iter().find(|p| p["name"] == "bob").unwrap();
    assert_eq!(row["state"], "connected");
    assert!(row["address"].as_str().unwrap().starts_with("127.0.0.1:"));

    // MC-DPL4CS 2.2.51: a live limit reaches the member.
    assert_eq!(request(at, "POST", "/api/settings", r#"{"max_players":9}"#).0, 202);
    let max = wait_for(bob.events(), |e| match e {
        Dp4Event::Session(SessionEvent::SessionDescChanged(d)) => Some(d.max_players),
        _ => None,
    });
    assert_eq!(max, 9);

    // MC-DPL4CS 3.1.5.14: the kick deletes bob's instance; bob is removed.
    let id = row["dpnid"].as_str().unwrap();
    assert_eq!(request(at, "POST", &format!("/api/players/{id}/kick"), "").0, 202);
    let why = wait_for(bob.events(), |e| match e {
        Dp4Event::Session(SessionEvent::Ended(r)) => Some(*r),
        _ => None,
    });
    assert_eq!(why, EndReason::Removed);
    players_until(at, |p| !p.iter().any(|p| p["name"] == "bob"));

    // A banned address is refused at the next join.
    assert_eq!(request(at, "POST", "/api/bans", r#"{"address":"127.0.0.1"}"#).0, 200);
    let carol = member(3, listener);
    let failed = wait_for(carol.events(), |e| match e {
        Dp4Event::Session(SessionEvent::JoinFailed(j)) => Some(*j),
        _ => None,
    });
    assert_eq!(failed, JoinError::Refused(dplay_session::DPERR_ACCESSDENIED));
    // The host reports the refusal, and the dashboard counts it by code.
    wait_for(host.events(), |e| {
        matches!(
            e,
            Dp4Event::Session(SessionEvent::JoinRefused { code: dplay_session::DPERR_ACCESSDENIED, .. })
        )
        .then_some(())
    });
    common::metrics_until(at, Some(TOKEN), &["dplay_join_refusals_total{code=\"DPERR_ACCESSDENIED\"} 1"]);
}
