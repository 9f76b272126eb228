//! DN_REQ_UPDATE_INFO and DN_UPDATE_INFO (MC-DPL8CS 2.2.5.1, 2.2.5.2): a player's name or
//! data changes. Canonical blob order of both: data, name.

use bitflags::bitflags;

use super::layout::{
    BlobBody, BlobField, BlobLayout, BlobReader, Blobs, Placement, Span, layout_field, push_bytes, push_wide,
};
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

/// The blobs of a message with a name and data, in canonical order: data, name.
pub(crate) fn data_name_blobs<'a>(data: &'a Blob, name: &'a Option<WideString>) -> Blobs<'a> {
    let mut b = Blobs::new();
    push_bytes(&mut b, BlobField::Data, data);
    push_wide(&mut b, BlobField::Name, name);
    b
}

/// The `dwNameOffset`, `dwNameSize`, `dwDataOffset` and data size pairs of the messages with
/// a name and data (the size is misspelled `dwDateSize` in DN_REQ_CREATE_GROUP, INDEX F-14).
pub(crate) struct NameData {
    name: Span,
    data: Span,
}

impl NameData {
    /// Reads the two pairs; the data size DWORD is named `data_size`.
    pub(crate) fn read(r: &mut Reader<'_>, data_size: &'static str) -> Result<Self, WireError> {
        Ok(Self {
            name: Span::read(r, "dwNameOffset", "dwNameSize")?,
            data: Span::read(r, "dwDataOffset", data_size)?,
        })
    }

    /// The fields they locate: `(data, name)`.
    pub(crate) fn locate(self, blobs: &mut BlobReader<'_>) -> Result<(Blob, Option<WideString>), WireError> {
        Ok((blobs.blob(BlobField::Data, "data", self.data)?, blobs.wide(BlobField::Name, "name", self.name)?))
    }

    /// Writes the name and data pairs `p` gives, in that order.
    pub(crate) fn write(w: &mut Writer<'_>, p: &Placement<'_>) {
        p.write_span(w, BlobField::Name);
        p.write_span(w, BlobField::Data);
    }
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

impl BlobBody for ReqUpdateInfo {
    fn fixed_len(&self) -> usize {
        REQ_FIXED
    }

    fn blobs(&self) -> Blobs<'_> {
        data_name_blobs(&self.data, &self.name)
    }

    layout_field!();

    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError> {
        let packet_context = r.u32("dwPacketContext")?;
        let dpnid = Dpnid(r.u32("dpnid")?);
        let info_flags = InfoFlags::from_bits_retain(r.u32("dwInfoFlags")?);
        let (data, name) = NameData::read(r, "dwDataSize")?.locate(blobs)?;
        Ok(Self { packet_context, dpnid, info_flags, name, data, layout: BlobLayout(None) })
    }

    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError> {
        w.u32(self.packet_context);
        w.u32(self.dpnid.0);
        w.u32(self.info_flags.bits());
        NameData::write(w, p);
        Ok(())
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

impl BlobBody for UpdateInfo {
    fn fixed_len(&self) -> usize {
        FIXED
    }

    fn blobs(&self) -> Blobs<'_> {
        data_name_blobs(&self.data, &self.name)
    }

    layout_field!();

    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError> {
        let packet_context = r.u32("dwPacketContext")?;
        let dpnid = Dpnid(r.u32("dpnid")?);
        let version = r.u32("dwVersion")?;
        let version_not_used = r.u32("dwVersionNotUsed")?;
        let info_flags = InfoFlags::from_bits_retain(r.u32("dwInfoFlags")?);
        let pairs = NameData::read(r, "dwDataSize")?;
        let dpnid_requesting = Dpnid(r.u32("dpnidRequesting")?);
        let (data, name) = pairs.locate(blobs)?;
        Ok(Self {
            packet_context,
            dpnid,
            version,
            version_not_used,
            info_flags,
            name,
            data,
            dpnid_requesting,
            layout: BlobLayout(None),
        })
    }

    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError> {
        w.u32(self.packet_context);
        w.u32(self.dpnid.0);
        w.u32(self.version);
        w.u32(self.version_not_used);
        w.u32(self.info_flags.bits());
        NameData::write(w, p);
        w.u32(self.dpnid_requesting.0);
        Ok(())
    }
}
