//! The coalesced DFRAME payload (MC-DPL8R 2.2.3).
#![no_main]

use dplay_wire::dp8::coalesce::Coalesced;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<Coalesced>(data));
