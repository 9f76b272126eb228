//! DirectPlay 8 session (core) messages (MC-DPL8CS 2.2; MS-DPDX 2.2.10-2.2.37).
//!
//! A session message is the payload of a DFRAME with `PACKET_COMMAND_USER_1` set (MC-DPL8CS
//! 2.1.1). It starts with `dwPacketType` (u32 LE); every offset inside counts from the end of
//! that field, payload byte 4 (INDEX §0). [`SessionMessage`] parses and emits any of them;
//! the per-message types are the variants' contents. DXDiag's chat message has no
//! `dwPacketType` and travels with USER_1 clear: it is [`ChatMessage`], apart.
//!
//! MS-DPDX names the same messages TRANS_USERDATA_* (INDEX F-1); [`PacketType::dpdx_name`]
//! gives those names.

mod app_desc;
mod chat;
mod completion;
mod connect;
mod connect_info;
mod disconnect;
mod group;
mod integrity;
mod layout;
mod message;
mod name_table;
mod result_code;
mod update_info;

#[cfg(test)]
mod tests;

pub use app_desc::ApplicationDescFlags;
pub use chat::{CHAT_MESSAGE_LEN, CHAT_STRING_UNITS, ChatMessage, GAME_MSGID_CHAT};
pub use completion::{ProcessCompletion, ReqProcessCompletion};
pub use connect::{ConnectFailed, DNET_VERSION_EX, InstructConnect, ObjectType, PlayerConnectInfo};
pub use connect_info::{APPLICATION_DESC_SIZE, SendConnectInfo};
pub use disconnect::{DestroyPlayer, DestroyReason, HostMigrate, TerminateSession};
pub use group::{CreateGroup, DestroyGroup, GroupFlags, GroupMember, ReqCreateGroup, ReqGroupMember};
pub use integrity::{IntegrityCheck, ReqIntegrityCheck};
pub use layout::{BlobField, BlobLayout};
pub use name_table::{
    AckNameTableOp, AddPlayer, ENTRY_LEN, MEMBERSHIP_LEN, NameTableEntry, NameTableEntryFlags,
    NameTableMembership, NameTableOp, VersionInfo,
};
pub use result_code::ResultCode;
pub use update_info::{InfoFlags, ReqUpdateInfo, UpdateInfo};

use crate::WireError;
use crate::codec::{Reader, Wire, Writer};
use crate::dp8::dpnid::Dpnid;
use crate::open_enum;

open_enum! {
    /// `dwPacketType` of a session message, named as MC-DPL8CS names it (INDEX A.3). 0xCF,
    /// 0xDC, 0xDD and 0xDE are assigned to nothing.
    pub struct PacketType(u32) {
        /// 0xC1 (MC-DPL8CS 2.2.1.1, 2.2.1.2).
        DN_MSG_INTERNAL_PLAYER_CONNECT_INFO = 0xC1,
        /// 0xC2 (MC-DPL8CS 2.2.1.4).
        DN_MSG_INTERNAL_SEND_CONNECT_INFO = 0xC2,
        /// 0xC3 (MC-DPL8CS 2.2.1.8).
        DN_MSG_INTERNAL_ACK_CONNECT_INFO = 0xC3,
        /// 0xC4 (MC-DPL8CS 2.2.1.10; spelled DNID there).
        DN_MSG_INTERNAL_SEND_PLAYER_DNID = 0xC4,
        /// 0xC5 (MC-DPL8CS 2.2.1.3).
        DN_MSG_INTERNAL_CONNECT_FAILED = 0xC5,
        /// 0xC6 (MC-DPL8CS 2.2.1.9).
        DN_MSG_INTERNAL_INSTRUCT_CONNECT = 0xC6,
        /// 0xC7 (MC-DPL8CS 2.2.1.11).
        DN_MSG_INTERNAL_INSTRUCTED_CONNECT_FAILED = 0xC7,
        /// 0xC8 (MC-DPL8CS 2.2.1.12).
        DN_MSG_INTERNAL_CONNECT_ATTEMPT_FAILED = 0xC8,
        /// 0xC9 (MC-DPL8CS 2.2.2.4).
        DN_MSG_INTERNAL_NAMETABLE_VERSION = 0xC9,
        /// 0xCA (MC-DPL8CS 2.2.2.5).
        DN_MSG_INTERNAL_RESYNC_VERSION = 0xCA,
        /// 0xCB (MC-DPL8CS 2.2.2.9).
        DN_MSG_INTERNAL_REQ_NAMETABLE_OP = 0xCB,
        /// 0xCC (MC-DPL8CS 2.2.2.10, where the table mislabels it REQ_NAMETABLE_OP, INDEX F-14).
        DN_MSG_INTERNAL_ACK_NAMETABLE_OP = 0xCC,
        /// 0xCD (MC-DPL8CS 2.2.2.3).
        DN_MSG_INTERNAL_HOST_MIGRATE = 0xCD,
        /// 0xCE (MC-DPL8CS 2.2.2.11).
        DN_MSG_INTERNAL_HOST_MIGRATE_COMPLETE = 0xCE,
        /// 0xD0 (MC-DPL8CS 2.2.1.7).
        DN_MSG_INTERNAL_ADD_PLAYER = 0xD0,
        /// 0xD1 (MC-DPL8CS 2.2.2.2).
        DN_MSG_INTERNAL_DESTROY_PLAYER = 0xD1,
        /// 0xD2 (MC-DPL8CS 2.2.4.1).
        DN_MSG_INTERNAL_REQ_CREATE_GROUP = 0xD2,
        /// 0xD3 (MC-DPL8CS 2.2.4.3).
        DN_MSG_INTERNAL_REQ_ADD_PLAYER_TO_GROUP = 0xD3,
        /// 0xD4 (MC-DPL8CS 2.2.4.5).
        DN_MSG_INTERNAL_REQ_DELETE_PLAYER_FROM_GROUP = 0xD4,
        /// 0xD5 (MC-DPL8CS 2.2.4.7).
        DN_MSG_INTERNAL_REQ_DESTROY_GROUP = 0xD5,
        /// 0xD6 (MC-DPL8CS 2.2.5.1).
        DN_MSG_INTERNAL_REQ_UPDATE_INFO = 0xD6,
        /// 0xD7 (MC-DPL8CS 2.2.4.2).
        DN_MSG_INTERNAL_CREATE_GROUP = 0xD7,
        /// 0xD8 (MC-DPL8CS 2.2.4.8).
        DN_MSG_INTERNAL_DESTROY_GROUP = 0xD8,
        /// 0xD9 (MC-DPL8CS 2.2.4.4).
        DN_MSG_INTERNAL_ADD_PLAYER_TO_GROUP = 0xD9,
        /// 0xDA (MC-DPL8CS 2.2.4.6).
        DN_MSG_INTERNAL_DELETE_PLAYER_FROM_GROUP = 0xDA,
        /// 0xDB (MC-DPL8CS 2.2.5.2).
        DN_MSG_INTERNAL_UPDATE_INFO = 0xDB,
        /// 0xDF (MC-DPL8CS 2.2.2.1).
        DN_MSG_INTERNAL_TERMINATE_SESSION = 0xDF,
        /// 0xE0 (MC-DPL8CS 2.2.3.2).
        DN_MSG_INTERNAL_REQ_PROCESS_COMPLETION = 0xE0,
        /// 0xE1 (MC-DPL8CS 2.2.3.3).
        DN_MSG_INTERNAL_PROCESS_COMPLETION = 0xE1,
        /// 0xE2 (MC-DPL8CS 2.2.2.6).
        DN_MSG_INTERNAL_REQ_INTEGRITY_CHECK = 0xE2,
        /// 0xE3 (MC-DPL8CS 2.2.2.7).
        DN_MSG_INTERNAL_INTEGRITY_CHECK = 0xE3,
        /// 0xE4 (MC-DPL8CS 2.2.2.8, where the table mislabels it INTEGRITY_CHECK, INDEX F-14).
        DN_MSG_INTERNAL_INTEGRITY_CHECK_RESPONSE = 0xE4,
    }
}

impl PacketType {
    /// The MS-DPDX name (TRANS_USERDATA_*), for the types DXDiag uses (INDEX A.3, F-1).
    pub const fn dpdx_name(self) -> Option<&'static str> {
        Some(match self.0 {
            0xC1 => "TRANS_USERDATA_PLAYER_CONNECT_INFO",
            0xC2 => "TRANS_USERDATA_SEND_SESSION_INFO",
            0xC3 => "TRANS_USERDATA_ACK_SESSION_INFO",
            0xC4 => "TRANS_USERDATA_SEND_PLAYER_DNID",
            0xC5 => "TRANS_USERDATA_CONNECT_FAILED",
            0xC6 => "TRANS_USERDATA_INSTRUCT_CONNECT",
            0xC7 => "TRANS_USERDATA_INSTRUCTED_CONNECT_FAILED",
            0xC8 => "TRANS_USERDATA_CONNECT_ATTEMPT_FAILED",
            0xC9 => "TRANS_USERDATA_NAMETABLE_VERSION",
            0xCA => "TRANS_USERDATA_RESYNC_VERSION",
            0xCB => "TRANS_USERDATA_REQ_NAMETABLE_OP",
            0xCC => "TRANS_USERDATA_ACK_NAMETABLE_OP",
            0xCD => "TRANS_USERDATA_HOST_MIGRATE",
            0xCE => "TRANS_USERDATA_HOST_MIGRATE_COMPLETE",
            0xD0 => "TRANS_USERDATA_ADD_PLAYER",
            0xD1 => "TRANS_USERDATA_DESTROY_PLAYER",
            0xDF => "TRANS_USERDATA_TERMINATE_SESSION",
            0xE2 => "TRANS_USERDATA_REQ_INTEGRITY_CHECK",
            0xE3 => "TRANS_USERDATA_INTEGRITY_CHECK",
            0xE4 => "TRANS_USERDATA_INTEGRITY_CHECK_RESPONSE",
            _ => return None,
        })
    }
}

/// A message body: the bytes after `dwPacketType`, whose offsets count from its first byte.
///
/// The body alone is also the "op" that DN_ACK_NAMETABLE_OP carries (MC-DPL8CS 2.2.2.10).
pub(crate) trait Body {
    /// Parses a whole body.
    fn parse_body(body: &[u8]) -> Result<Self, WireError>
    where
        Self: Sized;
    /// Bytes of the body.
    fn body_len(&self) -> usize;
    /// Writes the body; the writer was sized with `body_len` (plus what precedes).
    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError>;
    /// The variable fields present, in canonical order (for messages with several).
    fn blob_fields(&self) -> Vec<BlobField> {
        Vec::new()
    }
    /// The recorded blob order (for messages with several variable fields).
    fn layout_mut(&mut self) -> Option<&mut BlobLayout> {
        None
    }
}

/// Any DirectPlay 8 session message (MC-DPL8CS 2.2.1-2.2.5; MS-DPDX 2.2.10-2.2.33).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "message")]
pub enum SessionMessage {
    /// 0xC1 DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO(_EX) (MC-DPL8CS 2.2.1.1-2; MS-DPDX 2.2.26).
    PlayerConnectInfo(PlayerConnectInfo),
    /// 0xC2 DN_SEND_CONNECT_INFO (MC-DPL8CS 2.2.1.4; MS-DPDX 2.2.33).
    SendConnectInfo(Box<SendConnectInfo>),
    /// 0xC3 DN_ACK_CONNECT_INFO (MC-DPL8CS 2.2.1.8; MS-DPDX 2.2.10): nothing after the type.
    AckConnectInfo,
    /// 0xC4 DN_SEND_PLAYER_DPNID (MC-DPL8CS 2.2.1.10; MS-DPDX 2.2.32).
    SendPlayerDpnid {
        /// `dpnID`: the sender's own DPNID.
        dpn_id: Dpnid,
    },
    /// 0xC5 DN_CONNECT_FAILED (MC-DPL8CS 2.2.1.3; MS-DPDX 2.2.13).
    ConnectFailed(ConnectFailed),
    /// 0xC6 DN_INSTRUCT_CONNECT (MC-DPL8CS 2.2.1.9; MS-DPDX 2.2.20).
    InstructConnect(InstructConnect),
    /// 0xC7 DN_INSTRUCTED_CONNECT_FAILED (MC-DPL8CS 2.2.1.11; MS-DPDX 2.2.21).
    InstructedConnectFailed {
        /// `dpnID`: the joiner that could not be reached.
        dpn_id: Dpnid,
    },
    /// 0xC8 DN_CONNECT_ATTEMPT_FAILED (MC-DPL8CS 2.2.1.12; MS-DPDX 2.2.12).
    ConnectAttemptFailed {
        /// `dpnID`: the existing peer that failed to connect.
        dpn_id: Dpnid,
    },
    /// 0xC9 DN_NAMETABLE_VERSION (MC-DPL8CS 2.2.2.4; MS-DPDX 2.2.23); `dwVersion` is never 0.
    NameTableVersion(VersionInfo),
    /// 0xCA DN_RESYNC_VERSION (MC-DPL8CS 2.2.2.5; MS-DPDX 2.2.30).
    ResyncVersion(VersionInfo),
    /// 0xCB DN_REQ_NAMETABLE_OP (MC-DPL8CS 2.2.2.9; MS-DPDX 2.2.24).
    ReqNameTableOp(VersionInfo),
    /// 0xCC DN_ACK_NAMETABLE_OP (MC-DPL8CS 2.2.2.10; MS-DPDX 2.2.25).
    AckNameTableOp(AckNameTableOp),
    /// 0xCD DN_HOST_MIGRATE (MC-DPL8CS 2.2.2.3; MS-DPDX 2.2.18).
    HostMigrate(HostMigrate),
    /// 0xCE DN_HOST_MIGRATE_COMPLETE (MC-DPL8CS 2.2.2.11; MS-DPDX 2.2.19): nothing after the type.
    HostMigrateComplete,
    /// 0xD0 DN_ADD_PLAYER (MC-DPL8CS 2.2.1.7; MS-DPDX 2.2.11).
    AddPlayer(AddPlayer),
    /// 0xD1 DN_DESTROY_PLAYER (MC-DPL8CS 2.2.2.2; MS-DPDX 2.2.15).
    DestroyPlayer(DestroyPlayer),
    /// 0xD2 DN_REQ_CREATE_GROUP (MC-DPL8CS 2.2.4.1).
    ReqCreateGroup(ReqCreateGroup),
    /// 0xD3 DN_REQ_ADD_PLAYER_TO_GROUP (MC-DPL8CS 2.2.4.3).
    ReqAddPlayerToGroup(ReqGroupMember),
    /// 0xD4 DN_REQ_DELETE_PLAYER_FROM_GROUP (MC-DPL8CS 2.2.4.5).
    ReqDeletePlayerFromGroup(ReqGroupMember),
    /// 0xD5 DN_REQ_DESTROY_GROUP (MC-DPL8CS 2.2.4.7).
    ReqDestroyGroup(ReqGroupMember),
    /// 0xD6 DN_REQ_UPDATE_INFO (MC-DPL8CS 2.2.5.1).
    ReqUpdateInfo(ReqUpdateInfo),
    /// 0xD7 DN_CREATE_GROUP (MC-DPL8CS 2.2.4.2).
    CreateGroup(CreateGroup),
    /// 0xD8 DN_DESTROY_GROUP (MC-DPL8CS 2.2.4.8).
    DestroyGroup(DestroyGroup),
    /// 0xD9 DN_ADD_PLAYER_TO_GROUP (MC-DPL8CS 2.2.4.4).
    AddPlayerToGroup(GroupMember),
    /// 0xDA DN_DELETE_PLAYER_FROM_GROUP (MC-DPL8CS 2.2.4.6).
    DeletePlayerFromGroup(GroupMember),
    /// 0xDB DN_UPDATE_INFO (MC-DPL8CS 2.2.5.2).
    UpdateInfo(UpdateInfo),
    /// 0xDF DN_TERMINATE_SESSION (MC-DPL8CS 2.2.2.1; MS-DPDX 2.2.14).
    TerminateSession(TerminateSession),
    /// 0xE0 DN_REQ_PROCESS_COMPLETION (MC-DPL8CS 2.2.3.2).
    ReqProcessCompletion(ReqProcessCompletion),
    /// 0xE1 DN_PROCESS_COMPLETION (MC-DPL8CS 2.2.3.3).
    ProcessCompletion(ProcessCompletion),
    /// 0xE2 DN_REQ_INTEGRITY_CHECK (MC-DPL8CS 2.2.2.6; MS-DPDX 2.2.27).
    ReqIntegrityCheck(ReqIntegrityCheck),
    /// 0xE3 DN_INTEGRITY_CHECK (MC-DPL8CS 2.2.2.7; MS-DPDX 2.2.28).
    IntegrityCheck(IntegrityCheck),
    /// 0xE4 DN_INTEGRITY_CHECK_RESPONSE (MC-DPL8CS 2.2.2.8; MS-DPDX 2.2.29).
    IntegrityCheckResponse(IntegrityCheck),
}
