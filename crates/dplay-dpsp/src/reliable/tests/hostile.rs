//! Hostile and broken input: dropped and counted, never a panic, never unbounded memory.

use proptest::prelude::*;

use super::*;

/// MC-DPL4R 3.1.5.1: the player indexes must be the link's players; a frame from an address
/// with no link is dropped too.
#[test]
fn wrong_players_and_unknown_peers() {
    let t0 = base();
    let (_, mut b) = pair(Config::default());
    let mut f = frame(ReliableFlags::STA | ReliableFlags::EOM, 1, 1, b"x");
    f.id_from = 9;
    feed(&mut b, t0, A, &[f.clone()]);
    assert_dropped(&b, DropReason::WrongPlayer, 1);
    feed(&mut b, t0, 7, &[f]);
    assert_dropped(&b, DropReason::UnknownPeer, 1);
    assert!(delivered(&mut b).is_empty());
}

/// MC-DPL4R 2.2: bytes that are no frame, and frames larger than the MTU, are malformed.
#[test]
fn malformed_and_oversized() {
    let t0 = base();
    let (_, mut b) = pair(small());
    b.handle_datagram(t0, addr(A), &[0x01, 0x02, 0x40, 1, 1, 0]); // BIG
    b.handle_datagram(t0, addr(A), &[0x01]);
    let big = frame(ReliableFlags::STA, 1, 1, &[0; DATA + 5]).to_vec().unwrap();
    b.handle_datagram(t0, addr(A), &big);
    assert_dropped(&b, DropReason::Malformed, 3);
}

/// MC-DPL4R 3.1.5.2: a continuation without a STA before it, and a messageid that changes
/// inside a message, break the message: dropped and counted.
#[test]
fn broken_message_structure() {
    let t0 = base();
    let (_, mut b) = pair(Config::default());
    feed(&mut b, t0, A, &[frame(ReliableFlags::EOM, 1, 1, b"tail")]);
    feed(&mut b, t0, A, &[frame(ReliableFlags::STA, 2, 2, b"head"), frame(ReliableFlags::EOM, 3, 3, b"x")]);
    assert_dropped(&b, DropReason::Inconsistent, 2);
    assert!(delivered(&mut b).is_empty());
    assert_eq!(b.bytes_held(), 0);
}

/// `Limits::max_message_size`: a message growing past it is dropped, and its frames are
/// consumed without being kept.
#[test]
fn message_over_the_size_limit() {
    let t0 = base();
    let mut config = small();
    config.limits.max_message_size = 2 * DATA;
    let (_, mut b) = pair(config);
    let chunk = [7u8; DATA];
    let frames: Vec<_> = (1..=5u8)
        .map(|s| {
            let mut flags = ReliableFlags::RLY;
            flags.set(ReliableFlags::STA, s == 1);
            flags.set(ReliableFlags::EOM, s == 5);
            frame(flags, 1, s, &chunk)
        })
        .collect();
    feed(&mut b, t0, A, &frames);
    assert_dropped(&b, DropReason::TooLarge, 1);
    assert!(delivered(&mut b).is_empty());
    assert_eq!(b.bytes_held(), 0);
}

/// MC-DPL4R 2.2.4: an ACK of a sequence never sent is refused without touching the window.
#[test]
fn ack_for_nothing_sent() {
    let t0 = base();
    let (mut a, _) = pair(Config::default());
    a.send(t0, addr(B), b"x", true).unwrap();
    let _ = out(&mut a);
    let bogus = ReliableFrame {
        id_from: B_INDEX,
        id_to: A_INDEX,
        body: FrameBody::Ack(AckFrame {
            flags: ReliableFlags::ACK,
            message_id: 1,
            sequence: 9,
            serial: 0,
            bytes_received: 0,
            local_tick_count: 0,
        }),
    };
    feed(&mut a, t0, B, &[bogus]);
    assert_dropped(&a, DropReason::BadAck, 1);
    assert_eq!(a.link_info(addr(B)).unwrap().in_flight, 1);
}

/// The send side's limits: message size, queue bytes, links.
#[test]
fn send_limits() {
    let t0 = base();
    let mut config = Config { window: 1, ..small() };
    config.limits.max_message_size = 100;
    config.limits.max_queued_bytes = 150;
    config.limits.max_links = 1;
    let (mut a, _) = pair(config);
    assert_eq!(a.send(t0, addr(B), &[0; 101], true), Err(SendError::TooLarge { size: 101, max: 100 }));
    a.send(t0, addr(B), &[0; 100], true).unwrap();
    a.send(t0, addr(B), &[0; 100], true).unwrap();
    assert_eq!(a.send(t0, addr(B), &[0; 100], true), Err(SendError::QueueFull));
    assert_eq!(a.open_link(addr(9), 1, 9), Err(LinkError::TooMany(1)));
}

proptest! {
    /// Any bytes from a peer: a value or a counted drop, never a panic; memory stays within
    /// the window.
    #[test]
    fn arbitrary_datagrams_never_panic(datagrams in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..64)) {
        let t0 = base();
        let (mut a, mut b) = pair(small());
        a.send(t0, addr(B), &bytes_of(50, 1), true).unwrap();
        for (i, d) in datagrams.iter().enumerate() {
            let now = t0 + ms(i as u64);
            b.handle_datagram(now, addr(A), d);
            a.handle_datagram(now, addr(B), d);
            a.handle_timeout(now);
            b.handle_timeout(now);
        }
        let _ = (out(&mut a), out(&mut b), events(&mut a), events(&mut b));
        prop_assert!(b.bytes_held() <= usize::from(RECEIVE_WINDOW) * DATA + b.config().limits.max_message_size);
    }

    /// Valid-looking data frames with arbitrary fields: still no panic.
    #[test]
    fn arbitrary_data_frames_never_panic(frames in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), 0..12usize), 0..200)) {
        let t0 = base();
        let (_, mut b) = pair(small());
        for (flags, msg, seq, len) in frames {
            let flags = ReliableFlags::from_bits_retain(flags) & !(ReliableFlags::ACK | ReliableFlags::EXT | ReliableFlags::BIG);
            let f = frame(flags, msg, seq, &vec![1; len.min(DATA)]);
            b.handle_frame(t0, addr(A), &f);
        }
        let _ = (out(&mut b), events(&mut b));
    }
}

/// docs/limits.md: what a link holds unsent and unacknowledged is charged to the memory
/// budget, each byte once. A peer that acknowledges nothing is sent messages while they fit;
/// then, a window or more behind with the budget full, `send` says QueueFull; closing the
/// link releases it all.
#[test]
fn send_side_is_charged_to_the_memory_budget() {
    let t0 = base();
    let budget = dplay_wire::budget::MemoryBudget::new(1000);
    let mut a = Reliable::new(small()).expect("valid config");
    a.set_memory_budget(&budget);
    a.open_link(addr(B), A_INDEX, B_INDEX).unwrap();
    let mut sent = 0;
    let refused = loop {
        match a.send(t0, addr(B), &[5; 100], true) {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
        assert!(sent <= 100, "never refused");
    };
    assert_eq!((refused, sent), (SendError::QueueFull, 10));
    assert_eq!(budget.held(), 1000, "queued, being framed and in flight, each byte once");
    a.handle_timeout(t0 + ms(300));
    assert_eq!(budget.held(), 1000, "resending holds nothing more");
    assert!(a.close_link(addr(B)));
    assert_eq!(budget.held(), 0, "a link gone releases what it held");
}
