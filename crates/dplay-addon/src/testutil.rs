//! Test helpers: spec-byte checks, snapshots and round trips.

use dplay_wire::hexdump::{dump, parse_hex};

use crate::packet::{Dialect, Fs2004PacketId, Packet, PacketId};

/// Decodes bytes written in hex.
#[track_caller]
pub(crate) fn bytes(hex: &str) -> Vec<u8> {
    parse_hex(hex).expect("valid hex in test")
}

/// Parses `bytes`, re-emits the packet and asserts the same bytes come back.
#[track_caller]
pub(crate) fn assert_reemits(dialect: Dialect, bytes: &[u8]) -> Packet {
    let p = Packet::parse(dialect, bytes).unwrap_or_else(|e| panic!("parse failed: {e}\n{}", dump(bytes)));
    assert_eq!(p.encoded_len(dialect), bytes.len(), "encoded_len of {p:?}");
    assert_eq!(dump(&p.to_vec(dialect).expect("emit")), dump(bytes), "re-emitted bytes differ for {p:?}");
    p
}

/// `parse(emit(x)) == x` and `emit(x).len() == x.encoded_len()`.
#[track_caller]
pub(crate) fn assert_roundtrip(dialect: Dialect, p: &Packet) {
    let b = p.to_vec(dialect).expect("emit");
    assert_eq!(b.len(), p.encoded_len(dialect));
    let back = Packet::parse(dialect, &b).unwrap_or_else(|e| panic!("reparse failed: {e}\n{}", dump(&b)));
    assert_eq!(&back, p);
}

/// The text of a per-packet snapshot: dialect and id name, a hex dump, then the decoded value.
pub(crate) fn snapshot_text(dialect: Dialect, p: &Packet) -> String {
    let b = p.to_vec(dialect).expect("emit");
    let id = p.packet_id(dialect).expect("id");
    let name = match dialect {
        Dialect::Fs98 => PacketId(id).name(),
        Dialect::Fs2004 => Fs2004PacketId(id).name(),
    };
    format!("{dialect:?} {id:#06x} {}\n{}\n{p:#?}\n", name.unwrap_or("?"), dump(&b))
}
