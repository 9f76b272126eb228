//! Where the variable-length fields of a session message sit.
//!
//! Session messages carry a fixed part with offset/size pairs, then the variable fields
//! ("blobs") those pairs point at. Offsets count from the end of `dwPacketType` (INDEX §0), so
//! everything here works on the *body*: the message minus its first 4 bytes, offsets from 0.
//!
//! Parsing locates every blob by its offset and checks it against the body. It then requires
//! the blobs to tile the rest of the body exactly (no gap, no overlap, no trailing byte), and
//! records their order when it differs from the canonical one: that is what lets any parsed
//! message re-emit byte for byte, including the MC-DPL8CS 4 example whose blobs were written
//! from the end backwards (docs/decisions.md).
//!
//! Emission writes the fixed part, then the blobs back to back in the recorded order, or in
//! the canonical order (the spec diagram's) when none is recorded.
//!
//! [`Span`] is one offset/size pair as the fixed part carries it; [`BlobBody`] is a message
//! made of a fixed part and blobs, from which its `Body` (parse, length, emission, layout)
//! follows.

use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::Body;
use super::name_table::NameTableOp;
use crate::WireError;
use crate::codec::{Reader, Writer, len_u32, located};
use crate::dp8::alternate_address::AlternateAddress;
use crate::dp8::url::AddressingUrl;
use crate::text::{Blob, WideString};

/// A variable-length field of a session message, named after the spec field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BlobField {
    /// `name` (player or group name, UTF-16LE).
    Name,
    /// `data` (application data).
    Data,
    /// `Password` (UTF-16LE, cleartext).
    Password,
    /// `connectData` (PLAYER_CONNECT_INFO).
    ConnectData,
    /// `url` (DN_ADDRESSING_URL).
    Url,
    /// `alternateAddressData` (PLAYER_CONNECT_INFO_EX).
    AlternateAddressData,
    /// `reply` (SEND_CONNECT_INFO, CONNECT_FAILED).
    Reply,
    /// `SessionName` (SEND_CONNECT_INFO).
    SessionName,
    /// `ReservedData` (SEND_CONNECT_INFO).
    ReservedData,
    /// `ApplicationReservedData` (SEND_CONNECT_INFO).
    ApplicationReservedData,
    /// `TerminateData` (TERMINATE_SESSION).
    TerminateData,
    /// `URL` of the n-th DN_NAMETABLE_ENTRY_INFO of SEND_CONNECT_INFO.
    EntryUrl(u32),
    /// `Data` of the n-th DN_NAMETABLE_ENTRY_INFO.
    EntryData(u32),
    /// `Name` of the n-th DN_NAMETABLE_ENTRY_INFO.
    EntryName(u32),
    /// `op` of the n-th record of ACK_NAMETABLE_OP.
    Op(u32),
}

/// The order of a message's variable fields on the wire.
///
/// `BlobLayout(None)` (the default) is the canonical order, the one the spec diagram draws.
/// A parsed message records `Some(order)` only when the sender used another order, so that it
/// re-emits byte for byte. A recorded order must list exactly the fields present, or `emit`
/// fails with [`WireError::Unencodable`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, serde::Serialize)]
pub struct BlobLayout(pub Option<Vec<BlobField>>);

/// The source of one blob to emit.
#[derive(Clone, Copy)]
pub(crate) enum BlobSrc<'a> {
    /// Opaque bytes.
    Bytes(&'a [u8]),
    /// UTF-16LE with its NUL.
    Wide(&'a WideString),
    /// An 8-bit URL with its NUL.
    Url(&'a AddressingUrl),
    /// DN_ALTERNATE_ADDRESS records back to back.
    Addresses(&'a [AlternateAddress]),
    /// A name-table operation, without its `dwPacketType`.
    Op(&'a NameTableOp),
}

impl BlobSrc<'_> {
    fn len(&self) -> usize {
        match self {
            Self::Bytes(b) => b.len(),
            Self::Wide(s) => s.wire_len(),
            Self::Url(u) => u.wire_len(),
            Self::Addresses(a) => AlternateAddress::list_len(a),
            Self::Op(op) => op.body_len(),
        }
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        match self {
            Self::Bytes(b) => w.bytes(b),
            Self::Wide(s) => s.write_nul(w),
            Self::Url(u) => u.write_nul(w),
            Self::Addresses(a) => AlternateAddress::write_list(a, w)?,
            Self::Op(op) => op.emit_body(w)?,
        }
        Ok(())
    }
}

/// The present blobs of a message, in canonical order.
pub(crate) type Blobs<'a> = Vec<(BlobField, BlobSrc<'a>)>;

/// Adds `src` unless it is absent (an empty blob is absent on the wire).
pub(crate) fn push_bytes<'a>(out: &mut Blobs<'a>, field: BlobField, b: &'a Blob) {
    if !b.is_empty() {
        out.push((field, BlobSrc::Bytes(b)));
    }
}

/// Adds a string if present.
pub(crate) fn push_wide<'a>(out: &mut Blobs<'a>, field: BlobField, s: &'a Option<WideString>) {
    if let Some(s) = s {
        out.push((field, BlobSrc::Wide(s)));
    }
}

/// Adds a URL if present.
pub(crate) fn push_url<'a>(out: &mut Blobs<'a>, field: BlobField, u: &'a Option<AddressingUrl>) {
    if let Some(u) = u {
        out.push((field, BlobSrc::Url(u)));
    }
}

/// Total bytes of the blobs.
pub(crate) fn blobs_len(blobs: &Blobs<'_>) -> usize {
    blobs.iter().map(|(_, src)| src.len()).sum()
}

/// An offset/size pair that locates a variable field, `dwXxxOffset` then `dwXxxSize`
/// (MC-DPL8CS 2.2): offset 0 means absent; offsets count from the body start (INDEX §0).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub(crate) struct Span {
    /// `dwXxxOffset`.
    offset: U32,
    /// `dwXxxSize`.
    size: U32,
}
const _: () = assert!(size_of::<Span>() == 8);

impl Span {
    /// The pair `(offset, size)`.
    pub(crate) fn new(offset: u32, size: u32) -> Self {
        Self { offset: offset.into(), size: size.into() }
    }

    /// Reads a pair whose DWORDs are named `offset_name` and `size_name`.
    pub(crate) fn read(
        r: &mut Reader<'_>,
        offset_name: &'static str,
        size_name: &'static str,
    ) -> Result<Self, WireError> {
        Ok(Self::new(r.u32(offset_name)?, r.u32(size_name)?))
    }

    /// `dwXxxOffset`.
    pub(crate) fn offset(self) -> u32 {
        self.offset.get()
    }

    /// `dwXxxSize`.
    pub(crate) fn size(self) -> u32 {
        self.size.get()
    }
}

/// Blobs with their offsets (from the body start) and sizes, in wire order.
pub(crate) struct Placement<'a> {
    items: Vec<(BlobField, u32, u32, BlobSrc<'a>)>,
}

impl<'a> Placement<'a> {
    /// Lays out `blobs` after a fixed part of `fixed_len` bytes, in the order `layout` gives.
    pub(crate) fn new(
        layout: &BlobLayout,
        fixed_len: usize,
        mut blobs: Blobs<'a>,
    ) -> Result<Self, WireError> {
        if let Some(order) = &layout.0 {
            let mismatch = WireError::Unencodable {
                field: "BlobLayout",
                reason: "the recorded order does not list exactly the fields present",
            };
            if order.len() != blobs.len() {
                return Err(mismatch);
            }
            let mut ordered = Vec::with_capacity(blobs.len());
            for field in order {
                let at = blobs.iter().position(|(f, _)| f == field).ok_or(mismatch.clone())?;
                ordered.push(blobs.swap_remove(at));
            }
            blobs = ordered;
        }
        let mut pos = fixed_len;
        let mut items = Vec::with_capacity(blobs.len());
        for (field, src) in blobs {
            let len = src.len();
            items.push((field, len_u32("offset", pos)?, len_u32("size", len)?, src));
            pos += len;
        }
        len_u32("message", pos)?;
        Ok(Self { items })
    }

    /// The offset/size pair of `field`; `(0, 0)` when absent.
    pub(crate) fn span(&self, field: BlobField) -> Span {
        self.items
            .iter()
            .find(|(f, ..)| *f == field)
            .map_or_else(Span::default, |&(_, off, size, _)| Span::new(off, size))
    }

    /// Writes `span(field)`: two little-endian DWORDs.
    pub(crate) fn write_span(&self, w: &mut Writer<'_>, field: BlobField) {
        w.layout(&self.span(field));
    }

    /// Writes the blobs back to back.
    pub(crate) fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        for (.., src) in &self.items {
            src.write(w)?;
        }
        Ok(())
    }
}

/// Finds the blobs of a body being parsed and checks that they tile it.
pub(crate) struct BlobReader<'a> {
    body: &'a [u8],
    found: Vec<(usize, usize, BlobField)>,
}

impl<'a> BlobReader<'a> {
    /// `body` is the message after `dwPacketType`.
    pub(crate) fn new(body: &'a [u8]) -> Self {
        Self { body, found: Vec::new() }
    }

    /// The bytes at `offset`/`size`, or `None` when the offset is 0. A present field must have
    /// a non-zero size (the "SHOULD also not be 0" of every such pair), so that presence
    /// survives re-emission.
    pub(crate) fn get(
        &mut self,
        field: BlobField,
        name: &'static str,
        span: Span,
    ) -> Result<Option<&'a [u8]>, WireError> {
        let (offset, size) = (span.offset(), span.size());
        let bad = || WireError::BadOffset {
            field: name,
            offset: offset.into(),
            size: size.into(),
            len: self.body.len(),
        };
        let Some(bytes) = located(self.body, 0, name, offset, size)? else { return Ok(None) };
        if bytes.is_empty() {
            return Err(bad());
        }
        self.found.push((offset as usize, bytes.len(), field));
        Ok(Some(bytes))
    }

    /// Opaque bytes; empty when absent.
    pub(crate) fn blob(
        &mut self,
        field: BlobField,
        name: &'static str,
        span: Span,
    ) -> Result<Blob, WireError> {
        Ok(self.get(field, name, span)?.map(Blob::new).unwrap_or_default())
    }

    /// A UTF-16LE string with its NUL.
    pub(crate) fn wide(
        &mut self,
        field: BlobField,
        name: &'static str,
        span: Span,
    ) -> Result<Option<WideString>, WireError> {
        self.get(field, name, span)?
            .map(|b| WideString::parse_nul(name, span.offset() as usize, b))
            .transpose()
    }

    /// A DN_ADDRESSING_URL with its NUL.
    pub(crate) fn url(
        &mut self,
        field: BlobField,
        name: &'static str,
        span: Span,
    ) -> Result<Option<AddressingUrl>, WireError> {
        self.get(field, name, span)?
            .map(|b| AddressingUrl::parse_nul(name, span.offset() as usize, b))
            .transpose()
    }

    /// Checks that the blobs found tile the body after its first `fixed_len` bytes, and returns
    /// their order (`None` when it is `canonical`, the fields of the parsed value in canonical
    /// order).
    pub(crate) fn finish(mut self, fixed_len: usize, canonical: &Blobs<'_>) -> Result<BlobLayout, WireError> {
        self.found.sort_unstable_by_key(|&(start, ..)| start);
        let mut pos = fixed_len;
        for &(start, len, _) in &self.found {
            if start != pos {
                return Err(WireError::InvalidValue {
                    field: "variable fields",
                    offset: start,
                    value: start as u64,
                    reason: "blobs must follow the fixed part back to back, without gap or overlap",
                });
            }
            pos += len;
        }
        if pos != self.body.len() {
            return Err(WireError::InvalidValue {
                field: "variable fields",
                offset: pos,
                value: (self.body.len() - pos.min(self.body.len())) as u64,
                reason: "unexpected trailing bytes",
            });
        }
        let same = self.found.len() == canonical.len()
            && self.found.iter().zip(canonical).all(|(&(.., a), (b, _))| a == *b);
        Ok(BlobLayout((!same).then(|| self.found.iter().map(|&(.., f)| f).collect())))
    }
}

/// Implements [`BlobBody::layout`] and [`BlobBody::layout_mut`] with the type's `layout`
/// field, where every message with a recorded order keeps it.
macro_rules! layout_field {
    () => {
        fn layout(&self) -> &BlobLayout {
            &self.layout
        }

        fn layout_mut(&mut self) -> &mut BlobLayout {
            &mut self.layout
        }
    };
}
pub(crate) use layout_field;

/// A message body made of a fixed part and variable fields ("blobs") whose order a
/// [`BlobLayout`] records; its `Body` follows (the impl below).
pub(crate) trait BlobBody: Sized {
    /// Bytes of the fixed part.
    fn fixed_len(&self) -> usize;
    /// The variable fields present, in canonical order.
    fn blobs(&self) -> Blobs<'_>;
    /// The recorded order of the variable fields.
    fn layout(&self) -> &BlobLayout;
    /// The same, to record it after parsing or to change it.
    fn layout_mut(&mut self) -> &mut BlobLayout;
    /// Reads the fixed part from `r` and the variable fields it locates through `blobs`.
    fn read<'a>(r: &mut Reader<'a>, blobs: &mut BlobReader<'a>) -> Result<Self, WireError>;
    /// Writes the fixed part, with the offset/size pairs `p` gives.
    fn write_fixed(&self, w: &mut Writer<'_>, p: &Placement<'_>) -> Result<(), WireError>;
}

impl<T: BlobBody> Body for T {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let mut blobs = BlobReader::new(body);
        let mut v = T::read(&mut r, &mut blobs)?;
        *v.layout_mut() = blobs.finish(r.pos(), &v.blobs())?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        self.fixed_len() + blobs_len(&self.blobs())
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let p = Placement::new(self.layout(), self.fixed_len(), self.blobs())?;
        self.write_fixed(w, &p)?;
        p.write(w)
    }

    fn blob_fields(&self) -> Vec<BlobField> {
        self.blobs().into_iter().map(|(f, _)| f).collect()
    }

    fn layout_mut(&mut self) -> Option<&mut BlobLayout> {
        Some(BlobBody::layout_mut(self))
    }
}
