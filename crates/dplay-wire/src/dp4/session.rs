//! DPSESSIONDESC2 and DPSECURITYDESC, and the DP4 flag fields (MC-DPL4CS 2.2.4, 2.2.5, 1.3;
//! INDEX B.12).

use bitflags::bitflags;
use uuid::Uuid;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::WireError;
use crate::codec::{Reader, Writer};

bitflags! {
    /// DPSESSIONDESC2 `Flags` (MC-DPL4CS 2.2.5, 1.3; INDEX B.12, F-27). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct SessionFlags: u32 {
        /// NP, DPSESSION_NEWPLAYERSDISABLED: no new players may be created.
        const NEW_PLAYERS_DISABLED = 0x1;
        /// MH, DPSESSION_MIGRATEHOST: host duties migrate when the host quits.
        const MIGRATE_HOST = 0x4;
        /// NM, DPSESSION_NOMESSAGEID: player messages carry no idFrom/idTo (2.2.45).
        const NO_MESSAGE_ID = 0x8;
        /// I: DPSESSION_NOPLAYERMGMT in 1.3, "ignored" in 2.2.5 (F-27).
        const NO_PLAYER_MGMT = 0x10;
        /// JD, DPSESSION_JOINDISABLED: no new instances may join.
        const JOIN_DISABLED = 0x20;
        /// KA, DPSESSION_KEEPALIVE: detect dead players with the Ping timer.
        const KEEP_ALIVE = 0x40;
        /// ND, DPSESSION_NODATAMESSAGES: no PLAYERDATACHANGED broadcasts.
        const NO_DATA_MESSAGES = 0x80;
        /// SS, DPSESSION_SECURESERVER: authenticate joining users.
        const SECURE_SERVER = 0x100;
        /// P, DPSESSION_PRIVATE: a password is needed to enumerate and open (2.2.5; F-27).
        const PRIVATE = 0x200;
        /// PR, DPSESSION_PASSWORDREQUIRED: a password is needed to join (2.2.5; F-27).
        const PASSWORD_REQUIRED = 0x400;
        /// MS, DPSESSION_MULTICASTSERVER: route everything through the host.
        const MULTICAST_SERVER = 0x800;
        /// CS, DPSESSION_CLIENTSERVER: only the server player is downloaded.
        const CLIENT_SERVER = 0x1000;
        /// RP, DPSESSION_DIRECTPLAYPROTOCOL: use MC-DPL4R.
        const DIRECTPLAY_PROTOCOL = 0x2000;
        /// NO, DPSESSION_NOPRESERVEORDER: reliable messages may be indicated out of order.
        const NO_PRESERVE_ORDER = 0x4000;
        /// OL, DPSESSION_OPTIMIZELATENCY: a hint only; never changes the bytes.
        const OPTIMIZE_LATENCY = 0x8000;
        /// AV, DPSESSION_ALLOWVOICERETRO: voice for non-voice lobby-launched games (2.2.5).
        const ALLOW_VOICE_RETRO = 0x1_0000;
        /// NS, DPSESSION_NOSESSIONDESCMESSAGES: no SESSIONDESCCHANGED broadcasts.
        const NO_SESSION_DESC_MESSAGES = 0x2_0000;
        const _ = !0;
    }
}

bitflags! {
    /// Player flags of DPLAYI_PACKEDPLAYER, DPLAYI_SUPERPACKEDPLAYER and IAMNAMESERVER
    /// (MC-DPL4CS 2.2.2, 2.2.3, 2.2.33; INDEX B.12). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct PlayerFlags: u32 {
        /// SP: the system player.
        const SYSTEM_PLAYER = 0x1;
        /// NS: the name server (host); only with SP.
        const NAME_SERVER = 0x2;
        /// PG: in a group; MUST be set on system players.
        const IN_GROUP = 0x4;
        /// PL: on the sending machine; ignored on receipt.
        const LOCAL = 0x8;
        const _ = !0;
    }
}

/// `Size` of DPSESSIONDESC2.
pub const SESSION_DESC_LEN: usize = 80;
/// `Size` of DPSECURITYDESC.
pub const SECURITY_DESC_LEN: usize = 24;

#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawSessionDesc2 {
    size: U32,
    flags: U32,
    instance_guid: [u8; 16],
    application_guid: [u8; 16],
    max_players: U32,
    current_player_count: U32,
    session_name: U32,
    password: U32,
    reserved1: U32,
    reserved2: U32,
    application_defined: [U32; 4],
}
const _: () = assert!(size_of::<RawSessionDesc2>() == SESSION_DESC_LEN);

/// DPSESSIONDESC2: the game session's description, 80 bytes (MC-DPL4CS 2.2.5; INDEX D.17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SessionDesc2 {
    /// `Size`: 80; kept as read so that other values re-emit.
    pub size: u32,
    /// `Flags`: the session options.
    pub flags: SessionFlags,
    /// `InstanceGUID`: this session instance.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub instance_guid: Uuid,
    /// `ApplicationGUID`: the game.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub application_guid: Uuid,
    /// `MaxPlayers`.
    pub max_players: u32,
    /// `CurrentPlayerCount`.
    pub current_player_count: u32,
    /// `SessionName`: a pointer placeholder, SHOULD be 0 and ignored; kept as read.
    pub session_name: u32,
    /// `Password`: a pointer placeholder, SHOULD be 0 and ignored; kept as read.
    pub password: u32,
    /// `Reserved1`: the key XORed into player and group IDs (3.2.5.4).
    pub reserved1: u32,
    /// `Reserved2`.
    pub reserved2: u32,
    /// `ApplicationDefined1`-`ApplicationDefined4`.
    pub application_defined: [u32; 4],
}

impl SessionDesc2 {
    /// Reads 80 bytes.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let raw = r.layout::<RawSessionDesc2>("DPSESSIONDESC2")?;
        Ok(Self {
            size: raw.size.get(),
            flags: SessionFlags::from_bits_retain(raw.flags.get()),
            instance_guid: Uuid::from_bytes_le(raw.instance_guid),
            application_guid: Uuid::from_bytes_le(raw.application_guid),
            max_players: raw.max_players.get(),
            current_player_count: raw.current_player_count.get(),
            session_name: raw.session_name.get(),
            password: raw.password.get(),
            reserved1: raw.reserved1.get(),
            reserved2: raw.reserved2.get(),
            application_defined: raw.application_defined.map(|v| v.get()),
        })
    }

    /// Writes 80 bytes.
    pub fn write(&self, w: &mut Writer<'_>) {
        w.layout(&RawSessionDesc2 {
            size: self.size.into(),
            flags: self.flags.bits().into(),
            instance_guid: self.instance_guid.to_bytes_le(),
            application_guid: self.application_guid.to_bytes_le(),
            max_players: self.max_players.into(),
            current_player_count: self.current_player_count.into(),
            session_name: self.session_name.into(),
            password: self.password.into(),
            reserved1: self.reserved1.into(),
            reserved2: self.reserved2.into(),
            application_defined: self.application_defined.map(U32::new),
        });
    }
}

#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawSecurityDesc {
    size: U32,
    flags: U32,
    sspi_provider: U32,
    capi_provider: U32,
    capi_provider_type: U32,
    encryption_algorithm: U32,
}
const _: () = assert!(size_of::<RawSecurityDesc>() == SECURITY_DESC_LEN);

/// DPSECURITYDESC: the session's security properties, 24 bytes (MC-DPL4CS 2.2.4). Every field
/// is kept as read; Windows writes `Size` 0 (2.2.4 <4>).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct SecurityDesc {
    /// `Size`.
    pub size: u32,
    /// `Flags`: unused, zero.
    pub flags: u32,
    /// `SSPIProvider`: ignored on receipt.
    pub sspi_provider: u32,
    /// `CAPIProvider`: ignored on receipt.
    pub capi_provider: u32,
    /// `CAPIProviderType`: default PROV_RSA_FULL (1).
    pub capi_provider_type: u32,
    /// `EncryptionAlgorithm`: default CALG_RC4 (0x6801).
    pub encryption_algorithm: u32,
}

impl SecurityDesc {
    /// Reads 24 bytes.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let raw = r.layout::<RawSecurityDesc>("SecDesc")?;
        Ok(Self {
            size: raw.size.get(),
            flags: raw.flags.get(),
            sspi_provider: raw.sspi_provider.get(),
            capi_provider: raw.capi_provider.get(),
            capi_provider_type: raw.capi_provider_type.get(),
            encryption_algorithm: raw.encryption_algorithm.get(),
        })
    }

    /// Writes 24 bytes.
    pub fn write(&self, w: &mut Writer<'_>) {
        w.layout(&RawSecurityDesc {
            size: self.size.into(),
            flags: self.flags.into(),
            sspi_provider: self.sspi_provider.into(),
            capi_provider: self.capi_provider.into(),
            capi_provider_type: self.capi_provider_type.into(),
            encryption_algorithm: self.encryption_algorithm.into(),
        });
    }
}
