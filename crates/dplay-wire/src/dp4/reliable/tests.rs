use proptest::prelude::*;

use super::*;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};

const STA: ReliableFlags = ReliableFlags::STA;
const EOM: ReliableFlags = ReliableFlags::EOM;
const RLY: ReliableFlags = ReliableFlags::RLY;
const CMD: ReliableFlags = ReliableFlags::CMD;

#[track_caller]
fn index_bytes(index: u16) -> Vec<u8> {
    let mut out = vec![0; player_index_len(index)];
    let mut w = Writer::new(&mut out, player_index_len(index)).unwrap();
    write_player_index(&mut w, index);
    w.finish().unwrap();
    let back = read_player_index(&mut Reader::new(&out), "IdFrom").unwrap();
    assert_eq!(back, index);
    out
}

/// MC-DPL4R 2.2.1: 0x01 is `01`, 0xFFFE is `FE FF 03`; two bytes below 16384 (F-30: the text's
/// "greater than 16,384" means ≥).
#[test]
fn player_index_varint() {
    assert_eq!(index_bytes(0x01), [0x01]);
    assert_eq!(index_bytes(0xFFFE), [0xFE, 0xFF, 0x03]);
    assert_eq!(index_bytes(0x7F), [0x7F]);
    assert_eq!(index_bytes(0x80), [0x80, 0x01]);
    assert_eq!(index_bytes(16383), [0xFF, 0x7F]);
    assert_eq!(index_bytes(16384), [0x80, 0x80, 0x01]);
    assert_eq!(index_bytes(MAX_PLAYER_INDEX), [0xFF, 0xFF, 0x03]);
    for bad in [&[0xFF, 0xFF, 0x04][..], &[0xFF, 0xFF, 0x83], &[0x81, 0x00], &[0x80, 0x80, 0x00], &[0x80]] {
        assert!(read_player_index(&mut Reader::new(bad), "IdFrom").is_err(), "{bad:02X?}");
    }
}

fn data(flags: ReliableFlags, message_id: u8, sequence: u8, serial: u8, payload: &[u8]) -> ReliableFrame {
    let body = FrameBody::Data(DataFrame {
        flags,
        message_id,
        sequence,
        serial,
        nack: None,
        data: Blob::new(payload),
    });
    ReliableFrame { id_from: 1, id_to: 0xFFFE, body }
}

#[track_caller]
fn check_data(hex: &str, flags: ReliableFlags, message_id: u8, sequence: u8, serial: u8) {
    let frame = assert_reemits::<ReliableFrame>(&bytes(hex));
    assert_eq!((frame.id_from, frame.id_to), (1, 0xFFFE));
    let FrameBody::Data(d) = &frame.body else { panic!("not a data frame: {frame:?}") };
    assert_eq!((d.flags, d.message_id, d.sequence, d.serial), (flags, message_id, sequence, serial));
    assert_eq!(frame, data(flags, message_id, sequence, serial, &d.data));
}

/// MC-DPL4R 4.1.1-4.1.4 as bytes (IdFrom 1, IdTo 0xFFFE, two payload bytes). The examples'
/// flags leave out CMD and number from 0; we parse them as shown (F-30).
#[test]
fn mc_dpl4r_4_1_data_frames() {
    // 4.1.1: message 1, three reliable frames; serial counts frames.
    check_data("01 FE FF 03 11 00 00 00 AA BB", STA | RLY, 0, 0, 0);
    check_data("01 FE FF 03 01 00 01 01 AA BB", RLY, 0, 1, 1);
    check_data("01 FE FF 03 09 00 02 02 AA BB", EOM | RLY, 0, 2, 2);
    // 4.1.2: message 2, one unreliable frame.
    check_data("01 FE FF 03 18 01 03 00 AA BB", STA | EOM, 1, 3, 0);
    // 4.1.3: message 3, then its retry with serial 1.
    check_data("01 FE FF 03 19 02 04 00 AA BB", STA | EOM | RLY, 2, 4, 0);
    check_data("01 FE FF 03 19 02 04 01 AA BB", STA | EOM | RLY, 2, 4, 1);
    // 4.1.4: message 4 frame 2 (serial 0 here, 1 in 4.1.3; F-30).
    check_data("01 FE FF 03 10 03 05 00 AA BB", STA, 3, 5, 0);
    check_data("01 FE FF 03 08 03 06 00 AA BB", EOM, 3, 6, 0);
    // As we send them: with CMD (MC-DPL4R 2.2.2).
    check_data("01 FE FF 03 39 02 04 00 AA BB", CMD | STA | EOM | RLY, 2, 4, 0);
}

/// MC-DPL4R 4.1.1: the ACK for message 1 (bytes received 4500).
#[test]
fn mc_dpl4r_4_1_1_ack() {
    let frame = assert_reemits::<ReliableFrame>(&bytes("FE FF 03 01 02 00 02 00 94 11 00 00 E8 03 00 00"));
    let FrameBody::Ack(a) = frame.body else { panic!("not an ACK: {frame:?}") };
    assert_eq!((a.message_id, a.sequence, a.serial), (0, 2, 0));
    assert_eq!((a.bytes_received, a.local_tick_count), (4500, 1000));
}

/// MC-DPL4R 4.1.3: the NACK for message 3 (sequence 4, bytes received 8954, nNACK 0; F-30).
#[test]
fn mc_dpl4r_4_1_3_nack() {
    let frame = assert_reemits::<ReliableFrame>(&bytes("FE FF 03 01 82 00 02 04 FA 22 00 00 E8 03 00 00"));
    let FrameBody::Nack(n) = frame.body else { panic!("not a NACK: {frame:?}") };
    assert_eq!((n.message_id, n.sequence, n.bytes_received), (2, 4, 8954));
    assert_eq!(n.nack, NackMask { len: 0, bits: 0 });
    // INDEX C.4: sequence 7 with mask 0x03 means 7, 8 and 9 are missing.
    let frame = assert_reemits::<ReliableFrame>(&bytes("01 02 82 20 02 07 00 00 00 00 00 00 00 00 03"));
    let FrameBody::Nack(n) = frame.body else { panic!("not a NACK: {frame:?}") };
    assert_eq!((n.sequence, n.nack), (7, NackMask { len: 1, bits: 0x03 }));
}

#[test]
fn rejects_what_the_spec_forbids() {
    let bad = [
        "01 02 71 00 00 00",                            // BIG
        "01 02 A1 00 00 00 00",                         // CMD with EXT: MUST be ignored
        "01 02 81 00 00 00 01",                         // extended flags with COMMAND bits
        "01 02 81 00 00 00 60 AA AA",                   // nNACK 3, two mask bytes
        "01 02 02 00 00 00 00 00 00 00 00 00 00 00 00", // ACK with a trailing byte
        "01 02 02 00 00 00 00 00 00 00 00 00 00",       // short ACK
        "01 02",                                        // no flags
    ];
    for hex in bad {
        assert!(ReliableFrame::parse(&bytes(hex)).is_err(), "{hex}");
    }
    let wrong = data(ReliableFlags::ACK | STA, 0, 0, 0, &[]);
    assert!(matches!(wrong.to_vec(), Err(WireError::Unencodable { field: "flags", .. })));
    let too_wide = FrameBody::Nack(NackFrame {
        flags: ReliableFlags::ACK | ReliableFlags::EXT,
        message_id: 0,
        sequence: 0,
        bytes_received: 0,
        local_tick_count: 0,
        nack: NackMask { len: 1, bits: 0x100 },
    });
    assert!(ReliableFrame { id_from: 0, id_to: 0, body: too_wide }.to_vec().is_err());
}

#[test]
fn snapshots() {
    let mut frames = vec![("DATA", data(CMD | STA | EOM | RLY | ReliableFlags::SAK, 1, 1, 0, b"play"))];
    for (name, hex) in [
        ("DATA_EXT", "01 02 99 01 01 00 40 05 00 AA"),
        ("ACK", "FE FF 03 01 02 00 02 00 94 11 00 00 E8 03 00 00"),
        ("NACK", "01 02 82 20 02 07 00 00 00 00 00 00 00 00 03"),
    ] {
        frames.push((name, ReliableFrame::parse(&bytes(hex)).unwrap()));
    }
    for (name, frame) in frames {
        insta::assert_snapshot!(name, snapshot_text(&frame));
    }
}

fn flags_with(required: ReliableFlags, forbidden: ReliableFlags) -> impl Strategy<Value = ReliableFlags> {
    any::<u8>()
        .prop_map(move |b| (ReliableFlags::from_bits_retain(b) - forbidden - ReliableFlags::BIG) | required)
}

fn nack() -> impl Strategy<Value = NackMask> {
    (0..=3u8, any::<u32>())
        .prop_map(|(len, bits)| NackMask { len, bits: bits & [0, 0xFF, 0xFFFF, 0xFF_FFFF][usize::from(len)] })
}

fn frame() -> impl Strategy<Value = ReliableFrame> {
    let data = (
        any::<bool>(),
        any::<[u8; 3]>(),
        proptest::option::of(nack()),
        proptest::collection::vec(any::<u8>(), 0..16),
    )
        .prop_flat_map(|(cmd, [message_id, sequence, serial], nack, data)| {
            let (required, forbidden) = match (nack.is_some(), cmd) {
                (true, _) => (ReliableFlags::EXT, ReliableFlags::ACK | ReliableFlags::CMD),
                (false, true) => (ReliableFlags::CMD, ReliableFlags::ACK | ReliableFlags::EXT),
                (false, false) => (ReliableFlags::empty(), ReliableFlags::ACK | ReliableFlags::EXT),
            };
            flags_with(required, forbidden).prop_map(move |flags| {
                FrameBody::Data(DataFrame {
                    flags,
                    message_id,
                    sequence,
                    serial,
                    nack,
                    data: Blob(data.clone()),
                })
            })
        });
    let ack = (flags_with(ReliableFlags::ACK, ReliableFlags::EXT), any::<[u8; 3]>(), any::<[u32; 2]>())
        .prop_map(|(flags, [message_id, sequence, serial], [bytes_received, local_tick_count])| {
            FrameBody::Ack(AckFrame { flags, message_id, sequence, serial, bytes_received, local_tick_count })
        });
    let nack = (
        flags_with(ReliableFlags::ACK | ReliableFlags::EXT, ReliableFlags::empty()),
        any::<[u8; 2]>(),
        any::<[u32; 2]>(),
        nack(),
    )
        .prop_map(|(flags, [message_id, sequence], [bytes_received, local_tick_count], nack)| {
            FrameBody::Nack(NackFrame { flags, message_id, sequence, bytes_received, local_tick_count, nack })
        });
    (any::<u16>(), any::<u16>(), prop_oneof![data, ack, nack])
        .prop_map(|(id_from, id_to, body)| ReliableFrame { id_from, id_to, body })
}

proptest! {
    #[test]
    fn frames_roundtrip(f in frame()) {
        assert_roundtrip(&f);
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..32)) {
        let _ = ReliableFrame::parse(&data);
    }
}
