//! The name table on the wire: DN_NAMETABLE_ENTRY_INFO, DN_NAMETABLE_MEMBERSHIP_INFO,
//! DN_ADD_PLAYER, the version messages and DN_ACK_NAMETABLE_OP (MC-DPL8CS 2.2.1.5-2.2.1.7,
//! 2.2.2.4, 2.2.2.5, 2.2.2.9, 2.2.2.10, 2.2.6; MS-DPDX 2.2.11, 2.2.23-2.2.25, 2.2.30,
//! 2.2.33.1-2, 2.2.37).

use bitflags::bitflags;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::connect::InstructConnect;
use super::disconnect::DestroyPlayer;
use super::group::{CreateGroup, DestroyGroup, GroupMember};
use super::layout::{
    BlobBody, BlobField, BlobLayout, BlobReader, BlobSrc, Blobs, Placement, Span, layout_field, push_bytes,
    push_url, push_wide,
};
use super::update_info::UpdateInfo;
use super::{Body, PacketType};
use crate::WireError;
use crate::codec::{Reader, Writer};
use crate::dp8::dpnid::Dpnid;
use crate::dp8::url::AddressingUrl;
use crate::text::{Blob, WideString};

bitflags! {
    /// `dwFlags` of a name-table entry (MC-DPL8CS 2.2.1.5, 2.2.1.7; INDEX B.10). Unknown bits
    /// are kept. Windows DXDiag sends only HOST and PEER (MS-DPDX 2.2.33.1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct NameTableEntryFlags: u32 {
        /// `NAMETABLE_ENTRY_FLAG_LOCAL`: the local player.
        const LOCAL = 0x0000_0001;
        /// `NAMETABLE_ENTRY_FLAG_HOST`: the host.
        const HOST = 0x0000_0002;
        /// `NAMETABLE_ENTRY_FLAG_ALL_PLAYERS_GROUP`: the All Players group.
        const ALL_PLAYERS_GROUP = 0x0000_0004;
        /// `NAMETABLE_ENTRY_FLAG_GROUP`: a group.
        const GROUP = 0x0000_0010;
        /// `NAMETABLE_ENTRY_FLAG_GROUP_AUTODESTRUCT`: the group goes when its last player does.
        const GROUP_AUTODESTRUCT = 0x0000_0040;
        /// `NAMETABLE_ENTRY_FLAG_PEER`: a peer (a peer-to-peer host is one too).
        const PEER = 0x0000_0100;
        /// `NAMETABLE_ENTRY_FLAG_CLIENT`: a client.
        const CLIENT = 0x0000_0200;
        /// `NAMETABLE_ENTRY_FLAG_SERVER`: the server.
        const SERVER = 0x0000_0400;
        /// `NAMETABLE_ENTRY_FLAG_CONNECTING`.
        const CONNECTING = 0x0000_1000;
        /// `NAMETABLE_ENTRY_FLAG_AVAILABLE`.
        const AVAILABLE = 0x0000_2000;
        /// `NAMETABLE_ENTRY_FLAG_DISCONNECTING`.
        const DISCONNECTING = 0x0000_4000;
        /// `NAMETABLE_ENTRY_FLAG_INDICATED`.
        const INDICATED = 0x0001_0000;
        /// `NAMETABLE_ENTRY_FLAG_CREATED`.
        const CREATED = 0x0002_0000;
        /// `NAMETABLE_ENTRY_FLAG_NEED_TO_DESTROY`.
        const NEED_TO_DESTROY = 0x0004_0000;
        /// `NAMETABLE_ENTRY_FLAG_IN_USE`.
        const IN_USE = 0x0008_0000;
    }
}

/// The fixed 48 bytes of DN_NAMETABLE_ENTRY_INFO (MC-DPL8CS 2.2.1.5), also bytes 4-51 of
/// DN_ADD_PLAYER (MC-DPL8CS 2.2.1.7).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub(crate) struct RawEntry {
    dpnid: U32,
    dpnid_owner: U32,
    dw_flags: U32,
    dw_version: U32,
    dw_version_not_used: U32,
    dw_dnet_version: U32,
    /// `dwNameOffset`, `dwNameSize`.
    name: Span,
    /// `dwDataOffset`, `dwDataSize`.
    data: Span,
    /// `dwURLOffset`, `dwURLSize`.
    url: Span,
}
const _: () = assert!(size_of::<RawEntry>() == ENTRY_LEN);

/// Bytes of a DN_NAMETABLE_ENTRY_INFO.
pub const ENTRY_LEN: usize = 48;
/// Bytes of a DN_NAMETABLE_MEMBERSHIP_INFO.
pub const MEMBERSHIP_LEN: usize = 16;

/// A player or group of the name table (MC-DPL8CS 2.2.1.5; MS-DPDX 2.2.33.1). Its name, data
/// and URL are located by offsets from byte 4 of the enclosing message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NameTableEntry {
    /// `dpnid`.
    pub dpnid: Dpnid,
    /// `dpnidOwner`: non-zero for groups; players SHOULD send 0.
    pub dpnid_owner: Dpnid,
    /// `dwFlags`.
    pub flags: NameTableEntryFlags,
    /// `dwVersion`: the name-table version at which the entry was added.
    pub version: u32,
    /// `dwVersionNotUsed`: kept for re-emission.
    pub version_not_used: u32,
    /// `dwDNETVersion` (`dwDNETClientVersion` in DN_ADD_PLAYER).
    pub dnet_version: u32,
    /// `name` (UTF-16LE).
    pub name: Option<WideString>,
    /// `data`.
    pub data: Blob,
    /// `url`.
    pub url: Option<AddressingUrl>,
}

/// The blob ids of one entry's url, data and name.
pub(crate) type EntryFields = [BlobField; 3];

impl NameTableEntry {
    pub(crate) fn read(
        raw: &RawEntry,
        blobs: &mut BlobReader<'_>,
        [url, data, name]: EntryFields,
    ) -> Result<Self, WireError> {
        Ok(Self {
            dpnid: Dpnid(raw.dpnid.get()),
            dpnid_owner: Dpnid(raw.dpnid_owner.get()),
            flags: NameTableEntryFlags::from_bits_retain(raw.dw_flags.get()),
            version: raw.dw_version.get(),
            version_not_used: raw.dw_version_not_used.get(),
            dnet_version: raw.dw_dnet_version.get(),
            url: blobs.url(url, "url", raw.url)?,
            data: blobs.blob(data, "data", raw.data)?,
            name: blobs.wide(name, "name", raw.name)?,
        })
    }

    pub(crate) fn push_blobs<'a>(&'a self, out: &mut Blobs<'a>, [url, data, name]: EntryFields) {
        push_url(out, url, &self.url);
        push_bytes(out, data, &self.data);
        push_wide(out, name, &self.name);
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>, p: &Placement<'_>, [url, data, name]: EntryFields) {
        w.layout(&RawEntry {
            dpnid: self.dpnid.0.into(),
            dpnid_owner: self.dpnid_owner.0.into(),
            dw_flags: self.flags.bits().into(),
            dw_version: self.version.into(),
            dw_version_not_used: self.version_not_used.into(),
            dw_dnet_version: self.dnet_version.into(),
            name: p.span(name),
            data: p.span(data),
            url: p.span(url),
        });
    }
}

/// A player's membership of a group (MC-DPL8CS 2.2.1.6; MS-DPDX 2.2.33.2): 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct NameTableMembership {
    /// `dpnidPlayer`.
    pub dpnid_player: U32,
    /// `dpnidGroup`.
    pub dpnid_group: U32,
    /// `dwVersion`.
    pub version: U32,
    /// `dwVersionNotUsed`.
    pub version_not_used: U32,
}
const _: () = assert!(size_of::<NameTableMembership>() == MEMBERSHIP_LEN);

impl NameTableMembership {
    /// A membership record.
    pub fn new(dpnid_player: Dpnid, dpnid_group: Dpnid, version: u32) -> Self {
        Self {
            dpnid_player: dpnid_player.0.into(),
            dpnid_group: dpnid_group.0.into(),
            version: version.into(),
            version_not_used: 0.into(),
        }
    }

    /// `dpnidPlayer` as a DPNID.
    pub fn player(&self) -> Dpnid {
        Dpnid(self.dpnid_player.get())
    }

    /// `dpnidGroup` as a DPNID.
    pub fn group(&self) -> Dpnid {
        Dpnid(self.dpnid_group.get())
    }
}

impl serde::Serialize for NameTableMembership {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("NameTableMembership", 4)?;
        st.serialize_field("dpnid_player", &self.dpnid_player.get())?;
        st.serialize_field("dpnid_group", &self.dpnid_group.get())?;
        st.serialize_field("version", &self.version.get())?;
        st.serialize_field("version_not_used", &self.version_not_used.get())?;
        st.end()
    }
}

const ADD_PLAYER_FIELDS: EntryFields = [BlobField::Url, BlobField::Data, BlobField::Name];

/// DN_ADD_PLAYER (MC-DPL8CS 2.2.1.7; MS-DPDX 2.2.11 TRANS_USERDATA_ADD_PLAYER), 0xD0,
/// peer-to-peer only: the entry layout after `dwPacketType`. Canonical blob order: url, data,
/// name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AddPlayer {
    /// The new player's entry (`dwDNETClientVersion` is its `dnet_version`).
    pub entry: NameTableEntry,
    /// Blob order on the wire.
    pub layout: BlobLayout,
}

impl BlobBody for AddPlayer {
    fn fixed_len(&self) -> usize {
        ENTRY_LEN
    }

    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        self.entry.push_blobs(&mut b, ADD_PLAYER_FIELDS);
        b
    }

    layout_field!();

    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError> {
        let raw: &RawEntry = r.layout("dpnid..dwURLSize")?;
        Ok(Self { entry: NameTableEntry::read(raw, blobs, ADD_PLAYER_FIELDS)?, layout: BlobLayout(None) })
    }

    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError> {
        self.entry.write(w, p, ADD_PLAYER_FIELDS);
        Ok(())
    }
}

/// `dwVersion` and `dwVersionNotUsed`: the body of DN_NAMETABLE_VERSION, DN_RESYNC_VERSION and
/// DN_REQ_NAMETABLE_OP (MC-DPL8CS 2.2.2.4, 2.2.2.5, 2.2.2.9; MS-DPDX 2.2.23, 2.2.30, 2.2.24).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct VersionInfo {
    /// `dwVersion`: a name-table version (NAMETABLE_VERSION: MUST NOT be 0, MS-DPDX 2.2.23).
    pub version: u32,
    /// `dwVersionNotUsed`: kept for re-emission.
    pub version_not_used: u32,
}

impl Body for VersionInfo {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self { version: r.u32("dwVersion")?, version_not_used: r.u32("dwVersionNotUsed")? };
        r.finish("dwVersionNotUsed")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        8
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.version);
        w.u32(self.version_not_used);
        Ok(())
    }
}

/// One name-table operation as carried in DN_ACK_NAMETABLE_OP: the original message without
/// its `dwPacketType` (MC-DPL8CS 2.2.2.10, 2.2.6).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum NameTableOp {
    /// DN_INSTRUCT_CONNECT (0xC6).
    InstructConnect(InstructConnect),
    /// DN_ADD_PLAYER (0xD0).
    AddPlayer(AddPlayer),
    /// DN_DESTROY_PLAYER (0xD1).
    DestroyPlayer(DestroyPlayer),
    /// DN_CREATE_GROUP (0xD7).
    CreateGroup(CreateGroup),
    /// DN_DESTROY_GROUP (0xD8).
    DestroyGroup(DestroyGroup),
    /// DN_ADD_PLAYER_TO_GROUP (0xD9).
    AddPlayerToGroup(GroupMember),
    /// DN_DELETE_PLAYER_FROM_GROUP (0xDA).
    DeletePlayerFromGroup(GroupMember),
    /// DN_UPDATE_INFO (0xDB).
    UpdateInfo(UpdateInfo),
}

impl NameTableOp {
    /// `dwMsgId`: the packet type of the original message.
    pub fn msg_id(&self) -> PacketType {
        match self {
            Self::InstructConnect(_) => PacketType::DN_MSG_INTERNAL_INSTRUCT_CONNECT,
            Self::AddPlayer(_) => PacketType::DN_MSG_INTERNAL_ADD_PLAYER,
            Self::DestroyPlayer(_) => PacketType::DN_MSG_INTERNAL_DESTROY_PLAYER,
            Self::CreateGroup(_) => PacketType::DN_MSG_INTERNAL_CREATE_GROUP,
            Self::DestroyGroup(_) => PacketType::DN_MSG_INTERNAL_DESTROY_GROUP,
            Self::AddPlayerToGroup(_) => PacketType::DN_MSG_INTERNAL_ADD_PLAYER_TO_GROUP,
            Self::DeletePlayerFromGroup(_) => PacketType::DN_MSG_INTERNAL_DELETE_PLAYER_FROM_GROUP,
            Self::UpdateInfo(_) => PacketType::DN_MSG_INTERNAL_UPDATE_INFO,
        }
    }

    /// Parses an `op` of type `msg_id`.
    pub fn parse(msg_id: PacketType, op: &[u8]) -> Result<Self, WireError> {
        Ok(match msg_id {
            PacketType::DN_MSG_INTERNAL_INSTRUCT_CONNECT => Self::InstructConnect(Body::parse_body(op)?),
            PacketType::DN_MSG_INTERNAL_ADD_PLAYER => Self::AddPlayer(Body::parse_body(op)?),
            PacketType::DN_MSG_INTERNAL_DESTROY_PLAYER => Self::DestroyPlayer(Body::parse_body(op)?),
            PacketType::DN_MSG_INTERNAL_CREATE_GROUP => Self::CreateGroup(Body::parse_body(op)?),
            PacketType::DN_MSG_INTERNAL_DESTROY_GROUP => Self::DestroyGroup(Body::parse_body(op)?),
            PacketType::DN_MSG_INTERNAL_ADD_PLAYER_TO_GROUP => Self::AddPlayerToGroup(Body::parse_body(op)?),
            PacketType::DN_MSG_INTERNAL_DELETE_PLAYER_FROM_GROUP => {
                Self::DeletePlayerFromGroup(Body::parse_body(op)?)
            }
            PacketType::DN_MSG_INTERNAL_UPDATE_INFO => Self::UpdateInfo(Body::parse_body(op)?),
            other => {
                return Err(WireError::Unknown {
                    what: "DN_ACK_NAMETABLE_OP dwMsgId",
                    value: other.0.into(),
                });
            }
        })
    }

    pub(crate) fn body_len(&self) -> usize {
        match self {
            Self::InstructConnect(m) => m.body_len(),
            Self::AddPlayer(m) => m.body_len(),
            Self::DestroyPlayer(m) => m.body_len(),
            Self::CreateGroup(m) => m.body_len(),
            Self::DestroyGroup(m) => m.body_len(),
            Self::AddPlayerToGroup(m) | Self::DeletePlayerFromGroup(m) => m.body_len(),
            Self::UpdateInfo(m) => m.body_len(),
        }
    }

    pub(crate) fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        match self {
            Self::InstructConnect(m) => m.emit_body(w),
            Self::AddPlayer(m) => m.emit_body(w),
            Self::DestroyPlayer(m) => m.emit_body(w),
            Self::CreateGroup(m) => m.emit_body(w),
            Self::DestroyGroup(m) => m.emit_body(w),
            Self::AddPlayerToGroup(m) | Self::DeletePlayerFromGroup(m) => m.emit_body(w),
            Self::UpdateInfo(m) => m.emit_body(w),
        }
    }
}

/// DN_ACK_NAMETABLE_OP (MC-DPL8CS 2.2.2.10; MS-DPDX 2.2.25), 0xCC: the operations the new
/// host is missing.
///
/// Read as `dwNumEntries`, then that many 12-byte records `{dwMsgId, dwOpOffset, dwOpSize}`,
/// then the ops located by their offsets (INDEX F-16). Canonical op order: the records' order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AckNameTableOp {
    /// The operations, in record order.
    pub ops: Vec<NameTableOp>,
    /// Op order on the wire.
    pub layout: BlobLayout,
}

const OP_RECORD_LEN: usize = 12;

impl BlobBody for AckNameTableOp {
    fn fixed_len(&self) -> usize {
        4 + OP_RECORD_LEN * self.ops.len()
    }

    fn blobs(&self) -> Blobs<'_> {
        (0u32..).zip(&self.ops).map(|(i, op)| (BlobField::Op(i), BlobSrc::Op(op))).collect()
    }

    layout_field!();

    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError> {
        let count = r.u32("dwNumEntries")? as usize;
        let table_len = count.saturating_mul(OP_RECORD_LEN);
        let table = r.bytes("dwMsgId..dwOpSize", table_len)?;
        let mut ops = Vec::with_capacity(count);
        for (i, record) in (0u32..).zip(table.chunks_exact(OP_RECORD_LEN)) {
            let mut rec = Reader::new(record);
            let msg_id = PacketType(rec.u32("dwMsgId")?);
            let span = Span::read(&mut rec, "dwOpOffset", "dwOpSize")?;
            let op = blobs.get(BlobField::Op(i), "op", span)?.ok_or(WireError::BadOffset {
                field: "dwOpOffset",
                offset: 0,
                size: span.size().into(),
                len: r.message().len(),
            })?;
            ops.push(NameTableOp::parse(msg_id, op)?);
        }
        Ok(Self { ops, layout: BlobLayout(None) })
    }

    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError> {
        w.u32(crate::codec::len_u32("dwNumEntries", self.ops.len())?);
        for (i, op) in (0u32..).zip(&self.ops) {
            w.u32(op.msg_id().0);
            p.write_span(w, BlobField::Op(i));
        }
        Ok(())
    }
}
