//! Strings as DirectPlay sends them: UTF-16LE with a terminating NUL, sized in bytes.

use std::fmt;

use crate::WireError;

/// A UTF-16 string as carried on the wire, without its terminating NUL.
///
/// Kept as UTF-16 code units so that any string a peer sends, even one with unpaired
/// surrogates, re-emits byte for byte. Convert with [`WideString::to_string_lossy`].
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct WideString(Vec<u16>);

impl WideString {
    /// Encodes `s` as UTF-16.
    pub fn new(s: &str) -> Self {
        Self(s.encode_utf16().collect())
    }

    /// Wraps raw code units (without a NUL).
    pub fn from_units(units: Vec<u16>) -> Self {
        Self(units)
    }

    /// The code units, without the NUL.
    pub fn units(&self) -> &[u16] {
        &self.0
    }

    /// The text, with U+FFFD for invalid UTF-16.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf16_lossy(&self.0)
    }

    /// Bytes on the wire: two per unit plus the two-byte NUL.
    pub fn wire_len(&self) -> usize {
        2 * self.0.len() + 2
    }

    /// Decodes a sized field: `bytes` is the whole field, NUL included.
    pub fn parse_nul(field: &'static str, offset: usize, bytes: &[u8]) -> Result<Self, WireError> {
        let bad = |reason| WireError::BadString { field, offset, reason };
        if !bytes.len().is_multiple_of(2) {
            return Err(bad("odd byte count for UTF-16"));
        }
        let mut units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c.first().copied().unwrap_or(0), c.get(1).copied().unwrap_or(0)]))
            .collect();
        match units.pop() {
            Some(0) => Ok(Self(units)),
            Some(_) => Err(bad("missing terminating NUL")),
            None => Err(bad("empty; the size must count the NUL")),
        }
    }

    /// Writes the units and the NUL; `out` must be `wire_len()` bytes.
    pub fn write_nul(&self, w: &mut crate::Writer<'_>) {
        for unit in &self.0 {
            w.u16(*unit);
        }
        w.u16(0);
    }
}

impl From<&str> for WideString {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl fmt::Debug for WideString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

impl fmt::Display for WideString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

impl serde::Serialize for WideString {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string_lossy())
    }
}

/// Opaque bytes (application data, reply blobs, private payloads): shown as hex.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Blob(pub Vec<u8>);

impl Blob {
    /// Copies `bytes`.
    pub fn new(bytes: &[u8]) -> Self {
        Self(bytes.to_vec())
    }

    /// True when there are no bytes (the field is absent on the wire).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl std::ops::Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl From<Vec<u8>> for Blob {
    fn from(v: Vec<u8>) -> Self {
        Self(v)
    }
}

impl fmt::Debug for Blob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Blob({})", crate::hexdump::hex(&self.0))
    }
}

impl serde::Serialize for Blob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::hexdump::hex(&self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_user_is_twenty_bytes_with_nul() {
        // MC-DPL8CS 4: "Test User" has size 0x14.
        assert_eq!(WideString::new("Test User").wire_len(), 0x14);
    }

    #[test]
    fn rejects_odd_and_unterminated() {
        assert!(WideString::parse_nul("name", 0, &[0x41]).is_err());
        assert!(WideString::parse_nul("name", 0, &[0x41, 0]).is_err());
        assert!(WideString::parse_nul("name", 0, &[]).is_err());
        assert_eq!(WideString::parse_nul("name", 0, &[0x41, 0, 0, 0]).unwrap(), WideString::new("A"));
    }
}
