//! DFRAME header parsing (MC-DPL8R 2.2.2) under each of the four connection contexts.
#![no_main]

use dplay_wire::dp8::dframe::{DframeContext, DframeHeader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for signed in [false, true] {
        for keepalive_sess_id in [false, true] {
            let ctx = DframeContext { signed, keepalive_sess_id };
            let Ok((header, payload)) = DframeHeader::parse(data, ctx) else { continue };
            let mut bytes = vec![0; header.len()];
            let written = header.emit(&mut bytes).expect("emit a parsed header");
            assert_eq!(written, header.len());
            bytes.extend_from_slice(payload);
            let (again, again_payload) = DframeHeader::parse(&bytes, ctx).expect("reparse");
            assert_eq!(again, header);
            assert_eq!(again_payload, payload);
        }
    }
});
