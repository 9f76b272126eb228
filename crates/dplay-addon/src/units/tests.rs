use proptest::prelude::*;

use super::*;

#[track_caller]
fn fixed(v: Fixed48, i: i32, f: u16) {
    assert_eq!((v.i, v.f), (i, f), "expected ({i}, {f}), got {v:?}");
}

/// FS-MULTIPLAYER.md 3.4 test vectors, two's-complement column: 47.5°, −122.3°, 100.5 m.
#[test]
fn fs_multiplayer_3_4_vector_seattle() {
    fixed(latitude_from_deg(47.5), 5_278_701, 25486);
    fixed(longitude_from_deg(-122.3), -1_459_095_835, 54468);
    fixed(altitude_from_m(100.5), 100, 32768);
}

/// FS-MULTIPLAYER.md 3.4 test vectors, two's-complement column: −33.946111°, 151.177222°, 6 m.
#[test]
fn fs_multiplayer_3_4_vector_sydney() {
    fixed(latitude_from_deg(-33.946_111), -3_772_451, 54108);
    fixed(longitude_from_deg(151.177_222), 1_803_614_512, 12767);
    fixed(altitude_from_m(6.0), 6, 0);
}

/// Issue 16 / FS-MULTIPLAYER.md 3.4 (swift-style column): swift's sign-magnitude split of a
/// negative coordinate, read as two's complement, is off by less than one integer unit: 0.35 m
/// of latitude at Sydney (−3772450, 11428), 2 mm of longitude at Seattle (−1459095834, 11068).
/// We accept it as it is (docs/decisions.md "Fixed-point sign").
#[test]
fn swift_sign_magnitude_is_within_a_metre() {
    let lat = latitude_deg(Fixed48 { i: -3_772_450, f: 11428 });
    let off_m = (lat + 33.946_111).abs() * LAT_UNITS_PER_DEG;
    assert!(off_m < 1.0, "{off_m} m");
    let lon = longitude_deg(Fixed48 { i: -1_459_095_834, f: 11068 });
    let off_m = (lon + 122.3).abs() * METRES_PER_DEG * 47.5_f64.to_radians().cos();
    assert!(off_m < 0.01, "{off_m} m");
}

/// FS-MULTIPLAYER.md 3.4: −3.25 m is (−4, 49152) and decodes back to −3.25 (swift's
/// sign-magnitude (−3, 49152) would decode to −2.25).
#[test]
fn fs_multiplayer_3_4_negative_altitude() {
    fixed(altitude_from_m(-3.25), -4, 49152);
    assert_eq!(altitude_m(Fixed48 { i: -4, f: 49152 }), -3.25);
    assert_eq!(altitude_m(Fixed48 { i: -3, f: 49152 }), -2.25);
}

/// FS-MULTIPLAYER.md 3.5 pbh test vectors (swift encoding).
#[test]
fn fs_multiplayer_3_5_pbh_vectors() {
    let a = |pitch_deg, bank_deg, heading_deg| Attitude { pitch_deg, bank_deg, heading_deg };
    assert_eq!(Pbh::from_attitude(a(5.0, -10.0, 270.0), false), Pbh(0xFC41_CC00));
    assert_eq!(Pbh::from_attitude(a(0.0, 0.0, 0.0), true), Pbh(0xFFFF_F002));
    assert_eq!(Pbh::from_attitude(a(-3.0, 25.0, 90.5), false), Pbh(0x023B_8404));
}

/// Seed 004 row POSITION_LLAPBH: pitch in the top 10 bits, bank next, heading next, 2 low bits.
#[test]
fn seed_004_pbh_bit_layout() {
    let p = Pbh::from_fields(-1, 2, 1023, true);
    assert_eq!(p.0, 0x3FF << 22 | 2 << 12 | 0x3FF << 2 | 2);
    assert_eq!((p.pitch(), p.bank(), p.heading(), p.on_ground()), (-1, 2, 1023, true));
    // Heading wraps at a full turn.
    assert_eq!(
        Pbh::from_attitude(Attitude { heading_deg: 359.95, ..Attitude::default() }, false).heading(),
        0
    );
}

/// Seed 004 row POSITION_VELOCITY: 16.16 feet per second.
#[test]
fn seed_004_velocity_units() {
    assert_eq!(Velocity16(0x0001_8000).ft_per_s(), 1.5);
    assert_eq!(Velocity16::from_ft_per_s(-1.5), Velocity16(-0x0001_8000));
    assert_eq!(Velocity16::from_m_per_s(0.3048), Velocity16(0x0001_0000));
    assert_eq!(Velocity16::from_ft_per_s(f64::NAN), Velocity16(0));
    assert_eq!(Velocity16::from_ft_per_s(1e12), Velocity16(i32::MAX));
    assert_eq!(Velocity16::unsigned_from_ft_per_s(-4.0), 0);
}

#[test]
fn non_finite_inputs_do_not_panic() {
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e300] {
        let _ = latitude_from_deg(x);
        let _ = longitude_from_deg(x);
        let _ = altitude_from_ft(x);
        let _ = Pbh::from_attitude(Attitude { pitch_deg: x, bank_deg: x, heading_deg: x }, false);
        let _ = Velocity16::from_lon_deg_per_s(x, x);
    }
}

/// Smallest difference between two angles in degrees.
fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

proptest! {
    /// Latitude round trip within 1/65536 m (about 1e-10°).
    #[test]
    fn latitude_roundtrip(deg in -90.0f64..=90.0) {
        prop_assert!((latitude_deg(latitude_from_deg(deg)) - deg).abs() < 1e-9);
    }

    /// Longitude round trip within 1e-9° (one unit is 8.4e-8° / 65536), modulo a full turn.
    #[test]
    fn longitude_roundtrip(deg in -540.0f64..540.0) {
        prop_assert!(angle_diff(longitude_deg(longitude_from_deg(deg)), deg) < 1e-9);
        let back = longitude_deg(longitude_from_deg(deg));
        prop_assert!((-180.0..180.0).contains(&back));
    }

    /// Altitude round trip within 1/65536 m, in metres and in feet.
    #[test]
    fn altitude_roundtrip(m in -1000.0f64..20000.0) {
        prop_assert!((altitude_m(altitude_from_m(m)) - m).abs() <= 1.0 / 131072.0 + 1e-12);
        let ft = m / METRES_PER_FOOT;
        prop_assert!((altitude_ft(altitude_from_ft(ft)) - ft).abs() < 1e-4);
    }

    /// Raw 48-bit values round trip exactly.
    #[test]
    fn fixed48_raw_roundtrip(i in any::<i32>(), f in any::<u16>()) {
        let v = Fixed48 { i, f };
        prop_assert_eq!(Fixed48::from_raw(v.raw()), v);
        prop_assert_eq!(Fixed48::from_units(v.to_units()), v);
    }

    /// Attitude round trip within half a field unit (0.176°).
    #[test]
    fn attitude_roundtrip(p in -180.0f64..180.0, b in -180.0f64..180.0, h in 0.0f64..360.0, g in any::<bool>()) {
        let a = Attitude { pitch_deg: p, bank_deg: b, heading_deg: h };
        let pbh = Pbh::from_attitude(a, g);
        let back = pbh.attitude();
        let half = 0.5 / PBH_UNITS_PER_DEG + 1e-9;
        prop_assert!(angle_diff(back.pitch_deg, p) <= half, "{back:?} vs {a:?}");
        prop_assert!(angle_diff(back.bank_deg, b) <= half, "{back:?} vs {a:?}");
        prop_assert!(angle_diff(back.heading_deg, h) <= half, "{back:?} vs {a:?}");
        prop_assert_eq!(pbh.on_ground(), g);
        prop_assert_eq!(pbh.0 & 1, 0);
    }

    /// Raw pbh fields round trip exactly.
    #[test]
    fn pbh_fields_roundtrip(p in -512i16..512, b in -512i16..512, h in 0u16..1024, g in any::<bool>()) {
        let pbh = Pbh::from_fields(p, b, h, g);
        prop_assert_eq!((pbh.pitch(), pbh.bank(), pbh.heading(), pbh.on_ground()), (p, b, h, g));
    }

    /// Velocity round trip within 1/131072 ft/s; degrees per second within the same.
    #[test]
    fn velocity_roundtrip(ft in -30000.0f64..30000.0, lat in -80.0f64..80.0) {
        let v = Velocity16::from_ft_per_s(ft);
        prop_assert!((v.ft_per_s() - ft).abs() <= 1.0 / 131072.0 + 1e-12);
        let dps = v.lat_deg_per_s();
        prop_assert_eq!(Velocity16::from_lat_deg_per_s(dps), v);
        let dps = v.lon_deg_per_s(lat);
        prop_assert_eq!(Velocity16::from_lon_deg_per_s(dps, lat), v);
    }
}
