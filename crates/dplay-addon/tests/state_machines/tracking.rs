//! Tracking other aircraft (seed 004 rows POSITION_LLAPBH, POSITION_VELOCITY, CHANGE_PLAYER_PLANE).

use dplay_addon::packet::{ChangePlayerPlane, EngineType, PositionLlapbh, PositionVelocity, ZString};
use dplay_addon::tracking::Accepted;
use dplay_addon::units::{METRES_PER_DEG, METRES_PER_FOOT};
use dplay_addon::{PlayerId, Position, Role, Tracker, Velocity};
use dplay_wire::Blob;

use crate::common::{at, t0};

const A: PlayerId = PlayerId(7);

fn pos() -> Position {
    Position { latitude_deg: 47.5, longitude_deg: -122.3, altitude_m: 100.5, ..Position::default() }
}

fn llapbh(packet_index: u32) -> PositionLlapbh {
    PositionLlapbh {
        application_time: 0,
        packet_index,
        reserved: 0,
        reduced_llapbh: pos().to_reduced(),
        padding: Blob::default(),
        unwritten: 0,
    }
}

fn velocity(packet_index: u32, v: Velocity) -> PositionVelocity {
    v.to_packet(dplay_addon::Dialect::Fs98, packet_index, &pos())
}

/// Seed 004 row POSITION_LLAPBH: valid only with a higher packet_index than the last one.
#[test]
fn seed_004_position_llapbh_packet_index_rule() {
    let (mut t, now) = (Tracker::default(), t0());
    assert_eq!(t.position_llapbh(now, A, &llapbh(5)), Accepted::Yes);
    assert_eq!(t.position_llapbh(now, A, &llapbh(5)), Accepted::Stale);
    assert_eq!(t.position_llapbh(now, A, &llapbh(4)), Accepted::Stale);
    assert_eq!(t.position_velocity(now, A, &velocity(3, Velocity::default())), Accepted::Stale);
    assert_eq!(t.position_velocity(now, A, &velocity(6, Velocity::default())), Accepted::Yes);
    assert_eq!(t.get(A).unwrap().last_packet_index, Some(6));
    // Indexes are per player.
    assert_eq!(t.position_llapbh(now, PlayerId(8), &llapbh(0)), Accepted::Yes);
}

/// Seed 004 row POSITION_LLAPBH: no collision for 10 s, reset by each LLAPBH; VELOCITY does not.
#[test]
fn seed_004_position_llapbh_collision_avoidance_window() {
    let (mut t, now) = (Tracker::default(), t0());
    t.set_role(A, Role::Player);
    assert!(t.can_collide(A, now));
    t.position_llapbh(now, A, &llapbh(1));
    assert!(!t.can_collide(A, at(now, 9.9)));
    t.position_llapbh(at(now, 8.0), A, &llapbh(2));
    assert!(!t.can_collide(A, at(now, 17.9)));
    t.position_velocity(at(now, 17.0), A, &velocity(3, Velocity::default()));
    assert!(t.can_collide(A, at(now, 18.0)));
    // A stale LLAPBH carries no valid contents and does not reset the window.
    t.position_llapbh(at(now, 18.0), A, &llapbh(1));
    assert!(t.can_collide(A, at(now, 18.0)));
    // Observers and unknown players are never collided with (seed 004 row PLAYER_CRASH).
    t.set_role(A, Role::Observer);
    assert!(!t.can_collide(A, at(now, 30.0)));
    assert!(!t.can_collide(PlayerId(99), now));
}

/// Seed 004 row POSITION_VELOCITY: positional extrapolation from the velocity vectors.
#[test]
fn seed_004_position_velocity_extrapolation() {
    let (mut t, now) = (Tracker::default(), t0());
    let v = Velocity { north_ft_s: 100.0, east_ft_s: 0.0, up_ft_s: 10.0, ground_ft_s: 100.0 };
    t.position_velocity(now, A, &velocity(1, v));
    let p = t.extrapolate(A, at(now, 10.0)).unwrap();
    let start = Position::from_reduced(&pos().to_reduced());
    let dlat = 1000.0 * METRES_PER_FOOT / METRES_PER_DEG;
    assert!((p.latitude_deg - start.latitude_deg - dlat).abs() < 1e-9, "{p:?}");
    assert!((p.longitude_deg - start.longitude_deg).abs() < 1e-12);
    assert!((p.altitude_m - start.altitude_m - 100.0 * METRES_PER_FOOT).abs() < 1e-9);
    // An LLAPBH fix stays where it is.
    t.position_llapbh(now, A, &llapbh(2));
    assert_eq!(t.extrapolate(A, at(now, 10.0)), Some(start));
    assert_eq!(t.extrapolate(PlayerId(1), now), None);
}

/// East velocity at 60° north covers twice the degrees it would at the equator.
#[test]
fn extrapolation_east_scales_with_latitude() {
    let (mut t, now) = (Tracker::default(), t0());
    let mut p = velocity(1, Velocity { east_ft_s: 100.0, ..Velocity::default() });
    p.reduced_llapbh =
        Position { latitude_deg: 60.0, longitude_deg: 179.99, ..Position::default() }.to_reduced();
    t.position_velocity(now, A, &p);
    let moved = t.extrapolate(A, at(now, 100.0)).unwrap();
    let expect = 179.99 + 2.0 * 10_000.0 * METRES_PER_FOOT / METRES_PER_DEG - 360.0;
    assert!((moved.longitude_deg - expect).abs() < 1e-6, "{moved:?} vs {expect}");
}

/// Seed 004 row CHANGE_PLAYER_PLANE: each player's plane and engine type; forgotten on leave.
#[test]
fn seed_004_change_player_plane_tracked() {
    let mut t = Tracker::default();
    t.player_joined(A);
    assert_eq!(t.get(A).unwrap().role, None);
    let plane = ChangePlayerPlane {
        engine_type: EngineType::ENGINE_TYPE_HELO_TURBINE,
        aircraft_name: ZString::new(b"Bell 206B").unwrap(),
    };
    t.set_plane(A, plane.clone());
    assert_eq!(t.get(A).unwrap().plane, Some(plane));
    assert!(t.player_left(A));
    assert!(!t.player_left(A));
    assert!(t.get(A).is_none());
}

/// Issue 16: FS2004 has no handshake, so a peer of unknown type that sends positions is a
/// player; in FS98 only the handshake settles a type.
#[test]
fn fs2004_positions_make_a_player() {
    let now = t0();
    let mut t = Tracker::new(dplay_addon::Dialect::Fs2004);
    t.position_llapbh(now, A, &llapbh(1));
    assert_eq!(t.get(A).and_then(|r| r.role), Some(Role::Player));
    let mut t = Tracker::default();
    t.position_llapbh(now, A, &llapbh(1));
    assert_eq!(t.get(A).and_then(|r| r.role), None);
}

/// Issue 16 / FS-MULTIPLAYER.md 3.4 "Velocities": FS2004's ground_velocity is m/s × 65536
/// (swift's reader, FSUIPC 02B4), FS98's ft/s × 65536 (seed 004 row POSITION_VELOCITY).
#[test]
fn ground_velocity_unit_per_dialect() {
    use dplay_addon::Dialect;
    let v = Velocity { ground_ft_s: 100.0 / METRES_PER_FOOT, ..Velocity::default() };
    let fs2004 = v.to_packet(Dialect::Fs2004, 1, &pos());
    assert_eq!(fs2004.ground_velocity, 100 << 16);
    let fs98 = v.to_packet(Dialect::Fs98, 1, &pos());
    assert_eq!(fs98.ground_velocity, 21_501_312); // 328.084 ft/s × 65536
    assert!((Velocity::from_packet(Dialect::Fs2004, &fs2004).ground_ft_s - v.ground_ft_s).abs() < 1e-3);
}
