//! Sending: splitting, stop-and-wait, the Packetize timer and giving up.

use dplay_wire::dp4::header::Command;

use super::*;

/// MC-DPL4CS 3.1.4.18, 2.2.39: without reliability every DPSP_MSG_PACKET goes out at once,
/// with the fields as seed 001 defines them, and nothing waits for an ACK.
#[test]
fn unreliable_send_queues_every_packet_at_once() {
    let t0 = base();
    let mut a = endpoint(small_mtu(1000));
    let msg = message(2500);
    let guid = a.send(t0, peer(2), &msg, Reliability::Unreliable).unwrap();
    let out = transmits(&mut a);
    assert_eq!(out.len(), 3);
    for (i, t) in (0u32..).zip(&out) {
        let at = i as usize * 1000;
        assert_eq!(t.to, peer(2));
        assert_eq!(t.header.command, Command::DPSP_MSG_PACKET);
        let f = fragment_of(t);
        assert!(matches!(t.message, DpspMessage::Packet(_)));
        assert_eq!(f.guid_message, guid);
        assert_eq!(f.packet_index, i);
        assert_eq!(f.offset, 1000 * i);
        assert_eq!(f.total_packets, 3);
        assert_eq!(f.message_size, 2500);
        assert_eq!(f.packet_offset, 48);
        assert_eq!(&f.data[..], &msg[at..(at + 1000).min(2500)]);
        assert_eq!(t.encoded_len(), t.to_vec().unwrap().len());
        assert!(t.encoded_len() <= a.config().mtu);
    }
    assert_eq!(a.poll_timeout(), None);
    assert_eq!(a.sends_in_flight(), 0);
    assert_eq!(a.stats().fragments_sent, 3);
}

/// MC-DPL4CS 3.1.4.18, 3.1.5.29: with reliability only the first PACKET2_DATA goes out; each
/// new ACK releases the next, and the last ends the send.
#[test]
fn reliable_send_is_stop_and_wait() {
    let t0 = base();
    let mut a = endpoint(small_mtu(100));
    let msg = message(250);
    let guid = a.send(t0, peer(2), &msg, Reliability::Reliable).unwrap();
    for index in 0..3u32 {
        let out = transmits(&mut a);
        assert_eq!(out.len(), 1, "one fragment in flight");
        assert_eq!(out[0].header.command, Command::DPSP_MSG_PACKET2_DATA);
        assert_eq!(fragment_of(&out[0]).packet_index, index);
        let ack = PacketAck { guid_message: guid, packet_id: index };
        a.handle_message(t0 + ms(50), peer(2), &DpspMessage::Packet2Ack(ack));
    }
    assert!(transmits(&mut a).is_empty());
    assert_eq!(events(&mut a), vec![Event::SendComplete { to: peer(2), guid }]);
    assert_eq!(a.poll_timeout(), None, "MC-DPL4CS 3.1.5.29: the timer is cancelled");
    assert_eq!(a.sends_in_flight(), 0);
}

/// MC-DPL4CS 3.1.2.4: 900 ms until the first ACK, then 1.5 × the measured round trip.
#[test]
fn packetize_timer_is_900ms_then_one_and_a_half_rtt() {
    let t0 = base();
    let mut a = endpoint(small_mtu(10));
    let guid = a.send(t0, peer(2), &message(50), Reliability::Reliable).unwrap();
    assert_eq!(a.poll_timeout(), Some(t0 + ms(900)));
    a.handle_message(
        t0 + ms(100),
        peer(2),
        &DpspMessage::Packet2Ack(PacketAck { guid_message: guid, packet_id: 0 }),
    );
    assert_eq!(a.poll_timeout(), Some(t0 + ms(100) + ms(150)));
    // 3.1.6.1: on expiry the same fragment is sent again.
    transmits(&mut a);
    a.handle_timeout(t0 + ms(250));
    let again = transmits(&mut a);
    assert_eq!(again.len(), 1);
    assert_eq!(fragment_of(&again[0]).packet_index, 1);
    assert_eq!(a.stats().fragments_resent, 1);
    assert_eq!(a.poll_timeout(), Some(t0 + ms(400)));
}

/// MC-DPL4CS 3.1.2.4: a round trip under 25 ms counts as 25 ms, so the timer is 37.5 ms.
#[test]
fn packetize_timer_floor_is_37_5ms() {
    let t0 = base();
    let mut a = endpoint(small_mtu(10));
    let guid = a.send(t0, peer(2), &message(50), Reliability::Reliable).unwrap();
    a.handle_message(
        t0 + ms(3),
        peer(2),
        &DpspMessage::Packet2Ack(PacketAck { guid_message: guid, packet_id: 0 }),
    );
    assert_eq!(a.poll_timeout(), Some(t0 + ms(3) + Duration::from_micros(37_500)));
}

/// Decision (Karn's rule): the ACK of a resent fragment is ambiguous and gives no sample; the
/// timer keeps its value.
#[test]
fn resent_fragment_gives_no_rtt_sample() {
    let t0 = base();
    let mut a = endpoint(small_mtu(10));
    let guid = a.send(t0, peer(2), &message(50), Reliability::Reliable).unwrap();
    a.handle_timeout(t0 + ms(900));
    a.handle_message(
        t0 + ms(910),
        peer(2),
        &DpspMessage::Packet2Ack(PacketAck { guid_message: guid, packet_id: 0 }),
    );
    assert_eq!(a.poll_timeout(), Some(t0 + ms(910) + ms(900)));
}

/// MC-DPL4CS 3.1.5.29: an ACK already seen is ignored; an ACK for no message or for a
/// fragment not yet sent is dropped.
#[test]
fn repeated_and_unknown_acks_are_ignored() {
    let t0 = base();
    let mut a = endpoint(small_mtu(10));
    let guid = a.send(t0, peer(2), &message(50), Reliability::Reliable).unwrap();
    let ack = |id| DpspMessage::Packet2Ack(PacketAck { guid_message: guid, packet_id: id });
    a.handle_message(t0 + ms(10), peer(2), &ack(0));
    transmits(&mut a);
    a.handle_message(t0 + ms(11), peer(2), &ack(0));
    assert_dropped(&a, DropReason::RepeatedAck, 1);
    a.handle_message(t0 + ms(12), peer(2), &ack(3));
    a.handle_message(t0 + ms(12), peer(3), &ack(1)); // right GUID, wrong peer
    a.handle_message(
        t0 + ms(12),
        peer(2),
        &DpspMessage::Packet2Ack(PacketAck { guid_message: super::guid(9), packet_id: 1 }),
    );
    assert_dropped(&a, DropReason::UnknownAck, 3);
    assert!(transmits(&mut a).is_empty(), "no extra fragment released");
}

/// Drives a reliable send that is never acknowledged; returns the abort event and its time.
fn run_unacknowledged(config: Config) -> (Event, Duration, u64) {
    let t0 = base();
    let mut a = endpoint(config);
    a.send(t0, peer(2), &message(50), Reliability::Reliable).unwrap();
    while let Some(at) = a.poll_timeout() {
        a.handle_timeout(at);
        if let Some(e) = a.poll_event() {
            return (e, at - t0, a.stats().fragments_sent);
        }
    }
    panic!("no abort");
}

/// MC-DPL4CS 3.1.6.1: give up only when the same fragment was sent 16 times AND 60 s have
/// passed since its first send. At 900 ms, 16 sends take 13.5 s: sending goes on until 60 s.
#[test]
fn give_up_needs_16_sends_and_60_seconds() {
    let (event, at, sent) = run_unacknowledged(small_mtu(10));
    let Event::SendAborted { to, reason: AbortReason::GaveUp { packet_index, sends, elapsed }, .. } = event
    else {
        panic!("{event:?}")
    };
    assert_eq!((to, packet_index), (peer(2), 0));
    assert!(elapsed >= Duration::from_secs(60) && elapsed < Duration::from_secs(61), "{elapsed:?}");
    assert_eq!(at, elapsed);
    assert_eq!(u64::from(sends), sent);
    assert_eq!(sends, 67, "one send at 0 and every 900 ms until 60.3 s");
}

/// MC-DPL4CS 3.1.6.1, the other half: with a slow timer 60 s pass before 16 sends, and the
/// sender keeps going until the 16th.
#[test]
fn give_up_needs_16_sends_even_after_60_seconds() {
    let config = Config { packetize_initial: Duration::from_secs(10), ..small_mtu(10) };
    let (event, at, _) = run_unacknowledged(config);
    let Event::SendAborted { reason: AbortReason::GaveUp { sends, .. }, .. } = event else {
        panic!("{event:?}")
    };
    assert_eq!(sends, 16);
    assert_eq!(at, Duration::from_secs(160));
}

/// Issue item 1: GUIDs come from the seeded source, so a run replays.
#[test]
fn guids_replay_from_the_seed() {
    let t0 = base();
    let guids = |seed| {
        let mut a = endpoint(Config { seed, ..Config::default() });
        [0, 1].map(|_| a.send(t0, peer(2), b"x", Reliability::Unreliable).unwrap())
    };
    assert_eq!(guids(7), guids(7));
    assert_ne!(guids(7), guids(8));
    assert_ne!(guids(7)[0], guids(7)[1]);
    assert_eq!(guids(7)[0].get_version_num(), 4);
}

#[test]
fn send_refuses_empty_and_oversized_messages() {
    let t0 = base();
    let mut config = Config::default();
    config.limits.max_message_size = 100;
    let mut a = endpoint(config);
    assert_eq!(a.send(t0, peer(2), &[], Reliability::Reliable), Err(SendError::Empty));
    assert_eq!(
        a.send(t0, peer(2), &message(101), Reliability::Reliable),
        Err(SendError::TooLarge { size: 101, max: 100 })
    );
    assert!(a.send(t0, peer(2), &message(100), Reliability::Reliable).is_ok());
    assert_eq!(a.stats().messages_sent, 1);
}

/// `forget_peer` aborts sends to that peer only.
#[test]
fn forget_peer_aborts_its_sends() {
    let t0 = base();
    let mut a = endpoint(small_mtu(10));
    let g2 = a.send(t0, peer(2), &message(50), Reliability::Reliable).unwrap();
    a.send(t0, peer(3), &message(50), Reliability::Reliable).unwrap();
    a.forget_peer(t0, peer(2));
    assert_eq!(
        events(&mut a),
        vec![Event::SendAborted { to: peer(2), guid: g2, reason: AbortReason::PeerForgotten }]
    );
    assert_eq!(a.sends_in_flight(), 1);
}

/// MC-DPL4CS 3.1.6.1 and 3.1.5.28, as an exchange: the ACK of fragment 0 is lost, the
/// Packetize timer resends it, the receiver acknowledges the duplicate, and the send goes on
/// to the end with one delivery.
#[test]
fn lost_ack_is_recovered_by_the_packetize_timer() {
    let t0 = base();
    let mut a = endpoint(small_mtu(10));
    let mut b = endpoint(Config::default());
    let msg = message(20);
    let guid = a.send(t0, peer(2), &msg, Reliability::Reliable).unwrap();
    let first = transmits(&mut a);
    b.handle_message(t0 + ms(20), peer(1), &first[0].message);
    assert_eq!(transmits(&mut b).len(), 1, "this ACK is lost");
    a.handle_timeout(t0 + ms(900));
    let resent = transmits(&mut a);
    assert_eq!(resent, first, "the same PACKET2_DATA again");
    b.handle_message(t0 + ms(920), peer(1), &resent[0].message);
    for t in transmits(&mut b) {
        a.handle_message(t0 + ms(940), peer(2), &t.message);
    }
    let second = transmits(&mut a);
    assert_eq!(fragment_of(&second[0]).packet_index, 1);
    b.handle_message(t0 + ms(960), peer(1), &second[0].message);
    for t in transmits(&mut b) {
        a.handle_message(t0 + ms(980), peer(2), &t.message);
    }
    assert_eq!(single_delivery(&mut b), msg);
    assert_eq!(events(&mut a), [Event::SendComplete { to: peer(2), guid }]);
    assert_dropped(&b, DropReason::Duplicate, 1);
}

/// docs/limits.md: the reliable messages being sent are charged to the memory budget as held,
/// each byte once, whatever the budget (never refused: the give-up bounds them, MC-DPL4CS
/// 3.1.6.1); one acknowledged, given up or forgotten releases its bytes. Unreliable sends
/// keep nothing and are not charged.
#[test]
fn reliable_sends_in_flight_are_charged_to_the_budget() {
    let t0 = base();
    let mut a = endpoint(small_mtu(100));
    let early = a.send(t0, peer(2), &message(250), Reliability::Reliable).unwrap();
    let budget = dplay_wire::budget::MemoryBudget::new(300);
    a.set_memory_budget(&budget);
    assert_eq!(budget.held(), 250, "what was in flight before is charged too");
    a.send(t0, peer(3), &message(120), Reliability::Reliable).unwrap();
    a.send(t0, peer(4), &message(40), Reliability::Unreliable).unwrap();
    assert_eq!((budget.held(), a.send_bytes_held()), (370, 370), "over the budget, not refused");
    for index in 0..3u32 {
        let ack = PacketAck { guid_message: early, packet_id: index };
        a.handle_message(t0 + ms(50), peer(2), &DpspMessage::Packet2Ack(ack));
    }
    assert_eq!(budget.held(), 120, "the acknowledged message is released");
    a.forget_peer(t0, peer(3));
    assert_eq!((budget.held(), a.send_bytes_held()), (0, 0));
    a.send(t0, peer(2), &message(50), Reliability::Reliable).unwrap();
    while let Some(at) = a.poll_timeout() {
        a.handle_timeout(at);
    }
    assert_eq!(budget.held(), 0, "the message given up is released");
    assert_eq!(budget.peak(), 370);
}
