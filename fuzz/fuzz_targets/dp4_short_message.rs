//! DirectPlay 4 messages with the short header (MC-DPL4CS 2.2.6).
#![no_main]

use dplay_wire::dp4::message::ShortMessage;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<ShortMessage>(data));
