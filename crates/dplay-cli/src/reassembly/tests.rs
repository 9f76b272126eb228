use std::net::SocketAddr;

use proptest::prelude::*;

use super::{Fragment, Layer, PER_DIRECTION, PIECE_OVERHEAD, Reassembly, TOTAL, WINDOW};

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 1], port))
}

fn piece(seq: u8, first: bool, last: bool, data: &[u8]) -> Fragment<'_> {
    Fragment { layer: Layer::Dp8, seq, message_id: 0, first, last, command: 0x51, data }
}

/// `message` cut into `n` pieces from sequence `start`.
fn cut(message: &[u8], start: u8, n: usize) -> Vec<(u8, bool, bool, Vec<u8>)> {
    let size = message.len().div_ceil(n);
    message
        .chunks(size)
        .enumerate()
        .map(|(i, c)| {
            (
                start.wrapping_add(u8::try_from(i).unwrap()),
                i == 0,
                (i + 1) * size >= message.len(),
                c.to_vec(),
            )
        })
        .collect()
}

/// MC-DPL8R 3.1.4.4: NEW_MSG, a middle frame, END_MSG in order make one message, with the
/// frames that carried it and the first frame's command; nothing is held afterwards.
#[test]
fn in_order_pieces_make_one_message() {
    let mut r = Reassembly::default();
    assert_eq!(r.offer(addr(1), addr(2), 10, piece(254, true, false, b"ab")), None);
    assert_eq!(r.offer(addr(1), addr(2), 11, piece(255, false, false, b"cd")), None);
    let whole = r.offer(addr(1), addr(2), 12, piece(0, false, true, b"e")).expect("complete");
    assert_eq!(
        (whole.bytes.as_slice(), whole.frames.as_slice(), whole.command),
        (&b"abcde"[..], &[10, 11, 12][..], 0x51)
    );
    assert_eq!(r.held(), 0);
}

/// A retransmitted piece replaces its copy; the other direction and the other layer are
/// separate; MC-DPL4R pieces of another messageid do not join (MC-DPL4R 2.2.2).
#[test]
fn directions_layers_and_message_ids_stay_apart() {
    let mut r = Reassembly::default();
    assert_eq!(r.offer(addr(1), addr(2), 1, piece(5, true, false, b"a")), None);
    assert_eq!(r.offer(addr(1), addr(2), 2, piece(5, true, false, b"A")), None, "retransmission");
    assert_eq!(r.offer(addr(2), addr(1), 3, piece(6, false, true, b"x")), None, "other direction");
    let dp4 = Fragment { layer: Layer::Dp4Reliable, message_id: 7, ..piece(6, false, true, b"y") };
    assert_eq!(r.offer(addr(1), addr(2), 4, dp4), None, "other layer");
    let whole = r.offer(addr(1), addr(2), 5, piece(6, false, true, b"B")).expect("complete");
    assert_eq!((whole.bytes.as_slice(), whole.frames.as_slice()), (&b"AB"[..], &[2, 5][..]));
    let first =
        Fragment { message_id: 8, ..Fragment { layer: Layer::Dp4Reliable, ..piece(5, true, false, b"z") } };
    assert_eq!(r.offer(addr(1), addr(2), 6, first), None, "messageid 8 does not end with 7's last frame");
    assert_eq!(r.dropped.incomplete, 0);
    r.finish();
    assert_eq!(r.dropped.incomplete, 3);
}

/// A piece that comes again after its message was shown is a retransmission; once a whole
/// frame has taken its sequence number (after a wrap), a piece there is new again.
#[test]
fn retransmissions_after_the_message_are_not_a_new_one() {
    let mut r = Reassembly::default();
    r.offer(addr(1), addr(2), 1, piece(3, true, false, b"a"));
    assert!(r.offer(addr(1), addr(2), 2, piece(4, false, true, b"b")).is_some());
    assert_eq!(r.offer(addr(1), addr(2), 3, piece(3, true, false, b"a")), None);
    assert_eq!(r.offer(addr(1), addr(2), 4, piece(4, false, true, b"b")), None, "shown once");
    assert_eq!(r.held(), 0);
    r.offer(addr(1), addr(2), 5, piece(3, true, true, b""));
    r.offer(addr(1), addr(2), 6, piece(4, true, true, b""));
    r.offer(addr(1), addr(2), 7, piece(3, true, false, b"c"));
    assert_eq!(
        r.offer(addr(1), addr(2), 8, piece(4, false, true, b"d")).map(|w| w.bytes),
        Some(b"cd".to_vec())
    );
}

/// A missing middle piece: no message; pieces that fall `WINDOW` behind are forgotten.
#[test]
fn a_gap_never_completes_and_is_forgotten() {
    let mut r = Reassembly::default();
    r.offer(addr(1), addr(2), 1, piece(0, true, false, b"a"));
    assert_eq!(r.offer(addr(1), addr(2), 3, piece(2, false, true, b"c")), None);
    assert_eq!(r.offer(addr(1), addr(2), 4, piece(WINDOW + 1, true, false, b"n")), None);
    assert_eq!(r.dropped.incomplete, 1, "sequence 0 is a window behind");
    assert_eq!(r.offer(addr(1), addr(2), 5, piece(200, true, false, b"m")), None);
    assert_eq!(r.dropped.incomplete, 2, "and now sequence 2");
    assert_eq!(r.held(), 2 * (1 + PIECE_OVERHEAD));
}

/// Hostile captures: one direction never holds more than `PER_DIRECTION`; the rest is refused
/// and counted.
#[test]
fn a_direction_is_capped() {
    let mut r = Reassembly::default();
    let big = vec![0u8; PER_DIRECTION / 4];
    for seq in 0..8u8 {
        assert_eq!(r.offer(addr(1), addr(2), u64::from(seq), piece(seq, seq == 0, false, &big)), None);
        assert!(r.held() <= PER_DIRECTION);
    }
    assert_eq!(r.dropped.over_cap, 5);
}

proptest! {
    /// Any message cut into pieces, offered in any order with repeats, comes out once and whole.
    #[test]
    fn any_order_gives_the_message_once(
        message in proptest::collection::vec(any::<u8>(), 2..400),
        n in 2usize..12,
        start in any::<u8>(),
        order in proptest::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        let pieces = cut(&message, start, n.min(message.len()));
        let mut sequence: Vec<usize> = order.iter().map(|i| i.index(pieces.len())).collect();
        sequence.extend(0..pieces.len());
        let mut r = Reassembly::default();
        let mut wholes = Vec::new();
        for (frame, &i) in sequence.iter().enumerate() {
            let (seq, first, last, data) = &pieces[i];
            if let Some(w) = r.offer(addr(1), addr(2), frame as u64, piece(*seq, *first, *last, data)) {
                wholes.push(w.bytes);
            }
        }
        prop_assert_eq!(wholes, vec![message]);
    }

    /// Arbitrary pieces from a few flows: no panic, and the caps hold throughout.
    #[test]
    fn arbitrary_pieces_stay_within_the_caps(
        input in proptest::collection::vec((0u16..4, any::<u8>(), any::<u8>(), 0u8..4, 0usize..3000), 0..300),
    ) {
        let mut r = Reassembly::default();
        for (frame, (flow, seq, id, marks, len)) in input.into_iter().enumerate() {
            let data = vec![0u8; len];
            let layer = if flow % 2 == 0 { Layer::Dp8 } else { Layer::Dp4Reliable };
            let f = Fragment { layer, seq, message_id: id % 2, first: marks & 1 == 1, last: marks & 2 == 2, command: 0, data: &data };
            if let Some(w) = r.offer(addr(flow), addr(9), frame as u64, f) {
                prop_assert!(!w.frames.is_empty());
            }
            prop_assert!(r.held() <= TOTAL);
        }
    }
}

/// A DPSP_MSG_PACKET2_DATA fragment of message `guid` (MC-DPL4CS 2.2.41).
fn packet(guid: u128, offset: u32, message_size: u32, data: &[u8]) -> dplay_wire::dp4::fragment::Fragment {
    dplay_wire::dp4::fragment::Fragment {
        guid_message: uuid::Uuid::from_u128(guid),
        packet_index: offset / 100,
        offset,
        total_packets: message_size.div_ceil(100),
        message_size,
        packet_offset: 48,
        data: dplay_wire::Blob::new(data),
    }
}

/// MC-DPL4CS 3.1.5.28: fragments by offset, out of order and repeated, make the message once;
/// two messages interleave by `GuidMessage`; a fragment past `MessageSize`, or over the
/// one-message cap, is not kept.
#[test]
fn packet_fragments_make_one_message() {
    let message: Vec<u8> = (0..250u8).collect();
    let mut r = Reassembly::default();
    let ends = (addr(1), addr(2));
    assert_eq!(r.offer_packet(ends, (1, 0.0), &packet(7, 200, 250, &message[200..])), None);
    assert_eq!(r.offer_packet(ends, (2, 0.1), &packet(8, 0, 250, &message[..100])), None, "another message");
    assert_eq!(r.offer_packet(ends, (3, 0.2), &packet(7, 0, 250, &message[..100])), None);
    assert_eq!(r.offer_packet(ends, (4, 0.3), &packet(7, 0, 250, &message[..100])), None, "retransmission");
    let whole = r.offer_packet(ends, (5, 0.4), &packet(7, 100, 250, &message[100..200])).expect("complete");
    assert_eq!((whole.bytes, whole.frames), (message.clone(), vec![4, 5, 1]));
    assert_eq!(r.held(), 100 + PIECE_OVERHEAD, "message 8's fragment");
    assert_eq!(
        r.offer_packet(ends, (6, 0.5), &packet(9, 200, 250, &message[..100])),
        None,
        "past MessageSize"
    );
    let huge = u32::try_from(PER_DIRECTION + 1).unwrap();
    assert_eq!(r.offer_packet(ends, (7, 0.6), &packet(10, 0, huge, &message)), None, "over the cap");
    assert_eq!(r.dropped.incomplete, 2);
    assert_eq!(r.held(), 100 + PIECE_OVERHEAD);
}

/// MC-DPL4CS 2.2.41: a message unfinished 15 s after its first fragment is forgotten.
#[test]
fn unfinished_packets_are_forgotten_after_15_s() {
    let mut r = Reassembly::default();
    let ends = (addr(1), addr(2));
    r.offer_packet(ends, (1, 0.0), &packet(7, 0, 200, &[1; 100]));
    assert_eq!(r.offer_packet(ends, (2, 16.0), &packet(7, 100, 200, &[2; 100])), None, "the first is gone");
    assert_eq!(r.dropped.incomplete, 1);
    assert_eq!(r.held(), 100 + PIECE_OVERHEAD);
}

proptest! {
    /// Arbitrary fragments: no panic, the total cap holds, and a whole message is exactly its
    /// `MessageSize`.
    #[test]
    fn arbitrary_packets_stay_within_the_caps(
        input in proptest::collection::vec((0u128..3, 0u32..5000, 1u32..5000, 0usize..2000), 0..200),
    ) {
        let mut r = Reassembly::default();
        for (frame, (guid, offset, size, len)) in input.into_iter().enumerate() {
            let data = vec![0u8; len];
            let ends = (addr(1), addr(2));
            if let Some(w) = r.offer_packet(ends, (frame as u64, frame as f64), &packet(guid, offset, size, &data)) {
                prop_assert_eq!(w.bytes.len(), size as usize);
            }
            prop_assert!(r.held() <= TOTAL);
        }
    }
}
