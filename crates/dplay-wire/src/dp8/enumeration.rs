//! Host and port enumeration: EnumQuery and EnumResponse (MC-DPLHP 2.2; MS-DPDX 2.2.4, 2.2.5).
//!
//! Both are "session packets": sent outside any connection, led by a zero byte so that they
//! never look like a CFRAME or DFRAME (MC-DPLHP 2.2.1; INDEX B.1), then a command byte: 0x02
//! for EnumQuery, 0x03 for EnumResponse.
//!
//! An EnumResponse has a fixed 92-byte part, then variable fields each located by an
//! offset/size pair counted from byte 4, the start of `ReplyOffset` (MC-DPLHP 2.2.2; INDEX
//! F-13). Parsing follows each offset, whatever the order on the wire; emission lays the fields
//! out right after the fixed part in the order of the spec's diagram: SessionName, Password,
//! ReservedData, ApplicationReservedData, ApplicationData.

use uuid::Uuid;
use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::session::ApplicationDescFlags;
use crate::codec::{Reader, Wire, Writer, len_u32, located};
use crate::text::{Blob, WideString};
use crate::{WireError, open_enum};

/// `LeadByte` of every session packet (MC-DPLHP 2.2.1; MS-DPDX 2.2.4).
pub const LEAD_BYTE: u8 = 0x00;
/// `CommandByte` of an EnumQuery (MC-DPLHP 2.2.1).
pub const ENUM_QUERY_COMMAND: u8 = 0x02;
/// `CommandByte` of an EnumResponse (MC-DPLHP 2.2.2).
pub const ENUM_RESPONSE_COMMAND: u8 = 0x03;
/// `ApplicationDescSize`: MUST be 0x50, the bytes from it to the end of `ApplicationGUID`
/// (MC-DPLHP 2.2.2).
pub const APPLICATION_DESC_SIZE: u32 = 0x50;
/// The fixed part of an EnumResponse, up to the end of `ApplicationGUID` (MC-DPLHP 2.2.2).
pub const ENUM_RESPONSE_FIXED_LEN: usize = 92;
/// {61EF80DA-691B-4247-9ADD-1C7BED2BC13E}: the DXDiag application GUID, which DXDiag's
/// EnumQuery, EnumResponse and PATHTESTKEYDATA carry (MS-DPDX 2.2.4, 2.2.5, 2.2.38).
pub const DXDIAG_APPLICATION_GUID: Uuid = uuid::uuid!("61EF80DA-691B-4247-9ADD-1C7BED2BC13E");
/// Offsets in an EnumResponse count from byte 4, the start of `ReplyOffset` (MC-DPLHP 2.2.2;
/// INDEX F-13).
const OFFSET_BASE: usize = 4;

open_enum! {
    /// `QueryType` of an EnumQuery (MC-DPLHP 2.2.1; MS-DPDX 2.2.4).
    pub struct QueryType(u8) {
        /// 0x01: `ApplicationGUID` follows; only hosts of that application SHOULD answer.
        /// DXDiag SHOULD send this.
        APPLICATION_GUID = 0x01,
        /// 0x02: no `ApplicationGUID`; every host SHOULD answer.
        NO_APPLICATION_GUID = 0x02,
    }
}

/// EnumQuery: asks hosts to describe their sessions (MC-DPLHP 2.2.1; MS-DPDX 2.2.4).
///
/// 5 bytes, 16 more with an `ApplicationGUID`, then the `ApplicationPayload`, whose length is
/// whatever remains of the datagram.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnumQuery {
    /// `EnumPayload`: the sender's correlation value, echoed by each EnumResponse.
    pub enum_payload: u16,
    /// `ApplicationGUID`: present exactly when `QueryType` is 0x01. DXDiag sends
    /// {61EF80DA-691B-4247-9ADD-1C7BED2BC13E} (MS-DPDX 2.2.4).
    #[serde(serialize_with = "crate::guid::serialize_opt")]
    pub application_guid: Option<Uuid>,
    /// `ApplicationPayload`: application-specific bytes for the host; empty when absent.
    pub application_payload: Blob,
}

impl EnumQuery {
    /// `QueryType` as sent: follows from whether `ApplicationGUID` is present.
    pub fn query_type(&self) -> QueryType {
        match self.application_guid {
            Some(_) => QueryType::APPLICATION_GUID,
            None => QueryType::NO_APPLICATION_GUID,
        }
    }
}

/// Checks `LeadByte` and `CommandByte` and returns the reader after them.
pub(crate) fn read_command<'a>(
    bytes: &'a [u8],
    command: u8,
    name: &'static str,
) -> Result<Reader<'a>, WireError> {
    let mut r = Reader::new(bytes);
    let lead = r.u8("LeadByte")?;
    if lead != LEAD_BYTE {
        return Err(WireError::InvalidValue {
            field: "LeadByte",
            offset: 0,
            value: lead.into(),
            reason: "a session packet starts with 0x00 (MC-DPLHP 2.2.1; MC-DPLNAT 2.2.2)",
        });
    }
    let got = r.u8("CommandByte")?;
    if got != command {
        return Err(WireError::Unknown { what: name, value: got.into() });
    }
    Ok(r)
}

impl Wire for EnumQuery {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = read_command(bytes, ENUM_QUERY_COMMAND, "EnumQuery CommandByte")?;
        let enum_payload = r.u16("EnumPayload")?;
        let query_type = QueryType(r.u8("QueryType")?);
        let application_guid = match query_type {
            QueryType::APPLICATION_GUID => Some(r.guid("ApplicationGUID")?),
            QueryType::NO_APPLICATION_GUID => None,
            other => {
                return Err(WireError::InvalidValue {
                    field: "QueryType",
                    offset: 4,
                    value: other.0.into(),
                    reason: "MUST be 0x01 or 0x02 (MS-DPDX 2.2.4)",
                });
            }
        };
        let application_payload = Blob::new(r.rest());
        Ok(Self { enum_payload, application_guid, application_payload })
    }

    fn encoded_len(&self) -> usize {
        let guid = if self.application_guid.is_some() { 16 } else { 0 };
        5 + guid + self.application_payload.len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        w.u8(LEAD_BYTE);
        w.u8(ENUM_QUERY_COMMAND);
        w.u16(self.enum_payload);
        w.u8(self.query_type().0);
        if let Some(guid) = &self.application_guid {
            w.guid(guid);
        }
        w.bytes(&self.application_payload);
        w.finish()
    }
}

/// The fixed 92 bytes of an EnumResponse (MC-DPLHP 2.2.2; INDEX D.6).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawEnumResponse {
    lead_byte: u8,
    command_byte: u8,
    enum_payload: U16,
    reply_offset: U32,
    response_size: U32,
    application_desc_size: U32,
    application_desc_flags: U32,
    max_players: U32,
    current_players: U32,
    session_name_offset: U32,
    session_name_size: U32,
    password_offset: U32,
    password_size: U32,
    reserved_data_offset: U32,
    reserved_data_size: U32,
    application_reserved_data_offset: U32,
    application_reserved_data_size: U32,
    application_instance_guid: [u8; 16],
    application_guid: [u8; 16],
}
const _: () = assert!(size_of::<RawEnumResponse>() == ENUM_RESPONSE_FIXED_LEN);

/// EnumResponse: a host's description of one session (MC-DPLHP 2.2.2; MS-DPDX 2.2.5).
///
/// Each optional field is `None` when its offset is 0. A present field with size 0 is
/// `Some` of an empty value only for the blobs; strings count their NUL, so they are never
/// empty on the wire.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnumResponse {
    /// `EnumPayload`: the value of the EnumQuery being answered.
    pub enum_payload: u16,
    /// `ApplicationDescFlags`.
    pub application_desc_flags: ApplicationDescFlags,
    /// `MaxPlayers`: 0 means unlimited (MS-DPDX 2.2.5).
    pub max_players: u32,
    /// `CurrentPlayers`: players in the session when the response was sent.
    pub current_players: u32,
    /// `SessionName` (`SessionNameOffset`, `SessionNameSize`): UTF-16LE with its NUL.
    pub session_name: Option<WideString>,
    /// `Password` (`PasswordOffset`, `PasswordSize`): never sent by a conforming host, but parsed.
    pub password: Option<WideString>,
    /// `ReservedData` (`ReservedDataOffset`, `ReservedDataSize`): never used.
    pub reserved_data: Option<Blob>,
    /// `ApplicationReservedData` (`ApplicationReservedDataOffset`, `...Size`): game data that
    /// rarely changes.
    pub application_reserved_data: Option<Blob>,
    /// `ApplicationInstanceGUID`: this session instance; a joiner sends it back in
    /// DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub application_instance_guid: Uuid,
    /// `ApplicationGUID`: the game.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub application_guid: Uuid,
    /// `ApplicationData` (`ReplyOffset`, `ResponseSize`): the host's reply data. DXDiag fills it
    /// with zeros and ignores it (MS-DPDX 2.2.5).
    pub application_data: Option<Blob>,
}

impl EnumResponse {
    /// The variable fields in emission order, as (bytes on the wire, present).
    fn variable_lens(&self) -> [Option<usize>; 5] {
        [
            self.session_name.as_ref().map(WideString::wire_len),
            self.password.as_ref().map(WideString::wire_len),
            self.reserved_data.as_ref().map(Blob::len),
            self.application_reserved_data.as_ref().map(Blob::len),
            self.application_data.as_ref().map(Blob::len),
        ]
    }
}

/// Locates an offset/size field of an EnumResponse; it must lie after the fixed part.
fn field<'a>(
    msg: &'a [u8],
    name: &'static str,
    offset: U32,
    size: U32,
) -> Result<Option<&'a [u8]>, WireError> {
    let (offset, size) = (offset.get(), size.get());
    if offset != 0 && (offset as usize) < ENUM_RESPONSE_FIXED_LEN - OFFSET_BASE {
        return Err(WireError::BadOffset {
            field: name,
            offset: offset.into(),
            size: size.into(),
            len: msg.len(),
        });
    }
    located(msg, OFFSET_BASE, name, offset, size)
}

fn wide(msg: &[u8], name: &'static str, offset: U32, size: U32) -> Result<Option<WideString>, WireError> {
    let at = OFFSET_BASE.saturating_add(offset.get() as usize);
    field(msg, name, offset, size)?.map(|b| WideString::parse_nul(name, at, b)).transpose()
}

fn blob(msg: &[u8], name: &'static str, offset: U32, size: U32) -> Result<Option<Blob>, WireError> {
    Ok(field(msg, name, offset, size)?.map(Blob::new))
}

impl Wire for EnumResponse {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        read_command(bytes, ENUM_RESPONSE_COMMAND, "EnumResponse CommandByte")?;
        let raw: &RawEnumResponse = Reader::new(bytes).layout("EnumResponse fixed part")?;
        if raw.application_desc_size.get() != APPLICATION_DESC_SIZE {
            return Err(WireError::InvalidValue {
                field: "ApplicationDescSize",
                offset: 12,
                value: raw.application_desc_size.get().into(),
                reason: "MUST be 0x50 (MC-DPLHP 2.2.2)",
            });
        }
        Ok(Self {
            enum_payload: raw.enum_payload.get(),
            application_desc_flags: ApplicationDescFlags::from_bits_retain(raw.application_desc_flags.get()),
            max_players: raw.max_players.get(),
            current_players: raw.current_players.get(),
            session_name: wide(bytes, "SessionName", raw.session_name_offset, raw.session_name_size)?,
            password: wide(bytes, "Password", raw.password_offset, raw.password_size)?,
            reserved_data: blob(bytes, "ReservedData", raw.reserved_data_offset, raw.reserved_data_size)?,
            application_reserved_data: blob(
                bytes,
                "ApplicationReservedData",
                raw.application_reserved_data_offset,
                raw.application_reserved_data_size,
            )?,
            application_instance_guid: Uuid::from_bytes_le(raw.application_instance_guid),
            application_guid: Uuid::from_bytes_le(raw.application_guid),
            application_data: blob(bytes, "ApplicationData", raw.reply_offset, raw.response_size)?,
        })
    }

    fn encoded_len(&self) -> usize {
        ENUM_RESPONSE_FIXED_LEN + self.variable_lens().iter().flatten().sum::<usize>()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        // Each present field's (offset, size), counted from byte 4, laid out in order.
        let mut pairs = [(0u32, 0u32); 5];
        let mut at = ENUM_RESPONSE_FIXED_LEN;
        for (pair, len) in pairs.iter_mut().zip(self.variable_lens()) {
            if let Some(len) = len {
                *pair = (len_u32("offset", at - OFFSET_BASE)?, len_u32("size", len)?);
                at += len;
            }
        }
        let [name, password, reserved, app_reserved, app_data] = pairs;
        let mut w = Writer::new(buf, self.encoded_len())?;
        w.layout(&RawEnumResponse {
            lead_byte: LEAD_BYTE,
            command_byte: ENUM_RESPONSE_COMMAND,
            enum_payload: self.enum_payload.into(),
            reply_offset: app_data.0.into(),
            response_size: app_data.1.into(),
            application_desc_size: APPLICATION_DESC_SIZE.into(),
            application_desc_flags: self.application_desc_flags.bits().into(),
            max_players: self.max_players.into(),
            current_players: self.current_players.into(),
            session_name_offset: name.0.into(),
            session_name_size: name.1.into(),
            password_offset: password.0.into(),
            password_size: password.1.into(),
            reserved_data_offset: reserved.0.into(),
            reserved_data_size: reserved.1.into(),
            application_reserved_data_offset: app_reserved.0.into(),
            application_reserved_data_size: app_reserved.1.into(),
            application_instance_guid: self.application_instance_guid.to_bytes_le(),
            application_guid: self.application_guid.to_bytes_le(),
        });
        for s in [&self.session_name, &self.password].into_iter().flatten() {
            s.write_nul(&mut w);
        }
        for b in [&self.reserved_data, &self.application_reserved_data, &self.application_data]
            .into_iter()
            .flatten()
        {
            w.bytes(b);
        }
        w.finish()
    }
}

/// An enumeration message: what a datagram led by 0x00 0x02 or 0x00 0x03 holds (MC-DPLHP 2.2).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "message")]
pub enum EnumMessage {
    /// EnumQuery (0x02).
    Query(EnumQuery),
    /// EnumResponse (0x03).
    Response(EnumResponse),
}

impl EnumMessage {
    /// The message name as MC-DPLHP spells it: `EnumQuery` or `EnumResponse`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Query(_) => "EnumQuery",
            Self::Response(_) => "EnumResponse",
        }
    }
}

impl Wire for EnumMessage {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        match bytes.get(..2) {
            Some([LEAD_BYTE, ENUM_RESPONSE_COMMAND]) => EnumResponse::parse(bytes).map(Self::Response),
            Some([LEAD_BYTE, other]) if *other != ENUM_QUERY_COMMAND => {
                Err(WireError::Unknown { what: "enumeration CommandByte", value: (*other).into() })
            }
            _ => EnumQuery::parse(bytes).map(Self::Query),
        }
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::Query(q) => q.encoded_len(),
            Self::Response(r) => r.encoded_len(),
        }
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        match self {
            Self::Query(q) => q.emit(buf),
            Self::Response(r) => r.emit(buf),
        }
    }
}

#[cfg(test)]
mod tests;
