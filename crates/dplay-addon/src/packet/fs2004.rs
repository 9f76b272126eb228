//! The FS2004 dialect's ids and the player info a joiner sends (FS-MULTIPLAYER.md 3.2, 3.6).

use bitflags::bitflags;
use dplay_wire::{Reader, WireError, open_enum};
use serde::Serialize;

use super::ZString;

open_enum! {
    /// The FS2004 packet ids known from swift's `MULTIPLAYER_PACKET_ID` (FS-MULTIPLAYER.md 3.2).
    /// The same numbers mean other packets in FS98 ([`super::PacketId`]).
    pub struct Fs2004PacketId(u32) {
        /// `MULTIPLAYER_PACKET_ID_PARAMS`: 28 mostly unknown bytes (FS-MULTIPLAYER.md 3.3).
        PARAMS = 0x1000,
        /// `MULTIPLAYER_PACKET_ID_CHANGE_PLAYER_PLANE`.
        CHANGE_PLAYER_PLANE = 0x1003,
        /// `MULTIPLAYER_PACKET_ID_POSITION_SLEWMODE`: FS2004's POSITION_LLAPBH.
        POSITION_SLEWMODE = 0x100C,
        /// `MULTIPLAYER_PACKET_ID_POSITION_VELOCITY`.
        POSITION_VELOCITY = 0x100D,
        /// `MPCHAT_PACKET_ID_CHAT_TEXT_SEND`.
        CHAT_TEXT_SEND = 0x1017,
    }
}

bitflags! {
    /// `dwFlags` of PLAYER_INFO_STRUCT (FS-MULTIPLAYER.md 3.6).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
    pub struct PlayerInfoFlags: u32 {
        /// `OBSERVER`: the player joins as an observer.
        const OBSERVER = 0x1;
        /// `PARAMS_RECV`: wants PARAMS packets.
        const PARAMS_RECV = 0x2;
        /// `PARAMS_SEND`: sends PARAMS packets.
        const PARAMS_SEND = 0x4;
    }
}

/// Bytes of PLAYER_INFO_STRUCT: 4 + 261 + 3 padding (FS-MULTIPLAYER.md 3.6).
pub const PLAYER_INFO_LEN: usize = 268;
/// `szAircraft` holds MAX_PATH + 1 bytes, NUL included.
const SZ_AIRCRAFT_LEN: usize = 261;

/// PLAYER_INFO_STRUCT: what an FS2004 joiner puts in its DirectPlay 8 player data
/// (`DPN_PLAYER_INFO.pvData`) instead of the FS98 join handshake (FS-MULTIPLAYER.md 3.1, 3.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlayerInfo {
    /// `dwFlags`; unknown bits are kept.
    pub flags: PlayerInfoFlags,
    /// `szAircraft`: the aircraft title, at most 260 bytes (zero-filled after its NUL).
    pub aircraft: ZString,
}

impl PlayerInfo {
    /// Parses the 268-byte structure. The aircraft ends at its first NUL, which must come
    /// within `szAircraft`; the bytes after it and the padding are not checked.
    pub fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let flags = PlayerInfoFlags::from_bits_retain(r.u32("dwFlags")?);
        let offset = r.pos();
        let field = r.bytes("szAircraft", SZ_AIRCRAFT_LEN)?;
        r.bytes("padding", PLAYER_INFO_LEN - 4 - SZ_AIRCRAFT_LEN)?;
        r.finish("PLAYER_INFO_STRUCT")?;
        let end = field.iter().position(|&b| b == 0).ok_or(WireError::BadString {
            field: "szAircraft",
            offset,
            reason: "missing terminating NUL",
        })?;
        let aircraft = field.get(..end).and_then(ZString::new).unwrap_or_default();
        Ok(Self { flags, aircraft })
    }

    /// Writes the 268 bytes; an aircraft title longer than 260 bytes is cut to 260.
    pub fn to_bytes(&self) -> [u8; PLAYER_INFO_LEN] {
        let mut out = [0; PLAYER_INFO_LEN];
        let (flags, rest) = out.split_at_mut(4);
        flags.copy_from_slice(&self.flags.bits().to_le_bytes());
        for (dst, src) in rest.iter_mut().take(SZ_AIRCRAFT_LEN - 1).zip(self.aircraft.as_bytes()) {
            *dst = *src;
        }
        out
    }
}
