//! CFRAME parsing (MC-DPL8R 2.2.1).
#![no_main]

use dplay_wire::dp8::cframe::Cframe;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<Cframe>(data));
