//! [`SessionMessage`]: dispatch on `dwPacketType`, names, and the [`Wire`] impl.

use super::*;

impl SessionMessage {
    /// `dwPacketType`.
    pub fn packet_type(&self) -> PacketType {
        match self {
            Self::PlayerConnectInfo(_) => PacketType::DN_MSG_INTERNAL_PLAYER_CONNECT_INFO,
            Self::SendConnectInfo(_) => PacketType::DN_MSG_INTERNAL_SEND_CONNECT_INFO,
            Self::AckConnectInfo => PacketType::DN_MSG_INTERNAL_ACK_CONNECT_INFO,
            Self::SendPlayerDpnid { .. } => PacketType::DN_MSG_INTERNAL_SEND_PLAYER_DNID,
            Self::ConnectFailed(_) => PacketType::DN_MSG_INTERNAL_CONNECT_FAILED,
            Self::InstructConnect(_) => PacketType::DN_MSG_INTERNAL_INSTRUCT_CONNECT,
            Self::InstructedConnectFailed { .. } => PacketType::DN_MSG_INTERNAL_INSTRUCTED_CONNECT_FAILED,
            Self::ConnectAttemptFailed { .. } => PacketType::DN_MSG_INTERNAL_CONNECT_ATTEMPT_FAILED,
            Self::NameTableVersion(_) => PacketType::DN_MSG_INTERNAL_NAMETABLE_VERSION,
            Self::ResyncVersion(_) => PacketType::DN_MSG_INTERNAL_RESYNC_VERSION,
            Self::ReqNameTableOp(_) => PacketType::DN_MSG_INTERNAL_REQ_NAMETABLE_OP,
            Self::AckNameTableOp(_) => PacketType::DN_MSG_INTERNAL_ACK_NAMETABLE_OP,
            Self::HostMigrate(_) => PacketType::DN_MSG_INTERNAL_HOST_MIGRATE,
            Self::HostMigrateComplete => PacketType::DN_MSG_INTERNAL_HOST_MIGRATE_COMPLETE,
            Self::AddPlayer(_) => PacketType::DN_MSG_INTERNAL_ADD_PLAYER,
            Self::DestroyPlayer(_) => PacketType::DN_MSG_INTERNAL_DESTROY_PLAYER,
            Self::ReqCreateGroup(_) => PacketType::DN_MSG_INTERNAL_REQ_CREATE_GROUP,
            Self::ReqAddPlayerToGroup(_) => PacketType::DN_MSG_INTERNAL_REQ_ADD_PLAYER_TO_GROUP,
            Self::ReqDeletePlayerFromGroup(_) => PacketType::DN_MSG_INTERNAL_REQ_DELETE_PLAYER_FROM_GROUP,
            Self::ReqDestroyGroup(_) => PacketType::DN_MSG_INTERNAL_REQ_DESTROY_GROUP,
            Self::ReqUpdateInfo(_) => PacketType::DN_MSG_INTERNAL_REQ_UPDATE_INFO,
            Self::CreateGroup(_) => PacketType::DN_MSG_INTERNAL_CREATE_GROUP,
            Self::DestroyGroup(_) => PacketType::DN_MSG_INTERNAL_DESTROY_GROUP,
            Self::AddPlayerToGroup(_) => PacketType::DN_MSG_INTERNAL_ADD_PLAYER_TO_GROUP,
            Self::DeletePlayerFromGroup(_) => PacketType::DN_MSG_INTERNAL_DELETE_PLAYER_FROM_GROUP,
            Self::UpdateInfo(_) => PacketType::DN_MSG_INTERNAL_UPDATE_INFO,
            Self::TerminateSession(_) => PacketType::DN_MSG_INTERNAL_TERMINATE_SESSION,
            Self::ReqProcessCompletion(_) => PacketType::DN_MSG_INTERNAL_REQ_PROCESS_COMPLETION,
            Self::ProcessCompletion(_) => PacketType::DN_MSG_INTERNAL_PROCESS_COMPLETION,
            Self::ReqIntegrityCheck(_) => PacketType::DN_MSG_INTERNAL_REQ_INTEGRITY_CHECK,
            Self::IntegrityCheck(_) => PacketType::DN_MSG_INTERNAL_INTEGRITY_CHECK,
            Self::IntegrityCheckResponse(_) => PacketType::DN_MSG_INTERNAL_INTEGRITY_CHECK_RESPONSE,
        }
    }

    /// The message name as MC-DPL8CS's section titles spell it (`DN_SEND_CONNECT_INFO`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Self::PlayerConnectInfo(m) if m.is_ex() => "DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO_EX",
            Self::PlayerConnectInfo(_) => "DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO",
            Self::SendConnectInfo(_) => "DN_SEND_CONNECT_INFO",
            Self::AckConnectInfo => "DN_ACK_CONNECT_INFO",
            Self::SendPlayerDpnid { .. } => "DN_SEND_PLAYER_DPNID",
            Self::ConnectFailed(_) => "DN_CONNECT_FAILED",
            Self::InstructConnect(_) => "DN_INSTRUCT_CONNECT",
            Self::InstructedConnectFailed { .. } => "DN_INSTRUCTED_CONNECT_FAILED",
            Self::ConnectAttemptFailed { .. } => "DN_CONNECT_ATTEMPT_FAILED",
            Self::NameTableVersion(_) => "DN_NAMETABLE_VERSION",
            Self::ResyncVersion(_) => "DN_RESYNC_VERSION",
            Self::ReqNameTableOp(_) => "DN_REQ_NAMETABLE_OP",
            Self::AckNameTableOp(_) => "DN_ACK_NAMETABLE_OP",
            Self::HostMigrate(_) => "DN_HOST_MIGRATE",
            Self::HostMigrateComplete => "DN_HOST_MIGRATE_COMPLETE",
            Self::AddPlayer(_) => "DN_ADD_PLAYER",
            Self::DestroyPlayer(_) => "DN_DESTROY_PLAYER",
            Self::ReqCreateGroup(_) => "DN_REQ_CREATE_GROUP",
            Self::ReqAddPlayerToGroup(_) => "DN_REQ_ADD_PLAYER_TO_GROUP",
            Self::ReqDeletePlayerFromGroup(_) => "DN_REQ_DELETE_PLAYER_FROM_GROUP",
            Self::ReqDestroyGroup(_) => "DN_REQ_DESTROY_GROUP",
            Self::ReqUpdateInfo(_) => "DN_REQ_UPDATE_INFO",
            Self::CreateGroup(_) => "DN_CREATE_GROUP",
            Self::DestroyGroup(_) => "DN_DESTROY_GROUP",
            Self::AddPlayerToGroup(_) => "DN_ADD_PLAYER_TO_GROUP",
            Self::DeletePlayerFromGroup(_) => "DN_DELETE_PLAYER_FROM_GROUP",
            Self::UpdateInfo(_) => "DN_UPDATE_INFO",
            Self::TerminateSession(_) => "DN_TERMINATE_SESSION",
            Self::ReqProcessCompletion(_) => "DN_REQ_PROCESS_COMPLETION",
            Self::ProcessCompletion(_) => "DN_PROCESS_COMPLETION",
            Self::ReqIntegrityCheck(_) => "DN_REQ_INTEGRITY_CHECK",
            Self::IntegrityCheck(_) => "DN_INTEGRITY_CHECK",
            Self::IntegrityCheckResponse(_) => "DN_INTEGRITY_CHECK_RESPONSE",
        }
    }

    /// The MS-DPDX name, for the messages DXDiag uses.
    pub fn dpdx_name(&self) -> Option<&'static str> {
        self.packet_type().dpdx_name()
    }

    /// The variable fields present, in canonical order: what [`BlobLayout`] may reorder.
    pub fn blob_fields(&self) -> Vec<BlobField> {
        self.body().map(Body::blob_fields).unwrap_or_default()
    }

    /// The recorded blob order of a message with several variable fields, to inspect or to
    /// change (for example to lay a message out as Windows does).
    pub fn layout_mut(&mut self) -> Option<&mut BlobLayout> {
        self.body_mut().and_then(Body::layout_mut)
    }

    fn body(&self) -> Option<&dyn Body> {
        Some(match self {
            Self::AckConnectInfo
            | Self::HostMigrateComplete
            | Self::SendPlayerDpnid { .. }
            | Self::InstructedConnectFailed { .. }
            | Self::ConnectAttemptFailed { .. } => return None,
            Self::PlayerConnectInfo(m) => m,
            Self::SendConnectInfo(m) => &**m,
            Self::ConnectFailed(m) => m,
            Self::InstructConnect(m) => m,
            Self::NameTableVersion(m) | Self::ResyncVersion(m) | Self::ReqNameTableOp(m) => m,
            Self::AckNameTableOp(m) => m,
            Self::HostMigrate(m) => m,
            Self::AddPlayer(m) => m,
            Self::DestroyPlayer(m) => m,
            Self::ReqCreateGroup(m) => m,
            Self::ReqAddPlayerToGroup(m) | Self::ReqDeletePlayerFromGroup(m) | Self::ReqDestroyGroup(m) => m,
            Self::ReqUpdateInfo(m) => m,
            Self::CreateGroup(m) => m,
            Self::DestroyGroup(m) => m,
            Self::AddPlayerToGroup(m) | Self::DeletePlayerFromGroup(m) => m,
            Self::UpdateInfo(m) => m,
            Self::TerminateSession(m) => m,
            Self::ReqProcessCompletion(m) => m,
            Self::ProcessCompletion(m) => m,
            Self::ReqIntegrityCheck(m) => m,
            Self::IntegrityCheck(m) | Self::IntegrityCheckResponse(m) => m,
        })
    }

    fn body_mut(&mut self) -> Option<&mut dyn Body> {
        Some(match self {
            Self::PlayerConnectInfo(m) => m,
            Self::SendConnectInfo(m) => &mut **m,
            Self::AckNameTableOp(m) => m,
            Self::AddPlayer(m) => m,
            Self::ReqCreateGroup(m) => m,
            Self::ReqUpdateInfo(m) => m,
            Self::UpdateInfo(m) => m,
            // The others have at most one variable field, so no layout to change.
            _ => return None,
        })
    }

    fn body_len(&self) -> usize {
        match self {
            Self::SendPlayerDpnid { .. }
            | Self::InstructedConnectFailed { .. }
            | Self::ConnectAttemptFailed { .. } => 4,
            _ => self.body().map_or(0, Body::body_len),
        }
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        match self {
            Self::SendPlayerDpnid { dpn_id }
            | Self::InstructedConnectFailed { dpn_id }
            | Self::ConnectAttemptFailed { dpn_id } => {
                w.u32(dpn_id.0);
                Ok(())
            }
            _ => self.body().map_or(Ok(()), |b| b.emit_body(w)),
        }
    }
}

/// A body that is exactly one DPNID (0xC4, 0xC7, 0xC8).
fn one_dpnid(body: &[u8], field: &'static str) -> Result<Dpnid, WireError> {
    let mut r = Reader::new(body);
    let id = Dpnid(r.u32(field)?);
    r.finish(field)?;
    Ok(id)
}

/// Parses a body of type `T`.
fn p<T: Body>(body: &[u8]) -> Result<T, WireError> {
    T::parse_body(body)
}

/// A body that must be empty (0xC3, 0xCE).
fn empty(body: &[u8]) -> Result<(), WireError> {
    Reader::new(body).finish("dwPacketType")
}

impl Wire for SessionMessage {
    /// Parses a session message from the start of a USER_1 DFRAME payload.
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let packet_type = PacketType(r.u32("dwPacketType")?);
        let body = r.rest();
        Ok(match packet_type {
            PacketType::DN_MSG_INTERNAL_PLAYER_CONNECT_INFO => Self::PlayerConnectInfo(p(body)?),
            PacketType::DN_MSG_INTERNAL_SEND_CONNECT_INFO => Self::SendConnectInfo(Box::new(p(body)?)),
            PacketType::DN_MSG_INTERNAL_ACK_CONNECT_INFO => {
                empty(body)?;
                Self::AckConnectInfo
            }
            PacketType::DN_MSG_INTERNAL_SEND_PLAYER_DNID => {
                Self::SendPlayerDpnid { dpn_id: one_dpnid(body, "dpnID")? }
            }
            PacketType::DN_MSG_INTERNAL_CONNECT_FAILED => Self::ConnectFailed(p(body)?),
            PacketType::DN_MSG_INTERNAL_INSTRUCT_CONNECT => Self::InstructConnect(p(body)?),
            PacketType::DN_MSG_INTERNAL_INSTRUCTED_CONNECT_FAILED => {
                Self::InstructedConnectFailed { dpn_id: one_dpnid(body, "dpnID")? }
            }
            PacketType::DN_MSG_INTERNAL_CONNECT_ATTEMPT_FAILED => {
                Self::ConnectAttemptFailed { dpn_id: one_dpnid(body, "dpnID")? }
            }
            PacketType::DN_MSG_INTERNAL_NAMETABLE_VERSION => {
                let v: VersionInfo = p(body)?;
                if v.version == 0 {
                    return Err(WireError::InvalidValue {
                        field: "dwVersion",
                        offset: 4,
                        value: 0,
                        reason: "MUST NOT be 0 (MS-DPDX 2.2.23)",
                    });
                }
                Self::NameTableVersion(v)
            }
            PacketType::DN_MSG_INTERNAL_RESYNC_VERSION => Self::ResyncVersion(p(body)?),
            PacketType::DN_MSG_INTERNAL_REQ_NAMETABLE_OP => Self::ReqNameTableOp(p(body)?),
            PacketType::DN_MSG_INTERNAL_ACK_NAMETABLE_OP => Self::AckNameTableOp(p(body)?),
            PacketType::DN_MSG_INTERNAL_HOST_MIGRATE => Self::HostMigrate(p(body)?),
            PacketType::DN_MSG_INTERNAL_HOST_MIGRATE_COMPLETE => {
                empty(body)?;
                Self::HostMigrateComplete
            }
            PacketType::DN_MSG_INTERNAL_ADD_PLAYER => Self::AddPlayer(p(body)?),
            PacketType::DN_MSG_INTERNAL_DESTROY_PLAYER => Self::DestroyPlayer(p(body)?),
            PacketType::DN_MSG_INTERNAL_REQ_CREATE_GROUP => Self::ReqCreateGroup(p(body)?),
            PacketType::DN_MSG_INTERNAL_REQ_ADD_PLAYER_TO_GROUP => Self::ReqAddPlayerToGroup(p(body)?),
            PacketType::DN_MSG_INTERNAL_REQ_DELETE_PLAYER_FROM_GROUP => {
                Self::ReqDeletePlayerFromGroup(p(body)?)
            }
            PacketType::DN_MSG_INTERNAL_REQ_DESTROY_GROUP => Self::ReqDestroyGroup(p(body)?),
            PacketType::DN_MSG_INTERNAL_REQ_UPDATE_INFO => Self::ReqUpdateInfo(p(body)?),
            PacketType::DN_MSG_INTERNAL_CREATE_GROUP => Self::CreateGroup(p(body)?),
            PacketType::DN_MSG_INTERNAL_DESTROY_GROUP => Self::DestroyGroup(p(body)?),
            PacketType::DN_MSG_INTERNAL_ADD_PLAYER_TO_GROUP => Self::AddPlayerToGroup(p(body)?),
            PacketType::DN_MSG_INTERNAL_DELETE_PLAYER_FROM_GROUP => Self::DeletePlayerFromGroup(p(body)?),
            PacketType::DN_MSG_INTERNAL_UPDATE_INFO => Self::UpdateInfo(p(body)?),
            PacketType::DN_MSG_INTERNAL_TERMINATE_SESSION => Self::TerminateSession(p(body)?),
            PacketType::DN_MSG_INTERNAL_REQ_PROCESS_COMPLETION => Self::ReqProcessCompletion(p(body)?),
            PacketType::DN_MSG_INTERNAL_PROCESS_COMPLETION => Self::ProcessCompletion(p(body)?),
            PacketType::DN_MSG_INTERNAL_REQ_INTEGRITY_CHECK => Self::ReqIntegrityCheck(p(body)?),
            PacketType::DN_MSG_INTERNAL_INTEGRITY_CHECK => Self::IntegrityCheck(p(body)?),
            PacketType::DN_MSG_INTERNAL_INTEGRITY_CHECK_RESPONSE => Self::IntegrityCheckResponse(p(body)?),
            other => return Err(WireError::Unknown { what: "session dwPacketType", value: other.0.into() }),
        })
    }

    fn encoded_len(&self) -> usize {
        4 + self.body_len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        w.u32(self.packet_type().0);
        self.emit_body(&mut w)?;
        w.finish()
    }
}
