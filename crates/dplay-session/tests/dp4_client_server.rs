//! Client/server DirectPlay 4 sessions (DPSESSION_CLIENTSERVER; MC-DPL4CS 1.3, 2.2.5, 2.2.28
//! note, 3.1.4.3) on the simulated network, TCP streams included, under 0, 5 and 15% loss
//! (issue 27): our server with two Windows-shaped clients, and our client with a
//! Windows-shaped server. The Windows-shaped peers write every message themselves, in the
//! spec's layouts (`dplay_testkit::dp4_node::windows`). Loss delays what goes over TCP and
//! may lose a datagram: a non-guaranteed message is sent again until it arrives, as a game
//! sends its next position.
#![allow(clippy::indexing_slicing, reason = "test code: a bad index is a failed test")]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use dplay_session::dp4::{
    DPID_ALLPLAYERS, DPID_SERVERPLAYER, Dp4Config, Dp4Event, EndReason, HostConfig, Role, Via,
};
use dplay_sim::{LinkConfig, NodeId, Sim, run_seeds};
use dplay_testkit::dp4_node::windows::{
    command, delete_player, dword, dwords, enum_players_reply, message, packed, player_message_tcp,
    player_message_udp, request_player_reply, session_desc, sp_data, utf16z,
};
use dplay_testkit::dp4_node::{Dp4Node, Received, WindowsPeer, add_dp4, add_windows, config_at};
use dplay_wire::Wire;
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::session::SessionFlags;
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0xA052_A50B_FFE0_CF11_9C4E_00A0_C905_425E);
/// A Windows peer's TCP listener and UDP game socket (Windows picks 2300-2349 and 2350-2399).
const WIN_TCP: u16 = 2349;
const WIN_UDP: u16 = 2399;
/// Ours.
const OUR_TCP: u16 = 2300;
const OUR_UDP: u16 = 2350;
/// How long any one step may take, whatever the loss.
const STEP: Duration = Duration::from_secs(30);
/// DPSP_MSG_IAMNAMESERVER (2.2.40).
const IAMNAMESERVER: u16 = 0x35;

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
}

fn at(last: u8, port: u16) -> SocketAddr {
    SocketAddr::new(ip(last), port)
}

fn sim(seed: u64, loss: f64) -> Sim {
    let mut sim = Sim::new(seed);
    sim.set_default_link(LinkConfig::lossy(loss).with_jitter(Duration::from_millis(5)));
    sim
}

/// Our node at 10.0.0.`last`, its seed from the run's.
fn ours(sim: &mut Sim, last: u8) -> NodeId {
    let config =
        config_at(Dp4Config::default().with_seed(sim.derive_seed(u64::from(last))), OUR_TCP, OUR_UDP);
    add_dp4(sim, ip(last), config)
}

fn node(sim: &mut Sim, id: NodeId) -> &mut Dp4Node {
    sim.node_mut::<Dp4Node>(id)
}

fn peer(sim: &mut Sim, id: NodeId) -> &mut WindowsPeer {
    sim.node_mut::<WindowsPeer>(id)
}

/// Runs until `peer` has received a message `pick` takes, and takes it out.
#[track_caller]
fn wait_for(sim: &mut Sim, id: NodeId, what: &str, pick: impl Fn(&Received) -> bool) -> Received {
    let deadline = sim.now() + STEP;
    let found = sim.run_until_with(deadline, |s| s.node::<WindowsPeer>(id).received.iter().any(&pick));
    assert!(found, "no {what} within {STEP:?} (seed {})", sim.seed());
    let received = &mut peer(sim, id).received;
    let k = received.iter().position(&pick).unwrap_or_default();
    received.remove(k)
}

/// Runs until `peer` has received the system message `cmd` over TCP; takes it out.
#[track_caller]
fn wait_command(sim: &mut Sim, id: NodeId, cmd: u16) -> Received {
    wait_for(sim, id, &format!("command {cmd:#x}"), |r| r.via == Via::Tcp && command(&r.bytes) == Some(cmd))
}

/// Runs until our node `id` reported an event `pick` takes (after the first `seen`).
#[track_caller]
fn wait_event(sim: &mut Sim, id: NodeId, seen: usize, what: &str, pick: impl Fn(&Dp4Event) -> bool) {
    // Events of commands given just now are collected at the next step: take them first.
    sim.run_for(Duration::ZERO);
    let deadline = sim.now() + STEP;
    let found = sim.run_until_with(deadline, |s| s.node::<Dp4Node>(id).events[seen..].iter().any(&pick));
    assert!(found, "no {what} within {STEP:?} (seed {})", sim.seed());
}

/// `send` again every 200 ms until `done` holds (a non-guaranteed message may be lost).
#[track_caller]
fn until_heard(sim: &mut Sim, what: &str, mut send: impl FnMut(&mut Sim), done: impl Fn(&Sim) -> bool) {
    for _ in 0..50 {
        send(sim);
        let deadline = sim.now() + Duration::from_millis(200);
        if sim.run_until_with(deadline, &done) {
            return;
        }
    }
    panic!("{what} never arrived in 50 tries (seed {})", sim.seed());
}

fn message_event(from: u32, to: u32, data: &[u8]) -> Dp4Event {
    Dp4Event::Message { from: Some(from), to: Some(to), data: data.to_vec() }
}

/// The player IDs of an ENUMPLAYERSREPLY, checking it is one of a CS session (2.2.28 note).
#[track_caller]
fn table(r: &Received) -> Vec<u32> {
    let Dp4Body::EnumPlayersReply(m) = Dp4Message::parse(&r.bytes).unwrap().body else {
        panic!("not ENUMPLAYERSREPLY")
    };
    assert!(m.session_desc.flags.contains(SessionFlags::CLIENT_SERVER));
    assert!(m.groups.is_empty());
    let mut ids: Vec<u32> = m.players.iter().map(|p| p.player_id).collect();
    ids.sort_unstable();
    ids
}

/// A Windows-shaped client at 10.0.0.`last`.
struct Client {
    id: NodeId,
    system: u32,
    player: u32,
}

impl Client {
    fn new(sim: &mut Sim, last: u8) -> Self {
        Self { id: add_windows(sim, ip(last), WIN_TCP, WIN_UDP), system: 0, player: 0 }
    }

    /// Writes `bytes` to our server's listener.
    fn tell(&self, sim: &mut Sim, bytes: Vec<u8>) {
        peer(sim, self.id).send_tcp(at(1, OUR_TCP), bytes);
    }

    fn packed(&self, flags: u32, id: u32, name: &str) -> Vec<u8> {
        packed(flags, id, self.system, name, &sp_data(WIN_TCP, WIN_UDP), &[])
    }

    /// REQUESTPLAYERID (2.2.49, flags SP|PL 0x9 or PL 0x8); the ID the server's
    /// REQUESTPLAYERREPLY grants, on a connection it opened to our listener.
    fn request_id(&self, sim: &mut Sim, flags: u32) -> u32 {
        self.tell(sim, message(WIN_TCP, 0x05, &dwords(&[flags])));
        let reply = wait_command(sim, self.id, 0x07);
        assert_eq!(reply.from.ip(), ip(1));
        let Dp4Body::RequestPlayerReply(m) = Dp4Message::parse(&reply.bytes).unwrap().body else { panic!() };
        assert_eq!(m.result, 0);
        m.id
    }

    /// The join of 3.1.4.2 and 3.1.5.1: REQUESTPLAYERID, then ADDFORWARDREQUEST (2.2.11)
    /// with CreateOffset 28 and the empty password at 28 + 80.
    fn join(&mut self, sim: &mut Sim) {
        self.system = self.request_id(sim, 0x9);
        let info = self.packed(0x9, self.system, "");
        let body = [dwords(&[0, self.system, 0, 28, 108]), info, utf16z(""), dwords(&[0x0BAD_CAFE])].concat();
        self.tell(sim, message(WIN_TCP, 0x13, &body));
    }

    /// Create Player (3.1.4.4): REQUESTPLAYERID with PL, then CREATEPLAYER (2.2.21) to the
    /// server only, with its 6 reserved bytes.
    fn create(&mut self, sim: &mut Sim, name: &str) {
        self.player = self.request_id(sim, 0x8);
        let body = [dwords(&[0, self.player, 0, 28, 0]), self.packed(0x8, self.player, name), vec![0; 6]];
        self.tell(sim, message(WIN_TCP, 0x08, &body.concat()));
    }
}

/// MC-DPL4CS 1.3, 2.2.5 (CS), 2.2.28 note: our server and two Windows-shaped clients. Each
/// joins and gets ENUMPLAYERSREPLY with only the system players and the server player (1);
/// the first acknowledges the second's ADDFORWARD; a message to the server player is
/// delivered; one to everyone is delivered and relayed to the other client; one to the other
/// client's player is relayed to that client only, IDs unchanged; the server answers a
/// client's player over TCP; a leaving client's system player is announced to the other,
/// its application player is not.
fn our_server_with_windows_shaped_clients(seed: u64, loss: f64) {
    let mut sim = sim(seed, loss);
    let server = ours(&mut sim, 1);
    let mut cs = HostConfig::new("cs", APP);
    cs.flags = SessionFlags::CLIENT_SERVER | SessionFlags::MIGRATE_HOST;
    let now = sim.now();
    node(&mut sim, server).session.host(now, cs).unwrap();
    node(&mut sim, server).session.create_player(now, "server").unwrap();
    wait_event(&mut sim, server, 0, "the server player", |e| {
        *e == Dp4Event::PlayerCreated { id: DPID_SERVERPLAYER }
    });
    let desc = *node(&mut sim, server).session.session_desc().unwrap();
    assert_eq!(desc.flags, SessionFlags::CLIENT_SERVER, "CS and MH are incompatible (1.3)");
    let host = node(&mut sim, server).session.system_player().unwrap();

    let mut a = Client::new(&mut sim, 2);
    a.join(&mut sim);
    let reply = wait_command(&mut sim, a.id, 0x03);
    // 2.2.28: PlayerCount 3, GroupCount 0, PlayerOffset after the description and the name,
    // ShortcutCount 0, DescriptionOffset 36, NameOffset 116, PasswordOffset 0.
    let name_len = 2 * ("cs".len() + 1);
    let fields: Vec<u32> = (0..7).map(|k| dword(&reply.bytes, 28 + 4 * k)).collect();
    assert_eq!(fields, [3, 0, u32::try_from(116 + name_len).unwrap(), 0, 36, 116, 0]);
    let mut want = vec![DPID_SERVERPLAYER, host, a.system];
    want.sort_unstable();
    assert_eq!(table(&reply), want);
    a.create(&mut sim, "alice");

    let mut b = Client::new(&mut sim, 3);
    b.join(&mut sim);
    let forward = wait_command(&mut sim, a.id, 0x2E);
    assert_eq!(Dp4Message::parse(&forward.bytes).unwrap().name(), "DPSP_MSG_ADDFORWARD");
    a.tell(&mut sim, message(WIN_TCP, 0x2F, &dwords(&[b.system])));
    let ids = table(&wait_command(&mut sim, b.id, 0x03));
    assert!(ids.contains(&a.system) && !ids.contains(&a.player), "not the other client's player: {ids:x?}");
    b.create(&mut sim, "bob");
    wait_event(
        &mut sim,
        server,
        0,
        "bob's player",
        |e| matches!(e, Dp4Event::PlayerJoined { id, .. } if *id == b.player),
    );

    let seen = node(&mut sim, server).events.len();
    a.tell(&mut sim, player_message_tcp(WIN_TCP, a.player, DPID_SERVERPLAYER, b"to the server"));
    let to_server = message_event(a.player, DPID_SERVERPLAYER, b"to the server");
    wait_event(&mut sim, server, seen, "the message to the server", |e| *e == to_server);

    let hi = player_message_udp(b.player, DPID_ALLPLAYERS, b"hi all");
    let relayed = |s: &Sim| {
        let got = &s.node::<WindowsPeer>(a.id).received;
        got.iter().any(|r| r.via == Via::Udp && r.bytes == hi && r.from == at(1, OUR_UDP))
    };
    let send_hi = |s: &mut Sim| peer(s, b.id).send_udp(at(1, OUR_UDP), hi.clone());
    until_heard(&mut sim, "hi all", send_hi, relayed);
    let all = message_event(b.player, DPID_ALLPLAYERS, b"hi all");
    assert!(node(&mut sim, server).events.contains(&all));

    a.tell(&mut sim, player_message_tcp(WIN_TCP, a.player, b.player, b"to bob"));
    let got =
        wait_for(&mut sim, b.id, "the message to bob", |r| r.via == Via::Tcp && r.bytes.ends_with(b"to bob"));
    assert_eq!(got.bytes[20..], [dwords(&[a.player, b.player]), b"to bob".to_vec()].concat());
    assert!(
        !node(&mut sim, server)
            .events
            .iter()
            .any(|e| matches!(e, Dp4Event::Message { data, .. } if data == b"to bob"))
    );
    assert!(node(&mut sim, server).session.stats().relayed >= 2);

    // The server answers a client's player over its stream (3.1.4.16).
    let now = sim.now();
    node(&mut sim, server).session.send(now, DPID_SERVERPLAYER, a.player, b"welcome", true).unwrap();
    let got = wait_for(&mut sim, a.id, "welcome", |r| r.bytes.ends_with(b"welcome"));
    assert_eq!((got.via, got.bytes[20..24] == DPID_SERVERPLAYER.to_le_bytes()), (Via::Tcp, true));

    // Bob leaves (3.1.4.5): DELETEPLAYER for its player, then its system player, to us only;
    // alice hears of the system player only.
    b.tell(&mut sim, delete_player(WIN_TCP, b.player));
    b.tell(&mut sim, delete_player(WIN_TCP, b.system));
    let told = wait_command(&mut sim, a.id, 0x0B);
    assert_eq!(dword(&told.bytes, 32), b.system, "alice never knew bob's player");
    sim.run_for(Duration::from_secs(2));
    assert!(peer(&mut sim, a.id).take().iter().all(|r| command(&r.bytes) != Some(0x0B)));
    assert_eq!(node(&mut sim, server).session.players().len(), 4, "host, server player, alice's two");
    let streams = sim.stream_stats();
    assert_eq!((streams.refused, streams.timed_out, streams.resets), (0, 0, 0), "{streams:?}");
}

/// Our client joins the Windows-shaped `server` (3.1.4.2) up to its ADDFORWARDREQUEST; the
/// server answers REQUESTPLAYERID with `id`, on a connection of its own to the listener our
/// header names. A join that fails (the 5 s Reliable API timer, 3.1.2.2, ran out while lost
/// SYNs were sent again) is tried again from a new node, as a player would, at most twice.
/// Our node and the last byte of its IP.
fn start_join(sim: &mut Sim, server: NodeId, id: u32) -> (NodeId, u8) {
    for last in [2, 12, 22] {
        let client = ours(sim, last);
        let now = sim.now();
        node(sim, client).session.join(now, at(1, WIN_TCP), None).unwrap();
        let from_us =
            |cmd: u16| move |r: &Received| r.from.ip() == ip(last) && command(&r.bytes) == Some(cmd);
        let request = wait_for(sim, server, "REQUESTPLAYERID", from_us(0x05));
        assert_eq!(request.bytes[6..8], OUR_TCP.to_be_bytes(), "our listener in the header");
        peer(sim, server).send_tcp(at(last, OUR_TCP), request_player_reply(WIN_TCP, id));
        let deadline = sim.now() + STEP;
        let failed =
            |s: &Sim| s.node::<Dp4Node>(client).events.iter().any(|e| matches!(e, Dp4Event::JoinFailed(_)));
        let over = |s: &Sim| failed(s) || s.node::<WindowsPeer>(server).received.iter().any(from_us(0x13));
        assert!(sim.run_until_with(deadline, over), "no ADDFORWARDREQUEST (seed {})", sim.seed());
        if !failed(sim) {
            wait_for(sim, server, "ADDFORWARDREQUEST", from_us(0x13));
            return (client, last);
        }
        sim.kill_streams(client);
        sim.isolate(client);
    }
    panic!("our client never joins (seed {})", sim.seed());
}

/// MC-DPL4CS 1.3, 2.2.5 (CS), 2.2.28, 3.1.4.3: our client and a Windows-shaped server whose
/// ENUMPLAYERSREPLY holds its system player, the server player (1) and another client's
/// system player. We join; our CREATEPLAYER and every player message go to the server only;
/// the server relays a message from a player we do not know and it is delivered (the same
/// from the other client's own address is not); the server's loss ends the session, with no
/// migration although the description says MH and ours is now the lowest system player.
fn our_client_with_a_windows_shaped_server(seed: u64, loss: f64) {
    const HOST: u32 = 0x51573;
    const ME: u32 = 0x1234_5678;
    const OTHER: u32 = 0x2000_0001;
    const PLAYER: u32 = 0x0033_4455;
    let mut sim = sim(seed, loss);
    let server = add_windows(&mut sim, ip(1), WIN_TCP, WIN_UDP);
    let other = add_windows(&mut sim, ip(3), WIN_TCP, WIN_UDP);
    let (client, last) = start_join(&mut sim, server, ME);
    let other_sp = [
        [&[2, 0][..], &WIN_TCP.to_be_bytes(), &[10, 0, 0, 3], &[0; 8]].concat(),
        [&[2, 0][..], &WIN_UDP.to_be_bytes(), &[10, 0, 0, 3], &[0; 8]].concat(),
    ]
    .concat();
    let players = [
        packed(0xF, HOST, HOST, "", &sp_data(WIN_TCP, WIN_UDP), &[]),
        packed(0x0, DPID_SERVERPLAYER, HOST, "server", &[], &[]),
        packed(0x5, OTHER, OTHER, "", &other_sp, &[]),
    ];
    let desc = session_desc(0x1000 | 0x4, APP);
    peer(&mut sim, server)
        .send_tcp(at(last, OUR_TCP), enum_players_reply(WIN_TCP, &desc, "normal", &players));
    wait_event(&mut sim, client, 0, "the join", |e| *e == Dp4Event::Joined { system_player: ME });
    assert_eq!(node(&mut sim, client).session.host_player(), Some(HOST));
    assert!(node(&mut sim, client).session.players().contains_key(&DPID_SERVERPLAYER));

    let now = sim.now();
    node(&mut sim, client).session.create_player(now, "me").unwrap();
    wait_command(&mut sim, server, 0x05);
    peer(&mut sim, server).send_tcp(at(last, OUR_TCP), request_player_reply(WIN_TCP, PLAYER));
    wait_command(&mut sim, server, 0x08);
    wait_event(&mut sim, client, 0, "our player", |e| *e == Dp4Event::PlayerCreated { id: PLAYER });

    // Guaranteed messages over TCP to the server's listener, non-guaranteed to its game
    // socket, whoever they are for.
    for (to, data) in [(DPID_ALLPLAYERS, &b"to all"[..]), (0x0777_0000, b"to a stranger")] {
        let now = sim.now();
        node(&mut sim, client).session.send(now, PLAYER, to, data, true).unwrap();
        let got = wait_for(&mut sim, server, "a guaranteed message", |r| r.bytes.ends_with(data));
        assert_eq!((got.via, got.bytes[20..28] == dwords(&[PLAYER, to])), (Via::Tcp, true), "to {to:#x}");
    }
    let want = player_message_udp(PLAYER, DPID_SERVERPLAYER, b"x");
    let heard =
        |s: &Sim| s.node::<WindowsPeer>(server).received.iter().any(|r| r.via == Via::Udp && r.bytes == want);
    let send = |s: &mut Sim| {
        let now = s.now();
        node(s, client).session.send(now, PLAYER, DPID_SERVERPLAYER, b"x", false).unwrap();
    };
    until_heard(&mut sim, "the non-guaranteed message", send, heard);

    // The server relays; another client may not speak for it.
    let got = message_event(0x0999_0000, PLAYER, b"relayed");
    let relayed = player_message_udp(0x0999_0000, PLAYER, b"relayed");
    let from_other = player_message_udp(0x0999_0000, PLAYER, b"forged");
    let send = |s: &mut Sim| {
        peer(s, server).send_udp(at(last, OUR_UDP), relayed.clone());
        peer(s, other).send_udp(at(last, OUR_UDP), from_other.clone());
    };
    until_heard(&mut sim, "the relayed message", send, |s| s.node::<Dp4Node>(client).events.contains(&got));
    sim.run_for(Duration::from_secs(1));
    let forged = |e: &Dp4Event| matches!(e, Dp4Event::Message { data, .. } if data == b"forged");
    assert!(!node(&mut sim, client).events.iter().any(forged), "only the server relays");

    assert!(peer(&mut sim, other).take().is_empty(), "we talk to the server only");

    // Another client claiming to be host is not believed: no migration in CS.
    let claim = dplay_wire::dp4::join::IAmNameServer {
        id_to: 0,
        id_host: OTHER,
        flags: dplay_wire::dp4::session::PlayerFlags::SYSTEM_PLAYER,
        sp_data: dplay_wire::Blob::new(&other_sp),
    };
    let header = dplay_wire::dp4::header::SockAddrIn::new("0.0.0.0:2349".parse().unwrap());
    let token = dplay_wire::dp4::header::Token::FROM_REMOTE;
    let claim = Dp4Message::new(token, header, 14, Dp4Body::IAmNameServer(claim)).to_vec().unwrap();
    peer(&mut sim, other).send_tcp(at(last, OUR_TCP), claim);
    sim.run_for(Duration::from_secs(2));
    assert_eq!(node(&mut sim, client).session.host_player(), Some(HOST));

    let seen = node(&mut sim, client).events.len();
    peer(&mut sim, server).send_tcp(at(last, OUR_TCP), delete_player(WIN_TCP, HOST));
    let ended = Dp4Event::Ended(EndReason::HostLost);
    wait_event(&mut sim, client, seen, "the end", |e| *e == ended);
    assert_eq!(node(&mut sim, client).events.last(), Some(&ended));
    sim.run_for(Duration::from_secs(5));
    for id in [server, other] {
        let received = peer(&mut sim, id).take();
        assert!(received.iter().all(|r| command(&r.bytes) != Some(IAMNAMESERVER)), "no IAMNAMESERVER");
    }
    assert_eq!(node(&mut sim, client).session.role(), Role::Ended);
}

#[test]
fn our_server_and_windows_shaped_clients_under_loss() {
    run_seeds(2, |seed| {
        for loss in [0.0, 0.05, 0.15] {
            our_server_with_windows_shaped_clients(seed, loss);
        }
    });
}

#[test]
fn our_client_and_a_windows_shaped_server_under_loss() {
    run_seeds(2, |seed| {
        for loss in [0.0, 0.05, 0.15] {
            our_client_with_a_windows_shaped_server(seed, loss);
        }
    });
}
