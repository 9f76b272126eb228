//! Test helpers shared by the message modules: spec-byte checks, snapshots, round trips.

use std::fmt::Debug;

use crate::Wire;
use crate::hexdump::dump;

/// Parses `bytes`, re-emits the value and asserts the same bytes come back.
#[track_caller]
pub(crate) fn assert_reemits<T: Wire + Debug>(bytes: &[u8]) -> T {
    let value = T::parse(bytes).unwrap_or_else(|e| panic!("parse failed: {e}\n{}", dump(bytes)));
    assert_eq!(value.encoded_len(), bytes.len(), "encoded_len of {value:?}");
    let again = value.to_vec().expect("emit");
    assert_eq!(dump(&again), dump(bytes), "re-emitted bytes differ for {value:?}");
    value
}

/// The text of a per-message snapshot: a spec-style hex dump, then the decoded value.
pub(crate) fn snapshot_text<T: Wire + Debug>(value: &T) -> String {
    let bytes = value.to_vec().expect("emit");
    format!("{}\n{value:#?}\n", dump(&bytes))
}

/// `parse(emit(x)) == x` and `emit(x).len() == x.encoded_len()`.
#[track_caller]
pub(crate) fn assert_roundtrip<T: Wire + Debug + PartialEq>(value: &T) {
    let bytes = value.to_vec().expect("emit");
    assert_eq!(bytes.len(), value.encoded_len());
    let back = T::parse(&bytes).unwrap_or_else(|e| panic!("reparse failed: {e}\n{}", dump(&bytes)));
    assert_eq!(&back, value);
}

/// Decode bytes written in a spec's hex notation.
#[track_caller]
pub(crate) fn bytes(hex: &str) -> Vec<u8> {
    crate::hexdump::parse_hex(hex).expect("valid hex in test")
}
