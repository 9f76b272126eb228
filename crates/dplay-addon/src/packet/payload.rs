//! The payload structures the SDK publishes (FS-MULTIPLAYER.md 1.3; FS2004 layouts 3.3).

use dplay_wire::{Blob, Reader, WireError, Writer, open_enum};
use serde::Serialize;
use zerocopy::little_endian::{I32, U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::Dialect;
use crate::units::{self, Attitude, Fixed48, Pbh, Velocity16};

/// `player_id` of CHANGE_TO_PLAYER / CHANGE_TO_OBSERVER: exactly 4 bytes (FS-MULTIPLAYER.md 1.3).
pub(super) fn player_id(data: &[u8]) -> Result<u32, WireError> {
    let mut r = Reader::new(data);
    let id = r.u32("player_id")?;
    r.finish("player_id")?;
    Ok(id)
}

/// 8-bit text without its NUL: `STRINGZ` (FS-MULTIPLAYER.md 4). It holds no NUL byte, so it
/// always re-emits as itself plus one NUL. The code page is the sender's (ANSI assumed).
#[derive(Clone, PartialEq, Eq, Hash, Default, Serialize)]
pub struct ZString(Vec<u8>);

impl ZString {
    /// The bytes up to (not including) the NUL, or `None` if `bytes` holds a NUL.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        (!bytes.contains(&0)).then(|| Self(bytes.to_vec()))
    }

    /// Encodes `text`, replacing characters outside ASCII with `?` and dropping NULs
    /// (docs/decisions.md: strings are sent as ASCII).
    pub fn from_ascii_lossy(text: &str) -> Self {
        Self(
            text.chars()
                .filter(|&c| c != '\0')
                .map(|c| u8::try_from(c).ok().filter(u8::is_ascii).unwrap_or(b'?'))
                .collect(),
        )
    }

    /// The bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text, Latin-1 decoded (each byte one character).
    pub fn to_string_lossy(&self) -> String {
        self.0.iter().map(|&b| char::from(b)).collect()
    }

    /// Bytes on the wire, NUL included.
    pub fn wire_len(&self) -> usize {
        self.0.len() + 1
    }

    /// Reads a string that fills the rest of the data: its NUL must be the last byte.
    fn parse_rest(field: &'static str, r: &mut Reader<'_>) -> Result<Self, WireError> {
        let offset = r.pos();
        let bad = |reason| WireError::BadString { field, offset, reason };
        match r.rest().split_last() {
            Some((0, text)) if !text.contains(&0) => Ok(Self(text.to_vec())),
            Some((0, _)) => Err(bad("bytes after the terminating NUL")),
            Some(_) => Err(bad("missing terminating NUL")),
            None => Err(bad("empty; the data must hold at least the NUL")),
        }
    }

    fn write(&self, w: &mut Writer<'_>) {
        w.bytes(&self.0);
        w.u8(0);
    }
}

impl std::fmt::Debug for ZString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

open_enum! {
    /// `engine_type` of CHANGE_PLAYER_PLANE, an ENUM (seed 004 row CHANGE_PLAYER_PLANE;
    /// FS-MULTIPLAYER.md 3.3).
    pub struct EngineType(u32) {
        /// `ENGINE_TYPE_PISTON`.
        ENGINE_TYPE_PISTON = 0,
        /// `ENGINE_TYPE_JET`.
        ENGINE_TYPE_JET = 1,
        /// `ENGINE_TYPE_NONE`.
        ENGINE_TYPE_NONE = 2,
        /// `ENGINE_TYPE_HELO_TURBINE`.
        ENGINE_TYPE_HELO_TURBINE = 3,
        /// Turboprop: FS2004 only, from swift's `EngineType` (FS-MULTIPLAYER.md 3.3 [S]).
        ENGINE_TYPE_TURBOPROP = 5,
    }
}

/// CHANGE_PLAYER_PLANE data: `engine_type` then the NUL-terminated `aircraft_name`
/// (seed 004 row CHANGE_PLAYER_PLANE; FS-MULTIPLAYER.md 1.3, 3.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangePlayerPlane {
    /// `engine_type`.
    pub engine_type: EngineType,
    /// `aircraft_name`: the aircraft's title.
    pub aircraft_name: ZString,
}

impl ChangePlayerPlane {
    pub(super) fn parse(data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let engine_type = EngineType(r.u32("engine_type")?);
        let aircraft_name = ZString::parse_rest("aircraft_name", &mut r)?;
        Ok(Self { engine_type, aircraft_name })
    }

    pub(super) fn encoded_len(&self) -> usize {
        4 + self.aircraft_name.wire_len()
    }

    pub(super) fn write(&self, w: &mut Writer<'_>) {
        w.u32(self.engine_type.0);
        self.aircraft_name.write(w);
    }
}

/// CHAT_TEXT data: `chat_data`, one NUL-terminated string (seed 004 row CHAT_TEXT;
/// FS-MULTIPLAYER.md 1.3, 3.3 chat).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChatText {
    /// `chat_data`.
    pub chat_data: ZString,
}

impl ChatText {
    pub(super) fn parse(data: &[u8]) -> Result<Self, WireError> {
        Ok(Self { chat_data: ZString::parse_rest("chat_data", &mut Reader::new(data))? })
    }

    pub(super) fn encoded_len(&self) -> usize {
        self.chat_data.wire_len()
    }

    pub(super) fn write(&self, w: &mut Writer<'_>) {
        self.chat_data.write(w);
    }
}

/// `REDUCED_LLAPBH_DATA` as laid out on the wire: 22 bytes packed (FS-MULTIPLAYER.md 1.3).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawReducedLlapbh {
    pbh: U32,
    lat_i: I32,
    lon_hi: I32,
    alt_i: I32,
    lat_f: U16,
    lon_lo: U16,
    alt_f: U16,
}
const _: () = assert!(size_of::<RawReducedLlapbh>() == 22);

/// `REDUCED_LLAPBH_DATA`: the "reduced" position, with only the 10 most significant bits of
/// pitch, bank and heading (seed 004 row POSITION_LLAPBH; FS-MULTIPLAYER.md 1.3, 3.4, 3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ReducedLlapbh {
    /// `pbh`: pitch, bank, heading and the on-ground bit.
    pub pbh: Pbh,
    /// `lat_i` (high 32 bits) and `lat_f` (low 16 bits) of latitude.
    pub lat: Fixed48,
    /// `lon_hi` and `lon_lo` of longitude.
    pub lon: Fixed48,
    /// `alt_i` and `alt_f` of altitude.
    pub alt: Fixed48,
}

/// Bytes of `REDUCED_LLAPBH_DATA` on the wire.
const REDUCED_LLAPBH_LEN: usize = size_of::<RawReducedLlapbh>();

impl ReducedLlapbh {
    /// Builds the reduced position from degrees, metres and an attitude (FS-MULTIPLAYER.md 3.4).
    pub fn from_degrees(lat_deg: f64, lon_deg: f64, alt_m: f64, attitude: Attitude, on_ground: bool) -> Self {
        Self {
            pbh: Pbh::from_attitude(attitude, on_ground),
            lat: units::latitude_from_deg(lat_deg),
            lon: units::longitude_from_deg(lon_deg),
            alt: units::altitude_from_m(alt_m),
        }
    }

    /// Latitude in degrees.
    pub fn latitude_deg(&self) -> f64 {
        units::latitude_deg(self.lat)
    }

    /// Longitude in degrees.
    pub fn longitude_deg(&self) -> f64 {
        units::longitude_deg(self.lon)
    }

    /// Altitude in metres.
    pub fn altitude_m(&self) -> f64 {
        units::altitude_m(self.alt)
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let raw = r.layout::<RawReducedLlapbh>("reduced_llapbh")?;
        Ok(Self {
            pbh: Pbh(raw.pbh.get()),
            lat: Fixed48 { i: raw.lat_i.get(), f: raw.lat_f.get() },
            lon: Fixed48 { i: raw.lon_hi.get(), f: raw.lon_lo.get() },
            alt: Fixed48 { i: raw.alt_i.get(), f: raw.alt_f.get() },
        })
    }

    fn write(&self, w: &mut Writer<'_>) {
        w.layout(&RawReducedLlapbh {
            pbh: self.pbh.0.into(),
            lat_i: self.lat.i.into(),
            lon_hi: self.lon.i.into(),
            alt_i: self.alt.i.into(),
            lat_f: self.lat.f.into(),
            lon_lo: self.lon.f.into(),
            alt_f: self.alt.f.into(),
        });
    }
}

/// The fields of POSITION_LLAPBH before `reduced_llapbh` (FS-MULTIPLAYER.md 1.3).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawLlapbhHead {
    application_time: U32,
    packet_index: U32,
}
const _: () = assert!(size_of::<RawLlapbhHead>() == 8);

/// The fields of POSITION_VELOCITY before `reduced_llapbh` (FS-MULTIPLAYER.md 1.3).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawVelocityHead {
    packet_index: U32,
    application_time: U32,
    lat_velocity: I32,
    lon_velocity: I32,
    alt_velocity: I32,
    ground_velocity: U32,
}
const _: () = assert!(size_of::<RawVelocityHead>() == 24);

/// FS2004's 4 reserved bytes before `pbh`: present only in that dialect; FS98 has none, so a
/// non-zero value cannot be sent in FS98 (FS-MULTIPLAYER.md 3.3).
fn read_reserved(dialect: Dialect, r: &mut Reader<'_>) -> Result<u32, WireError> {
    match dialect {
        Dialect::Fs98 => Ok(0),
        Dialect::Fs2004 => r.u32("reserved"),
    }
}

fn write_reserved(dialect: Dialect, reserved: u32, w: &mut Writer<'_>) -> Result<(), WireError> {
    match dialect {
        Dialect::Fs2004 => w.u32(reserved),
        Dialect::Fs98 if reserved == 0 => {}
        Dialect::Fs98 => {
            return Err(WireError::Unencodable { field: "reserved", reason: "FS98 positions have none" });
        }
    }
    Ok(())
}

fn reserved_len(dialect: Dialect) -> usize {
    match dialect {
        Dialect::Fs98 => 0,
        Dialect::Fs2004 => 4,
    }
}

/// POSITION_LLAPBH data (FS98, 30 bytes packed), or POSITION_SLEWMODE data (FS2004, 34 bytes)
/// (seed 004 row POSITION_LLAPBH; FS-MULTIPLAYER.md 1.3, 3.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PositionLlapbh {
    /// `application_time`: ignored on receipt (seed 004).
    pub application_time: u32,
    /// `packet_index`: a newer position has a higher index (seed 004).
    pub packet_index: u32,
    /// FS2004's `reserved` (4 bytes, read little-endian); always 0 in FS98.
    pub reserved: u32,
    /// `reduced_llapbh`.
    pub reduced_llapbh: ReducedLlapbh,
    /// Bytes counted in `data_size` after the layout: the C struct's 2 tail-padding bytes when a
    /// sender counts `sizeof` (FS-MULTIPLAYER.md 1.3, 6 item 2); kept to re-emit byte for byte.
    pub padding: Blob,
}

impl PositionLlapbh {
    pub(super) fn parse(dialect: Dialect, data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let head = r.layout::<RawLlapbhHead>("POSITION_LLAPBH")?;
        let reserved = read_reserved(dialect, &mut r)?;
        let reduced_llapbh = ReducedLlapbh::read(&mut r)?;
        Ok(Self {
            application_time: head.application_time.get(),
            packet_index: head.packet_index.get(),
            reserved,
            reduced_llapbh,
            padding: Blob::new(r.rest()),
        })
    }

    pub(super) fn encoded_len(&self, dialect: Dialect) -> usize {
        size_of::<RawLlapbhHead>() + reserved_len(dialect) + REDUCED_LLAPBH_LEN + self.padding.len()
    }

    pub(super) fn write(&self, dialect: Dialect, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.layout(&RawLlapbhHead {
            application_time: self.application_time.into(),
            packet_index: self.packet_index.into(),
        });
        write_reserved(dialect, self.reserved, w)?;
        self.reduced_llapbh.write(w);
        w.bytes(&self.padding);
        Ok(())
    }
}

/// POSITION_VELOCITY data: FS98 46 bytes packed, FS2004 50 (seed 004 row POSITION_VELOCITY;
/// FS-MULTIPLAYER.md 1.3, 3.3). `packet_index` comes before `application_time` here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PositionVelocity {
    /// `packet_index`: as in POSITION_LLAPBH.
    pub packet_index: u32,
    /// `application_time`: ignored on receipt (seed 004).
    pub application_time: u32,
    /// `lat_velocity`: north component, SIF32 16.16 ft/s.
    pub lat_velocity: Velocity16,
    /// `lon_velocity`: east component, SIF32 16.16 ft/s.
    pub lon_velocity: Velocity16,
    /// `alt_velocity`: vertical component, SIF32 16.16 ft/s.
    pub alt_velocity: Velocity16,
    /// `ground_velocity`: net ground speed, UIF32 16.16 ft/s ([`Velocity16::unsigned_ft_per_s`]).
    pub ground_velocity: u32,
    /// FS2004's `reserved` (4 bytes, read little-endian); always 0 in FS98.
    pub reserved: u32,
    /// `reduced_llapbh`.
    pub reduced_llapbh: ReducedLlapbh,
    /// Bytes counted in `data_size` after the layout (tail padding), kept to re-emit them.
    pub padding: Blob,
}

impl PositionVelocity {
    pub(super) fn parse(dialect: Dialect, data: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(data);
        let head = r.layout::<RawVelocityHead>("POSITION_VELOCITY")?;
        let reserved = read_reserved(dialect, &mut r)?;
        let reduced_llapbh = ReducedLlapbh::read(&mut r)?;
        Ok(Self {
            packet_index: head.packet_index.get(),
            application_time: head.application_time.get(),
            lat_velocity: Velocity16(head.lat_velocity.get()),
            lon_velocity: Velocity16(head.lon_velocity.get()),
            alt_velocity: Velocity16(head.alt_velocity.get()),
            ground_velocity: head.ground_velocity.get(),
            reserved,
            reduced_llapbh,
            padding: Blob::new(r.rest()),
        })
    }

    pub(super) fn encoded_len(&self, dialect: Dialect) -> usize {
        size_of::<RawVelocityHead>() + reserved_len(dialect) + REDUCED_LLAPBH_LEN + self.padding.len()
    }

    pub(super) fn write(&self, dialect: Dialect, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.layout(&RawVelocityHead {
            packet_index: self.packet_index.into(),
            application_time: self.application_time.into(),
            lat_velocity: self.lat_velocity.0.into(),
            lon_velocity: self.lon_velocity.0.into(),
            alt_velocity: self.alt_velocity.0.into(),
            ground_velocity: self.ground_velocity.into(),
        });
        write_reserved(dialect, self.reserved, w)?;
        self.reduced_llapbh.write(w);
        w.bytes(&self.padding);
        Ok(())
    }
}
