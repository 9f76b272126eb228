//! Group messages, peer-to-peer only (MC-DPL8CS 2.2.4.1-2.2.4.8). DXDiag never uses groups,
//! and MS-DPDX has no names for them.
//!
//! DN_CREATE_GROUP is printed with only `dpnidRequesting` and `dwPacketContext`: no group
//! DPNID, name or flags, although it is a name-table operation (INDEX F-15). We read the printed
//! form, and a form where the group's DN_NAMETABLE_ENTRY_INFO follows, which is what we send
//! (docs/decisions.md, "DirectPlay 8 groups").

use bitflags::bitflags;

use super::Body;
use super::layout::{BlobBody, BlobField, BlobLayout, BlobReader, Blobs, Placement, layout_field};
use super::name_table::{ENTRY_LEN, EntryFields, NameTableEntry, RawEntry};
use super::update_info::{InfoFlags, NameData, data_name_blobs};
use crate::WireError;
use crate::codec::{Reader, Writer};
use crate::dp8::dpnid::Dpnid;
use crate::text::{Blob, WideString};

bitflags! {
    /// `dwGroupFlags` of DN_REQ_CREATE_GROUP (MC-DPL8CS 2.2.4.1). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct GroupFlags: u32 {
        /// `DPNGROUP_AUTODESTRUCT`: delete the group when its last player leaves.
        const AUTODESTRUCT = 0x0000_0001;
    }
}

/// DN_REQ_CREATE_GROUP (MC-DPL8CS 2.2.4.1), 0xD2: a peer asks the host for a new group.
/// Canonical blob order: data, name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReqCreateGroup {
    /// `dwPacketContext`: echoed by DN_CREATE_GROUP.
    pub packet_context: u32,
    /// `dwGroupFlags`.
    pub group_flags: GroupFlags,
    /// `dwInfoFlags`: which of name and data are given.
    pub info_flags: InfoFlags,
    /// `name` (UTF-16LE).
    pub name: Option<WideString>,
    /// `data` (its size field is misspelled `dwDateSize`, INDEX F-14).
    pub data: Blob,
    /// Blob order on the wire.
    pub layout: BlobLayout,
}

const REQ_CREATE_GROUP_FIXED: usize = 28;

impl BlobBody for ReqCreateGroup {
    fn fixed_len(&self) -> usize {
        REQ_CREATE_GROUP_FIXED
    }

    fn blobs(&self) -> Blobs<'_> {
        data_name_blobs(&self.data, &self.name)
    }

    layout_field!();

    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError> {
        let packet_context = r.u32("dwPacketContext")?;
        let group_flags = GroupFlags::from_bits_retain(r.u32("dwGroupFlags")?);
        let info_flags = InfoFlags::from_bits_retain(r.u32("dwInfoFlags")?);
        let (data, name) = NameData::read(r, "dwDateSize")?.locate(blobs)?;
        Ok(Self { packet_context, group_flags, info_flags, name, data, layout: BlobLayout(None) })
    }

    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError> {
        w.u32(self.packet_context);
        w.u32(self.group_flags.bits());
        w.u32(self.info_flags.bits());
        NameData::write(w, p);
        Ok(())
    }
}

/// DN_CREATE_GROUP (MC-DPL8CS 2.2.4.2), 0xD7: `dpnidRequesting` and `dwPacketContext` as
/// printed, then the new group's DN_NAMETABLE_ENTRY_INFO (MC-DPL8CS 2.2.1.5), whose `dwVersion`
/// is the operation's, with its url, data and name located by offsets from the body start like
/// every other blob (INDEX F-15; decision). A body of exactly the printed 8 bytes is read too,
/// with `group` `None`: such an operation names no version and cannot be applied.
/// Canonical blob order: url, data, name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CreateGroup {
    /// `dpnidRequesting`: the peer that asked (the host itself for a local creation).
    pub dpnid_requesting: Dpnid,
    /// `dwPacketContext`: echo of the request's.
    pub packet_context: u32,
    /// The group's entry (`dpnid`, `dpnidOwner`, GROUP flags, `dwVersion`, name, data).
    pub group: Option<NameTableEntry>,
    /// Blob order on the wire.
    pub layout: BlobLayout,
}

/// The printed part of DN_CREATE_GROUP.
const CREATE_GROUP_PRINTED: usize = 8;
const CREATE_GROUP_FIELDS: EntryFields = [BlobField::Url, BlobField::Data, BlobField::Name];

impl BlobBody for CreateGroup {
    fn fixed_len(&self) -> usize {
        CREATE_GROUP_PRINTED + if self.group.is_some() { ENTRY_LEN } else { 0 }
    }

    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        if let Some(g) = &self.group {
            g.push_blobs(&mut b, CREATE_GROUP_FIELDS);
        }
        b
    }

    layout_field!();

    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError> {
        let dpnid_requesting = Dpnid(r.u32("dpnidRequesting")?);
        let packet_context = r.u32("dwPacketContext")?;
        let group = if r.remaining() == 0 {
            None
        } else {
            let raw: &RawEntry = r.layout("DN_NAMETABLE_ENTRY_INFO")?;
            Some(NameTableEntry::read(raw, blobs, CREATE_GROUP_FIELDS)?)
        };
        Ok(Self { dpnid_requesting, packet_context, group, layout: BlobLayout(None) })
    }

    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError> {
        w.u32(self.dpnid_requesting.0);
        w.u32(self.packet_context);
        if let Some(g) = &self.group {
            g.write(w, p, CREATE_GROUP_FIELDS);
        }
        Ok(())
    }
}

/// The body of DN_REQ_ADD_PLAYER_TO_GROUP (0xD3), DN_REQ_DELETE_PLAYER_FROM_GROUP (0xD4) and
/// DN_REQ_DESTROY_GROUP (0xD5) (MC-DPL8CS 2.2.4.3, 2.2.4.5, 2.2.4.7). DN_REQ_DESTROY_GROUP
/// carries a `dpnidPlayer` too, as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ReqGroupMember {
    /// `dwPacketContext`: echoed by the host's answer.
    pub packet_context: u32,
    /// `dpnidGroup`.
    pub dpnid_group: Dpnid,
    /// `dpnidPlayer`.
    pub dpnid_player: Dpnid,
}

impl Body for ReqGroupMember {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self {
            packet_context: r.u32("dwPacketContext")?,
            dpnid_group: Dpnid(r.u32("dpnidGroup")?),
            dpnid_player: Dpnid(r.u32("dpnidPlayer")?),
        };
        r.finish("dpnidPlayer")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        12
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.packet_context);
        w.u32(self.dpnid_group.0);
        w.u32(self.dpnid_player.0);
        Ok(())
    }
}

/// The body of DN_ADD_PLAYER_TO_GROUP (0xD9) and DN_DELETE_PLAYER_FROM_GROUP (0xDA)
/// (MC-DPL8CS 2.2.4.4, 2.2.4.6). Both are name-table operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct GroupMember {
    /// `dpnidGroup`.
    pub dpnid_group: Dpnid,
    /// `dpnidPlayer`.
    pub dpnid_player: Dpnid,
    /// `dwVersion`: the name-table version of this operation.
    pub version: u32,
    /// `dwVersionNotUsed`: kept for re-emission.
    pub version_not_used: u32,
    /// `dpnidRequesting`: the peer that asked.
    pub dpnid_requesting: Dpnid,
    /// `dwPacketContext`: echo of the request's.
    pub packet_context: u32,
}

impl Body for GroupMember {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self {
            dpnid_group: Dpnid(r.u32("dpnidGroup")?),
            dpnid_player: Dpnid(r.u32("dpnidPlayer")?),
            version: r.u32("dwVersion")?,
            version_not_used: r.u32("dwVersionNotUsed")?,
            dpnid_requesting: Dpnid(r.u32("dpnidRequesting")?),
            packet_context: r.u32("dwPacketContext")?,
        };
        r.finish("dwPacketContext")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        24
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.dpnid_group.0);
        w.u32(self.dpnid_player.0);
        w.u32(self.version);
        w.u32(self.version_not_used);
        w.u32(self.dpnid_requesting.0);
        w.u32(self.packet_context);
        Ok(())
    }
}

/// DN_DESTROY_GROUP (MC-DPL8CS 2.2.4.8), 0xD8. A name-table operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DestroyGroup {
    /// `dpnidGroup`.
    pub dpnid_group: Dpnid,
    /// `dwVersion`: the name-table version of this operation.
    pub version: u32,
    /// `dwVersionNotUsed`: kept for re-emission.
    pub version_not_used: u32,
    /// `dpnidRequesting`: the peer that asked.
    pub dpnid_requesting: Dpnid,
    /// `dwPacketContext`: echo of the request's.
    pub packet_context: u32,
}

impl Body for DestroyGroup {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self {
            dpnid_group: Dpnid(r.u32("dpnidGroup")?),
            version: r.u32("dwVersion")?,
            version_not_used: r.u32("dwVersionNotUsed")?,
            dpnid_requesting: Dpnid(r.u32("dpnidRequesting")?),
            packet_context: r.u32("dwPacketContext")?,
        };
        r.finish("dwPacketContext")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        20
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.dpnid_group.0);
        w.u32(self.version);
        w.u32(self.version_not_used);
        w.u32(self.dpnid_requesting.0);
        w.u32(self.packet_context);
        Ok(())
    }
}
