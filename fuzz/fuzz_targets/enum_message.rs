//! EnumQuery and EnumResponse (MC-DPLHP 2.2).
#![no_main]

use dplay_wire::dp8::enumeration::EnumMessage;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<EnumMessage>(data));
