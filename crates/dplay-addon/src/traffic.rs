//! A traffic snapshot: every aircraft the add-on tracks, as one row each, for people and for
//! other programs (the `dplay fs` traffic table, a dashboard). Built from a [`Tracker`] at an
//! instant; the names come from the session layer, which owns them.

use std::time::Instant;

use serde::Serialize;

use crate::packet::EngineType;
use crate::session_iface::{PlayerId, Role};
use crate::tracking::{Fix, Remote, SPEED_BASELINE, Tracker};
use crate::units::METRES_PER_FOOT;

/// Metres per second in one knot (1852 m per hour).
const M_PER_S_PER_KNOT: f64 = 1852.0 / 3600.0;
/// Metres per degree of latitude on FS's sphere (FS-MULTIPLAYER.md 3.4).
const M_PER_DEG: f64 = crate::units::METRES_PER_DEG;

/// One aircraft (or observer) of the session, as tracked at the snapshot's instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Aircraft {
    /// Its DirectPlay id.
    pub id: PlayerId,
    /// Its DirectPlay player name, when the session layer knows it.
    pub name: Option<String>,
    /// Player or observer; `None` while unknown.
    pub role: Option<Role>,
    /// The aircraft title: from CHANGE_PLAYER_PLANE, else from FS2004's PLAYER_INFO_STRUCT.
    pub aircraft: Option<String>,
    /// The engine type of CHANGE_PLAYER_PLANE.
    pub engine_type: Option<EngineType>,
    /// Latitude, degrees north, of the last accepted position.
    pub lat_deg: Option<f64>,
    /// Longitude, degrees east.
    pub lon_deg: Option<f64>,
    /// Altitude above mean sea level, feet.
    pub alt_ft: Option<f64>,
    /// Heading, degrees.
    pub heading_deg: Option<f64>,
    /// Pitch, degrees, nose up positive.
    pub pitch_deg: Option<f64>,
    /// Bank, degrees, right wing down positive.
    pub bank_deg: Option<f64>,
    /// Ground speed, knots: POSITION_VELOCITY's `ground_velocity`, or for positions without
    /// one (FS2004 SLEWMODE) the distance between the last two over their interval.
    pub ground_speed_kt: Option<f64>,
    /// Vertical speed, feet per minute, when POSITION_VELOCITY gave one.
    pub vertical_speed_fpm: Option<f64>,
    /// The on-ground bit of the last position.
    pub on_ground: Option<bool>,
    /// Seconds since the last accepted position.
    pub age_s: Option<f64>,
    /// Positions accepted from it.
    pub updates: u64,
    /// The last accepted `packet_index`.
    pub packet_index: Option<u32>,
}

/// Every tracked player at one instant, in id order.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct TrafficSnapshot {
    /// One row per player.
    pub aircraft: Vec<Aircraft>,
}

impl TrafficSnapshot {
    /// The snapshot of `tracker` at `now`, naming players with `name`.
    pub fn new(tracker: &Tracker, now: Instant, name: impl Fn(PlayerId) -> Option<String>) -> Self {
        let aircraft = tracker.iter().map(|(id, r)| Aircraft::new(id, r, now, name(id))).collect();
        Self { aircraft }
    }
}

impl Aircraft {
    fn new(id: PlayerId, r: &Remote, now: Instant, name: Option<String>) -> Self {
        let title = r.plane.as_ref().map(|p| p.aircraft_name.to_text());
        let title = title.or_else(|| r.info.as_ref().map(|i| i.aircraft.to_text())).filter(|t| !t.is_empty());
        let fix = r.fix.as_ref();
        let p = fix.map(|f| f.position);
        Self {
            id,
            name,
            role: r.role,
            aircraft: title,
            engine_type: r.plane.as_ref().map(|p| p.engine_type),
            lat_deg: p.map(|p| p.latitude_deg),
            lon_deg: p.map(|p| p.longitude_deg),
            alt_ft: p.map(|p| p.altitude_m / METRES_PER_FOOT),
            heading_deg: p.map(|p| p.attitude.heading_deg),
            pitch_deg: p.map(|p| p.attitude.pitch_deg),
            bank_deg: p.map(|p| p.attitude.bank_deg),
            ground_speed_kt: fix
                .and_then(|f| ground_speed_m_s(f, r.previous.as_ref()))
                .map(|m| m / M_PER_S_PER_KNOT),
            vertical_speed_fpm: fix.and_then(|f| f.velocity).map(|v| v.up_ft_s * 60.0),
            on_ground: p.map(|p| p.on_ground),
            age_s: fix.map(|f| now.saturating_duration_since(f.at).as_secs_f64()),
            updates: r.updates,
            packet_index: r.last_packet_index,
        }
    }
}

/// The ground speed of `fix` in m/s: its velocity's, else the distance from `previous` (flat
/// earth, on FS's sphere) over the time between them, once that is at least half a
/// [`SPEED_BASELINE`] (arrival jitter would dominate a shorter one).
fn ground_speed_m_s(fix: &Fix, previous: Option<&Fix>) -> Option<f64> {
    if let Some(v) = fix.velocity {
        return Some(v.ground_ft_s * METRES_PER_FOOT);
    }
    let prev = previous?;
    let dt = fix.at.saturating_duration_since(prev.at).as_secs_f64();
    if dt < SPEED_BASELINE.as_secs_f64() / 2.0 {
        return None;
    }
    let (a, b) = (prev.position, fix.position);
    let north = (b.latitude_deg - a.latitude_deg) * M_PER_DEG;
    let dlon = (b.longitude_deg - a.longitude_deg + 180.0).rem_euclid(360.0) - 180.0;
    let east = dlon * M_PER_DEG * a.latitude_deg.to_radians().cos();
    Some(north.hypot(east) / dt)
}

#[cfg(test)]
mod tests;
