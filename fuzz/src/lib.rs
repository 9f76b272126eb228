//! Checks shared by the fuzz targets: parsing never panics (libFuzzer catches that), and a
//! value that parsed re-emits to bytes that parse to the same value.

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
