//! DPSP_MSG_ENUMPLAYERSREPLY from a Windows-shaped host (MC-DPL4CS 2.2.28, 2.2.2, 3.1.4.3): a
//! joiner takes the name table from its DPLAYI_PACKEDPLAYERs as it does from
//! SUPERENUMPLAYERSREPLY (3.1.5.7), with the same limits.

use std::net::SocketAddr;

use dplay_wire::dp4::enumeration::{EnumPlayersReply, SuperEnumPlayersReply};
use dplay_wire::dp4::header::{SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::session::{SessionDesc2, SessionFlags};
use dplay_wire::{Blob, WideString, Wire};
use proptest::prelude::*;

use super::net::{APP, Net};
use super::wine_facts::{dword, dwords, len32, sock_addr, utf16z, windows_message};
use crate::dp4::group_table::Group;
use crate::dp4::table::Player;
use crate::dp4::{Dp4Event, DropReason, JoinError, Role};

/// Our system player, as the host's REQUESTPLAYERREPLY names it.
pub(super) const ME: u32 = 0x1234_5678;
/// The Windows host's system player.
pub(super) const HOST: u32 = 0x51573;

pub(super) fn host_addr() -> SocketAddr {
    "10.0.0.1:2349".parse().unwrap()
}

pub(super) fn from_host() -> SocketAddr {
    "10.0.0.1:40000".parse().unwrap()
}

/// A one-node net whose node has sent ADDFORWARDREQUEST to a Windows host at 10.0.0.1:2349
/// (after the host's 132-byte REQUESTPLAYERREPLY, MC-DPL4CS 2.2.50): waiting for the name table.
pub(super) fn joining() -> Net {
    let mut net = Net::new(1);
    let now = net.now;
    net.nodes[0].join(now, host_addr(), None).unwrap();
    let reply = [dwords(&[ME]), vec![0; 24], dwords(&[0, 0, 0]), vec![0; 64]].concat();
    net.nodes[0].handle_tcp(now, 1, from_host(), &windows_message(2349, 7, &reply)).unwrap();
    assert_eq!(super::wine_facts::drain(&mut net, 0).len(), 2, "REQUESTPLAYERID, ADDFORWARDREQUEST");
    net
}

/// One DPLAYI_PACKEDPLAYER as Windows lays it out (MC-DPL4CS 2.2.2): Size (without the
/// PlayerIDs, as in Windows' CREATEPLAYER), Flags, PlayerID, the name, SPData and data
/// lengths, NumberOfPlayers, SystemPlayerID, FixedSize 48, PlayerVersion 14, ParentID, then
/// ShortName, LongName, SPData, PlayerData and PlayerIDs.
pub(super) fn packed(
    flags: u32,
    id: u32,
    system: u32,
    short: &str,
    sp: &[u8],
    data: &[u8],
    members: &[u32],
) -> Vec<u8> {
    let short = if short.is_empty() { Vec::new() } else { utf16z(short) };
    let size = 48 + len32(&short) + len32(sp) + len32(data);
    let n = u32::try_from(members.len()).unwrap();
    let fixed = dwords(&[size, flags, id, len32(&short), 0, len32(sp), len32(data), n, system, 48, 14, 0]);
    [fixed, short, sp.to_vec(), data.to_vec(), dwords(members)].concat()
}

/// A DPSESSIONDESC2 (MC-DPL4CS 2.2.5) with `flags`, MaxPlayers 10 and Reserved1 0xaabbccdd.
fn desc(flags: u32) -> Vec<u8> {
    [
        dwords(&[80, flags]),
        APP.to_bytes_le().to_vec(),
        APP.to_bytes_le().to_vec(),
        dwords(&[10, 0, 0, 0, 0xaabb_ccdd, 0, 0, 0, 0, 0]),
    ]
    .concat()
}

/// A Windows-shaped ENUMPLAYERSREPLY (MC-DPL4CS 2.2.28): PlayerCount, GroupCount,
/// PlayerOffset, ShortcutCount (uninitialized in Windows, <9>: here 0xCCCCCCCC),
/// DescriptionOffset, NameOffset, PasswordOffset 0, then the description, the session name and
/// the PACKEDPLAYERs, players first. Offsets count from the message (after the 20-byte SP
/// header), as in SUPERENUMPLAYERSREPLY.
pub(super) fn enum_players_reply(flags: u32, players: &[Vec<u8>], groups: &[Vec<u8>]) -> Vec<u8> {
    let name = utf16z("normal");
    let counts = [u32::try_from(players.len()).unwrap(), u32::try_from(groups.len()).unwrap()];
    let head = dwords(&[counts[0], counts[1], 36 + 80 + len32(&name), 0xCCCC_CCCC, 36, 36 + 80, 0]);
    let body = [head, desc(flags), name, players.concat(), groups.concat()].concat();
    windows_message(2349, 3, &body)
}

/// The host's SPData: TCP 2349, UDP 2399, address 0 (the sender's IP).
pub(super) fn host_sp() -> Vec<u8> {
    [sock_addr(2349), sock_addr(2399)].concat()
}

/// MC-DPL4CS 2.2.28, 3.1.5.7: a join answered with ENUMPLAYERSREPLY completes with the table
/// its PACKEDPLAYERs hold (the host, a named player with data, a plain player, a group
/// holding both); a player and a group over our limits are left out and counted `too-long`,
/// and the uninitialized ShortcutCount is ignored.
#[test]
fn join_completes_with_enum_players_reply() {
    let mut net = joining();
    let long = "x".repeat(300);
    let players = [
        packed(0x5, ME, ME, "", &host_sp(), &[], &[]),
        packed(0xF, HOST, HOST, "", &host_sp(), &[], &[]),
        packed(0x8, 0x1337, HOST, "short name", &[], &[1, 2, 3, 4], &[]),
        packed(0x8, 0xd00de, HOST, "", &[], &[], &[]),
        packed(0x8, 0x7007, HOST, &long, &[], &[], &[]),
    ];
    let groups = [
        packed(0x40, 0x5e7, HOST, "wing", &[], &[9], &[0x1337, 0xd00de]),
        packed(0x40, 0x5e8, HOST, &long, &[], &[], &[]),
    ];
    let bytes = enum_players_reply(0x4, &players, &groups);
    assert_eq!((dword(&bytes, 36), dword(&bytes, 44)), (36 + 80 + 14, 36), "PlayerOffset, DescriptionOffset");
    let now = net.now;
    net.nodes[0].handle_tcp(now, 1, from_host(), &bytes).unwrap();
    net.run();
    assert!(net.take(0).contains(&Dp4Event::Joined { system_player: ME }));
    let node = &net.nodes[0];
    assert_eq!(node.role(), Role::Member);
    assert_eq!(node.host_player(), Some(HOST));
    assert_eq!(node.players()[&HOST].addrs, Some((host_addr(), "10.0.0.1:2399".parse().unwrap())));
    let named = &node.players()[&0x1337];
    assert_eq!(named.short_name.as_ref().map(WideString::to_string_lossy).as_deref(), Some("short name"));
    assert_eq!((named.player_data.0.as_slice(), named.system_player_id), (&[1u8, 2, 3, 4][..], HOST));
    assert!(node.players().contains_key(&0xd00de));
    assert!(!node.players().contains_key(&0x7007), "the oversize player was kept");
    let group = &node.groups()[&0x5e7];
    assert_eq!(group.members.iter().copied().collect::<Vec<_>>(), [0x1337, 0xd00de]);
    assert_eq!((group.name().as_deref(), group.group_data.0.as_slice()), (Some("wing"), &[9u8][..]));
    assert!(!node.groups().contains_key(&0x5e8), "the oversize group was kept");
    assert_eq!(node.session_name().as_deref(), Some("normal"));
    assert_eq!(node.session_desc().map(|d| d.reserved1), Some(0xaabb_ccdd));
    assert_eq!((node.stats().dropped(DropReason::TooLong), node.stats().dropped_total()), (2, 2));
    assert!(net.nodes[0].poll_transmit().is_none(), "nothing more after the join");
}

/// MC-DPL4CS 1.3: a multicast-server session (MS, 0x800) is not implemented, so a joiner that
/// finds it in the host's ENUMPLAYERSREPLY leaves as with SUPERENUMPLAYERSREPLY: DELETEPLAYER
/// of its system player to the host, then `JoinError::Unsupported` naming MS.
#[test]
fn multicast_server_session_is_left() {
    let mut net = joining();
    let players = [packed(0xF, HOST, HOST, "", &host_sp(), &[], &[])];
    let now = net.now;
    net.nodes[0].handle_tcp(now, 1, from_host(), &enum_players_reply(0x800, &players, &[])).unwrap();
    assert_eq!(
        net.nodes[0].poll_event(),
        Some(Dp4Event::JoinFailed(JoinError::Unsupported(SessionFlags::MULTICAST_SERVER)))
    );
    let [bye] = super::wine_facts::drain(&mut net, 0).try_into().unwrap();
    assert_eq!(
        (bye.to, Dp4Message::parse(&bye.bytes).unwrap().name()),
        (host_addr(), "DPSP_MSG_DELETEPLAYER")
    );
    assert_eq!(dword(&bye.bytes, 32), ME);
    assert_eq!(net.nodes[0].role(), Role::Idle);
}

/// MC-DPL4CS 3.1.5.7 (and 3.1.4.3: we never ask with ENUMPLAYER): a name table nobody waits
/// for is dropped and counted, and changes nothing.
#[test]
fn enum_players_reply_out_of_a_join_is_dropped() {
    let mut net = Net::new(1);
    let players = [packed(0xF, HOST, HOST, "", &host_sp(), &[], &[])];
    let now = net.now;
    net.nodes[0].handle_tcp(now, 1, from_host(), &enum_players_reply(0x4, &players, &[])).unwrap();
    assert_eq!(net.nodes[0].stats().dropped(DropReason::Unexpected), 1);
    assert!(net.nodes[0].players().is_empty());
    assert!(net.nodes[0].poll_event().is_none());
}

/// A name-table entry for the property below: a name of `name_len` units, `data`, and for a
/// group the indexes of its member players.
type Entry = (usize, Vec<u8>, Vec<usize>);

fn player(i: usize, (name_len, data, _): &Entry) -> Player {
    let system = i == 0;
    Player {
        id: 0x100 + u32::try_from(i).unwrap(),
        flags: if system {
            dplay_wire::dp4::session::PlayerFlags::SYSTEM_PLAYER
                | dplay_wire::dp4::session::PlayerFlags::NAME_SERVER
        } else {
            dplay_wire::dp4::session::PlayerFlags::empty()
        },
        system_player_id: 0x100,
        version: if system { 14 } else { 0 },
        short_name: (*name_len > 0).then(|| WideString::new(&"n".repeat(*name_len))),
        long_name: None,
        player_data: Blob(data.clone()),
        addrs: system.then(|| (host_addr(), "10.0.0.1:2399".parse().unwrap())),
        local: false,
        chatter: 0,
        missed_pings: 0,
        answers_pings: false,
        round_trip: None,
        probed_at: None,
    }
}

fn group(i: usize, (name_len, data, members): &Entry, players: usize) -> Group {
    Group {
        id: 0x900 + u32::try_from(i).unwrap(),
        flags: dplay_wire::dp4::session::PlayerFlags::empty(),
        system_player_id: 0x100,
        parent_id: 0,
        short_name: (*name_len > 0).then(|| WideString::new(&"g".repeat(*name_len))),
        long_name: None,
        group_data: Blob(data.clone()),
        // Indexes past the players name IDs nobody has: members we do not know.
        members: members.iter().map(|&m| 0x100 + u32::try_from(m % (players + 2)).unwrap()).collect(),
        shortcuts: Default::default(),
        local: false,
    }
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        prop_oneof![0usize..8, 250usize..260],
        proptest::collection::vec(any::<u8>(), 0..6),
        proptest::collection::vec(0usize..16, 0..4),
    )
}

/// What a joiner kept: (ID, short name, data) per player, (ID, short name, members) per
/// group, and its `too-long` and `unknown-player` drops.
type Kept = (Vec<(u32, Option<String>, Vec<u8>)>, Vec<(u32, Option<String>, Vec<u32>)>, u64, u64);

/// Joins a fresh node with `body` as the name table; its tables, names kept and drops.
fn join_with(body: Dp4Body) -> Kept {
    let mut net = joining();
    let bytes = Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, body).to_vec().unwrap();
    let now = net.now;
    net.nodes[0].handle_tcp(now, 1, from_host(), &bytes).unwrap();
    let node = &net.nodes[0];
    assert_eq!(node.role(), Role::Member);
    let players = node
        .players()
        .values()
        .map(|p| (p.id, p.short_name.as_ref().map(WideString::to_string_lossy), p.player_data.0.clone()))
        .collect();
    let groups =
        node.groups().values().map(|g| (g.id, g.name(), g.members.iter().copied().collect())).collect();
    let stats = node.stats();
    (players, groups, stats.dropped(DropReason::TooLong), stats.dropped(DropReason::UnknownPlayer))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// MC-DPL4CS 2.2.28 vs 2.2.53: the same name table sent as ENUMPLAYERSREPLY or as
    /// SUPERENUMPLAYERSREPLY gives the joiner the same players and groups, with the same
    /// entries left out (names over 256 units: `too-long`; unknown members).
    #[test]
    fn both_replies_give_the_same_tables(
        players in proptest::collection::vec(entry(), 1..6),
        groups in proptest::collection::vec(entry(), 0..4),
    ) {
        let ps: Vec<Player> = players.iter().enumerate().map(|(i, e)| player(i, e)).collect();
        let gs: Vec<Group> = groups.iter().enumerate().map(|(i, e)| group(i, e, ps.len())).collect();
        let session_desc = SessionDesc2::read(&mut dplay_wire::Reader::new(&desc(0))).unwrap();
        let name = Some(WideString::new("s"));
        let plain = Dp4Body::EnumPlayersReply(EnumPlayersReply {
            shortcut_count: 0xCCCC_CCCC,
            session_desc,
            session_name: name.clone(),
            password: None,
            players: ps.iter().map(Player::to_packed).collect(),
            groups: gs.iter().map(|g| g.to_packed(14)).collect(),
        });
        let sup = Dp4Body::SuperEnumPlayersReply(SuperEnumPlayersReply {
            session_desc,
            session_name: name,
            password: None,
            players: ps.iter().map(Player::to_super).collect(),
            groups: gs.iter().map(Group::to_super).collect(),
            shortcuts: Vec::new(),
        });
        let (a, b) = (join_with(plain), join_with(sup));
        prop_assert_eq!(&a, &b);
        let over = players.iter().chain(&groups).filter(|e| e.0 > 256).count();
        prop_assert_eq!(a.2, u64::try_from(over).unwrap());
    }
}

/// MC-DPL4CS 2.2.27, 3.1.4.3, 2.2.53 note: a Windows-shaped ENUMPLAYER (the 28-byte header
/// alone, command 4) from an instance that has not joined is answered with the name table as
/// SUPERENUMPLAYERSREPLY (we never host CS), by TCP to its SockAddr's port, without the
/// password; a session with a password is not enumerated.
#[test]
fn host_answers_enum_player() {
    for password in [None, Some("secret")] {
        let mut net = Net::new(1);
        net.host(crate::dp4::HostConfig {
            password: password.map(str::to_owned),
            ..super::net::session("S")
        });
        let pilot = super::net::created(&mut net, 0, "pilot");
        super::wine_facts::drain(&mut net, 0);
        let request = windows_message(2300, 4, &[]);
        assert_eq!(request.len(), 28);
        let now = net.now;
        net.nodes[0].handle_tcp(now, 9, "10.0.0.9:40001".parse().unwrap(), &request).unwrap();
        let sent = super::wine_facts::drain(&mut net, 0);
        if password.is_some() {
            assert!(sent.is_empty(), "a session with a password was enumerated");
            continue;
        }
        let [reply] = sent.try_into().unwrap();
        assert_eq!((reply.via, reply.to), (crate::dp4::Via::Tcp, "10.0.0.9:2300".parse().unwrap()));
        let Dp4Body::SuperEnumPlayersReply(m) = Dp4Message::parse(&reply.bytes).unwrap().body else {
            panic!("not SUPERENUMPLAYERSREPLY")
        };
        let host = net.nodes[0].system_player().unwrap();
        assert_eq!(m.players.iter().map(|p| p.id).collect::<Vec<_>>(), {
            let mut ids = vec![host, pilot];
            ids.sort_unstable();
            ids
        });
        assert_eq!((m.password, m.session_name.map(|n| n.to_string_lossy())), (None, Some("S".into())));
    }
}

/// Issue 14 limits for ENUMPLAYER: forged UDP requests from one source get at most
/// `replies_per_source` name tables per interval; the rest are counted as rate limited.
#[test]
fn enum_player_flood_is_rate_limited() {
    let mut net = Net::new(1);
    net.host(super::net::session("S"));
    super::wine_facts::drain(&mut net, 0);
    let per_source = net.nodes[0].config.limits.replies_per_source;
    let now = net.now;
    for _ in 0..50 {
        net.nodes[0].handle_udp(now, "10.0.0.9:2350".parse().unwrap(), &windows_message(2300, 4, &[]));
    }
    let sent = super::wine_facts::drain(&mut net, 0);
    assert_eq!(sent.len(), per_source as usize);
    assert!(sent.iter().all(|t| t.to == "10.0.0.9:2300".parse().unwrap()));
    assert_eq!(net.nodes[0].stats().dropped(DropReason::RateLimited), 50 - u64::from(per_source));
}
