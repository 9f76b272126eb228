//! MC-DPL4R 3.1.5.2 "+24" against a Windows sender, which never resends unreliable frames
//! (6 <2>): an incomplete unreliable message is discarded as soon as a frame 24 or more
//! messageids newer arrives, so one lost position update never freezes the link.

use super::*;

const ONE: ReliableFlags = ReliableFlags::STA.union(ReliableFlags::EOM);

/// A single-frame message `id` at sequence `id` (a peer numbering from 0, 4.1).
fn msg(id: u8, reliable: bool) -> ReliableFrame {
    let flags = if reliable { ONE | ReliableFlags::RLY } else { ONE };
    frame(flags, id, id, &[id])
}

fn ids(got: &[(u8, bool, Vec<u8>)]) -> Vec<u8> {
    got.iter().map(|d| d.0).collect()
}

/// (messageid, sequence) of every frame sent, all of them ACKs.
fn acks(e: &mut Reliable) -> Vec<(u8, u8)> {
    let f = out(e);
    assert!(f.iter().all(|f| matches!(f.body, FrameBody::Ack(_))), "only ACKs: {f:?}");
    f.iter().map(|f| (ack(f).message_id, ack(f).sequence)).collect()
}

/// Message 1 (unreliable) is lost; reliable 2..=24 wait for it; message 25, 24 after it,
/// lets it go: 2..=25 are handed up in order and the ACK moves to 25.
#[test]
fn lost_unreliable_frame_is_passed_24_messages_later() {
    let t0 = base();
    let (_, mut b) = pair(Config::default());
    feed(&mut b, t0, A, &[msg(0, true)]);
    assert_eq!(ids(&delivered(&mut b)), [0]);
    for id in 2..=24 {
        feed(&mut b, t0, A, &[msg(id, true)]);
    }
    assert!(delivered(&mut b).is_empty(), "23 after: message 1 may still be outstanding");
    // Each message held whole past the hole is acknowledged by name (a Windows sender frees
    // only what an ACK names, and may have only 24 outstanding); never a NACK.
    let named: Vec<(u8, u8)> = (2..=24).map(|i| (i, i)).collect();
    assert_eq!(acks(&mut b)[1..], named[..]);
    feed(&mut b, t0, A, &[msg(25, true)]);
    assert_eq!(ids(&delivered(&mut b)), (2..=25).collect::<Vec<_>>());
    assert_eq!(acks(&mut b), [(25, 25)], "the in-order point, past the hole");
    assert_eq!(b.stats().nacks_sent, 0);
}

/// "At least 24, not exactly": message 25 is lost too, and 26 lets 1 go; 49 lets 25 go, and
/// the reliable 26 goes up then.
#[test]
fn a_newer_frame_than_plus_24_also_lets_it_go() {
    let t0 = base();
    let (_, mut b) = pair(Config::default());
    feed(&mut b, t0, A, &[msg(0, false)]);
    for id in (2..=24).chain([26]) {
        feed(&mut b, t0, A, &[msg(id, true)]);
    }
    assert_eq!(ids(&delivered(&mut b)), [0].into_iter().chain(2..=24).collect::<Vec<_>>());
    assert!(acks(&mut b).contains(&(24, 24)));
    for id in 27..=48 {
        feed(&mut b, t0, A, &[msg(id, false)]);
    }
    assert!(!ids(&delivered(&mut b)).contains(&26), "25 may still be outstanding");
    feed(&mut b, t0, A, &[msg(49, false)]);
    assert_eq!(ids(&delivered(&mut b)), [49, 26]);
    assert!(acks(&mut b).contains(&(49, 49)));
}

/// A multi-frame unreliable message missing its middle frame is discarded whole
/// ([`DropReason::Abandoned`]); the link goes on.
#[test]
fn partial_unreliable_message_is_abandoned() {
    let t0 = base();
    let (_, mut b) = pair(Config::default());
    feed(&mut b, t0, A, &[frame(ReliableFlags::STA, 0, 0, b"a"), frame(ReliableFlags::EOM, 0, 2, b"c")]);
    for id in 1..=24 {
        feed(&mut b, t0, A, &[frame(ONE | ReliableFlags::RLY, id, id + 2, &[id])]);
    }
    assert_eq!(ids(&delivered(&mut b)), (1..=24).collect::<Vec<_>>());
    assert_dropped(&b, DropReason::Abandoned, 1);
    assert!(acks(&mut b).contains(&(24, 26)));
}

/// A frame whose start was lost with a stale message is passed over with the rest of that
/// message, not taken for a new one.
#[test]
fn rest_of_a_stale_message_is_passed_over() {
    let t0 = base();
    let (_, mut b) = pair(Config::default());
    feed(&mut b, t0, A, &[msg(0, true)]);
    // Message 1: sequences 1 (lost), 2, 3; then 2..=25 at 4..=27.
    feed(&mut b, t0, A, &[frame(ReliableFlags::empty(), 1, 2, b"b"), frame(ReliableFlags::EOM, 1, 3, b"c")]);
    for id in 2..=25 {
        feed(&mut b, t0, A, &[frame(ONE | ReliableFlags::RLY, id, id + 2, &[id])]);
    }
    assert_eq!(ids(&delivered(&mut b)), [0].into_iter().chain(2..=25).collect::<Vec<_>>());
    assert!(acks(&mut b).contains(&(25, 27)));
}
