//! DirectPlay 4 system messages with the full header (MC-DPL4CS 2.2).
#![no_main]

use dplay_wire::dp4::message::Dp4Message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<Dp4Message>(data));
