//! [`VoiceMessage`]: every MC-DPLVP message, parsed with validation and emitted (2.2).

use super::{
    Dvid, MAX_PLAYER_LIST_ENTRIES, MAX_TARGETS, VoiceMessageType as T, VoicePlayerFlags, VoiceResult,
    VoiceSessionFlags, VoiceSessionType,
};
use crate::codec::{Reader, Wire, Writer};
use crate::text::Blob;
use crate::{Uuid, WireError};

/// `VersionMajor`, `VersionMinor` and `VersionBuild` of the connection messages (MC-DPLVP
/// 2.2.3.1-2.2.3.3). The spec says they MUST be 1, 0 and 3 but are not used (1.7): other
/// values parse and are kept, so a peer of another build is still understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct VoiceVersion {
    /// `VersionMajor`.
    pub major: u8,
    /// `VersionMinor`.
    pub minor: u8,
    /// `VersionBuild`.
    pub build: u32,
}

impl VoiceVersion {
    /// 1.0 build 3, what the spec requires.
    pub const SPEC: Self = Self { major: 1, minor: 0, build: 3 };

    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { major: r.u8("VersionMajor")?, minor: r.u8("VersionMinor")?, build: r.u32("VersionBuild")? })
    }

    fn write(&self, w: &mut Writer<'_>) {
        w.u8(self.major);
        w.u8(self.minor);
        w.u32(self.build);
    }
}

impl Default for VoiceVersion {
    fn default() -> Self {
        Self::SPEC
    }
}

/// A voice client as DVMSGID_CREATEVOICEPLAYER and DVMSGID_PLAYERLIST describe it (MC-DPLVP
/// 2.2.2.4, 2.2.4.1): 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct VoiceClientEntry {
    /// `DVID`.
    pub dvid: Dvid,
    /// `PlayerFlags`.
    pub player_flags: VoicePlayerFlags,
    /// `HostOrderID` (0xFFFFFFFF without host migration).
    pub host_order_id: u32,
}

impl VoiceClientEntry {
    const LEN: usize = 12;

    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            dvid: Dvid(r.u32("DVID")?),
            player_flags: VoicePlayerFlags::from_bits_retain(r.u32("PlayerFlags")?),
            host_order_id: r.u32("HostOrderID")?,
        })
    }

    fn write(&self, w: &mut Writer<'_>) {
        w.u32(self.dvid.0);
        w.u32(self.player_flags.bits());
        w.u32(self.host_order_id);
    }
}

/// The fields every speech message has (MC-DPLVP 2.2.4.4, 2.2.2.7): DVMSGID_SPEECH from a
/// client, DVMSGID_SPEECHBOUNCE from the server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Speech {
    /// `MessageNumber`: the voice burst.
    pub message_number: u8,
    /// `SequenceNumber`: the frame within the burst.
    pub sequence_number: u8,
    /// `SpeechData`: one frame in the session's codec, never empty.
    pub data: Blob,
}

/// DVMSGID_SPEECHWITHTARGET (MC-DPLVP 2.2.2.6): speech for the server to pass on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SpeechWithTarget {
    /// `MessageNumber`.
    pub message_number: u8,
    /// `SequenceNumber`.
    pub sequence_number: u8,
    /// `TargetDVIDs`: 1 to 64 distinct players or groups (0 is everyone but the sender).
    pub targets: Vec<Dvid>,
    /// `SpeechData`, never empty.
    pub data: Blob,
}

/// DVMSGID_SPEECHWITHFROM (MC-DPLVP 2.2.5.1): forwarded speech and who said it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SpeechWithFrom {
    /// `MessageNumber`.
    pub message_number: u8,
    /// `SequenceNumber`.
    pub sequence_number: u8,
    /// `SourceDVID`: the client that sent the speech.
    pub source: Dvid,
    /// `SpeechData`, never empty.
    pub data: Blob,
}

/// One DirectPlay Voice message (MC-DPLVP 2.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub enum VoiceMessage {
    /// DVMSGID_CREATEVOICEPLAYER, 0x01: Add Voice Client (2.2.2.4).
    CreateVoicePlayer(VoiceClientEntry),
    /// DVMSGID_DELETEVOICEPLAYER, 0x02: Remove Voice Client (2.2.4.3).
    DeleteVoicePlayer {
        /// `DVID`.
        dvid: Dvid,
    },
    /// DVMSGID_SESSIONLOST, 0x03: Session Lost (2.2.2.1).
    SessionLost {
        /// `ReasonCode` (DVERR_SESSIONLOST).
        reason: VoiceResult,
    },
    /// DVMSGID_HOSTMIGRATED, 0x0C: Host Migration Complete (2.2.4.5.2).
    HostMigrated,
    /// DVMSGID_SETTARGETS, 0x0D: Set Client Voice Target (2.2.2.5), 0 to 64 distinct DVIDs.
    SetTargets {
        /// `TargetDVIDs`.
        targets: Vec<Dvid>,
    },
    /// DVMSGID_CONNECTREQUEST, 0x51: Connect Request (2.2.3.1).
    ConnectRequest(VoiceVersion),
    /// DVMSGID_CONNECTREFUSE, 0x53: Connect Refuse (2.2.3.3).
    ConnectRefuse {
        /// `ReasonCode` (DVERR_NOTHOSTING).
        reason: VoiceResult,
        /// The version fields.
        version: VoiceVersion,
    },
    /// DVMSGID_DISCONNECT, 0x54: Client Disconnect Request (2.2.2.2).
    Disconnect,
    /// DVMSGID_SPEECH, 0x55: Speech (2.2.4.4).
    Speech(Speech),
    /// DVMSGID_CONNECTACCEPT, 0x56: Connect Accept (2.2.3.2).
    ConnectAccept {
        /// `SessionType`.
        session_type: VoiceSessionType,
        /// The version fields.
        version: VoiceVersion,
        /// `SessionFlags`.
        session_flags: VoiceSessionFlags,
        /// `CompressionType`: the codec's GUID ([`super::Codec::by_guid`]), shown with the
        /// codec's constant (`DPVCTGUID_SC03 {7D82A29B-...}`).
        #[serde(serialize_with = "super::serialize_codec")]
        compression_type: Uuid,
    },
    /// DVMSGID_SETTINGSCONFIRM, 0x58: Client Capability Confirmation (2.2.2.8).
    SettingsConfirm {
        /// `PlayerFlags`.
        player_flags: VoicePlayerFlags,
        /// `HostOrderID` (0xFFFFFFFF outside host migration).
        host_order_id: u32,
    },
    /// DVMSGID_DISCONNECTCONFIRM, 0x5A: Client Disconnect Confirmation (2.2.2.3).
    DisconnectConfirm,
    /// DVMSGID_SPEECHBOUNCE, 0x60: Speech with Bounce (2.2.2.7).
    SpeechBounce(Speech),
    /// DVMSGID_PLAYERLIST, 0x61: Voice Client List (2.2.4.2), at most 0x52 entries.
    PlayerList {
        /// `HostOrderID` of the receiver.
        host_order_id: u32,
        /// `PlayerList`.
        entries: Vec<VoiceClientEntry>,
    },
    /// DVMSGID_HOSTMIGRATELEAVE, 0x62: Voice Server Exited with Host Migration (2.2.4.5.1).
    HostMigrateLeave,
    /// DVMSGID_SPEECHWITHTARGET, 0x63 (2.2.2.6).
    SpeechWithTarget(SpeechWithTarget),
    /// DVMSGID_SPEECHWITHFROM, 0x64 (2.2.5.1).
    SpeechWithFrom(SpeechWithFrom),
}

impl VoiceMessage {
    /// `MessageType`.
    pub fn message_type(&self) -> T {
        match self {
            Self::CreateVoicePlayer(_) => T::DVMSGID_CREATEVOICEPLAYER,
            Self::DeleteVoicePlayer { .. } => T::DVMSGID_DELETEVOICEPLAYER,
            Self::SessionLost { .. } => T::DVMSGID_SESSIONLOST,
            Self::HostMigrated => T::DVMSGID_HOSTMIGRATED,
            Self::SetTargets { .. } => T::DVMSGID_SETTARGETS,
            Self::ConnectRequest(_) => T::DVMSGID_CONNECTREQUEST,
            Self::ConnectRefuse { .. } => T::DVMSGID_CONNECTREFUSE,
            Self::Disconnect => T::DVMSGID_DISCONNECT,
            Self::Speech(_) => T::DVMSGID_SPEECH,
            Self::ConnectAccept { .. } => T::DVMSGID_CONNECTACCEPT,
            Self::SettingsConfirm { .. } => T::DVMSGID_SETTINGSCONFIRM,
            Self::DisconnectConfirm => T::DVMSGID_DISCONNECTCONFIRM,
            Self::SpeechBounce(_) => T::DVMSGID_SPEECHBOUNCE,
            Self::PlayerList { .. } => T::DVMSGID_PLAYERLIST,
            Self::HostMigrateLeave => T::DVMSGID_HOSTMIGRATELEAVE,
            Self::SpeechWithTarget(_) => T::DVMSGID_SPEECHWITHTARGET,
            Self::SpeechWithFrom(_) => T::DVMSGID_SPEECHWITHFROM,
        }
    }

    /// The spec's name: `DVMSGID_SPEECHWITHTARGET`, ...
    pub fn name(&self) -> &'static str {
        self.message_type().name().unwrap_or("DVMSGID_UNKNOWN")
    }

    /// True for the speech messages, which travel unordered and not guaranteed (2.2.2.6,
    /// 2.2.2.7, 2.2.4.4, 2.2.5.1); every other message is ordered and guaranteed.
    pub fn is_speech(&self) -> bool {
        matches!(
            self,
            Self::Speech(_) | Self::SpeechBounce(_) | Self::SpeechWithTarget(_) | Self::SpeechWithFrom(_)
        )
    }
}

/// Reads `count` DVIDs: at most `MAX_TARGETS`, all present, none repeated (2.2.2.5, 2.2.2.6).
fn read_targets(r: &mut Reader<'_>, min: u32) -> Result<Vec<Dvid>, WireError> {
    let at = r.pos();
    let count = r.u32("TargetCount")?;
    if count < min || count as usize > MAX_TARGETS {
        let reason = if min == 0 { "at most 64 targets" } else { "1 to 64 targets" };
        return Err(WireError::InvalidValue {
            field: "TargetCount",
            offset: at,
            value: count.into(),
            reason,
        });
    }
    let mut raw = Reader::new(r.bytes("TargetDVIDs", count as usize * 4)?);
    let targets = (0..count).map(|_| raw.u32("TargetDVIDs").map(Dvid)).collect::<Result<Vec<_>, _>>()?;
    for (i, t) in targets.iter().enumerate() {
        if targets.get(..i).is_some_and(|before| before.contains(t)) {
            return Err(WireError::InvalidValue {
                field: "TargetDVIDs",
                offset: at + 4 + i * 4,
                value: t.0.into(),
                reason: "a target appears twice",
            });
        }
    }
    Ok(targets)
}

fn read_speech_data(r: &mut Reader<'_>) -> Result<Blob, WireError> {
    let at = r.pos();
    let data = r.rest();
    if data.is_empty() {
        return Err(WireError::Truncated { field: "SpeechData", offset: at, needed: 1, got: 0 });
    }
    Ok(Blob::new(data))
}

fn read_speech(r: &mut Reader<'_>) -> Result<Speech, WireError> {
    Ok(Speech {
        message_number: r.u8("MessageNumber")?,
        sequence_number: r.u8("SequenceNumber")?,
        data: read_speech_data(r)?,
    })
}

/// A list's count field, refused past the spec's limit.
fn count(field: &'static str, len: usize, max: usize) -> Result<u32, WireError> {
    let over = WireError::Unencodable { field, reason: "too many entries for the field's limit" };
    if len > max {
        return Err(over);
    }
    u32::try_from(len).map_err(|_| over)
}

/// Speech without a frame, or speech with no target, has no valid wire form.
fn check_speech(data: &Blob, targets: Option<&[Dvid]>) -> Result<(), WireError> {
    if data.is_empty() {
        return Err(WireError::Unencodable {
            field: "SpeechData",
            reason: "a speech message carries a frame",
        });
    }
    match targets {
        Some([]) => Err(WireError::Unencodable { field: "TargetCount", reason: "speech needs a target" }),
        _ => Ok(()),
    }
}

impl Wire for VoiceMessage {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let kind = T(r.u8("MessageType")?);
        let msg = match kind {
            T::DVMSGID_CREATEVOICEPLAYER => Self::CreateVoicePlayer(VoiceClientEntry::read(&mut r)?),
            T::DVMSGID_DELETEVOICEPLAYER => Self::DeleteVoicePlayer { dvid: Dvid(r.u32("DVID")?) },
            T::DVMSGID_SESSIONLOST => Self::SessionLost { reason: VoiceResult(r.u32("ReasonCode")?) },
            T::DVMSGID_HOSTMIGRATED => Self::HostMigrated,
            T::DVMSGID_SETTARGETS => Self::SetTargets { targets: read_targets(&mut r, 0)? },
            T::DVMSGID_CONNECTREQUEST => Self::ConnectRequest(VoiceVersion::read(&mut r)?),
            T::DVMSGID_CONNECTREFUSE => Self::ConnectRefuse {
                reason: VoiceResult(r.u32("ReasonCode")?),
                version: VoiceVersion::read(&mut r)?,
            },
            T::DVMSGID_DISCONNECT => Self::Disconnect,
            T::DVMSGID_SPEECH => Self::Speech(read_speech(&mut r)?),
            T::DVMSGID_CONNECTACCEPT => Self::ConnectAccept {
                session_type: VoiceSessionType(r.u32("SessionType")?),
                version: VoiceVersion::read(&mut r)?,
                session_flags: VoiceSessionFlags::from_bits_retain(r.u32("SessionFlags")?),
                compression_type: r.guid("CompressionType")?,
            },
            T::DVMSGID_SETTINGSCONFIRM => Self::SettingsConfirm {
                player_flags: VoicePlayerFlags::from_bits_retain(r.u32("PlayerFlags")?),
                host_order_id: r.u32("HostOrderID")?,
            },
            T::DVMSGID_DISCONNECTCONFIRM => Self::DisconnectConfirm,
            T::DVMSGID_SPEECHBOUNCE => Self::SpeechBounce(read_speech(&mut r)?),
            T::DVMSGID_PLAYERLIST => {
                let host_order_id = r.u32("HostOrderID")?;
                let at = r.pos();
                let count = r.u32("NumPlayerListEntries")?;
                if count as usize > MAX_PLAYER_LIST_ENTRIES {
                    return Err(WireError::InvalidValue {
                        field: "NumPlayerListEntries",
                        offset: at,
                        value: count.into(),
                        reason: "at most 0x52 entries",
                    });
                }
                let mut list = Reader::new(r.bytes("PlayerList", count as usize * VoiceClientEntry::LEN)?);
                let entries =
                    (0..count).map(|_| VoiceClientEntry::read(&mut list)).collect::<Result<_, _>>()?;
                Self::PlayerList { host_order_id, entries }
            }
            T::DVMSGID_HOSTMIGRATELEAVE => Self::HostMigrateLeave,
            T::DVMSGID_SPEECHWITHTARGET => Self::SpeechWithTarget(SpeechWithTarget {
                message_number: r.u8("MessageNumber")?,
                sequence_number: r.u8("SequenceNumber")?,
                targets: read_targets(&mut r, 1)?,
                data: read_speech_data(&mut r)?,
            }),
            T::DVMSGID_SPEECHWITHFROM => Self::SpeechWithFrom(SpeechWithFrom {
                message_number: r.u8("MessageNumber")?,
                sequence_number: r.u8("SequenceNumber")?,
                source: Dvid(r.u32("SourceDVID")?),
                data: read_speech_data(&mut r)?,
            }),
            other => return Err(WireError::Unknown { what: "voice MessageType", value: other.0.into() }),
        };
        r.finish("MessageType")?;
        Ok(msg)
    }

    fn encoded_len(&self) -> usize {
        1 + match self {
            Self::CreateVoicePlayer(_) => VoiceClientEntry::LEN,
            Self::DeleteVoicePlayer { .. } | Self::SessionLost { .. } => 4,
            Self::HostMigrated | Self::Disconnect | Self::DisconnectConfirm | Self::HostMigrateLeave => 0,
            Self::SetTargets { targets } => 4 + 4 * targets.len(),
            Self::ConnectRequest(_) => 6,
            Self::ConnectRefuse { .. } => 10,
            Self::Speech(s) | Self::SpeechBounce(s) => 2 + s.data.len(),
            Self::ConnectAccept { .. } => 30,
            Self::SettingsConfirm { .. } => 8,
            Self::PlayerList { entries, .. } => 8 + VoiceClientEntry::LEN * entries.len(),
            Self::SpeechWithTarget(s) => 6 + 4 * s.targets.len() + s.data.len(),
            Self::SpeechWithFrom(s) => 6 + s.data.len(),
        }
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        w.u8(self.message_type().0);
        match self {
            Self::CreateVoicePlayer(e) => e.write(&mut w),
            Self::DeleteVoicePlayer { dvid } => w.u32(dvid.0),
            Self::SessionLost { reason } => w.u32(reason.0),
            Self::HostMigrated | Self::Disconnect | Self::DisconnectConfirm | Self::HostMigrateLeave => {}
            Self::SetTargets { targets } => {
                w.u32(count("TargetCount", targets.len(), MAX_TARGETS)?);
                targets.iter().for_each(|t| w.u32(t.0));
            }
            Self::ConnectRequest(v) => v.write(&mut w),
            Self::ConnectRefuse { reason, version } => {
                w.u32(reason.0);
                version.write(&mut w);
            }
            Self::Speech(s) | Self::SpeechBounce(s) => {
                check_speech(&s.data, None)?;
                w.u8(s.message_number);
                w.u8(s.sequence_number);
                w.bytes(&s.data);
            }
            Self::ConnectAccept { session_type, version, session_flags, compression_type } => {
                w.u32(session_type.0);
                version.write(&mut w);
                w.u32(session_flags.bits());
                w.guid(compression_type);
            }
            Self::SettingsConfirm { player_flags, host_order_id } => {
                w.u32(player_flags.bits());
                w.u32(*host_order_id);
            }
            Self::PlayerList { host_order_id, entries } => {
                let n = count("NumPlayerListEntries", entries.len(), MAX_PLAYER_LIST_ENTRIES)?;
                w.u32(*host_order_id);
                w.u32(n);
                entries.iter().for_each(|e| e.write(&mut w));
            }
            Self::SpeechWithTarget(s) => {
                check_speech(&s.data, Some(&s.targets))?;
                w.u8(s.message_number);
                w.u8(s.sequence_number);
                w.u32(count("TargetCount", s.targets.len(), MAX_TARGETS)?);
                s.targets.iter().for_each(|t| w.u32(t.0));
                w.bytes(&s.data);
            }
            Self::SpeechWithFrom(s) => {
                check_speech(&s.data, None)?;
                w.u8(s.message_number);
                w.u8(s.sequence_number);
                w.u32(s.source.0);
                w.bytes(&s.data);
            }
        }
        w.finish()
    }
}
