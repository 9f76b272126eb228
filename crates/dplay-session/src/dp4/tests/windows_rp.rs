//! A Windows-shaped DirectPlay 4 peer in a DPSESSION_DIRECTPLAYPROTOCOL session, as MC-DPL4R 6
//! describes it: frames numbered from 0 (4.1), addressed between application players
//! (3.1.5.1), carrying system messages with their full header (1.3); and PACKET2_ACK for a
//! PACKET2_DATA that came over TCP (MC-DPL4CS 2.2.41). Issue 27 items 4, 5, 7.

use std::net::SocketAddr;

use dplay_dpsp::reliable::player_index;
use dplay_wire::dp4::fragment::{Fragment, PACKET_DATA_OFFSET};
use dplay_wire::dp4::header::{SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::nametable::PlayerGroupIds;
use dplay_wire::dp4::player_message::{DatagramPlayerMessage, PlayerIds};
use dplay_wire::dp4::reliable::{DataFrame, FrameBody, ReliableFlags, ReliableFrame};
use dplay_wire::dp4::session::SessionFlags;
use dplay_wire::{Blob, Wire};

use super::net::{DGRAM_PORT, Net, ip, pair};
use crate::dp4::{Dp4Event, Via};

/// Node `from`'s game socket.
fn game(from: usize) -> SocketAddr {
    SocketAddr::new(ip(from).into(), DGRAM_PORT)
}

/// A single-frame reliable message as a Windows peer sends it: messageid and sequence `n`
/// (from 0, MC-DPL4R 4.1), between player indexes `id_from` and `id_to`.
fn windows_frame(id_from: u16, id_to: u16, n: u8, data: Vec<u8>) -> Vec<u8> {
    let flags = ReliableFlags::CMD | ReliableFlags::STA | ReliableFlags::EOM | ReliableFlags::RLY;
    let body = FrameBody::Data(DataFrame {
        flags,
        message_id: n,
        sequence: n,
        serial: 0,
        nack: None,
        data: Blob::new(&data),
    });
    ReliableFrame { id_from, id_to, body }.to_vec().unwrap()
}

/// The MC-DPL4R frames node `i` sends now; then the network runs (so its events are taken).
fn sent_frames(net: &mut Net, i: usize) -> Vec<ReliableFrame> {
    let frames = std::iter::from_fn(|| net.nodes[i].poll_transmit())
        .filter(|t| t.via == Via::Udp)
        .filter_map(|t| ReliableFrame::parse(&t.bytes).ok())
        .collect();
    net.run();
    frames
}

fn index(net: &Net, id: u32) -> u16 {
    player_index(id, net.nodes[0].session_desc().unwrap().reserved1)
}

/// MC-DPL4R 3.1.5.1, 4.1: a frame numbered 0 from the member's application player to the
/// host's is accepted (only the session's players are asked for), and answered with an ACK.
#[test]
fn frame_between_application_players_is_accepted() {
    let (mut net, a, b) = pair(SessionFlags::DIRECTPLAY_PROTOCOL);
    let pm = DatagramPlayerMessage::new(Some(PlayerIds { id_from: b, id_to: a }), Blob::new(b"hi"));
    let frame = windows_frame(index(&net, b), index(&net, a), 0, pm.to_wrapped_vec().unwrap());
    let now = net.now;
    net.nodes[0].handle_udp(now, game(1), &frame);
    let acks = sent_frames(&mut net, 0);
    let got: Vec<_> = net
        .take(0)
        .into_iter()
        .filter_map(|e| match e {
            Dp4Event::Message { data, .. } => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(got, [b"hi".to_vec()]);
    let ack = acks.into_iter().find(|f| matches!(f.body, FrameBody::Ack(_))).expect("an ACK");
    assert_eq!(
        (ack.id_from, ack.id_to),
        (
            index(&net, net.nodes[0].system_player().unwrap()),
            index(&net, net.nodes[1].system_player().unwrap())
        )
    );
    let FrameBody::Ack(ack) = ack.body else { unreachable!() };
    assert_eq!((ack.message_id, ack.sequence), (0, 0), "numbered from 0, as the peer does");
}

/// MC-DPL4R 1.3, MC-DPL4CS 2.2.6: a DELETEPLAYER with its full header inside a frame from the
/// host is applied, not read as a player message and dropped.
#[test]
fn system_message_inside_a_frame_is_applied() {
    let (mut net, a, b) = pair(SessionFlags::DIRECTPLAY_PROTOCOL);
    let body = Dp4Body::DeletePlayer(PlayerGroupIds { player_id: a, ..Default::default() });
    let msg = Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, body).to_vec().unwrap();
    let host_sys = net.nodes[0].system_player().unwrap();
    let frame = windows_frame(index(&net, host_sys), index(&net, b), 0, msg);
    let now = net.now;
    net.nodes[1].handle_udp(now, game(0), &frame);
    let _ = sent_frames(&mut net, 1);
    let events = net.take(1);
    assert!(events.iter().any(|e| matches!(e, Dp4Event::PlayerLeft { id, .. } if *id == a)), "{events:?}");
}

/// MC-DPL4CS 2.2.41: a PACKET2_DATA that came over TCP is acknowledged over TCP to the sender's
/// listener, not by UDP to the connection's ephemeral port.
#[test]
fn packet2_ack_for_tcp_data_goes_back_over_tcp() {
    let (mut net, _, _) = pair(SessionFlags::empty());
    let guid = uuid::Uuid::from_u128(7);
    let body = Dp4Body::Packet2Data(Fragment {
        guid_message: guid,
        packet_index: 0,
        offset: 0,
        total_packets: 1,
        message_size: 4,
        packet_offset: PACKET_DATA_OFFSET,
        data: Blob::new(b"abcd"),
    });
    let header_addr = SockAddrIn::new(std::net::SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 2300));
    let bytes = Dp4Message::new(Token::FROM_REMOTE, header_addr, 14, body).to_vec().unwrap();
    let now = net.now;
    let ephemeral: SocketAddr = SocketAddr::new(ip(1).into(), 40123);
    net.nodes[0].handle_tcp(now, 99, ephemeral, &bytes).unwrap();
    let acks: Vec<_> = std::iter::from_fn(|| net.nodes[0].poll_transmit())
        .filter(|t| matches!(Dp4Message::parse(&t.bytes).map(|m| m.body), Ok(Dp4Body::Packet2Ack(_))))
        .map(|t| (t.via, t.to))
        .collect();
    assert_eq!(acks, [(Via::Tcp, super::net::stream(1))]);
}

/// MC-DPL4CS 2.2.43, 3.1.5.31, 3.2.5.11 (issue 27 item 13): a PINGREPLY whose IDFrom is the
/// pinger (the host's own system player, as 2.2.43 reads literally) and one whose IDFrom is the
/// replier (Wine) both credit the member, and neither brings YOUAREDEAD; an ID nobody knows
/// still does.
#[test]
fn ping_reply_id_from_read_both_ways() {
    use super::wine_facts::{drain, dwords, windows_message};
    let mut net = super::net::session_of(2, |_| {});
    let host = net.nodes[0].system_player().unwrap();
    let member = net.nodes[1].system_player().unwrap();
    let now = net.now;
    let dead = |t: &crate::dp4::Dp4Transmit| {
        matches!(Dp4Message::parse(&t.bytes).map(|m| m.body), Ok(Dp4Body::YouAreDead(_)))
    };
    for id_from in [host, member] {
        let reply = windows_message(2300, 23, &dwords(&[id_from, 0]));
        net.nodes[0].handle_udp(now, game(1), &reply);
        assert!(!drain(&mut net, 0).iter().any(dead), "IDFrom {id_from:#x}");
    }
    assert!(net.nodes[0].players()[&member].round_trip.is_some());
    let reply = windows_message(2300, 23, &dwords(&[0xDEAD_BEEF, 0]));
    net.nodes[0].handle_udp(now, game(1), &reply);
    assert!(drain(&mut net, 0).iter().any(dead), "an unknown ID still does");
}

/// MC-DPL4CS 3.1.5.10, 3.2.2.1 (issue 27 item 8): an ADDFORWARD that reaches a joiner while its
/// own join is pending is acknowledged at once (the host waits for it, and a second Windows
/// joiner's 5 s timer with it), and the instance it names is in the joiner's table afterwards.
#[test]
fn add_forward_is_acknowledged_while_joining() {
    use super::wine_facts::drain;
    let mut net = Net::new(4);
    net.host(super::net::session("S"));
    net.join(1, None);
    // Node 2 gets as far as its ADDFORWARDREQUEST, which waits.
    let now = net.now;
    net.nodes[2].join(now, super::net::stream(0), None).unwrap();
    let request_id = net.nodes[2].poll_transmit().unwrap();
    net.nodes[0].handle_tcp(now, 20, "10.0.0.3:40002".parse().unwrap(), &request_id.bytes).unwrap();
    let reply = net.nodes[0].poll_transmit().unwrap();
    net.nodes[2].handle_tcp(now, 21, "10.0.0.1:40000".parse().unwrap(), &reply.bytes).unwrap();
    let add_forward_request = net.nodes[2].poll_transmit().unwrap();
    // Node 3 joins meanwhile; the host forwards it to its members, node 2 included here.
    net.join(3, None);
    let forward = net.log.iter().rev().find(|s| s.name == "DPSP_MSG_ADDFORWARD" && s.to == 1).unwrap();
    let bytes = forward.bytes.clone();
    net.nodes[2].handle_tcp(now, 21, "10.0.0.1:40000".parse().unwrap(), &bytes).unwrap();
    let acks: Vec<_> = drain(&mut net, 2)
        .into_iter()
        .filter(|t| matches!(Dp4Message::parse(&t.bytes).map(|m| m.body), Ok(Dp4Body::AddForwardAck(_))))
        .map(|t| (t.via, t.to))
        .collect();
    assert_eq!(acks, [(Via::Tcp, super::net::stream(0))]);
    net.nodes[0].handle_tcp(now, 20, "10.0.0.3:40002".parse().unwrap(), &add_forward_request.bytes).unwrap();
    net.run();
    let third = net.nodes[3].system_player().unwrap();
    assert!(net.nodes[2].players().contains_key(&third));
}

/// MC-DPL4CS 2.2.19 (issue 27 item 14): a non-guaranteed CHAT in the short form ('play' first,
/// no size, token or SockAddr) over UDP is a chat line, not a player message.
#[test]
fn short_form_chat_over_udp_is_read() {
    use dplay_wire::dp4::message::ShortMessage;
    use dplay_wire::dp4::routing::{Chat, ChatFlags};
    let (mut net, a, b) = pair(SessionFlags::empty());
    let chat = Chat { id_from: b, id_to: a, flags: ChatFlags::empty(), chat_message: Some("hi".into()) };
    let bytes = ShortMessage::new(14, Dp4Body::Chat(chat)).to_vec().unwrap();
    let now = net.now;
    net.nodes[0].handle_udp(now, game(1), &bytes);
    net.run();
    assert_eq!(net.take(0), [Dp4Event::Chat { from: b, to: a, text: Some("hi".into()) }]);
}

/// MC-DPL4CS 3.1.4.17, 3.1.5.26 (issue 27 item 14): chat to a group goes once to each instance
/// with a member in it, naming the group, and is reported there.
#[test]
fn chat_to_a_group_is_sent_and_received() {
    let mut net = super::net::session_of(3, |_| {});
    let a = super::net::created(&mut net, 0, "a");
    let b = super::net::created(&mut net, 1, "b");
    let g = super::groups::group(&mut net, 0, "wing");
    net.nodes[0].add_player_to_group(g, b).unwrap();
    net.run();
    for i in 0..3 {
        net.take(i);
    }
    net.log.clear();
    net.nodes[0].send_chat(a, g, "form up").unwrap();
    net.run();
    assert_eq!(net.trace(), ["0->1 Tcp DPSP_MSG_CHAT"]);
    assert_eq!(net.take(1), [Dp4Event::Chat { from: a, to: g, text: Some("form up".into()) }]);
}

/// MC-DPL4CS 2.2.50 (issue 27 item 9): a secure server's REQUESTPLAYERREPLY names its SSPI
/// provider; the joiner stops at once with SECURE_SERVER named instead of timing out.
#[test]
fn secure_server_is_recognised_at_once() {
    use dplay_wire::dp4::join::RequestPlayerReply;
    let mut net = Net::new(2);
    net.host(super::net::session("S"));
    let now = net.now;
    net.nodes[1].join(now, super::net::stream(0), None).unwrap();
    let _request = net.nodes[1].poll_transmit().unwrap();
    let reply = RequestPlayerReply {
        id: 0x10,
        sec_desc: Default::default(),
        result: 0,
        sspi_provider: Some("NTLM".into()),
        capi_provider: None,
    };
    let bytes = Dp4Message::new(
        Token::FROM_REMOTE,
        SockAddrIn::unspecified(),
        14,
        Dp4Body::RequestPlayerReply(reply),
    )
    .to_vec()
    .unwrap();
    net.nodes[1].handle_tcp(now, 1, "10.0.0.1:40000".parse().unwrap(), &bytes).unwrap();
    let failed = crate::dp4::JoinError::Unsupported(SessionFlags::SECURE_SERVER);
    assert!(net.nodes[1].poll_transmit().is_none(), "no ADDFORWARDREQUEST");
    let events: Vec<_> = std::iter::from_fn(|| net.nodes[1].poll_event()).collect();
    assert_eq!(events, [Dp4Event::JoinFailed(failed)]);
}
