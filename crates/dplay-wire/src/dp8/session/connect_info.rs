//! DN_SEND_CONNECT_INFO (MC-DPL8CS 2.2.1.4; MS-DPDX 2.2.33 TRANS_USERDATA_SEND_SESSION_INFO),
//! 0xC2: the host's welcome, with the application description and the name table.

use uuid::Uuid;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::Body;
use super::app_desc::ApplicationDescFlags;
use super::layout::{BlobField, BlobLayout, BlobReader, Blobs, Placement, blobs_len, push_bytes, push_wide};
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
    dw_reply_offset: U32,
    dw_reply_size: U32,
    dw_size: U32,
    dw_flags: U32,
    dw_max_players: U32,
    dw_current_players: U32,
    dw_session_name_offset: U32,
    dw_session_name_size: U32,
    dw_password_offset: U32,
    dw_password_size: U32,
    dw_reserved_data_offset: U32,
    dw_reserved_data_size: U32,
    dw_application_reserved_data_offset: U32,
    dw_application_reserved_data_size: U32,
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
/// Canonical blob order (the diagram's): for each entry in turn its URL, Data and Name, then
/// ApplicationReservedData, ReservedData, Password, SessionName, Reply. Windows writes them
/// from the end backwards (MC-DPL8CS 4), which `layout` records.
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

impl SendConnectInfo {
    fn fixed_len(&self) -> usize {
        FIXED_LEN + ENTRY_LEN * self.entries.len() + MEMBERSHIP_LEN * self.memberships.len()
    }

    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        for (i, e) in (0u32..).zip(&self.entries) {
            e.push_blobs(&mut b, entry_fields(i));
        }
        push_bytes(&mut b, BlobField::ApplicationReservedData, &self.application_reserved_data);
        push_bytes(&mut b, BlobField::ReservedData, &self.reserved_data);
        push_wide(&mut b, BlobField::Password, &self.password);
        push_wide(&mut b, BlobField::SessionName, &self.session_name);
        push_bytes(&mut b, BlobField::Reply, &self.reply);
        b
    }
}

impl Body for SendConnectInfo {
    fn blob_fields(&self) -> Vec<BlobField> {
        self.blobs().into_iter().map(|(f, _)| f).collect()
    }

    fn layout_mut(&mut self) -> Option<&mut BlobLayout> {
        Some(&mut self.layout)
    }

    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
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
        let mut blobs = BlobReader::new(body, r.pos());
        let mut entries = Vec::with_capacity(entry_count);
        for (i, chunk) in (0u32..).zip(entry_bytes.chunks_exact(ENTRY_LEN)) {
            let raw_entry: &RawEntry = Reader::new(chunk).layout("DN_NAMETABLE_ENTRY_INFO")?;
            entries.push(NameTableEntry::read(raw_entry, &mut blobs, entry_fields(i))?);
        }
        let mut memberships = Vec::with_capacity(membership_count);
        for chunk in membership_bytes.chunks_exact(MEMBERSHIP_LEN) {
            memberships
                .push(*Reader::new(chunk).layout::<NameTableMembership>("DN_NAMETABLE_MEMBERSHIP_INFO")?);
        }
        let pair = |o: &U32, s: &U32| (o.get(), s.get());
        let mut v = Self {
            reply: blobs.blob(BlobField::Reply, "Reply", pair(&raw.dw_reply_offset, &raw.dw_reply_size))?,
            flags: ApplicationDescFlags::from_bits_retain(raw.dw_flags.get()),
            max_players: raw.dw_max_players.get(),
            current_players: raw.dw_current_players.get(),
            session_name: blobs.wide(
                BlobField::SessionName,
                "SessionName",
                pair(&raw.dw_session_name_offset, &raw.dw_session_name_size),
            )?,
            password: blobs.wide(
                BlobField::Password,
                "Password",
                pair(&raw.dw_password_offset, &raw.dw_password_size),
            )?,
            reserved_data: blobs.blob(
                BlobField::ReservedData,
                "ReservedData",
                pair(&raw.dw_reserved_data_offset, &raw.dw_reserved_data_size),
            )?,
            application_reserved_data: blobs.blob(
                BlobField::ApplicationReservedData,
                "ApplicationReservedData",
                pair(&raw.dw_application_reserved_data_offset, &raw.dw_application_reserved_data_size),
            )?,
            guid_instance: Uuid::from_bytes_le(raw.guid_instance),
            guid_application: Uuid::from_bytes_le(raw.guid_application),
            dpnid: Dpnid(raw.dpnid.get()),
            version: raw.dw_version.get(),
            version_not_used: raw.dw_version_not_used.get(),
            entries,
            memberships,
            layout: BlobLayout(None),
        };
        v.layout = blobs.finish(&v.blobs())?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        self.fixed_len() + blobs_len(&self.blobs())
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let p = Placement::new(&self.layout, self.fixed_len(), self.blobs())?;
        let (reply_o, reply_s) = p.pair(BlobField::Reply);
        let (name_o, name_s) = p.pair(BlobField::SessionName);
        let (pw_o, pw_s) = p.pair(BlobField::Password);
        let (res_o, res_s) = p.pair(BlobField::ReservedData);
        let (app_o, app_s) = p.pair(BlobField::ApplicationReservedData);
        w.layout(&RawSendConnectInfo {
            dw_reply_offset: reply_o.into(),
            dw_reply_size: reply_s.into(),
            dw_size: APPLICATION_DESC_SIZE.into(),
            dw_flags: self.flags.bits().into(),
            dw_max_players: self.max_players.into(),
            dw_current_players: self.current_players.into(),
            dw_session_name_offset: name_o.into(),
            dw_session_name_size: name_s.into(),
            dw_password_offset: pw_o.into(),
            dw_password_size: pw_s.into(),
            dw_reserved_data_offset: res_o.into(),
            dw_reserved_data_size: res_s.into(),
            dw_application_reserved_data_offset: app_o.into(),
            dw_application_reserved_data_size: app_s.into(),
            guid_instance: self.guid_instance.to_bytes_le(),
            guid_application: self.guid_application.to_bytes_le(),
            dpnid: self.dpnid.0.into(),
            dw_version: self.version.into(),
            dw_version_not_used: self.version_not_used.into(),
            dw_entry_count: len_u32("dwEntryCount", self.entries.len())?.into(),
            dw_membership_count: len_u32("dwMembershipCount", self.memberships.len())?.into(),
        });
        for (i, e) in (0u32..).zip(&self.entries) {
            e.write(w, &p, entry_fields(i));
        }
        for m in &self.memberships {
            w.layout(m);
        }
        p.write(w)
    }
}
