//! Cross-crate tests and the fixtures they share: captures of our own encodings (`pcap`) and
//! tshark's dissection of them (`tshark`), so that Wireshark's independent decoders check our
//! bytes. Test support only: it panics on any failure, which is the test failing.
#![allow(clippy::indexing_slicing, clippy::print_stderr, clippy::missing_panics_doc)]

pub mod dp4_capture;
pub mod pcap;
pub mod tshark;
