//! DN_REQ_UPDATE_INFO and DN_UPDATE_INFO (MC-DPL8CS 2.2.5.1, 2.2.5.2): a player's name or
//! data changes. Canonical blob order of both: data, name.

use bitflags::bitflags;

use super::Body;
use super::layout::{BlobField, BlobLayout, BlobReader, Blobs, Placement, blobs_len, push_bytes, push_wide};
use crate::WireError;
use crate::codec::{Reader, Writer};
use crate::dp8::dpnid::Dpnid;
use crate::text::{Blob, WideString};

bitflags! {
    /// `dwInfoFlags`: which fields a request carries (MC-DPL8CS 2.2.4.1, 2.2.5.1). Unknown
    /// bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct InfoFlags: u32 {
        /// `DPNINFO_NAME`: a name is included.
        const NAME = 0x0000_0001;
        /// `DPNINFO_DATA`: data is included.
        const DATA = 0x0000_0002;
    }
}

fn push_data_name<'a>(b: &mut Blobs<'a>, data: &'a Blob, name: &'a Option<WideString>) {
    push_bytes(b, BlobField::Data, data);
    push_wide(b, BlobField::Name, name);
}

/// DN_REQ_UPDATE_INFO (MC-DPL8CS 2.2.5.1), 0xD6: a player asks the host to change its info.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReqUpdateInfo {
    /// `dwPacketContext`: echoed by DN_UPDATE_INFO.
    pub packet_context: u32,
    /// `dpnid`: the player to update.
    pub dpnid: Dpnid,
    /// `dwInfoFlags`.
    pub info_flags: InfoFlags,
    /// `name` (UTF-16LE).
    pub name: Option<WideString>,
    /// `data`.
    pub data: Blob,
    /// Blob order on the wire.
    pub layout: BlobLayout,
}

const REQ_FIXED: usize = 28;

impl ReqUpdateInfo {
    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        push_data_name(&mut b, &self.data, &self.name);
        b
    }
}

impl Body for ReqUpdateInfo {
    fn blob_fields(&self) -> Vec<BlobField> {
        self.blobs().into_iter().map(|(f, _)| f).collect()
    }

    fn layout_mut(&mut self) -> Option<&mut BlobLayout> {
        Some(&mut self.layout)
    }

    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let packet_context = r.u32("dwPacketContext")?;
        let dpnid = Dpnid(r.u32("dpnid")?);
        let info_flags = InfoFlags::from_bits_retain(r.u32("dwInfoFlags")?);
        let name_pair = (r.u32("dwNameOffset")?, r.u32("dwNameSize")?);
        let data_pair = (r.u32("dwDataOffset")?, r.u32("dwDataSize")?);
        let mut blobs = BlobReader::new(body, r.pos());
        let mut v = Self {
            packet_context,
            dpnid,
            info_flags,
            data: blobs.blob(BlobField::Data, "data", data_pair)?,
            name: blobs.wide(BlobField::Name, "name", name_pair)?,
            layout: BlobLayout(None),
        };
        v.layout = blobs.finish(&v.blobs())?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        REQ_FIXED + blobs_len(&self.blobs())
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let p = Placement::new(&self.layout, REQ_FIXED, self.blobs())?;
        w.u32(self.packet_context);
        w.u32(self.dpnid.0);
        w.u32(self.info_flags.bits());
        p.write_pair(w, BlobField::Name);
        p.write_pair(w, BlobField::Data);
        p.write(w)
    }
}

/// DN_UPDATE_INFO (MC-DPL8CS 2.2.5.2), 0xDB: the host tells everyone. A name-table operation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UpdateInfo {
    /// `dwPacketContext`: echo of the request's.
    pub packet_context: u32,
    /// `dpnid`: the player updated.
    pub dpnid: Dpnid,
    /// `dwVersion`: the name-table version of this operation.
    pub version: u32,
    /// `dwVersionNotUsed`: kept for re-emission.
    pub version_not_used: u32,
    /// `dwInfoFlags`.
    pub info_flags: InfoFlags,
    /// `name` (UTF-16LE).
    pub name: Option<WideString>,
    /// `data`.
    pub data: Blob,
    /// `dpnidRequesting`: the player that asked.
    pub dpnid_requesting: Dpnid,
    /// Blob order on the wire.
    pub layout: BlobLayout,
}

const FIXED: usize = 40;

impl UpdateInfo {
    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        push_data_name(&mut b, &self.data, &self.name);
        b
    }
}

impl Body for UpdateInfo {
    fn blob_fields(&self) -> Vec<BlobField> {
        self.blobs().into_iter().map(|(f, _)| f).collect()
    }

    fn layout_mut(&mut self) -> Option<&mut BlobLayout> {
        Some(&mut self.layout)
    }

    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let packet_context = r.u32("dwPacketContext")?;
        let dpnid = Dpnid(r.u32("dpnid")?);
        let version = r.u32("dwVersion")?;
        let version_not_used = r.u32("dwVersionNotUsed")?;
        let info_flags = InfoFlags::from_bits_retain(r.u32("dwInfoFlags")?);
        let name_pair = (r.u32("dwNameOffset")?, r.u32("dwNameSize")?);
        let data_pair = (r.u32("dwDataOffset")?, r.u32("dwDataSize")?);
        let dpnid_requesting = Dpnid(r.u32("dpnidRequesting")?);
        let mut blobs = BlobReader::new(body, r.pos());
        let mut v = Self {
            packet_context,
            dpnid,
            version,
            version_not_used,
            info_flags,
            data: blobs.blob(BlobField::Data, "data", data_pair)?,
            name: blobs.wide(BlobField::Name, "name", name_pair)?,
            dpnid_requesting,
            layout: BlobLayout(None),
        };
        v.layout = blobs.finish(&v.blobs())?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        FIXED + blobs_len(&self.blobs())
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let p = Placement::new(&self.layout, FIXED, self.blobs())?;
        w.u32(self.packet_context);
        w.u32(self.dpnid.0);
        w.u32(self.version);
        w.u32(self.version_not_used);
        w.u32(self.info_flags.bits());
        p.write_pair(w, BlobField::Name);
        p.write_pair(w, BlobField::Data);
        w.u32(self.dpnid_requesting.0);
        p.write(w)
    }
}
