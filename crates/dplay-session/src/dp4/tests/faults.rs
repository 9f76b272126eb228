//! Bad input: a stream with a bad size or token, unknown players, offsets out of range. The
//! message or the connection is dropped with a reason; the host keeps serving everyone else.

use dplay_wire::dp4::enumeration::EnumSessionsFlags;
use dplay_wire::dp4::header::{SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::player_message::{PlayerIds, PlayerMessage};
use dplay_wire::dp4::routing::Ping;
use dplay_wire::{Blob, Wire};

use super::net::{APP, created, session_of, stream};
use crate::dp4::{Dp4Event, DropReason, EnumRequest, StreamError};

fn ping_from(id: u32) -> Vec<u8> {
    let body = Dp4Body::Ping(Ping { id_from: id, tick_count: 1 });
    Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, body).to_vec().unwrap()
}

/// MC-DPL4CS 2.2.6: a TCP stream with a bad token or size is rejected (the runtime closes it);
/// the host still answers on other connections.
#[test]
fn bad_stream_is_rejected_and_the_host_keeps_serving() {
    let mut net = session_of(2, |_| {});
    let now = net.now;
    let mut bad = ping_from(1);
    bad[3] = 0x00;
    let peer = "10.0.0.9:4000".parse().unwrap();
    assert_eq!(net.nodes[0].handle_tcp(now, 77, peer, &bad), Err(StreamError::BadToken(0x00B)));
    let huge = (0xF_FFFFu32 | 0xFAB << 20).to_le_bytes();
    let mut small = super::net::config(0);
    small.max_stream_message = 4096;
    let mut host = crate::dp4::Dp4Session::new(small).unwrap();
    assert!(matches!(host.handle_tcp(now, 1, peer, &huge), Err(StreamError::BadSize { .. })));
    assert_eq!(net.nodes[0].stats().streams_rejected, 1);
    let request = EnumRequest { application_guid: APP, password: None, flags: EnumSessionsFlags::ALL };
    net.enumerate(1, &request);
    assert!(net.take(1).iter().any(|e| matches!(e, Dp4Event::SessionFound(_))));
}

/// MC-DPL4CS 3.1.5 (5.1: the sender is not validated, we do): a player message from an
/// unknown player is dropped and counted.
#[test]
fn message_from_unknown_player_is_dropped() {
    let mut net = session_of(2, |_| {});
    let a = created(&mut net, 0, "alice");
    net.take(0);
    let forged = PlayerMessage::new(Some(PlayerIds { id_from: 0x1234_5678, id_to: a }), Blob::new(b"hi"));
    let now = net.now;
    net.nodes[0].handle_udp(now, "10.0.0.2:2350".parse().unwrap(), &forged.to_vec().unwrap());
    assert_eq!(net.nodes[0].stats().dropped(DropReason::UnknownPlayer), 1);
    assert!(net.take(0).is_empty());
}

/// MC-DPL4CS 3.2.5.10: the host answers a PING from an unknown player with YOUAREDEAD.
#[test]
fn host_answers_unknown_ping_with_youaredead() {
    let mut net = session_of(1, |_| {});
    let now = net.now;
    net.nodes[0].handle_udp(now, "10.0.0.5:2350".parse().unwrap(), &ping_from(0x42));
    let t = net.nodes[0].poll_transmit().unwrap();
    assert_eq!(t.to, "10.0.0.5:0".parse().unwrap());
    assert_eq!(Dp4Message::parse(&t.bytes).unwrap().name(), "DPSP_MSG_YOUAREDEAD");
}

/// MC-DPL4CS 2.2.11 (offsets count from the signature, F-26): an ADDFORWARDREQUEST whose
/// CreateOffset points past the end is dropped as malformed.
#[test]
fn offsets_out_of_range_are_dropped() {
    let mut net = session_of(1, |_| {});
    let mut bytes = Dp4Message::new(
        Token::FROM_REMOTE,
        SockAddrIn::unspecified(),
        14,
        Dp4Body::AddForwardReply(dplay_wire::dp4::join::Dword(0)),
    )
    .to_vec()
    .unwrap();
    // Turn it into an ADDFORWARDREQUEST of 20 body bytes with CreateOffset 9999.
    bytes[24] = 0x13;
    bytes.truncate(28);
    bytes.extend_from_slice(&[0; 12]);
    bytes.extend_from_slice(&9999u32.to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    let len = u32::try_from(bytes.len()).unwrap() | 0xFAB << 20;
    bytes[..4].copy_from_slice(&len.to_le_bytes());
    let now = net.now;
    net.nodes[0].handle_tcp(now, 5, stream(0), &bytes).unwrap();
    assert_eq!(net.nodes[0].stats().dropped(DropReason::Malformed), 1);
    assert!(net.nodes[0].poll_transmit().is_none());
}

/// A DP4 message with a valid header, `command` and arbitrary body bytes.
fn with_header(command: u16, body: &[u8]) -> Vec<u8> {
    let len = 28 + body.len();
    let mut m = (u32::try_from(len).unwrap() | 0xFAB << 20).to_le_bytes().to_vec();
    m.extend_from_slice(&[2, 0, 0x08, 0xFC, 10, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0]);
    m.extend_from_slice(b"play");
    m.extend_from_slice(&command.to_le_bytes());
    m.extend_from_slice(&14u16.to_le_bytes());
    m.extend_from_slice(body);
    m
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Section 4 of the issue: whatever arrives, by UDP or TCP, with or without a valid header,
    /// nothing panics and the host keeps serving the members it has.
    #[test]
    fn hostile_input_never_stops_the_host(
        inputs in proptest::collection::vec(
            (0u16..0x40, proptest::collection::vec(proptest::num::u8::ANY, 0..160), proptest::bool::ANY, proptest::bool::ANY),
            1..12,
        )
    ) {
        let mut net = session_of(2, |_| {});
        let b = net.nodes[1].system_player().unwrap();
        let now = net.now;
        let from = "10.0.0.9:2350".parse().unwrap();
        for (i, (command, body, framed, tcp)) in inputs.into_iter().enumerate() {
            let bytes = if framed { with_header(command, &body) } else { body };
            if tcp {
                let _ = net.nodes[0].handle_tcp(now, 1000 + i as u64, from, &bytes);
            } else {
                net.nodes[0].handle_udp(now, from, &bytes);
            }
        }
        while net.nodes[0].poll_transmit().is_some() {}
        net.take(0);
        proptest::prop_assert!(net.nodes[0].players().contains_key(&b));
        let request = EnumRequest { application_guid: APP, password: None, flags: EnumSessionsFlags::ALL };
        net.enumerate(1, &request);
        proptest::prop_assert!(net.take(1).iter().any(|e| matches!(e, Dp4Event::SessionFound(_))));
    }
}

/// MC-DPL4CS 3.2.5.4: a system player ID handed out but never claimed by ADDFORWARDREQUEST is
/// released after 20 s, so abandoned joins cannot exhaust the IDs.
#[test]
fn unclaimed_ids_are_released() {
    use dplay_wire::dp4::join::{RequestPlayerFlags, RequestPlayerId};
    let mut net = super::net::session_in(2, 1, |_| {});
    let body = Dp4Body::RequestPlayerId(RequestPlayerId { flags: RequestPlayerFlags::SYSTEM_PLAYER });
    let bytes = Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, body).to_vec().unwrap();
    let now = net.now;
    net.nodes[0].handle_tcp(now, 3, "10.0.0.7:40000".parse().unwrap(), &bytes).unwrap();
    assert!(net.nodes[0].poll_timeout().is_some());
    net.advance(std::time::Duration::from_secs(20));
    // Only the Ping timer is left (it runs in every session, issue 27 item 10).
    assert!(net.nodes[0].poll_timeout().is_some_and(|t| t > net.now));
    net.join(1, None);
    let key = net.nodes[0].session_desc().unwrap().reserved1;
    assert_eq!((net.nodes[1].system_player().unwrap() ^ key) & 0xFFFF, 1, "index 1 was freed and reused");
}
