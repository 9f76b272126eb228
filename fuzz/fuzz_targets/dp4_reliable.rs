//! DirectPlay 4 reliable protocol frames (MC-DPL4R 2.2).
#![no_main]

use dplay_wire::dp4::reliable::ReliableFrame;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<ReliableFrame>(data));
