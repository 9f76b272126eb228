//! Bounds-checked reading and writing, shared by every message.
//!
//! Parsers read through [`Reader`], which never panics and reports the field and offset of a
//! short read. Emitters write through [`Writer`], whose buffer length is checked once up front.

use uuid::Uuid;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::WireError;

/// A value with a byte-exact wire form.
///
/// `parse(emit(x)) == x` holds for every value, `emit` writes exactly `encoded_len()` bytes, and
/// neither ever panics.
pub trait Wire: Sized {
    /// Parses one complete value from `bytes`.
    fn parse(bytes: &[u8]) -> Result<Self, WireError>;
    /// The number of bytes [`Wire::emit`] writes.
    fn encoded_len(&self) -> usize;
    /// Writes the value into the front of `buf` and returns the number of bytes written.
    ///
    /// Fails only with [`WireError::BufferTooSmall`] when `buf` is shorter than `encoded_len()`,
    /// or with [`WireError::Unencodable`] when a length does not fit its field.
    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError>;
    /// Emits into a new vector of exactly `encoded_len()` bytes.
    fn to_vec(&self) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; self.encoded_len()];
        let written = self.emit(&mut out)?;
        out.truncate(written);
        Ok(out)
    }
}

/// A cursor over a message being parsed. Offsets in errors are relative to the slice given.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Starts reading at the first byte of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Current offset from the start.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// The whole message this reader walks.
    pub fn message(&self) -> &'a [u8] {
        self.buf
    }

    /// Reads `n` raw bytes.
    pub fn bytes(&mut self, field: &'static str, n: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.buf.len())
            .ok_or(WireError::Truncated { field, offset: self.pos, needed: n, got: self.remaining() })?;
        let out = self.buf.get(self.pos..end).unwrap_or_default();
        self.pos = end;
        Ok(out)
    }

    /// Reads a fixed layout: a `#[repr(C)]` zerocopy struct of little-endian fields (STYLE.md §3).
    pub fn layout<T>(&mut self, field: &'static str) -> Result<&'a T, WireError>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        let bytes = self.bytes(field, size_of::<T>())?;
        // Cannot fail: the length is exactly the size and T is unaligned.
        T::ref_from_bytes(bytes).map_err(|_| WireError::Truncated {
            field,
            offset: self.pos,
            needed: size_of::<T>(),
            got: bytes.len(),
        })
    }

    /// Reads a fixed-size array.
    pub fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], WireError> {
        let mut out = [0; N];
        out.copy_from_slice(self.bytes(field, N)?);
        Ok(out)
    }

    /// Reads a `u8`.
    pub fn u8(&mut self, field: &'static str) -> Result<u8, WireError> {
        Ok(self.array::<1>(field)?[0])
    }

    /// Reads a little-endian `u16`.
    pub fn u16(&mut self, field: &'static str) -> Result<u16, WireError> {
        self.array(field).map(u16::from_le_bytes)
    }

    /// Reads a big-endian `u16` (ports in addresses).
    pub fn u16_be(&mut self, field: &'static str) -> Result<u16, WireError> {
        self.array(field).map(u16::from_be_bytes)
    }

    /// Reads a little-endian `u32`.
    pub fn u32(&mut self, field: &'static str) -> Result<u32, WireError> {
        self.array(field).map(u32::from_le_bytes)
    }

    /// Reads a little-endian `u64`.
    pub fn u64(&mut self, field: &'static str) -> Result<u64, WireError> {
        self.array(field).map(u64::from_le_bytes)
    }

    /// Reads a GUID in the Windows wire layout (Data1-3 little-endian, Data4 raw).
    pub fn guid(&mut self, field: &'static str) -> Result<Uuid, WireError> {
        self.array(field).map(Uuid::from_bytes_le)
    }

    /// Everything not yet read.
    pub fn rest(&mut self) -> &'a [u8] {
        let out = self.buf.get(self.pos..).unwrap_or_default();
        self.pos = self.buf.len();
        out
    }

    /// Fails with [`WireError::InvalidValue`] unless the whole message was consumed.
    pub fn finish(&self, field: &'static str) -> Result<(), WireError> {
        match self.remaining() {
            0 => Ok(()),
            extra => Err(WireError::InvalidValue {
                field,
                offset: self.pos,
                value: extra as u64,
                reason: "unexpected trailing bytes",
            }),
        }
    }
}

/// Finds an offset/size field: `size` bytes at `base + offset` of `msg`.
///
/// An `offset` of 0 means the field is absent and yields `None` (MC-DPL8CS 2.2; MC-DPL4CS 2.2).
/// An absent field with a non-zero size is an error, so that every parsed value re-emits to
/// the same bytes.
pub fn located<'a>(
    msg: &'a [u8],
    base: usize,
    field: &'static str,
    offset: u32,
    size: u32,
) -> Result<Option<&'a [u8]>, WireError> {
    let bad = || WireError::BadOffset { field, offset: offset.into(), size: size.into(), len: msg.len() };
    if offset == 0 {
        return if size == 0 { Ok(None) } else { Err(bad()) };
    }
    let start = base.checked_add(offset as usize).ok_or_else(bad)?;
    let end = start.checked_add(size as usize).ok_or_else(bad)?;
    msg.get(start..end).map(Some).ok_or_else(bad)
}

/// Writes a value into a buffer whose length was checked before writing began.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
    overflow: bool,
}

impl<'a> Writer<'a> {
    /// Checks that `buf` holds `len` bytes and returns a writer over exactly those bytes.
    pub fn new(buf: &'a mut [u8], len: usize) -> Result<Self, WireError> {
        let got = buf.len();
        let buf = buf.get_mut(..len).ok_or(WireError::BufferTooSmall { needed: len, got })?;
        Ok(Self { buf, pos: 0, overflow: false })
    }

    /// Bytes written so far.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Writes raw bytes.
    pub fn bytes(&mut self, data: &[u8]) {
        match self.buf.get_mut(self.pos..self.pos + data.len()) {
            Some(dst) => {
                dst.copy_from_slice(data);
                self.pos += data.len();
            }
            None => self.overflow = true,
        }
    }

    /// Writes a fixed layout (a zerocopy struct).
    pub fn layout<T: IntoBytes + Immutable>(&mut self, value: &T) {
        self.bytes(value.as_bytes());
    }

    /// Writes `n` zero bytes.
    pub fn zeros(&mut self, n: usize) {
        match self.buf.get_mut(self.pos..self.pos + n) {
            Some(dst) => {
                dst.fill(0);
                self.pos += n;
            }
            None => self.overflow = true,
        }
    }

    /// Writes a `u8`.
    pub fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }

    /// Writes a little-endian `u16`.
    pub fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }

    /// Writes a big-endian `u16`.
    pub fn u16_be(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }

    /// Writes a little-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    /// Writes a little-endian `u64`.
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// Writes a GUID in the Windows wire layout.
    pub fn guid(&mut self, v: &Uuid) {
        self.bytes(&v.to_bytes_le());
    }

    /// Ends writing; returns the byte count, or an error if the checked length was too short
    /// (which means `encoded_len` disagrees with `emit`, a bug this turns into an error).
    pub fn finish(self) -> Result<usize, WireError> {
        if self.overflow || self.pos != self.buf.len() {
            return Err(WireError::Unencodable {
                field: "message",
                reason: "encoded_len disagrees with emit",
            });
        }
        Ok(self.pos)
    }
}

/// Converts a length to a `u32` field, or fails naming the field.
pub fn len_u32(field: &'static str, len: usize) -> Result<u32, WireError> {
    u32::try_from(len).map_err(|_| WireError::Unencodable { field, reason: "longer than 4 GiB" })
}
