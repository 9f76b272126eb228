//! Flight Simulator add-on packets as people read them: the packet's name in its dialect and
//! its fields in human units (degrees, feet, knots), one line or one JSON object. Shared by
//! `dplay decode`, the demo timeline and the hosts' message logs (FS-MULTIPLAYER.md 1.3, 3.3;
//! seed 004).

use std::fmt;

use dplay_addon::packet::{
    Fs2004PacketId, HEADER_LEN, PLAYER_INFO_LEN, PlayerInfo, PlayerInfoFlags, PositionLlapbh,
    PositionVelocity, ReducedLlapbh,
};
use dplay_addon::units::Velocity16;
use dplay_addon::{Dialect, Packet, PacketId};
use serde::Serialize;

/// Knots in one foot per second.
const KT_PER_FT_S: f64 = 0.592_483_801;

/// An add-on packet found in an application payload, with the dialect it was read in; or the
/// PLAYER_INFO_STRUCT an FS2004 joiner puts in its DirectPlay 8 player data.
#[derive(Debug)]
pub(crate) struct AddonPacket {
    pub(crate) dialect: Dialect,
    content: Content,
}

#[derive(Debug)]
enum Content {
    Packet(Packet),
    PlayerInfo(PlayerInfo),
}

/// Reads `payload` as an add-on packet when its MULTIPLAYER_PACKET_HEADER fits: an id of the
/// FS98 range 0x1000-0x1020 (which holds FS2004's ids too) and a `data_size` equal to the bytes
/// that follow (FS-MULTIPLAYER.md 1.1, 1.2). A payload that passes the header but not its
/// layout is not shown as a packet.
pub(crate) fn find(payload: &[u8], dialect: Dialect) -> Option<AddonPacket> {
    let word = |at: usize| payload.get(at..at + 4)?.try_into().ok().map(u32::from_le_bytes);
    let (id, size) = (word(0)?, word(4)?);
    let fits = PacketId::ALL.iter().any(|known| known.0 == id)
        && usize::try_from(size).is_ok_and(|s| s == payload.len() - HEADER_LEN);
    let packet = fits.then(|| Packet::parse(dialect, payload).ok()).flatten()?;
    Some(AddonPacket { dialect, content: Content::Packet(packet) })
}

/// Reads a joiner's DirectPlay 8 player data as FS2004's PLAYER_INFO_STRUCT: in that dialect
/// only, and when it has the structure's 268 bytes (FS-MULTIPLAYER.md 3.1, 3.6).
pub(crate) fn find_player_info(data: &[u8], dialect: Dialect) -> Option<AddonPacket> {
    let info =
        (dialect == Dialect::Fs2004 && data.len() == PLAYER_INFO_LEN).then(|| PlayerInfo::parse(data).ok());
    Some(AddonPacket { dialect, content: Content::PlayerInfo(info.flatten()?) })
}

impl AddonPacket {
    /// The packet's name in its dialect (`POSITION_VELOCITY`, `CHAT_TEXT_SEND`, ...), or its id.
    pub(crate) fn name(&self) -> String {
        let Content::Packet(packet) = &self.content else { return "PLAYER_INFO_STRUCT".to_owned() };
        let id = packet.packet_id(self.dialect).unwrap_or_default();
        let name = match self.dialect {
            Dialect::Fs98 => PacketId(id).name(),
            Dialect::Fs2004 => Fs2004PacketId(id).name(),
        };
        name.map_or_else(|| format!("0x{id:04X}"), str::to_owned)
    }

    /// `FS98` or `FS2004`.
    pub(crate) fn dialect_name(&self) -> &'static str {
        match self.dialect {
            Dialect::Fs98 => "FS98",
            Dialect::Fs2004 => "FS2004",
        }
    }

    /// The fields in human units.
    pub(crate) fn view(&self) -> View {
        let packet = match &self.content {
            Content::Packet(p) => p,
            Content::PlayerInfo(info) => {
                return View::PlayerInfo {
                    aircraft: info.aircraft.to_string_lossy(),
                    observer: info.flags.contains(PlayerInfoFlags::OBSERVER),
                    flags: format!("0x{:X}", info.flags.bits()),
                };
            }
        };
        match packet {
            Packet::PositionVelocity(p) => View::Position(velocity(p)),
            Packet::PositionLlapbh(p) => View::Position(llapbh(p)),
            Packet::ChangePlayerPlane(p) => View::Plane {
                engine_type: p.engine_type.name().map_or_else(|| p.engine_type.0.to_string(), str::to_owned),
                aircraft: p.aircraft_name.to_string_lossy(),
            },
            Packet::ChatText(c) => View::Chat { text: c.chat_data.to_string_lossy() },
            Packet::ChangeToPlayer { player_id } | Packet::ChangeToObserver { player_id } => {
                View::Player { player_id: format!("0x{player_id:08X}") }
            }
            Packet::Opaque(o) => View::Data { data_bytes: o.data.len() },
        }
    }

    /// The JSON object `decode --json` prints under `addon`.
    pub(crate) fn json(&self) -> serde_json::Value {
        let mut obj = serde_json::json!({ "dialect": self.dialect_name(), "packet": self.name() });
        if let (Some(obj), Ok(serde_json::Value::Object(fields))) =
            (obj.as_object_mut(), serde_json::to_value(self.view()))
        {
            obj.extend(fields);
        }
        obj
    }
}

/// `NAME fields...` on one line.
impl fmt::Display for AddonPacket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let view = self.view().to_string();
        f.write_str(&self.name())?;
        if !view.is_empty() {
            write!(f, " {view}")?;
        }
        Ok(())
    }
}

/// A position in human units (FS-MULTIPLAYER.md 1.3, 3.4, 3.5).
#[derive(Debug, Serialize)]
pub(crate) struct PositionView {
    packet_index: u32,
    latitude_deg: f64,
    longitude_deg: f64,
    altitude_ft: f64,
    altitude_m: f64,
    pitch_deg: f64,
    bank_deg: f64,
    heading_deg: f64,
    on_ground: bool,
    /// Only in POSITION_VELOCITY.
    #[serde(skip_serializing_if = "Option::is_none")]
    speeds: Option<Speeds>,
}

/// POSITION_VELOCITY's velocities: knots over the ground, feet per minute vertically.
#[derive(Debug, Serialize)]
struct Speeds {
    ground_speed_kt: f64,
    north_kt: f64,
    east_kt: f64,
    vertical_speed_fpm: f64,
}

/// The fields of each kind of packet.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum View {
    Position(PositionView),
    Plane { engine_type: String, aircraft: String },
    Chat { text: String },
    Player { player_id: String },
    PlayerInfo { aircraft: String, observer: bool, flags: String },
    Data { data_bytes: usize },
}

fn round(v: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (v * scale).round() / scale
}

fn position(packet_index: u32, r: &ReducedLlapbh, speeds: Option<Speeds>) -> PositionView {
    let attitude = r.pbh.attitude();
    PositionView {
        packet_index,
        latitude_deg: round(r.latitude_deg(), 6),
        longitude_deg: round(r.longitude_deg(), 6),
        altitude_ft: round(r.altitude_m() / 0.3048, 1),
        altitude_m: round(r.altitude_m(), 1),
        pitch_deg: round(attitude.pitch_deg, 1),
        bank_deg: round(attitude.bank_deg, 1),
        heading_deg: round(attitude.heading_deg, 1),
        on_ground: r.pbh.on_ground(),
        speeds,
    }
}

fn llapbh(p: &PositionLlapbh) -> PositionView {
    position(p.packet_index, &p.reduced_llapbh, None)
}

fn velocity(p: &PositionVelocity) -> PositionView {
    let speeds = Speeds {
        ground_speed_kt: round(Velocity16::unsigned_ft_per_s(p.ground_velocity) * KT_PER_FT_S, 1),
        north_kt: round(p.lat_velocity.ft_per_s() * KT_PER_FT_S, 1),
        east_kt: round(p.lon_velocity.ft_per_s() * KT_PER_FT_S, 1),
        vertical_speed_fpm: round(p.alt_velocity.ft_per_s() * 60.0, 0),
    };
    position(p.packet_index, &p.reduced_llapbh, Some(speeds))
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Position(p) => {
                write!(
                    f,
                    "#{} {:.5} {:.5} {:.0} ft pitch {:.1} bank {:.1} hdg {:.1}",
                    p.packet_index,
                    p.latitude_deg,
                    p.longitude_deg,
                    p.altitude_ft,
                    p.pitch_deg,
                    p.bank_deg,
                    p.heading_deg
                )?;
                if p.on_ground {
                    f.write_str(" on ground")?;
                }
                if let Some(s) = &p.speeds {
                    write!(f, " gs {:.0} kt vs {:+.0} fpm", s.ground_speed_kt, s.vertical_speed_fpm)?;
                }
                Ok(())
            }
            Self::Plane { engine_type, aircraft } => write!(f, "\"{aircraft}\" {engine_type}"),
            Self::Chat { text } => write!(f, "\"{text}\""),
            Self::Player { player_id } => write!(f, "player {player_id}"),
            Self::PlayerInfo { aircraft, observer, .. } => {
                write!(f, "\"{aircraft}\"{}", if *observer { " observer" } else { "" })
            }
            Self::Data { data_bytes: 0 } => Ok(()),
            Self::Data { data_bytes } => write!(f, "{data_bytes} bytes"),
        }
    }
}

#[cfg(test)]
mod tests;
