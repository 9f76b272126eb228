//! Timers and disconnects (MC-DPL8R 3.1.2, 3.1.4.3, 3.1.4.5, 3.1.6).

use dplay_wire::dp8::cframe::{Cframe, HardDisconnect, Masks, Sack};
use dplay_wire::dp8::dframe::{DframeCommand, DframeControl};

use super::*;
use crate::{DisconnectReason, DropReason, MessageKind, PROTOCOL_VERSION};

fn hard_disconnect(sess_id: u32) -> Cframe {
    Cframe::HardDisconnect(HardDisconnect {
        fields: connect_fields(false, 5, 0, PROTOCOL_VERSION, sess_id),
        signature: None,
    })
}

/// MC-DPL8R 3.1.2.5, 3.1.6.5: an unacknowledged reliable frame is retried with the original
/// bSeq, RETRY and POLL after RTT + 4 deviations (at least 30 ms; decision in docs/decisions.md),
/// then with linear and exponential backoff capped at 5 s; after 10 retries the connection is
/// lost with a reason.
#[test]
fn retry_backoff_then_exhaustion() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.ep.send(h.now, peer(), b"lost", MessageKind::RELIABLE_SEQUENTIAL).unwrap();
    let first = h.sent();
    assert_eq!(first[0].dframe().header.seq, 1);
    let rtt = h.ep.stats(peer()).unwrap().rtt.unwrap();
    let mut waits = Vec::new();
    let mut waited = Duration::ZERO;
    while h.ep.connection_count() == 1 {
        waited += h.next_timer();
        if let Some(Sent::D(d)) = h.sent().iter().find(|s| matches!(s, Sent::D(_))) {
            assert_eq!(d.header.seq, 1);
            assert!(d.header.control().contains(DframeControl::RETRY));
            assert!(d.header.command.contains(DframeCommand::POLL));
            waits.push(std::mem::take(&mut waited));
        }
    }
    let five = Duration::from_secs(5);
    let base = waits[0];
    assert!(base >= ms(30) && base <= rtt * 5 / 2 + ms(100));
    let expect: Vec<Duration> =
        [1, 2, 3, 6, 12, 24, 48, 96, 96, 96].iter().map(|&k| (base * k).min(five)).collect();
    assert_eq!(waits, expect);
    assert!(matches!(
        h.events()[..],
        [Event::Disconnected { reason: DisconnectReason::RetriesExhausted, .. }]
    ));
    assert_eq!(h.ep.stats(peer()), None);
}

/// MC-DPL8R 3.1.6.5, 3.1.2.3, 3.1.6.3: an unreliable frame that times out is not resent; its
/// seq goes into the send mask, sent in a SACK after the 40 ms delayed send mask timer.
#[test]
fn unreliable_timeout_goes_into_the_send_mask() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.ep.send(h.now, peer(), b"gone", MessageKind::SEQUENTIAL).unwrap();
    h.sent();
    assert!(h.next_timer() >= ms(30));
    assert!(h.sent().is_empty());
    assert_eq!(h.next_timer(), ms(40));
    let sack = *h.sent()[0].sack();
    assert_eq!((sack.n_seq, sack.masks.send()), (2, 1));
    assert_eq!(h.ep.stats(peer()).unwrap().send_masked, 1);
    // The peer's bNRcv passing it ends the announcements.
    h.feed_d(data(REL_SEQ | DframeCommand::POLL, 1, 2), b"ack");
    let ack = h.sent();
    assert_eq!(ack[0].sack().masks.send(), 0);
}

/// MC-DPL8R 3.1.2.6, 3.1.6.6: after 25 s with nothing received (4 s granularity) a KeepAlive
/// goes out: REL|SEQ|END_MSG, KEEPALIVE_OR_CORRELATE and the connection's dwSessID.
#[test]
fn keepalive_after_silence() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.advance(Duration::from_secs(24));
    assert!(h.sent().is_empty());
    h.advance(Duration::from_secs(5));
    let sent = h.sent();
    let ka = sent[0].dframe();
    assert!(ka.header.is_keepalive());
    assert_eq!(ka.header.sess_id, Some(SESS));
    assert!(
        ka.header
            .command
            .contains(DframeCommand::RELIABLE | DframeCommand::SEQUENTIAL | DframeCommand::END_MSG)
    );
    assert!(ka.payload.is_empty());
}

/// MC-DPL8R 3.1.5.2: a KeepAlive with another dwSessID is ignored.
#[test]
fn keepalive_with_forged_session_id_is_ignored() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    let mut ka = data(REL_SEQ | DframeCommand::POLL, 1, 1);
    ka.control = DframeControl::KEEPALIVE_OR_CORRELATE;
    ka.sess_id = Some(SESS ^ 0xFF);
    h.feed_d(ka, &[]);
    assert!(h.sent().is_empty());
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::BadSessionId), 1);
}

/// MC-DPL8R 3.1.4.3, MS-DPDX 3.1.5.3: the peer's END_STREAM is acknowledged (four SACKs), we
/// answer with our own END_STREAM, and once that is acknowledged the connection ends with
/// ClosedByPeer.
#[test]
fn graceful_close_by_the_peer() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    let mut end = data(REL_SEQ | DframeCommand::POLL, 1, 1);
    end.control = DframeControl::END_STREAM;
    h.feed_d(end, &[]);
    let sent = h.sent();
    let ours = sent.iter().find(|s| matches!(s, Sent::D(_))).unwrap().dframe();
    assert!(ours.header.control().contains(DframeControl::END_STREAM));
    let sacks = sent.iter().filter(|s| matches!(s, Sent::C(Cframe::Sack(_)))).count();
    assert_eq!(sacks, 4);
    h.feed_c(Cframe::Sack(Sack {
        poll: false,
        response: true,
        retry: 0,
        n_seq: 2,
        n_rcv: ours.header.seq.wrapping_add(1),
        timestamp: 0,
        masks: Masks::default(),
        signature: None,
    }));
    assert!(matches!(h.events()[..], [Event::Disconnected { reason: DisconnectReason::ClosedByPeer, .. }]));
    // Lingering: a retried END_STREAM is still acknowledged, then the connection goes away.
    let mut again = data(REL_SEQ | DframeCommand::POLL, 1, 3);
    again.control = DframeControl::END_STREAM | DframeControl::RETRY;
    h.feed_d(again, &[]);
    assert!(!h.sent().is_empty());
    h.advance(Duration::from_secs(11));
    assert_eq!(h.ep.connection_count(), 0);
}

/// MC-DPL8R 3.1.4.3 (a disconnect crossing another): both sides send END_STREAM at once; each
/// acknowledges the other's and both end gracefully, each saying it closed.
#[test]
fn disconnects_cross() {
    let now = origin();
    let (a_addr, b_addr): (SocketAddr, SocketAddr) = ("198.51.100.1:2302".parse().unwrap(), peer());
    let mut a = Endpoint::new(Config::default(), now);
    let mut b = Endpoint::new(Config::default().with_seed(9), now);
    a.connect(now, b_addr).unwrap();
    let mut t = now;
    let shuttle = |a: &mut Endpoint, b: &mut Endpoint, t: Instant| {
        for _ in 0..20 {
            while let Some(x) = a.poll_transmit() {
                b.handle_datagram(t, a_addr, &x.contents);
            }
            while let Some(x) = b.poll_transmit() {
                a.handle_datagram(t, b_addr, &x.contents);
            }
        }
    };
    shuttle(&mut a, &mut b, t);
    t += ms(200);
    a.handle_timeout(t);
    b.handle_timeout(t);
    shuttle(&mut a, &mut b, t);
    a.disconnect(t, b_addr);
    b.disconnect(t, a_addr);
    shuttle(&mut a, &mut b, t);
    let reason = |ep: &mut Endpoint| {
        std::iter::from_fn(|| ep.poll_event()).find_map(|e| match e {
            Event::Disconnected { reason, .. } => Some(reason),
            _ => None,
        })
    };
    assert_eq!(reason(&mut a), Some(DisconnectReason::Closed));
    assert_eq!(reason(&mut b), Some(DisconnectReason::Closed));
}

/// MC-DPL8R 3.1.4.5, 3.1.2.4, 3.1.6.4: a hard disconnect drops what is queued, is reported at
/// once, and sends three HARD_DISCONNECT frames spaced by RTT/2 (at least 10 ms).
#[test]
fn hard_disconnect_sends_three() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.ep.send(h.now, peer(), b"dropped", MessageKind::RELIABLE).unwrap();
    h.sent();
    h.ep.abort(h.now, peer());
    assert!(matches!(h.events()[..], [Event::Disconnected { reason: DisconnectReason::Aborted, .. }]));
    assert!(matches!(h.sent()[..], [Sent::C(Cframe::HardDisconnect(f))] if f.fields.sess_id == SESS));
    assert_eq!(h.next_timer(), ms(10));
    assert!(matches!(h.sent()[..], [Sent::C(Cframe::HardDisconnect(_))]));
    assert_eq!(h.next_timer(), ms(10));
    assert!(matches!(h.sent()[..], [Sent::C(Cframe::HardDisconnect(_))]));
    h.next_timer();
    assert!(h.sent().is_empty());
    assert_eq!(h.ep.connection_count(), 0);
}

/// MC-DPL8R 3.1.5.1.4: an unsolicited HARD_DISCONNECT with our dwSessID is answered with three
/// HARD_DISCONNECTs and ends the connection; one with another dwSessID is ignored.
#[test]
fn hard_disconnect_from_the_peer() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed_c(hard_disconnect(SESS ^ 1));
    assert!(h.sent().is_empty());
    h.feed_c(hard_disconnect(SESS));
    assert_eq!(h.sent().len(), 3);
    assert!(matches!(h.events()[..], [Event::Disconnected { reason: DisconnectReason::AbortedByPeer, .. }]));
    assert_eq!(h.ep.connection_count(), 0);
}
