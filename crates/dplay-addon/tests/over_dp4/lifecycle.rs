//! A refused join, a removed player and the end of the session over DirectPlay 4 (seed 004 rows
//! ADD_PLAYER_REFUSED, LEAVE_SESSION, HOST_QUIT; MC-DPL4CS 3.1.4.5, 3.1.5.14, 3.1.7.1).

use std::net::SocketAddr;
use std::time::Duration;

use dplay_addon::over_dp4::fs98_host_config;
use dplay_addon::{DisconnectReason, Event, HostPolicy, OverDp4Event, Role};
use dplay_session::dp4::{DPID_ALLPLAYERS, Dp4Event, EndReason, Role as SessionRole};
use dplay_sim::run_seeds;
use dplay_wire::dp4::session::SessionFlags;

use crate::net::{Links, listener};
use crate::support::{Kind, Net};

const HOST: usize = 0;

fn ended(net: &Net, i: usize) -> Option<EndReason> {
    net.node(i).events.iter().find_map(|e| match e {
        OverDp4Event::Session(Dp4Event::Ended(reason)) => Some(*reason),
        _ => None,
    })
}

fn two_players(seed: u64) -> Net {
    let kinds = [
        Kind::Host(Role::Observer, HostPolicy::default()),
        Kind::Client(Role::Player),
        Kind::Client(Role::Player),
    ];
    let mut net = Net::new(seed, Links::lossy(0.05), &kinds);
    net.start();
    assert!(net.run_until_addon_joined(&[1, 2], Duration::from_secs(30)), "seed {seed}");
    net.run_for(Duration::from_secs(2));
    net
}

/// Seed 004 row ADD_PLAYER_REFUSED: the host takes one player; the second is refused, tells
/// its user and leaves the DirectPlay session, whose players then disappear everywhere.
#[test]
fn a_refused_join_leaves_the_session() {
    run_seeds(10, |seed| {
        let mut policy = HostPolicy::default();
        policy.max_players = Some(1);
        let kinds =
            [Kind::Host(Role::Observer, policy), Kind::Client(Role::Player), Kind::Client(Role::Player)];
        let mut net = Net::new(seed, Links::lossy(0.05), &kinds);
        net.start();
        net.run_for(Duration::from_secs(5));

        let refused = net.node(2);
        assert!(refused.saw(&Event::Refused { role: Role::Player }), "seed {seed}: {:?}", refused.events);
        assert!(refused.saw(&Event::Disconnect(DisconnectReason::Refused)));
        assert_eq!(ended(&net, 2), Some(EndReason::Left));
        assert_eq!(refused.bridge.session().role(), SessionRole::Ended);
        assert!(!refused.events.iter().any(|e| matches!(e, OverDp4Event::Addon(Event::Joined { .. }))));

        let b = refused.id();
        let host = net.node(HOST);
        assert!(host.saw(&Event::Denied { id: b, role: Role::Player }), "seed {seed}: {:?}", host.events);
        assert!(host.saw(&Event::PlayerLeft { id: b }), "seed {seed}: the host still has node 2");
        assert!(host.bridge.session().players().get(&b.0).is_none());
        assert!(net.node(1).saw(&Event::Joined { role: Role::Player }));
        assert_eq!(net.node(1).bridge.session().role(), SessionRole::Member);
    });
}

/// Seed 004 row LEAVE_SESSION: the removed player closes its connection; the others see it go.
#[test]
fn the_host_removes_a_player() {
    run_seeds(10, |seed| {
        let mut net = two_players(seed);
        let victim = net.node(2).id();
        net.with(HOST, |n, now| n.bridge.with_host(now, |h, now| h.remove_player(now, victim)))
            .expect("a host");
        net.run_for(Duration::from_secs(5));

        assert!(net.node(2).saw(&Event::Disconnect(DisconnectReason::RemovedByHost)), "seed {seed}");
        assert_eq!(ended(&net, 2), Some(EndReason::Left));
        assert!(net.node(HOST).saw(&Event::PlayerLeft { id: victim }), "seed {seed}");
        assert!(net.node(1).tracker().get(victim).is_none(), "seed {seed}: node 1 still tracks node 2");
        assert_eq!(net.node(1).bridge.session().role(), SessionRole::Member);
    });
}

/// Seed 004 row HOST_QUIT and MC-DPL4CS 3.1.7.1: the host ends the session: HOST_QUIT, then it
/// leaves; without host migration the others' sessions end (HostLost).
#[test]
fn the_host_ends_the_session() {
    run_seeds(10, |seed| {
        let mut net = two_players(seed);
        net.with(HOST, |n, now| n.bridge.with_host(now, |h, now| h.end_session(now))).expect("a host");
        net.run_for(Duration::from_secs(5));

        assert!(net.node(HOST).saw(&Event::Disconnect(DisconnectReason::SessionEnded)));
        assert_eq!(ended(&net, HOST), Some(EndReason::Left));
        for i in [1, 2] {
            assert_eq!(ended(&net, i), Some(EndReason::HostLost), "seed {seed}: node {i}");
            // HOST_QUIT arrived before the host's DELETEPLAYERs and was ignored (seed 004).
            assert!(net.node(i).bridge.addon_stats().ignored >= 1, "seed {seed}: node {i}");
        }
        // Ended: the add-ons are no longer driven, so their positions stop.
        let sent = |net: &Net| [1, 2].map(|i| net.node(i).bridge.stats().sent);
        let before = sent(&net);
        net.run_for(Duration::from_secs(5));
        assert_eq!(sent(&net), before, "seed {seed}");
    });
}

/// A session with the wrong application GUID is not FS98's: enumeration finds nothing, so an
/// add-on never joins a session of another game (MC-DPL4CS 3.2.5.3).
#[test]
fn enumeration_ignores_other_games() {
    let kinds = [Kind::Host(Role::Observer, HostPolicy::default()), Kind::Client(Role::Player)];
    let mut net = Net::new(2, Links::clean(), &kinds);
    let other = dplay_session::dp4::HostConfig::new("Other", uuid::Uuid::from_u128(0x1234));
    net.with(HOST, |n, now| n.bridge.host_session(now, other)).expect("host");
    net.with(1, |n, now| {
        n.bridge.enum_sessions(now, Some(SocketAddr::new(listener(HOST).ip(), 47624)), None)
    });
    net.run_for(Duration::from_secs(6));
    let events = &net.node(1).events;
    assert!(!events.iter().any(|e| matches!(e, OverDp4Event::Session(Dp4Event::SessionFound(_)))));
    assert!(events.contains(&OverDp4Event::Session(Dp4Event::EnumDone)));
}

/// A DirectPlay 4 session that is full (its `MaxPlayers` counts application players, the add-on
/// host's own included) refuses the join itself; the add-on never starts (MC-DPL4CS 3.2.5.4,
/// 3.1.5.8).
#[test]
fn a_full_session_refuses_the_join() {
    let kinds = [Kind::Host(Role::Observer, HostPolicy::default()), Kind::Client(Role::Player)];
    let mut net = Net::new(3, Links::clean(), &kinds);
    let mut full = fs98_host_config("Full");
    full.max_players = 1;
    net.with(HOST, |n, now| n.bridge.host_session(now, full)).expect("host");
    net.with(1, |n, now| n.bridge.join(now, listener(HOST), None)).expect("join");
    net.run_for(Duration::from_secs(30));
    let events = &net.node(1).events;
    assert!(events.iter().any(|e| matches!(e, OverDp4Event::Session(Dp4Event::JoinFailed(_)))), "{events:?}");
    assert!(net.node(1).bridge.own_player().is_none());
    assert!(!events.iter().any(|e| matches!(e, OverDp4Event::Addon(_))), "{events:?}");
    assert_eq!(net.node(1).bridge.stats().sent, 0);
}

/// Hostile input: bytes that are no add-on packet, from a known player, are counted as
/// malformed and dropped; the session and the add-on go on (seed 004 header;
/// FS-MULTIPLAYER.md 1.1).
#[test]
fn a_malformed_packet_is_counted_and_dropped() {
    let mut net = two_players(5);
    for (guaranteed, garbage) in [(true, &[0x18, 0x10, 0, 0, 0xFF, 0, 0, 0][..]), (false, &[1, 2, 3][..])] {
        net.with(1, |n, now| {
            let own = n.id().0;
            n.bridge.session_mut().send(now, own, DPID_ALLPLAYERS, garbage, guaranteed).expect("joined");
            n.bridge.handle_timeout(now);
        });
    }
    net.run_for(Duration::from_secs(2));
    for (at, role) in [(HOST, SessionRole::Host), (2, SessionRole::Member)] {
        assert_eq!(net.node(at).bridge.addon_stats().malformed, 2, "node {at}");
        assert_eq!(net.node(at).bridge.session().role(), role);
    }
    crate::support::assert_tracks(&net, 2, 1);
}

/// MC-DPL4CS 2.2.45: in a session with NM (no message IDs) nobody can tell who sent a
/// message, so the add-on cannot work there: the bridge counts such messages and drops them,
/// and no join is ever confirmed.
#[test]
fn a_session_without_message_ids_is_unusable() {
    let kinds = [Kind::Host(Role::Observer, HostPolicy::default()), Kind::Client(Role::Player)];
    let mut net = Net::new(4, Links::clean(), &kinds);
    let mut nm = fs98_host_config("NM");
    nm.flags = SessionFlags::NO_MESSAGE_ID;
    net.with(HOST, |n, now| n.bridge.host_session(now, nm)).expect("host");
    net.with(1, |n, now| n.bridge.join(now, listener(HOST), None)).expect("join");
    net.run_for(Duration::from_secs(5));
    assert!(net.node(HOST).bridge.stats().unattributed >= 1);
    assert!(!net.node(1).saw(&Event::Joined { role: Role::Player }));
}
