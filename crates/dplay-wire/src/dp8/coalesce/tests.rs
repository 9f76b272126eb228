use proptest::prelude::*;

use super::*;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};

#[track_caller]
fn part(flags: u8, data: &[u8]) -> SubPayload {
    SubPayload {
        reliable: flags & PACKET_COMMAND_RELIABLE != 0,
        sequential: flags & PACKET_COMMAND_SEQUENTIAL != 0,
        user_1: flags & PACKET_COMMAND_USER_1 != 0,
        user_2: flags & PACKET_COMMAND_USER_2 != 0,
        data: Blob::new(data),
    }
}

/// MC-DPL8R 2.2.3: three headers (odd, so two pad bytes), payloads of 5 and 4 bytes padded to
/// 4, and a last payload of 3 bytes without padding. No spec gives coalesced bytes; this is
/// the layout worked out from the rules.
#[test]
fn three_payloads_layout() {
    let wire = bytes(
        "05 46  04 40  03 41  00 00 \
         C1 00 00 00 01  00 00 00 \
         AA BB CC DD \
         11 22 33",
    );
    let c = assert_reemits::<Coalesced>(&wire);
    assert_eq!(c.payloads.len(), 3);
    assert_eq!(c.payloads[0], part(0x46, &[0xC1, 0, 0, 0, 1]));
    assert!(c.payloads[0].reliable && c.payloads[0].sequential && c.payloads[0].user_1);
    assert_eq!(c.payloads[1], part(0x40, &[0xAA, 0xBB, 0xCC, 0xDD]));
    assert_eq!(c.payloads[2], part(0x40, &[0x11, 0x22, 0x33]));
    assert_eq!(coalesced_len([5, 4, 3]), wire.len());

    let refs = parse_coalesced(&wire).unwrap();
    assert_eq!(refs[1].data, &[0xAA, 0xBB, 0xCC, 0xDD]);
    let mut buf = [0xFFu8; 64];
    let n = emit_coalesced(&refs, &mut buf).unwrap();
    assert_eq!(&buf[..n], &wire[..]);
}

/// Two headers need no header padding; one payload alone is not padded.
#[test]
fn even_headers_and_single() {
    assert_reemits::<Coalesced>(&bytes("01 40 02 C1  7A 00 00 00  BB CC"));
    let single = assert_reemits::<Coalesced>(&bytes("01 41 00 00 7A"));
    assert_eq!(single.payloads, vec![part(0x40, &[0x7A])]);
    assert_eq!(coalesced_len([1]), 5);
    assert_eq!(coalesced_len([]), 0);
}

/// MC-DPL8R 2.2.3: the size is `((bCommand & 0x38) << 5) | bSize`; 2047 is the largest.
#[test]
fn eleven_bit_sizes() {
    let big = Coalesced { payloads: vec![part(0x40, &[7; 0x7FF]), part(0x02, &[1; 0x100])] };
    let wire = big.to_vec().unwrap();
    assert_eq!(&wire[..4], &[0xFF, 0x78, 0x00, 0x0B]);
    assert_eq!(wire.len(), 4 + 0x800 + 0x100);
    assert_roundtrip(&big);
}

#[test]
fn rejects_bad_frames() {
    // No END_COALESCE within 32 headers.
    let mut no_end = [0u8, 0x40].repeat(32);
    no_end.extend([0; 8]);
    assert!(matches!(
        parse_coalesced(&no_end),
        Err(WireError::InvalidValue { field: "bCommand", offset: 63, .. })
    ));
    // The frame ends in the headers.
    assert!(matches!(parse_coalesced(&bytes("01 40 02")), Err(WireError::Truncated { .. })));
    // A size beyond the frame.
    assert!(matches!(
        parse_coalesced(&bytes("08 41 00 00 01 02")),
        Err(WireError::Truncated { field: "payload", offset: 4, needed: 8, got: 2 })
    ));
    // The padding of a non-last payload is missing.
    assert!(parse_coalesced(&bytes("01 40 01 41 AA BB")).is_err());
    // Bytes after the last payload.
    assert!(parse_coalesced(&bytes("01 41 00 00 AA 00")).is_err());
    // Empty.
    assert!(parse_coalesced(&[]).is_err());
}

#[test]
fn refuses_to_emit_what_the_format_cannot_hold() {
    let mut buf = [0u8; 4096];
    assert!(emit_coalesced(&[], &mut buf).is_err());
    let too_many = vec![part(0x40, &[1]); 33];
    assert!(Coalesced { payloads: too_many }.emit(&mut buf).is_err());
    let too_big = Coalesced { payloads: vec![part(0x40, &[0; 2048])] };
    assert!(matches!(too_big.emit(&mut buf), Err(WireError::Unencodable { field: "bSize", .. })));
    let short = Coalesced { payloads: vec![part(0x40, &[1, 2, 3])] };
    assert!(matches!(short.emit(&mut buf[..6]), Err(WireError::BufferTooSmall { needed: 7, got: 6 })));
}

fn sub_payload() -> impl Strategy<Value = SubPayload> {
    (
        any::<u8>(),
        prop_oneof![
            4 => proptest::collection::vec(any::<u8>(), 0..16),
            1 => proptest::collection::vec(any::<u8>(), 0..=COALESCE_MAX_SIZE),
        ],
    )
        .prop_map(|(flags, data)| part(flags, &data))
}

fn coalesced() -> impl Strategy<Value = Coalesced> {
    proptest::collection::vec(sub_payload(), 1..=COALESCE_MAX_PAYLOADS)
        .prop_map(|payloads| Coalesced { payloads })
}

proptest! {
    #[test]
    fn roundtrip(c in coalesced()) {
        assert_roundtrip(&c);
        prop_assert_eq!(c.encoded_len(), coalesced_len(c.payloads.iter().map(|p| p.data.len())));
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..128)) {
        if let Ok(parts) = parse_coalesced(&data) {
            prop_assert!((1..=COALESCE_MAX_PAYLOADS).contains(&parts.len()));
            let mut buf = vec![0u8; data.len()];
            prop_assert_eq!(emit_coalesced(&parts, &mut buf), Ok(data.len()));
        }
    }
}

#[test]
fn snapshot() {
    let c = Coalesced {
        payloads: vec![
            part(0x46, &[0xC1, 0, 0, 0, 1]),
            part(0x40, &[0xAA, 0xBB, 0xCC, 0xDD]),
            part(0x80, &[0x11, 0x22, 0x33]),
        ],
    };
    insta::assert_snapshot!("COALESCED", snapshot_text(&c));
}
