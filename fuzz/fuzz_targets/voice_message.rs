//! DirectPlay Voice messages (MC-DPLVP 2.2): parsing never panics, whatever parses re-emits.
#![no_main]

use dplay_wire::voice::VoiceMessage;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<VoiceMessage>(data));
