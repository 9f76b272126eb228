//! The DirectPlay 4 relay's rules, one message at a time (docs/relay.md, "DirectPlay 4").

use std::net::{SocketAddr, SocketAddrV4};

use dplay_session::dp4::table::sp_data;
use dplay_wire::dp4::header::{SockAddrIn, Token};
use dplay_wire::dp4::join::PlayerInfoMessage;
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::player::PackedPlayer;
use dplay_wire::dp4::session::PlayerFlags;
use dplay_wire::{Blob, Reader, WideString, Wire};
use proptest::prelude::*;

use super::*;

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn endpoint(i: u16) -> Dp4Endpoint {
    Dp4Endpoint {
        stream: addr(&format!("198.51.100.1:{}", 2410 + i)),
        datagram: addr(&format!("198.51.100.1:{}", 2450 + i)),
    }
}

/// Alice behind one NAT, Bob behind another, both on private port 2300: the host answers
/// them at their public IPs and the ports their headers name.
const ALICE: u32 = 0x10;
const BOB: u32 = 0x20;

fn relay() -> Dp4Relay {
    let mut r = Dp4Relay::new(Dp4RelayConfig::new((0..4).map(endpoint).collect()));
    assert_eq!(r.admit(ALICE, addr("203.0.113.1:2300"), addr("203.0.113.1:2350")), Some(endpoint(0)));
    assert_eq!(
        r.admitted(BOB, addr("203.0.113.2:2300"), addr("203.0.113.2:2350")),
        Some((endpoint(1).stream, endpoint(1).datagram))
    );
    r
}

/// A 20-byte stream prefix (MC-DPL4CS 2.2.6) naming listener port `port` at 0.0.0.0, then
/// `body`: a player message on a stream (idFrom, idTo, data; 2.2.45).
fn player_message(port: u16, body: &[u8]) -> Vec<u8> {
    let len = 20 + body.len();
    let mut m = (u32::try_from(len).unwrap() | 0xFAB << 20).to_le_bytes().to_vec();
    m.extend_from_slice(&[2, 0]);
    m.extend_from_slice(&port.to_be_bytes());
    m.extend_from_slice(&[0; 12]);
    m.extend_from_slice(body);
    m
}

fn create_player(port: u16, id: u32, system: u32) -> Vec<u8> {
    let player = PackedPlayer {
        flags: PlayerFlags::empty(),
        player_id: id,
        system_player_id: system,
        player_version: 14,
        parent_id: 0,
        short_name: Some(WideString::new("pilot")),
        long_name: None,
        sp_data: sp_data(addr("192.168.1.5:2300"), addr("192.168.1.5:2350")),
        player_data: Blob(vec![7; 5]),
        player_ids: Vec::new(),
        size_counts_player_ids: false,
    };
    let body = Dp4Body::CreatePlayer(PlayerInfoMessage {
        id_to: 0,
        player_id: id,
        group_id: 0,
        password_offset: 0,
        player_info: player,
        reserved: None,
    });
    let sock = SockAddrIn::new(SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, port));
    Dp4Message::new(Token::FROM_REMOTE, sock, 14, body).to_vec().unwrap()
}

fn forwards(r: &mut Dp4Relay) -> Vec<(Dp4Forward, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(f) = r.poll_forward(&mut buf) {
        out.push((f, std::mem::take(&mut buf)));
    }
    out
}

/// The SockAddr a message's header names.
fn header_addr(m: &[u8]) -> SocketAddrV4 {
    SockAddrIn::read(&mut Reader::new(&m[4..20])).unwrap().addr
}

/// A message from Alice to Bob's endpoint goes on the connection Bob opened to the host's
/// listener, its header naming Alice's endpoint, every other byte as sent.
#[test]
fn a_stream_message_goes_back_on_the_connection_the_receiver_opened() {
    let now = crate::tests::t0();
    let mut r = relay();
    r.accepted(1, None);
    r.accepted(2, Some(1));
    assert_eq!(
        r.handle_stream(now, 1, addr("203.0.113.2:40001"), &player_message(2300, b"hello"), &mut Vec::new()),
        Ok(Dp4StreamRead::SessionRewritten { held: false })
    );
    let m = player_message(2300, &[0x10, 0, 0, 0, 0x20, 0, 0, 0, b'h', b'i']);
    // Split across reads: the relay waits for the whole message.
    assert_eq!(
        r.handle_stream(now, 2, addr("203.0.113.1:40002"), &m[..9], &mut Vec::new()),
        Ok(Dp4StreamRead::Relayed)
    );
    assert!(forwards(&mut r).is_empty());
    r.handle_stream(now, 2, addr("203.0.113.1:40002"), &m[9..], &mut Vec::new()).unwrap();
    let out = forwards(&mut r);
    assert_eq!(out.len(), 1);
    let (f, bytes) = &out[0];
    assert_eq!(*f, Dp4Forward::Stream { conn: 1, peer: addr("203.0.113.2:40001") });
    assert_eq!(SocketAddr::V4(header_addr(bytes)), endpoint(0).stream);
    assert_eq!(bytes[..4], m[..4]);
    assert_eq!(bytes[20..], m[20..]);
    let s = r.stats();
    assert_eq!((s.datagrams, s.bytes), (1, m.len() as u64));
    assert_eq!(s.members[0].datagrams_from, 1);
    assert_eq!(s.members[1].datagrams_to, 1);
    // Alice's connection now carries messages for her: the host answers her on it.
    assert_eq!(r.route_stream(addr("203.0.113.1:2300")), Some(2));
    assert_eq!(r.route_stream(addr("203.0.113.2:2300")), Some(1));
    assert!(!r.stream_closed(1));
    assert_eq!(r.route_stream(addr("203.0.113.2:2300")), None);
    assert!(r.stream_closed(2));
}

/// MC-DPL4CS 2.2.21: a CREATEPLAYER's SPData becomes its sender's endpoint, so the receiver
/// reaches the new player through the relay.
#[test]
fn create_player_sp_data_names_the_senders_endpoint() {
    let now = crate::tests::t0();
    let mut r = relay();
    r.accepted(1, None);
    r.accepted(2, Some(1));
    r.handle_stream(now, 1, addr("203.0.113.2:40001"), &player_message(2300, b"x"), &mut Vec::new()).unwrap();
    let m = create_player(2300, 0x11, ALICE);
    r.handle_stream(now, 2, addr("203.0.113.1:40002"), &m, &mut Vec::new()).unwrap();
    let out = forwards(&mut r);
    let bytes = &out[0].1;
    let parsed = Dp4Message::parse(bytes).unwrap();
    let Dp4Body::CreatePlayer(p) = parsed.body else { panic!("not CREATEPLAYER") };
    assert_eq!(p.player_info.sp_data, sp_data(endpoint(0).stream, endpoint(0).datagram));
    assert_eq!(p.player_info.short_name, Some(WideString::new("pilot")));
    assert_eq!(bytes.len(), m.len());
}

/// Not an open relay: a connection from no member, or to a free endpoint, is closed and
/// counted; a member's own endpoint does not relay to itself.
#[test]
fn strangers_are_closed_and_counted() {
    let now = crate::tests::t0();
    let mut r = relay();
    let m = player_message(2300, b"spam");
    for (conn, at) in [(3, 1), (4, 3), (5, 0), (6, 0)] {
        r.accepted(conn, Some(at));
    }
    assert_eq!(
        r.handle_stream(now, 3, addr("192.0.2.9:4000"), &m, &mut Vec::new()),
        Err(Dp4StreamError::Stranger)
    );
    assert_eq!(
        r.handle_stream(now, 4, addr("203.0.113.1:4000"), &m, &mut Vec::new()),
        Err(Dp4StreamError::Stranger)
    );
    assert_eq!(
        r.handle_stream(now, 5, addr("203.0.113.1:4001"), &m, &mut Vec::new()),
        Err(Dp4StreamError::Stranger)
    );
    assert_eq!(
        r.handle_stream(now, 6, addr("203.0.113.1:4001"), &[0xFF; 8], &mut Vec::new()),
        Err(Dp4StreamError::Framing)
    );
    // A connection the host opened is the session's.
    assert_eq!(
        r.handle_stream(now, 7, addr("203.0.113.1:2300"), &m, &mut Vec::new()),
        Ok(Dp4StreamRead::Session)
    );
    assert_eq!(r.stats().strangers, 3);
    assert!(forwards(&mut r).is_empty());
}

/// A receiver that opened no connection to the host cannot be sent to (a NAT refuses a new
/// one): the message is dropped as unlatched.
#[test]
fn no_connection_from_the_receiver_drops_as_unlatched() {
    let now = crate::tests::t0();
    let mut r = relay();
    r.accepted(2, Some(1));
    r.handle_stream(now, 2, addr("203.0.113.1:40002"), &player_message(2300, b"x"), &mut Vec::new()).unwrap();
    assert!(forwards(&mut r).is_empty());
    assert_eq!(r.stats().unlatched, 1);
}

/// UDP: the sender is known by its header, or, headerless, by its IP; the receiver gets it
/// from the sender's endpoint once it sent there itself; a stranger gets nothing.
#[test]
fn datagrams_latch_and_go_from_the_senders_endpoint() {
    let now = crate::tests::t0();
    let mut r = relay();
    let ping = player_message(2300, b"playXXXX");
    // Bob sends to Alice's endpoint first (headerless): latched by IP, Alice not yet latched
    // at Bob's endpoint.
    r.handle_datagram(now, 0, addr("203.0.113.2:50001"), b"\x20\0\0\0\x10\0\0\0pos");
    assert_eq!(r.stats().unlatched, 1);
    // Alice sends to Bob's endpoint (a system message with a header).
    r.handle_datagram(now, 1, addr("203.0.113.1:50002"), &ping);
    let out = forwards(&mut r);
    assert_eq!(out[0].0, Dp4Forward::Datagram { endpoint: 0, to: addr("203.0.113.2:50001") });
    assert_eq!(SocketAddr::V4(header_addr(&out[0].1)), endpoint(0).stream);
    r.handle_datagram(now, 0, addr("203.0.113.2:50001"), b"\x20\0\0\0\x10\0\0\0pos");
    let out = forwards(&mut r);
    assert_eq!(
        out,
        vec![(
            Dp4Forward::Datagram { endpoint: 1, to: addr("203.0.113.1:50002") },
            b"\x20\0\0\0\x10\0\0\0pos".to_vec()
        )]
    );
    r.handle_datagram(now, 0, addr("192.0.2.9:1"), b"\x20\0\0\0\x10\0\0\0pos");
    r.handle_datagram(now, 3, addr("203.0.113.2:50001"), b"x");
    assert_eq!(r.stats().strangers, 2);
    // The host's own datagrams to Alice go where hers to the host's game socket come from.
    assert_eq!(r.route_datagram(addr("203.0.113.1:2350")), None);
    r.observe_game_datagram(addr("203.0.113.1:50009"), &ping);
    assert_eq!(r.route_datagram(addr("203.0.113.1:2350")), Some(addr("203.0.113.1:50009")));
}

/// Two members behind one NAT (one public IP): a headerless datagram is theirs when its
/// idFrom is one of theirs, or it comes from a member's game socket (a cone NAT keeps the
/// port), else nobody's.
#[test]
fn members_behind_one_nat_by_their_ids_or_game_ports() {
    let now = crate::tests::t0();
    let mut r = relay();
    r.admit(0x30, addr("203.0.113.2:2310"), addr("203.0.113.2:2360"));
    let unknown = b"\x77\0\0\0\x10\0\0\0pos";
    r.handle_datagram(now, 0, addr("203.0.113.2:40000"), unknown);
    assert_eq!(r.stats().strangers, 1);
    r.handle_datagram(now, 0, addr("203.0.113.2:2360"), unknown);
    r.handle_datagram(now, 0, addr("203.0.113.2:2350"), unknown);
    // Behind a symmetric NAT (any port): by idFrom, at the member's IP only.
    r.handle_datagram(now, 0, addr("203.0.113.2:40001"), b"\x30\0\0\0\x10\0\0\0pos");
    r.handle_datagram(now, 0, addr("203.0.113.9:40001"), b"\x30\0\0\0\x10\0\0\0pos");
    let s = r.stats();
    assert_eq!((s.strangers, s.latched, s.unlatched), (2, 3, 3));
}

/// A 32-byte REQUESTPLAYERID for a system player (MC-DPL4CS 2.2.49, 3.1.4.2) naming listener
/// port `port`.
fn join_request(port: u16) -> Vec<u8> {
    let mut m = player_message(port, b"play\x05\0\x0e\0\x01\0\0\0");
    assert_eq!(m.len(), 32);
    m[20..24].copy_from_slice(b"play");
    m
}

/// The ADDFORWARDREQUEST of system player `id` (2.2.11: the layout of CREATEPLAYER's body).
fn add_forward_request(port: u16, id: u32) -> Vec<u8> {
    let mut m = create_player(port, id, id);
    m[24..26].copy_from_slice(&0x13u16.to_le_bytes());
    m
}

/// The SPData ports of a message with a PACKEDPLAYER.
fn sp_ports(m: &[u8]) -> (u16, u16) {
    let r = sender::sp_data_range(m).unwrap();
    let sp = &m[r];
    (u16::from_be_bytes([sp[2], sp[3]]), u16::from_be_bytes([sp[18], sp[19]]))
}

/// Two instances behind one NAT, both on listener port 2400 (every home network may use the
/// same ports): the second joiner is known to the session at its connection's public port,
/// which the relay writes in the headers and SPData the session reads from it; each is told
/// apart on the endpoints by the IDs its messages name, and answered on its own connection.
#[test]
fn two_instances_behind_one_nat_on_one_port_are_told_apart() {
    let now = crate::tests::t0();
    let mut r = relay();
    let (one, two) = (addr("203.0.113.5:40001"), addr("203.0.113.5:40002"));
    r.accepted(1, None);
    r.accepted(2, None);
    let mut out = Vec::new();
    // The first joiner is the session's as read (split: the relay reads the first message's
    // start before it hands any of it on).
    let join = join_request(2400);
    assert_eq!(
        r.handle_stream(now, 1, one, &join[..10], &mut out),
        Ok(Dp4StreamRead::SessionRewritten { held: true })
    );
    assert!(out.is_empty());
    assert_eq!(
        r.handle_stream(now, 1, one, &join[10..], &mut out),
        Ok(Dp4StreamRead::SessionRewritten { held: false })
    );
    assert_eq!(out, join);
    let request = add_forward_request(2400, 0x50);
    assert_eq!(r.handle_stream(now, 1, one, &request, &mut out), Ok(Dp4StreamRead::Session));
    // The second: at its connection's public port, in the header and in the SPData.
    r.handle_stream(now, 2, two, &join, &mut out).unwrap();
    assert_eq!(header_addr(&out).port(), 40002);
    assert_eq!(out[..4], join[..4]);
    assert_eq!(out[8..], join[8..]);
    let request = add_forward_request(2400, 0x60);
    assert_eq!(
        r.handle_stream(now, 2, two, &request, &mut out),
        Ok(Dp4StreamRead::SessionRewritten { held: false })
    );
    assert_eq!((header_addr(&out).port(), sp_ports(&out)), (40002, (40002, 40002)));
    assert_eq!(out.len(), request.len());
    assert_eq!(r.route_stream(addr("203.0.113.5:2400")), Some(1));
    assert_eq!(r.route_stream(addr("203.0.113.5:40002")), Some(2));
    // The session admits them as it knows them.
    assert_eq!(r.admit(0x50, addr("203.0.113.5:2400"), addr("203.0.113.5:2400")), Some(endpoint(2)));
    assert_eq!(r.admit(0x60, addr("203.0.113.5:40002"), addr("203.0.113.5:40002")), Some(endpoint(3)));
    // 0x50 creates a player, to 0x60's endpoint: told by the system player it names.
    r.accepted(3, Some(3));
    let create = create_player(2400, 0x51, 0x50);
    r.handle_stream(now, 3, addr("203.0.113.5:40003"), &create, &mut out).unwrap();
    // 0x60 sends to 0x50's endpoint: told by its idFrom.
    r.accepted(4, Some(2));
    let m = player_message(2400, &[0x60, 0, 0, 0, 0x51, 0, 0, 0, b'h', b'i']);
    r.handle_stream(now, 4, addr("203.0.113.5:40004"), &m, &mut out).unwrap();
    let sent: Vec<Dp4Forward> = forwards(&mut r).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        sent,
        [
            Dp4Forward::Stream { conn: 2, peer: two },
            // 0x50's connection in use (its join's, still open), not its newer one to an
            // endpoint: docs/decisions.md, "DP4 relay: one return connection per member".
            Dp4Forward::Stream { conn: 1, peer: one }
        ]
    );
    // Headerless datagrams from 0x50's new player, from any port at their IP: 0x50's.
    r.handle_datagram(now, 3, addr("203.0.113.5:50000"), b"\x51\0\0\0\x61\0\0\0pos");
    r.handle_datagram(now, 2, addr("203.0.113.5:50001"), b"\x60\0\0\0\x51\0\0\0pos");
    r.handle_datagram(now, 3, addr("203.0.113.5:50000"), b"\x51\0\0\0\x61\0\0\0pos");
    let out = forwards(&mut r);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].0, Dp4Forward::Datagram { endpoint: 3, to: addr("203.0.113.5:50000") });
    assert_eq!(out[1].0, Dp4Forward::Datagram { endpoint: 2, to: addr("203.0.113.5:50001") });
    // The host's own datagrams: each where its own come from.
    r.observe_game_datagram(addr("203.0.113.5:50007"), b"\x60\0\0\0\x01\0\0\0pos");
    r.observe_game_datagram(addr("203.0.113.5:50008"), b"\x51\0\0\0\x01\0\0\0pos");
    assert_eq!(r.route_datagram(addr("203.0.113.5:40002")), Some(addr("203.0.113.5:50007")));
    assert_eq!(r.route_datagram(addr("203.0.113.5:2400")), Some(addr("203.0.113.5:50008")));
    assert_eq!(r.stats().strangers, 0);
}

/// A joiner at an address whose instance has no open connection any more is known there
/// (a killed game restarted on its ports: the session replaces the old instance).
#[test]
fn a_rejoin_after_the_old_connection_closed_keeps_its_port() {
    let now = crate::tests::t0();
    let mut r = relay();
    let mut out = Vec::new();
    r.accepted(1, None);
    r.handle_stream(now, 1, addr("203.0.113.5:40001"), &join_request(2400), &mut out).unwrap();
    r.stream_closed(1);
    r.accepted(2, None);
    r.handle_stream(now, 2, addr("203.0.113.5:40002"), &join_request(2400), &mut out).unwrap();
    assert_eq!(out, join_request(2400));
    assert_eq!(r.route_stream(addr("203.0.113.5:2400")), Some(2));
}

/// A member that leaves frees its endpoint (the next joiner takes the one freed longest
/// ago) and its latches.
#[test]
fn leaving_frees_the_endpoint() {
    let now = crate::tests::t0();
    let mut r = relay();
    r.handle_datagram(now, 1, addr("203.0.113.1:50002"), &player_message(2300, b"playXXXX"));
    r.remove(ALICE);
    assert_eq!(r.stats().endpoints_held, 1);
    r.handle_datagram(now, 1, addr("203.0.113.1:50002"), b"x");
    assert_eq!(r.stats().strangers, 1);
    assert_eq!(r.admit(0x30, addr("203.0.113.3:2300"), addr("203.0.113.3:2350")), Some(endpoint(2)));
}

proptest! {
    /// Whatever arrives, nothing panics, and forwards go only on connections members opened
    /// or to addresses members sent from.
    #[test]
    fn forwards_only_to_members(
        inputs in proptest::collection::vec((0u64..4, proptest::option::of(0usize..5), 0u8..4, any::<bool>(), proptest::collection::vec(any::<u8>(), 0..80)), 0..40),
    ) {
        let now = crate::tests::t0();
        let mut r = relay();
        let ips = ["203.0.113.1", "203.0.113.2", "192.0.2.9", "203.0.113.3"];
        let mut member_sources = Vec::new();
        for (conn, at, who, stream, mut data) in inputs {
            let from = addr(&format!("{}:{}", ips[usize::from(who)], 40000 + conn));
            if data.len() >= 20 && who < 2 {
                let size = u32::try_from(data.len()).unwrap() | 0xFAB << 20;
                data[..4].copy_from_slice(&size.to_le_bytes());
                data[4..8].copy_from_slice(&[2, 0, 0x08, 0xFC]);
            }
            if who < 2 {
                member_sources.push(from);
            }
            if stream {
                if data.len() % 3 == 0 {
                    r.accepted(conn, at);
                }
                let _ = r.handle_stream(now, conn, from, &data, &mut Vec::new());
            } else {
                r.handle_datagram(now, at.unwrap_or(0), from, &data);
            }
        }
        let mut buf = Vec::new();
        while let Some(f) = r.poll_forward(&mut buf) {
            if let Dp4Forward::Datagram { to, .. } = f {
                prop_assert!(member_sources.contains(&to));
            }
            buf.clear();
        }
    }
}

proptest! {
    /// Whatever a session connection carries (joins from one NAT on one port among it), the
    /// session gets every byte once, in order, only ports changed: as many bytes as were read,
    /// but what the relay still holds.
    #[test]
    fn the_session_gets_every_byte_once(
        reads in proptest::collection::vec((0u64..3, any::<bool>(), proptest::collection::vec(any::<u8>(), 0..90)), 0..30),
    ) {
        let now = crate::tests::t0();
        let mut r = relay();
        let mut sent = [0usize; 3];
        let mut got = [0usize; 3];
        let mut open = [false; 3];
        let mut out = Vec::new();
        for (conn, join, data) in reads {
            let k = usize::try_from(conn).unwrap();
            if !open[k] {
                r.accepted(conn, None);
                open[k] = true;
            }
            let data = if join { join_request(2400) } else { data };
            sent[k] += data.len();
            let from = addr(&format!("203.0.113.5:{}", 40000 + conn));
            match r.handle_stream(now, conn, from, &data, &mut out) {
                Ok(Dp4StreamRead::Session) => got[k] += data.len(),
                Ok(Dp4StreamRead::SessionRewritten { .. }) => got[k] += out.len(),
                Ok(Dp4StreamRead::Relayed) => prop_assert!(false, "a session connection relayed"),
                Err(_) => {
                    r.stream_closed(conn);
                    open[k] = false;
                    sent[k] = 0;
                    got[k] = 0;
                }
            }
            prop_assert!(got[k] <= sent[k]);
            prop_assert!(sent[k] - got[k] <= MAX_MESSAGE_SIZE);
        }
    }
}

/// A member with no connection of its own left cannot be reached: the session's TCP message for
/// it is reported unreachable at once, never a connect toward its NAT (docs/decisions.md,
/// "Relay"); its last endpoint connection closing is reported lost; a game socket it never
/// sent from to the host's is not sent to.
#[test]
fn a_member_with_no_connection_left_is_unreachable() {
    let now = crate::tests::t0();
    let mut r = relay();
    let (alice, bob) = (addr("203.0.113.1:2300"), addr("203.0.113.2:2300"));
    r.accepted(1, None);
    r.accepted(2, Some(1));
    r.handle_stream(now, 1, addr("203.0.113.1:40001"), &player_message(2300, b"x"), &mut Vec::new()).unwrap();
    let m = player_message(2300, &[0x10, 0, 0, 0, 0x20, 0, 0, 0, b'h', b'i']);
    r.handle_stream(now, 2, addr("203.0.113.1:40002"), &m, &mut Vec::new()).unwrap();
    assert!(!r.stream_unreachable(alice));
    // Bob never opened one; a stranger's listener is the session's to try.
    assert!(r.stream_unreachable(bob));
    assert!(!r.stream_unreachable(addr("192.0.2.9:2300")));
    // Alice's session connection closes (the session hears of it); then her last one.
    assert!(!r.stream_closed(1));
    assert_eq!(r.route_stream(alice), Some(2));
    assert_eq!(r.poll_lost(), None);
    assert!(r.stream_closed(2));
    assert_eq!(r.poll_lost(), Some(alice));
    assert_eq!(r.poll_lost(), None);
    assert!(r.stream_unreachable(alice));
    // UDP: not to a game socket that never sent to the host's.
    assert!(r.datagram_unreachable(addr("203.0.113.1:2350")));
    r.observe_game_datagram(addr("203.0.113.1:2350"), b"\x10\0\0\0\x20\0\0\0pos");
    assert!(!r.datagram_unreachable(addr("203.0.113.1:2350")));
    // Left: nothing of Alice is kept but her listener, which is still not connected to (a
    // removed member that sends again is answered only on a connection it opened).
    r.remove(ALICE);
    assert!(r.stream_unreachable(alice));
    assert!(!r.datagram_unreachable(addr("203.0.113.1:2350")));
    // Once she opens one again, the host answers on it.
    r.accepted(3, None);
    r.handle_stream(now, 3, addr("203.0.113.1:40003"), &player_message(2300, b"x"), &mut Vec::new()).unwrap();
    assert_eq!(r.route_stream(alice), Some(3));
    assert!(!r.stream_unreachable(alice));
}

/// The listeners of the members that left last are remembered, at most one per endpoint
/// (docs/limits.md): the oldest is forgotten first, and a member admitted there again is a
/// member.
#[test]
fn leavers_are_remembered_up_to_one_per_endpoint() {
    let mut r = relay();
    let listener = |i: u32| addr(&format!("198.51.100.{i}:2300"));
    let endpoints = u32::try_from(r.endpoints().len()).unwrap();
    for i in 1..=endpoints + 1 {
        r.admit(100 + i, listener(i), listener(i));
        r.remove(100 + i);
    }
    assert!(!r.stream_unreachable(listener(1)), "the oldest leaver is forgotten");
    assert!((2..=endpoints + 1).all(|i| r.stream_unreachable(listener(i))));
    r.admit(200, listener(2), listener(2));
    assert!(r.stream_unreachable(listener(2)), "a member with no connection of its own");
}
