//! DN_SEND_CONNECT_INFO (MC-DPL8CS 2.2.1.4; MS-DPDX 2.2.33 TRANS_USERDATA_SEND_SESSION_INFO),
//! 0xC2: the host's welcome, with the application description and the name table.

use uuid::Uuid;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::app_desc::ApplicationDescFlags;
use super::layout::{
    BlobBody, BlobField, BlobLayout, BlobReader, Blobs, Placement, Span, layout_field, push_bytes, push_wide,
};
use super::name_table::{
    ENTRY_LEN, EntryFields, MEMBERSHIP_LEN, NameTableEntry, NameTableMembership, RawEntry,
};
use crate::WireError;
use crate::codec::{Reader, Writer, len_u32};
use crate::dp8::dpnid::Dpnid;
use crate::text::{Blob, WideString};

/// `dwSize` of the application description: `dwSize` through `guidApplication`, 80 bytes
/// (MC-DPL8CS 2.2.1.4; MC-DPLHP 2.2.2).
pub const APPLICATION_DESC_SIZE: u32 = 0x50;

/// Bytes 4-111 of DN_SEND_CONNECT_INFO, up to the entry array (MC-DPL8CS 2.2.1.4).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawSendConnectInfo {
    /// `dwReplyOffset`, `dwReplySize`.
    reply: Span,
    dw_size: U32,
    dw_flags: U32,
    dw_max_players: U32,
    dw_current_players: U32,
    /// `dwSessionNameOffset`, `dwSessionNameSize`.
    session_name: Span,
    /// `dwPasswordOffset`, `dwPasswordSize`.
    password: Span,
    /// `dwReservedDataOffset`, `dwReservedDataSize`.
    reserved_data: Span,
    /// `dwApplicationReservedDataOffset`, `dwApplicationReservedDataSize`.
    application_reserved_data: Span,
    guid_instance: [u8; 16],
    guid_application: [u8; 16],
    dpnid: U32,
    dw_version: U32,
    dw_version_not_used: U32,
    dw_entry_count: U32,
    dw_membership_count: U32,
}
const FIXED_LEN: usize = 108;
const _: () = assert!(size_of::<RawSendConnectInfo>() == FIXED_LEN);

/// DN_SEND_CONNECT_INFO (MC-DPL8CS 2.2.1.4; MS-DPDX 2.2.33), 0xC2.
///
/// Canonical blob order: Windows's, as the MC-DPL8CS 4 example packs them. It fills the
/// message from its end backwards, the session fields first and then each entry in turn, so
/// on the wire the last entry's URL, Data and Name come first, then the previous entry's ...,
/// the first entry's, then ApplicationReservedData, ReservedData, Password, SessionName, Reply
/// (the example has only names, a URL and SessionName; the order of the session fields the
/// example lacks is the diagram's). Another order is recorded in `layout`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SendConnectInfo {
    /// `reply`: the host application's reply data.
    pub reply: Blob,
    /// `dwFlags` of the application description.
    pub flags: ApplicationDescFlags,
    /// `dwMaxPlayers`: 0 means not specified.
    pub max_players: u32,
    /// `dwCurrentPlayers`.
    pub current_players: u32,
    /// `SessionName` (UTF-16LE).
    pub session_name: Option<WideString>,
    /// `Password`: echo of the checked password, only with REQUIREPASSWORD (MC-DPL8CS 3.1.5.1).
    pub password: Option<WideString>,
    /// `ReservedData` (opaque, INDEX F-32).
    pub reserved_data: Blob,
    /// `ApplicationReservedData` (opaque, INDEX F-32).
    pub application_reserved_data: Blob,
    /// `guidInstance`: the real session instance.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub guid_instance: Uuid,
    /// `guidApplication`.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub guid_application: Uuid,
    /// `dpnid`: the joiner's new DPNID.
    pub dpnid: Dpnid,
    /// `dwVersion`: the current name-table version.
    pub version: u32,
    /// `dwVersionNotUsed`: kept for re-emission.
    pub version_not_used: u32,
    /// `DN_NameTable_Entry_Info[dwEntryCount]`.
    pub entries: Vec<NameTableEntry>,
    /// `DN_NameTable_Membership_Info[dwMembershipCount]`.
    pub memberships: Vec<NameTableMembership>,
    /// Blob order on the wire.
    pub layout: BlobLayout,
}

fn entry_fields(i: u32) -> EntryFields {
    [BlobField::EntryUrl(i), BlobField::EntryData(i), BlobField::EntryName(i)]
}

impl BlobBody for SendConnectInfo {
    fn fixed_len(&self) -> usize {
        FIXED_LEN + ENTRY_LEN * self.entries.len() + MEMBERSHIP_LEN * self.memberships.len()
    }

    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        let indexed: Vec<(u32, &NameTableEntry)> = (0u32..).zip(&self.entries).collect();
        for (i, e) in indexed.into_iter().rev() {
            e.push_blobs(&mut b, entry_fields(i));
        }
        push_bytes(&mut b, BlobField::ApplicationReservedData, &self.application_reserved_data);
        push_bytes(&mut b, BlobField::ReservedData, &self.reserved_data);
        push_wide(&mut b, BlobField::Password, &self.password);
        push_wide(&mut b, BlobField::SessionName, &self.session_name);
        push_bytes(&mut b, BlobField::Reply, &self.reply);
        b
    }

    layout_field!();

    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError> {
        let raw: &RawSendConnectInfo = r.layout("dwReplyOffset..dwMembershipCount")?;
        if raw.dw_size.get() != APPLICATION_DESC_SIZE {
            return Err(WireError::InvalidValue {
                field: "dwSize",
                offset: 8,
                value: raw.dw_size.get().into(),
                reason: "the application description is 0x50 bytes (MC-DPL8CS 2.2.1.4)",
            });
        }
        // The counts are checked against the bytes present before anything is allocated.
        let entry_count = raw.dw_entry_count.get() as usize;
        let entry_bytes = r.bytes("DN_NameTable_Entry_Info", entry_count.saturating_mul(ENTRY_LEN))?;
        let membership_count = raw.dw_membership_count.get() as usize;
        let membership_bytes =
            r.bytes("DN_NameTable_Membership_Info", membership_count.saturating_mul(MEMBERSHIP_LEN))?;
        let mut entries = Vec::with_capacity(entry_count);
        for (i, chunk) in (0u32..).zip(entry_bytes.chunks_exact(ENTRY_LEN)) {
            let raw_entry: &RawEntry = Reader::new(chunk).layout("DN_NAMETABLE_ENTRY_INFO")?;
            entries.push(NameTableEntry::read(raw_entry, blobs, entry_fields(i))?);
        }
        let mut memberships = Vec::with_capacity(membership_count);
        for chunk in membership_bytes.chunks_exact(MEMBERSHIP_LEN) {
            memberships
                .push(*Reader::new(chunk).layout::<NameTableMembership>("DN_NAMETABLE_MEMBERSHIP_INFO")?);
        }
        Ok(Self {
            reply: blobs.blob(BlobField::Reply, "Reply", raw.reply)?,
            flags: ApplicationDescFlags::from_bits_retain(raw.dw_flags.get()),
            max_players: raw.dw_max_players.get(),
            current_players: raw.dw_current_players.get(),
            session_name: blobs.wide(BlobField::SessionName, "SessionName", raw.session_name)?,
            password: blobs.wide(BlobField::Password, "Password", raw.password)?,
            reserved_data: blobs.blob(BlobField::ReservedData, "ReservedData", raw.reserved_data)?,
            application_reserved_data: blobs.blob(
                BlobField::ApplicationReservedData,
                "ApplicationReservedData",
                raw.application_reserved_data,
            )?,
            guid_instance: Uuid::from_bytes_le(raw.guid_instance),
            guid_application: Uuid::from_bytes_le(raw.guid_application),
            dpnid: Dpnid(raw.dpnid.get()),
            version: raw.dw_version.get(),
            version_not_used: raw.dw_version_not_used.get(),
            entries,
            memberships,
            layout: BlobLayout(None),
        })
    }

    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError> {
        w.layout(&RawSendConnectInfo {
            reply: p.span(BlobField::Reply),
            dw_size: APPLICATION_DESC_SIZE.into(),
            dw_flags: self.flags.bits().into(),
            dw_max_players: self.max_players.into(),
            dw_current_players: self.current_players.into(),
            session_name: p.span(BlobField::SessionName),
            password: p.span(BlobField::Password),
            reserved_data: p.span(BlobField::ReservedData),
            application_reserved_data: p.span(BlobField::ApplicationReservedData),
            guid_instance: self.guid_instance.to_bytes_le(),
            guid_application: self.guid_application.to_bytes_le(),
            dpnid: self.dpnid.0.into(),
            dw_version: self.version.into(),
            dw_version_not_used: self.version_not_used.into(),
            dw_entry_count: len_u32("dwEntryCount", self.entries.len())?.into(),
            dw_membership_count: len_u32("dwMembershipCount", self.memberships.len())?.into(),
        });
        for (i, e) in (0u32..).zip(&self.entries) {
            e.write(w, p, entry_fields(i));
        }
        for m in &self.memberships {
            w.layout(m);
        }
        Ok(())
    }
}
