//! Data: windows, masks, delivery categories, reassembly, coalescing (MC-DPL8R 3.1.5.2).

use dplay_wire::dp8::cframe::{Cframe, Masks, Sack};
use dplay_wire::dp8::coalesce::{SubPayloadRef, coalesced_len, emit_coalesced};
use dplay_wire::dp8::dframe::{DframeCommand, DframeControl};
use proptest::prelude::*;

use super::*;
use crate::send_queue::{Body, OutMessage, Sender};
use crate::{DisconnectReason, DropReason, MessageKind, PROTOCOL_VERSION, SendError, WINDOW};

const A: &str = "198.51.100.1:2302";

/// Two endpoints joined by a perfect zero-latency wire; `log` keeps every datagram A sent.
struct Pair {
    a: Endpoint,
    b: Endpoint,
    now: Instant,
    a_events: Vec<Event>,
    b_events: Vec<Event>,
    log: Vec<Vec<u8>>,
}

impl Pair {
    fn new(config: Config) -> Self {
        let now = origin();
        let mut p = Self {
            a: Endpoint::new(config.clone(), now),
            b: Endpoint::new(config.with_seed(1), now),
            now,
            a_events: Vec::new(),
            b_events: Vec::new(),
            log: Vec::new(),
        };
        p.a.connect(now, peer()).unwrap();
        p.run(ms(100));
        p
    }

    fn run(&mut self, d: Duration) {
        let a: SocketAddr = A.parse().unwrap();
        let target = self.now + d;
        loop {
            let mut moved = false;
            while let Some(t) = self.a.poll_transmit() {
                self.log.push(t.contents.clone());
                self.b.handle_datagram(self.now, a, &t.contents);
                moved = true;
            }
            while let Some(t) = self.b.poll_transmit() {
                self.a.handle_datagram(self.now, peer(), &t.contents);
                moved = true;
            }
            self.a_events.extend(std::iter::from_fn(|| self.a.poll_event()));
            self.b_events.extend(std::iter::from_fn(|| self.b.poll_event()));
            if moved {
                continue;
            }
            let next = [self.a.poll_timeout(), self.b.poll_timeout()].into_iter().flatten().min();
            match next.filter(|&at| at <= target) {
                Some(at) => {
                    self.now = at.max(self.now);
                    self.a.handle_timeout(self.now);
                    self.b.handle_timeout(self.now);
                }
                None => break,
            }
        }
        self.now = target;
    }

    fn messages(&self) -> Vec<Vec<u8>> {
        self.b_events
            .iter()
            .filter_map(|e| if let Event::Message { data, .. } = e { Some(data.clone()) } else { None })
            .collect()
    }

    fn data_frames(&self) -> Vec<DframeHeader> {
        self.log
            .iter()
            .filter(|d| d.first().is_some_and(|b| b & 1 == 1))
            .map(|d| DframeHeader::parse(d, DframeContext::default()).unwrap().0)
            .collect()
    }
}

/// MC-DPL8R 3.1.5.2.1: sequence numbers wrap past 255 and delivery stays in order.
#[test]
fn sequence_wraps_past_255() {
    let mut config = Config::default();
    config.coalesce = false;
    let mut p = Pair::new(config);
    let sent: Vec<Vec<u8>> = (0..300u16).map(|i| i.to_le_bytes().to_vec()).collect();
    for m in &sent {
        p.a.send(p.now, peer(), m, MessageKind::RELIABLE_SEQUENTIAL).unwrap();
    }
    p.run(Duration::from_secs(10));
    assert_eq!(p.messages(), sent);
    let seqs: Vec<u8> = p.data_frames().iter().map(|h| h.seq).collect();
    assert!(seqs.windows(2).any(|w| w == [255, 0]), "wrapped");
}

/// MC-DPL8R 3.1.5.2.1: a frame already received, or outside [NRcv, NRcv+63], is dropped,
/// counted, and answered with a SACK after the short 20 ms delay, or at once with POLL.
#[test]
fn duplicates_and_out_of_window_frames() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed_d(data(REL_SEQ, 1, 1), b"a");
    assert_eq!(h.events().len(), 1);
    h.feed_d(data(REL_SEQ, 1, 1), b"a");
    assert!(h.events().is_empty());
    assert_eq!(h.next_timer(), ms(20));
    assert_eq!(h.sent()[0].sack().n_rcv, 2);
    h.feed_d(data(REL_SEQ | DframeCommand::POLL, 2 + 64, 1), b"z");
    assert_eq!(h.sent()[0].sack().n_rcv, 2);
    let drops = h.ep.stats(peer()).unwrap().drops;
    assert_eq!((drops.get(DropReason::Duplicate), drops.get(DropReason::OutOfWindow)), (1, 1));
}

/// MC-DPL8R 3.1.2.2: an in-order frame is acknowledged after 100 ms; with POLL at once.
#[test]
fn delayed_ack_and_poll() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed_d(data(REL_SEQ, 1, 1), b"a");
    assert!(h.sent().is_empty());
    assert_eq!(h.next_timer(), ms(100));
    assert_eq!(h.sent()[0].sack().n_rcv, 2);
    h.feed_d(data(REL_SEQ | DframeCommand::POLL, 2, 1), b"b");
    assert_eq!(h.sent()[0].sack().n_rcv, 3);
}

/// MC-DPL8R 3.1.5.2.3, decision F-10: SACK mask bit i is NRcv + 1 + i; the edges are bit 0
/// (NRcv + 1) and bit 62 (NRcv + 63, the last seq in the window).
#[test]
fn sack_mask_edge_bits() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed_d(data(REL_SEQ, 2, 1), b"x");
    h.feed_d(data(REL_SEQ, 64, 1), b"y");
    h.advance(ms(20));
    let sack = *h.sent().last().unwrap().sack();
    assert_eq!(sack.n_rcv, 1);
    assert_eq!(sack.masks.sack(), 1 | 1 << 62);
    assert_eq!((sack.masks.sack1, sack.masks.sack2), (Some(1), Some(1 << 30)));
}

/// MC-DPL8R 3.1.5.2.3 (sender side): bNRcv acknowledges everything before it and SACK bits
/// mark frames never to retry. A frame still missing while a later one was received is lost
/// and resent at once (our generalisation of the spec's 10 ms retry of the first frame), once
/// per evidence; the retry timer then covers it.
#[test]
fn sender_resends_on_sack_evidence() {
    let mut cfg = Config::default();
    cfg.set_initial_window(64);
    let now = origin();
    let mut s = Sender::new(&cfg, Default::default());
    for i in 0..64u8 {
        s.push(OutMessage::new(vec![i], MessageKind::RELIABLE, Body::Data));
        s.next_frame(now, &cfg);
    }
    let acked = s.on_ack(now + ms(20), &cfg, 0, 1 | 1 << 62);
    let expect: Vec<u8> = std::iter::once(0).chain(2..=62).collect();
    assert_eq!(acked.resend, expect);
    // The same report again is no new evidence: nothing is resent twice.
    assert!(s.on_ack(now + ms(21), &cfg, 0, 1 | 1 << 62).resend.is_empty());
    let later = s.on_retry_timer(now + Duration::from_secs(2), &cfg);
    assert!(!later.resend.contains(&1) && !later.resend.contains(&63));
    assert!(later.resend.contains(&0) && later.resend.contains(&62));
}

/// MC-DPL8R 3.1.4.4: the window is halved once per loss event, however many frames the event
/// lost (the retry of a lost frame lost again included), and grows by one per frame
/// acknowledged.
#[test]
fn window_halves_once_per_loss_event() {
    let cfg = Config::default();
    let now = origin();
    let mut s = Sender::new(&cfg, Default::default());
    for i in 0..200u8 {
        s.push(OutMessage::new(vec![i], MessageKind::RELIABLE, Body::Data));
    }
    let send_all = |s: &mut Sender, at| {
        let mut n = 0;
        while s.can_send(&cfg) {
            s.next_frame(at, &cfg);
            n += 1;
        }
        n
    };
    // Lossless rounds open the window: 2, 4, 8, 16, then 32 frames from seq 30.
    let mut next = 0u8;
    for expect in [2, 4, 8, 16] {
        assert_eq!(send_all(&mut s, now), expect);
        next += expect;
        s.on_ack(now, &cfg, next, 0);
    }
    assert_eq!(send_all(&mut s, now), 32);
    // Frames 30 and 32 lost, 31 and 33-61 received: one event, one halving to 16, and the two
    // resent frames are all that is on the network.
    let acked = s.on_ack(now + ms(20), &cfg, 30, !0b10 & ((1 << 31) - 1));
    assert_eq!(acked.resend, [30, 32]);
    assert_eq!(send_all(&mut s, now + ms(20)), 14);
    // 30 and 31 acknowledged (window 18); the retry of frame 32 is lost too (frames sent after
    // it arrived): resent, same event, no second halving.
    let acked = s.on_ack(now + ms(40), &cfg, 32, (1 << 43) - 1);
    assert_eq!(acked.resend, [32]);
    assert_eq!(send_all(&mut s, now + ms(40)), 17);
    // Everything acknowledged: the window is back at its 64-frame cap.
    s.on_ack(now + ms(60), &cfg, 93, 0);
    assert_eq!(send_all(&mut s, now + ms(60)), 64);
}

/// MC-DPL8R 3.1.5.2.4, decision F-10: send mask bit i names bSeq - 1 - i (bNSeq - 1 - i in a
/// SACK); a missing frame it names is skipped as if received. Edges: bit 0 of a DFRAME, bit 63
/// of a SACK whose bNSeq is NRcv + 64.
#[test]
fn send_mask_edge_bits() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    let mut d = data(WHOLE | DframeCommand::SEQUENTIAL, 2, 1);
    d.masks = Masks::new(0, 1);
    h.feed_d(d, b"second");
    assert!(matches!(&h.events()[..], [Event::Message { data, .. }] if data == b"second"));
    h.feed_c(Cframe::Sack(Sack {
        poll: false,
        response: true,
        retry: 0,
        n_seq: 3 + 64,
        n_rcv: 1,
        timestamp: 0,
        masks: Masks::new(0, 1 << 63),
        signature: None,
    }));
    h.feed_d(data(REL_SEQ | DframeCommand::POLL, 4, 1), b"after");
    assert!(matches!(&h.events()[..], [Event::Message { data, .. }] if data == b"after"));
    assert_eq!(h.sent().last().unwrap().sack().n_rcv, 5);
}

/// MS-DPDX 1.3: non-sequential messages are delivered on arrival, sequential ones wait for the
/// gap; an unreliable sequential message is held too, and never delivered out of order.
#[test]
fn four_delivery_categories() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed_d(data(WHOLE | DframeCommand::RELIABLE, 2, 1), b"b");
    h.feed_d(data(REL_SEQ, 3, 1), b"c");
    h.feed_d(data(WHOLE | DframeCommand::SEQUENTIAL, 4, 1), b"d");
    h.feed_d(data(WHOLE, 5, 1), b"e");
    h.feed_d(data(REL_SEQ, 1, 1), b"a");
    let got: Vec<(Vec<u8>, bool, bool)> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Message { data, reliable, sequential, .. } => Some((data, reliable, sequential)),
            _ => None,
        })
        .collect();
    let expect = [
        (b"b", true, false),
        (b"e", false, false),
        (b"a", true, true),
        (b"c", true, true),
        (b"d", false, true),
    ];
    assert_eq!(got, expect.map(|(d, r, s)| (d.to_vec(), r, s)));
}

/// MC-DPL8R 2.2.2, 3.1.4.4, 3.1.5.2.6: a message larger than a frame goes out as NEW_MSG,
/// middle and END_MSG frames and is delivered whole.
#[test]
fn large_message_split_and_reassembled() {
    let mut p = Pair::new(Config::default());
    let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    p.a.send(p.now, peer(), &big, MessageKind::RELIABLE_SEQUENTIAL).unwrap();
    p.run(Duration::from_secs(2));
    assert_eq!(p.messages(), [big]);
    let flags: Vec<DframeCommand> = p
        .data_frames()
        .iter()
        .filter(|h| !h.is_keepalive())
        .map(|h| h.command & (DframeCommand::NEW_MSG | DframeCommand::END_MSG))
        .collect();
    assert_eq!(
        flags,
        [DframeCommand::NEW_MSG, DframeCommand::empty(), DframeCommand::empty(), DframeCommand::END_MSG]
    );
}

/// MC-DPL8R 3.1.5.2.6: a message past the reassembly limit ends the connection.
#[test]
fn reassembly_limit_ends_the_connection() {
    let mut config = Config::default();
    config.max_message_size = 100;
    let mut h = established(config, PROTOCOL_VERSION);
    let rel = DframeCommand::RELIABLE | DframeCommand::SEQUENTIAL;
    h.feed_d(data(rel | DframeCommand::NEW_MSG, 1, 1), &[0; 60]);
    h.feed_d(data(rel, 2, 1), &[0; 60]);
    assert!(matches!(
        h.events()[..],
        [Event::Disconnected { reason: DisconnectReason::ProtocolViolation, .. }]
    ));
    assert!(matches!(h.sent()[..], [Sent::C(Cframe::HardDisconnect(_))]));
}

/// docs/limits.md: frames held in the window and a message being reassembled are charged to
/// the memory budget and released once delivered; a frame past it is neither stored nor
/// acknowledged (the peer sends it again), and the connection's end releases the rest.
#[test]
fn receive_window_is_charged_to_the_memory_budget() {
    let budget = dplay_wire::budget::MemoryBudget::new(crate::HALF_OPEN_BYTES);
    let mut h = Harness::new(Config::default());
    h.ep.set_memory_budget(budget.clone());
    let mut h = established_on(h, PROTOCOL_VERSION);
    assert_eq!(budget.held(), 0, "the confirmed attempt is no longer half-open");
    budget.set_limit(310);
    let rel = DframeCommand::RELIABLE | DframeCommand::SEQUENTIAL;
    // seq 1 is missing: 2 and 3 wait in the window.
    h.feed_d(data(rel | DframeCommand::NEW_MSG, 2, 1), &[1; 100]);
    h.feed_d(data(rel, 3, 1), &[2; 100]);
    assert_eq!(budget.held(), 200);
    h.feed_d(data(REL_SEQ, 5, 1), &[9; 150]);
    assert_eq!(budget.held(), 200, "past the budget: not stored");
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::OverBudget), 1);
    h.advance(ms(50));
    let sacks: Vec<u64> = h.sent().iter().map(|s| s.sack().masks.sack()).collect();
    assert_eq!(sacks.last(), Some(&0b11), "2 and 3 acknowledged, 5 not: {sacks:?}");
    h.feed_d(data(rel | DframeCommand::END_MSG, 4, 1), &[3; 100]);
    assert_eq!(budget.held(), 300);
    h.feed_d(data(REL_SEQ, 1, 1), b"one");
    let sizes: Vec<usize> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Message { data, .. } => Some(data.len()),
            _ => None,
        })
        .collect();
    assert_eq!(sizes, [3, 300]);
    assert_eq!(budget.held(), 0, "delivered: released");
    h.feed_d(data(rel | DframeCommand::NEW_MSG, 5, 1), &[4; 100]);
    assert_eq!(budget.held(), 100);
    h.ep.abort(h.now, peer());
    h.advance(ms(2000));
    assert_eq!(h.ep.connection_count(), 0);
    assert_eq!(budget.held(), 0, "a connection gone releases what it held");
}

/// docs/limits.md: a whole message arriving in order is handed over in the same call and
/// never held, so a full budget does not stop a peer's ordinary messages; the first piece of
/// a message to reassemble is refused (not stored, not acknowledged).
#[test]
fn a_full_budget_still_passes_whole_messages_in_order() {
    let budget = dplay_wire::budget::MemoryBudget::new(crate::HALF_OPEN_BYTES);
    let mut h = Harness::new(Config::default());
    h.ep.set_memory_budget(budget.clone());
    let mut h = established_on(h, PROTOCOL_VERSION);
    budget.set_limit(0);
    h.feed_d(data(REL_SEQ, 1, 1), b"whole");
    let rel = DframeCommand::RELIABLE | DframeCommand::SEQUENTIAL;
    h.feed_d(data(rel | DframeCommand::NEW_MSG, 2, 1), &[1; 100]);
    let got: Vec<Vec<u8>> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Message { data, .. } => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(got, [b"whole".to_vec()]);
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::OverBudget), 1);
    assert_eq!(budget.held(), 0);
}

/// docs/limits.md: what we hold unsent and unacknowledged for a peer is charged to the
/// memory budget. A peer that acknowledges nothing is sent messages while they fit; once the
/// budget is full and the peer is a window or more behind, `send` says QueueFull (counted);
/// the connection's end releases it all.
#[test]
fn send_side_is_charged_to_the_memory_budget() {
    let budget = dplay_wire::budget::MemoryBudget::new(crate::HALF_OPEN_BYTES);
    let mut h = Harness::new(Config::default());
    h.ep.set_memory_budget(budget.clone());
    let mut h = established_on(h, PROTOCOL_VERSION);
    let limit = 200 << 10;
    budget.set_limit(limit);
    let chunk = [7u8; 10_000];
    let mut sent = 0;
    let refused = loop {
        match h.ep.send(h.now, peer(), &chunk, MessageKind::RELIABLE_SEQUENTIAL) {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
        assert!(sent <= 100, "never refused");
    };
    assert_eq!((refused, sent), (SendError::QueueFull, 20));
    assert_eq!(budget.held(), 20 * chunk.len(), "queued and in flight, each byte once");
    assert_eq!(h.ep.endpoint_stats().send_over_budget, 1);
    h.ep.abort(h.now, peer());
    h.advance(ms(2000));
    assert_eq!(h.ep.connection_count(), 0);
    assert_eq!(budget.held(), 0, "a connection gone releases what it held");
}

/// MC-DPL8R 3.1.5.2.1, 3.1.5.2.6: what the receive window holds is counted (a frame past a
/// gap, a message being put together) and released once delivered.
#[test]
fn reassembly_bytes_held_are_counted() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    let rel = DframeCommand::RELIABLE | DframeCommand::SEQUENTIAL;
    h.feed_d(data(rel | DframeCommand::NEW_MSG, 1, 1), &[1; 40]);
    assert_eq!(h.ep.reassembly_bytes(), 40);
    h.feed_d(data(REL_SEQ, 3, 1), &[2; 7]);
    assert_eq!(h.ep.reassembly_bytes(), 47);
    h.feed_d(data(rel | DframeCommand::END_MSG, 2, 1), &[3; 5]);
    assert_eq!(h.events().len(), 2);
    assert_eq!(h.ep.reassembly_bytes(), 0);
}

/// MC-DPL8R 3.1.5.2.4, 3.1.5.2.6: when a send mask skips a piece of an unreliable large
/// message, the rest of it is dropped, never delivered as a message.
#[test]
fn pieces_after_a_skipped_piece_are_dropped() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed_d(data(DframeCommand::SEQUENTIAL | DframeCommand::NEW_MSG, 1, 1), b"head");
    let mut tail = data(DframeCommand::SEQUENTIAL | DframeCommand::END_MSG, 3, 1);
    tail.masks = Masks::new(0, 1);
    h.feed_d(tail, b"tail");
    h.feed_d(data(REL_SEQ, 4, 1), b"next");
    assert!(matches!(&h.events()[..], [Event::Message { data, .. }] if data == b"next"));
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::Orphaned), 2);
}

/// MC-DPL8R 2.2.3, 3.1.4.4: small messages queued together go out coalesced when the peer is
/// at 0x00010005 or later, and each is delivered on its own, in order (3.1.5.2.5).
#[test]
fn small_messages_are_coalesced_and_split() {
    let mut p = Pair::new(Config::default());
    let sent: Vec<Vec<u8>> = (1..=6u8).map(|i| vec![i; usize::from(i)]).collect();
    for m in &sent {
        p.a.send(p.now, peer(), m, MessageKind::RELIABLE_SEQUENTIAL).unwrap();
    }
    p.run(Duration::from_secs(1));
    assert_eq!(p.messages(), sent);
    assert!(p.data_frames().iter().any(|h| h.control().contains(DframeControl::COALESCE)));
}

/// MC-DPL8R 3.1.5.2.5: a coalesced frame from the peer is split, sub-payload categories kept.
#[test]
fn coalesced_frame_is_delivered_in_parts() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    let parts = [
        SubPayloadRef { reliable: true, sequential: true, user_1: true, user_2: false, data: b"one" },
        SubPayloadRef { reliable: false, sequential: true, user_1: false, user_2: false, data: b"three" },
    ];
    let mut payload = vec![0; coalesced_len(parts.iter().map(|p| p.data.len()))];
    emit_coalesced(&parts, &mut payload).unwrap();
    let mut d = data(REL_SEQ, 1, 1);
    d.control = DframeControl::COALESCE;
    h.feed_d(d, &payload);
    let got: Vec<(Vec<u8>, bool, bool)> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Message { data, reliable, user_1, .. } => Some((data, reliable, user_1)),
            _ => None,
        })
        .collect();
    assert_eq!(got, [(b"one".to_vec(), true, true), (b"three".to_vec(), false, false)]);
}

/// MC-DPL8R 3.1.5, INDEX B.1: lead byte 0 goes to the caller; other non-DP8 bytes are dropped.
#[test]
fn datagrams_we_do_not_own() {
    let mut h = Harness::new(Config::default());
    h.feed(&[0x00, 0x02, 0x01, 0x00]);
    h.feed(&[0x42, 0x00, 0x00, 0x00]);
    h.feed(&[0x80, 0x06]);
    assert_eq!(h.events(), [Event::Unowned { from: peer(), data: vec![0x00, 0x02, 0x01, 0x00] }]);
    assert_eq!(h.ep.endpoint_stats().drops.get(DropReason::NotDirectPlay), 2);
}

/// MS-DPDX 3.1.5.9: a mask bit without its DWORD makes the frame invalid: dropped, counted.
#[test]
fn truncated_masks_are_malformed() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed(&[0x3F, 0x10, 0x01, 0x01, 0xAA]);
    h.feed(&[0x80, 0x06, 0x02, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
    assert!(h.events().is_empty());
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::Malformed), 2);
}

proptest! {
    /// Bad input is dropped and counted, never a panic (MC-DPL8R 3.1.5), including frames
    /// with forged session ids and hostile masks.
    #[test]
    fn arbitrary_datagrams_never_panic(datagrams in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 1..20)) {
        let mut h = established(Config::default(), PROTOCOL_VERSION);
        for d in &datagrams {
            h.feed(d);
            h.advance(ms(7));
        }
        h.sent();
        h.events();
    }
}

/// MC-DPL8R 3.1.4.4: two frames on the network at first, more as ACKs arrive, never more than
/// 64 whatever the configuration.
#[test]
fn congestion_window_and_the_64_frame_limit() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    for _ in 0..10 {
        h.ep.send(h.now, peer(), &[7; 1400], MessageKind::RELIABLE).unwrap();
    }
    // 2 at first, +1 for the opening KeepAlive, acknowledged without loss.
    assert_eq!(h.sent().len(), 3);
    // Acknowledging all three opens the window to 6.
    h.feed_d(data(REL_SEQ, 1, 4), b"ack");
    assert_eq!(h.sent().iter().filter(|s| matches!(s, Sent::D(_))).count(), 6);

    let mut config = Config::default();
    config.set_max_window(200).set_initial_window(200);
    assert_eq!((config.initial_window(), config.max_window()), (WINDOW, WINDOW));
    let mut wide = established(config, PROTOCOL_VERSION);
    for _ in 0..100 {
        wide.ep.send(wide.now, peer(), &[7; 1400], MessageKind::RELIABLE).unwrap();
    }
    assert_eq!(wide.sent().len(), 64);
}

/// MC-DPL8R 3.1.2.2 (decision in docs/decisions.md): the first frame past a new gap draws a
/// SACK at once; further out-of-order frames wait for the 20 ms short delay.
#[test]
fn first_frame_past_a_gap_is_acknowledged_at_once() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed_d(data(REL_SEQ, 2, 1), b"x");
    let sack = *h.sent()[0].sack();
    assert_eq!((sack.n_rcv, sack.masks.sack()), (1, 1));
    h.feed_d(data(REL_SEQ, 3, 1), b"y");
    assert!(h.sent().is_empty());
    assert_eq!(h.next_timer(), ms(20));
    assert_eq!(h.sent()[0].sack().masks.sack(), 0b11);
}

/// MC-DPL8R 3.1.6.5 with SACK evidence: an unreliable frame missing while a later one was
/// received goes into the send mask at once, without waiting for its retry timer, and is never
/// resent; the acknowledgement of unreliable frames opens the window too.
#[test]
fn sack_evidence_masks_a_lost_unreliable_frame() {
    let cfg = Config::default();
    let now = origin();
    let mut s = Sender::new(&cfg, Default::default());
    for i in 0..8u8 {
        s.push(OutMessage::new(vec![i], MessageKind::DATAGRAM, Body::Data));
    }
    assert!(s.next_frame(now, &cfg).is_some() && s.next_frame(now, &cfg).is_some());
    assert!(!s.can_send(&cfg), "the initial window is 2 frames");
    let acked = s.on_ack(now + ms(1), &cfg, 0, 1);
    assert!(acked.resend.is_empty());
    assert_eq!(acked.newly_masked, 1);
    assert_eq!(s.send_mask(2), 1 << 1);
    // bNRcv passing both ends the mask; the frame that arrived opens the window to 3.
    s.on_ack(now + ms(2), &cfg, 2, 0);
    assert_eq!(s.send_mask(2), 0);
    let mut sent = 0;
    while s.can_send(&cfg) {
        s.next_frame(now, &cfg);
        sent += 1;
    }
    assert_eq!(sent, 3);
}
