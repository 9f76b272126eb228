//! DPLAYI_PACKEDPLAYER and DPLAYI_SUPERPACKEDPLAYER: players and groups in the name table
//! messages (MC-DPL4CS 2.2.2, 2.2.3; INDEX D.17).

use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::codec::{Reader, Writer};
use crate::dp4::fields::{off, read_wide, wide_len, write_wide};
use crate::dp4::session::PlayerFlags;
use crate::{Blob, WideString, WireError};

/// `FixedSize` of DPLAYI_PACKEDPLAYER (MC-DPL4CS 2.2.2).
pub const PACKED_PLAYER_FIXED_SIZE: u32 = 48;
/// `Size` of DPLAYI_SUPERPACKEDPLAYER: Size, Flags, ID and PlayerInfoMask (MC-DPL4CS 2.2.3).
pub const SUPER_PACKED_PLAYER_SIZE: u32 = 16;

/// The fixed 48 bytes of DPLAYI_PACKEDPLAYER (MC-DPL4CS 2.2.2).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawPackedPlayer {
    size: U32,
    flags: U32,
    player_id: U32,
    short_name_length: U32,
    long_name_length: U32,
    service_provider_data_size: U32,
    player_data_size: U32,
    number_of_players: U32,
    system_player_id: U32,
    fixed_size: U32,
    player_version: U32,
    parent_id: U32,
}
const _: () = assert!(size_of::<RawPackedPlayer>() == PACKED_PLAYER_FIXED_SIZE as usize);

/// DPLAYI_PACKEDPLAYER: a player or group, 48 bytes plus its variable fields (MC-DPL4CS 2.2.2).
///
/// The four lengths and `NumberOfPlayers` are derived from the fields. `FixedSize` must be 48.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PackedPlayer {
    /// `Flags`.
    pub flags: PlayerFlags,
    /// `PlayerID`.
    pub player_id: u32,
    /// `SystemPlayerID`: the system player of the instance that owns this player.
    pub system_player_id: u32,
    /// `PlayerVersion`: the creating instance's dialect.
    pub player_version: u32,
    /// `ParentID`: the containing group, 0 for players and top-level groups.
    pub parent_id: u32,
    /// `ShortName` (`ShortNameLength` 0: absent).
    pub short_name: Option<WideString>,
    /// `LongName` (`LongNameLength` 0: absent).
    pub long_name: Option<WideString>,
    /// `ServiceProviderData`: for Winsock, stream then datagram SOCKADDR_IN (32 bytes).
    pub sp_data: Blob,
    /// `PlayerData`: the game's per-player data.
    pub player_data: Blob,
    /// `PlayerIDs`: a group's members (`NumberOfPlayers` entries).
    pub player_ids: Vec<u32>,
    /// Whether `Size` also counts `PlayerIDs` (decision F-29: both are accepted). Only
    /// meaningful when `player_ids` is non-empty; parsing sets it to false otherwise.
    pub size_counts_player_ids: bool,
}

impl PackedPlayer {
    /// Reads one structure and exactly its variable fields.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.pos();
        let raw = r.layout::<RawPackedPlayer>("DPLAYI_PACKEDPLAYER")?;
        let fixed_size = raw.fixed_size.get();
        if fixed_size != PACKED_PLAYER_FIXED_SIZE {
            return Err(WireError::InvalidValue {
                field: "FixedSize",
                offset: start + 36,
                value: fixed_size.into(),
                reason: "DPLAYI_PACKEDPLAYER FixedSize MUST be 48",
            });
        }
        let size = raw.size.get();
        let short_len = raw.short_name_length.get();
        let long_len = raw.long_name_length.get();
        let sp_len = raw.service_provider_data_size.get();
        let data_len = raw.player_data_size.get();
        let count = raw.number_of_players.get();
        let name = |field, len: u32, r: &mut Reader<'_>| -> Result<Option<WideString>, WireError> {
            if len == 0 {
                return Ok(None);
            }
            let at = r.pos();
            WideString::parse_nul(field, at, r.bytes(field, len as usize)?).map(Some)
        };
        let short_name = name("ShortName", short_len, r)?;
        let long_name = name("LongName", long_len, r)?;
        let sp_data = Blob::new(r.bytes("ServiceProviderData", sp_len as usize)?);
        let player_data = Blob::new(r.bytes("PlayerData", data_len as usize)?);
        let body = u64::from(PACKED_PLAYER_FIXED_SIZE)
            + u64::from(short_len)
            + u64::from(long_len)
            + u64::from(sp_len)
            + u64::from(data_len);
        let with_ids = body + 4 * u64::from(count);
        if u64::from(size) != body && u64::from(size) != with_ids {
            return Err(WireError::InvalidValue {
                field: "Size",
                offset: start,
                value: size.into(),
                reason: "Size MUST be 48 plus the four lengths (and, tolerated, the PlayerIDs)",
            });
        }
        let mut player_ids = Vec::new();
        for _ in 0..count {
            player_ids.push(r.u32("PlayerIDs")?);
        }
        Ok(Self {
            flags: PlayerFlags::from_bits_retain(raw.flags.get()),
            player_id: raw.player_id.get(),
            system_player_id: raw.system_player_id.get(),
            player_version: raw.player_version.get(),
            parent_id: raw.parent_id.get(),
            short_name,
            long_name,
            sp_data,
            player_data,
            size_counts_player_ids: count != 0 && u64::from(size) == with_ids,
            player_ids,
        })
    }

    /// Bytes on the wire.
    pub fn encoded_len(&self) -> usize {
        self.size_field_base() + 4 * self.player_ids.len()
    }

    fn size_field_base(&self) -> usize {
        PACKED_PLAYER_FIXED_SIZE as usize
            + wide_len(&self.short_name).unwrap_or(0)
            + wide_len(&self.long_name).unwrap_or(0)
            + self.sp_data.len()
            + self.player_data.len()
    }

    /// Writes the structure.
    pub fn write(&self, w: &mut Writer<'_>) {
        let size = if self.size_counts_player_ids { self.encoded_len() } else { self.size_field_base() };
        w.layout(&RawPackedPlayer {
            size: off(size).into(),
            flags: self.flags.bits().into(),
            player_id: self.player_id.into(),
            short_name_length: off(wide_len(&self.short_name).unwrap_or(0)).into(),
            long_name_length: off(wide_len(&self.long_name).unwrap_or(0)).into(),
            service_provider_data_size: off(self.sp_data.len()).into(),
            player_data_size: off(self.player_data.len()).into(),
            number_of_players: off(self.player_ids.len()).into(),
            system_player_id: self.system_player_id.into(),
            fixed_size: PACKED_PLAYER_FIXED_SIZE.into(),
            player_version: self.player_version.into(),
            parent_id: self.parent_id.into(),
        });
        write_wide(w, &self.short_name);
        write_wide(w, &self.long_name);
        w.bytes(&self.sp_data);
        w.bytes(&self.player_data);
        for id in &self.player_ids {
            w.u32(*id);
        }
    }
}

/// How many bytes an optional length field of DPLAYI_SUPERPACKEDPLAYER takes: the 2-bit codes
/// SL, PD, PC and SC of `PlayerInfoMask` (MC-DPL4CS 2.2.3; INDEX B.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum LenWidth {
    /// Code 1: one byte.
    One = 1,
    /// Code 2: two bytes.
    Two = 2,
    /// Code 3: four bytes.
    Four = 3,
}

impl LenWidth {
    fn from_code(code: u32) -> Option<Self> {
        match code {
            1 => Some(Self::One),
            2 => Some(Self::Two),
            3 => Some(Self::Four),
            _ => None,
        }
    }

    /// Bytes the length field takes.
    pub fn bytes(self) -> usize {
        match self {
            Self::One => 1,
            Self::Two => 2,
            Self::Four => 4,
        }
    }

    /// The narrowest width that holds `n`.
    pub fn for_len(n: usize) -> Self {
        if n <= 0xFF {
            Self::One
        } else if n <= 0xFFFF {
            Self::Two
        } else {
            Self::Four
        }
    }

    fn read(self, r: &mut Reader<'_>, field: &'static str) -> Result<u32, WireError> {
        match self {
            Self::One => r.u8(field).map(u32::from),
            Self::Two => r.u16(field).map(u32::from),
            Self::Four => r.u32(field),
        }
    }

    fn write(self, w: &mut Writer<'_>, field: &'static str, n: usize) -> Result<(), WireError> {
        let too_big = WireError::Unencodable { field, reason: "longer than its length code allows" };
        match self {
            Self::One => w.u8(u8::try_from(n).map_err(|_| too_big)?),
            Self::Two => w.u16(u16::try_from(n).map_err(|_| too_big)?),
            Self::Four => w.u32(u32::try_from(n).map_err(|_| too_big)?),
        }
        Ok(())
    }
}

/// An optional SUPERPACKEDPLAYER field with its length-code width, kept so the bytes re-emit
/// (Windows writes code 1 even where a narrower one is not needed, INDEX B.12).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Counted<T> {
    /// The length field's width.
    pub width: LenWidth,
    /// The data (bytes) or IDs.
    pub value: T,
}

impl<T> Counted<T> {
    /// A field whose length code is the narrowest that fits `len`.
    pub fn narrowest(value: T, len: usize) -> Self {
        Self { width: LenWidth::for_len(len), value }
    }
}

const MASK_SN: u32 = 0x1;
const MASK_LN: u32 = 0x2;
const MASK_SL_SHIFT: u32 = 2;
const MASK_PD_SHIFT: u32 = 4;
const MASK_PC_SHIFT: u32 = 6;
const MASK_PI: u32 = 0x100;
const MASK_SC_SHIFT: u32 = 9;

/// DPLAYI_SUPERPACKEDPLAYER: a compact player or group entry of SUPERENUMPLAYERSREPLY
/// (MC-DPL4CS 2.2.3). `PlayerInfoMask` is derived from which fields are present; its
/// undefined bits (X) are written as zero.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SuperPackedPlayer {
    /// `Flags`.
    pub flags: PlayerFlags,
    /// `ID`.
    pub id: u32,
    /// `VersionOrSystemPlayerID`: the dialect for a system player, else its system player's ID.
    pub version_or_system_player_id: u32,
    /// `ShortName` (SN).
    pub short_name: Option<WideString>,
    /// `LongName` (LN).
    pub long_name: Option<WideString>,
    /// `PlayerDataLength` and `PlayerData` (PD).
    pub player_data: Option<Counted<Blob>>,
    /// `ServiceProviderDataLength` and `ServiceProviderData` (SL).
    pub sp_data: Option<Counted<Blob>>,
    /// `PlayerCount` and `PlayerIDs` (PC).
    pub player_ids: Option<Counted<Vec<u32>>>,
    /// `ParentID` (PI).
    pub parent_id: Option<u32>,
    /// `ShortcutIDCount` and `ShortcutIDs` (SC).
    pub shortcut_ids: Option<Counted<Vec<u32>>>,
}

fn width_of<T>(field: &Option<Counted<T>>) -> u32 {
    field.as_ref().map_or(0, |c| c.width as u32)
}

fn read_ids(r: &mut Reader<'_>, n: u32, field: &'static str) -> Result<Vec<u32>, WireError> {
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(r.u32(field)?);
    }
    Ok(ids)
}

impl SuperPackedPlayer {
    /// Reads one entry.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.pos();
        let size = r.u32("Size")?;
        if size != SUPER_PACKED_PLAYER_SIZE {
            return Err(WireError::InvalidValue {
                field: "Size",
                offset: at,
                value: size.into(),
                reason: "DPLAYI_SUPERPACKEDPLAYER Size MUST be 16",
            });
        }
        let flags = PlayerFlags::from_bits_retain(r.u32("Flags")?);
        let id = r.u32("ID")?;
        let mask = r.u32("PlayerInfoMask")?;
        let version_or_system_player_id = r.u32("VersionOrSystemPlayerID")?;
        let width = |shift: u32| LenWidth::from_code(mask >> shift & 0x3);
        let short_name = if mask & MASK_SN != 0 { Some(read_wide(r, "ShortName")?) } else { None };
        let long_name = if mask & MASK_LN != 0 { Some(read_wide(r, "LongName")?) } else { None };
        let blob = |w: Option<LenWidth>, len_field, field, r: &mut Reader<'_>| match w {
            Some(width) => {
                let n = width.read(r, len_field)?;
                Ok::<_, WireError>(Some(Counted { width, value: Blob::new(r.bytes(field, n as usize)?) }))
            }
            None => Ok(None),
        };
        let player_data = blob(width(MASK_PD_SHIFT), "PlayerDataLength", "PlayerData", r)?;
        let sp_data = blob(width(MASK_SL_SHIFT), "ServiceProviderDataLength", "ServiceProviderData", r)?;
        let player_ids = match width(MASK_PC_SHIFT) {
            Some(width) => {
                let n = width.read(r, "PlayerCount")?;
                Some(Counted { width, value: read_ids(r, n, "PlayerIDs")? })
            }
            None => None,
        };
        let parent_id = if mask & MASK_PI != 0 { Some(r.u32("ParentID")?) } else { None };
        let shortcut_ids = match width(MASK_SC_SHIFT) {
            Some(width) => {
                let n = width.read(r, "ShortcutIDCount")?;
                Some(Counted { width, value: read_ids(r, n, "ShortcutIDs")? })
            }
            None => None,
        };
        Ok(Self {
            flags,
            id,
            version_or_system_player_id,
            short_name,
            long_name,
            player_data,
            sp_data,
            player_ids,
            parent_id,
            shortcut_ids,
        })
    }

    /// `PlayerInfoMask` for the fields present.
    pub fn player_info_mask(&self) -> u32 {
        let mut mask = 0;
        if self.short_name.is_some() {
            mask |= MASK_SN;
        }
        if self.long_name.is_some() {
            mask |= MASK_LN;
        }
        if self.parent_id.is_some() {
            mask |= MASK_PI;
        }
        mask | width_of(&self.sp_data) << MASK_SL_SHIFT
            | width_of(&self.player_data) << MASK_PD_SHIFT
            | width_of(&self.player_ids) << MASK_PC_SHIFT
            | width_of(&self.shortcut_ids) << MASK_SC_SHIFT
    }

    /// Bytes on the wire.
    pub fn encoded_len(&self) -> usize {
        let blob = |f: &Option<Counted<Blob>>| f.as_ref().map_or(0, |c| c.width.bytes() + c.value.len());
        let ids =
            |f: &Option<Counted<Vec<u32>>>| f.as_ref().map_or(0, |c| c.width.bytes() + 4 * c.value.len());
        20 + wide_len(&self.short_name).unwrap_or(0)
            + wide_len(&self.long_name).unwrap_or(0)
            + blob(&self.player_data)
            + blob(&self.sp_data)
            + ids(&self.player_ids)
            + self.parent_id.map_or(0, |_| 4)
            + ids(&self.shortcut_ids)
    }

    /// Writes the entry; fails if a length does not fit its length code.
    pub fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(SUPER_PACKED_PLAYER_SIZE);
        w.u32(self.flags.bits());
        w.u32(self.id);
        w.u32(self.player_info_mask());
        w.u32(self.version_or_system_player_id);
        write_wide(w, &self.short_name);
        write_wide(w, &self.long_name);
        for (field, name) in
            [(&self.player_data, "PlayerDataLength"), (&self.sp_data, "ServiceProviderDataLength")]
        {
            if let Some(c) = field {
                c.width.write(w, name, c.value.len())?;
                w.bytes(&c.value);
            }
        }
        if let Some(c) = &self.player_ids {
            c.width.write(w, "PlayerCount", c.value.len())?;
            c.value.iter().for_each(|id| w.u32(*id));
        }
        if let Some(parent) = self.parent_id {
            w.u32(parent);
        }
        if let Some(c) = &self.shortcut_ids {
            c.width.write(w, "ShortcutIDCount", c.value.len())?;
            c.value.iter().for_each(|id| w.u32(*id));
        }
        Ok(())
    }
}
