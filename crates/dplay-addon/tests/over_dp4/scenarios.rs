//! The proof over DirectPlay 4: a host, two players and an observer exchange positions
//! at 4 Hz under UDP loss, then leave (seed 004 rows ADD_*_REQUEST, CHANGE_TO_*,
//! QUERY_PLAYER_TYPE, POSITION_VELOCITY; FS-MULTIPLAYER.md 1.5; MC-DPL4CS 3.1.4.5, 3.1.5.14).

use std::time::Duration;

use dplay_addon::{Dialect, Event, HostPolicy, OverDp4Event, Packet, PlayerId, Position, Role, Velocity};
use dplay_session::dp4::{DPID_ALLPLAYERS, Dp4Event, EndReason};
use dplay_sim::run_seeds;

use crate::net::Links;
use crate::support::{Kind, Net, assert_increasing, assert_silent_observer, assert_tracks, name};

const HOST: usize = 0;
const PLAYER_A: usize = 1;
const PLAYER_B: usize = 2;
const OBSERVER: usize = 3;
const ALL: [usize; 4] = [HOST, PLAYER_A, PLAYER_B, OBSERVER];

fn four_nodes(seed: u64, links: Links) -> Net {
    let kinds = [
        Kind::Host(Role::Observer, HostPolicy::default()),
        Kind::Client(Role::Player),
        Kind::Client(Role::Player),
        Kind::Client(Role::Observer),
    ];
    let mut net = Net::new(seed, links, &kinds);
    net.start();
    assert!(
        net.run_until_addon_joined(&[PLAYER_A, PLAYER_B, OBSERVER], Duration::from_secs(30)),
        "seed {seed}: not every add-on joined"
    );
    net
}

/// Seed 004: a host, two players and an observer join FS98's session and exchange positions
/// at 4 Hz for 60 simulated seconds under 5% UDP loss (positions go non-guaranteed over UDP,
/// the handshake guaranteed over TCP); each sees the others' tracks under their DirectPlay
/// names, observers send nothing, and no out-of-order position is accepted. Then a player and
/// the observer leave and everyone sees them go.
#[test]
fn positions_at_4_hz_for_60_s_under_5_percent_loss() {
    run_seeds(10, |seed| {
        let mut net = four_nodes(seed, Links::lossy(0.05));
        net.run_for(Duration::from_secs(60));
        assert!(net.wires.stats.udp_lost > 0, "seed {seed}: the run must lose datagrams");

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
                // 240 sent in 60 s; 5% loss, 2% held back and the join leave well over 200.
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
        assert_names(&net, seed);
        replayed_position_is_rejected(&mut net, seed);
        leaves(&mut net, seed);
        for i in ALL {
            assert_eq!(net.node(i).bridge.session().stats().streams_rejected, 0, "seed {seed}: node {i}");
        }
    });
}

/// Every node knows every other add-on's DirectPlay player by its short name, and saw it join
/// as an application player (FS-MULTIPLAYER.md 1.5 steps 2, 6; MC-DPL4CS 3.1.5.12).
#[track_caller]
fn assert_names(net: &Net, seed: u64) {
    for at in ALL {
        for of in ALL.into_iter().filter(|of| *of != at) {
            let id = net.node(of).id();
            assert_eq!(net.node(at).bridge.player_name(id), Some(name(of)), "seed {seed}: {at} of {of}");
            let joined = Dp4Event::PlayerJoined { id: id.0, name: Some(name(of)), system: false };
            assert!(net.node(at).saw_session(&joined), "seed {seed}: node {at} never saw node {of} join");
        }
    }
}

/// Late datagrams are held back and overtaken on these links; the `packet_index` rule is also
/// proven with a position of player A sent again after newer ones, over TCP so that it
/// arrives: every receiver counts it stale and keeps A's track.
#[track_caller]
fn replayed_position_is_rejected(net: &mut Net, seed: u64) {
    let receivers = [HOST, PLAYER_B, OBSERVER];
    let stale = |net: &Net| receivers.map(|i| net.node(i).bridge.addon_stats().stale_positions);
    let before = stale(net);
    let old = Packet::PositionVelocity(Velocity::default().to_packet(Dialect::Fs98, 5, &Position::default()));
    let bytes = old.to_vec(Dialect::Fs98).expect("a FS98 packet");
    net.with(PLAYER_A, |n, now| {
        let own = n.id().0;
        n.bridge.session_mut().send(now, own, DPID_ALLPLAYERS, &bytes, true).expect("joined");
        n.bridge.handle_timeout(now);
    });
    net.run_for(Duration::from_secs(2));
    let after = stale(net);
    for ((at, before), after) in receivers.into_iter().zip(before).zip(after) {
        assert!(after > before, "seed {seed}: node {at} did not reject the replay");
        assert_increasing(net, at);
        assert_tracks(net, at, PLAYER_A);
    }
}

/// A player and the observer leave: their sessions end, the others see `PlayerLeft` for their
/// players and stop tracking them; the remaining player is still tracked (MC-DPL4CS 3.1.4.5,
/// 3.1.5.14).
#[track_caller]
fn leaves(net: &mut Net, seed: u64) {
    for gone in [PLAYER_B, OBSERVER] {
        let id = net.node(gone).id();
        net.with(gone, |n, now| {
            n.flying = false;
            n.bridge.with_client(now, |c, now| {
                c.leave(now);
                Ok(())
            })
        });
        net.run_for(Duration::from_secs(2));
        assert!(net.node(gone).saw_session(&Dp4Event::Ended(EndReason::Left)), "seed {seed}: {gone}");
        for at in ALL.into_iter().filter(|at| *at != gone && *at != PLAYER_B) {
            assert!(net.node(at).saw(&Event::PlayerLeft { id }), "seed {seed}: {at} missed {gone} leaving");
            assert!(net.node(at).tracker().get(id).is_none(), "seed {seed}: {at} still tracks {gone}");
            assert!(net.node(at).bridge.session().players().get(&id.0).is_none());
        }
    }
    net.run_for(Duration::from_secs(2));
    assert_tracks(net, HOST, PLAYER_A);
    assert_eq!(known_players(net, HOST), vec![net.node(PLAYER_A).id()], "seed {seed}");
}

fn known_players(net: &Net, at: usize) -> Vec<PlayerId> {
    net.node(at).tracker().iter().map(|(id, _)| id).collect()
}

/// FS-MULTIPLAYER.md 1.5 step 1: an add-on looks for sessions of GUID_FS6 and joins the one
/// found at the listener the answer names (MC-DPL4CS 3.1.4.1, 3.2.5.3).
#[test]
fn enumeration_finds_the_fs98_session() {
    let kinds = [Kind::Host(Role::Observer, HostPolicy::default()), Kind::Client(Role::Player)];
    let mut net = Net::new(1, Links::clean(), &kinds);
    net.with(HOST, |n, now| n.bridge.host_session(now, dplay_addon::over_dp4::fs98_host_config("FS98")))
        .expect("host");
    net.with(PLAYER_A, |n, now| n.bridge.enum_sessions(now, None, None));
    net.run_for(Duration::from_secs(6));
    let found: Vec<_> = net
        .node(PLAYER_A)
        .events
        .iter()
        .filter_map(|e| match e {
            OverDp4Event::Session(Dp4Event::SessionFound(f)) => Some(f.clone()),
            _ => None,
        })
        .collect();
    let [found] = found.as_slice() else { panic!("one session expected: {found:?}") };
    assert_eq!(found.desc.application_guid, dplay_addon::GUID_FS6);
    assert_eq!(found.name.as_deref(), Some("FS98"));
    assert_eq!(found.host, crate::net::listener(HOST));
    let host = found.host;
    net.with(PLAYER_A, |n, now| n.bridge.join(now, host, None)).expect("join");
    assert!(net.run_until_addon_joined(&[PLAYER_A], Duration::from_secs(5)));
    assert!(net.node(HOST).saw(&Event::Accepted { id: net.node(PLAYER_A).id(), role: Role::Player }));
}
