//! The traffic JSON and the trails.
#![allow(clippy::disallowed_methods)] // a base instant for `now` values

use super::*;

fn aircraft(id: u32, lat: Option<f64>) -> Aircraft {
    Aircraft {
        id: PlayerId(id),
        name: Some("<b>pilot</b>".into()),
        role: Some(Role::Player),
        aircraft: Some("Cessna Skyhawk 172SP".into()),
        engine_type: None,
        lat_deg: lat,
        lon_deg: lat.map(|_| -122.25),
        alt_ft: Some(3281.0),
        heading_deg: Some(90.0),
        pitch_deg: Some(0.0),
        bank_deg: Some(15.0),
        ground_speed_kt: Some(203.5),
        vertical_speed_fpm: None,
        on_ground: Some(false),
        age_s: Some(0.25),
        updates: 3,
        packet_index: Some(2),
    }
}

#[test]
fn the_traffic_json_names_every_field() {
    let snapshot = TrafficSnapshot { aircraft: vec![aircraft(0x0030_0003, Some(47.5))] };
    let mut trails = Trails::default();
    trails.sample(&snapshot, Instant::now());
    let json = serde_json::to_value(Traffic::new(&snapshot, &trails)).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"aircraft": [{
            "dpnid": "0x00300003", "id": 0x0030_0003, "name": "<b>pilot</b>", "role": "player",
            "title": "Cessna Skyhawk 172SP", "lat_deg": 47.5, "lon_deg": -122.25,
            "alt_ft": 3281.0, "heading_deg": 90.0, "ground_speed_kt": 203.5,
            "vertical_speed_fpm": null, "on_ground": false, "age_s": 0.25, "updates": 3,
            "trail": [[47.5, -122.25]]
        }]})
    );
}

#[test]
fn an_aircraft_without_a_position_has_nulls_and_no_trail() {
    let snapshot = TrafficSnapshot { aircraft: vec![aircraft(7, None)] };
    let mut trails = Trails::default();
    trails.sample(&snapshot, Instant::now());
    let json = serde_json::to_value(Traffic::new(&snapshot, &trails)).unwrap();
    assert_eq!(json["aircraft"][0]["lat_deg"], serde_json::Value::Null);
    assert_eq!(json["aircraft"][0]["trail"], serde_json::json!([]));
}

#[test]
fn trails_sample_once_per_interval_keep_the_last_points_and_forget_the_gone() {
    let t0 = Instant::now();
    let mut trails = Trails::default();
    for n in 0..TRAIL_POINTS + 5 {
        let at = |ms: u64| t0 + TRAIL_INTERVAL * u32::try_from(n).unwrap() + Duration::from_millis(ms);
        let lat = f64::from(u32::try_from(n).unwrap());
        trails.sample(&TrafficSnapshot { aircraft: vec![aircraft(1, Some(lat))] }, at(0));
        // A second look within the interval adds nothing.
        trails.sample(&TrafficSnapshot { aircraft: vec![aircraft(1, Some(lat + 0.5))] }, at(500));
    }
    let trail = trails.of(PlayerId(1));
    assert_eq!(trail.len(), TRAIL_POINTS);
    assert_eq!(trail.first(), Some(&[5.0, -122.25]));
    assert_eq!(trail.last(), Some(&[f64::from(u32::try_from(TRAIL_POINTS + 4).unwrap()), -122.25]));
    trails.sample(&TrafficSnapshot::default(), t0);
    assert!(trails.of(PlayerId(1)).is_empty(), "a player gone from the tracker keeps no trail");
}

#[test]
fn a_new_aircraft_gets_its_first_point_at_once() {
    let t0 = Instant::now();
    let mut trails = Trails::default();
    trails.sample(&TrafficSnapshot::default(), t0);
    trails
        .sample(&TrafficSnapshot { aircraft: vec![aircraft(1, Some(1.0))] }, t0 + Duration::from_millis(250));
    assert_eq!(trails.of(PlayerId(1)), vec![[1.0, -122.25]]);
    trails
        .sample(&TrafficSnapshot { aircraft: vec![aircraft(1, Some(2.0))] }, t0 + Duration::from_millis(500));
    assert_eq!(trails.of(PlayerId(1)).len(), 1, "the next point waits for the interval");
}
