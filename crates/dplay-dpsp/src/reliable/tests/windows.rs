//! The windows (MC-DPL4R 2.2.2, 3.1.5.2) and ordered and unordered delivery (3.1.1).

use super::*;

/// MC-DPL4R 2.2.2: "There MUST NOT be more than 24 outstanding messageid(s) on any link";
/// the 25th message waits for an ACK.
#[test]
fn at_most_24_messages_outstanding() {
    let t0 = base();
    let (mut a, mut b) = pair(Config::default());
    for i in 0..30u8 {
        a.send(t0, addr(B), &[i], true).unwrap();
    }
    let f = out(&mut a);
    assert_eq!(f.len(), 24);
    assert_eq!(data(&f[23]).message_id, 24);
    feed(&mut b, t0, A, &f[..1]);
    feed(&mut a, t0, B, &out(&mut b));
    let more = out(&mut a);
    assert_eq!(more.iter().map(|f| data(f).message_id).collect::<Vec<_>>(), [25]);
}

/// `Config::window`: at most that many frames in flight, even within one message.
#[test]
fn frame_window_limits_a_big_message() {
    let t0 = base();
    let (mut a, mut b) = pair(Config { window: 8, ..small() });
    let big = bytes_of(20 * DATA + 3, 7);
    a.send(t0, addr(B), &big, true).unwrap();
    assert_eq!(out(&mut a).len(), 8);
    a.close_link(addr(B));
    a.open_link(addr(B), A_INDEX, B_INDEX).unwrap();
    a.send(t0, addr(B), &big, true).unwrap();
    run(&mut a, &mut b, t0);
    assert_eq!(delivered(&mut b), [(1, true, big)]);
}

/// MC-DPL4R 3.1.1 "Reliable Receive Queue ... maintaining their order": on an ordered link a
/// reliable message waits for the one lost before it, which the retry timer resends; the gap
/// is never answered with a NACK (6 <2>).
#[test]
fn ordered_link_holds_reliable_messages_back() {
    let t0 = base();
    let (mut a, mut b) = pair(Config::default());
    a.send(t0, addr(B), b"first", true).unwrap();
    let _lost = out(&mut a);
    a.send(t0, addr(B), b"second", true).unwrap();
    feed(&mut b, t0, A, &out(&mut a));
    assert!(delivered(&mut b).is_empty());
    assert!(out(&mut b).iter().all(|f| !matches!(f.body, FrameBody::Nack(_))));
    a.handle_timeout(t0 + ms(1000));
    feed(&mut b, t0 + ms(1000), A, &out(&mut a));
    let got: Vec<_> = delivered(&mut b).into_iter().map(|(id, _, d)| (id, d)).collect();
    assert_eq!(got, [(1, b"first".to_vec()), (2, b"second".to_vec())]);
    assert_eq!(b.stats().nacks_sent, 0);
}

/// DPSESSION_NOPRESERVEORDER (MC-DPL4CS 1.3): on an unordered link a whole message goes up
/// at once, and later only the missing one.
#[test]
fn unordered_link_delivers_at_once() {
    let t0 = base();
    let (mut a, mut b) = pair(Config { ordered: false, ..Config::default() });
    a.send(t0, addr(B), b"first", true).unwrap();
    let lost = out(&mut a);
    a.send(t0, addr(B), b"second", true).unwrap();
    feed(&mut b, t0, A, &out(&mut a));
    assert_eq!(delivered(&mut b), [(2, true, b"second".to_vec())]);
    feed(&mut b, t0, A, &lost);
    assert_eq!(delivered(&mut b), [(1, true, b"first".to_vec())]);
    let _ = out(&mut b);
    // The in-order point passed message 2 without handing it up again.
    feed(&mut b, t0, A, &lost);
    assert!(delivered(&mut b).is_empty());
}

/// MC-DPL4R 3.1.5.2: a messageid behind the earliest ongoing receive (or half the space
/// ahead) is ignored; a sequence behind the in-order point is a duplicate. One 24 or more
/// ahead is kept: it is what lets stale unreliable messages go (`windows_peer.rs`).
#[test]
fn frames_outside_the_windows_are_ignored() {
    let t0 = base();
    let (_, mut b) = pair(Config::default());
    let all = ReliableFlags::STA | ReliableFlags::EOM | ReliableFlags::RLY;
    feed(&mut b, t0, A, &[frame(all, 1, 1, b"ok")]);
    assert_eq!(delivered(&mut b).len(), 1);
    feed(&mut b, t0, A, &[frame(all, 2 + 200, 2, b"far")]);
    assert_dropped(&b, DropReason::OutOfWindow, 1);
    feed(&mut b, t0, A, &[frame(all, 2, 200, b"behind")]);
    assert_dropped(&b, DropReason::Duplicate, 1);
    assert!(delivered(&mut b).is_empty());
}

/// MC-DPL4R 3.1.5.4: bytes received counts every data frame, duplicates included, without
/// the player indexes.
#[test]
fn bytes_received_counts_duplicates() {
    let t0 = base();
    let (_, mut b) = pair(Config::default());
    let f = frame(ReliableFlags::STA | ReliableFlags::EOM | ReliableFlags::RLY, 1, 1, b"12345");
    feed(&mut b, t0, A, &[f.clone(), f]);
    assert_eq!(b.link_info(addr(A)).unwrap().bytes_received, 18);
}

proptest::proptest! {
    /// MC-DPL4R 3.1.5.2, 3.1.5.3 under any pattern of lost and duplicated frames (both ways):
    /// every reliable message arrives exactly once and in order.
    #[test]
    fn any_loss_pattern_delivers_exactly_once_in_order(
        pattern in proptest::collection::vec(0..4u8, 1..64),
        sizes in proptest::collection::vec(0..40usize, 1..20),
    ) {
        let t0 = base();
        let (mut a, mut b) = pair(small());
        for (i, &len) in sizes.iter().enumerate() {
            a.send(t0, addr(B), &bytes_of(len, i as u8), true).unwrap();
        }
        // 0: lost, 3: duplicated, else delivered; cycling through `pattern`. Losses stop after
        // 12 frames, fewer than the 16 sends of one frame that make the link give up (which
        // `give_up_fails_the_link` covers).
        let mut step = 0usize;
        let mut fate = || -> usize {
            step += 1;
            match pattern[step % pattern.len()] {
                0 if step < 12 => 0,
                3 => 2,
                _ => 1,
            }
        };
        let mut now = t0;
        for _ in 0..2000 {
            let (fa, fb) = (out(&mut a), out(&mut b));
            for f in &fa {
                for _ in 0..fate() {
                    b.handle_frame(now, addr(A), f);
                }
            }
            for f in &fb {
                for _ in 0..fate() {
                    a.handle_frame(now, addr(B), f);
                }
            }
            if fa.is_empty() && fb.is_empty() {
                let Some(next) = [a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min() else { break };
                now = now.max(next);
                a.handle_timeout(now);
                b.handle_timeout(now);
            }
        }
        let got: Vec<Vec<u8>> = delivered(&mut b).into_iter().map(|(_, _, d)| d).collect();
        let want: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &len)| bytes_of(len, i as u8)).collect();
        proptest::prop_assert_eq!(got, want);
    }
}
