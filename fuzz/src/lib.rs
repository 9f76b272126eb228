//! What the fuzz targets share: the check that parsing never panics (libFuzzer catches that)
//! and that a value that parsed re-emits to bytes that parse to the same value, and [`Input`],
//! the reader of the fuzzer's bytes that drives the endpoint targets.

use std::fmt::Debug;

use dplay_wire::Wire;

/// `parse(emit(parse(data))) == parse(data)` whenever `data` parses, and `emit` writes
/// exactly `encoded_len()` bytes.
pub fn check_roundtrip<T: Wire + PartialEq + Debug>(data: &[u8]) {
    let Ok(value) = T::parse(data) else { return };
    let bytes = value.to_vec().unwrap_or_else(|e| panic!("cannot emit {value:?}: {e}"));
    assert_eq!(bytes.len(), value.encoded_len(), "emit length of {value:?}");
    match T::parse(&bytes) {
        Ok(again) => assert_eq!(again, value, "re-emitted bytes parse differently"),
        Err(e) => panic!("re-emitted {value:?} does not parse: {e}"),
    }
}

/// Reads the fuzzer's bytes front to back; past the end everything is zero (or empty).
pub struct Input<'a>(pub &'a [u8]);

impl Input<'_> {
    /// The next byte.
    pub fn u8(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().map_or((0, &[][..]), |(f, r)| (*f, r));
        self.0 = rest;
        first
    }

    /// The next two bytes, little-endian.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// The next `n` bytes, or fewer at the end.
    pub fn bytes(&mut self, n: usize) -> &[u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }
}
