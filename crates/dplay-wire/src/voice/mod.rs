//! DirectPlay Voice (MC-DPLVP 2.2): the 17 voice messages, carried as the payload of a DFRAME
//! with `PACKET_COMMAND_USER_2` (DirectPlay 8, MC-DPL8R 2.2.3) or as the `voiceData` of
//! DPSP_MSG_VOICE (DirectPlay 4, MC-DPL4CS 2.2.54).
//!
//! Every message starts with the one-byte `MessageType` (2.2.1). [`VoiceMessage`] parses and
//! emits any of them; lengths are checked before anything is copied, target lists hold at
//! most 64 distinct DVIDs (2.2.2.5, 2.2.2.6) and voice client lists at most 0x52 entries
//! (2.2.4.2), so nothing is allocated beyond the input's own length.

mod message;

#[cfg(test)]
mod tests;

use std::fmt;

use uuid::Uuid;

use crate::open_enum;

pub use message::{Speech, SpeechWithFrom, SpeechWithTarget, VoiceClientEntry, VoiceMessage, VoiceVersion};

/// A DVID: a voice client's or group's identifier, its DirectPlay 8 DPNID or DirectPlay 4
/// player id (MC-DPLVP 1.1, 3.1.5.1.3 <1>). Shown as `0x%08X`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Dvid(pub u32);

impl Dvid {
    /// DVID 0 as a speech target: everyone but the sender (DVID_ALLPLAYERS).
    pub const ALL_PLAYERS: Self = Self(0);
}

impl fmt::Display for Dvid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X}", self.0)
    }
}

impl fmt::Debug for Dvid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl serde::Serialize for Dvid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// At most this many DVIDs in a target list (MC-DPLVP 2.2.2.5, 2.2.2.6).
pub const MAX_TARGETS: usize = 64;
/// At most this many entries in one DVMSGID_PLAYERLIST (MC-DPLVP 2.2.4.2).
pub const MAX_PLAYER_LIST_ENTRIES: usize = 0x52;
/// `HostOrderID` when host migration is not in use (MC-DPLVP 2.2.2.8, 2.2.4.1).
pub const NO_HOST_ORDER_ID: u32 = 0xFFFF_FFFF;

open_enum! {
    /// `MessageType`, the first byte of every voice message (MC-DPLVP 2.2.1).
    pub struct VoiceMessageType(u8) {
        /// Add Voice Client (2.2.2.4).
        DVMSGID_CREATEVOICEPLAYER = 0x01,
        /// Remove Voice Client (2.2.4.3).
        DVMSGID_DELETEVOICEPLAYER = 0x02,
        /// Session Lost (2.2.2.1).
        DVMSGID_SESSIONLOST = 0x03,
        /// Host Migration Complete (2.2.4.5.2).
        DVMSGID_HOSTMIGRATED = 0x0C,
        /// Set Client Voice Target (2.2.2.5).
        DVMSGID_SETTARGETS = 0x0D,
        /// Connect Request (2.2.3.1).
        DVMSGID_CONNECTREQUEST = 0x51,
        /// Connect Refuse (2.2.3.3).
        DVMSGID_CONNECTREFUSE = 0x53,
        /// Client Disconnect Request (2.2.2.2).
        DVMSGID_DISCONNECT = 0x54,
        /// Speech (2.2.4.4).
        DVMSGID_SPEECH = 0x55,
        /// Connect Accept (2.2.3.2).
        DVMSGID_CONNECTACCEPT = 0x56,
        /// Client Capability Confirmation (2.2.2.8).
        DVMSGID_SETTINGSCONFIRM = 0x58,
        /// Client Disconnect Confirmation (2.2.2.3).
        DVMSGID_DISCONNECTCONFIRM = 0x5A,
        /// Speech with Bounce (2.2.2.7).
        DVMSGID_SPEECHBOUNCE = 0x60,
        /// Voice Client List (2.2.4.2).
        DVMSGID_PLAYERLIST = 0x61,
        /// Voice Server Exited with Host Migration (2.2.4.5.1).
        DVMSGID_HOSTMIGRATELEAVE = 0x62,
        /// Speech with Target (2.2.2.6).
        DVMSGID_SPEECHWITHTARGET = 0x63,
        /// Speech with From (2.2.5.1).
        DVMSGID_SPEECHWITHFROM = 0x64,
    }
}

open_enum! {
    /// `SessionType` of DVMSGID_CONNECTACCEPT: which voice session subprotocol runs
    /// (MC-DPLVP 2.2.3.2, 1.3).
    pub struct VoiceSessionType(u32) {
        /// Peer (1.3.3).
        DVSESSIONTYPE_PEER = 1,
        /// Mixing (1.3.4).
        DVSESSIONTYPE_MIXING = 2,
        /// Forwarding (1.3.5).
        DVSESSIONTYPE_FORWARDING = 3,
        /// Echo (1.3.6).
        DVSESSIONTYPE_ECHO = 4,
    }
}

open_enum! {
    /// The HRESULTs a voice message carries (MC-DPLVP 2.2.2.1, 2.2.3.3).
    pub struct VoiceResult(u32) {
        /// `ReasonCode` of DVMSGID_SESSIONLOST.
        DVERR_SESSIONLOST = 0x8015_012C,
        /// `ReasonCode` of DVMSGID_CONNECTREFUSE.
        DVERR_NOTHOSTING = 0x8015_017B,
    }
}

bitflags::bitflags! {
    /// `SessionFlags` of DVMSGID_CONNECTACCEPT (MC-DPLVP 2.2.3.2). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
    pub struct VoiceSessionFlags: u32 {
        /// DVSESSION_NOHOSTMIGRATION.
        const NO_HOST_MIGRATION = 0x1;
        /// DVSESSION_SERVERCONTROLTARGET: the server sets each client's targets.
        const SERVER_CONTROL_TARGET = 0x2;
        const _ = !0;
    }
}

bitflags::bitflags! {
    /// `PlayerFlags` of a voice client (MC-DPLVP 2.2.2.4, 2.2.2.8, 2.2.4.1). Unknown bits are
    /// kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
    pub struct VoicePlayerFlags: u32 {
        /// DVPLAYERCAPS_HALFDUPLEX: the client does not record.
        const HALF_DUPLEX = 0x1;
        const _ = !0;
    }
}

/// A codec's compression GUID (MC-DPLVP 2.2.3.2) and what 1.3.7 says about its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codec {
    /// The short name the command line takes (`SC03`).
    pub name: &'static str,
    /// The spec's constant (`DPVCTGUID_SC03`).
    pub constant: &'static str,
    /// `CompressionType`.
    pub guid: Uuid,
    /// Milliseconds of audio per frame (1.3.7).
    pub frame_ms: u32,
    /// Bytes per frame (1.3.7; VR12's is its maximum).
    pub frame_bytes: u32,
}

const fn codec(
    name: &'static str,
    constant: &'static str,
    guid: u128,
    frame_ms: u32,
    frame_bytes: u32,
) -> Codec {
    Codec { name, constant, guid: Uuid::from_u128(guid), frame_ms, frame_bytes }
}

/// The seven codecs of MC-DPLVP 1.3.7 and 2.2.3.2.
pub const CODECS: [Codec; 7] = [
    codec("ADPCM", "DPVCTGUID_ADPCM", 0x699B52C1_A885_46A8_A308_97172419ADC7, 63, 256),
    codec("GSM", "DPVCTGUID_GSM", 0x24768C60_5A0D_11D3_9BE4_525400D985E7, 80, 130),
    codec("NONE", "DPVCTGUID_NONE", 0x8DE12FD4_7CB3_48CE_A7E8_9C47A22E8AC5, 50, 394),
    codec("SC03", "DPVCTGUID_SC03", 0x7D82A29B_2242_4F82_8F39_5D1153DF3E41, 100, 40),
    codec("SC06", "DPVCTGUID_SC06", 0x53DEF900_7168_4633_B47F_D143916A13C7, 100, 80),
    codec("TRUESPEECH", "DPVCTGUID_TRUESPEECH", 0xD7954361_5A0B_11D3_9BE4_525400D985E7, 90, 96),
    codec("VR12", "DPVCTGUID_VR12", 0xFE44A9FE_8ED4_48BF_9D66_1B1ADFF9FF6D, 90, 21),
];

impl Codec {
    /// The codec of `guid`, if it is one of the spec's.
    pub fn by_guid(guid: Uuid) -> Option<&'static Codec> {
        CODECS.iter().find(|c| c.guid == guid)
    }

    /// The codec named `name` (`SC03`, `none`, `DPVCTGUID_GSM`; any case).
    pub fn by_name(name: &str) -> Option<&'static Codec> {
        CODECS.iter().find(|c| c.name.eq_ignore_ascii_case(name) || c.constant.eq_ignore_ascii_case(name))
    }

    /// DPVCTGUID_SC03, the codec the SDK samples chose.
    pub fn sc03() -> &'static Codec {
        &CODECS[3]
    }

    /// DPVCTGUID_NONE: 8 kHz 8-bit mono PCM, which needs no codec.
    pub fn pcm() -> &'static Codec {
        &CODECS[2]
    }
}

/// `serialize_with` for `CompressionType`: the codec's constant, then the braced GUID.
pub(crate) fn serialize_codec<S: serde::Serializer>(guid: &Uuid, s: S) -> Result<S::Ok, S::Error> {
    let braced = crate::guid::braced_upper(guid);
    match Codec::by_guid(*guid) {
        Some(c) => s.collect_str(&format_args!("{} {braced}", c.constant)),
        None => s.serialize_str(&braced),
    }
}
