//! DPSP_MSG_HEADER parsing, full and short forms (MC-DPL4CS 2.2.6).
#![no_main]

use dplay_wire::dp4::header::{HEADER_LEN, Header, ShortHeader};
use dplay_wire::{Reader, Writer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((header, size)) = Header::parse(data) {
        let mut bytes = data[..size].to_vec();
        let mut w = Writer::new(&mut bytes, HEADER_LEN).expect("room for the header");
        header.write(&mut w, size).expect("write a parsed header");
        w.finish().expect("header length");
        assert_eq!(Header::parse(&bytes).expect("reparse"), (header, size));
    }
    if let Ok(short) = ShortHeader::read(&mut Reader::new(data)) {
        let mut bytes = [0; 8];
        let mut w = Writer::new(&mut bytes, 8).expect("room");
        short.write(&mut w);
        w.finish().expect("short header length");
        assert_eq!(ShortHeader::read(&mut Reader::new(&bytes)).expect("reparse"), short);
    }
});
