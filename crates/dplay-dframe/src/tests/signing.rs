//! Fast signing (MC-DPL8R 2.2.1.3, 3.1.4.4, 3.1.5.1.1, 3.1.5.1.3, 3.1.5.1.4, 3.1.5.2.7) against
//! a scripted peer that sends the spec's layouts, and between two of our endpoints.

use dplay_wire::dp8::cframe::{Cframe, ConnectedSigned, HardDisconnect, SigningOpts};
use dplay_wire::dp8::dframe::{DframeCommand, DframeControl};

use super::*;
use crate::{DisconnectReason, DropReason, MessageKind, PROTOCOL_VERSION, Signing, SigningMode};

fn signing() -> Config {
    let mut config = Config::default();
    config.signing = Signing::Fast;
    config
}

/// The connector's secrets in the scripted peer's confirmation.
const SENDER: u64 = 0x1111_2222_3333_4444;
const RECEIVER: u64 = 0x5555_6666_7777_8888;

#[track_caller]
fn connected_signed_of(sent: &[Sent]) -> ConnectedSigned {
    match sent {
        [Sent::C(Cframe::ConnectedSigned(s)), ..] => *s,
        other => panic!("expected CONNECTED_SIGNED first, got {other:?}"),
    }
}

/// A listener's reply: POLL set, the cookie, zero secrets, FAST, no echo (MC-DPL8R 2.2.1.3).
fn listener_reply(sess_id: u32, rsp_id: u8, opts: SigningOpts) -> ConnectedSigned {
    ConnectedSigned {
        fields: ConnectFields {
            timestamp: 0x0004_DFE1,
            ..connect_fields(true, 0, rsp_id, PROTOCOL_VERSION, sess_id)
        },
        connect_sig: 0xC00C_1E00_C00C_1E00,
        sender_secret: 0,
        receiver_secret: 0,
        signing_opts: opts,
        echo_timestamp: 0,
    }
}

/// The scripted connector's confirmation of `reply`.
fn confirmation(reply: &ConnectedSigned) -> ConnectedSigned {
    ConnectedSigned {
        fields: connect_fields(false, 1, reply.fields.msg_id, PROTOCOL_VERSION, reply.fields.sess_id),
        connect_sig: reply.connect_sig,
        sender_secret: SENDER,
        receiver_secret: RECEIVER,
        signing_opts: SigningOpts::PACKET_SIGNING_FAST,
        echo_timestamp: reply.fields.timestamp,
    }
}

/// A listener requiring signing that answered the scripted CONNECT; returns its reply.
fn signing_listener() -> (Harness, ConnectedSigned) {
    let mut h = Harness::new(signing());
    h.ctx.signed = true;
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, SESS)));
    let reply = connected_signed_of(&h.sent());
    (h, reply)
}

/// A listener with the scripted connector's signed connection established.
fn signed_listener() -> Harness {
    let (mut h, reply) = signing_listener();
    h.feed_c(Cframe::ConnectedSigned(confirmation(&reply)));
    assert!(matches!(h.events()[..], [Event::Connected { outbound: false, .. }]));
    h.sent();
    h
}

/// MC-DPL8R 3.1.5.1.1, 2.2.1.3: a listener that requires signing answers CONNECT with
/// CONNECTED_SIGNED (POLL set, bRspId = bMsgID, dwSessID echoed, a cookie, zero secrets, FAST,
/// dwEchoTimestamp 0) and allocates nothing; a retried CONNECT gets the same cookie.
#[test]
fn listener_answers_connect_with_connected_signed_and_keeps_no_state() {
    let (mut h, reply) = signing_listener();
    assert!(reply.fields.poll);
    assert_eq!((reply.fields.rsp_id, reply.fields.sess_id), (0, SESS));
    assert_eq!(reply.fields.protocol_version, PROTOCOL_VERSION);
    assert_ne!(reply.connect_sig, 0);
    assert_eq!((reply.sender_secret, reply.receiver_secret), (0, 0));
    assert_eq!(reply.signing_opts, SigningOpts::PACKET_SIGNING_FAST);
    assert_eq!(reply.echo_timestamp, 0);
    assert_eq!(h.ep.connection_count(), 0);
    h.advance(ms(200));
    h.feed_c(Cframe::Connect(connect_fields(true, 1, 0, PROTOCOL_VERSION, SESS)));
    let again = connected_signed_of(&h.sent());
    assert_eq!((again.fields.rsp_id, again.connect_sig), (1, reply.connect_sig));
    assert_eq!(h.ep.connection_count(), 0);
}

/// MC-DPL8R 2.2.1.1, 3.1.5.1.1: a signing listener ignores a CONNECT below 0x00010006 and one
/// with dwSessID 0, and counts them.
#[test]
fn signing_listener_ignores_old_versions_and_session_id_zero() {
    let mut h = Harness::new(signing());
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, 0x0001_0005, SESS)));
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, PROTOCOL_VERSION, 0)));
    assert!(h.sent().is_empty());
    let drops = h.ep.endpoint_stats().drops;
    assert_eq!((drops.get(DropReason::BadVersion), drops.get(DropReason::BadSessionId)), (1, 1));
}

/// MC-DPL8R 3.1.5.1.3, 3.1.4.4: the connector's confirmation with our cookie establishes the
/// connection; our opening KeepAlive is signed with ullReceiverSecret, the secret of what the
/// listener sends.
#[test]
fn confirmation_with_our_cookie_establishes_the_connection() {
    let (mut h, reply) = signing_listener();
    h.feed_c(Cframe::ConnectedSigned(confirmation(&reply)));
    assert!(matches!(h.events()[..], [Event::Connected { outbound: false, .. }]));
    let sent = h.sent();
    let ka = sent[0].dframe();
    assert!(ka.header.is_keepalive());
    assert_eq!(ka.header.signature, Some(RECEIVER));
    assert_eq!(ka.header.sess_id, Some(SESS));
}

/// MC-DPL8R 3.1.5.1.3: a confirmation with a cookie we never issued (another address, another
/// dwSessID, or forged), with POLL set, or asking for FULL, allocates nothing and is counted.
#[test]
fn confirmation_without_our_cookie_is_dropped_and_counted() {
    let (mut h, reply) = signing_listener();
    let mut forged = confirmation(&reply);
    forged.connect_sig ^= 1;
    h.feed_c(Cframe::ConnectedSigned(forged));
    let mut polled = confirmation(&reply);
    polled.fields.poll = true;
    h.feed_c(Cframe::ConnectedSigned(polled));
    let mut full = confirmation(&reply);
    full.signing_opts = SigningOpts::PACKET_SIGNING_FULL;
    h.feed_c(Cframe::ConnectedSigned(full));
    let other = SocketAddr::from(([192, 0, 2, 99], 2302));
    h.ep.handle_datagram(h.now, other, &Cframe::ConnectedSigned(confirmation(&reply)).to_vec().unwrap());
    assert!(h.events().is_empty());
    assert_eq!(h.ep.connection_count(), 0);
    let drops = h.ep.endpoint_stats().drops;
    assert_eq!(drops.get(DropReason::BadSignature), 2);
    assert_eq!(drops.get(DropReason::HandshakeRule), 1);
    assert_eq!(drops.get(DropReason::SigningMismatch), 1);
}

/// MC-DPL8R 3.1.5.1.3, 2.2.1.3, 3.1.4.4: a signing connector answers CONNECTED_SIGNED with
/// its confirmation (POLL clear, cookie echoed, two distinct non-zero secrets, FAST,
/// dwEchoTimestamp = the listener's tTimestamp) and a KeepAlive signed with ullSenderSecret.
#[test]
fn connector_confirms_with_fresh_secrets() {
    let mut h = Harness::new(signing());
    h.ctx.signed = true;
    h.ep.connect(h.now, peer()).unwrap();
    let connect = *match &h.sent()[..] {
        [Sent::C(Cframe::Connect(f))] => f,
        other => panic!("{other:?}"),
    };
    let reply = listener_reply(connect.sess_id, connect.msg_id, SigningOpts::PACKET_SIGNING_FAST);
    h.feed_c(Cframe::ConnectedSigned(reply));
    assert!(matches!(h.events()[..], [Event::Connected { outbound: true, .. }]));
    let sent = h.sent();
    let conf = connected_signed_of(&sent);
    assert!(!conf.fields.poll);
    assert_eq!((conf.fields.rsp_id, conf.fields.sess_id), (0, connect.sess_id));
    assert_eq!(conf.connect_sig, reply.connect_sig);
    assert!(conf.sender_secret != 0 && conf.receiver_secret != 0);
    assert_ne!(conf.sender_secret, conf.receiver_secret);
    assert_eq!(conf.signing_opts, SigningOpts::PACKET_SIGNING_FAST);
    assert_eq!(conf.echo_timestamp, reply.fields.timestamp);
    let ka = sent[1].dframe();
    assert!(ka.header.is_keepalive());
    assert_eq!(ka.header.signature, Some(conf.sender_secret));
    // The listener's reply again (it answered a retried CONNECT): the same confirmation.
    h.feed_c(Cframe::ConnectedSigned(reply));
    assert_eq!(connected_signed_of(&h.sent()), conf);
}

/// MC-DPL8R 3.1.5.1.3: while the listener (which keeps no state) has not answered, every retry
/// of the KeepAlive goes with the confirmation again, so a lost confirmation is recovered;
/// the first valid signed frame from the listener stops that.
#[test]
fn lost_confirmation_is_sent_again_with_the_retries() {
    let mut h = Harness::new(signing());
    h.ctx.signed = true;
    h.ep.connect(h.now, peer()).unwrap();
    let Sent::C(Cframe::Connect(connect)) = h.sent()[0].clone() else { panic!() };
    h.feed_c(Cframe::ConnectedSigned(listener_reply(connect.sess_id, 0, SigningOpts::PACKET_SIGNING_FAST)));
    let conf = connected_signed_of(&h.sent());
    h.next_timer();
    let retry = h.sent();
    assert_eq!(connected_signed_of(&retry), conf);
    let ka = retry[1].dframe();
    assert!(ka.header.is_keepalive() && ka.header.control.contains(DframeControl::RETRY));
    // The listener got it: its signed KeepAlive acknowledges ours.
    let mut theirs = data(REL_SEQ | DframeCommand::POLL, 0, 1);
    theirs.control = DframeControl::KEEPALIVE_OR_CORRELATE;
    theirs.sess_id = Some(connect.sess_id);
    theirs.signature = Some(conf.receiver_secret);
    h.ctx.signed = true;
    let frame = Dframe { header: theirs, payload: dplay_wire::Blob::default() };
    let mut bytes = vec![0; frame.encoded_len()];
    frame.emit(&mut bytes).unwrap();
    h.feed(&bytes);
    h.sent();
    h.ep.send(h.now, peer(), b"x", MessageKind::RELIABLE).unwrap();
    h.advance(Duration::from_secs(2));
    assert!(h.sent().iter().all(|s| !matches!(s, Sent::C(Cframe::ConnectedSigned(_)))));
}

/// MC-DPL8R 3.1.5.1.3, 3.1.6.5: unreliable data queued during the handshake fills the window
/// ahead of the KeepAlive and is never resent, only announced; the confirmation still goes
/// again each time the retry timer fires (found by the signed 20%-loss sweep).
#[test]
fn lost_confirmation_is_sent_again_behind_unreliable_data() {
    let mut h = Harness::new(signing());
    h.ctx.signed = true;
    h.ep.connect(h.now, peer()).unwrap();
    h.ep.send(h.now, peer(), &[1; 3000], MessageKind::SEQUENTIAL).unwrap();
    let Sent::C(Cframe::Connect(connect)) = h.sent()[0].clone() else { panic!() };
    h.feed_c(Cframe::ConnectedSigned(listener_reply(connect.sess_id, 0, SigningOpts::PACKET_SIGNING_FAST)));
    let first = h.sent();
    let conf = connected_signed_of(&first);
    assert!(first[1..].iter().all(|s| !s.dframe().header.command.contains(DframeCommand::RELIABLE)));
    let mut again = 0;
    for _ in 0..10 {
        h.advance(Duration::from_secs(1));
        again += h
            .sent()
            .iter()
            .filter(|s| matches!(s, Sent::C(Cframe::ConnectedSigned(c)) if *c == conf))
            .count();
    }
    assert!(again >= 3, "the confirmation went again {again} times in 10 s");
}

/// MC-DPL8R 3.1.5.1.3 (the mode MUST match the connector's): a connector that does not sign
/// and gets CONNECTED_SIGNED, or that signs FAST and gets FULL, fails at once naming the mode,
/// instead of retrying CONNECT for 50 s.
#[test]
fn unexpected_signing_fails_the_connect_at_once() {
    for (config, opts, mode) in [
        (Config::default(), SigningOpts::PACKET_SIGNING_FAST, SigningMode::Fast),
        (Config::default(), SigningOpts::PACKET_SIGNING_FULL, SigningMode::Full),
        (signing(), SigningOpts::PACKET_SIGNING_FULL, SigningMode::Full),
    ] {
        let mut h = Harness::new(config);
        h.ep.connect(h.now, peer()).unwrap();
        let Sent::C(Cframe::Connect(connect)) = h.sent()[0].clone() else { panic!() };
        h.feed_c(Cframe::ConnectedSigned(listener_reply(connect.sess_id, 0, opts)));
        assert!(h.sent().is_empty());
        assert_eq!(
            h.events(),
            [Event::Disconnected {
                peer: peer(),
                reason: DisconnectReason::SigningRequired(mode),
                stats: Box::new(crate::Stats {
                    frames_sent: 1,
                    bytes_sent: 16,
                    frames_received: 1,
                    bytes_received: 48,
                    ..Default::default()
                }),
            }]
        );
        assert_eq!(h.ep.connection_count(), 0);
    }
}

/// MC-DPL8R 3.1.5.1.2: a connector that signs ignores an unsigned CONNECTED (counted).
#[test]
fn signing_connector_ignores_unsigned_connected() {
    let mut h = Harness::new(signing());
    h.ep.connect(h.now, peer()).unwrap();
    let Sent::C(Cframe::Connect(connect)) = h.sent()[0].clone() else { panic!() };
    h.feed_c(Cframe::Connected(connect_fields(true, 0, 0, PROTOCOL_VERSION, connect.sess_id)));
    assert!(h.sent().is_empty() && h.events().is_empty());
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::SigningMismatch), 1);
}

/// MC-DPL8R 3.1.5.2.7, 3.1.5.2: a DFRAME with a wrong signature, or none (its first payload
/// bytes then stand where the signature goes), is discarded and counted; the right one is
/// delivered.
#[test]
fn dframes_need_the_peers_secret() {
    let mut h = signed_listener();
    let mut forged = data(REL_SEQ | DframeCommand::POLL, 0, 1);
    forged.signature = Some(SENDER ^ 0x10);
    h.feed_d(forged, b"forged");
    let mut unsigned = data(REL_SEQ | DframeCommand::POLL, 0, 1);
    unsigned.signature = None;
    h.feed_d(unsigned, b"unsigned payload");
    assert!(h.sent().is_empty() && h.events().is_empty());
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::BadSignature), 2);
    let mut good = data(REL_SEQ | DframeCommand::POLL, 0, 1);
    good.signature = Some(SENDER);
    h.feed_d(good, b"hello");
    assert!(matches!(&h.events()[..], [Event::Message { data, .. }] if data == b"hello"));
    let sack = *h.sent()[0].sack();
    assert_eq!((sack.n_rcv, sack.signature), (1, Some(RECEIVER)));
}

/// MC-DPL8R 3.1.5.1.5, 2.2.1.5: a SACK without the signature, or with a wrong one, is ignored
/// and counted.
#[test]
fn sacks_need_the_peers_secret() {
    let mut h = signed_listener();
    h.ep.send(h.now, peer(), b"data", MessageKind::RELIABLE).unwrap();
    let sent = h.sent();
    assert_eq!(sent[0].dframe().header.signature, Some(RECEIVER));
    let ack = |signature| Sack {
        poll: false,
        response: true,
        retry: 0,
        n_seq: 1,
        n_rcv: 2,
        timestamp: 0,
        masks: Masks::default(),
        signature,
    };
    h.feed_c(Cframe::Sack(ack(None)));
    h.feed_c(Cframe::Sack(ack(Some(RECEIVER))));
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::BadSignature), 2);
    // Unacknowledged: the frame is retried.
    h.advance(Duration::from_secs(1));
    assert!(
        h.sent().iter().any(|s| matches!(s, Sent::D(d) if d.header.control.contains(DframeControl::RETRY)))
    );
    h.feed_c(Cframe::Sack(ack(Some(SENDER))));
    h.advance(Duration::from_secs(5));
    assert!(h.sent().iter().all(|s| !matches!(s, Sent::D(_))));
}

/// MC-DPL8R 3.1.5.1.4, 3.1.4.5: an unsigned or wrongly signed HARD_DISCONNECT is ignored; the
/// signed one ends the connection, answered by HARD_DISCONNECTs carrying our signature.
#[test]
fn hard_disconnect_needs_the_peers_secret() {
    let mut h = signed_listener();
    let hd = |signature| {
        Cframe::HardDisconnect(HardDisconnect {
            fields: connect_fields(false, 2, 0, PROTOCOL_VERSION, SESS),
            signature,
        })
    };
    h.feed_c(hd(None));
    h.feed_c(hd(Some(RECEIVER)));
    assert!(h.events().is_empty());
    assert!(h.ep.is_connected(peer()));
    assert_eq!(h.ep.stats(peer()).unwrap().drops.get(DropReason::BadSignature), 2);
    h.feed_c(hd(Some(SENDER)));
    assert!(matches!(h.events()[..], [Event::Disconnected { reason: DisconnectReason::AbortedByPeer, .. }]));
    let sent = h.sent();
    assert_eq!(sent.len(), 3);
    for s in sent {
        let Sent::C(Cframe::HardDisconnect(ours)) = s else { panic!("{s:?}") };
        assert_eq!(ours.signature, Some(RECEIVER));
    }
}

/// Two signing endpoints (MC-DPL8R 3.1.5.1.3 end to end): messages both ways, every frame
/// signed with its sender's secret, large messages split so signed frames stay within the
/// datagram limit.
#[test]
fn two_signing_endpoints_talk() {
    let now = origin();
    let (a_addr, b_addr) = (SocketAddr::from(([192, 0, 2, 1], 1)), SocketAddr::from(([192, 0, 2, 2], 2)));
    let mut a = Endpoint::new(signing(), now);
    let mut b = Endpoint::new(signing().with_seed(1), now);
    a.connect(now, b_addr).unwrap();
    a.send(now, b_addr, &[7; 5000], MessageKind::RELIABLE_SEQUENTIAL).unwrap();
    let mut got = Vec::new();
    let mut signed_cframes = 0;
    for _ in 0..20 {
        while let Some(t) = a.poll_transmit() {
            assert!(t.contents.len() <= a.config().max_datagram());
            signed_cframes += usize::from(t.contents[1] == 3 && t.contents[0] & 1 == 0);
            b.handle_datagram(now, a_addr, &t.contents);
        }
        while let Some(t) = b.poll_transmit() {
            a.handle_datagram(now, b_addr, &t.contents);
        }
        got.extend(std::iter::from_fn(|| b.poll_event()));
        if got.iter().any(|e| matches!(e, Event::Message { .. })) {
            break;
        }
    }
    assert_eq!(signed_cframes, 1, "one confirmation");
    assert!(got.iter().any(|e| matches!(e, Event::Connected { outbound: false, .. })));
    assert!(got.iter().any(|e| matches!(e, Event::Message { data, .. } if data.len() == 5000)));
    assert_eq!(b.stats(a_addr).unwrap().drops.total(), 0);
}

proptest::proptest! {
    /// MC-DPL8R 3.1.5.2.7, 3.1.5.1.3: into a signed connection, arbitrary datagrams and DFRAMEs
    /// with any signature but the peer's secret deliver nothing and never panic; from another
    /// address, arbitrary datagrams never open a connection (the listener keeps no state).
    #[test]
    fn forged_input_into_a_signed_endpoint(
        datagrams in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80), 1..20),
        signatures in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..10),
    ) {
        let mut h = signed_listener();
        let stranger = SocketAddr::from(([192, 0, 2, 99], 2302));
        for d in &datagrams {
            h.feed(d);
            h.ep.handle_datagram(h.now, stranger, d);
            h.advance(ms(7));
        }
        for signature in signatures.into_iter().filter(|s| *s != SENDER) {
            let mut forged = data(REL_SEQ | DframeCommand::POLL, 0, 1);
            forged.signature = Some(signature);
            h.feed_d(forged, b"forged");
        }
        while h.ep.poll_transmit().is_some() {}
        let delivered = h.events().iter().filter(|e| matches!(e, Event::Message { .. })).count();
        proptest::prop_assert_eq!(delivered, 0);
        proptest::prop_assert!(!h.ep.is_connected(stranger));
    }
}
