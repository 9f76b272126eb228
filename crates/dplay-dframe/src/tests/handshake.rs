//! The handshake (MC-DPL8R 2.2.1.1-2, 3.1.5.1.1-2, 3.1.6.1; INDEX E.1).

use dplay_wire::dp8::cframe::Cframe;
use dplay_wire::dp8::dframe::{DframeCommand, DframeControl};

use super::*;
use crate::{DisconnectReason, DropReason, PROTOCOL_VERSION};

#[track_caller]
fn connect_of(sent: &[Sent]) -> ConnectFields {
    match sent {
        [Sent::C(Cframe::Connect(f))] => *f,
        other => panic!("expected one CONNECT, got {other:?}"),
    }
}

#[track_caller]
fn connected_of(sent: &[Sent]) -> ConnectFields {
    match sent {
        [Sent::C(Cframe::Connected(f))] => *f,
        other => panic!("expected one CONNECTED, got {other:?}"),
    }
}

fn connector() -> (Harness, ConnectFields) {
    let mut h = Harness::new(Config::default());
    h.ep.connect(h.now, peer()).unwrap();
    let f = connect_of(&h.sent());
    (h, f)
}

/// MC-DPL8R 2.2.1.1, INDEX E.1 step 1: CONNECT sets POLL, bMsgID 0, bRspId 0, our version,
/// a non-zero dwSessID.
#[test]
fn connect_carries_poll_version_and_session_id() {
    let (_, f) = connector();
    assert!(f.poll);
    assert_eq!((f.msg_id, f.rsp_id), (0, 0));
    assert_eq!(f.protocol_version, PROTOCOL_VERSION);
    assert_ne!(f.sess_id, 0);
}

/// MC-DPL8R 3.1.2.1, 3.1.6.1, 2.2.1.1 (CONNECT lost every time): retries after 200 ms doubling
/// to 5 s, the same dwSessID with bMsgID + 1; after 14 retries the attempt fails.
#[test]
fn connect_lost_retries_doubling_then_times_out() {
    let (mut h, first) = connector();
    let mut waits = Vec::new();
    for retry in 1..=14u8 {
        waits.push(h.next_timer().as_millis());
        let f = connect_of(&h.sent());
        assert_eq!((f.sess_id, f.msg_id), (first.sess_id, retry));
    }
    assert_eq!(waits, [200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000, 5000, 5000, 5000, 5000, 5000]);
    h.next_timer();
    assert!(h.sent().is_empty());
    assert!(matches!(h.events()[..], [Event::Disconnected { reason: DisconnectReason::ConnectTimeout, .. }]));
    assert_eq!(h.ep.connection_count(), 0);
}

/// MC-DPL8R 3.1.5.1.2, INDEX E.1 steps 3-5: the connector accepts CONNECTED with POLL set and
/// its dwSessID, answers CONNECTED without POLL echoing bMsgID in bRspId, and then sends the
/// KeepAlive `3F 02 00 00 <dwSessID>`.
#[test]
fn connector_completes_and_confirms() {
    let (mut h, f) = connector();
    h.advance(ms(30));
    h.feed_c(Cframe::Connected(connect_fields(true, 0, 0, PROTOCOL_VERSION, f.sess_id)));
    assert!(matches!(h.events()[..], [Event::Connected { outbound: true, .. }]));
    let sent = h.sent();
    let Sent::C(Cframe::Connected(confirm)) = sent[0] else { panic!("{sent:?}") };
    assert!(!confirm.poll);
    assert_eq!((confirm.msg_id, confirm.rsp_id, confirm.sess_id), (1, 0, f.sess_id));
    let ka = sent[1].dframe();
    assert_eq!(ka.header.command.bits(), 0x3F);
    assert_eq!(ka.header.control(), DframeControl::KEEPALIVE_OR_CORRELATE);
    assert_eq!(ka.header.sess_id, Some(f.sess_id));
    assert_eq!(h.ep.stats(peer()).unwrap().rtt, Some(ms(30)));
}

/// MC-DPL8R 3.1.5.1.2: the connector ignores CONNECTED without POLL, with another dwSessID, or
/// with a major version other than 1 (MC-DPL8R 2.2.1.1).
#[test]
fn connector_ignores_bad_connected() {
    let (mut h, f) = connector();
    h.feed_c(Cframe::Connected(connect_fields(false, 0, 0, PROTOCOL_VERSION, f.sess_id)));
    h.feed_c(Cframe::Connected(connect_fields(true, 0, 0, PROTOCOL_VERSION, f.sess_id ^ 1)));
    h.feed_c(Cframe::Connected(connect_fields(true, 0, 0, 0x0002_0006, f.sess_id)));
    assert!(h.sent().is_empty());
    assert!(h.events().is_empty());
    let drops = h.ep.stats(peer()).unwrap().drops;
    assert_eq!(drops.get(DropReason::HandshakeRule), 1);
    assert_eq!(drops.get(DropReason::BadSessionId), 1);
    assert_eq!(drops.get(DropReason::BadVersion), 1);
}

/// MC-DPL8R 3.1.5.1.1, 3.1.6.1 (CONNECTED lost): the listener answers CONNECT with CONNECTED
/// (POLL set, bRspId = bMsgID) and retries it on the connect retry timer with bMsgID + 1.
#[test]
fn connected_lost_listener_retries() {
    let mut h = Harness::new(Config::default());
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    let f = connected_of(&h.sent());
    assert!(f.poll);
    assert_eq!((f.msg_id, f.rsp_id, f.sess_id), (0, 0, SESS));
    assert_eq!(h.next_timer(), ms(200));
    let retry = connected_of(&h.sent());
    assert_eq!((retry.msg_id, retry.rsp_id, retry.poll), (1, 0, true));
    assert!(h.events().is_empty(), "an inbound attempt is reported only when established");
}

/// MC-DPL8R 3.1.5.1.1 (CONNECT duplicated, or both frames lost and CONNECT retried): a CONNECT
/// from a half-open inbound attempt with the same dwSessID gets another CONNECTED at once;
/// with another dwSessID it is ignored.
#[test]
fn duplicate_connect_gets_another_connected() {
    let mut h = Harness::new(Config::default());
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    h.sent();
    h.feed_c(Cframe::Connect(connect_fields(true, 1, 0, PROTOCOL_VERSION, SESS)));
    let again = connected_of(&h.sent());
    assert_eq!((again.msg_id, again.rsp_id), (1, 1));
    h.feed_c(Cframe::Connect(connect_fields(true, 2, 0, PROTOCOL_VERSION, SESS ^ 1)));
    assert!(h.sent().is_empty());
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::BadSessionId), 1);
}

/// MC-DPL8R 3.1.5.1.2: the listener needs POLL clear on the confirmation; POLL set is ignored.
/// Once established, the opening KeepAlive goes out (MC-DPL8R 4.1).
#[test]
fn listener_needs_confirmation_without_poll() {
    let mut h = Harness::new(Config::default());
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    h.sent();
    h.feed_c(Cframe::Connected(connect_fields(true, 1, 0, PROTOCOL_VERSION, SESS)));
    assert!(h.events().is_empty());
    h.feed_c(Cframe::Connected(connect_fields(false, 1, 0, PROTOCOL_VERSION, SESS)));
    assert!(matches!(h.events()[..], [Event::Connected { outbound: false, .. }]));
    assert!(h.sent()[0].dframe().header.is_keepalive());
}

/// MC-DPL8R 3.1.5.1.2 (crossed: a CONNECT retry crosses the CONNECTED, so two CONNECTEDs come
/// back): the second reaches an established connector, which repeats its confirmation; the
/// listener ignores the duplicate confirmation (MC-DPL8R 3.1.5.1.2, last paragraph).
#[test]
fn crossed_retry_and_reply() {
    let (mut c, f) = connector();
    c.next_timer();
    c.sent();
    c.feed_c(Cframe::Connected(connect_fields(true, 0, 0, PROTOCOL_VERSION, f.sess_id)));
    c.feed_c(Cframe::Connected(connect_fields(true, 1, 1, PROTOCOL_VERSION, f.sess_id)));
    let sent = c.sent();
    let confirms: Vec<_> = sent
        .iter()
        .filter_map(|s| if let Sent::C(Cframe::Connected(f)) = s { Some(*f) } else { None })
        .collect();
    assert_eq!(confirms.len(), 2);
    assert!(confirms.iter().all(|f| !f.poll));
    assert_eq!(confirms[1].rsp_id, 1);
    assert_eq!(c.events().len(), 1, "connected once");

    let mut l = established(Config::default(), PROTOCOL_VERSION);
    l.feed_c(Cframe::Connected(connect_fields(false, 2, 0, PROTOCOL_VERSION, SESS)));
    assert!(l.sent().is_empty());
    assert!(l.events().is_empty());
}

/// MC-DPL8R 3.1.5.1.1: a CONNECT from an established peer or from our own pending outbound
/// attempt is ignored; so are CONNECTs while not listening or with major version 2.
#[test]
fn connect_ignore_rules() {
    let mut h = established(Config::default(), PROTOCOL_VERSION);
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    assert!(h.sent().is_empty());

    let (mut c, f) = connector();
    c.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, f.sess_id)));
    assert!(c.sent().is_empty());

    let mut config = Config::default();
    config.accept_incoming = false;
    let mut closed = Harness::new(config);
    closed.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    closed.feed_c(Cframe::Connect(connect_fields(true, 0, 0, 0x0002_0000, SESS)));
    assert!(closed.sent().is_empty());
    assert_eq!(closed.ep.connection_count(), 0);

    let mut open = Harness::new(Config::default());
    open.feed_c(Cframe::Connect(connect_fields(true, 0, 0, 0x0002_0000, SESS)));
    assert!(open.sent().is_empty());
    assert_eq!(open.ep.endpoint_stats().drops.get(DropReason::BadVersion), 1);
    assert_eq!(closed.ep.endpoint_stats().drops.get(DropReason::NotListening), 2);
}

/// MC-DPL8R 3.1.5.1.2, 3.1.5.1.4, 3.1.5.1.5, 3.1.5.2: CONNECTED, HARD_DISCONNECT, SACK and
/// DFRAMEs from unknown addresses are dropped and counted.
#[test]
fn frames_from_unknown_addresses_are_dropped() {
    let mut h = Harness::new(Config::default());
    h.feed_c(Cframe::Connected(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    h.feed(&[0x80, 0x06, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    h.feed_d(data(REL_SEQ, 0, 0), b"x");
    assert!(h.sent().is_empty());
    assert_eq!(h.ep.endpoint_stats().drops.get(DropReason::UnknownAddress), 3);
}

/// MC-DPL8R 1.7 and 2.2.2 (version negotiation): a peer at 0x00010004 gets KeepAlives without
/// KEEPALIVE_OR_CORRELATE or dwSessID (a bare reliable DFRAME) and no coalesced frames.
#[test]
fn old_peer_gets_base_features_only() {
    let mut h = established(Config::default(), 0x0001_0004);
    for i in 0..3u8 {
        h.ep.send(h.now, peer(), &[i], crate::MessageKind::RELIABLE).unwrap();
    }
    h.advance(ms(1));
    for s in h.sent() {
        let d = s.dframe();
        assert!(!d.header.control().contains(DframeControl::COALESCE));
        assert!(d.header.command.contains(DframeCommand::NEW_MSG | DframeCommand::END_MSG));
    }
}

/// MC-DPL8R 2.2.2: from a peer below 0x00010005, `bControl` 0x02 is CORRELATE, a request for
/// a dedicated acknowledgement, not a KeepAlive.
#[test]
fn old_peer_correlate_gets_an_immediate_ack() {
    let mut h = established(Config::default(), 0x0001_0004);
    let mut d = data(REL_SEQ, 1, 1);
    d.control = DframeControl::KEEPALIVE_OR_CORRELATE;
    h.feed_d(d, b"hello");
    assert!(matches!(&h.events()[..], [Event::Message { data, .. }] if data == b"hello"));
    assert_eq!(h.sent()[0].sack().n_rcv, 2);
}

/// MC-DPL8R 3.1.6.1 (CONNECT and CONNECTED both lost): the connector's retry (bMsgID 1) is
/// answered; the answer's bRspId names that retry, so the RTT sample is from the retry, not
/// from the first CONNECT.
#[test]
fn both_lost_then_answered_retry_measures_rtt() {
    let (mut h, f) = connector();
    assert_eq!(h.next_timer(), ms(200));
    assert_eq!(connect_of(&h.sent()).msg_id, 1);
    h.advance(ms(30));
    h.feed_c(Cframe::Connected(connect_fields(true, 1, 1, PROTOCOL_VERSION, f.sess_id)));
    assert!(matches!(h.events()[..], [Event::Connected { outbound: true, .. }]));
    assert_eq!(h.ep.stats(peer()).unwrap().rtt, Some(ms(30)));
    let Sent::C(Cframe::Connected(confirm)) = h.sent()[0] else { panic!() };
    assert_eq!((confirm.msg_id, confirm.rsp_id), (2, 1));
}

/// docs/limits.md, decision "DirectPlay 8 reflection": an unverified source gets at most
/// `handshake_replies` (3) CONNECTEDs in all, however many CONNECT retries it sends, and its
/// attempt is forgotten after `half_open_timeout` (5 s) without a word.
#[test]
fn unverified_source_gets_three_connected_at_most() {
    let mut h = Harness::new(Config::default());
    let mut replies = 0;
    for i in 0..30u8 {
        h.feed_c(Cframe::Connect(connect_fields(true, i, 0, PROTOCOL_VERSION, SESS)));
        replies += h.sent().len();
        h.advance(ms(100));
    }
    h.advance(Duration::from_secs(60));
    replies += h.sent().len();
    assert_eq!(replies, 3);
    assert!(h.events().is_empty());
    assert_eq!(h.ep.connection_count(), 0);
    assert_eq!(h.ep.half_open_count(), 0);
}

/// The listener's own retries stay within the budget: CONNECTED at 0, 200 and 600 ms, then
/// nothing until the attempt is forgotten at 5 s; a confirmation within that still completes.
#[test]
fn listener_retries_within_budget_and_still_completes() {
    let mut h = Harness::new(Config::default());
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    h.sent();
    assert_eq!(h.next_timer(), ms(200));
    assert_eq!(h.sent().len(), 1);
    assert_eq!(h.next_timer(), ms(400));
    assert_eq!(h.sent().len(), 1);
    h.advance(Duration::from_secs(3));
    assert!(h.sent().is_empty());
    assert_eq!(h.ep.half_open_count(), 1);
    h.feed_c(Cframe::Connected(connect_fields(false, 1, 2, PROTOCOL_VERSION, SESS)));
    assert!(matches!(h.events()[..], [Event::Connected { outbound: false, .. }]));
    assert_eq!(h.ep.half_open_count(), 0);
}

/// docs/limits.md: past `max_half_open_per_ip` the oldest attempt of that IP goes, past
/// `max_half_open` the oldest of all; nothing is sent to an evicted source.
#[test]
fn half_open_caps_evict_the_oldest() {
    let mut config = Config::default();
    config.set_max_half_open(4).set_max_half_open_per_ip(2);
    let mut h = Harness::new(config);
    let connect = Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)).to_vec().unwrap();
    let from = |ip: u8, port: u16| SocketAddr::from(([10, 0, 0, ip], port));
    for port in 1..=3 {
        h.ep.handle_datagram(h.now, from(1, port), &connect);
    }
    assert_eq!(h.ep.half_open_count(), 2);
    assert!(!h.ep.is_connected(from(1, 1)), "the oldest of 10.0.0.1 went first");
    for ip in 2..=4 {
        h.ep.handle_datagram(h.now, from(ip, 1), &connect);
    }
    assert_eq!(h.ep.half_open_count(), 4);
    assert!(!h.ep.is_connected(from(1, 2)), "then the oldest of all");
    assert_eq!(h.ep.endpoint_stats().half_open_evicted, 2);
    let firsts: Vec<SocketAddr> =
        std::iter::from_fn(|| h.ep.poll_transmit()).map(|t| t.destination).collect();
    assert_eq!(firsts.len(), 6, "one CONNECTED per CONNECT");
    h.now += Duration::from_secs(10);
    h.ep.handle_timeout(h.now);
    let later: Vec<SocketAddr> = std::iter::from_fn(|| h.ep.poll_transmit()).map(|t| t.destination).collect();
    assert!(!later.contains(&from(1, 1)) && !later.contains(&from(1, 2)), "{later:?}");
}

/// Decision "DirectPlay 8 reflection" (docs/decisions.md): the connector's confirmation was
/// lost every time the listener's 3 CONNECTEDs drew one; the connector's opening KeepAlive,
/// which carries our dwSessID, completes the handshake; one with another dwSessID does not.
#[test]
fn keepalive_completes_a_handshake_whose_confirmation_was_lost() {
    let mut h = Harness::new(Config::default());
    h.ctx.keepalive_sess_id = true;
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    h.advance(Duration::from_secs(2));
    assert_eq!(h.sent().len(), 3);
    let mut ka = data(REL_SEQ | DframeCommand::POLL, 0, 0);
    ka.control = DframeControl::KEEPALIVE_OR_CORRELATE;
    ka.sess_id = Some(SESS ^ 1);
    h.feed_d(ka, &[]);
    assert!(h.events().is_empty());
    ka.sess_id = Some(SESS);
    h.feed_d(ka, &[]);
    assert!(matches!(h.events()[..], [Event::Connected { outbound: false, .. }]));
    assert_eq!(h.ep.half_open_count(), 0);
    let sent = h.sent();
    assert!(sent.iter().any(|s| matches!(s, Sent::D(d) if d.header.is_keepalive())), "{sent:?}");
}

/// The same with data queued during the connector's handshake: its first DFRAME is data, which
/// completes the handshake and is delivered.
#[test]
fn first_data_frame_completes_a_handshake_whose_confirmation_was_lost() {
    let mut h = Harness::new(Config::default());
    h.ctx.keepalive_sess_id = true;
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    h.advance(Duration::from_secs(2));
    h.sent();
    h.feed_d(data(REL_SEQ, 0, 0), b"early");
    let events = h.events();
    assert!(matches!(events[0], Event::Connected { outbound: false, .. }), "{events:?}");
    assert!(matches!(&events[1], Event::Message { data, .. } if data == b"early"), "{events:?}");
}

/// docs/limits.md: each half-open attempt is charged to the memory budget; when it is full,
/// the oldest attempts are forgotten to make room for a new CONNECT.
#[test]
fn half_open_attempts_are_charged_and_the_oldest_make_room() {
    let budget = dplay_wire::budget::MemoryBudget::new(3 * crate::HALF_OPEN_BYTES);
    let mut ep = Endpoint::new(Config::default(), origin());
    ep.set_memory_budget(budget.clone());
    let connect =
        Cframe::Connect(connect_fields(true, 0, 0, crate::PROTOCOL_VERSION, SESS)).to_vec().unwrap();
    for port in 1..=5u16 {
        ep.handle_datagram(origin(), SocketAddr::from(([10, 0, 0, 1], port)), &connect);
    }
    assert_eq!(ep.half_open_count(), 3);
    assert_eq!(budget.held(), 3 * crate::HALF_OPEN_BYTES);
    assert_eq!(ep.endpoint_stats().half_open_evicted, 2);
    budget.set_limit(0);
    ep.handle_datagram(origin(), SocketAddr::from(([10, 0, 0, 2], 1)), &connect);
    assert_eq!(ep.half_open_count(), 0, "forgotten to make room, and still no room");
    assert_eq!(ep.endpoint_stats().drops.get(crate::DropReason::OverBudget), 1);
    assert_eq!(budget.held(), 0);
}
