//! Tracked messages: completion on acknowledgement (MC-DPL8R 3.1.5.2.2), on sending, at the
//! deadline, with the connection; priorities in the send queue; the queue's counts.

use dplay_wire::dp8::cframe::{Cframe, Masks, Sack};
use dplay_wire::dp8::dframe::Dframe;

use super::*;
use crate::{
    Cancelled, DisconnectReason, FirstFrame, MessageKind, PROTOCOL_VERSION, Priority, SendOutcome, Tracked,
};

/// The peer's SACK: everything before `n_rcv` received.
fn ack(h: &mut Harness, n_rcv: u8) {
    h.feed_c(Cframe::Sack(Sack {
        poll: false,
        response: true,
        retry: 0,
        n_seq: 1,
        n_rcv,
        timestamp: 0,
        masks: Masks::default(),
        signature: None,
    }));
}

fn done(events: &[Event]) -> Vec<(u64, SendOutcome)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::SendDone { id, outcome, .. } => Some((*id, *outcome)),
            _ => None,
        })
        .collect()
}

fn track(id: u64, priority: Priority) -> Tracked {
    Tracked { id, priority, expires: None }
}

/// A connector whose CONNECT is out and unanswered, coalescing off (one message a frame), and
/// the CONNECT's `dwSessID`.
fn connecting() -> (Harness, u32) {
    let mut config = Config::default();
    config.coalesce = false;
    let mut h = Harness::new(config);
    h.ctx.keepalive_sess_id = true;
    h.ep.connect(h.now, peer()).unwrap();
    let sent = h.sent();
    let Some(Sent::C(Cframe::Connect(f))) = sent.first() else { panic!("{sent:?}") };
    (h, f.sess_id)
}

/// The listener answers the connector, then acknowledges every frame: the payloads of the
/// DFRAMEs sent, in order (the opening KeepAlive's is empty).
fn answer_and_drain(h: &mut Harness, sess: u32) -> Vec<Vec<u8>> {
    h.feed_c(Cframe::Connected(connect_fields(true, 0, 0, PROTOCOL_VERSION, sess)));
    let mut payloads = Vec::new();
    for _ in 0..10 {
        let frames: Vec<Dframe> = h
            .sent()
            .iter()
            .filter_map(|s| match s {
                Sent::D(d) => Some(d.clone()),
                Sent::C(_) => None,
            })
            .collect();
        let Some(last) = frames.last().map(|d| d.header.seq) else { break };
        payloads.extend(frames.iter().map(|d| d.payload.0.clone()));
        ack(h, last.wrapping_add(1));
    }
    payloads
}

/// MC-DPL8R 3.1.5.2.2: a reliable message is done when `bNRcv` passes its frame, not when it
/// is sent; the id comes back once.
#[test]
fn reliable_message_completes_on_acknowledgement() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.ep.send_tracked(h.now, peer(), b"hello", MessageKind::RELIABLE_SEQUENTIAL, Tracked::new(7)).unwrap();
    let sent = h.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].dframe().header.seq, 1);
    assert_eq!(done(&h.events()), []);
    ack(&mut h, 1);
    assert_eq!(done(&h.events()), [], "bNRcv 1 does not pass frame 1");
    ack(&mut h, 2);
    assert_eq!(done(&h.events()), [(7, SendOutcome::Acknowledged)]);
    ack(&mut h, 2);
    assert_eq!(done(&h.events()), []);
}

/// MC-DPL8R 3.1.4.4: a message split in frames is done when its last frame is acknowledged.
#[test]
fn split_message_completes_with_its_last_frame() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    let big = vec![0x5A; Config::default().max_frame_payload() * 2 + 10];
    h.ep.send_tracked(h.now, peer(), &big, MessageKind::RELIABLE, Tracked::new(9)).unwrap();
    let mut last = 0;
    let mut frames = 0;
    while frames < 3 {
        let sent = h.sent();
        assert!(!sent.is_empty(), "the window opens as frames are acknowledged");
        for s in sent.iter().filter(|s| matches!(s, Sent::D(_))) {
            last = s.dframe().header.seq;
            frames += 1;
        }
        if frames < 3 {
            ack(&mut h, last.wrapping_add(1));
            assert_eq!(done(&h.events()), []);
        }
    }
    ack(&mut h, last);
    assert_eq!(done(&h.events()), []);
    ack(&mut h, last.wrapping_add(1));
    assert_eq!(done(&h.events()), [(9, SendOutcome::Acknowledged)]);
}

/// A message not reliable is done as soon as its frame is on the wire.
#[test]
fn unreliable_message_completes_when_sent() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.ep.send_tracked(h.now, peer(), b"fire", MessageKind::DATAGRAM, Tracked::new(3)).unwrap();
    h.sent();
    assert_eq!(done(&h.events()), [(3, SendOutcome::Sent)]);
}

/// MC-DPL8R 3.1.6.5: when the retries run out the message fails with the connection, and its
/// failure comes before the `Disconnected`.
#[test]
fn lost_connection_fails_what_is_unacknowledged() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.ep.send_tracked(h.now, peer(), b"lost", MessageKind::RELIABLE, Tracked::new(4)).unwrap();
    h.ep.send_tracked(h.now, peer(), b"too", MessageKind::RELIABLE, Tracked::new(5)).unwrap();
    h.advance(Duration::from_secs(120));
    let events = h.events();
    let reason = DisconnectReason::RetriesExhausted;
    assert_eq!(done(&events), [(4, SendOutcome::Failed(reason)), (5, SendOutcome::Failed(reason))]);
    assert!(matches!(
        events.last(),
        Some(Event::Disconnected { reason: DisconnectReason::RetriesExhausted, .. })
    ));
}

/// A message whose deadline passes before its first frame is sent is dropped unsent, counted,
/// and reported at the deadline.
#[test]
fn expired_message_is_dropped_unsent() {
    let (mut h, sess) = connecting();
    let expires = Some(h.now + ms(50));
    let t = Tracked { id: 11, priority: Priority::High, expires };
    h.ep.send_tracked(h.now, peer(), b"late", MessageKind::RELIABLE, t).unwrap();
    h.ep.send_tracked(h.now, peer(), b"kept", MessageKind::RELIABLE, Tracked::new(12)).unwrap();
    assert_eq!(h.ep.send_queue(peer(), None), Some((2, 8)));
    assert!(h.ep.poll_timeout().unwrap() <= h.now + ms(50));
    h.advance(ms(50));
    assert_eq!(done(&h.events()), [(11, SendOutcome::TimedOut)]);
    assert_eq!(h.ep.send_queue(peer(), None), Some((1, 4)));
    assert_eq!(h.ep.stats(peer()).unwrap().messages_timed_out, [0, 0, 1]);
    assert_eq!(answer_and_drain(&mut h, sess), [b"kept".to_vec(), Vec::new()]);
    assert_eq!(done(&h.events()), [(12, SendOutcome::Acknowledged)]);
}

/// DPNSEND_PRIORITY_HIGH / _LOW: a higher message goes ahead of every lower one queued (the
/// opening KeepAlive after all of them); the queue counts application messages by priority,
/// session (USER_1) messages not.
#[test]
fn priorities_order_the_queue() {
    let (mut h, sess) = connecting();
    let kind = MessageKind::RELIABLE_SEQUENTIAL;
    h.ep.send(h.now, peer(), b"session", MessageKind { user_1: true, ..kind }).unwrap();
    h.ep.send_tracked(h.now, peer(), b"low", kind, track(1, Priority::Low)).unwrap();
    h.ep.send_tracked(h.now, peer(), b"normal", kind, track(2, Priority::Normal)).unwrap();
    h.ep.send_tracked(h.now, peer(), b"high", kind, track(3, Priority::High)).unwrap();
    h.ep.send_tracked(h.now, peer(), b"high2", kind, track(4, Priority::High)).unwrap();
    assert_eq!(h.ep.send_queue(peer(), None), Some((4, 18)));
    assert_eq!(h.ep.send_queue(peer(), Some(Priority::High)), Some((2, 9)));
    assert_eq!(h.ep.send_queue(peer(), Some(Priority::Low)), Some((1, 3)));
    let order: Vec<Vec<u8>> =
        ["high", "high2", "session", "normal", "low", ""].iter().map(|s| s.as_bytes().to_vec()).collect();
    assert_eq!(answer_and_drain(&mut h, sess), order);
    let ids: Vec<u64> = done(&h.events()).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, [3, 4, 2, 1]);
    let stats = h.ep.stats(peer()).unwrap();
    assert_eq!(stats.messages_transmitted, [1, 1, 2]);
    assert_eq!(h.ep.send_queue(peer(), None), Some((0, 0)));
}

/// The highest `bSeq` of the DFRAMEs sent since the last look.
fn last_seq(h: &mut Harness) -> Option<u8> {
    h.sent().iter().filter_map(|s| if let Sent::D(d) = s { Some(d.header.seq) } else { None }).next_back()
}

/// A message whose first frame went out before its deadline is finished, and its deadline no
/// longer wakes the endpoint.
#[test]
fn started_message_outlives_its_deadline() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    let big = vec![0x5A; Config::default().max_frame_payload() * 8];
    let t = Tracked { id: 5, priority: Priority::Normal, expires: Some(h.now + ms(10)) };
    h.ep.send_tracked(h.now, peer(), &big, MessageKind::RELIABLE, t).unwrap();
    let mut last = last_seq(&mut h).expect("the first frames");
    h.now += ms(20);
    h.ep.handle_timeout(h.now);
    assert!(h.ep.poll_timeout().is_some_and(|at| at > h.now), "no deadline left in the past");
    assert_eq!(done(&h.events()), []);
    for _ in 0..20 {
        ack(&mut h, last.wrapping_add(1));
        match last_seq(&mut h) {
            Some(seq) => last = seq,
            None => break,
        }
    }
    assert_eq!(done(&h.events()), [(5, SendOutcome::Acknowledged)]);
}

/// CancelAsyncOperation's transport half: a tracked message none of whose frames went out is
/// taken from the queue and reported cancelled, unsent; one partly sent, or sent and waiting
/// for its acknowledgement, is finished and only counted as started.
#[test]
fn cancel_removes_only_unsent_messages() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    let kind = MessageKind::RELIABLE;
    h.ep.send_tracked(h.now, peer(), b"small", kind, track(4, Priority::Normal)).unwrap();
    let big = vec![0x5A; Config::default().max_frame_payload() * 8];
    h.ep.send_tracked(h.now, peer(), &big, kind, track(1, Priority::Normal)).unwrap();
    h.ep.send_tracked(h.now, peer(), b"queued", kind, track(2, Priority::High)).unwrap();
    h.ep.send_tracked(h.now, peer(), b"low", kind, track(3, Priority::Low)).unwrap();
    h.ep.send(h.now, peer(), b"untracked", kind).unwrap();
    let mut last = last_seq(&mut h).expect("the first frames");
    let removed = |n| Cancelled { removed: n, started: 0 };
    let started = |n| Cancelled { removed: 0, started: n };

    assert_eq!(h.ep.cancel(2), removed(1));
    assert_eq!(done(&h.events()), [(2, SendOutcome::Cancelled)]);
    assert_eq!(h.ep.cancel(1), started(1), "partly sent");
    assert_eq!(h.ep.cancel(4), started(1), "waiting for its acknowledgement");
    assert_eq!(h.ep.cancel(99), Cancelled::default());
    assert_eq!(h.ep.cancel_queued(peer(), Some(Priority::High)), Cancelled::default());
    assert_eq!(h.ep.cancel_queued(peer(), None), Cancelled { removed: 1, started: 2 });
    assert_eq!(done(&h.events()), [(3, SendOutcome::Cancelled)]);
    assert_eq!(h.ep.send_queue(peer(), None).map(|(n, _)| n), Some(2), "the big one and the untracked");

    let mut payloads = Vec::new();
    for _ in 0..20 {
        ack(&mut h, last.wrapping_add(1));
        let sent = h.sent();
        payloads.extend(
            sent.iter().filter_map(|s| if let Sent::D(d) = s { Some(d.payload.0.clone()) } else { None }),
        );
        match sent
            .iter()
            .filter_map(|s| if let Sent::D(d) = s { Some(d.header.seq) } else { None })
            .next_back()
        {
            Some(seq) => last = seq,
            None => break,
        }
    }
    assert_eq!(payloads.last(), Some(&b"untracked".to_vec()), "the cancelled never went out");
    assert!(!payloads.iter().any(|p| p == b"queued" || p == b"low"));
    assert_eq!(done(&h.events()), [(4, SendOutcome::Acknowledged), (1, SendOutcome::Acknowledged)]);
}

/// DPNMSG_SEND_COMPLETE's `dwFirstFrameRTT` and `dwFirstFrameRetryCount`: how the first frame
/// of an acknowledged message went, from its latest transmission to its acknowledgement.
#[test]
fn acknowledgement_tells_how_the_first_frame_went() {
    let first_frames = |events: &[Event]| -> Vec<(u64, Option<FirstFrame>)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::SendDone { id, first_frame, .. } => Some((*id, *first_frame)),
                _ => None,
            })
            .collect()
    };
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.ep.send_tracked(h.now, peer(), b"hello", MessageKind::RELIABLE, Tracked::new(1)).unwrap();
    h.now += ms(30);
    ack(&mut h, 2);
    assert_eq!(first_frames(&h.events()), [(1, Some(FirstFrame { rtt: ms(30), retries: 0 }))]);

    h.ep.send_tracked(h.now, peer(), b"again", MessageKind::RELIABLE, Tracked::new(2)).unwrap();
    h.sent();
    let retried = (0..100).any(|_| {
        h.advance(ms(5));
        h.sent().iter().any(|s| matches!(s, Sent::D(_)))
    });
    assert!(retried);
    h.now += ms(10);
    ack(&mut h, 3);
    // The retry went out at its deadline, up to 5 ms before the last step of the clock.
    let got = first_frames(&h.events());
    assert!(
        matches!(got[..], [(2, Some(FirstFrame { rtt, retries: 1 }))] if rtt >= ms(10) && rtt <= ms(15)),
        "{got:?}"
    );

    h.ep.send_tracked(h.now, peer(), b"datagram", MessageKind::DATAGRAM, Tracked::new(3)).unwrap();
    assert_eq!(first_frames(&h.events()), [(3, None)], "nothing acknowledges it");
}
