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
/// always re-emits as itself plus one NUL. The bytes are kept as received; as text they are
/// read as Windows-1252 (docs/decisions.md "Add-on text code page").
#[derive(Clone, PartialEq, Eq, Hash, Default, Serialize)]
pub struct ZString(Vec<u8>);

impl ZString {
    /// The bytes up to (not including) the NUL, or `None` if `bytes` holds a NUL.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        (!bytes.contains(&0)).then(|| Self(bytes.to_vec()))
    }

    /// Encodes `text` in Windows-1252, the ANSI code page of the Western Windows that FS runs
    /// on: a character outside it becomes `?`, a NUL is dropped (docs/decisions.md "Add-on
    /// text code page").
    pub fn from_text(text: &str) -> Self {
        Self(text.chars().filter(|&c| c != '\0').map(|c| cp1252_byte(c).unwrap_or(b'?')).collect())
    }

    /// The bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text, Windows-1252 decoded. Lossless: the five bytes 1252 leaves undefined (0x81,
    /// 0x8D, 0x8F, 0x90, 0x9D) become the C1 controls of the same value, as Windows' own
    /// conversion does, so [`ZString::from_text`] gives the same bytes back.
    pub fn to_text(&self) -> String {
        self.0.iter().map(|&b| cp1252_char(b)).collect()
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
        std::fmt::Debug::fmt(&self.to_text(), f)
    }
}

/// Windows-1252's characters for 0x80-0x9F; `None` where the code page defines none.
const CP1252_HIGH: [Option<char>; 32] = [
    Some('€'),
    None,
    Some('‚'),
    Some('ƒ'),
    Some('„'),
    Some('…'),
    Some('†'),
    Some('‡'),
    Some('ˆ'),
    Some('‰'),
    Some('Š'),
    Some('‹'),
    Some('Œ'),
    None,
    Some('Ž'),
    None,
    None,
    Some('‘'),
    Some('’'),
    Some('“'),
    Some('”'),
    Some('•'),
    Some('–'),
    Some('—'),
    Some('˜'),
    Some('™'),
    Some('š'),
    Some('›'),
    Some('œ'),
    None,
    Some('ž'),
    Some('Ÿ'),
];

/// The character of a Windows-1252 byte (an undefined one as the C1 control of its value).
fn cp1252_char(b: u8) -> char {
    match b {
        0x80..=0x9F => CP1252_HIGH.get(usize::from(b - 0x80)).copied().flatten().unwrap_or(char::from(b)),
        _ => char::from(b),
    }
}

/// The Windows-1252 byte of `c`, if it has one.
fn cp1252_byte(c: char) -> Option<u8> {
    let b = u8::try_from(u32::from(c)).ok();
    match b {
        // Latin-1 outside 0x80-0x9F is the same in 1252; a C1 control only where 1252 has no
        // character of its own there (the lossless read of the undefined bytes).
        Some(b) if !(0x80..=0x9F).contains(&b) => Some(b),
        Some(b) if CP1252_HIGH.get(usize::from(b - 0x80)).copied().flatten().is_none() => Some(b),
        _ => CP1252_HIGH.iter().position(|&h| h == Some(c)).and_then(|i| u8::try_from(i + 0x80).ok()),
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

/// The `unwritten` bytes of an FS2004 position: the C struct's 2 tail-padding bytes, counted in
/// `data_size` but never written (FS-MULTIPLAYER.md 3.3: SLEWMODE 36/34, VELOCITY 52/50).
pub const UNWRITTEN_TAIL: u8 = 2;

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
    /// Bytes `data_size` counts beyond those the message carries: FS2004's form, which announces
    /// the C `sizeof` (36) and writes the 34 packed bytes ([`UNWRITTEN_TAIL`]; FS-MULTIPLAYER.md
    /// 3.3, 6 item 2; docs/decisions.md "FS2004 position data_size"). 0 in FS98.
    pub unwritten: u8,
}

impl PositionLlapbh {
    /// Bytes of the layout, without tail padding: FS98 30, FS2004 34 (FS-MULTIPLAYER.md 1.3, 3.3).
    pub fn layout_len(dialect: Dialect) -> usize {
        size_of::<RawLlapbhHead>() + reserved_len(dialect) + REDUCED_LLAPBH_LEN
    }

    pub(super) fn parse(dialect: Dialect, data: &[u8], unwritten: u8) -> Result<Self, WireError> {
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
            unwritten,
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
    /// `ground_velocity`: net ground speed, UIF32 16.16: ft/s in FS98, m/s in FS2004
    /// ([`PositionVelocity::ground_m_per_s`]; docs/decisions.md "Ground velocity units").
    pub ground_velocity: u32,
    /// FS2004's `reserved` (4 bytes, read little-endian); always 0 in FS98.
    pub reserved: u32,
    /// `reduced_llapbh`.
    pub reduced_llapbh: ReducedLlapbh,
    /// Bytes counted in `data_size` after the layout (tail padding), kept to re-emit them.
    pub padding: Blob,
    /// Bytes `data_size` counts beyond those the message carries: FS2004 announces 52 and
    /// writes 50 ([`UNWRITTEN_TAIL`]; FS-MULTIPLAYER.md 3.3). 0 in FS98.
    pub unwritten: u8,
}

impl PositionVelocity {
    /// Bytes of the layout, without tail padding: FS98 46, FS2004 50 (FS-MULTIPLAYER.md 1.3, 3.3).
    pub fn layout_len(dialect: Dialect) -> usize {
        size_of::<RawVelocityHead>() + reserved_len(dialect) + REDUCED_LLAPBH_LEN
    }

    /// `ground_velocity` in metres per second, in the dialect's unit ([`Dialect::ground_speed`]).
    pub fn ground_m_per_s(&self, dialect: Dialect) -> f64 {
        dialect.ground_speed().m_per_s(self.ground_velocity)
    }

    pub(super) fn parse(dialect: Dialect, data: &[u8], unwritten: u8) -> Result<Self, WireError> {
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
            unwritten,
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
