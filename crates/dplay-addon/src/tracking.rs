//! Tracking other aircraft, for players and observers alike (seed 004: "Both players and
//! observers must monitor POSITION_LLAPBH and POSITION_VELOCITY packets to track other players").
//!
//! Per player: its type, the last accepted `packet_index`, the latest position (with velocities
//! for extrapolation), the collision-avoidance window and its plane.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::packet::{
    ChangePlayerPlane, Dialect, PlayerInfo, PositionLlapbh, PositionVelocity, ReducedLlapbh,
};
use crate::session_iface::{PlayerId, Role};
use crate::units::{Attitude, Velocity16};

/// How long after a POSITION_LLAPBH a player must not be collided with (seed 004 row
/// POSITION_LLAPBH: "at least 10 seconds", reset by each such packet).
pub const COLLISION_AVOIDANCE: Duration = Duration::from_secs(10);

/// The shortest interval a ground speed is measured over, from positions alone.
pub const SPEED_BASELINE: Duration = Duration::from_secs(1);

/// A position in degrees and metres (seed 004 row POSITION_LLAPBH; FS-MULTIPLAYER.md 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Position {
    /// Latitude, degrees north.
    pub latitude_deg: f64,
    /// Longitude, degrees east.
    pub longitude_deg: f64,
    /// Altitude above mean sea level, metres.
    pub altitude_m: f64,
    /// Pitch, bank and heading.
    pub attitude: Attitude,
    /// On the ground (FS2004's pbh bit 1; docs/decisions.md).
    pub on_ground: bool,
}

impl Position {
    /// The position a `REDUCED_LLAPBH_DATA` carries.
    pub fn from_reduced(r: &ReducedLlapbh) -> Self {
        Self {
            latitude_deg: r.latitude_deg(),
            longitude_deg: r.longitude_deg(),
            altitude_m: r.altitude_m(),
            attitude: r.pbh.attitude(),
            on_ground: r.pbh.on_ground(),
        }
    }

    /// The `REDUCED_LLAPBH_DATA` for this position.
    pub fn to_reduced(&self) -> ReducedLlapbh {
        ReducedLlapbh::from_degrees(
            self.latitude_deg,
            self.longitude_deg,
            self.altitude_m,
            self.attitude,
            self.on_ground,
        )
    }
}

/// The velocities of POSITION_VELOCITY, in feet per second (seed 004 row POSITION_VELOCITY).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Velocity {
    /// `lat_velocity`: north positive.
    pub north_ft_s: f64,
    /// `lon_velocity`: east positive.
    pub east_ft_s: f64,
    /// `alt_velocity`: up positive.
    pub up_ft_s: f64,
    /// `ground_velocity`: net ground speed.
    pub ground_ft_s: f64,
}

impl Velocity {
    /// The velocities a POSITION_VELOCITY of `dialect` carries (`ground_velocity` in the
    /// dialect's unit, [`Dialect::ground_speed`]).
    pub fn from_packet(dialect: Dialect, p: &PositionVelocity) -> Self {
        Self {
            north_ft_s: p.lat_velocity.ft_per_s(),
            east_ft_s: p.lon_velocity.ft_per_s(),
            up_ft_s: p.alt_velocity.ft_per_s(),
            ground_ft_s: p.ground_m_per_s(dialect) / crate::units::METRES_PER_FOOT,
        }
    }

    /// The POSITION_VELOCITY of `dialect` for `position` moving at this velocity, in the form
    /// proven with the dialect's peers (FS2004: `data_size` 52 over 50 bytes,
    /// [`crate::packet::UNWRITTEN_TAIL`]).
    pub fn to_packet(&self, dialect: Dialect, packet_index: u32, position: &Position) -> PositionVelocity {
        PositionVelocity {
            packet_index,
            application_time: 0,
            lat_velocity: Velocity16::from_ft_per_s(self.north_ft_s),
            lon_velocity: Velocity16::from_ft_per_s(self.east_ft_s),
            alt_velocity: Velocity16::from_ft_per_s(self.up_ft_s),
            ground_velocity: dialect
                .ground_speed()
                .from_m_per_s(self.ground_ft_s * crate::units::METRES_PER_FOOT),
            reserved: 0,
            reduced_llapbh: position.to_reduced(),
            padding: Default::default(),
            unwritten: unwritten_tail(dialect),
        }
    }
}

/// The bytes an FS2004 position announces and does not carry, as swift sends it (FS-MULTIPLAYER.md
/// 3.3; docs/decisions.md "FS2004 position data_size"); none in FS98.
pub fn unwritten_tail(dialect: Dialect) -> u8 {
    match dialect {
        Dialect::Fs98 => 0,
        Dialect::Fs2004 => crate::packet::UNWRITTEN_TAIL,
    }
}

/// The latest accepted position of a player.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fix {
    /// When it was received.
    #[serde(skip)]
    pub at: Instant,
    /// Where the player was.
    pub position: Position,
    /// Its velocities, when it came in a POSITION_VELOCITY.
    pub velocity: Option<Velocity>,
}

/// What we know about one other player.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Remote {
    /// Its type; `None` while unknown (FS-MULTIPLAYER.md 1.5 "Roles").
    pub role: Option<Role>,
    /// The last accepted `packet_index` (seed 004 row POSITION_LLAPBH).
    pub last_packet_index: Option<u32>,
    /// The latest accepted position.
    pub fix: Option<Fix>,
    /// Until when it must not be collided with (seed 004 row POSITION_LLAPBH).
    #[serde(skip)]
    pub collision_avoidance_until: Option<Instant>,
    /// Its plane and engine type (seed 004 row CHANGE_PLAYER_PLANE).
    pub plane: Option<ChangePlayerPlane>,
    /// FS2004: the PLAYER_INFO_STRUCT of its DirectPlay 8 player data (FS-MULTIPLAYER.md 3.6).
    pub info: Option<PlayerInfo>,
    /// An accepted position 1 to 2 s ([`SPEED_BASELINE`]) before [`Remote::fix`] once it
    /// flows (younger in its first second): a
    /// ground speed for positions without velocities (FS2004 SLEWMODE), over a baseline long
    /// enough that arrival jitter does not matter.
    pub previous: Option<Fix>,
    /// The next [`Remote::previous`], once it is a baseline old.
    #[serde(skip)]
    next_previous: Option<Fix>,
    /// Positions accepted from it.
    pub updates: u64,
}

/// Whether a position packet was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Accepted {
    /// Newer than the last one: stored.
    Yes,
    /// `packet_index` not higher than the last accepted: dropped (seed 004 row POSITION_LLAPBH).
    Stale,
}

/// Every other player we know of, keyed by id (ordered, so iteration is deterministic).
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    dialect: Dialect,
    remotes: BTreeMap<PlayerId, Remote>,
}

impl Tracker {
    /// An empty tracker reading `dialect`'s units.
    pub fn new(dialect: Dialect) -> Self {
        Self { dialect, remotes: BTreeMap::new() }
    }

    /// The dialect whose units it reads.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Records `id`'s FS2004 player info (its DirectPlay 8 player data, FS-MULTIPLAYER.md 3.6):
    /// its role (OBSERVER flag or not) and aircraft title. Returns the role.
    pub fn set_info(&mut self, id: PlayerId, info: PlayerInfo) -> Role {
        let role = if info.flags.contains(crate::packet::PlayerInfoFlags::OBSERVER) {
            Role::Observer
        } else {
            Role::Player
        };
        let remote = self.remotes.entry(id).or_default();
        remote.role = Some(role);
        remote.info = Some(info);
        role
    }

    /// A player entered the session; its type is unknown until settled.
    pub fn player_joined(&mut self, id: PlayerId) {
        self.remotes.entry(id).or_default();
    }

    /// A player left; everything about it is forgotten. Returns whether it was known.
    pub fn player_left(&mut self, id: PlayerId) -> bool {
        self.remotes.remove(&id).is_some()
    }

    /// What we know about `id`.
    pub fn get(&self, id: PlayerId) -> Option<&Remote> {
        self.remotes.get(&id)
    }

    /// Every known player, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (PlayerId, &Remote)> {
        self.remotes.iter().map(|(id, r)| (*id, r))
    }

    /// Players whose type is still unknown, in id order (FS-MULTIPLAYER.md 1.5 step 5).
    pub fn unknown(&self) -> Vec<PlayerId> {
        self.iter().filter(|(_, r)| r.role.is_none()).map(|(id, _)| id).collect()
    }

    /// Records `id`'s type (CHANGE_TO_PLAYER / CHANGE_TO_OBSERVER).
    pub fn set_role(&mut self, id: PlayerId, role: Role) {
        self.remotes.entry(id).or_default().role = Some(role);
    }

    /// Records `id`'s plane (CHANGE_PLAYER_PLANE).
    pub fn set_plane(&mut self, id: PlayerId, plane: ChangePlayerPlane) {
        self.remotes.entry(id).or_default().plane = Some(plane);
    }

    /// Takes a POSITION_LLAPBH: valid only with a higher `packet_index` than the last one from
    /// that player; an accepted one (re)starts the 10-second collision-avoidance window (seed
    /// 004 row POSITION_LLAPBH).
    pub fn position_llapbh(&mut self, now: Instant, id: PlayerId, p: &PositionLlapbh) -> Accepted {
        let remote = self.remote_flying(id);
        let accepted = remote.accept(now, p.packet_index, Position::from_reduced(&p.reduced_llapbh), None);
        if accepted == Accepted::Yes {
            remote.collision_avoidance_until = now.checked_add(COLLISION_AVOIDANCE);
        }
        accepted
    }

    /// `id`'s entry, for a position it sent. In FS2004, which has no handshake, a peer of
    /// unknown type that sends positions is a player (its player data was not a
    /// PLAYER_INFO_STRUCT we could read); FS98 settles types by the handshake only.
    fn remote_flying(&mut self, id: PlayerId) -> &mut Remote {
        let remote = self.remotes.entry(id).or_default();
        if self.dialect == Dialect::Fs2004 {
            remote.role.get_or_insert(Role::Player);
        }
        remote
    }

    /// Takes a POSITION_VELOCITY under the same `packet_index` rule (seed 004 row
    /// POSITION_VELOCITY). It does not touch the collision-avoidance window.
    pub fn position_velocity(&mut self, now: Instant, id: PlayerId, p: &PositionVelocity) -> Accepted {
        let position = Position::from_reduced(&p.reduced_llapbh);
        let velocity = Velocity::from_packet(self.dialect, p);
        self.remote_flying(id).accept(now, p.packet_index, position, Some(velocity))
    }

    /// Whether `id` may be collided with at `now`: a known player outside its
    /// collision-avoidance window (seed 004 rows POSITION_LLAPBH, PLAYER_CRASH).
    pub fn can_collide(&self, id: PlayerId, now: Instant) -> bool {
        self.remotes.get(&id).is_some_and(|r| {
            r.role == Some(Role::Player) && r.collision_avoidance_until.is_none_or(|until| now >= until)
        })
    }

    /// `id`'s position at `now`, extrapolated from its last POSITION_VELOCITY (dead reckoning
    /// on FS's sphere); a POSITION_LLAPBH fix is returned as it is (seed 004 row
    /// POSITION_VELOCITY: "positional extrapolation").
    pub fn extrapolate(&self, id: PlayerId, now: Instant) -> Option<Position> {
        let fix = self.remotes.get(&id)?.fix?;
        let Some(v) = fix.velocity else { return Some(fix.position) };
        let dt = now.saturating_duration_since(fix.at).as_secs_f64();
        let mut p = fix.position;
        let lat = p.latitude_deg;
        p.latitude_deg =
            (lat + Velocity16::from_ft_per_s(v.north_ft_s).lat_deg_per_s() * dt).clamp(-90.0, 90.0);
        let lon = p.longitude_deg + Velocity16::from_ft_per_s(v.east_ft_s).lon_deg_per_s(lat) * dt;
        p.longitude_deg = (lon + 180.0).rem_euclid(360.0) - 180.0;
        p.altitude_m += v.up_ft_s * crate::units::METRES_PER_FOOT * dt;
        Some(p)
    }
}

impl Remote {
    fn accept(
        &mut self,
        now: Instant,
        index: u32,
        position: Position,
        velocity: Option<Velocity>,
    ) -> Accepted {
        if self.last_packet_index.is_some_and(|last| index <= last) {
            return Accepted::Stale;
        }
        self.last_packet_index = Some(index);
        let fix = Fix { at: now, position, velocity };
        self.fix = Some(fix);
        // `previous` moves on to the candidate once that is a baseline old, so it stays 1-2
        // baselines behind.
        let old = |f: &Fix| now.saturating_duration_since(f.at) >= SPEED_BASELINE;
        match (self.previous, self.next_previous) {
            (None, _) => self.previous = Some(fix),
            (Some(p), None) if old(&p) => self.next_previous = Some(fix),
            (Some(_), Some(c)) if old(&c) => {
                self.previous = Some(c);
                self.next_previous = Some(fix);
            }
            _ => {}
        }
        self.updates += 1;
        Accepted::Yes
    }
}
