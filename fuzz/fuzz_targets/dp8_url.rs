//! DN_ADDRESSING_URL text (MC-DPL8CS 2.2.8): parsing never panics, and a parsed URL writes
//! text that parses to a URL writing the same text.
#![no_main]

use dplay_wire::dp8::url::DirectPlayUrl;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(url) = DirectPlayUrl::parse(text) else { return };
    let written = url.to_string();
    let again = DirectPlayUrl::parse(&written).unwrap_or_else(|e| panic!("{written:?} does not parse: {e}"));
    assert_eq!(again.to_string(), written, "written text changes when read back");
});
