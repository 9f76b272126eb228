//! Field helpers shared by the DirectPlay 4 bodies: offset-located strings and blobs, and the
//! canonical placement of variable fields when emitting.
//!
//! Every DP4 offset counts from the 'play' signature (INDEX §0, F-26). Bodies are parsed from
//! a slice that starts at the signature, so an offset is an index into that slice, and the body
//! itself starts at [`BODY_START`].

use crate::codec::{Reader, Writer, located};
use crate::{Blob, WideString, WireError};

/// Where a body starts, counted from the signature: after signature, Command and Version.
pub(crate) const BODY_START: usize = 8;

/// A DP4 body: read from a message that starts at the signature, emitted after its header.
pub(crate) trait Body: Sized {
    /// Reads the body; `msg` starts at the signature and `r` (over `msg`) is at [`BODY_START`].
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError>;
    /// Bytes the body takes.
    fn len(&self) -> usize;
    /// Writes the body in canonical layout; offsets are computed from [`BODY_START`].
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError>;
}

/// An offset or size as a `u32` field. Callers check the whole message against
/// `MAX_MESSAGE_SIZE` before writing, so saturation never reaches the wire.
pub(crate) fn off(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Places a variable field of `len` bytes at `*at` and advances `*at`; `None` (absent) gives
/// offset 0.
pub(crate) fn place(at: &mut usize, len: Option<usize>) -> u32 {
    match len {
        Some(len) => {
            let here = *at;
            *at += len;
            off(here)
        }
        None => 0,
    }
}

/// Wire length of an optional string.
pub(crate) fn wide_len(s: &Option<WideString>) -> Option<usize> {
    s.as_ref().map(WideString::wire_len)
}

/// Reads a NUL-terminated UTF-16 string at the reader's position.
pub(crate) fn read_wide(r: &mut Reader<'_>, field: &'static str) -> Result<WideString, WireError> {
    let mut units = Vec::new();
    loop {
        match r.u16(field)? {
            0 => return Ok(WideString::from_units(units)),
            unit => units.push(unit),
        }
    }
}

/// The NUL-terminated string at `offset` of `msg` (0: absent), and the offset just past it.
pub(crate) fn wide_at(
    msg: &[u8],
    field: &'static str,
    offset: u32,
) -> Result<Option<(WideString, usize)>, WireError> {
    if offset == 0 {
        return Ok(None);
    }
    let start = offset as usize;
    let tail = msg.get(start..).ok_or(WireError::BadOffset {
        field,
        offset: offset.into(),
        size: 0,
        len: msg.len(),
    })?;
    let mut r = Reader::new(tail);
    let s = read_wide(&mut r, field).map_err(|_| WireError::BadString {
        field,
        offset: start,
        reason: "no terminating NUL before the end of the message",
    })?;
    Ok(Some((s, start + r.pos())))
}

/// The sized field at `offset` of `msg`, as a blob (offset 0 and size 0: empty).
pub(crate) fn blob_at(msg: &[u8], field: &'static str, offset: u32, size: u32) -> Result<Blob, WireError> {
    Ok(located(msg, 0, field, offset, size)?.map(Blob::new).unwrap_or_default())
}

/// Offset of a blob placed at `*at` (0 when empty, as senders write for absent data).
pub(crate) fn place_blob(at: &mut usize, blob: &Blob) -> u32 {
    place(at, (!blob.is_empty()).then_some(blob.len()))
}

/// Writes an optional string.
pub(crate) fn write_wide(w: &mut Writer<'_>, s: &Option<WideString>) {
    if let Some(s) = s {
        s.write_nul(w);
    }
}

/// A reader over `msg` from `offset` on, for a structure an offset field points at (0: absent
/// is an error here, for fields the spec requires).
pub(crate) fn reader_at<'a>(
    msg: &'a [u8],
    field: &'static str,
    offset: u32,
) -> Result<Reader<'a>, WireError> {
    msg.get(offset as usize..).filter(|_| offset != 0).map(Reader::new).ok_or(WireError::BadOffset {
        field,
        offset: offset.into(),
        size: 0,
        len: msg.len(),
    })
}
