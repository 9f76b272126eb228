//! Receiving: reassembly in any order, acknowledgements, checks, discards, re-indication.

use dplay_wire::Wire;
use dplay_wire::dp4::header::{Command, HEADER_LEN, SockAddrIn, Token};

use super::*;

fn feed(d: &mut Dpsp, now: Instant, from: SocketAddr, messages: impl IntoIterator<Item = DpspMessage>) {
    for m in messages {
        d.handle_message(now, from, &m);
    }
}

/// Seed 000 (MC-DPL4CS 2.2.41): once every fragment is in, the message is the concatenation
/// of all their PacketData.
#[test]
fn in_order_fragments_reassemble() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let msg = message(1000);
    feed(&mut b, t0, peer(1), pieces(guid(1), &msg, 300).into_iter().map(packet));
    assert_eq!(single_delivery(&mut b), msg);
    assert_eq!(b.partial_messages(), 0);
    assert_eq!(b.bytes_held(), 0);
    assert_eq!(b.poll_timeout(), None);
    assert_eq!(b.stats().messages_delivered, 1);
}

/// Seeds 000 and 001 name no arrival order; the issue asks for any order, where MC-DPL4CS
/// 3.1.5.27/3.1.5.28 take only the next PacketIndex (decision, F-24 d).
#[test]
fn any_order_reassembles() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let msg = message(1000);
    let mut frags = pieces(guid(1), &msg, 97);
    frags.reverse();
    frags.swap(2, 7);
    feed(&mut b, t0, peer(1), frags.into_iter().map(packet2));
    assert_eq!(single_delivery(&mut b), msg);
}

/// MC-DPL4CS 3.1.5.28, 2.2.40: every PACKET2_DATA is acknowledged with its GuidMessage and
/// PacketID = its PacketIndex; PACKET is never acknowledged (3.1.5.27).
#[test]
fn packet2_data_is_acknowledged_and_packet_is_not() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let msg = message(30);
    let frags = pieces(guid(1), &msg, 10);
    b.handle_message(t0, peer(1), &packet2(frags[1].clone()));
    let out = transmits(&mut b);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to, peer(1));
    assert_eq!(out[0].header.command, Command::DPSP_MSG_PACKET2_ACK);
    assert_eq!(ack_of(&out[0]), PacketAck { guid_message: guid(1), packet_id: 1 });
    assert_eq!(out[0].to_vec().unwrap().len(), 48, "INDEX D.16: a PACKET2_ACK is 48 bytes");
    feed(&mut b, t0, peer(2), pieces(guid(1), &msg, 10).into_iter().map(packet));
    assert!(transmits(&mut b).is_empty());
}

/// Issue item 2: duplicates are dropped and counted; a duplicate PACKET2_DATA is acknowledged
/// again (its ACK may have been lost), even after the message was delivered, which is never
/// delivered twice.
#[test]
fn duplicates_are_acknowledged_but_delivered_once() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let msg = message(30);
    let frags = pieces(guid(1), &msg, 10);
    for f in [&frags[0], &frags[0], &frags[1], &frags[2], &frags[2], &frags[1]] {
        b.handle_message(t0, peer(1), &packet2(f.clone()));
    }
    assert_eq!(single_delivery(&mut b), msg);
    let acks: Vec<u32> = transmits(&mut b).iter().map(|t| ack_of(t).packet_id).collect();
    assert_eq!(acks, [0, 0, 1, 2, 2, 1]);
    assert_dropped(&b, DropReason::Duplicate, 3);
    assert_eq!(b.partial_messages(), 0, "a late duplicate does not start the message again");
}

#[track_caller]
fn assert_refused(f: Fragment, reason: DropReason) {
    let mut config = Config::default();
    config.limits.max_message_size = 1000;
    let mut b = endpoint(config);
    b.handle_message(base(), peer(1), &packet2(f));
    assert_dropped(&b, reason, 1);
    assert_eq!(b.stats().dropped_total(), 1);
    assert_eq!(b.partial_messages(), 0);
    assert!(transmits(&mut b).is_empty(), "a refused PACKET2_DATA is not acknowledged");
}

/// Issue item 2 and INDEX E.5 step 9: checks on one fragment alone.
#[test]
fn inconsistent_fragments_are_refused_alone() {
    let g = guid(1);
    assert_refused(frag(g, 0, 0, 2, 20, &[]), DropReason::EmptyFragment);
    assert_refused(frag(g, 0, 0, 0, 20, b"ab"), DropReason::BadTotalPackets);
    assert_refused(frag(g, 0, 0, 21, 20, b"ab"), DropReason::BadTotalPackets);
    assert_refused(frag(g, 0, 0, 2, 1001, b"ab"), DropReason::TooLarge);
    assert_refused(frag(g, 0, 0, u32::MAX, u32::MAX, b"ab"), DropReason::TooLarge);
    assert_refused(frag(g, 2, 10, 2, 20, b"ab"), DropReason::IndexOutOfRange);
    assert_refused(frag(g, 1, 19, 2, 20, b"ab"), DropReason::OutsideMessage);
    assert_refused(frag(g, 1, u32::MAX, 2, 20, b"ab"), DropReason::OutsideMessage);
    assert_refused(frag(g, 0, 1, 2, 20, b"ab"), DropReason::OffsetConflict); // index 0 starts at 0
    assert_refused(frag(g, 1, 10, 2, 20, b"ab"), DropReason::OffsetConflict); // last ends the message
    assert_refused(frag(g, 3, 2, 5, 20, b"ab"), DropReason::OffsetConflict); // 3 fragments need 3 bytes
    assert_refused(frag(g, 1, 1, 5, 20, b"abcdefghijklmnopq"), DropReason::OffsetConflict); // none left for 2-4
}

/// Issue item 2: each fragment is checked against the others held for its message, and a
/// refused one costs the message nothing: the genuine fragments still complete it.
#[test]
fn inconsistent_fragments_are_refused_against_the_others() {
    let t0 = base();
    let g = guid(1);
    let msg = message(30);
    let (halves, thirds) = (pieces(g, &msg, 15), pieces(g, &msg, 10));
    let cases = [
        (&halves, 0, frag(g, 1, 15, 3, 30, &[1; 10]), DropReason::Mismatch, "TotalPackets differs"),
        (&halves, 0, frag(g, 1, 15, 2, 31, &[1; 16]), DropReason::Mismatch, "MessageSize differs"),
        (&thirds, 0, frag(g, 0, 0, 3, 30, &[1; 11]), DropReason::OffsetConflict, "same index, other size"),
        (&thirds, 0, frag(g, 1, 9, 3, 30, &[1; 10]), DropReason::OffsetConflict, "overlaps fragment 0"),
        (&thirds, 0, frag(g, 1, 12, 3, 30, &[1; 10]), DropReason::OffsetConflict, "gap after fragment 0"),
        (&thirds, 2, frag(g, 1, 10, 3, 30, &[1; 11]), DropReason::OffsetConflict, "overlaps fragment 2"),
        (&thirds, 2, frag(g, 0, 0, 3, 30, &[1; 20]), DropReason::OffsetConflict, "leaves no byte for 1"),
    ];
    for (good, held, bad, reason, why) in cases {
        let mut b = endpoint(Config::default());
        b.handle_message(t0, peer(1), &packet(good[held].clone()));
        b.handle_message(t0, peer(1), &packet(bad));
        assert_eq!(b.stats().dropped(reason), 1, "{why}");
        assert_eq!(b.stats().dropped_total(), 1, "{why}");
        for (_, f) in good.iter().enumerate().filter(|&(i, _)| i != held) {
            b.handle_message(t0, peer(1), &packet(f.clone()));
        }
        assert_eq!(single_delivery(&mut b), msg, "{why}");
    }
}

/// A PACKET and a PACKET2_DATA never make one message.
#[test]
fn reliability_must_match() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let frags = pieces(guid(1), &message(30), 10);
    b.handle_message(t0, peer(1), &packet(frags[0].clone()));
    b.handle_message(t0, peer(1), &packet2(frags[1].clone()));
    assert_dropped(&b, DropReason::Mismatch, 1);
    assert!(transmits(&mut b).is_empty());
}

/// Issue item 4: hostile fragments interleaved with a genuine message cost nothing.
#[test]
fn hostile_fragments_lose_nothing_else() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let g = guid(1);
    let msg = message(100);
    let good = pieces(g, &msg, 25);
    let hostile = [
        frag(g, 1, 26, 4, 100, &[9; 24]),
        frag(g, 1, 25, 4, 100, &[9; 26]),
        frag(g, 7, 25, 4, 100, &[9; 25]),
        frag(g, 1, 25, 5, 100, &[9; 25]),
        frag(g, 1, 25, 4, u32::MAX, &[9; 25]),
    ];
    b.handle_message(t0, peer(1), &packet(good[0].clone()));
    b.handle_message(t0, peer(1), &packet(good[2].clone()));
    for h in hostile {
        b.handle_message(t0, peer(1), &packet(h));
    }
    b.handle_message(t0, peer(1), &packet(good[3].clone()));
    b.handle_message(t0, peer(1), &packet(good[1].clone()));
    assert_eq!(single_delivery(&mut b), msg);
    assert_eq!(b.stats().dropped_total(), 5);
}

/// Seed 000 (MC-DPL4CS 2.2.41): a message sent without reliability is discarded after 15 s
/// with no fragment for it; each fragment restarts the 15 s.
#[test]
fn unreliable_partial_is_discarded_after_15s_idle() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let frags = pieces(guid(1), &message(30), 10);
    b.handle_message(t0, peer(1), &packet(frags[0].clone()));
    b.handle_message(t0 + ms(10_000), peer(1), &packet(frags[2].clone()));
    b.handle_timeout(t0 + ms(15_000));
    assert_eq!(b.poll_timeout(), Some(t0 + ms(25_000)));
    b.handle_timeout(t0 + ms(24_999));
    assert_eq!(b.partial_messages(), 1);
    b.handle_timeout(t0 + ms(25_000));
    assert_eq!(
        events(&mut b),
        vec![Event::ReassemblyAbandoned { from: peer(1), guid: guid(1), reason: AbandonReason::Idle }]
    );
    assert_eq!((b.partial_messages(), b.bytes_held()), (0, 0));
    // A straggler of the discarded message is refused instead of starting it again.
    b.handle_message(t0 + ms(26_000), peer(1), &packet(frags[1].clone()));
    assert_dropped(&b, DropReason::Abandoned, 1);
    assert_eq!(b.partial_messages(), 0);
}

/// Decision: a reliable partial waits `reliable_idle` (75 s), past the sender's 60 s give-up.
#[test]
fn reliable_partial_is_discarded_after_75s_idle() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    b.handle_message(t0, peer(1), &packet2(pieces(guid(1), &message(30), 10)[0].clone()));
    assert_eq!(b.poll_timeout(), Some(t0 + Duration::from_secs(75)));
    b.handle_timeout(t0 + Duration::from_secs(75));
    assert_eq!(b.stats().reassemblies_abandoned, 1);
}

fn full_header_message(command: Command, body: &[u8]) -> Vec<u8> {
    let header = dplay_wire::dp4::header::Header {
        token: Token::FROM_REMOTE,
        sock_addr: SockAddrIn::unspecified(),
        command,
        version: 14,
    };
    let len = HEADER_LEN + body.len();
    let mut out = vec![0; len];
    let mut w = dplay_wire::Writer::new(&mut out, len).unwrap();
    header.write(&mut w, len).unwrap();
    w.bytes(body);
    w.finish().unwrap();
    out
}

#[track_caller]
fn reassemble(b: &mut Dpsp, g: Uuid, msg: &[u8]) {
    feed(b, base(), peer(1), pieces(g, msg, 40).into_iter().map(packet));
}

/// Seed 000: the reassembled payload is re-indicated to the lowest level of the receive path.
/// A payload that is itself a PACKET, PACKET2_DATA or PACKET2_ACK (full or short header) is
/// refused: it would start reassembly again. Any other payload is delivered untouched.
#[test]
fn nested_fragment_is_refused() {
    let mut b = endpoint(Config::default());
    let inner = frag(guid(9), 0, 0, 1, 60, &message(60)).to_vec().unwrap();
    reassemble(&mut b, guid(1), &full_header_message(Command::DPSP_MSG_PACKET, &inner));
    let mut short = b"play".to_vec();
    short.extend_from_slice(&0x30u16.to_le_bytes());
    short.extend_from_slice(&14u16.to_le_bytes());
    short.extend_from_slice(&inner);
    reassemble(&mut b, guid(2), &short);
    let abandoned: Vec<AbandonReason> = events(&mut b)
        .into_iter()
        .map(|e| match e {
            Event::ReassemblyAbandoned { reason, .. } => reason,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(abandoned, [AbandonReason::NestedFragment; 2]);
    let create = full_header_message(Command::DPSP_MSG_CREATEPLAYER, &message(120));
    reassemble(&mut b, guid(3), &create);
    assert_eq!(single_delivery(&mut b), create);
}

/// The same GUID from two senders is two messages.
#[test]
fn senders_are_kept_apart() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let (m1, m2) = (message(30), vec![5; 30]);
    let (f1, f2) = (pieces(guid(1), &m1, 10), pieces(guid(1), &m2, 10));
    for i in 0..3 {
        b.handle_message(t0, peer(1), &packet(f1[i].clone()));
        b.handle_message(t0, peer(2), &packet(f2[i].clone()));
    }
    let got: Vec<(SocketAddr, Vec<u8>)> = events(&mut b)
        .into_iter()
        .map(|e| match e {
            Event::Delivered { from, message, .. } => (from, message),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(got, [(peer(1), m1), (peer(2), m2)]);
}

/// `handle_datagram` parses the header and body, handles this layer's Commands, counts the
/// malformed ones and hands everything else back.
#[test]
fn datagrams_are_parsed_and_routed() {
    let t0 = base();
    let mut a = endpoint(small_mtu(16));
    let mut b = endpoint(Config::default());
    let msg = message(40);
    let guid = a.send(t0, peer(2), &msg, Reliability::Reliable).unwrap();
    for _ in 0..3 {
        for t in transmits(&mut a) {
            assert_eq!(b.handle_datagram(t0, peer(1), &t.to_vec().unwrap()), Datagram::Consumed);
        }
        for t in transmits(&mut b) {
            assert_eq!(a.handle_datagram(t0, peer(2), &t.to_vec().unwrap()), Datagram::Consumed);
        }
    }
    assert_eq!(single_delivery(&mut b), msg);
    assert_eq!(events(&mut a), [Event::SendComplete { to: peer(2), guid }]);
    let ping = full_header_message(Command::DPSP_MSG_PING, &[0; 8]);
    assert_eq!(b.handle_datagram(t0, peer(1), &ping), Datagram::NotDpsp);
    assert_eq!(b.handle_datagram(t0, peer(1), b"raw game data"), Datagram::NotDpsp);
    let truncated = full_header_message(Command::DPSP_MSG_PACKET2_ACK, &[0; 19]);
    assert_eq!(b.handle_datagram(t0, peer(1), &truncated), Datagram::Consumed);
    assert_dropped(&b, DropReason::Malformed, 1);
}

/// `forget_peer` abandons that peer's partial messages.
#[test]
fn forget_peer_abandons_its_partials() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    b.handle_message(t0, peer(1), &packet(pieces(guid(1), &message(30), 10)[0].clone()));
    b.handle_message(t0, peer(2), &packet(pieces(guid(2), &message(30), 10)[0].clone()));
    b.forget_peer(t0, peer(1));
    assert_eq!(
        events(&mut b),
        [Event::ReassemblyAbandoned { from: peer(1), guid: guid(1), reason: AbandonReason::PeerForgotten }]
    );
    assert_eq!(b.partial_messages(), 1);
}

/// The wire crate's DP4 message parser reads our datagrams back as the same messages, and
/// its bodies convert to and from this layer's (MC-DPL4CS 2.2.39-2.2.41).
#[test]
fn datagrams_agree_with_the_wire_crate() {
    use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
    let t0 = base();
    let mut a = endpoint(small_mtu(16));
    let mut b = endpoint(Config::default());
    a.send(t0, peer(2), &message(40), Reliability::Unreliable).unwrap();
    a.send(t0, peer(2), &message(40), Reliability::Reliable).unwrap();
    let mut out = transmits(&mut a);
    for t in &out {
        b.handle_message(t0, peer(1), &t.message);
    }
    out.extend(transmits(&mut b));
    assert_eq!(out.iter().map(|t| t.header.command.0).collect::<Vec<_>>(), [0x15, 0x15, 0x15, 0x30, 0x31]);
    for t in out {
        let parsed = Dp4Message::parse(&t.to_vec().unwrap()).unwrap();
        assert_eq!(parsed, t.to_message());
        assert_eq!(DpspMessage::from_body(&parsed.body), Some(t.message));
    }
    assert_eq!(DpspMessage::from_body(&Dp4Body::LogonDenied(Default::default())), None);
}

/// A clock that steps back (a caller's mistake) is no reason to panic: deadlines are computed
/// with saturating arithmetic and the message still completes.
#[test]
fn time_going_backwards_is_harmless() {
    let t0 = base() + Duration::from_secs(100);
    let mut a = endpoint(small_mtu(10));
    let mut b = endpoint(Config::default());
    let msg = message(30);
    a.send(t0, peer(2), &msg, Reliability::Reliable).unwrap();
    for back in [0, 50, 90] {
        let now = t0 - Duration::from_secs(back);
        for t in transmits(&mut a) {
            b.handle_message(now, peer(1), &t.message);
        }
        for t in transmits(&mut b) {
            a.handle_message(now, peer(2), &t.message);
        }
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
    assert_eq!(single_delivery(&mut b), msg);
}

/// Decision (F-24 b): a duplicate is a fragment for the message too, and restarts the wait.
#[test]
fn duplicate_restarts_the_idle_wait() {
    let t0 = base();
    let mut b = endpoint(Config::default());
    let first = pieces(guid(1), &message(30), 10).swap_remove(0);
    b.handle_message(t0, peer(1), &packet(first.clone()));
    b.handle_message(t0 + ms(14_000), peer(1), &packet(first));
    b.handle_timeout(t0 + ms(15_000));
    assert_eq!(b.partial_messages(), 1);
    assert_eq!(b.poll_timeout(), Some(t0 + ms(29_000)));
    b.handle_timeout(t0 + ms(29_000));
    assert_eq!(b.partial_messages(), 0);
}
