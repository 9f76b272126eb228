//! The Flight Simulator add-on (FS98 dialect) over DirectPlay 4 on real loopback sockets: an
//! add-on host, a player found by enumeration under GUID_FS6, and an observer that sees the
//! player's positions; then the host ends the session (seed 004; FS-MULTIPLAYER.md 1.5;
//! MC-DPL4CS 2.1, 3.1.4.1, 3.1.4.2).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use dplay_addon::over_dp4::fs98_host_config;
use dplay_addon::{ClientConfig, Event, HostConfig, HostPolicy, Position, Role};
use dplay_runtime::{
    AddonDp4Command, AddonDp4Event, AddonDp4Protocol, AddonDp4Role, Dp4Binding, Dp4Event, Runtime,
};
use dplay_session::dp4::{Dp4Config, Dp4Event as SessionEvent, EndReason};
use dplay_testkit::wait::wait_for;

fn config(seed: u64) -> Dp4Config {
    Dp4Config::default().with_seed(seed)
}

fn joined_as(role: Role) -> impl FnMut(&AddonDp4Event) -> Option<()> {
    move |e| (e == &AddonDp4Event::Addon(Event::Joined { role })).then_some(())
}

/// A client of `role` named `name` that finds the session at `enum_socket` and joins it.
fn client(seed: u64, role: Role, name: &str, enum_socket: SocketAddr) -> Runtime<AddonDp4Protocol> {
    let binding = Dp4Binding::client(Ipv4Addr::LOCALHOST);
    let role_cfg = AddonDp4Role::Client(ClientConfig::new(role));
    let rt = AddonDp4Protocol::spawn(&binding, config(seed), role_cfg, name, None).unwrap();
    rt.command(AddonDp4Command::FindAndJoin { target: Some(enum_socket), password: None }).unwrap();
    wait_for(rt.events(), joined_as(role));
    rt
}

/// Seed 004: the observer tracks the player's positions under its DirectPlay name; the host
/// ending the session ends everyone's (HOST_QUIT, then DELETEPLAYER; MC-DPL4CS 3.1.7.1).
#[test]
fn a_player_and_an_observer_over_dp4() {
    // The enumeration socket on a free port, so the test never needs 47624.
    let mut binding = Dp4Binding::host(Ipv4Addr::LOCALHOST);
    binding.enum_port = Some(0);
    let host_role = AddonDp4Role::Host(HostConfig::new(
        dplay_addon::Dialect::Fs98,
        Role::Observer,
        HostPolicy::default(),
    ));
    let host = AddonDp4Protocol::spawn(&binding, config(1), host_role, "fs-host", None).unwrap();
    host.command(AddonDp4Command::Host(fs98_host_config("loopback"))).unwrap();
    wait_for(host.events(), |e| {
        matches!(e, AddonDp4Event::Dp4(Dp4Event::Session(SessionEvent::PlayerCreated { .. }))).then_some(())
    });
    let enum_socket = host.socket_addr(Dp4Binding::ENUM_SOCKET).unwrap();

    let observer = client(2, Role::Observer, "tower", enum_socket);
    let player = client(3, Role::Player, "pilot", enum_socket);
    let at =
        Position { latitude_deg: 47.5, longitude_deg: -122.3, altitude_m: 1000.0, ..Position::default() };
    player.command(AddonDp4Command::SetPosition(at, None)).unwrap();

    let (name, seen) = wait_for(observer.events(), |e| match e {
        AddonDp4Event::Position { name, position, .. } => Some((name.clone(), *position)),
        _ => None,
    });
    assert_eq!(name.as_deref(), Some("pilot"));
    assert!((seen.latitude_deg - 47.5).abs() < 1e-4 && (seen.altitude_m - 1000.0).abs() < 1.0, "{seen:?}");
    let positions = (0..4)
        .map(|_| wait_for(observer.events(), |e| matches!(e, AddonDp4Event::Position { .. }).then_some(())))
        .count();
    assert_eq!(positions, 4);

    host.command(AddonDp4Command::Leave).unwrap();
    for rt in [&observer, &player] {
        wait_for(rt.events(), |e| {
            (e == &AddonDp4Event::Dp4(Dp4Event::Session(SessionEvent::Ended(EndReason::HostLost))))
                .then_some(())
        });
    }
}

/// Enumeration that finds no FS98 session reports a failed join instead of waiting forever.
#[test]
fn finding_nothing_fails_the_join() {
    let probe = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let nowhere = probe.local_addr().unwrap();
    drop(probe);
    let mut fast = config(4);
    fast.enum_timeout = Duration::from_millis(300);
    let role = AddonDp4Role::Client(ClientConfig::new(Role::Player));
    let rt =
        AddonDp4Protocol::spawn(&Dp4Binding::client(Ipv4Addr::LOCALHOST), fast, role, "lost", None).unwrap();
    rt.command(AddonDp4Command::FindAndJoin { target: Some(nowhere), password: None }).unwrap();
    let error = wait_for(rt.events(), |e| match e {
        AddonDp4Event::Dp4(Dp4Event::CommandFailed { command: "join", error }) => Some(error.clone()),
        _ => None,
    });
    assert!(error.contains("no Flight Simulator 98 session"), "{error}");
}
