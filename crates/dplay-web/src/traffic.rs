//! The add-on's aircraft as `/api/traffic` shows them (docs/web-api.md): one row per tracked
//! player of a [`TrafficSnapshot`], with a short trail of its last positions for the map.
//! Names and titles came from the network; the page inserts them as text.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use dplay_addon::{Aircraft, PlayerId, Role, TrafficSnapshot};
use dplay_wire::dp8::dpnid::Dpnid;
use serde::Serialize;

/// Positions kept per aircraft for its trail.
pub const TRAIL_POINTS: usize = 60;
/// A trail point at most this often, so a trail spans about a minute.
pub const TRAIL_INTERVAL: Duration = Duration::from_secs(1);

/// Every aircraft of an add-on session.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Traffic {
    /// One row per tracked player (observers too), in DPNID order.
    pub aircraft: Vec<AircraftView>,
}

/// One aircraft; what is not known yet is `null`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AircraftView {
    /// The player's DPNID (`0x...`).
    pub dpnid: String,
    /// The DPNID as a number.
    pub id: u32,
    /// The player's name, once the name table has it.
    pub name: Option<String>,
    /// `player` or `observer`, once settled.
    pub role: Option<&'static str>,
    /// The aircraft title (CHANGE_PLAYER_PLANE, else FS2004's player data).
    pub title: Option<String>,
    /// Latitude, degrees north.
    pub lat_deg: Option<f64>,
    /// Longitude, degrees east.
    pub lon_deg: Option<f64>,
    /// Altitude above mean sea level, feet.
    pub alt_ft: Option<f64>,
    /// Heading, degrees true.
    pub heading_deg: Option<f64>,
    /// Ground speed, knots.
    pub ground_speed_kt: Option<f64>,
    /// Vertical speed, feet per minute.
    pub vertical_speed_fpm: Option<f64>,
    /// On the ground.
    pub on_ground: Option<bool>,
    /// Seconds since its last accepted position.
    pub age_s: Option<f64>,
    /// Positions accepted from it.
    pub updates: u64,
    /// Its last positions, oldest first, `[lat, lon]` (at most [`TRAIL_POINTS`], one per
    /// [`TRAIL_INTERVAL`]).
    pub trail: Vec<[f64; 2]>,
}

impl Traffic {
    /// The rows of `snapshot`, each with its trail from `trails`.
    pub fn new(snapshot: &TrafficSnapshot, trails: &Trails) -> Self {
        let aircraft = snapshot.aircraft.iter().map(|a| AircraftView::new(a, trails.of(a.id))).collect();
        Self { aircraft }
    }
}

impl AircraftView {
    fn new(a: &Aircraft, trail: Vec<[f64; 2]>) -> Self {
        Self {
            dpnid: Dpnid(a.id.0).to_string(),
            id: a.id.0,
            name: a.name.clone(),
            role: a.role.map(|r| match r {
                Role::Player => "player",
                Role::Observer => "observer",
            }),
            title: a.aircraft.clone(),
            lat_deg: a.lat_deg,
            lon_deg: a.lon_deg,
            alt_ft: a.alt_ft,
            heading_deg: a.heading_deg,
            ground_speed_kt: a.ground_speed_kt,
            vertical_speed_fpm: a.vertical_speed_fpm,
            on_ground: a.on_ground,
            age_s: a.age_s,
            updates: a.updates,
            trail,
        }
    }
}

/// The last positions of every tracked aircraft, sampled on the protocol thread. Bounded: an
/// aircraft no longer tracked loses its trail, and each keeps [`TRAIL_POINTS`].
#[derive(Debug, Default)]
pub struct Trails {
    points: HashMap<PlayerId, VecDeque<[f64; 2]>>,
    next: Option<Instant>,
}

impl Trails {
    /// Adds each positioned aircraft's position when a [`TRAIL_INTERVAL`] has passed (a new
    /// aircraft's first at once), and forgets aircraft that are gone.
    pub fn sample(&mut self, snapshot: &TrafficSnapshot, now: Instant) {
        let tracked: HashSet<PlayerId> = snapshot.aircraft.iter().map(|a| a.id).collect();
        self.points.retain(|id, _| tracked.contains(id));
        let due = self.next.is_none_or(|t| now >= t);
        if due {
            self.next = Some(now + TRAIL_INTERVAL);
        }
        for a in &snapshot.aircraft {
            let (Some(lat), Some(lon)) = (a.lat_deg, a.lon_deg) else { continue };
            let trail = self.points.entry(a.id).or_default();
            if !due && !trail.is_empty() {
                continue;
            }
            if trail.len() == TRAIL_POINTS {
                trail.pop_front();
            }
            trail.push_back([lat, lon]);
        }
    }

    fn of(&self, id: PlayerId) -> Vec<[f64; 2]> {
        self.points.get(&id).map(|t| t.iter().copied().collect()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
