//! The coalesced payload format: several small messages in one DFRAME (MC-DPL8R 2.2.3,
//! 3.1.5.2.5; MS-DPDX 2.2.17.1).
//!
//! When `bControl` has `PACKET_CONTROL_COALESCE`, the DFRAME payload is 1 to 32 two-byte
//! headers (`bSize`, `bCommand`), two zero bytes when their count is odd, then the payloads in
//! header order, each but the last padded with zeros to a 4-byte boundary. A header's size is
//! 11 bits: `((bCommand & 0x38) << 5) | bSize`, and excludes the padding. The last header has
//! `PACKET_COMMAND_END_COALESCE`.
//!
//! [`parse_coalesced`] borrows the payloads out of a received frame; [`emit_coalesced`] writes
//! borrowed payloads straight into a datagram buffer, and [`coalesced_len`] tells a sender
//! what a set of payload sizes will take before it commits to them. [`Coalesced`] is the owned
//! form, with [`Wire`].

use crate::WireError;
use crate::codec::{Reader, Wire, Writer};
use crate::text::Blob;

/// `PACKET_COMMAND_END_COALESCE`: this header is the last (MC-DPL8R 2.2.3).
pub const PACKET_COMMAND_END_COALESCE: u8 = 0x01;
/// `PACKET_COMMAND_RELIABLE`: the sub-payload is delivered reliably (MC-DPL8R 2.2.3).
pub const PACKET_COMMAND_RELIABLE: u8 = 0x02;
/// `PACKET_COMMAND_SEQUENTIAL`: the sub-payload is indicated in order (MC-DPL8R 2.2.3).
pub const PACKET_COMMAND_SEQUENTIAL: u8 = 0x04;
/// `PACKET_COMMAND_COALESCE_BIG_1`: size bit 8, counting from 0; the spec's "bit 9" (MC-DPL8R 2.2.3).
pub const PACKET_COMMAND_COALESCE_BIG_1: u8 = 0x08;
/// `PACKET_COMMAND_COALESCE_BIG_2`: size bit 9, counting from 0; the spec's "bit 10" (MC-DPL8R 2.2.3).
pub const PACKET_COMMAND_COALESCE_BIG_2: u8 = 0x10;
/// `PACKET_COMMAND_COALESCE_BIG_3`: size bit 10, counting from 0; the spec's "bit 11" (MC-DPL8R 2.2.3).
pub const PACKET_COMMAND_COALESCE_BIG_3: u8 = 0x20;
/// `PACKET_COMMAND_USER_1`: a session (core) message; MS-DPDX 2.2.17.1 requires it (MC-DPL8R 2.2.3).
pub const PACKET_COMMAND_USER_1: u8 = 0x40;
/// `PACKET_COMMAND_USER_2`: the second consumer flag, voice in DirectPlay 8 (MC-DPL8R 2.2.3).
pub const PACKET_COMMAND_USER_2: u8 = 0x80;

/// The three `PACKET_COMMAND_COALESCE_BIG_*` bits: the top of the 11-bit size.
const BIG_BITS: u8 =
    PACKET_COMMAND_COALESCE_BIG_1 | PACKET_COMMAND_COALESCE_BIG_2 | PACKET_COMMAND_COALESCE_BIG_3;

/// At most 32 coalesce headers in a frame (MC-DPL8R 2.2.3).
pub const COALESCE_MAX_PAYLOADS: usize = 32;
/// The largest sub-payload: 11 bits of size (MC-DPL8R 2.2.3).
pub const COALESCE_MAX_SIZE: usize = 0x7FF;

/// One sub-payload of a coalesced frame, borrowed from the frame (MC-DPL8R 2.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SubPayloadRef<'a> {
    /// `PACKET_COMMAND_RELIABLE` in the sub-header's `bCommand`.
    pub reliable: bool,
    /// `PACKET_COMMAND_SEQUENTIAL`.
    pub sequential: bool,
    /// `PACKET_COMMAND_USER_1`: a session message.
    pub user_1: bool,
    /// `PACKET_COMMAND_USER_2`.
    pub user_2: bool,
    /// The payload, without its alignment padding.
    pub data: &'a [u8],
}

/// One sub-payload of a coalesced frame, owned (MC-DPL8R 2.2.3).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SubPayload {
    /// `PACKET_COMMAND_RELIABLE` in the sub-header's `bCommand`.
    pub reliable: bool,
    /// `PACKET_COMMAND_SEQUENTIAL`.
    pub sequential: bool,
    /// `PACKET_COMMAND_USER_1`: a session message.
    pub user_1: bool,
    /// `PACKET_COMMAND_USER_2`.
    pub user_2: bool,
    /// The payload, without its alignment padding.
    pub data: Blob,
}

impl<'a> From<&'a SubPayload> for SubPayloadRef<'a> {
    fn from(p: &'a SubPayload) -> Self {
        Self {
            reliable: p.reliable,
            sequential: p.sequential,
            user_1: p.user_1,
            user_2: p.user_2,
            data: &p.data,
        }
    }
}

impl From<&SubPayloadRef<'_>> for SubPayload {
    fn from(p: &SubPayloadRef<'_>) -> Self {
        Self {
            reliable: p.reliable,
            sequential: p.sequential,
            user_1: p.user_1,
            user_2: p.user_2,
            data: Blob::new(p.data),
        }
    }
}

impl SubPayloadRef<'_> {
    /// The flag bits of this sub-payload's `bCommand`: everything but END_COALESCE and the size.
    pub fn command_flags(&self) -> u8 {
        let bit = |set: bool, flag: u8| if set { flag } else { 0 };
        bit(self.reliable, PACKET_COMMAND_RELIABLE)
            | bit(self.sequential, PACKET_COMMAND_SEQUENTIAL)
            | bit(self.user_1, PACKET_COMMAND_USER_1)
            | bit(self.user_2, PACKET_COMMAND_USER_2)
    }
}

/// Bytes from `len` up to the next multiple of 4.
fn pad4(len: usize) -> usize {
    len.wrapping_neg() & 3
}

/// Bytes taken by `count` headers and their padding: 2 each, rounded up to 4 (MC-DPL8R 2.2.3).
fn headers_len(count: usize) -> usize {
    let len = count.saturating_mul(2);
    len.saturating_add(pad4(len))
}

/// The coalesced length of payloads of `sizes` bytes, in order: headers, header padding, each
/// payload but the last padded to 4 bytes (MC-DPL8R 2.2.3). Zero for no payloads.
///
/// A sender adds payloads while `header + coalesced_len(..)` stays within its MTU; it does not
/// check the 32-payload and 2047-byte limits, which [`emit_coalesced`] enforces.
///
/// ```
/// use dplay_wire::dp8::coalesce::coalesced_len;
/// // Three 2-byte headers + 2 pad, 5 bytes + 3 pad, 4 bytes, 3 bytes unpadded.
/// assert_eq!(coalesced_len([5, 4, 3]), 8 + 8 + 4 + 3);
/// ```
pub fn coalesced_len<I: IntoIterator<Item = usize>>(sizes: I) -> usize {
    let mut count = 0usize;
    let mut body = 0usize;
    let mut last_pad = 0;
    for size in sizes {
        count += 1;
        body = body.saturating_add(size).saturating_add(pad4(size));
        last_pad = pad4(size);
    }
    headers_len(count).saturating_add(body.saturating_sub(last_pad))
}

/// Parses a coalesced DFRAME payload, borrowing each sub-payload (MC-DPL8R 2.2.3, 3.1.5.2.5).
///
/// Headers are read up to the one with `PACKET_COMMAND_END_COALESCE`; more than 32 without it,
/// a size that reaches past the frame, or bytes after the last payload are errors. The header
/// and payload padding is not checked (docs/decisions.md).
pub fn parse_coalesced(payload: &[u8]) -> Result<Vec<SubPayloadRef<'_>>, WireError> {
    let mut r = Reader::new(payload);
    let mut headers = Vec::new();
    loop {
        let size = r.u8("bSize")?;
        let at = r.pos();
        let command = r.u8("bCommand")?;
        headers.push((size, command));
        if command & PACKET_COMMAND_END_COALESCE != 0 {
            break;
        }
        if headers.len() == COALESCE_MAX_PAYLOADS {
            return Err(WireError::InvalidValue {
                field: "bCommand",
                offset: at,
                value: command.into(),
                reason: "no PACKET_COMMAND_END_COALESCE in 32 coalesce headers (MC-DPL8R 2.2.3)",
            });
        }
    }
    if headers.len() % 2 == 1 {
        r.bytes("header padding", 2)?;
    }
    let count = headers.len();
    let mut out = Vec::with_capacity(count);
    for (i, (size, command)) in headers.into_iter().enumerate() {
        let len = (usize::from(command & BIG_BITS) << 5) | usize::from(size);
        let data = r.bytes("payload", len)?;
        if i + 1 < count {
            r.bytes("payload padding", pad4(len))?;
        }
        out.push(SubPayloadRef {
            reliable: command & PACKET_COMMAND_RELIABLE != 0,
            sequential: command & PACKET_COMMAND_SEQUENTIAL != 0,
            user_1: command & PACKET_COMMAND_USER_1 != 0,
            user_2: command & PACKET_COMMAND_USER_2 != 0,
            data,
        });
    }
    r.finish("coalesced payload")?;
    Ok(out)
}

/// Writes `parts` in the coalesced format into the front of `buf`; returns the bytes written,
/// `coalesced_len` of their sizes (MC-DPL8R 2.2.3).
///
/// Fails with [`WireError::Unencodable`] for no parts, more than 32, or a part over 2047
/// bytes, and with [`WireError::BufferTooSmall`] when `buf` is short.
pub fn emit_coalesced(parts: &[SubPayloadRef<'_>], buf: &mut [u8]) -> Result<usize, WireError> {
    emit_parts(parts.iter().copied(), buf)
}

fn emit_parts<'a, I>(parts: I, buf: &mut [u8]) -> Result<usize, WireError>
where
    I: ExactSizeIterator<Item = SubPayloadRef<'a>> + Clone,
{
    let count = parts.len();
    if !(1..=COALESCE_MAX_PAYLOADS).contains(&count) {
        return Err(WireError::Unencodable {
            field: "coalesce headers",
            reason: "a coalesced frame holds 1 to 32 payloads (MC-DPL8R 2.2.3)",
        });
    }
    if parts.clone().any(|p| p.data.len() > COALESCE_MAX_SIZE) {
        return Err(WireError::Unencodable {
            field: "bSize",
            reason: "a coalesced payload is at most 2047 bytes (MC-DPL8R 2.2.3)",
        });
    }
    let len = coalesced_len(parts.clone().map(|p| p.data.len()));
    let mut w = Writer::new(buf, len)?;
    for (i, part) in parts.clone().enumerate() {
        let size = part.data.len();
        let [low, high] = u16::try_from(size).unwrap_or(0).to_le_bytes();
        let end = if i + 1 == count { PACKET_COMMAND_END_COALESCE } else { 0 };
        w.u8(low);
        w.u8(part.command_flags() | ((high << 3) & BIG_BITS) | end);
    }
    w.zeros(headers_len(count) - 2 * count);
    for (i, part) in parts.enumerate() {
        w.bytes(part.data);
        if i + 1 < count {
            w.zeros(pad4(part.data.len()));
        }
    }
    w.finish()
}

/// A coalesced DFRAME payload, owned: 1 to 32 sub-payloads (MC-DPL8R 2.2.3; MS-DPDX 2.2.17.1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Coalesced {
    /// The sub-payloads, in the order they are delivered.
    pub payloads: Vec<SubPayload>,
}

impl Wire for Coalesced {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let payloads = parse_coalesced(bytes)?.iter().map(SubPayload::from).collect();
        Ok(Self { payloads })
    }

    fn encoded_len(&self) -> usize {
        coalesced_len(self.payloads.iter().map(|p| p.data.len()))
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        emit_parts(self.payloads.iter().map(SubPayloadRef::from), buf)
    }
}

#[cfg(test)]
mod tests;
