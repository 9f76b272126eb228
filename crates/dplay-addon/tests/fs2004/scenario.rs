//! The issue 16 proof over DirectPlay 8: an FS2004 session with our host, two swift-shaped
//! peers (40 Hz SLEWMODE + PARAMS, `data_size` 36 over 34 bytes), one of our FS2004 players and
//! an observer, 120 simulated seconds under 5% loss; then the host leaves, the session migrates,
//! and the new host still accepts a joiner.

use std::time::Duration;

use dplay_addon::packet::EngineType;
use dplay_addon::{Event, PlayerId, Role, TrafficSnapshot};
use dplay_session::Session;
use dplay_sim::run_seeds;

use crate::common::{self, DEG_PER_S};
use crate::nodes::{Kind, Net, OUR_TITLE, link};
use crate::swift::SWIFT_TITLE;

const HOST: usize = 0;
const PLAYER: usize = 1;
const SWIFT_A: usize = 2;
const SWIFT_B: usize = 3;
const OBSERVER: usize = 4;
const OURS: [usize; 3] = [HOST, PLAYER, OBSERVER];
const SWIFT: [usize; 2] = [SWIFT_A, SWIFT_B];

/// Metres per degree of latitude (FS's sphere) and of longitude at the tracks' latitudes.
const M_PER_DEG: f64 = 10_001_750.0 / 90.0;

/// Node `at` tracks swift peer `of` as a player, its last position exactly one that `of` sent
/// (within swift's sign-magnitude error, 1 m), received less than 2 s ago while `of` flies;
/// returns how many positions behind `of`'s latest it is.
#[track_caller]
fn assert_tracks_swift(net: &Net, seed: u64, at: usize, of: usize) -> u32 {
    let sent = &net.swift(of).sent;
    let remote = net.ours_node(at).tracker().get(net.player_id(of));
    let remote = remote.unwrap_or_else(|| panic!("seed {seed}: node {at} does not know swift peer {of}"));
    assert_eq!(remote.role, Some(Role::Player), "seed {seed}: node {at} on {of}");
    let fix = remote.fix.unwrap_or_else(|| panic!("seed {seed}: node {at} has no position of {of}"));
    let index = remote.last_packet_index.expect("an index with the fix");
    let truth = sent.get(&index).unwrap_or_else(|| panic!("seed {seed}: {of} never sent index {index}"));
    let north_m = (truth.latitude_deg - fix.position.latitude_deg).abs() * M_PER_DEG;
    let cos = truth.latitude_deg.to_radians().cos();
    let east_m = (truth.longitude_deg - fix.position.longitude_deg).abs() * M_PER_DEG * cos;
    assert!(north_m < 1.0 && east_m < 1.0, "seed {seed}: node {at} has {of} {north_m} m N, {east_m} m E off");
    assert!((truth.altitude_m - fix.position.altitude_m).abs() < 1.0);
    let age = net.sim.now().duration_since(fix.at);
    let flying = net.swift(of).flying;
    assert!(
        !flying || age < Duration::from_secs(2),
        "seed {seed}: node {at}: {of}'s last position is {age:?} old"
    );
    let latest = sent.keys().next_back().copied().unwrap_or(0);
    (latest - index) / 2
}

/// Node `at` tracks our player `of` close to its track ([`common::assert_tracks`]).
#[track_caller]
fn assert_tracks_ours(net: &Net, at: usize, of: usize) {
    let node = net.ours_node(at);
    let origin = net.ours_node(of).origin;
    common::assert_tracks(at, node.tracker(), of, net.player_id(of), origin, net.sim.now(), || {
        format!("stats {:?} {:?}", node.bridge.stats(), node.bridge.addon_stats())
    });
}

/// Every one of our nodes in `at` tracks every aircraft; returns each lag behind a swift peer,
/// in its updates.
#[track_caller]
fn assert_all_tracked(net: &Net, seed: u64, at: &[usize]) -> Vec<u32> {
    let mut lag = Vec::new();
    for &at in at {
        for of in SWIFT {
            lag.push(assert_tracks_swift(net, seed, at, of));
        }
        if at != PLAYER && net.ours_node(PLAYER).flying {
            assert_tracks_ours(net, at, PLAYER);
        }
    }
    lag
}

fn set_flying(net: &mut Net, flying: bool) {
    for of in SWIFT {
        net.swift_mut(of).flying = flying;
    }
    net.with(PLAYER, |n, _| n.flying = flying);
}

#[test]
fn fs2004_session_for_120_s_under_5_percent_loss_then_host_migration() {
    run_seeds(3, |seed| {
        let mut net = Net::new(seed, link(0.05));
        for kind in
            [Kind::Host, Kind::Ours(Role::Player), Kind::Swift, Kind::Swift, Kind::Ours(Role::Observer)]
        {
            net.add(kind);
        }
        net.start(HOST, HOST);
        // Our player first: the oldest peer, which takes over when the host leaves
        // (MC-DPL8CS 3.2.5.4).
        net.start(PLAYER, HOST);
        assert!(net.run_until_joined(&[PLAYER], Duration::from_secs(30)), "seed {seed}");
        for i in [SWIFT_A, SWIFT_B, OBSERVER] {
            net.start(i, HOST);
        }
        assert!(
            net.run_until_joined(&[PLAYER, SWIFT_A, SWIFT_B, OBSERVER], Duration::from_secs(30)),
            "seed {seed}"
        );
        net.sim.run_for(Duration::from_secs(2));

        // 120 s of flight, every aircraft checked every second at every one of our nodes.
        // A lag of one update is the one in flight (25 ms apart, 15 ms ± 10 ms away); more
        // is a loss being repaired (guaranteed, in order).
        let mut lags = Vec::new();
        for _ in 0..120 {
            net.sim.run_for(Duration::from_secs(1));
            lags.extend(assert_all_tracked(&net, seed, &OURS));
        }
        lags.sort_unstable();
        let at = |q: usize| lags.get(lags.len() * q / 100).copied().unwrap_or(0);
        let (median, p95, max) = (at(50), at(95), lags.last().copied().unwrap_or(0));
        assert!(
            median <= 1 && p95 <= 4 && max <= 40,
            "seed {seed}: lag median {median}, p95 {p95}, max {max}"
        );
        // Once the flow settles, every tracker holds each peer's very last position.
        set_flying(&mut net, false);
        net.sim.run_for(Duration::from_secs(5));
        assert!(assert_all_tracked(&net, seed, &OURS).iter().all(|l| *l == 0), "seed {seed}");
        for at in OURS {
            common::assert_increasing(at, &net.ours_node(at).accepted);
            if at != OBSERVER {
                let n = net.ours_node(at);
                common::assert_silent_observer(
                    at,
                    n.tracker(),
                    OBSERVER,
                    net.player_id(OBSERVER),
                    &n.accepted,
                );
            }
        }
        check_host(&net, seed);

        set_flying(&mut net, true);
        migrate(&mut net, seed);
    });
}

/// What the host saw: every aircraft with its title and engine, the observer as one, swift's
/// 36-over-34 packets all accepted, PARAMS ignored, and nothing sent: FS2004's host relays
/// nothing (FS-MULTIPLAYER.md 3.1).
#[track_caller]
fn check_host(net: &Net, seed: u64) {
    let host = net.ours_node(HOST);
    let stats = host.bridge.addon_stats();
    assert_eq!(stats.malformed, 0, "seed {seed}: {stats:?}");
    assert!(stats.ignored > 4000, "seed {seed}: PARAMS are ignored: {stats:?}");
    assert_eq!(host.bridge.stats().sent, 0, "seed {seed}: the host sent add-on packets");
    let now = net.sim.now();
    let snapshot = TrafficSnapshot::new(host.tracker(), now, |_| None);
    let row = |i: usize| {
        let id: PlayerId = net.player_id(i);
        snapshot.aircraft.iter().find(|a| a.id == id).unwrap_or_else(|| panic!("seed {seed}: no row for {i}"))
    };
    for of in SWIFT {
        let r = row(of);
        assert_eq!(
            (r.aircraft.as_deref(), r.engine_type),
            (Some(SWIFT_TITLE), Some(EngineType::ENGINE_TYPE_JET))
        );
        assert_eq!(r.on_ground, Some(false));
        // 0.001°/s north: 216 kt, measured from arrival times over 1-2 s (a repaired loss
        // shifts one arrival by up to a few hundred ms), and 0 kt once stopped.
        let kt = DEG_PER_S * M_PER_DEG / (1852.0 / 3600.0);
        assert!(r.ground_speed_kt.is_some_and(|g| g < 1.0 || (g - kt).abs() < kt * 0.1), "{r:?}");
        assert!((r.alt_ft.unwrap_or(0.0) - 1000.0 / 0.3048).abs() < 4.0, "{r:?}");
    }
    let r = row(PLAYER);
    assert_eq!(
        (r.aircraft.as_deref(), r.engine_type),
        (Some(OUR_TITLE), Some(EngineType::ENGINE_TYPE_PISTON))
    );
    let r = row(OBSERVER);
    assert_eq!((r.role, r.lat_deg), (Some(Role::Observer), None), "seed {seed}");
    for i in [PLAYER, SWIFT_A, SWIFT_B, OBSERVER] {
        assert!(host.saw(&Event::Accepted { id: net.player_id(i), role: row(i).role.expect("known") }));
    }
}

/// The host leaves; the oldest peer (our player) takes over the session and the add-on host's
/// duties; a new joiner is accepted and tracked, and tracks everyone.
#[track_caller]
fn migrate(net: &mut Net, seed: u64) {
    net.with(HOST, |n, now| n.bridge.with_session(now, Session::leave));
    net.sim.run_for(Duration::from_secs(10));
    let new_host = net.session(PLAYER).local_dpnid();
    for i in [PLAYER, SWIFT_A, SWIFT_B, OBSERVER] {
        assert!(net.session(i).is_joined(), "seed {seed}: node {i} left with the host");
        assert_eq!(net.session(i).host_dpnid(), new_host, "seed {seed}: node {i}");
    }
    assert!(net.ours_node(PLAYER).saw(&Event::BecameHost), "seed {seed}");
    assert!(net.ours_node(PLAYER).bridge.client_ref().is_some_and(|c| c.is_host()));

    let joiner = net.add(Kind::Ours(Role::Observer));
    net.start(joiner, PLAYER);
    assert!(
        net.run_until_joined(&[joiner], Duration::from_secs(30)),
        "seed {seed}: the joiner was not accepted"
    );
    net.sim.run_for(Duration::from_secs(5));
    let id = net.player_id(joiner);
    assert!(net.ours_node(PLAYER).saw(&Event::PlayerType { id, role: Role::Observer }), "seed {seed}");
    assert_all_tracked(net, seed, &[PLAYER, OBSERVER, joiner]);
}
