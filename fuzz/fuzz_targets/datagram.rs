//! The datagram classifier and every parser behind it (`parse_datagram`), and DP4 stream
//! framing.
#![no_main]

use dplay_wire::Datagram;
use dplay_wire::datagram::dp4_stream_messages;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    dplay_fuzz::check_roundtrip::<Datagram>(data);
    for message in dp4_stream_messages(data).flatten() {
        dplay_fuzz::check_roundtrip::<Datagram>(message);
    }
});
