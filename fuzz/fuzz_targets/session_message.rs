//! DirectPlay 8 session messages (MC-DPL8CS 2.2; MS-DPDX 2.2.10-2.2.37).
#![no_main]

use dplay_wire::dp8::session::SessionMessage;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<SessionMessage>(data));
