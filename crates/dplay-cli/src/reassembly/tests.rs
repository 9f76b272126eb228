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
