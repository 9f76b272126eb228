//! Connect messages: PLAYER_CONNECT_INFO(_EX), CONNECT_FAILED and INSTRUCT_CONNECT
//! (MC-DPL8CS 2.2.1.1-2.2.1.3, 2.2.1.9; MS-DPDX 2.2.26, 2.2.13, 2.2.20).

use uuid::Uuid;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::layout::{
    BlobBody, BlobField, BlobLayout, BlobReader, BlobSrc, Blobs, Placement, Span, layout_field, push_bytes,
    push_url, push_wide,
};
use super::{Body, ResultCode};
use crate::codec::{Reader, Writer};
use crate::dp8::alternate_address::AlternateAddress;
use crate::dp8::dpnid::Dpnid;
use crate::dp8::url::AddressingUrl;
use crate::text::{Blob, WideString};
use crate::{WireError, open_enum};

/// `dwDNETVersion` from which PLAYER_CONNECT_INFO has the _EX layout (MC-DPL8CS 2.2.1.1).
pub const DNET_VERSION_EX: u32 = 7;

open_enum! {
    /// `dwFlags` of PLAYER_CONNECT_INFO: what kind of participant connects (MC-DPL8CS 2.2.1.1;
    /// MS-DPDX 2.2.26 requires PEER).
    pub struct ObjectType(u32) {
        /// `DN_OBJECT_TYPE_CLIENT` (the spec misspells it "DP_OBECT_TYPE_CLIENT", INDEX F-14).
        DN_OBJECT_TYPE_CLIENT = 0x0000_0002,
        /// `DN_OBJECT_TYPE_PEER`.
        DN_OBJECT_TYPE_PEER = 0x0000_0004,
    }
}

/// DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO (MC-DPL8CS 2.2.1.1) and its DirectPlay 9 form _EX
/// (MC-DPL8CS 2.2.1.2; MS-DPDX 2.2.26 TRANS_USERDATA_PLAYER_CONNECT_INFO), type 0xC1.
///
/// The layout follows `dwDNETVersion`: 7 or more means _EX, which adds the alternate address
/// pair after `guidApplication`. Canonical blob order (the diagram's): alternateAddressData,
/// url, connectData, Password, data, name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlayerConnectInfo {
    /// `dwFlags`: client (0x2) or peer (0x4).
    pub flags: ObjectType,
    /// `dwDNETVersion`: 1-6 plain, 7-8 DirectX 9 with the _EX layout.
    pub dnet_version: u32,
    /// `name`: the player's name (MS-DPDX: MUST be present).
    pub name: Option<WideString>,
    /// `data`: application player data.
    pub data: Blob,
    /// `Password`: the session password in clear text.
    pub password: Option<WideString>,
    /// `connectData`: application connect data.
    pub connect_data: Blob,
    /// `url`: the joiner's own DN_ADDRESSING_URL.
    pub url: Option<AddressingUrl>,
    /// `guidInstance`: the session instance, or all zeros.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub guid_instance: Uuid,
    /// `guidApplication`: the application GUID.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub guid_application: Uuid,
    /// `alternateAddressData` (_EX only): at most 12 records.
    pub alternate_addresses: Vec<AlternateAddress>,
    /// Blob order on the wire.
    pub layout: BlobLayout,
}

/// Bytes 4-83 of PLAYER_CONNECT_INFO(_EX) (MC-DPL8CS 2.2.1.1).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawConnectInfo {
    dw_flags: U32,
    dw_dnet_version: U32,
    /// `dwNameOffset`, `dwNameSize`.
    name: Span,
    /// `dwDataOffset`, `dwDataSize`.
    data: Span,
    /// `dwPasswordOffset`, `dwPasswordSize`.
    password: Span,
    /// `dwConnectDataOffset`, `dwConnectDataSize`.
    connect_data: Span,
    /// `dwURLOffset`, `dwURLSize`.
    url: Span,
    guid_instance: [u8; 16],
    guid_application: [u8; 16],
}
const _: () = assert!(size_of::<RawConnectInfo>() == 80);

impl PlayerConnectInfo {
    /// True when `dwDNETVersion` selects the _EX layout.
    pub fn is_ex(&self) -> bool {
        self.dnet_version >= DNET_VERSION_EX
    }
}

impl BlobBody for PlayerConnectInfo {
    fn fixed_len(&self) -> usize {
        size_of::<RawConnectInfo>() + if self.is_ex() { 8 } else { 0 }
    }

    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        if !self.alternate_addresses.is_empty() {
            b.push((BlobField::AlternateAddressData, BlobSrc::Addresses(&self.alternate_addresses)));
        }
        push_url(&mut b, BlobField::Url, &self.url);
        push_bytes(&mut b, BlobField::ConnectData, &self.connect_data);
        push_wide(&mut b, BlobField::Password, &self.password);
        push_bytes(&mut b, BlobField::Data, &self.data);
        push_wide(&mut b, BlobField::Name, &self.name);
        b
    }

    layout_field!();

    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError> {
        let raw: &RawConnectInfo = r.layout("dwFlags..guidApplication")?;
        let dnet_version = raw.dw_dnet_version.get();
        let alt = if dnet_version >= DNET_VERSION_EX {
            Span::read(r, "dwAlternateAddressDataOffset", "dwAlternateAddressDataSize")?
        } else {
            Span::default()
        };
        let alternate_addresses =
            match blobs.get(BlobField::AlternateAddressData, "alternateAddressData", alt)? {
                Some(field) => AlternateAddress::parse_list(field)?,
                None => Vec::new(),
            };
        Ok(Self {
            flags: ObjectType(raw.dw_flags.get()),
            dnet_version,
            url: blobs.url(BlobField::Url, "url", raw.url)?,
            connect_data: blobs.blob(BlobField::ConnectData, "connectData", raw.connect_data)?,
            password: blobs.wide(BlobField::Password, "Password", raw.password)?,
            data: blobs.blob(BlobField::Data, "data", raw.data)?,
            name: blobs.wide(BlobField::Name, "name", raw.name)?,
            guid_instance: Uuid::from_bytes_le(raw.guid_instance),
            guid_application: Uuid::from_bytes_le(raw.guid_application),
            alternate_addresses,
            layout: BlobLayout::default(),
        })
    }

    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError> {
        if !self.is_ex() && !self.alternate_addresses.is_empty() {
            return Err(WireError::Unencodable {
                field: "alternateAddressData",
                reason: "only the _EX layout (dwDNETVersion >= 7) carries alternate addresses",
            });
        }
        w.layout(&RawConnectInfo {
            dw_flags: self.flags.0.into(),
            dw_dnet_version: self.dnet_version.into(),
            name: p.span(BlobField::Name),
            data: p.span(BlobField::Data),
            password: p.span(BlobField::Password),
            connect_data: p.span(BlobField::ConnectData),
            url: p.span(BlobField::Url),
            guid_instance: self.guid_instance.to_bytes_le(),
            guid_application: self.guid_application.to_bytes_le(),
        });
        if self.is_ex() {
            p.write_span(w, BlobField::AlternateAddressData);
        }
        Ok(())
    }
}

/// DN_CONNECT_FAILED (MC-DPL8CS 2.2.1.3; MS-DPDX 2.2.13 TRANS_USERDATA_CONNECT_FAILED), 0xC5.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConnectFailed {
    /// `hResultCode`: why the join was refused.
    pub result_code: ResultCode,
    /// `reply`: application data, expected only with DPNERR_HOSTREJECTEDCONNECTION.
    pub reply: Blob,
}

impl Body for ConnectFailed {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let result_code = ResultCode(r.u32("hResultCode")?);
        let span = Span::read(&mut r, "dwReplyOffset", "dwReplySize")?;
        let mut blobs = BlobReader::new(body);
        let v = Self { result_code, reply: blobs.blob(BlobField::Reply, "reply", span)? };
        blobs.finish(r.pos(), &v.blobs())?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        12 + self.reply.len()
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let p = Placement::new(&BlobLayout::default(), 12, self.blobs())?;
        w.u32(self.result_code.0);
        p.write_span(w, BlobField::Reply);
        p.write(w)
    }
}

impl ConnectFailed {
    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        push_bytes(&mut b, BlobField::Reply, &self.reply);
        b
    }
}

/// DN_INSTRUCT_CONNECT (MC-DPL8CS 2.2.1.9; MS-DPDX 2.2.20 TRANS_USERDATA_INSTRUCT_CONNECT),
/// 0xC6: the host tells a peer to connect to the joiner. Also a name-table operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct InstructConnect {
    /// `dpnid`: the peer to connect to (the joiner).
    pub dpnid: Dpnid,
    /// `dwVersion`: the name-table version of this operation.
    pub version: u32,
    /// `dwVersionNotUsed`: 0 when sending, ignored on receipt; kept for re-emission.
    pub version_not_used: u32,
}

impl Body for InstructConnect {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self {
            dpnid: Dpnid(r.u32("dpnid")?),
            version: r.u32("dwVersion")?,
            version_not_used: r.u32("dwVersionNotUsed")?,
        };
        r.finish("DN_INSTRUCT_CONNECT")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        12
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.dpnid.0);
        w.u32(self.version);
        w.u32(self.version_not_used);
        Ok(())
    }
}
