//! PATH_TEST and the NAT resolver messages (MC-DPLNAT 2.2).
#![no_main]

use dplay_wire::dp8::path_test::NatMessage;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dplay_fuzz::check_roundtrip::<NatMessage>(data));
