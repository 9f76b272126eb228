//! The spec's example (MC-DPL4R 4.1) and the basic rules of 2.2 and 3.1, as exchanges.

use super::*;

/// MC-DPL4R 3.1.3, 2.2.2: the first frame is messageid 1, sequence 1, serial 0; a single-frame
/// reliable message has CMD, STA, EOM, RLY, and SAK (nothing was asked for yet, 6 <8>).
#[test]
fn first_frame_starts_at_one() {
    let t0 = base();
    let (mut a, _) = pair(Config::default());
    a.send(t0, addr(B), b"hello", true).unwrap();
    let f = out(&mut a);
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].id_from, f[0].id_to), (A_INDEX, B_INDEX));
    let d = data(&f[0]);
    assert_eq!((d.message_id, d.sequence, d.serial), (1, 1, 0));
    let all = ReliableFlags::CMD | ReliableFlags::STA | ReliableFlags::EOM | ReliableFlags::RLY;
    assert_eq!(d.flags, all | ReliableFlags::SAK);
    assert_eq!(d.data.0, b"hello");
}

/// MC-DPL4R 4.1 as our sender plays it (numbering from 1 as 3.1.3 requires, F-30): message
/// 1 is three reliable frames, serials 0, 1, 2, answered by one ACK of its last sequence;
/// message 2 is one unreliable frame; message 3 is one reliable frame that is lost; message 4
/// is two unreliable frames, whose arrival is answered by an ACK of the in-order point, not a
/// NACK (6 <2>); the retry timer resends message 3 with serial 1 and everything is delivered.
/// `spec_examples.rs` has the example's own bytes, numbered from 0.
#[test]
fn spec_example_4_1() {
    let t0 = base();
    let (mut a, mut b) = pair(small());

    // 4.1.1: three frames, STA ... EOM, serial 0, 1, 2; ACK of sequence 3.
    let m1 = bytes_of(3 * DATA, 1);
    a.send(t0, addr(B), &m1, true).unwrap();
    let f = out(&mut a);
    let shape: Vec<_> = f.iter().map(|f| (data(f).message_id, data(f).sequence, data(f).serial)).collect();
    assert_eq!(shape, [(1, 1, 0), (1, 2, 1), (1, 3, 2)]);
    assert!(data(&f[0]).flags.contains(ReliableFlags::STA | ReliableFlags::RLY));
    assert!(!data(&f[1]).flags.intersects(ReliableFlags::STA | ReliableFlags::EOM));
    assert!(data(&f[2]).flags.contains(ReliableFlags::EOM | ReliableFlags::RLY));
    feed(&mut b, t0, A, &f);
    assert_eq!(delivered(&mut b), [(1, true, m1)]);
    let acks = out(&mut b);
    let last = acks.last().map(ack).unwrap();
    assert_eq!((last.message_id, last.sequence, last.serial), (1, 3, 2));
    // 3.1.5.4: bytes received is every data frame after the player indexes: 3 × (4 + 10).
    assert_eq!(last.bytes_received, 42);
    feed(&mut a, t0, B, &acks);

    // 4.1.2: one unreliable frame: STA, EOM, no RLY.
    a.send(t0, addr(B), b"two", false).unwrap();
    let m2 = out(&mut a);
    let d = data(&m2[0]);
    assert_eq!((d.message_id, d.sequence, d.serial), (2, 4, 0));
    assert!(
        d.flags.contains(ReliableFlags::STA | ReliableFlags::EOM) && !d.flags.contains(ReliableFlags::RLY)
    );
    feed(&mut b, t0, A, &m2);
    let a2 = out(&mut b);
    assert_eq!(ack(&a2[0]).sequence, 4, "end of message: ACK now");
    feed(&mut a, t0, B, &a2);

    // 4.1.3: message 3 is lost; message 4's frames arrive.
    a.send(t0, addr(B), b"three", true).unwrap();
    let lost = out(&mut a);
    assert_eq!(data(&lost[0]).sequence, 5);
    let m4 = bytes_of(2 * DATA, 4);
    a.send(t0, addr(B), &m4, false).unwrap();
    let f4 = out(&mut a);
    let shape: Vec<_> = f4.iter().map(|f| (data(f).message_id, data(f).sequence, data(f).serial)).collect();
    assert_eq!(shape, [(4, 6, 0), (4, 7, 1)]);
    feed(&mut b, t0, A, &f4);
    // Message 4 is unreliable and whole: handed up without waiting for message 3.
    let got = delivered(&mut b);
    assert_eq!(got, [(2, false, b"two".to_vec()), (4, false, m4)]);
    b.handle_timeout(t0 + ms(50));
    let answers = out(&mut b);
    let named: Vec<_> = answers.iter().map(|f| (ack(f).message_id, ack(f).sequence)).collect();
    assert_eq!(named, [(4, 7), (2, 4)], "message 4 by name, then the in-order point; no NACK");

    // The retry: same messageid and sequence, serial 1, SAK (6 <8>).
    feed(&mut a, t0 + ms(1), B, &answers);
    a.handle_timeout(t0 + ms(600));
    let retry = out(&mut a);
    let d = data(&retry[0]);
    assert_eq!((d.message_id, d.sequence, d.serial), (3, 5, 1));
    assert!(d.flags.contains(ReliableFlags::SAK | ReliableFlags::RLY));
    feed(&mut b, t0 + ms(600), A, &retry);
    assert_eq!(delivered(&mut b), [(3, true, b"three".to_vec())]);
    let fin = out(&mut b);
    let named: Vec<_> = fin.iter().map(|f| (ack(f).message_id, ack(f).sequence)).collect();
    assert_eq!(named, [(4, 7), (3, 5)], "the in-order point, and message 3 by name");
    feed(&mut a, t0 + ms(600), B, &fin);
    assert_eq!(a.link_info(addr(B)).unwrap().in_flight, 0);
}

/// MC-DPL4R 2.2.4, 3.1.2: an ACK acknowledges its sequence and all before it; echoing the
/// serial of the send it answers gives a round-trip sample, and the retry time-out becomes
/// the average plus three deviations.
#[test]
fn ack_is_cumulative_and_measures_the_round_trip() {
    let t0 = base();
    let (mut a, mut b) = pair(small());
    assert_eq!(a.link_info(addr(B)).unwrap().rto, ms(1000), "1 s before any sample");
    a.send(t0, addr(B), &bytes_of(4 * DATA, 0), true).unwrap();
    let f = out(&mut a);
    assert_eq!(a.link_info(addr(B)).unwrap().in_flight, 4);
    feed(&mut b, t0 + ms(40), A, &f);
    let acks = out(&mut b);
    assert_eq!(acks.len(), 2, "an ACK for the SAK on frame 1 and one for the end of message");
    feed(&mut a, t0 + ms(80), B, &acks[1..]);
    let info = a.link_info(addr(B)).unwrap();
    assert_eq!(info.in_flight, 0);
    assert_eq!(info.srtt, Some(ms(80)));
    assert_eq!(info.rto, ms(80) + ms(40) * 3);
    // The earlier ACK now acknowledges nothing new: counted as stale, otherwise harmless.
    feed(&mut a, t0 + ms(81), B, &acks[..1]);
    assert_dropped(&a, DropReason::StaleAck, 1);
    assert_eq!(a.link_info(addr(B)).unwrap().srtt, Some(ms(80)));
}

/// MC-DPL4R 3.1.5.2: a reliable frame received again (its ACK was lost) is answered with an
/// ACK and not delivered twice.
#[test]
fn duplicate_is_acknowledged_again() {
    let t0 = base();
    let (mut a, mut b) = pair(Config::default());
    a.send(t0, addr(B), b"once", true).unwrap();
    let f = out(&mut a);
    feed(&mut b, t0, A, &f);
    assert_eq!(delivered(&mut b).len(), 1);
    let _lost_ack = out(&mut b);
    feed(&mut b, t0 + ms(5), A, &f);
    assert!(delivered(&mut b).is_empty());
    assert_dropped(&b, DropReason::Duplicate, 1);
    assert_eq!(ack(&out(&mut b)[0]).sequence, 1);
}

/// MC-DPL4R 3.1.2: a lost frame is resent when the retry timer expires (1 s at first), with
/// its serial advanced and SAK; the time-out doubles until an ACK arrives.
#[test]
fn retry_timer_resends_and_backs_off() {
    let t0 = base();
    let (mut a, mut b) = pair(Config::default());
    a.send(t0, addr(B), b"x", true).unwrap();
    let _lost = out(&mut a);
    assert_eq!(a.poll_timeout(), Some(t0 + ms(1000)));
    a.handle_timeout(t0 + ms(999));
    assert!(out(&mut a).is_empty());
    a.handle_timeout(t0 + ms(1000));
    let r = out(&mut a);
    assert_eq!((data(&r[0]).sequence, data(&r[0]).serial), (1, 1));
    assert!(data(&r[0]).flags.contains(ReliableFlags::SAK));
    assert_eq!(a.poll_timeout(), Some(t0 + ms(3000)), "backed off to 2 s");
    assert_eq!(a.stats().frames_resent, 1);
    feed(&mut b, t0 + ms(1010), A, &r);
    feed(&mut a, t0 + ms(1020), B, &out(&mut b));
    assert_eq!(a.poll_timeout(), None);
    assert_eq!(a.link_info(addr(B)).unwrap().srtt, Some(ms(20)), "the ACK echoes serial 1");
}

/// MC-DPL4R 3.1.2 with the give-up of MC-DPL4CS 3.1.6.1: a link whose oldest frame was sent
/// 16 times over at least 60 s fails, reports it, and closes.
#[test]
fn give_up_fails_the_link() {
    let t0 = base();
    let (mut a, _) = pair(Config::default());
    a.send(t0, addr(B), b"into the void", true).unwrap();
    let _first = out(&mut a);
    let mut now = t0;
    let mut sends = 1;
    while let Some(at) = a.poll_timeout() {
        now = at;
        a.handle_timeout(now);
        sends += out(&mut a).len();
        assert!(now - t0 < Duration::from_secs(200), "gave up in time");
    }
    let ev = events(&mut a);
    let [Event::LinkFailed { peer, sends: n, elapsed }] = ev.as_slice() else { panic!("{ev:?}") };
    assert_eq!((*peer, *n as usize), (addr(B), sends));
    assert!(*n >= 16 && *elapsed >= Duration::from_secs(60));
    assert!(!a.has_link(addr(B)));
    assert_eq!(a.send(now, addr(B), b"more", true), Err(SendError::NoLink(addr(B))));
    assert_eq!(a.stats().links_failed, 1);
}

/// MC-DPL4R 3.1.3: an ACK MAY wait for a timer unless SAK or the end of a message asks for
/// it; a middle frame without SAK is acknowledged after `ack_delay`.
#[test]
fn delayed_ack_for_frames_without_sak() {
    let t0 = base();
    let (mut a, mut b) = pair(small());
    a.send(t0, addr(B), &bytes_of(3 * DATA, 0), true).unwrap();
    let f = out(&mut a);
    assert!(!data(&f[1]).flags.contains(ReliableFlags::SAK), "50 ms have not passed (6 <8>)");
    feed(&mut b, t0, A, &f[..1]);
    assert_eq!(out(&mut b).len(), 1, "SAK: ACK now");
    feed(&mut b, t0 + ms(1), A, &f[1..2]);
    assert!(out(&mut b).is_empty(), "no SAK, no end of message: wait");
    assert_eq!(b.poll_timeout(), Some(t0 + ms(51)));
    b.handle_timeout(t0 + ms(51));
    assert_eq!(ack(&out(&mut b)[0]).sequence, 2);
}

/// MC-DPL4R 6 <8>: SAK every 24 frames even when nothing else asks for it, and on every
/// retransmission.
#[test]
fn sak_every_24_frames() {
    let t0 = base();
    let (mut a, _) = pair(small());
    a.send(t0, addr(B), &bytes_of(30 * DATA, 0), true).unwrap();
    let saks: Vec<u8> = out(&mut a)
        .iter()
        .map(data)
        .filter(|d| d.flags.contains(ReliableFlags::SAK))
        .map(|d| d.sequence)
        .collect();
    assert_eq!(saks, [1, 25]);
}

/// MC-DPL4R 2.2.4, 3.1.5.4: the peer's receive rate follows from `bytes received` over
/// `local tick count` between two of its ACKs.
#[test]
fn peer_receive_rate_from_two_acks() {
    let t0 = base();
    let (mut a, _) = pair(Config::default());
    a.send(t0, addr(B), b"a", true).unwrap();
    a.send(t0, addr(B), b"b", true).unwrap();
    let _ = out(&mut a);
    let ack_of = |seq, bytes, tick| ReliableFrame {
        id_from: B_INDEX,
        id_to: A_INDEX,
        body: FrameBody::Ack(AckFrame {
            flags: ReliableFlags::ACK,
            message_id: seq,
            sequence: seq,
            serial: 9,
            bytes_received: bytes,
            local_tick_count: tick,
        }),
    };
    feed(&mut a, t0 + ms(10), B, &[ack_of(1, 1000, 5000)]);
    assert_eq!(a.link_info(addr(B)).unwrap().peer_receive_rate, None);
    feed(&mut a, t0 + ms(20), B, &[ack_of(2, 3000, 5500)]);
    let info = a.link_info(addr(B)).unwrap();
    assert_eq!((info.peer_bytes_received, info.peer_receive_rate), (3000, Some(4000)));
    assert_eq!(info.srtt, None, "serial 9 echoes no send");
}

/// MC-DPL4R 3.1.5.3: a NACK acknowledges everything before its sequence; its 1 bits are resent
/// at once, and its 0 bits (below the last 1) mark frames the peer holds, which the retry
/// timer then leaves alone.
#[test]
fn nack_acknowledges_before_and_marks_held() {
    let t0 = base();
    let (mut a, _) = pair(small());
    a.send(t0, addr(B), &bytes_of(6 * DATA, 0), true).unwrap();
    assert_eq!(out(&mut a).len(), 6);
    let nack_frame = ReliableFrame {
        id_from: B_INDEX,
        id_to: A_INDEX,
        body: FrameBody::Nack(NackFrame {
            flags: ReliableFlags::ACK | ReliableFlags::EXT,
            message_id: 1,
            sequence: 3,
            bytes_received: 28,
            local_tick_count: 0,
            // Sequence 3 and 5 missing (bit 1 = 3 + 1 + 1), 4 held; 6 and later unknown.
            nack: dplay_wire::dp4::reliable::NackMask { len: 1, bits: 0b10 },
        }),
    };
    feed(&mut a, t0 + ms(10), B, &[nack_frame]);
    let resent: Vec<u8> = out(&mut a).iter().map(|f| data(f).sequence).collect();
    assert_eq!(resent, [3, 5]);
    assert_eq!(a.link_info(addr(B)).unwrap().in_flight, 4, "1 and 2 acknowledged");
    a.handle_timeout(t0 + ms(1000));
    let by_timer: Vec<u8> = out(&mut a).iter().map(|f| data(f).sequence).collect();
    assert_eq!(by_timer, [6], "4 is held; 3 and 5 were just resent");
}
