//! The bytes Windows sends and expects, as Wine's dplayx tests (Wine 9.21+) record them
//! (docs/decisions.md lists each fact).

use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::session::PlayerFlags;
use dplay_wire::{WideString, Wire};

use super::net::{Net, created, session, session_of, stream};
use crate::dp4::Via;

/// MC-DPL4CS 2.2.11, 3.1.5.1: our ADDFORWARDREQUEST has IDTo 0, GroupID 0, CreateOffset 28,
/// PasswordOffset 108 (an empty password is still sent), player flags 0x9 (SP, PL), and
/// SPData with address 0 and our TCP 2300 / UDP 2350 ports; the header carries 0.0.0.0:2300.
#[test]
fn add_forward_request_bytes_match_windows() {
    let mut net = Net::new(2);
    net.host(session("S"));
    let now = net.now;
    net.nodes[1].join(now, stream(0), None).unwrap();
    let request_id = net.nodes[1].poll_transmit().unwrap();
    net.nodes[0].handle_tcp(now, 1, "10.0.0.2:40001".parse().unwrap(), &request_id.bytes).unwrap();
    let reply = net.nodes[0].poll_transmit().unwrap();
    net.nodes[1].handle_tcp(now, 2, "10.0.0.1:40000".parse().unwrap(), &reply.bytes).unwrap();
    let t = net.nodes[1].poll_transmit().unwrap();
    assert_eq!((t.via, t.to), (Via::Tcp, stream(0)));
    let b = &t.bytes;
    let dword = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    assert_eq!(dword(0), 0xFAB0_0000 + u32::try_from(b.len()).unwrap());
    assert_eq!(b[4..20], [2, 0, 0x08, 0xFC, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!((dword(28), dword(36), dword(40), dword(44)), (0, 0, 28, 108));
    let Dp4Body::AddForwardRequest(m) = Dp4Message::parse(b).unwrap().body else { panic!() };
    assert_eq!(m.player_info.flags, PlayerFlags::SYSTEM_PLAYER | PlayerFlags::LOCAL);
    assert_eq!(m.player_info.system_player_id, m.player_id);
    assert_eq!(m.password, Some(WideString::default()));
    assert_eq!(
        m.player_info.sp_data.0,
        [&[2, 0, 0x08, 0xFC][..], &[0; 12], &[2, 0, 0x09, 0x2E], &[0; 12]].concat(),
        "TCP 2300 and UDP 2350, addresses 0"
    );
}

/// MC-DPL4CS 2.2.45: a non-guaranteed message is a datagram of idFrom, idTo and the data, with
/// no size/token or SockAddr; a guaranteed one on TCP has them.
#[test]
fn datagram_player_message_has_no_prefix() {
    let mut net = session_of(2, |_| {});
    let a = created(&mut net, 0, "a");
    let b = created(&mut net, 1, "b");
    let now = net.now;
    net.nodes[0].send(now, a, b, b"xy", false).unwrap();
    let t = net.nodes[0].poll_transmit().unwrap();
    assert_eq!(t.via, Via::Udp);
    assert_eq!(
        t.bytes,
        [a.to_le_bytes(), b.to_le_bytes()].concat().into_iter().chain(*b"xy").collect::<Vec<_>>()
    );
    net.nodes[0].send(now, a, b, b"xy", true).unwrap();
    let t = net.nodes[0].poll_transmit().unwrap();
    assert_eq!((t.via, t.bytes.len()), (Via::Tcp, 30));
    assert_eq!(t.bytes[..4], [30, 0, 0xB0, 0xFA]);
}

/// MC-DPL4CS 2.2.3, 2.2.53: in SUPERENUMPLAYERSREPLY the host's system player carries SP, NS,
/// PG and PL (0xF), its application players PL (0x8) with their system player's ID, and
/// another instance's system player SP and PG (0x5).
#[test]
fn super_enum_flags_match_windows() {
    let mut net2 = Net::new(3);
    net2.host(session("S"));
    let p = created(&mut net2, 0, "host pilot");
    net2.join(1, None);
    net2.join(2, None);
    let sent =
        net2.log.iter().rev().find(|s| s.name == "DPSP_MSG_SUPERENUMPLAYERSREPLY" && s.to == 2).unwrap();
    let Dp4Body::SuperEnumPlayersReply(m) = Dp4Message::parse(&sent.bytes).unwrap().body else { panic!() };
    let host = net2.nodes[0].system_player().unwrap();
    let flags = |id: u32| m.players.iter().find(|e| e.id == id).unwrap().flags.bits();
    assert_eq!(flags(host), 0xF);
    assert_eq!(flags(p), 0x8);
    assert_eq!(m.players.iter().find(|e| e.id == p).unwrap().version_or_system_player_id, host);
    assert_eq!(flags(net2.nodes[1].system_player().unwrap()), 0x5);
}
