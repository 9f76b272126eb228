//! The traffic snapshot from a tracker (issue 16).

use std::time::Duration;

use super::*;
use crate::packet::{ChangePlayerPlane, PlayerInfo, PlayerInfoFlags, PositionLlapbh, ZString};
use crate::tracking::Position;

fn slew(index: u32, lat: f64) -> PositionLlapbh {
    let position =
        Position { latitude_deg: lat, longitude_deg: 8.0, altitude_m: 304.8, ..Position::default() };
    PositionLlapbh {
        application_time: 0,
        packet_index: index,
        reserved: 0,
        reduced_llapbh: position.to_reduced(),
        padding: Default::default(),
        unwritten: 2,
    }
}

/// A SLEWMODE-only aircraft (swift's) gets its ground speed from two positions; the title
/// comes from PLAYER_INFO_STRUCT until CHANGE_PLAYER_PLANE names one (FS-MULTIPLAYER.md 3.1).
#[test]
fn rows_from_slewmode_and_player_info() {
    #[allow(clippy::disallowed_methods)] // a test's base instant
    let t0 = Instant::now();
    let mut t = Tracker::new(crate::Dialect::Fs2004);
    let a = PlayerId(7);
    t.player_joined(a);
    t.set_info(
        a,
        PlayerInfo { flags: PlayerInfoFlags::empty(), aircraft: ZString::from_text("Boeing 737-400") },
    );
    t.position_llapbh(t0, a, &slew(1, 47.0));
    // 0.001° of latitude (111.13 m) in 1 s: 216 kt.
    let t1 = t0 + Duration::from_secs(1);
    t.position_llapbh(t1, a, &slew(2, 47.001));
    let s = TrafficSnapshot::new(&t, t1 + Duration::from_millis(500), |_| Some("swift".into()));
    let row = s.aircraft.first().unwrap();
    assert_eq!(
        (row.name.as_deref(), row.role, row.aircraft.as_deref()),
        (Some("swift"), Some(Role::Player), Some("Boeing 737-400"))
    );
    assert!((row.ground_speed_kt.unwrap() - 216.0).abs() < 0.5, "{row:?}");
    assert!((row.alt_ft.unwrap() - 1000.0).abs() < 0.01);
    assert_eq!((row.age_s, row.updates, row.on_ground), (Some(0.5), 2, Some(false)));
    let plane = ChangePlayerPlane {
        engine_type: EngineType::ENGINE_TYPE_JET,
        aircraft_name: ZString::from_text("B744"),
    };
    t.set_plane(a, plane);
    let s = TrafficSnapshot::new(&t, t1, |_| None);
    assert_eq!(s.aircraft.first().unwrap().aircraft.as_deref(), Some("B744"));
}
