//! The proof: positions at 4 Hz under loss, a refused join, a player turning observer
//! (seed 004 rows ADD_*_REQUEST, CHANGE_TO_*, ADD_PLAYER_REFUSED, POSITION_VELOCITY,
//! REQUEST_OBSERVER, OBSERVER_CHANGE_OK).

use std::time::Duration;

use dplay_addon::{
    Dialect, DisconnectReason, Event, HostPolicy, OverDp8Event, Packet, Position, Role, Velocity,
};
use dplay_session::{EndReason, Event as SessionEvent, SendFlags};
use dplay_sim::run_seeds;

use crate::support::{Kind, Net, assert_increasing, assert_silent_observer, assert_tracks, link};

const HOST: usize = 0;
const PLAYER_A: usize = 1;
const PLAYER_B: usize = 2;
const OBSERVER: usize = 3;

/// Seed 004: a host, two players and an observer join and exchange positions at 4 Hz for 60
/// simulated seconds under 5% loss; each sees the others' tracks, observers send nothing, and
/// no out-of-order position is accepted.
#[test]
fn positions_at_4_hz_for_60_s_under_5_percent_loss() {
    run_seeds(20, |seed| {
        let kinds = [
            Kind::Host(Role::Observer, HostPolicy::default()),
            Kind::Client(Role::Player),
            Kind::Client(Role::Player),
            Kind::Client(Role::Observer),
        ];
        let mut net = Net::new(seed, link(0.05), &kinds);
        net.start();
        assert!(
            net.run_until_addon_joined(&[PLAYER_A, PLAYER_B, OBSERVER], Duration::from_secs(30)),
            "seed {seed}: not every add-on joined"
        );
        net.sim.run_for(Duration::from_secs(60));

        for (at, others) in [
            (HOST, [PLAYER_A, PLAYER_B].as_slice()),
            (PLAYER_A, &[PLAYER_B]),
            (PLAYER_B, &[PLAYER_A]),
            (OBSERVER, &[PLAYER_A, PLAYER_B]),
        ] {
            for of in others {
                assert_tracks(&net, at, *of);
            }
            let counts = assert_increasing(&net, at);
            for of in others {
                // 240 sent in 60 s; 5% loss and the join leave well over 200.
                let n = counts.get(&net.node(*of).id()).copied().unwrap_or(0);
                assert!(n > 200, "seed {seed}: node {at} accepted {n} positions of node {of}");
            }
        }
        for at in [PLAYER_A, PLAYER_B, OBSERVER] {
            assert_silent_observer(&net, at, HOST);
        }
        for at in [HOST, PLAYER_A, PLAYER_B] {
            assert_silent_observer(&net, at, OBSERVER);
        }
        for i in [HOST, PLAYER_A, PLAYER_B, OBSERVER] {
            assert!(net.node(i).bridge.session().is_joined(), "seed {seed}: node {i} left");
        }
        replayed_position_is_rejected(&mut net, seed);
    });
}

/// DP8's send mask keeps most late unreliable frames from being delivered after a newer one
/// (MC-DPL8R 3.1.5.2.4), so the `packet_index` rule is exercised with a position of player A
/// that goes out again after newer ones: every receiver counts it stale and keeps A's track.
#[track_caller]
fn replayed_position_is_rejected(net: &mut Net, seed: u64) {
    let receivers = [HOST, PLAYER_B, OBSERVER];
    let stale = |net: &Net| receivers.map(|i| net.node(i).bridge.addon_stats().stale_positions);
    let before = stale(net);
    let old = Packet::PositionVelocity(Velocity::default().to_packet(Dialect::Fs98, 5, &Position::default()));
    let bytes = old.to_vec(Dialect::Fs98).expect("a FS98 packet");
    net.with(PLAYER_A, |n, now| {
        n.bridge.session_mut().send_all(now, &bytes, SendFlags::RELIABLE_SEQUENTIAL).expect("joined");
        n.bridge.handle_timeout(now);
    });
    net.sim.run_for(Duration::from_secs(2));
    let after = stale(net);
    for ((at, before), after) in receivers.into_iter().zip(before).zip(after) {
        assert_eq!(after, before + 1, "seed {seed}: node {at} did not reject the replay");
        assert_increasing(net, at);
        assert_tracks(net, at, PLAYER_A);
    }
}

/// Seed 004 row ADD_PLAYER_REFUSED: the host takes one player; the second is refused, tells
/// its user and leaves the DirectPlay session.
#[test]
fn a_refused_join_leaves_the_session() {
    run_seeds(20, |seed| {
        let mut policy = HostPolicy::default();
        policy.max_players = Some(1);
        let kinds =
            [Kind::Host(Role::Observer, policy), Kind::Client(Role::Player), Kind::Client(Role::Player)];
        let mut net = Net::new(seed, link(0.05), &kinds);
        net.with(HOST, |n, now| n.bridge.host_session(now)).expect("host");
        net.with(PLAYER_A, |n, now| n.bridge.join(now, crate::support::addr(HOST), None)).expect("join");
        assert!(net.run_until_addon_joined(&[PLAYER_A], Duration::from_secs(30)), "seed {seed}");
        net.with(PLAYER_B, |n, now| n.bridge.join(now, crate::support::addr(HOST), None)).expect("join");
        net.sim.run_for(Duration::from_secs(20));

        let refused = net.node(PLAYER_B);
        assert!(refused.saw(&Event::Refused { role: Role::Player }), "seed {seed}: {:?}", refused.events);
        assert!(refused.saw(&Event::Disconnect(DisconnectReason::Refused)));
        assert!(
            refused
                .events
                .contains(&OverDp8Event::Session(SessionEvent::SessionEnded { reason: EndReason::Left }))
        );
        assert!(!refused.bridge.session().is_joined());
        assert!(!refused.events.iter().any(|e| matches!(e, OverDp8Event::Addon(Event::Joined { .. }))));

        let b = refused.id();
        let host = net.node(HOST);
        assert!(host.saw(&Event::Denied { id: b, role: Role::Player }), "seed {seed}: {:?}", host.events);
        assert!(host.saw(&Event::PlayerLeft { id: b }), "seed {seed}: the host still has node 2");
        assert!(!host.bridge.session().name_table().contains(dplay_wire::dp8::dpnid::Dpnid(b.0)));
        assert!(net.node(PLAYER_A).bridge.session().is_joined());
    });
}

/// Seed 004 rows REQUEST_OBSERVER and OBSERVER_CHANGE_OK: a player becomes an observer, the
/// others learn it from CHANGE_TO_OBSERVER, and its positions stop.
#[test]
fn a_player_becomes_an_observer() {
    run_seeds(20, |seed| {
        let kinds = [
            Kind::Host(Role::Observer, HostPolicy::default()),
            Kind::Client(Role::Player),
            Kind::Client(Role::Player),
        ];
        let mut net = Net::new(seed, link(0.05), &kinds);
        net.start();
        assert!(net.run_until_addon_joined(&[PLAYER_A, PLAYER_B], Duration::from_secs(30)), "seed {seed}");
        net.sim.run_for(Duration::from_secs(5));
        assert_tracks(&net, PLAYER_B, PLAYER_A);

        net.with(PLAYER_A, |n, now| {
            n.flying = false;
            n.bridge.with_client(now, |c, now| c.request_observer(now))
        })
        .expect("a client")
        .expect("a player may ask");
        net.sim.run_for(Duration::from_secs(5));

        let a = net.node(PLAYER_A).id();
        assert!(
            net.node(PLAYER_A).saw(&Event::BecameObserver),
            "seed {seed}: {:?}",
            net.node(PLAYER_A).events
        );
        assert!(net.node(HOST).saw(&Event::Accepted { id: a, role: Role::Observer }));
        assert!(net.node(PLAYER_B).saw(&Event::PlayerType { id: a, role: Role::Observer }));
        assert_eq!(net.node(PLAYER_B).tracker().get(a).and_then(|r| r.role), Some(Role::Observer));

        let before = assert_increasing(&net, PLAYER_B).get(&a).copied();
        net.sim.run_for(Duration::from_secs(10));
        let after = assert_increasing(&net, PLAYER_B).get(&a).copied();
        assert_eq!(before, after, "seed {seed}: the new observer still sends positions");
        assert_tracks(&net, PLAYER_A, PLAYER_B);
    });
}

/// MC-DPL8CS 3.1.5.2: an existing player hears of a newcomer (DN_ADD_PLAYER) before its
/// connection to it is up, and its add-on asks the newcomer's type at once (seed 004 row
/// QUERY_PLAYER_TYPE): the bridge holds the message until the connection is up instead of
/// dropping it, so nothing waits for the 30 s retransmit.
#[test]
fn a_message_to_a_newcomer_is_held_until_it_is_reachable() {
    run_seeds(20, |seed| {
        let kinds = [
            Kind::Host(Role::Observer, HostPolicy::default()),
            Kind::Client(Role::Player),
            Kind::Client(Role::Player),
        ];
        let mut net = Net::new(seed, link(0.0), &kinds);
        net.with(HOST, |n, now| n.bridge.host_session(now)).expect("host");
        net.with(PLAYER_A, |n, now| n.bridge.join(now, crate::support::addr(HOST), None)).expect("join");
        assert!(net.run_until_addon_joined(&[PLAYER_A], Duration::from_secs(30)), "seed {seed}");
        net.with(PLAYER_B, |n, now| n.bridge.join(now, crate::support::addr(HOST), None)).expect("join");
        assert!(net.run_until_addon_joined(&[PLAYER_B], Duration::from_secs(10)), "seed {seed}");
        net.sim.run_for(Duration::from_secs(2));

        let a = net.node(PLAYER_A).bridge.stats();
        assert!(a.held >= 1, "seed {seed}: nothing was held: {a:?}");
        assert_eq!(a.send_failed, 0, "seed {seed}: a held message was dropped");
        let b = net.node(PLAYER_B).id();
        assert_eq!(net.node(PLAYER_A).tracker().get(b).and_then(|r| r.role), Some(Role::Player));
        let a_id = net.node(PLAYER_A).id();
        assert_eq!(net.node(PLAYER_B).tracker().get(a_id).and_then(|r| r.role), Some(Role::Player));
    });
}

/// A held message waits at most `HELD_KEEP` for its player: with the link between the two
/// players cut, the older one's instructed connect to the newcomer never completes
/// (MC-DPL8CS 3.1.5.2), and its QUERY_PLAYER_TYPE is dropped and counted.
#[test]
fn a_held_message_expires() {
    run_seeds(5, |seed| {
        let kinds = [
            Kind::Host(Role::Observer, HostPolicy::default()),
            Kind::Client(Role::Player),
            Kind::Client(Role::Player),
        ];
        let mut net = Net::new(seed, link(0.0), &kinds);
        net.with(HOST, |n, now| n.bridge.host_session(now)).expect("host");
        net.with(PLAYER_A, |n, now| n.bridge.join(now, crate::support::addr(HOST), None)).expect("join");
        assert!(net.run_until_addon_joined(&[PLAYER_A], Duration::from_secs(30)), "seed {seed}");
        net.partition(PLAYER_A, PLAYER_B);
        net.with(PLAYER_B, |n, now| n.bridge.join(now, crate::support::addr(HOST), None)).expect("join");
        net.sim.run_for(Duration::from_secs(1));
        let a = net.node(PLAYER_A).bridge.stats();
        assert!(a.held >= 1 && a.send_failed == 0, "seed {seed}: {a:?}");

        net.sim.run_for(dplay_addon::over_dp8::HELD_KEEP + Duration::from_secs(1));
        let a = net.node(PLAYER_A).bridge.stats();
        assert_eq!(a.send_failed, a.held, "seed {seed}: every held message expired: {a:?}");
        assert!(!net.node(PLAYER_B).bridge.session().is_joined(), "seed {seed}");
    });
}
