//! Wireshark's `dplay` dissector (DirectPlay 4, heuristic on UDP and TCP) reads our
//! encodings as we mean them: DPSP_MSG_HEADER field by field, over UDP and over TCP, and the
//! bodies tshark dissects.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

use std::net::{Ipv4Addr, SocketAddrV4};

use dplay_tests::pcap::Packet;
use dplay_tests::tshark::{self, Frame};
use dplay_wire::dp4::enumeration::{EnumSessions, EnumSessionsFlags};
use dplay_wire::dp4::fragment::Fragment;
use dplay_wire::dp4::header::{Command, SockAddrIn, Token};
use dplay_wire::dp4::join::{RequestPlayerFlags, RequestPlayerId};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::nametable::PlayerGroupIds;
use dplay_wire::dp4::routing::Ping;
use dplay_wire::{Blob, Datagram, Uuid, WideString, Wire, parse_datagram};

const CLIENT: &str = "192.168.1.10:2300";
const HOST: &str = "192.168.1.20:47624";
const APP: Uuid = Uuid::from_u128(0x61EF_80DA_691B_4247_9ADD_1C7B_ED2B_C13E);

fn message(body: Dp4Body, token: Token, port: u16) -> Dp4Message {
    let sock_addr = SockAddrIn::new(SocketAddrV4::new(Ipv4Addr::new(192, 168, 1, 10), port));
    Dp4Message::new(token, sock_addr, 14, body)
}

/// A short-form DPSP_MSG_PING (MC-DPL4CS 2.2.6, 2.2.42): what a PACKET's first fragment carries.
fn short_ping() -> Vec<u8> {
    [&b"play\x16\x00\x0E\x00"[..], &0x55u32.to_le_bytes(), &0x1234u32.to_le_bytes()].concat()
}

/// DP4 messages built from our body types (MC-DPL4CS 2.2).
fn messages() -> Vec<Dp4Message> {
    let ping = short_ping();
    vec![
        message(
            Dp4Body::EnumSessions(EnumSessions {
                application_guid: APP,
                flags: EnumSessionsFlags::AVAILABLE | EnumSessionsFlags::PASSWORD_REQUIRED,
                password: Some(WideString::new("secret")),
            }),
            Token::FROM_REMOTE,
            2300,
        ),
        message(
            Dp4Body::RequestPlayerId(RequestPlayerId { flags: RequestPlayerFlags::SYSTEM_PLAYER }),
            Token::FROM_REMOTE,
            2301,
        ),
        message(
            Dp4Body::Ping(Ping { id_from: 0x1234_5678, tick_count: 0x00AB_CDEF }),
            Token::FROM_SERVER,
            2302,
        ),
        message(
            Dp4Body::DeletePlayer(PlayerGroupIds {
                id_to: 0x11,
                player_id: 0x22,
                group_id: 0x33,
                create_offset: 0,
                password_offset: 0,
            }),
            Token::FORWARD,
            2399,
        ),
        message(
            Dp4Body::Packet(Fragment {
                guid_message: Uuid::from_u128(0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10),
                packet_index: 0,
                offset: 0,
                total_packets: 1,
                message_size: u32::try_from(ping.len()).unwrap(),
                packet_offset: 48,
                data: Blob(ping),
            }),
            Token::FROM_REMOTE,
            2300,
        ),
    ]
}

#[track_caller]
fn check_header(f: &Frame, m: &Dp4Message) {
    f.assert_clean(m.name());
    let h = &m.header;
    assert_eq!(f.num("dplay.size"), m.encoded_len() as u64);
    assert_eq!(f.num("dplay.token"), u64::from(h.token.0));
    assert_eq!(f.num("dplay.saddr.af"), u64::from(h.sock_addr.family));
    assert_eq!(f.num("dplay.saddr.port"), u64::from(h.sock_addr.addr.port()));
    assert_eq!(f.str("dplay.saddr.ip"), h.sock_addr.addr.ip().to_string());
    assert_eq!(f.str("dplay.saddr.padding"), "00:00:00:00:00:00:00:00");
    assert_eq!(f.str("dplay.dplay_str"), "play");
    assert_eq!(f.num("dplay.command"), u64::from(h.command.0));
    assert_eq!(f.num("dplay.dialect.version"), u64::from(h.version));
}

/// tshark shows IDs as bytes: `78:56:34:12`.
fn id_bytes(id: u32) -> String {
    id.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[track_caller]
fn check_body(f: &Frame, m: &Dp4Message) {
    match &m.body {
        Dp4Body::EnumSessions(e) => {
            assert_eq!(f.str("dplay.type02.game.guid"), tshark::guid(&e.application_guid));
            // PasswordOffset counts from the signature: 8 + 24 = 32 (MC-DPL4CS 4.1, F-26).
            assert_eq!(f.num("dplay.type02.password_offset"), 32);
            assert_eq!(f.num("dplay.type02.flags"), u64::from(e.flags.bits()));
            assert_eq!(f.str("dplay.type02.password"), e.password.as_ref().unwrap().to_string());
        }
        Dp4Body::RequestPlayerId(r) => assert_eq!(f.num("dplay.type_05.flags"), u64::from(r.flags.bits())),
        Dp4Body::Ping(p) => {
            assert_eq!(f.str("dplay.ping.id_from"), id_bytes(p.id_from));
            assert_eq!(f.num("dplay.ping.tick_count"), u64::from(p.tick_count));
        }
        Dp4Body::DeletePlayer(ids) => {
            assert_eq!(f.str("dplay.multi.id_to"), id_bytes(ids.id_to));
            assert_eq!(f.str("dplay.multi.player_id"), id_bytes(ids.player_id));
            assert_eq!(f.str("dplay.multi.group_id"), id_bytes(ids.group_id));
            assert_eq!(f.num("dplay.multi.create_offset"), u64::from(ids.create_offset));
            assert_eq!(f.num("dplay.multi.password_offset"), u64::from(ids.password_offset));
        }
        Dp4Body::Packet(frag) => {
            assert_eq!(f.str("dplay.message.guid"), tshark::guid(&frag.guid_message));
            assert_eq!(f.num("dplay.type_15.packet_idx"), u64::from(frag.packet_index));
            assert_eq!(f.num("dplay.type_15.data_size"), frag.data.len() as u64);
            assert_eq!(f.num("dplay.type_15.offset"), u64::from(frag.offset));
            assert_eq!(f.num("dplay.type_15.total_packets"), u64::from(frag.total_packets));
            assert_eq!(f.num("dplay.type_15.message.size"), u64::from(frag.message_size));
            assert_eq!(f.num("dplay.type_15.packet_offset"), u64::from(frag.packet_offset));
            // The first fragment's data, a short-form PING, dissected as the second message.
            assert_eq!(f.str("dplay.dplay_str_2"), "play");
            assert_eq!(f.num("dplay.command_2"), u64::from(Command::DPSP_MSG_PING.0));
            assert_eq!(f.num("dplay.dialect.version_2"), 14);
        }
        other => panic!("no body check for {}", other.name()),
    }
}

/// MC-DPL4CS 2.2: the header and the bodies tshark dissects, over UDP (the enumeration port)
/// and over TCP (2300-2400).
#[test]
fn dp4_messages_match_tshark() {
    if !tshark::available("dp4_messages_match_tshark") {
        return;
    }
    let msgs = messages();
    let mut packets = Vec::new();
    let mut seq = 1;
    for m in &msgs {
        let bytes = m.to_vec().expect("emit");
        assert_eq!(parse_datagram(&bytes), Ok(Datagram::Dp4(m.clone())), "our own decoder agrees");
        packets.push(Packet::udp(CLIENT, HOST, &bytes));
        packets.push(Packet::tcp(CLIENT, "192.168.1.20:2300", seq, &bytes));
        seq += u32::try_from(bytes.len()).unwrap();
    }
    let dissected = tshark::dissect("dp4", &packets);
    for (pair, m) in dissected.chunks(2).zip(&msgs) {
        for f in pair {
            check_header(f, m);
            check_body(f, m);
        }
    }
}

/// The "no malformed packet" check is not vacuous: a DPSP_MSG_ENUMSESSIONS cut after its
/// header is flagged by tshark, and the harness sees it.
#[test]
fn harness_sees_malformed() {
    if !tshark::available("harness_sees_malformed") {
        return;
    }
    let mut cut = messages()[0].to_vec().unwrap();
    cut.truncate(28);
    cut[0] = 28;
    let dissected = tshark::dissect("dp4_malformed", &[Packet::udp(CLIENT, HOST, &cut)]);
    let flagged = std::panic::catch_unwind(|| dissected[0].assert_clean("cut ENUMSESSIONS"));
    assert!(flagged.is_err(), "tshark did not flag a truncated message: {:?}", dissected[0].fields);
}
