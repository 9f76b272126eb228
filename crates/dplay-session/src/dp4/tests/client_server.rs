//! Client/server sessions (DPSESSION_CLIENTSERVER; MC-DPL4CS 1.3, 2.2.5, 2.2.28 note, 3.1.4.3)
//! against Windows-shaped peers written byte by byte in the spec's layouts: our server with two
//! Windows-shaped clients, and our client with a Windows-shaped server.

use std::net::SocketAddr;

use dplay_wire::Wire;
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::session::SessionFlags;

use super::enum_players::{HOST, ME, enum_players_reply, from_host, host_addr, host_sp, joining, packed};
use super::net::{Net, created, ip, session};
use super::wine_facts::{drain, dword, dwords, sock_addr, utf16z, windows_message};
use crate::dp4::{DPID_ALLPLAYERS, DPID_SERVERPLAYER, Dp4Event, Dp4Transmit, EndReason, Role, Via};

/// A Windows client's TCP listener and UDP game socket ports (Windows picks 2300-2349 and
/// 2350-2399; Wine's dplayx tests).
const WIN_TCP: u16 = 2349;
const WIN_UDP: u16 = 2399;

/// A Windows-shaped client at 10.0.0.(i+1): it writes every message itself.
struct Windows {
    i: usize,
    system: u32,
    player: u32,
}

impl Windows {
    /// Its end of the connection it opens to our host.
    fn conn_addr(&self) -> SocketAddr {
        SocketAddr::new(ip(self.i).into(), 40000 + u16::try_from(self.i).unwrap())
    }

    fn listener(&self) -> SocketAddr {
        SocketAddr::new(ip(self.i).into(), WIN_TCP)
    }

    fn game(&self) -> SocketAddr {
        SocketAddr::new(ip(self.i).into(), WIN_UDP)
    }

    /// Our host reads `bytes` from its connection; what the host sends back is returned.
    fn tell(&self, net: &mut Net, bytes: &[u8]) -> Vec<Dp4Transmit> {
        let now = net.now;
        net.nodes[0].handle_tcp(now, 100 + self.i as u64, self.conn_addr(), bytes).unwrap();
        drain(net, 0)
    }

    /// DPLAYI_PACKEDPLAYER with Winsock SPData of address 0 (MC-DPL4CS 2.2.2).
    fn packed(&self, flags: u32, id: u32, name: &str) -> Vec<u8> {
        let sp = [sock_addr(WIN_TCP), sock_addr(WIN_UDP)].concat();
        packed(flags, id, self.system, name, &sp, &[], &[])
    }

    /// REQUESTPLAYERID (2.2.49, flags SP|PL 0x9 or PL 0x8) and the ID of the host's reply.
    fn request_id(&self, net: &mut Net, flags: u32) -> u32 {
        let replies = self.tell(net, &windows_message(WIN_TCP, 0x05, &dwords(&[flags])));
        let [reply] = replies.try_into().unwrap();
        assert_eq!((reply.via, reply.to), (Via::Tcp, self.listener()));
        let Dp4Body::RequestPlayerReply(m) = Dp4Message::parse(&reply.bytes).unwrap().body else { panic!() };
        assert_eq!(m.result, 0);
        m.id
    }

    /// The join of 3.1.4.2 and 3.1.5.1: REQUESTPLAYERID, then ADDFORWARDREQUEST (2.2.11) with
    /// CreateOffset 28 and the empty password at 28 + 80; what the host sends then.
    fn join(i: usize, net: &mut Net) -> (Self, Vec<Dp4Transmit>) {
        let mut me = Self { i, system: 0, player: 0 };
        me.system = me.request_id(net, 0x9);
        let info = me.packed(0x9, me.system, "");
        let body = [dwords(&[0, me.system, 0, 28, 108]), info, utf16z(""), dwords(&[0x0BAD_CAFE])].concat();
        let sent = me.tell(net, &windows_message(WIN_TCP, 0x13, &body));
        (me, sent)
    }

    /// Create Player (3.1.4.4): REQUESTPLAYERID with PL, then CREATEPLAYER (2.2.21) to the
    /// server only, with its 6 reserved bytes.
    fn create(&mut self, net: &mut Net, name: &str) {
        self.player = self.request_id(net, 0x8);
        let body =
            [dwords(&[0, self.player, 0, 28, 0]), self.packed(0x8, self.player, name), vec![0; 6]].concat();
        assert!(self.tell(net, &windows_message(WIN_TCP, 0x08, &body)).is_empty());
    }

    /// A guaranteed player message as Windows writes it on a stream: size/token and SockAddr,
    /// then idFrom, idTo and the data (MC-DPL4CS 2.2.45; Wine `receiveGuaranteedGameMessage_`).
    fn send_tcp(&self, net: &mut Net, to: u32, data: &[u8]) -> Vec<Dp4Transmit> {
        let size = u32::try_from(28 + data.len()).unwrap();
        let bytes =
            [dwords(&[0xFAB0_0000 | size]), sock_addr(WIN_TCP), dwords(&[self.player, to]), data.to_vec()];
        self.tell(net, &bytes.concat())
    }

    /// A non-guaranteed one: a datagram of idFrom, idTo and the data from the game socket.
    fn send_udp(&self, net: &mut Net, to: u32, data: &[u8]) -> Vec<Dp4Transmit> {
        let now = net.now;
        let bytes = [dwords(&[self.player, to]), data.to_vec()].concat();
        net.nodes[0].handle_udp(now, self.game(), &bytes);
        drain(net, 0)
    }
}

/// The events our node has not reported yet (the Windows-shaped peers bypass `Net::run`).
fn events(net: &mut Net) -> Vec<Dp4Event> {
    std::iter::from_fn(|| net.nodes[0].poll_event()).collect()
}

fn name(t: &Dp4Transmit) -> &'static str {
    Dp4Message::parse(&t.bytes).map_or("PLAYERMESSAGE", |m| m.name())
}

/// Our server: a session with CS, its first player DPID_SERVERPLAYER (1).
fn server() -> Net {
    let mut net = Net::new(1);
    net.host(cs(SessionFlags::MIGRATE_HOST));
    assert_eq!(created(&mut net, 0, "server"), DPID_SERVERPLAYER);
    let desc = net.nodes[0].session_desc().unwrap();
    assert_eq!(desc.flags, SessionFlags::CLIENT_SERVER, "CS and MH are incompatible (1.3)");
    net
}

/// A client/server session "cs" with `more` flags.
fn cs(more: SessionFlags) -> crate::dp4::HostConfig {
    let mut c = session("cs");
    c.flags = SessionFlags::CLIENT_SERVER | more;
    c
}

/// The player IDs of an ENUMPLAYERSREPLY, checking it is one (2.2.28 note: CS).
#[track_caller]
fn table(t: &Dp4Transmit) -> Vec<u32> {
    let Dp4Body::EnumPlayersReply(m) = Dp4Message::parse(&t.bytes).unwrap().body else {
        panic!("{} instead of ENUMPLAYERSREPLY", name(t))
    };
    assert!(m.session_desc.flags.contains(SessionFlags::CLIENT_SERVER));
    assert!(m.groups.is_empty());
    let mut ids: Vec<u32> = m.players.iter().map(|p| p.player_id).collect();
    ids.sort_unstable();
    ids
}

/// MC-DPL4CS 1.3, 2.2.5 (CS), 2.2.28 note: our server and two Windows-shaped clients. Each
/// joins and gets ENUMPLAYERSREPLY with only the system players and the server player (1);
/// the first acknowledges the second's ADDFORWARD; a message to the server player is
/// delivered; one to everyone is delivered and relayed to the other client; one to the other
/// client's player is relayed to that client only, IDs unchanged; a leaving client's system
/// player is announced to the other, its application player is not.
#[test]
fn our_server_with_windows_shaped_clients() {
    let mut net = server();
    let host = net.nodes[0].system_player().unwrap();
    let (mut a, sent) = Windows::join(1, &mut net);
    let [reply] = sent.try_into().unwrap();
    assert_eq!((reply.via, reply.to), (Via::Tcp, a.listener()));
    // 2.2.28: command 3; PlayerCount 3, GroupCount 0, PlayerOffset after the description and
    // the name, ShortcutCount 0, DescriptionOffset 36, NameOffset 116, PasswordOffset 0.
    let b = &reply.bytes;
    let name_len = 2 * ("cs".len() + 1);
    assert_eq!(b[24..26], [3, 0]);
    assert_eq!(
        (0..7).map(|k| dword(b, 28 + 4 * k)).collect::<Vec<_>>(),
        [3, 0, u32::try_from(116 + name_len).unwrap(), 0, 36, 116, 0]
    );
    assert_eq!(table(&reply), {
        let mut ids = vec![DPID_SERVERPLAYER, host, a.system];
        ids.sort_unstable();
        ids
    });
    a.create(&mut net, "alice");

    let (mut b, sent) = Windows::join(2, &mut net);
    let [forward] = sent.try_into().unwrap();
    assert_eq!((name(&forward), forward.to), ("DPSP_MSG_ADDFORWARD", a.listener()));
    let ack = a.tell(&mut net, &windows_message(WIN_TCP, 0x2F, &dwords(&[b.system])));
    let [reply] = ack.try_into().unwrap();
    assert_eq!(reply.to, b.listener());
    let ids = table(&reply);
    assert!(ids.contains(&a.system) && !ids.contains(&a.player), "not the other client's player: {ids:x?}");
    b.create(&mut net, "bob");
    events(&mut net);

    assert!(a.send_tcp(&mut net, DPID_SERVERPLAYER, b"to the server").is_empty());
    let to_server = Dp4Event::Message {
        from: Some(a.player),
        to: Some(DPID_SERVERPLAYER),
        data: b"to the server".to_vec(),
    };
    assert_eq!(events(&mut net), [to_server]);

    let [relayed] = b.send_udp(&mut net, DPID_ALLPLAYERS, b"hi all").try_into().unwrap();
    assert_eq!((relayed.via, relayed.to), (Via::Udp, a.game()));
    assert_eq!(relayed.bytes, [dwords(&[b.player, DPID_ALLPLAYERS]), b"hi all".to_vec()].concat());
    assert!(matches!(&events(&mut net)[..], [Dp4Event::Message { to: Some(DPID_ALLPLAYERS), .. }]));

    let [relayed] = a.send_tcp(&mut net, b.player, b"to bob").try_into().unwrap();
    assert_eq!((relayed.via, relayed.to), (Via::Tcp, b.listener()));
    assert_eq!(relayed.bytes[20..], [dwords(&[a.player, b.player]), b"to bob".to_vec()].concat());
    assert!(events(&mut net).is_empty(), "not for the server");
    assert_eq!(net.nodes[0].stats().relayed, 2);

    // The server answers a client's player over its stream (3.1.4.16).
    let now = net.now;
    net.nodes[0].send(now, DPID_SERVERPLAYER, a.player, b"welcome", true).unwrap();
    let [t] = drain(&mut net, 0).try_into().unwrap();
    assert_eq!((t.via, t.to), (Via::Tcp, a.listener()));

    // Bob leaves (3.1.4.5): DELETEPLAYER for its player, then its system player, to us only.
    let bye = |id| windows_message(WIN_TCP, 0x0B, &dwords(&[0, id, 0, 0, 0]));
    assert!(b.tell(&mut net, &bye(b.player)).is_empty(), "alice never knew bob's player");
    let [told] = b.tell(&mut net, &bye(b.system)).try_into().unwrap();
    assert_eq!((name(&told), told.to), ("DPSP_MSG_DELETEPLAYER", a.listener()));
    assert_eq!(net.nodes[0].players().len(), 4, "host, server player, alice's two");
}

/// MC-DPL4CS 1.3, 2.2.5 (CS), 2.2.28, 3.1.4.3: our client and a Windows-shaped server whose
/// ENUMPLAYERSREPLY holds its system player, the server player (1) and another client's
/// system player. We join; our CREATEPLAYER and every player message go to the server only;
/// the server relays a message from a player we do not know and it is delivered (the same
/// from the other client's own address is not); the server's loss ends the session, with no
/// migration although the description says MH and ours is now the lowest system player.
#[test]
fn our_client_with_a_windows_shaped_server() {
    const OTHER: u32 = 0x2000_0001;
    let mut net = joining();
    let other_ip = [&[2, 0][..], &WIN_UDP.to_be_bytes(), &[10, 0, 0, 3], &[0; 8]].concat();
    let other_sp =
        [[&[2, 0][..], &WIN_TCP.to_be_bytes(), &[10, 0, 0, 3], &[0; 8]].concat(), other_ip].concat();
    let players = [
        packed(0xF, HOST, HOST, "", &host_sp(), &[], &[]),
        packed(0x0, DPID_SERVERPLAYER, HOST, "server", &[], &[], &[]),
        packed(0x5, OTHER, OTHER, "", &other_sp, &[], &[]),
    ];
    let now = net.now;
    let reply = enum_players_reply(0x1000 | 0x4, &players, &[]);
    net.nodes[0].handle_tcp(now, 1, from_host(), &reply).unwrap();
    assert_eq!(net.nodes[0].poll_event(), Some(Dp4Event::Joined { system_player: ME }));
    assert_eq!(net.nodes[0].host_player(), Some(HOST));
    assert!(net.nodes[0].players().contains_key(&DPID_SERVERPLAYER));

    net.nodes[0].create_player(now, "me").unwrap();
    let [request] = drain(&mut net, 0).try_into().unwrap();
    assert_eq!((name(&request), request.to), ("DPSP_MSG_REQUESTPLAYERID", host_addr()));
    const PLAYER: u32 = 0x0033_4455;
    let granted =
        windows_message(2349, 7, &[dwords(&[PLAYER]), vec![0; 24], dwords(&[0, 0, 0]), vec![0; 64]].concat());
    net.nodes[0].handle_tcp(now, 1, from_host(), &granted).unwrap();
    let sent = drain(&mut net, 0);
    assert_eq!(
        sent.iter().map(|t| (name(t), t.to)).collect::<Vec<_>>(),
        [("DPSP_MSG_CREATEPLAYER", host_addr())]
    );

    for (to, guaranteed) in [(DPID_ALLPLAYERS, true), (DPID_SERVERPLAYER, false), (0x0777_0000, true)] {
        net.nodes[0].send(now, PLAYER, to, b"x", guaranteed).unwrap();
        let [t] = drain(&mut net, 0).try_into().unwrap();
        let host_game: SocketAddr = "10.0.0.1:2399".parse().unwrap();
        assert_eq!(t.to, if guaranteed { host_addr() } else { host_game }, "to {to:#x}");
    }
    while net.nodes[0].poll_event().is_some() {}

    let relayed = [dwords(&[0x0999_0000, PLAYER]), b"relayed".to_vec()].concat();
    net.nodes[0].handle_udp(now, "10.0.0.1:2399".parse().unwrap(), &relayed);
    let got = Dp4Event::Message { from: Some(0x0999_0000), to: Some(PLAYER), data: b"relayed".to_vec() };
    assert_eq!(net.nodes[0].poll_event(), Some(got));
    net.nodes[0].handle_udp(now, "10.0.0.3:2399".parse().unwrap(), &relayed);
    assert_eq!(net.nodes[0].poll_event(), None, "only the server relays");

    // Another client claiming to be host is not believed: no migration in CS.
    let claim = dplay_wire::dp4::join::IAmNameServer {
        id_to: 0,
        id_host: OTHER,
        flags: dplay_wire::dp4::session::PlayerFlags::SYSTEM_PLAYER,
        sp_data: dplay_wire::Blob::new(&other_sp),
    };
    let header = dplay_wire::dp4::header::SockAddrIn::new("0.0.0.0:2349".parse().unwrap());
    let claim = Dp4Message::new(
        dplay_wire::dp4::header::Token::FROM_REMOTE,
        header,
        14,
        Dp4Body::IAmNameServer(claim),
    );
    net.nodes[0].handle_tcp(now, 3, "10.0.0.3:40000".parse().unwrap(), &claim.to_vec().unwrap()).unwrap();
    assert_eq!(net.nodes[0].host_player(), Some(HOST));
    let gone = windows_message(2349, 0x0B, &dwords(&[0, HOST, 0, 0, 0]));
    net.nodes[0].handle_tcp(now, 1, from_host(), &gone).unwrap();
    let events: Vec<Dp4Event> = std::iter::from_fn(|| net.nodes[0].poll_event()).collect();
    assert_eq!(events.last(), Some(&Dp4Event::Ended(EndReason::HostLost)), "{events:?}");
    assert!(drain(&mut net, 0).iter().all(|t| name(t) != "DPSP_MSG_IAMNAMESERVER"));
    assert_eq!(net.nodes[0].role(), Role::Ended);
}

/// Our server and our clients (2.2.28, 3.1.4.3): a client hears of the other client's system
/// player, never its application player, and an ENUMPLAYER from outside is answered with the
/// same table, without the password.
#[test]
fn our_clients_see_only_system_players_and_the_server_player() {
    let mut net = Net::new(3);
    net.host(cs(SessionFlags::empty()));
    created(&mut net, 0, "server");
    net.join(1, None);
    let one = created(&mut net, 1, "one");
    net.join(2, None);
    let two = created(&mut net, 2, "two");
    for (i, other) in [(1, two), (2, one)] {
        let players = net.nodes[i].players();
        assert!(players.contains_key(&DPID_SERVERPLAYER) && !players.contains_key(&other), "node {i}");
        assert_eq!(players.values().filter(|p| p.is_system()).count(), 3, "node {i}");
    }
    assert!(net.nodes[0].players().contains_key(&one) && net.nodes[0].players().contains_key(&two));
    net.take(2);
    net.log.clear();
    let now = net.now;
    net.nodes[1].send(now, one, two, b"via the server", true).unwrap();
    net.run();
    assert_eq!(net.trace(), ["1->0 Tcp PLAYERMESSAGE", "0->2 Tcp PLAYERMESSAGE"]);
    let got = Dp4Event::Message { from: Some(one), to: Some(two), data: b"via the server".to_vec() };
    assert_eq!(net.take(2), [got]);
}

/// MC-DPL4CS 1.3 with RP (MC-DPL4R): the server relays over MC-DPL4R as it received, RLY
/// when the client sent it guaranteed and without RLY when not.
#[test]
fn relay_over_the_reliable_protocol_keeps_rly() {
    use dplay_wire::dp4::reliable::{FrameBody, ReliableFlags, ReliableFrame};
    let mut net = Net::new(3);
    net.host(cs(SessionFlags::DIRECTPLAY_PROTOCOL));
    created(&mut net, 0, "server");
    net.join(1, None);
    let one = created(&mut net, 1, "one");
    net.join(2, None);
    let two = created(&mut net, 2, "two");
    for guaranteed in [true, false] {
        net.log.clear();
        let now = net.now;
        net.nodes[1].send(now, one, two, b"relayed", guaranteed).unwrap();
        net.run();
        let rly: Vec<bool> = net
            .log
            .iter()
            .filter(|s| (s.from, s.to) == (0, 2))
            .filter_map(|s| ReliableFrame::parse(&s.bytes).ok())
            .filter_map(|f| match f.body {
                FrameBody::Data(d) => Some(d.flags.contains(ReliableFlags::RLY)),
                _ => None,
            })
            .collect();
        assert_eq!(rly, [guaranteed], "guaranteed: {guaranteed}");
        let got = Dp4Event::Message { from: Some(one), to: Some(two), data: b"relayed".to_vec() };
        assert!(net.take(2).contains(&got));
    }
}
