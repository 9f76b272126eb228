//! Enumeration: the host's answers to DPSP_MSG_ENUMSESSIONS (MC-DPL4CS 3.2.5.3, 3.1.4.1, 4.1,
//! 4.2).

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

use dplay_wire::dp4::enumeration::{EnumSessions, EnumSessionsFlags, EnumSessionsReply};
use dplay_wire::dp4::header::{SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::session::{SessionDesc2, SessionFlags};
use dplay_wire::{WideString, Wire};
use uuid::Uuid;

use super::net::{APP, Net, session, start, stream};
use crate::dp4::{Dp4Event, Dp4Session, EnumRequest, HostConfig, SessionIdentity, Via};

fn request(flags: EnumSessionsFlags, password: Option<&str>) -> EnumRequest {
    EnumRequest { application_guid: APP, password: password.map(str::to_owned), flags }
}

#[track_caller]
fn found(net: &mut Net, i: usize) -> Vec<String> {
    net.take(i)
        .into_iter()
        .filter_map(|e| match e {
            Dp4Event::SessionFound(f) => Some(f.name.unwrap_or_default()),
            _ => None,
        })
        .collect()
}

/// Hosts `cfg` on node 0 and lets node 1 enumerate with `req`; returns the sessions found.
#[track_caller]
fn enumerate(cfg: HostConfig, req: &EnumRequest) -> Vec<String> {
    let mut net = Net::new(2);
    net.host(cfg);
    net.enumerate(1, req);
    found(&mut net, 1)
}

/// MC-DPL4CS 4.1 and 4.2: a host configured as the session of 4.2 answers the ENUMSESSIONS of
/// 4.1 with exactly the ENUMSESSIONSREPLY of 4.2, over TCP to the request's SockAddr port.
#[test]
fn host_answers_example_4_1_with_example_4_2() {
    let identity = SessionIdentity {
        instance_guid: Uuid::parse_str("21FAA08E-42FC-B546-AFD3-5E1584FBBB60").unwrap(),
        reserved1: 0x1E52_A0A1,
    };
    let cfg = HostConfig {
        max_players: 1000,
        password: Some("Password".into()),
        flags: SessionFlags::MIGRATE_HOST | SessionFlags::PASSWORD_REQUIRED,
        application_defined: [0, 2, 3, 4],
        identity: Some(identity),
        ..session("LOTHAIR")
    };
    let now = start();
    let mut host = Dp4Session::new(super::net::config(0)).unwrap();
    host.host(now, cfg).unwrap();
    host.create_player(now, "pilot").unwrap();
    let addr = SockAddrIn::new(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 2300));
    let enum_41 = Dp4Message::new(
        Token::FROM_REMOTE,
        addr,
        14,
        Dp4Body::EnumSessions(EnumSessions {
            application_guid: APP,
            flags: EnumSessionsFlags::ALL,
            password: Some(WideString::new("Password")),
        }),
    )
    .to_vec()
    .unwrap();
    assert_eq!(enum_41.len(), 70);
    let client: SocketAddr = "192.168.0.7:2300".parse().unwrap();
    host.handle_udp(now, client, &enum_41);
    let reply = host.poll_transmit().unwrap();
    assert_eq!((reply.via, reply.to), (Via::Tcp, client));
    let expected = Dp4Message::new(
        Token::FROM_REMOTE,
        addr,
        14,
        Dp4Body::EnumSessionsReply(EnumSessionsReply {
            session_desc: SessionDesc2 {
                size: 80,
                flags: SessionFlags::from_bits_retain(0x404),
                instance_guid: identity.instance_guid,
                application_guid: APP,
                max_players: 1000,
                current_player_count: 1,
                session_name: 0,
                password: 0,
                reserved1: 0x1E52_A0A1,
                reserved2: 0,
                application_defined: [0, 2, 3, 4],
            },
            session_name: Some(WideString::new("LOTHAIR")),
        }),
    );
    assert_eq!(reply.bytes, expected.to_vec().unwrap());
    assert_eq!(reply.bytes.len(), 128);
    assert_eq!(reply.bytes[..4], [0x80, 0x00, 0xB0, 0xFA]);
    assert!(host.poll_transmit().is_none());
}

/// MC-DPL4CS 3.1.4.1, 2.1: a broadcast ENUMSESSIONS to 47624 finds the host, whose reply comes
/// over TCP and names its listener; the enumeration timer then ends the search.
#[test]
fn broadcast_enumeration_finds_the_host() {
    let mut net = Net::new(2);
    net.host(session("Friday flight"));
    net.enumerate(1, &request(EnumSessionsFlags::AVAILABLE, None));
    assert_eq!(net.trace(), ["1->0 Udp DPSP_MSG_ENUMSESSIONS", "0->1 Tcp DPSP_MSG_ENUMSESSIONSREPLY"]);
    let events = net.take(1);
    let [Dp4Event::SessionFound(f)] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!((f.host, f.name.as_deref()), (stream(0), Some("Friday flight")));
    net.advance(Duration::from_secs(5));
    assert_eq!(net.take(1), [Dp4Event::EnumDone]);
}

/// MC-DPL4CS 3.2.5.3: only sessions of the requested ApplicationGuid are returned; GUID_NULL
/// asks for every application (docs/decisions.md).
#[test]
fn application_guid_must_match() {
    let other = EnumRequest { application_guid: Uuid::from_u128(7), ..request(EnumSessionsFlags::ALL, None) };
    assert!(enumerate(session("S"), &other).is_empty());
    let any = EnumRequest { application_guid: Uuid::nil(), ..request(EnumSessionsFlags::ALL, None) };
    assert_eq!(enumerate(session("S"), &any), ["S"]);
}

/// MC-DPL4CS 3.2.5.3 (AV, AL): a full or closed session is hidden from AV, shown to AL.
#[test]
fn available_hides_full_sessions_all_shows_them() {
    let full = || HostConfig { max_players: 1, ..session("Full") };
    let mut net = Net::new(2);
    net.host(full());
    let now = net.now;
    net.nodes[0].create_player(now, "host pilot").unwrap();
    net.run();
    net.enumerate(1, &request(EnumSessionsFlags::AVAILABLE, None));
    assert!(found(&mut net, 1).is_empty());
    net.enumerate(1, &request(EnumSessionsFlags::ALL, None));
    assert_eq!(found(&mut net, 1), ["Full"]);
    let closed = HostConfig { flags: SessionFlags::JOIN_DISABLED, ..session("Closed") };
    assert!(enumerate(closed, &request(EnumSessionsFlags::AVAILABLE, None)).is_empty());
}

/// MC-DPL4CS 3.2.5.3, 2.2.5 (P, PR; F-27, F-28): a private session needs the password; a
/// password-required one is shown to a request with the PR flag or the right password.
#[test]
fn passwords_filter_enumeration() {
    let private =
        || HostConfig { password: Some("sesame".into()), flags: SessionFlags::PRIVATE, ..session("P") };
    assert!(enumerate(private(), &request(EnumSessionsFlags::ALL, None)).is_empty());
    assert!(enumerate(private(), &request(EnumSessionsFlags::ALL, Some("wrong"))).is_empty());
    assert_eq!(enumerate(private(), &request(EnumSessionsFlags::ALL, Some("sesame"))), ["P"]);
    let required = || HostConfig {
        password: Some("sesame".into()),
        flags: SessionFlags::PASSWORD_REQUIRED,
        ..session("R")
    };
    assert!(enumerate(required(), &request(EnumSessionsFlags::ALL, None)).is_empty());
    let with_pr = EnumSessionsFlags::ALL | EnumSessionsFlags::PASSWORD_REQUIRED;
    assert_eq!(enumerate(required(), &request(with_pr, None)), ["R"]);
    assert_eq!(enumerate(required(), &request(EnumSessionsFlags::ALL, Some("sesame"))), ["R"]);
}

/// MC-DPL4CS 3.1.4.1: an ENUMSESSIONSREPLY when not enumerating is dropped and counted.
#[test]
fn stray_enum_reply_is_dropped() {
    let mut net = Net::new(2);
    net.host(session("S"));
    net.enumerate(1, &request(EnumSessionsFlags::ALL, None));
    net.advance(Duration::from_secs(6));
    net.take(1);
    let now = net.now;
    net.nodes[1].enum_sessions(now, None, &request(EnumSessionsFlags::ALL, None));
    let t = net.nodes[1].poll_transmit().unwrap();
    net.nodes[0].handle_udp(now, "10.0.0.2:2350".parse().unwrap(), &t.bytes);
    let reply = net.nodes[0].poll_transmit().unwrap();
    net.advance(Duration::from_secs(6));
    net.take(1);
    net.nodes[1].handle_tcp(now, 9, stream(0), &reply.bytes).unwrap();
    assert_eq!(net.nodes[1].stats().dropped(crate::dp4::DropReason::Unexpected), 1);
}
