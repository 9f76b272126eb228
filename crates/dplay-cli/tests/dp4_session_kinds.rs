//! `dplay join --dp4` and the kinds of DirectPlay 4 session it does not join (MC-DPL4CS 1.3,
//! 2.2.5): a scripted host on loopback answers the join's enumeration with a multicast-server
//! or secure-server session, and the join stops at the reply, naming the kind, instead of going
//! on to a timeout.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4, TcpStream, UdpSocket};
use std::time::Duration;

use dplay_wire::Wire;
use dplay_wire::dp4::enumeration::EnumSessionsReply;
use dplay_wire::dp4::header::{SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::session::{SESSION_DESC_LEN, SessionDesc2, SessionFlags};

/// Answers one ENUMSESSIONS on `udp` with a session of `flags`: ENUMSESSIONSREPLY over TCP to
/// the listener the request's SockAddr names, at 127.0.0.1 (MC-DPL4CS 2.2.29, 2.2.30, 3.2.5.3).
fn answer_once(udp: &UdpSocket, flags: SessionFlags) {
    udp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut buf = [0; 1500];
    let (n, _) = udp.recv_from(&mut buf).unwrap();
    let request = Dp4Message::parse(&buf[..n]).unwrap();
    let listener = request.header.sock_addr.addr.port();
    let desc = SessionDesc2 {
        size: u32::try_from(SESSION_DESC_LEN).unwrap(),
        flags,
        instance_guid: uuid::Uuid::from_u128(7),
        application_guid: uuid::Uuid::from_u128(8),
        max_players: 8,
        current_player_count: 1,
        session_name: 0,
        password: 0,
        reserved1: 0x1234,
        reserved2: 0,
        application_defined: [0; 4],
    };
    let body = Dp4Body::EnumSessionsReply(EnumSessionsReply {
        session_desc: desc,
        session_name: Some(dplay_wire::WideString::new("windows")),
    });
    let ours = SockAddrIn::new(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 2349));
    let reply = Dp4Message::new(Token::FROM_REMOTE, ours, 14, body).to_vec().unwrap();
    let mut tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, listener)).unwrap();
    tcp.write_all(&reply).unwrap();
}

/// MC-DPL4CS 1.3 (MS, SS; issue 27 item 9): the join names the session's kind and exits 1.
#[test]
fn multicast_and_secure_servers_are_named_from_the_enumeration() {
    for (flags, kind) in [
        (SessionFlags::MULTICAST_SERVER, "multicast-server (DPSESSION_MULTICASTSERVER)"),
        (SessionFlags::SECURE_SERVER | SessionFlags::CLIENT_SERVER, "secure-server (DPSESSION_SECURESERVER)"),
    ] {
        let udp = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = udp.local_addr().unwrap().port().to_string();
        let host = std::thread::spawn(move || answer_once(&udp, flags));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_dplay"))
            .args(["join", "--dp4", "127.0.0.1", "--host-enum-port", &port, "--timeout", "30"])
            .output()
            .unwrap();
        host.join().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(kind), "{kind}: {err}");
    }
}
