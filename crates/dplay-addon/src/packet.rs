//! Multiplayer packets: the MULTIPLAYER_PACKET_HEADER, the packet ids of both dialects and one
//! type per payload the SDK defines (seed 004; FS-MULTIPLAYER.md 1.1-1.3, 3.2, 3.3).
//!
//! A packet is the whole DirectPlay application message: an 8-byte header (`packet_id`,
//! `data_size`) and `data_size` bytes of data. [`Packet::parse`] checks `data_size` against the
//! datagram (neither more nor fewer bytes than it says) and every string against its NUL.
//! Payloads the SDK does not publish are kept as opaque bytes ([`Opaque`]) and re-emitted byte
//! for byte. The same ids mean different packets in the FS98 and FS2004 dialects, so parsing
//! and emitting take a [`Dialect`].

use dplay_wire::codec::len_u32;
use dplay_wire::{Blob, Reader, WireError, Writer, open_enum};
use serde::Serialize;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

mod fs2004;
mod payload;

pub use fs2004::{Fs2004PacketId, PLAYER_INFO_LEN, PlayerInfo, PlayerInfoFlags};
pub use payload::{
    ChangePlayerPlane, ChatText, EngineType, PositionLlapbh, PositionVelocity, ReducedLlapbh, UNWRITTEN_TAIL,
    ZString,
};

open_enum! {
    /// `MULTIPLAYER_PACKET_ID` of the FS98 SDK: `MULTIPLAYER_PACKET_ID_BASE` (0x1000) is PARAMS,
    /// each later entry one more (FS-MULTIPLAYER.md 1.2; seed 004 table). Names drop the
    /// `MULTIPLAYER_PACKET_ID_` prefix; the last is the SDK's `MULTIPLAYER_PACKET_CHAT_TEXT_SEND`.
    pub struct PacketId(u32) {
        /// PARAMS: detailed aircraft data, private to FS. An add-on ignores it (seed 004).
        PARAMS = 0x1000,
        /// ADD_PLAYER_REQUEST: join as a player; no data (seed 004).
        ADD_PLAYER_REQUEST = 0x1001,
        /// ADD_OBSERVER_REQUEST: join as an observer; no data (seed 004).
        ADD_OBSERVER_REQUEST = 0x1002,
        /// CHANGE_TO_PLAYER: `player_id` is a player (seed 004).
        CHANGE_TO_PLAYER = 0x1003,
        /// CHANGE_TO_OBSERVER: `player_id` is an observer (seed 004).
        CHANGE_TO_OBSERVER = 0x1004,
        /// ADD_PLAYER_REFUSED: the join as a player failed (seed 004).
        ADD_PLAYER_REFUSED = 0x1005,
        /// ADD_OBSERVER_REFUSED: the join as an observer failed (seed 004).
        ADD_OBSERVER_REFUSED = 0x1006,
        /// QUERY_PLAYER_TYPE: the sender does not know the receiver's type (seed 004).
        QUERY_PLAYER_TYPE = 0x1007,
        /// RETRANSMIT_JOIN_PLAYER: ADD_PLAYER_REQUEST unanswered for 30 s (seed 004).
        RETRANSMIT_JOIN_PLAYER = 0x1008,
        /// RETRANSMIT_JOIN_OBSERVER: ADD_OBSERVER_REQUEST unanswered for 30 s (seed 004).
        RETRANSMIT_JOIN_OBSERVER = 0x1009,
        /// REQUEST_OBSERVER: a player asks to become an observer (seed 004).
        REQUEST_OBSERVER = 0x100A,
        /// RETRANSMIT_GO_OBSERVER: REQUEST_OBSERVER unanswered for 30 s (seed 004).
        RETRANSMIT_GO_OBSERVER = 0x100B,
        /// OBSERVER_CHANGE_OK: the change to observer is accepted (seed 004).
        OBSERVER_CHANGE_OK = 0x100C,
        /// OBSERVER_CHANGE_REFUSED: the change to observer is refused (seed 004).
        OBSERVER_CHANGE_REFUSED = 0x100D,
        /// CHANGE_PLAYER_PLANE: a player's new plane (seed 004).
        CHANGE_PLAYER_PLANE = 0x100E,
        /// QUERY_PLAYER_PLANE: which plane does the receiver fly (seed 004).
        QUERY_PLAYER_PLANE = 0x100F,
        /// REMOTE_PLANE_UNKNOWN: ignored by an add-on (seed 004).
        REMOTE_PLANE_UNKNOWN = 0x1010,
        /// PLAYER_CRASH: the sender collided with the receiver (seed 004).
        PLAYER_CRASH = 0x1011,
        /// HOST_QUIT: ignored by an add-on (seed 004); sent by a host ending the session.
        HOST_QUIT = 0x1012,
        /// REQUEST_SITUATION: ignored by an add-on (seed 004).
        REQUEST_SITUATION = 0x1013,
        /// SITUATION_DATA: private; ignored by an add-on (seed 004).
        SITUATION_DATA = 0x1014,
        /// TEXTURE_REQUEST_LIST: private; ignored by an add-on (seed 004).
        TEXTURE_REQUEST_LIST = 0x1015,
        /// LEAVE_SESSION: the host removes the receiver (seed 004).
        LEAVE_SESSION = 0x1016,
        /// SYNC_INFORMATION: private; ignored by an add-on (seed 004).
        SYNC_INFORMATION = 0x1017,
        /// POSITION_LLAPBH: a position without velocity (seed 004).
        POSITION_LLAPBH = 0x1018,
        /// POSITION_VELOCITY: a position with velocities (seed 004).
        POSITION_VELOCITY = 0x1019,
        /// INITIALIZE_AIRCRAFT_SEND: private; ignored by an add-on (seed 004).
        INITIALIZE_AIRCRAFT_SEND = 0x101A,
        /// AIRCRAFT_SEGMENT: private; ignored by an add-on (seed 004).
        AIRCRAFT_SEGMENT = 0x101B,
        /// AIRCRAFT_CANCEL: private; ignored by an add-on (seed 004).
        AIRCRAFT_CANCEL = 0x101C,
        /// INITIALIZE_TEXTURE_SEND: private; ignored by an add-on (seed 004).
        INITIALIZE_TEXTURE_SEND = 0x101D,
        /// TEXTURE_SEGMENT: private; ignored by an add-on (seed 004).
        TEXTURE_SEGMENT = 0x101E,
        /// TEXTURE_CANCEL: private; ignored by an add-on (seed 004).
        TEXTURE_CANCEL = 0x101F,
        /// CHAT_TEXT (`MULTIPLAYER_PACKET_CHAT_TEXT_SEND`): a chat line (seed 004).
        CHAT_TEXT = 0x1020,
    }
}

/// Which game's numbering and layouts to speak (FS-MULTIPLAYER.md 1, 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum Dialect {
    /// The FS98 SDK (seed 004, FS-MULTIPLAYER.md 1): join handshake, ids 0x1000-0x1020.
    #[default]
    Fs98,
    /// FS2004 as swift speaks it (FS-MULTIPLAYER.md 3): no join handshake (the player info
    /// travels in the DirectPlay 8 player data), five known ids, 4 reserved bytes in positions.
    Fs2004,
}

impl Dialect {
    /// The unit of POSITION_VELOCITY's `ground_velocity` in this dialect (docs/decisions.md
    /// "Ground velocity units"): the FS98 SDK's 16.16 ft/s (seed 004 row POSITION_VELOCITY), and
    /// for FS2004 16.16 m/s, as swift reads FS9's own packets and as FSUIPC 02B4 gives FS's
    /// ground speed (FS-MULTIPLAYER.md 3.4 "Velocities"; medium confidence, no capture of FS9).
    pub fn ground_speed(self) -> GroundSpeedUnit {
        match self {
            Self::Fs98 => GroundSpeedUnit::FeetPerSecond16,
            Self::Fs2004 => GroundSpeedUnit::MetresPerSecond16,
        }
    }

    /// Bytes `data_size` may count beyond those a position carries: FS2004's 2 tail-padding
    /// bytes (SLEWMODE 36/34, VELOCITY 52/50; FS-MULTIPLAYER.md 3.3); none in FS98.
    fn position_unwritten_max(self) -> usize {
        match self {
            Self::Fs98 => 0,
            Self::Fs2004 => usize::from(UNWRITTEN_TAIL),
        }
    }
}

/// The unit of `ground_velocity` (a UIF32, 16 integer and 16 fraction bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum GroundSpeedUnit {
    /// Feet per second × 65536 (the FS98 SDK).
    FeetPerSecond16,
    /// Metres per second × 65536 (FS2004, FS-MULTIPLAYER.md 3.4).
    MetresPerSecond16,
}

impl GroundSpeedUnit {
    /// The word in metres per second.
    pub fn m_per_s(self, raw: u32) -> f64 {
        let v = f64::from(raw) / 65536.0;
        match self {
            Self::FeetPerSecond16 => v * crate::units::METRES_PER_FOOT,
            Self::MetresPerSecond16 => v,
        }
    }

    /// The word for a speed in metres per second (rounded, saturating; negative and NaN give 0).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // clamped to the u32 range
    pub fn from_m_per_s(self, m: f64) -> u32 {
        let v = match self {
            Self::FeetPerSecond16 => m / crate::units::METRES_PER_FOOT,
            Self::MetresPerSecond16 => m,
        } * 65536.0;
        if v.is_nan() { 0 } else { v.round().clamp(0.0, f64::from(u32::MAX)) as u32 }
    }
}

/// `MULTIPLAYER_PACKET_HEADER` (FS-MULTIPLAYER.md 1.1; seed 004 "standard header").
#[derive(Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct MultiplayerPacketHeader {
    /// `packet_id`: the packet's id in the dialect spoken.
    pub packet_id: U32,
    /// `data_size`: bytes of data after the header; may be 0.
    pub data_size: U32,
}
const _: () = assert!(size_of::<MultiplayerPacketHeader>() == HEADER_LEN);

/// Bytes in [`MultiplayerPacketHeader`].
pub const HEADER_LEN: usize = 8;

/// A packet whose data the SDK does not publish, or that has none: kept as bytes
/// (seed 004 rows marked "should be ignored"; FS-MULTIPLAYER.md 1.3 last paragraph).
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct Opaque {
    /// `packet_id`, as a number: the name depends on the dialect ([`PacketId`],
    /// [`Fs2004PacketId`]).
    pub id: u32,
    /// `data`, byte for byte (empty for the header-only packets).
    pub data: Blob,
}

impl std::fmt::Debug for Opaque {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opaque")
            .field("id", &format_args!("{:#06x}", self.id))
            .field("data", &self.data)
            .finish()
    }
}

/// One add-on packet, header and data (seed 004 table; FS-MULTIPLAYER.md 1.3, 3.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Packet {
    /// CHANGE_TO_PLAYER (FS98 only): `player_id` is a player (seed 004 row CHANGE_TO_PLAYER).
    ChangeToPlayer {
        /// `player_id`: a DirectPlay player id (DPID/DPNID).
        player_id: u32,
    },
    /// CHANGE_TO_OBSERVER (FS98 only): `player_id` is an observer (seed 004 row
    /// CHANGE_TO_OBSERVER).
    ChangeToObserver {
        /// `player_id`: a DirectPlay player id.
        player_id: u32,
    },
    /// CHANGE_PLAYER_PLANE (FS98 0x100E, FS2004 0x1003).
    ChangePlayerPlane(ChangePlayerPlane),
    /// POSITION_LLAPBH (FS98 0x1018), or POSITION_SLEWMODE (FS2004 0x100C), its descendant.
    PositionLlapbh(PositionLlapbh),
    /// POSITION_VELOCITY (FS98 0x1019, FS2004 0x100D).
    PositionVelocity(PositionVelocity),
    /// CHAT_TEXT (FS98 0x1020, FS2004 0x1017).
    ChatText(ChatText),
    /// Every other id, known or not: header-only signals and private payloads, as bytes.
    Opaque(Opaque),
}

impl Packet {
    /// A header-only packet (`data_size` 0), such as ADD_PLAYER_REQUEST (seed 004: "Contains no
    /// extra data"; header: "the data size can be 0").
    pub fn signal(id: PacketId) -> Self {
        Self::Opaque(Opaque { id: id.0, data: Blob::default() })
    }

    /// For an [`Opaque`] packet, its id read as FS98's ([`PacketId`]); `None` otherwise.
    pub fn opaque_fs98_id(&self) -> Option<PacketId> {
        match self {
            Self::Opaque(o) => Some(PacketId(o.id)),
            _ => None,
        }
    }

    /// `packet_id` in `dialect`, or `Unencodable` when the dialect has no such packet.
    pub fn packet_id(&self, dialect: Dialect) -> Result<u32, WireError> {
        let none = |field| WireError::Unencodable { field, reason: "the FS2004 dialect has no such packet" };
        Ok(match (self, dialect) {
            (Self::ChangeToPlayer { .. }, Dialect::Fs98) => PacketId::CHANGE_TO_PLAYER.0,
            (Self::ChangeToObserver { .. }, Dialect::Fs98) => PacketId::CHANGE_TO_OBSERVER.0,
            (Self::ChangeToPlayer { .. }, Dialect::Fs2004) => return Err(none("CHANGE_TO_PLAYER")),
            (Self::ChangeToObserver { .. }, Dialect::Fs2004) => return Err(none("CHANGE_TO_OBSERVER")),
            (Self::ChangePlayerPlane(_), Dialect::Fs98) => PacketId::CHANGE_PLAYER_PLANE.0,
            (Self::ChangePlayerPlane(_), Dialect::Fs2004) => Fs2004PacketId::CHANGE_PLAYER_PLANE.0,
            (Self::PositionLlapbh(_), Dialect::Fs98) => PacketId::POSITION_LLAPBH.0,
            (Self::PositionLlapbh(_), Dialect::Fs2004) => Fs2004PacketId::POSITION_SLEWMODE.0,
            (Self::PositionVelocity(_), Dialect::Fs98) => PacketId::POSITION_VELOCITY.0,
            (Self::PositionVelocity(_), Dialect::Fs2004) => Fs2004PacketId::POSITION_VELOCITY.0,
            (Self::ChatText(_), Dialect::Fs98) => PacketId::CHAT_TEXT.0,
            (Self::ChatText(_), Dialect::Fs2004) => Fs2004PacketId::CHAT_TEXT_SEND.0,
            (Self::Opaque(o), _) => o.id,
        })
    }

    /// Parses one datagram: the header, then exactly `data_size` bytes of data.
    ///
    /// One exception: an FS2004 POSITION_SLEWMODE or POSITION_VELOCITY may announce up to 2
    /// bytes more than it carries, as long as its whole layout is there (swift's 36/34 and
    /// 52/50; FS-MULTIPLAYER.md 3.3; docs/decisions.md "FS2004 position data_size"); the
    /// shortfall is kept in `unwritten` and re-emitted.
    ///
    /// Fails with `Truncated` when `data_size` reaches beyond the datagram, `InvalidValue` when
    /// bytes follow the data, `BadString` for a string without its NUL, and `Truncated` or
    /// `InvalidValue` for a payload shorter than its layout.
    pub fn parse(dialect: Dialect, bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let header = r.layout::<MultiplayerPacketHeader>("MULTIPLAYER_PACKET_HEADER")?;
        let data_size = usize::try_from(header.data_size.get()).unwrap_or(usize::MAX);
        let id = header.packet_id.get();
        let unwritten = Self::unwritten(dialect, id, data_size, r.remaining());
        let data = r.bytes("data", data_size.saturating_sub(usize::from(unwritten)))?;
        r.finish("data_size")?;
        match (dialect, id) {
            (Dialect::Fs98, 0x1003) => Ok(Self::ChangeToPlayer { player_id: payload::player_id(data)? }),
            (Dialect::Fs98, 0x1004) => Ok(Self::ChangeToObserver { player_id: payload::player_id(data)? }),
            (Dialect::Fs98, 0x100E) | (Dialect::Fs2004, 0x1003) => {
                ChangePlayerPlane::parse(data).map(Self::ChangePlayerPlane)
            }
            (Dialect::Fs98, 0x1018) | (Dialect::Fs2004, 0x100C) => {
                PositionLlapbh::parse(dialect, data, unwritten).map(Self::PositionLlapbh)
            }
            (Dialect::Fs98, 0x1019) | (Dialect::Fs2004, 0x100D) => {
                PositionVelocity::parse(dialect, data, unwritten).map(Self::PositionVelocity)
            }
            (Dialect::Fs98, 0x1020) | (Dialect::Fs2004, 0x1017) => ChatText::parse(data).map(Self::ChatText),
            _ => Ok(Self::Opaque(Opaque { id, data: Blob::new(data) })),
        }
    }

    /// How many of `data_size` bytes a position packet of `dialect` may leave out: none unless
    /// the datagram holds the whole layout and falls short of `data_size` by at most the
    /// dialect's tail padding.
    fn unwritten(dialect: Dialect, id: u32, data_size: usize, present: usize) -> u8 {
        let layout = match (dialect, id) {
            (Dialect::Fs2004, 0x100C) => PositionLlapbh::layout_len(dialect),
            (Dialect::Fs2004, 0x100D) => PositionVelocity::layout_len(dialect),
            _ => return 0,
        };
        let short = data_size.saturating_sub(present);
        if present >= layout && short <= dialect.position_unwritten_max() {
            u8::try_from(short).unwrap_or(0)
        } else {
            0
        }
    }

    /// Bytes `data_size` counts that the datagram does not carry (FS2004 positions only).
    pub fn unwritten_len(&self) -> usize {
        match self {
            Self::PositionLlapbh(p) => usize::from(p.unwritten),
            Self::PositionVelocity(p) => usize::from(p.unwritten),
            _ => 0,
        }
    }

    /// Bytes of data after the header.
    pub fn data_len(&self, dialect: Dialect) -> usize {
        match self {
            Self::ChangeToPlayer { .. } | Self::ChangeToObserver { .. } => 4,
            Self::ChangePlayerPlane(p) => p.encoded_len(),
            Self::PositionLlapbh(p) => p.encoded_len(dialect),
            Self::PositionVelocity(p) => p.encoded_len(dialect),
            Self::ChatText(c) => c.encoded_len(),
            Self::Opaque(o) => o.data.len(),
        }
    }

    /// Bytes the whole packet takes on the wire: header plus the data carried.
    pub fn encoded_len(&self, dialect: Dialect) -> usize {
        HEADER_LEN + self.data_len(dialect)
    }

    /// Writes the packet into the front of `buf`; returns the bytes written.
    ///
    /// Fails with `BufferTooSmall`, or `Unencodable` for a packet `dialect` cannot carry (a
    /// CHANGE_TO_* in FS2004, FS2004's reserved bytes in FS98) or a length over 4 GiB.
    pub fn emit(&self, dialect: Dialect, buf: &mut [u8]) -> Result<usize, WireError> {
        let packet_id = self.packet_id(dialect)?;
        if self.unwritten_len() > dialect.position_unwritten_max() {
            return Err(WireError::Unencodable {
                field: "unwritten",
                reason: "only FS2004 positions announce at most 2 bytes they do not carry",
            });
        }
        let data_size = len_u32("data_size", self.data_len(dialect) + self.unwritten_len())?;
        let mut w = Writer::new(buf, self.encoded_len(dialect))?;
        w.layout(&MultiplayerPacketHeader { packet_id: packet_id.into(), data_size: data_size.into() });
        match self {
            Self::ChangeToPlayer { player_id } | Self::ChangeToObserver { player_id } => w.u32(*player_id),
            Self::ChangePlayerPlane(p) => p.write(&mut w),
            Self::PositionLlapbh(p) => p.write(dialect, &mut w)?,
            Self::PositionVelocity(p) => p.write(dialect, &mut w)?,
            Self::ChatText(c) => c.write(&mut w),
            Self::Opaque(o) => w.bytes(&o.data),
        }
        w.finish()
    }

    /// Emits into a new vector of exactly `encoded_len(dialect)` bytes.
    pub fn to_vec(&self, dialect: Dialect) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; self.encoded_len(dialect)];
        let n = self.emit(dialect, &mut out)?;
        out.truncate(n);
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
