//! A DirectPlay 8 session and the add-on over real loopback sockets, one runtime per player.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::net::SocketAddr;
use std::time::Instant;

use dplay_addon::{ClientConfig, HostConfig, HostPolicy, Position, Role};
use dplay_runtime::{
    AddonCommand, AddonEvent, AddonProtocol, AddonRole, Dp8Command, Dp8Event, Dp8Protocol, GroupCommand,
    Runtime, RuntimeConfig,
};
use dplay_session::{Event, SendFlags, SessionConfig, TableChange};
use dplay_testkit::wait::wait_for;
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0);
const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

fn config(local: SocketAddr, name: &str, seed: u64) -> SessionConfig {
    let mut c = SessionConfig::new(APP, local, name);
    c.session_name = "loopback".into();
    c.rng_seed = seed;
    c
}

fn dp8(name: &str, seed: u64) -> Runtime<Dp8Protocol> {
    Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Dp8Protocol::new(config(local, name, seed), Instant::now())
    })
    .unwrap()
}

/// MC-DPLHP 3.1-3.2 and MC-DPL8CS 3.1.5.1: enumerate, join, exchange data, leave.
#[test]
fn enumerate_join_send_leave() {
    let host = dp8("host", 1);
    host.command(Dp8Command::Host).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));

    let seeker = dp8("seeker", 2);
    seeker.command(Dp8Command::EnumHosts { target: host.local_addr(), application_guid: None }).unwrap();
    let name = wait_for(seeker.events(), |e| match e {
        Dp8Event::Session(Event::HostFound { response, .. }) => {
            response.session_name.as_ref().map(|n| n.to_string_lossy())
        }
        _ => None,
    });
    assert_eq!(name, "loopback");

    let joiner = dp8("joiner", 3);
    joiner.command(Dp8Command::Join { host: host.local_addr(), instance: None }).unwrap();
    let table = wait_for(joiner.events(), |e| match e {
        Dp8Event::NameTable(t) => Some(t.clone()),
        _ => None,
    });
    let mut names: Vec<_> = table.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["host", "joiner"]);
    wait_for(host.events(), |e| match e {
        Dp8Event::Session(Event::PlayerAdded { name, .. }) => (name == "joiner").then_some(()),
        _ => None,
    });

    joiner
        .command(Dp8Command::SendAll { data: b"hello".to_vec(), flags: SendFlags::RELIABLE_SEQUENTIAL })
        .unwrap();
    let got = wait_for(host.events(), |e| match e {
        Dp8Event::Session(Event::Message { data, .. }) => Some(data.clone()),
        _ => None,
    });
    assert_eq!(got, b"hello");

    joiner.command(Dp8Command::Leave).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::PlayerRemoved { .. })).then_some(()));
    host.shutdown().unwrap();
}

/// MC-DPL8CS 3.4.5.2 through the runtime's group commands: a member creates a group, joins it
/// by name, and a send to the group reaches the other member and loops back to the sender; a
/// group name nobody created fails with DPNERR_INVALIDGROUP.
#[test]
fn group_commands() {
    let host = dp8("host", 4);
    host.command(Dp8Command::Host).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));
    let joiner = dp8("joiner", 5);
    joiner.command(Dp8Command::Join { host: host.local_addr(), instance: None }).unwrap();
    let me = wait_for(joiner.events(), |e| match e {
        Dp8Event::Session(Event::Joined { local, .. }) => Some(*local),
        _ => None,
    });
    let create = GroupCommand::Create { name: "crew".into(), data: Vec::new() };
    joiner.command(Dp8Command::Group(create)).unwrap();
    let group = wait_for(joiner.events(), |e| match e {
        Dp8Event::Session(Event::NameTable(TableChange::GroupCreated { group, .. })) => Some(*group),
        _ => None,
    });
    joiner.command(Dp8Command::Group(GroupCommand::JoinNamed("crew".into()))).unwrap();
    wait_for(host.events(), |e| match e {
        Dp8Event::Session(Event::NameTable(TableChange::MemberAdded { group: g, player })) => {
            (*g == group && *player == me).then_some(())
        }
        _ => None,
    });
    let send = GroupCommand::Send { group, data: b"crew".to_vec(), flags: SendFlags::RELIABLE };
    joiner.command(Dp8Command::Group(send)).unwrap();
    let from = wait_for(joiner.events(), |e| match e {
        Dp8Event::Session(Event::Message { from, data, .. }) if data == b"crew" => Some(*from),
        _ => None,
    });
    assert_eq!(from, me, "looped back");
    joiner.command(Dp8Command::Group(GroupCommand::JoinNamed("nobody's".into()))).unwrap();
    let error = wait_for(joiner.events(), |e| match e {
        Dp8Event::CommandFailed { command, error } => Some(format!("{command}: {error}")),
        _ => None,
    });
    assert!(error.starts_with("join group: DPNERR_INVALIDGROUP"), "{error}");
    host.shutdown().unwrap();
}

fn addon(name: &str, seed: u64, role: AddonRole) -> Runtime<AddonProtocol> {
    Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        AddonProtocol::new(config(local, name, seed), role, Instant::now())
    })
    .unwrap()
}

/// Seed 004: a player joins, is accepted, and its positions reach an observer.
#[test]
fn addon_player_positions_reach_observer() {
    let host_cfg = HostConfig::new(dplay_addon::Dialect::Fs98, Role::Observer, HostPolicy::default());
    let host = addon("host", 1, AddonRole::Host(host_cfg));
    host.command(AddonCommand::Session(Dp8Command::Host)).unwrap();
    let observer = addon("observer", 2, AddonRole::Client(ClientConfig::new(Role::Observer)));
    observer
        .command(AddonCommand::Session(Dp8Command::Join { host: host.local_addr(), instance: None }))
        .unwrap();
    wait_for(observer.events(), |e| {
        matches!(e, AddonEvent::Addon(dplay_addon::Event::Joined { role: Role::Observer })).then_some(())
    });

    let player = addon("player", 3, AddonRole::Client(ClientConfig::new(Role::Player)));
    let here =
        Position { latitude_deg: 47.5, longitude_deg: -122.3, altitude_m: 500.0, ..Position::default() };
    player.command(AddonCommand::SetPosition(here, None)).unwrap();
    player
        .command(AddonCommand::Session(Dp8Command::Join { host: host.local_addr(), instance: None }))
        .unwrap();
    let seen = wait_for(observer.events(), |e| match e {
        AddonEvent::Position { position, .. } => Some(*position),
        _ => None,
    });
    assert!((seen.latitude_deg - 47.5).abs() < 1e-3, "{seen:?}");
    assert!((seen.altitude_m - 500.0).abs() < 1.0, "{seen:?}");
}
