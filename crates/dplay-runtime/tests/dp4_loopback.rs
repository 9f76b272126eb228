//! A DirectPlay 4 session over real loopback sockets: UDP enumeration, the join over TCP,
//! guaranteed (TCP) and non-guaranteed (UDP, fragmented) messages, bad streams, leaving; a
//! relayed game socket; a session running MC-DPL4R.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use crossbeam_channel::Receiver;
use dplay_runtime::{Dp4Binding, Dp4Command, Dp4Event, Dp4Protocol, Runtime};
use dplay_session::dp4::{DPID_ALLPLAYERS, Dp4Config, Dp4Event as SessionEvent, EnumRequest, HostConfig};
use dplay_testkit::wait::wait_for;
use dplay_wire::dp4::enumeration::EnumSessionsFlags;
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x5bfdb060_06a4_11d0_9c4f_00a0c905425e);

fn config(seed: u64) -> Dp4Config {
    Dp4Config::default().with_seed(seed)
}

/// A host on loopback; its enumeration socket on a free port, so tests never need 47624.
fn host(name: &str) -> (Runtime<Dp4Protocol>, u32) {
    let mut binding = Dp4Binding::host(Ipv4Addr::LOCALHOST);
    binding.enum_port = Some(0);
    let rt = Dp4Protocol::spawn(&binding, config(1), None).unwrap();
    rt.command(Dp4Command::Host(HostConfig::new("loopback", APP))).unwrap();
    rt.command(Dp4Command::CreatePlayer(name.into())).unwrap();
    let id = wait_for(rt.events(), |e| match e {
        Dp4Event::Session(SessionEvent::PlayerCreated { id }) => Some(*id),
        _ => None,
    });
    (rt, id)
}

fn client(seed: u64) -> Runtime<Dp4Protocol> {
    Dp4Protocol::spawn(&Dp4Binding::client(Ipv4Addr::LOCALHOST), config(seed), None).unwrap()
}

fn listener(rt: &Runtime<Dp4Protocol>) -> SocketAddr {
    rt.socket_addr(Dp4Binding::LISTENER).unwrap()
}

/// Joins `host` and creates a player named `name`; returns its ID.
fn join(rt: &Runtime<Dp4Protocol>, host: SocketAddr, name: &str) -> u32 {
    rt.command(Dp4Command::Join { host, password: None }).unwrap();
    wait_for(rt.events(), |e| matches!(e, Dp4Event::PlayerList(_)).then_some(()));
    rt.command(Dp4Command::CreatePlayer(name.into())).unwrap();
    wait_for(rt.events(), |e| match e {
        Dp4Event::Session(SessionEvent::PlayerCreated { id }) => Some(*id),
        _ => None,
    })
}

#[track_caller]
fn message_from(events: &Receiver<Dp4Event>, from: u32) -> Vec<u8> {
    wait_for(events, |e| match e {
        Dp4Event::Session(SessionEvent::Message { from: Some(f), data, .. }) if *f == from => {
            Some(data.clone())
        }
        _ => None,
    })
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| b'a' + u8::try_from(i % 26).unwrap()).collect()
}

/// MC-DPL4CS 2.1, 3.1.4.1, 3.2.5.3: ENUMSESSIONS over UDP to the enumeration socket; the
/// ENUMSESSIONSREPLY comes back over TCP to our listener, naming the host's listener.
#[test]
fn enumeration_over_udp_reply_over_tcp() {
    let (host, _) = host("host");
    let seeker = client(2);
    let enum_port = host.socket_addr(Dp4Binding::ENUM_SOCKET).unwrap().port();
    let request = EnumRequest { application_guid: APP, password: None, flags: EnumSessionsFlags::AVAILABLE };
    let target = Some(SocketAddr::from((Ipv4Addr::LOCALHOST, enum_port)));
    seeker.command(Dp4Command::EnumSessions { target, request }).unwrap();
    let found = wait_for(seeker.events(), |e| match e {
        Dp4Event::Session(SessionEvent::SessionFound(f)) => Some(f.clone()),
        _ => None,
    });
    assert_eq!(found.name.as_deref(), Some("loopback"));
    assert_eq!(found.host, listener(&host));
}

/// MC-DPL4CS 3.1.4.2, 3.1.4.16, 3.1.4.18: join over TCP, then messages both ways, guaranteed
/// over TCP (one larger than a read) and non-guaranteed over UDP (one fragmented with
/// DPSP_MSG_PACKET); leaving reaches the host as DELETEPLAYER.
#[test]
fn join_exchange_and_leave() {
    let (host, host_player) = host("host");
    let alice = client(3);
    let alice_id = join(&alice, listener(&host), "alice");
    wait_for(host.events(), |e| match e {
        Dp4Event::Session(SessionEvent::PlayerJoined { name: Some(n), .. }) if n == "alice" => Some(()),
        _ => None,
    });
    for (data, guaranteed) in [(b"hello".to_vec(), true), (pattern(200_000), true), (pattern(6000), false)] {
        let send = |to| Dp4Command::Send { from: None, to, data: data.clone(), guaranteed };
        alice.command(send(DPID_ALLPLAYERS)).unwrap();
        assert_eq!(message_from(host.events(), alice_id), data, "guaranteed {guaranteed}");
        host.command(send(alice_id)).unwrap();
        assert_eq!(message_from(alice.events(), host_player), data, "guaranteed {guaranteed}");
    }
    alice.command(Dp4Command::Leave).unwrap();
    wait_for(host.events(), |e| match e {
        Dp4Event::Session(SessionEvent::PlayerLeft { id }) if *id == alice_id => Some(()),
        _ => None,
    });
}

/// MC-DPL4CS 2.1, 2.2.6: a connection whose first DWORD has a bad token, one with a bad size,
/// and garbage are each closed with the reason reported; the host still takes a join.
#[test]
fn bad_streams_are_dropped_and_the_host_goes_on() {
    let (host, _) = host("host");
    let streams = [&[0x1C, 0, 0x20, 0x12][..], &[0x04, 0, 0xB0, 0xFA], b"GET / HTTP/1.0\r\n\r\n"];
    for (i, bytes) in streams.into_iter().enumerate() {
        let mut s = TcpStream::connect(listener(&host)).unwrap();
        s.write_all(bytes).unwrap();
        if i == 0 {
            // Reported for the first from a source; every one is counted.
            let reason = wait_for(host.events(), |e| match e {
                Dp4Event::StreamRejected { reason, .. } => Some(reason.clone()),
                _ => None,
            });
            assert!(reason.contains("bad DPSP"), "{reason}");
        }
    }
    wait_for(host.events(), |e| {
        matches!(e, Dp4Event::Dropped { reason: "tcp-rejected", total: 3.., .. }).then_some(())
    });
    let bob = client(4);
    join(&bob, listener(&host), "bob");
}

/// MC-DPL4CS 2.2.45: a datagram player message from an unknown player is dropped and counted;
/// one from a member still arrives.
#[test]
fn unknown_player_is_dropped() {
    let (host, _) = host("host");
    let carol = client(5);
    let carol_id = join(&carol, listener(&host), "carol");
    let game = host.socket_addr(Dp4Binding::GAME_SOCKET).unwrap();
    let mut forged = 0x1234_5678u32.to_le_bytes().to_vec();
    forged.extend_from_slice(&DPID_ALLPLAYERS.to_le_bytes());
    forged.extend_from_slice(b"who am I");
    UdpSocket::bind("127.0.0.1:0").unwrap().send_to(&forged, game).unwrap();
    wait_for(host.events(), |e| {
        matches!(e, Dp4Event::Dropped { reason: "unknown-player", .. }).then_some(())
    });
    let send = Dp4Command::Send { from: None, to: DPID_ALLPLAYERS, data: b"me".to_vec(), guaranteed: false };
    carol.command(send).unwrap();
    assert_eq!(message_from(host.events(), carol_id), b"me");
}

/// MC-DPL4CS 3.1.4.2 (issue 27 item 16): a join whose REQUESTPLAYERID cannot be delivered
/// (connection refused) fails at once, not when the Reliable API timer (3.1.2.2) runs out.
#[test]
fn join_to_nothing_fails() {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = probe.local_addr().unwrap();
    drop(probe);
    let mut fast = config(6);
    fast.reliable_api_timeout = Duration::from_secs(60);
    let dave = Dp4Protocol::spawn(&Dp4Binding::client(Ipv4Addr::LOCALHOST), fast, None).unwrap();
    dave.command(Dp4Command::Join { host: nowhere, password: None }).unwrap();
    let failed = wait_for(dave.events(), |e| match e {
        Dp4Event::Session(SessionEvent::JoinFailed(e)) => Some(*e),
        _ => None,
    });
    assert_eq!(failed, dplay_session::dp4::JoinError::Unreachable);
}

/// MC-DPL4CS 2.2.2: a host's `advertised_datagram` is the game socket its SPData names, so a
/// member's non-guaranteed messages go there (a relay would forward them), not to the bound
/// game socket; the join itself still reaches the real TCP listener.
#[test]
fn advertised_datagram_address_is_where_members_send() {
    let relay = UdpSocket::bind("127.0.0.1:0").unwrap();
    relay.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let SocketAddr::V4(relay_addr) = relay.local_addr().unwrap() else { panic!("IPv4") };
    let mut binding = Dp4Binding::host(Ipv4Addr::LOCALHOST);
    binding.enum_port = Some(0);
    binding.advertised_datagram = Some(relay_addr);
    let host = Dp4Protocol::spawn(&binding, config(7), None).unwrap();
    host.command(Dp4Command::Host(HostConfig::new("relayed", APP))).unwrap();
    let alice = client(8);
    join(&alice, listener(&host), "alice");
    let data = b"to the relay".to_vec();
    alice
        .command(Dp4Command::Send { from: None, to: DPID_ALLPLAYERS, data: data.clone(), guaranteed: false })
        .unwrap();
    let mut buf = [0; 1500];
    let (n, from) = relay.recv_from(&mut buf).unwrap();
    assert_eq!(from, alice.socket_addr(Dp4Binding::GAME_SOCKET).unwrap());
    assert!(buf[..n].ends_with(&data), "{:02x?}", &buf[..n]);
}

/// MC-DPL4CS 3.1.4.16, MC-DPL4R 1.3: in a session with DPSESSION_DIRECTPLAYPROTOCOL, player
/// messages (one of 200 000 bytes, many frames) go over MC-DPL4R between the game sockets; as
/// the member leaves, the runtime reports the protocol's counters.
#[test]
fn reliable_protocol_session_reports_its_counters() {
    let mut binding = Dp4Binding::host(Ipv4Addr::LOCALHOST);
    binding.enum_port = Some(0);
    let host = Dp4Protocol::spawn(&binding, config(9), None).unwrap();
    let flags = dplay_wire::dp4::session::SessionFlags::DIRECTPLAY_PROTOCOL;
    let mut session = HostConfig::new("reliable", APP);
    session.flags = flags;
    host.command(Dp4Command::Host(session)).unwrap();
    let alice = client(10);
    let alice_id = join(&alice, listener(&host), "alice");
    for (data, guaranteed) in [(pattern(200_000), true), (pattern(3000), false)] {
        alice
            .command(Dp4Command::Send { from: None, to: DPID_ALLPLAYERS, data: data.clone(), guaranteed })
            .unwrap();
        assert_eq!(message_from(host.events(), alice_id), data, "guaranteed {guaranteed}");
    }
    alice.command(Dp4Command::Leave).unwrap();
    let stats = wait_for(alice.events(), |e| match e {
        Dp4Event::Reliable(s) => Some(s.clone()),
        _ => None,
    });
    assert_eq!(stats.messages_sent, 2);
    // 137 frames of at most 1462 bytes, then 3 (MC-DPL4R 2: frames within the 1472-byte MTU);
    // the host's ACKs come back.
    assert!(stats.frames_sent >= 140 && stats.frames_received > 0, "{stats:?}");
    assert_eq!(stats.links_failed, 0, "{stats:?}");
}

/// MC-DPL4CS 3.1.7.1, 3.2.3 (issue 27 item 12): a joiner's enumeration socket
/// (`Dp4Binding::enum_when_host`) stays closed, its port free, until the joiner becomes host by
/// migration; then it is opened (`Dp4Event::Enumerating`) and answers ENUMSESSIONS.
#[test]
fn a_joiner_that_takes_over_answers_enumeration() {
    let mut binding = Dp4Binding::host(Ipv4Addr::LOCALHOST);
    binding.enum_port = Some(0);
    let host = Dp4Protocol::spawn(&binding, config(1), None).unwrap();
    let mut session = HostConfig::new("migrating", APP);
    session.flags |= dplay_wire::dp4::session::SessionFlags::MIGRATE_HOST;
    host.command(Dp4Command::Host(session)).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp4Event::PlayerList(_)).then_some(()));
    let port = UdpSocket::bind("0.0.0.0:0").unwrap().local_addr().unwrap().port();
    let mut alice_binding = Dp4Binding::client(Ipv4Addr::LOCALHOST);
    alice_binding.enum_port = Some(port);
    alice_binding.enum_when_host = true;
    let alice = Dp4Protocol::spawn(&alice_binding, config(2), None).unwrap();
    join(&alice, listener(&host), "alice");
    assert!(UdpSocket::bind(("0.0.0.0", port)).is_ok(), "the enumeration port is taken before a migration");
    drop(host);
    let at = wait_for(alice.events(), |e| match e {
        Dp4Event::Enumerating(at) => Some(*at),
        _ => None,
    });
    assert_eq!(at.port(), port);
    let seeker = client(3);
    let request = EnumRequest { application_guid: APP, password: None, flags: EnumSessionsFlags::ALL };
    let target = Some(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    seeker.command(Dp4Command::EnumSessions { target, request }).unwrap();
    wait_for(seeker.events(), |e| {
        matches!(e, Dp4Event::Session(SessionEvent::SessionFound(_))).then_some(())
    });
}

/// MC-DPL4CS 2.2.1, 3.1.4.1, 3.1.4.2: a joiner on another loopback address (127.0.0.2)
/// finds the host on 127.0.0.1 and joins it: the host answers at the joiner's address.
#[test]
fn join_from_another_loopback_address() {
    let (host, _) = host("host");
    let other = Ipv4Addr::new(127, 0, 0, 2);
    let seeker = Dp4Protocol::spawn(&Dp4Binding::client(other), config(11), None).unwrap();
    let enum_port = host.socket_addr(Dp4Binding::ENUM_SOCKET).unwrap().port();
    let request = EnumRequest { application_guid: APP, password: None, flags: EnumSessionsFlags::AVAILABLE };
    let target = Some(SocketAddr::from((Ipv4Addr::LOCALHOST, enum_port)));
    seeker.command(Dp4Command::EnumSessions { target, request }).unwrap();
    let found = wait_for(seeker.events(), |e| match e {
        Dp4Event::Session(SessionEvent::SessionFound(f)) => Some(f.host),
        _ => None,
    });
    assert_eq!(found, listener(&host));
    let joiner = Dp4Protocol::spawn(&Dp4Binding::client(other), config(12), None).unwrap();
    let id = join(&joiner, listener(&host), "remote");
    let send = Dp4Command::Send { from: None, to: DPID_ALLPLAYERS, data: b"hi".to_vec(), guaranteed: true };
    joiner.command(send).unwrap();
    assert_eq!(message_from(host.events(), id), b"hi");
}
