//! More of what Wine's dplayx tests (dlls/dplayx/tests/dplayx.c, Wine 9.21+) record of the
//! bytes and order a Windows DirectPlay 4 client sends, checked against ours where
//! `windows.rs` does not already: enumeration, the join's order and sizes, ADDFORWARDACK,
//! CREATEPLAYER, PINGREPLY, player messages, and Windows-shaped messages from a host.
//!
//! One fact we deliberately do not match: Windows fills ADDFORWARDREQUEST's TickCount with the
//! Reserved1 of the session it enumerated, where MC-DPL4CS 2.2.11 asks for the tick count;
//! we follow the spec (docs/decisions.md, "DirectPlay 4 sessions").

use std::net::SocketAddr;

use dplay_wire::WideString;
use dplay_wire::dp4::enumeration::EnumSessionsFlags;
use dplay_wire::dp4::join::RequestPlayerFlags;
use dplay_wire::dp4::session::PlayerFlags;

use super::net::{APP, Net, created, session, session_of, stream};
// The Windows-shaped byte builders are the scripted Windows peer's (dplay-testkit), so the
// unit tests and the simulator's peers write the same bytes.
use crate::dp4::{Dp4Event, Dp4Transmit, EnumRequest, HostConfig, Via};
pub(super) use dplay_testkit::dp4_node::windows::{
    dwords, len32, message as windows_message, sock_addr, utf16z,
};

/// The DWORD at `at`.
#[track_caller]
pub(super) fn dword(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The WORD at `at`.
#[track_caller]
fn word(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}

/// The 28 bytes that open every Windows message: size and token 0xFAB and the SockAddr
/// (Wine's `SpHeader`), then 'play', the command and dialect 14 (`MessageHeader`).
#[track_caller]
fn check_prefix(b: &[u8], command: u16, what: &str) {
    assert_eq!(dword(b, 0), 0xFAB0_0000 + u32::try_from(b.len()).unwrap(), "{what}: size/token");
    assert_eq!(b[4..8], [2, 0, 0x08, 0xFC], "{what}: AF_INET, our TCP listener 2300");
    assert_eq!(b[8..20], [0; 12], "{what}: address 0 and padding");
    assert_eq!(&b[20..24], b"play", "{what}: signature");
    assert_eq!((word(b, 24), word(b, 26)), (command, 14), "{what}: command and dialect");
}

/// Every transmit node `i` has queued.
pub(super) fn drain(net: &mut Net, i: usize) -> Vec<Dp4Transmit> {
    std::iter::from_fn(|| net.nodes[i].poll_transmit()).collect()
}

/// Wine `receiveEnumSessionsRequest`: 52 bytes (plus the password), PasswordOffset 32 with a
/// password and 0 without, the flags as asked; the SockAddr names our TCP listener with
/// address 0 (MC-DPL4CS 2.2.29).
#[test]
fn enum_sessions_bytes() {
    let mut net = Net::new(1);
    let now = net.now;
    for (password, flags) in
        [(None, EnumSessionsFlags::empty()), (Some("password"), EnumSessionsFlags::PASSWORD_REQUIRED)]
    {
        let request = EnumRequest { application_guid: APP, password: password.map(str::to_owned), flags };
        net.nodes[0].enum_sessions(now, None, &request);
        let [t] = drain(&mut net, 0).try_into().unwrap();
        assert_eq!((t.via, t.to), (Via::Udp, "255.255.255.255:47624".parse().unwrap()));
        let b = &t.bytes;
        check_prefix(b, 2, "ENUMSESSIONS");
        assert_eq!(b[28..44], APP.to_bytes_le());
        let pw: Vec<u8> = password.map(utf16z).unwrap_or_default();
        assert_eq!(b.len(), 52 + pw.len());
        assert_eq!(dword(b, 44), if password.is_some() { 32 } else { 0 });
        assert_eq!(dword(b, 48), flags.bits());
        assert_eq!(b[52..], pw);
    }
}

/// Wine `joinSession`, `check_Open`: the client opens one connection to the host's listener
/// and sends REQUESTPLAYERID (32 bytes, SP | PL), then ADDFORWARDREQUEST (128 bytes, the password
/// with its NUL, TickCount), and nothing more once SUPERENUMPLAYERSREPLY arrives.
#[test]
fn join_order_and_sizes() {
    for password in [None, Some("hadouken")] {
        let mut net = Net::new(2);
        net.host(HostConfig { password: password.map(str::to_owned), ..session("normal") });
        net.join(1, password);
        let from_client: Vec<_> = net.log.iter().filter(|s| s.from == 1).collect();
        let names: Vec<_> = from_client.iter().map(|s| s.name).collect();
        assert_eq!(names, ["DPSP_MSG_REQUESTPLAYERID", "DPSP_MSG_ADDFORWARDREQUEST"]);
        assert!(from_client.iter().all(|s| s.via == Via::Tcp && s.to == 0));
        let request = &from_client[0].bytes;
        check_prefix(request, 5, "REQUESTPLAYERID");
        assert_eq!(request.len(), 32);
        assert_eq!(dword(request, 28), 0x9, "SP | PL");
        assert_eq!(
            RequestPlayerFlags::from_bits_retain(dword(request, 28)),
            RequestPlayerFlags::SYSTEM_PLAYER | RequestPlayerFlags::LOCAL
        );
        let forward = &from_client[1].bytes;
        check_prefix(forward, 19, "ADDFORWARDREQUEST");
        let pw_len = password.map_or(2, |p| 2 * (p.len() + 1));
        assert_eq!(forward.len(), 128 + pw_len + 4, "fixed part, password, TickCount");
        assert_eq!(net.log.last().unwrap().name, "DPSP_MSG_SUPERENUMPLAYERSREPLY");
        assert!(net.nodes[1].poll_transmit().is_none());
        assert!(matches!(net.take(1).as_slice(), [Dp4Event::Joined { .. }, ..]));
    }
}

/// Wine `sendAddForward` / `receiveAddForwardAck`: a member told of a new instance by the
/// host's 128-byte ADDFORWARD answers with a 32-byte ADDFORWARDACK naming it, on its
/// connection to the host's listener; the instance is then known at the SPData ports, with
/// the host's IP for address 0 (MC-DPL4CS 2.2.8, 2.2.9, 3.1.5.10).
#[test]
fn add_forward_from_windows_is_acknowledged() {
    let mut net = session_of(2, |_| {});
    net.take(1);
    let new = 0x7734;
    let player = dwords(&[80, 0x5, new, 0, 0, 32, 0, 0, new, 48, 14, 0]);
    let body = [dwords(&[0, new, 0, 28, 0]), player, sock_addr(2348), sock_addr(2398)].concat();
    let bytes = windows_message(2300, 46, &body);
    assert_eq!(bytes.len(), 128);
    let now = net.now;
    net.nodes[1].handle_tcp(now, 7, "10.0.0.1:40000".parse().unwrap(), &bytes).unwrap();
    let [ack] = drain(&mut net, 1).try_into().unwrap();
    assert_eq!((ack.via, ack.to), (Via::Tcp, stream(0)));
    check_prefix(&ack.bytes, 47, "ADDFORWARDACK");
    assert_eq!((ack.bytes.len(), dword(&ack.bytes, 28)), (32, new));
    let p = &net.nodes[1].players()[&new];
    assert!(p.is_system());
    assert_eq!(p.addrs, Some(("10.0.0.1:2348".parse().unwrap(), "10.0.0.1:2398".parse().unwrap())));
    assert_eq!(net.nodes[1].stats().dropped_total(), 0);
}

/// Wine `createPlayer` / `receiveCreatePlayer`: a member's player is asked for with
/// REQUESTPLAYERID (PL), then announced with CREATEPLAYER: IDTo 0, GroupID 0, CreateOffset 28,
/// PasswordOffset 0, a PACKEDPLAYER of size 48 + names + SPData whose flags are PL (0x8) and
/// whose system player is ours, the short name, our SPData (TCP 2300, address 0), and
/// Reserved1 (WORD) and Reserved2 (DWORD) zero at the end (MC-DPL4CS 2.2.20, 2.2.2).
#[test]
fn create_player_bytes() {
    let mut net = session_of(2, |_| {});
    net.log.clear();
    let id = created(&mut net, 1, "short name");
    let me = net.nodes[1].system_player().unwrap();
    let names: Vec<_> = net.log.iter().map(|s| (s.from, s.name)).collect();
    assert_eq!(
        names,
        [(1, "DPSP_MSG_REQUESTPLAYERID"), (0, "DPSP_MSG_REQUESTPLAYERREPLY"), (1, "DPSP_MSG_CREATEPLAYER")]
    );
    assert_eq!(net.log[0].bytes.len(), 32);
    assert_eq!(dword(&net.log[0].bytes, 28), 0x8, "PL");
    let b = &net.log[2].bytes;
    check_prefix(b, 8, "CREATEPLAYER");
    let name = utf16z("short name");
    assert_eq!(b.len(), 96 + name.len() + 32 + 6);
    assert_eq!(dwords(&[0, id, 0, 28, 0]), b[28..48]);
    let expected_player = [48 + len32(&name) + 32, 0x8, id, len32(&name), 0, 32, 0, 0, me, 48];
    assert_eq!(dwords(&expected_player), b[48..88]);
    assert_eq!(dword(b, 92), 0, "parent");
    assert_eq!(b[96..96 + name.len()], name);
    assert_eq!(b[96 + name.len()..96 + name.len() + 4], [2, 0, 0x08, 0xFC]);
    assert_eq!(b[b.len() - 6..], [0; 6]);
}

/// Wine `sendCreatePlayer`: a Windows host's CREATEPLAYER (names, SPData, player data, then
/// the six reserved bytes) adds the player with its names and data (MC-DPL4CS 3.1.5.12).
#[test]
fn create_player_from_windows_is_accepted() {
    let mut net = session_of(2, |_| {});
    net.take(1);
    let host = net.nodes[0].system_player().unwrap();
    let (short, long) = (utf16z("new player short name"), utf16z("new player long name"));
    let data = [4u8, 3, 2, 1];
    let size = u32::try_from(48 + short.len() + long.len() + 32 + data.len()).unwrap();
    let player = dwords(&[size, 0x8, 0x7734, len32(&short), len32(&long), 32, 4, 0, host, 48, 14, 0]);
    let body = [
        dwords(&[0, 0x7734, 0, 28, 0]),
        player,
        short,
        long,
        sock_addr(2300),
        sock_addr(2350),
        data.to_vec(),
        vec![0; 6],
    ]
    .concat();
    let now = net.now;
    net.nodes[1]
        .handle_tcp(now, 7, "10.0.0.1:40000".parse().unwrap(), &windows_message(2300, 8, &body))
        .unwrap();
    net.run();
    assert_eq!(
        net.take(1),
        [Dp4Event::PlayerJoined { id: 0x7734, name: Some("new player short name".into()), system: false }]
    );
    let p = &net.nodes[1].players()[&0x7734];
    assert_eq!((p.player_data.0.as_slice(), p.flags), (&data[..], PlayerFlags::empty()));
    assert_eq!(
        p.long_name.as_ref().map(WideString::to_string_lossy).as_deref(),
        Some("new player long name")
    );
}

/// Wine `sendPing` / `receivePingReply`: a PING from the host, from any UDP port, is answered
/// with a 36-byte PINGREPLY carrying our system player and the same TickCount, sent to the
/// UDP port the host's SPData names (MC-DPL4CS 2.2.42, 3.1.5.30).
#[test]
fn ping_reply_goes_to_the_spdata_port() {
    let mut net = session_of(2, |_| {});
    let host = net.nodes[0].system_player().unwrap();
    let me = net.nodes[1].system_player().unwrap();
    let ping = windows_message(2300, 22, &dwords(&[host, 0x4433_2211]));
    let now = net.now;
    net.nodes[1].handle_udp(now, "10.0.0.1:40123".parse().unwrap(), &ping);
    let [reply] = drain(&mut net, 1).try_into().unwrap();
    assert_eq!((reply.via, reply.to), (Via::Udp, "10.0.0.1:2350".parse::<SocketAddr>().unwrap()));
    check_prefix(&reply.bytes, 23, "PINGREPLY");
    assert_eq!(reply.bytes.len(), 36);
    assert_eq!((dword(&reply.bytes, 28), dword(&reply.bytes, 32)), (me, 0x4433_2211));
}

/// Wine `receiveGuaranteedGameMessage` / `receiveGameMessage` / `sendGameMessage`: a
/// guaranteed message is size/token, our SockAddr, idFrom, idTo and the data, on TCP to the
/// instance's listener; a non-guaranteed one is idFrom, idTo and the data alone, to its SPData
/// UDP port; DPID_ALLPLAYERS travels as idTo 0; and a Windows host's of either form arrives
/// (MC-DPL4CS 2.2.45).
#[test]
fn player_messages_both_ways() {
    let mut net = session_of(2, |_| {});
    let a = created(&mut net, 0, "a");
    let b = created(&mut net, 1, "b");
    net.take(1);
    let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
    let now = net.now;
    net.nodes[1].send(now, b, 0, &data, true).unwrap();
    net.nodes[1].send(now, b, a, &data, false).unwrap();
    let [guaranteed, datagram] = drain(&mut net, 1).try_into().unwrap();
    assert_eq!((guaranteed.via, guaranteed.to), (Via::Tcp, stream(0)));
    let g = &guaranteed.bytes;
    assert_eq!(dword(g, 0), 0xFAB0_0000 + 36);
    assert_eq!(g[4..20], sock_addr(2300)[..]);
    assert_eq!([dwords(&[b, 0]), data.to_vec()].concat(), g[20..]);
    assert_eq!((datagram.via, datagram.to), (Via::Udp, "10.0.0.1:2350".parse().unwrap()));
    assert_eq!(datagram.bytes, [dwords(&[b, a]), data.to_vec()].concat());
    let from_host = [dwords(&[0xFAB0_0000 + 36]), sock_addr(2300), dwords(&[a, b]), data.to_vec()].concat();
    net.nodes[1].handle_tcp(now, 7, "10.0.0.1:40000".parse().unwrap(), &from_host).unwrap();
    net.nodes[1].handle_udp(
        now,
        "10.0.0.1:2350".parse().unwrap(),
        &[dwords(&[a, b]), vec![4, 3, 2, 1]].concat(),
    );
    net.run();
    assert_eq!(
        net.take(1),
        [
            Dp4Event::Message { from: Some(a), to: Some(b), data: data.to_vec() },
            Dp4Event::Message { from: Some(a), to: Some(b), data: vec![4, 3, 2, 1] },
        ]
    );
}

/// One DPLAYI_SUPERPACKEDPLAYER as Wine's `sendSuperEnumPlayersReply` builds it: the fixed
/// 16 bytes, then `fields` (names, data and SPData with 1-byte lengths, as its mask says).
fn super_packed(flags: u32, id: u32, mask: u32, version_or_system: u32, fields: &[&[u8]]) -> Vec<u8> {
    [dwords(&[16, flags, id, mask, version_or_system]), fields.concat()].concat()
}

/// Wine `check_Open` / `joinSession` as the client side of a Windows host: a 132-byte
/// REQUESTPLAYERREPLY (with the empty provider-name buffers) and a SUPERENUMPLAYERSREPLY with
/// the session name in a 512-byte buffer, the joiner's own entry, the host (0xF), a named
/// player with data, a plain player and a group holding it; we join with all of them
/// (MC-DPL4CS 2.2.50, 2.2.53, 3.1.5.7).
#[test]
fn join_a_windows_host() {
    let mut net = Net::new(1);
    let now = net.now;
    let host: SocketAddr = "10.0.0.1:2349".parse().unwrap();
    net.nodes[0].join(now, host, None).unwrap();
    let me = 0x1234_5678;
    let reply = [dwords(&[me]), vec![0; 24], dwords(&[0, 0, 0]), vec![0; 64]].concat();
    let reply = windows_message(2349, 7, &reply);
    assert_eq!(reply.len(), 132);
    net.nodes[0].handle_tcp(now, 1, "10.0.0.1:40000".parse().unwrap(), &reply).unwrap();
    let [request_id, forward] = drain(&mut net, 0).try_into().unwrap();
    assert_eq!((request_id.to, forward.to), (host, host));
    assert_eq!(word(&forward.bytes, 24), 19, "ADDFORWARDREQUEST follows");

    let sp = [&[32u8][..], &sock_addr(2349), &sock_addr(2399)].concat();
    let (short, long) = (utf16z("short name"), utf16z("long name"));
    let data = [4u8, 1, 2, 3, 4];
    let named = [&short[..], &long, &data, &sp];
    let players = [
        super_packed(0x5, me, 0x4, 14, &[&sp]),
        super_packed(0xF, 0x51573, 0x4, 14, &[&sp]),
        super_packed(0x8, 0x1337, 0x17, 0x51573, &named),
        super_packed(0x8, 0xd00de, 0x4, 0x51573, &[&sp]),
        super_packed(0x48, 0x5e7, 0x57, 0x51573, &[&named.concat()[..], &[1], &dwords(&[0xd00de])]),
    ]
    .concat();
    let desc = [
        dwords(&[80, 0]),
        APP.to_bytes_le().to_vec(),
        APP.to_bytes_le().to_vec(),
        dwords(&[10, 0, 0, 0, 0xaabb_ccdd, 0, 0, 0, 0, 0]),
    ]
    .concat();
    let mut name = utf16z("normal");
    name.resize(512, 0);
    let body = [dwords(&[4, 1, 36 + 80 + 512, 0, 36, 36 + 80, 0]), desc, name, players].concat();
    let now = net.now;
    net.nodes[0]
        .handle_tcp(now, 1, "10.0.0.1:40000".parse().unwrap(), &windows_message(2349, 41, &body))
        .unwrap();
    net.run();
    assert!(net.take(0).contains(&Dp4Event::Joined { system_player: me }));
    let node = &net.nodes[0];
    assert_eq!(node.host_player(), Some(0x51573));
    assert_eq!(node.players()[&0x51573].addrs, Some((host, "10.0.0.1:2399".parse().unwrap())));
    let bob = &node.players()[&0x1337];
    assert_eq!(bob.short_name.as_ref().map(WideString::to_string_lossy).as_deref(), Some("short name"));
    assert_eq!(bob.player_data.0, [1, 2, 3, 4]);
    assert!(node.players().contains_key(&0xd00de));
    let group = &node.groups()[&0x5e7];
    assert_eq!(group.members.iter().copied().collect::<Vec<_>>(), [0xd00de]);
    assert_eq!((group.name().as_deref(), group.system_player_id), (Some("short name"), 0x51573));
    assert_eq!(node.session_name().as_deref(), Some("normal"));
    assert_eq!(node.session_desc().map(|d| d.reserved1), Some(0xaabb_ccdd));
    assert_eq!(node.stats().dropped_total(), 0);
    assert!(net.nodes[0].poll_transmit().is_none(), "nothing more after the join");
}
