//! Joining a session: REQUESTPLAYERID, REQUESTGROUPID, REQUESTPLAYERREPLY,
//! ADDFORWARDREQUEST, ADDFORWARD, ADDFORWARDACK, ADDFORWARDREPLY, CREATEPLAYER,
//! CREATEPLAYERVERIFY, CREATEGROUP and IAMNAMESERVER (MC-DPL4CS 2.2.8-2.2.11, 2.2.20-2.2.22,
//! 2.2.33, 2.2.48-2.2.50; INDEX D.17, E.6).

use bitflags::bitflags;

use crate::codec::{Reader, Writer};
use crate::dp4::fields::{BODY_START, Body, off, place, reader_at, wide_at, wide_len, write_wide};
use crate::dp4::player::PackedPlayer;
use crate::dp4::session::{PlayerFlags, SECURITY_DESC_LEN, SecurityDesc};
use crate::{Blob, WideString, WireError};

/// `DPERR_NONEWPLAYERS`: the REQUESTPLAYERREPLY `Result` refusing a join (MC-DPL4CS 3.2.5.4).
pub const DPERR_NONEWPLAYERS: u32 = 0x8877_014A;
/// `CreateOffset` as senders write it: PlayerInfo right after the five DWORDs (28 from the
/// signature; MC-DPL4CS 2.2.8, 2.2.11, 2.2.20, 2.2.21).
pub const CREATE_OFFSET: u32 = 28;

bitflags! {
    /// REQUESTPLAYERID `Flags` (MC-DPL4CS 2.2.49). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct RequestPlayerFlags: u32 {
        /// SP: a system player.
        const SYSTEM_PLAYER = 0x1;
        /// PL: on the sending machine (ignored).
        const LOCAL = 0x8;
        const _ = !0;
    }
}

bitflags! {
    /// REQUESTGROUPID `Flags` (MC-DPL4CS 2.2.48). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct RequestGroupFlags: u32 {
        /// GL: the group is on the sending machine (ignored).
        const LOCAL = 0x8;
        const _ = !0;
    }
}

/// DPSP_MSG_REQUESTPLAYERID (0x05): ask the host for a player ID (MC-DPL4CS 2.2.49).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RequestPlayerId {
    /// `Flags`.
    pub flags: RequestPlayerFlags,
}

/// DPSP_MSG_REQUESTGROUPID (0x06): ask the host for a group ID (MC-DPL4CS 2.2.48).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RequestGroupId {
    /// `Flags`.
    pub flags: RequestGroupFlags,
}

impl Body for RequestPlayerId {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let flags = RequestPlayerFlags::from_bits_retain(r.u32("Flags")?);
        r.finish("Flags")?;
        Ok(Self { flags })
    }
    fn len(&self) -> usize {
        4
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.flags.bits());
        Ok(())
    }
}

impl Body for RequestGroupId {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let flags = RequestGroupFlags::from_bits_retain(r.u32("Flags")?);
        r.finish("Flags")?;
        Ok(Self { flags })
    }
    fn len(&self) -> usize {
        4
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.flags.bits());
        Ok(())
    }
}

/// DPSP_MSG_REQUESTPLAYERREPLY (0x07): the host's new player or group ID (MC-DPL4CS 2.2.50).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RequestPlayerReply {
    /// `ID`: the new player or group ID.
    pub id: u32,
    /// `SecDesc`: all zero unless the session is secure.
    pub sec_desc: SecurityDesc,
    /// `Result`: 0, or an HRESULT such as [`DPERR_NONEWPLAYERS`].
    pub result: u32,
    /// `SSPIProvider`, at `SSPIProviderOffset` (0: the session is not secure).
    pub sspi_provider: Option<WideString>,
    /// `CAPIProvider`, at `CAPIProviderOffset` (0: no encryption).
    pub capi_provider: Option<WideString>,
}

const REQUEST_REPLY_FIXED: usize = 4 + SECURITY_DESC_LEN + 12;

impl Body for RequestPlayerReply {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id = r.u32("ID")?;
        let sec_desc = SecurityDesc::read(r)?;
        let sspi_offset = r.u32("SSPIProviderOffset")?;
        let capi_offset = r.u32("CAPIProviderOffset")?;
        let result = r.u32("Result")?;
        let sspi_provider = wide_at(msg, "SSPIProvider", sspi_offset)?.map(|(s, _)| s);
        let capi_provider = wide_at(msg, "CAPIProvider", capi_offset)?.map(|(s, _)| s);
        Ok(Self { id, sec_desc, result, sspi_provider, capi_provider })
    }

    fn len(&self) -> usize {
        REQUEST_REPLY_FIXED
            + wide_len(&self.sspi_provider).unwrap_or(0)
            + wide_len(&self.capi_provider).unwrap_or(0)
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let mut at = BODY_START + REQUEST_REPLY_FIXED;
        w.u32(self.id);
        self.sec_desc.write(w);
        w.u32(place(&mut at, wide_len(&self.sspi_provider)));
        w.u32(place(&mut at, wide_len(&self.capi_provider)));
        w.u32(self.result);
        write_wide(w, &self.sspi_provider);
        write_wide(w, &self.capi_provider);
        Ok(())
    }
}

/// `Reserved1` (2 bytes) and `Reserved2` (4 bytes) after the PlayerInfo of CREATEPLAYER and
/// CREATEPLAYERVERIFY (MC-DPL4CS 2.2.21, 2.2.22): zero, ignored on receipt, kept as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct CreateReserved {
    /// `Reserved1`.
    pub reserved1: u16,
    /// `Reserved2`.
    pub reserved2: u32,
}

/// The shape of ADDFORWARD (0x2E), CREATEGROUP (0x09), CREATEPLAYER (0x08) and
/// CREATEPLAYERVERIFY (0x38): five DWORDs then a DPLAYI_PACKEDPLAYER at `CreateOffset`
/// (MC-DPL4CS 2.2.8, 2.2.20, 2.2.21, 2.2.22). CREATEGROUP's PlayerID is the new group's ID
/// and its PlayerInfo is the spec's GroupInfo.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlayerInfoMessage {
    /// `IDTo`.
    pub id_to: u32,
    /// `PlayerID`: the player (or group) created or announced.
    pub player_id: u32,
    /// `GroupID`: ignored, kept as read.
    pub group_id: u32,
    /// `PasswordOffset`: not used, kept as read.
    pub password_offset: u32,
    /// `PlayerInfo` / `GroupInfo`, at `CreateOffset` (written as 28).
    pub player_info: PackedPlayer,
    /// `Reserved1`/`Reserved2`: present in CREATEPLAYER and CREATEPLAYERVERIFY; read when at
    /// least 6 bytes follow the PlayerInfo.
    pub reserved: Option<CreateReserved>,
}

impl Body for PlayerInfoMessage {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_to = r.u32("IDTo")?;
        let player_id = r.u32("PlayerID")?;
        let group_id = r.u32("GroupID")?;
        let create_offset = r.u32("CreateOffset")?;
        let password_offset = r.u32("PasswordOffset")?;
        let mut pr = reader_at(msg, "CreateOffset", create_offset)?;
        let player_info = PackedPlayer::read(&mut pr)?;
        let reserved = if pr.remaining() >= 6 {
            Some(CreateReserved { reserved1: pr.u16("Reserved1")?, reserved2: pr.u32("Reserved2")? })
        } else {
            None
        };
        Ok(Self { id_to, player_id, group_id, password_offset, player_info, reserved })
    }

    fn len(&self) -> usize {
        20 + self.player_info.encoded_len() + self.reserved.map_or(0, |_| 6)
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.id_to);
        w.u32(self.player_id);
        w.u32(self.group_id);
        w.u32(CREATE_OFFSET);
        w.u32(self.password_offset);
        self.player_info.write(w);
        if let Some(reserved) = self.reserved {
            w.u16(reserved.reserved1);
            w.u32(reserved.reserved2);
        }
        Ok(())
    }
}

/// DPSP_MSG_ADDFORWARDREQUEST (0x13): a joining instance announces its system player to the
/// host (MC-DPL4CS 2.2.11).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AddForwardRequest {
    /// `IDTo`.
    pub id_to: u32,
    /// `PlayerID`: the player being added.
    pub player_id: u32,
    /// `GroupID`: ignored, kept as read.
    pub group_id: u32,
    /// `PlayerInfo`, at `CreateOffset`.
    pub player_info: PackedPlayer,
    /// `Password`, at `PasswordOffset` (0: absent).
    pub password: Option<WideString>,
    /// `TickCount`: right after the password, or after PlayerInfo when there is none.
    pub tick_count: u32,
}

impl Body for AddForwardRequest {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_to = r.u32("IDTo")?;
        let player_id = r.u32("PlayerID")?;
        let group_id = r.u32("GroupID")?;
        let create_offset = r.u32("CreateOffset")?;
        let password_offset = r.u32("PasswordOffset")?;
        let mut pr = reader_at(msg, "CreateOffset", create_offset)?;
        let player_info = PackedPlayer::read(&mut pr)?;
        let (password, tick_at) = match wide_at(msg, "Password", password_offset)? {
            Some((s, end)) => (Some(s), end),
            None => (None, create_offset as usize + pr.pos()),
        };
        let mut tr = reader_at(msg, "TickCount", off(tick_at))?;
        let tick_count = tr.u32("TickCount")?;
        Ok(Self { id_to, player_id, group_id, player_info, password, tick_count })
    }

    fn len(&self) -> usize {
        20 + self.player_info.encoded_len() + wide_len(&self.password).unwrap_or(0) + 4
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let mut at = BODY_START + 20 + self.player_info.encoded_len();
        w.u32(self.id_to);
        w.u32(self.player_id);
        w.u32(self.group_id);
        w.u32(CREATE_OFFSET);
        w.u32(place(&mut at, wide_len(&self.password)));
        self.player_info.write(w);
        write_wide(w, &self.password);
        w.u32(self.tick_count);
        Ok(())
    }
}

/// A body of one DWORD: ADDFORWARDACK's `ID` (0x2F, 2.2.9), ADDFORWARDREPLY's `Error`
/// (0x24, 2.2.10) and AUTHERROR's `Error` (0x1F, 2.2.16) (MC-DPL4CS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Dword(pub u32);

impl Body for Dword {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let v = r.u32("ID")?;
        r.finish("ID")?;
        Ok(Self(v))
    }
    fn len(&self) -> usize {
        4
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.0);
        Ok(())
    }
}

/// DPSP_MSG_IAMNAMESERVER (0x35): a new host announces itself (MC-DPL4CS 2.2.33).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IAmNameServer {
    /// `IDTo`.
    pub id_to: u32,
    /// `IDHost`: the new host's system player.
    pub id_host: u32,
    /// `Flags`: the new host's system player flags (SP, NS, PG).
    pub flags: PlayerFlags,
    /// `SPData`: `SPDataSize` bytes; Winsock: stream and datagram SOCKADDR_IN.
    pub sp_data: Blob,
}

impl Body for IAmNameServer {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_to = r.u32("IDTo")?;
        let id_host = r.u32("IDHost")?;
        let flags = PlayerFlags::from_bits_retain(r.u32("Flags")?);
        let size = r.u32("SPDataSize")?;
        let sp_data = Blob::new(r.bytes("SPData", size as usize)?);
        r.finish("SPData")?;
        Ok(Self { id_to, id_host, flags, sp_data })
    }
    fn len(&self) -> usize {
        16 + self.sp_data.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.id_to);
        w.u32(self.id_host);
        w.u32(self.flags.bits());
        w.u32(off(self.sp_data.len()));
        w.bytes(&self.sp_data);
        Ok(())
    }
}
