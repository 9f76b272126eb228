//! DirectPlay 4 player messages in both forms, plain and as PLAYERWRAPPER content
//! (MC-DPL4CS 2.2.45, 2.2.47).
#![no_main]

use dplay_wire::dp4::player_message::{DatagramPlayerMessage, PlayerMessage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for ids in [true, false] {
        if let Ok(m) = DatagramPlayerMessage::parse_wrapped(data, ids) {
            let bytes = m.to_wrapped_vec().expect("a parsed datagram message re-emits");
            assert_eq!(bytes, data, "the datagram form re-emits byte for byte");
            assert_eq!(DatagramPlayerMessage::parse(data, ids).is_ok(), !m.needs_wrapper());
        }
        if let Ok(m) = PlayerMessage::parse_wrapped(data, ids) {
            let bytes = m.to_wrapped_vec().expect("a parsed stream message re-emits");
            assert_eq!(PlayerMessage::parse_wrapped(&bytes, ids).ok(), Some(m), "stream form roundtrip");
        }
    }
});
