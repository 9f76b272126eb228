//! Wireshark's `dplay` dissector (DirectPlay 4, heuristic on UDP and TCP) reads our
//! encodings as we mean them: DPSP_MSG_HEADER field by field, over UDP and over TCP, and the
//! bodies tshark dissects.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

use std::net::{Ipv4Addr, SocketAddrV4};

use dplay_tests::pcap::Packet;
use dplay_tests::tshark::{self, Frame};
use dplay_wire::datagram::{Datagram, Dp4Datagram};
use dplay_wire::dp4::header::{Command, Header, SockAddrIn, Token};
use dplay_wire::{Blob, Uuid, Wire, parse_datagram};

const CLIENT: &str = "192.168.1.10:2300";
const HOST: &str = "192.168.1.20:47624";
const APP: Uuid = Uuid::from_u128(0x61EF_80DA_691B_4247_9ADD_1C7B_ED2B_C13E);

fn header(command: Command, token: Token, port: u16) -> Header {
    Header {
        token,
        sock_addr: SockAddrIn::new(SocketAddrV4::new(Ipv4Addr::new(192, 168, 1, 10), port)),
        command,
        version: 14,
    }
}

fn dwords(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// DP4 messages with the bodies of MC-DPL4CS 2.2 (INDEX D.17), encoded through our header.
fn messages() -> Vec<Dp4Datagram> {
    let enum_sessions = [APP.to_bytes_le().to_vec(), dwords(&[0, 0x0000_0043])].concat();
    vec![
        Dp4Datagram {
            header: header(Command::DPSP_MSG_ENUMSESSIONS, Token::FROM_REMOTE, 2300),
            body: Blob(enum_sessions),
        },
        Dp4Datagram {
            header: header(Command::DPSP_MSG_REQUESTPLAYERID, Token::FROM_REMOTE, 2301),
            body: Blob(dwords(&[0x9])),
        },
        Dp4Datagram {
            header: header(Command::DPSP_MSG_PING, Token::FROM_SERVER, 2302),
            body: Blob(dwords(&[0x1234_5678, 0x00AB_CDEF])),
        },
        Dp4Datagram {
            header: header(Command::DPSP_MSG_DELETEPLAYER, Token::FORWARD, 2399),
            body: Blob(dwords(&[0x11, 0x22, 0x33, 0, 0])),
        },
    ]
}

#[track_caller]
fn check_header(f: &Frame, m: &Dp4Datagram) {
    f.assert_clean(m.message_name());
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

fn dword(body: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(body[at..at + 4].try_into().unwrap()))
}

/// tshark shows IDs as bytes: `78:56:34:12`.
fn id_bytes(body: &[u8], at: usize) -> String {
    body[at..at + 4].iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[track_caller]
fn check_body(f: &Frame, m: &Dp4Datagram) {
    let b = &m.body.0;
    match m.header.command {
        Command::DPSP_MSG_ENUMSESSIONS => {
            // tshark 4.0's dplay shows GUIDs as if big-endian; the wire holds the Windows
            // layout (INDEX §0), so compare the bytes.
            assert_eq!(f.str("dplay.type02.game.guid"), Uuid::from_bytes(APP.to_bytes_le()).to_string());
            assert_eq!(f.num("dplay.type02.password_offset"), dword(b, 16));
            assert_eq!(f.num("dplay.type02.flags"), dword(b, 20));
        }
        Command::DPSP_MSG_REQUESTPLAYERID => assert_eq!(f.num("dplay.type_05.flags"), dword(b, 0)),
        Command::DPSP_MSG_PING => {
            assert_eq!(f.str("dplay.ping.id_from"), id_bytes(b, 0));
            assert_eq!(f.num("dplay.ping.tick_count"), dword(b, 4));
        }
        Command::DPSP_MSG_DELETEPLAYER => {
            assert_eq!(f.str("dplay.multi.id_to"), id_bytes(b, 0));
            assert_eq!(f.str("dplay.multi.player_id"), id_bytes(b, 4));
            assert_eq!(f.str("dplay.multi.group_id"), id_bytes(b, 8));
            assert_eq!(f.num("dplay.multi.create_offset"), dword(b, 12));
            assert_eq!(f.num("dplay.multi.password_offset"), dword(b, 16));
        }
        other => panic!("no body check for {other:?}"),
    }
}

/// MC-DPL4CS 2.2.6: the header over UDP (the enumeration port) and over TCP (2300-2400).
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
    let cut = Dp4Datagram {
        header: header(Command::DPSP_MSG_ENUMSESSIONS, Token::FROM_REMOTE, 2300),
        body: Blob(vec![]),
    };
    let dissected = tshark::dissect("dp4_malformed", &[Packet::udp(CLIENT, HOST, &cut.to_vec().unwrap())]);
    let flagged = std::panic::catch_unwind(|| dissected[0].assert_clean("cut ENUMSESSIONS"));
    assert!(flagged.is_err(), "tshark did not flag a truncated message: {:?}", dissected[0].fields);
}
