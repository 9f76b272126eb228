//! Groups: CREATEGROUP, REQUESTGROUPID, DELETEGROUP, ADDPLAYERTOGROUP, DELETEPLAYERFROMGROUP,
//! GROUPDATACHANGED, GROUPNAMECHANGED, the Group List in SUPERENUMPLAYERSREPLY and messages to
//! groups (MC-DPL4CS 3.1.4.6-3.1.4.8, 3.1.4.12, 3.1.4.13, 3.1.4.16, 3.1.5.7, 3.1.5.11,
//! 3.1.5.14-3.1.5.17, 3.1.5.20, 3.1.5.21).

use std::time::Duration;

use dplay_wire::dp4::header::{SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::nametable::{NameChanged, PlayerGroupIds};
use dplay_wire::dp4::player::SuperPackedPlayer;
use dplay_wire::dp4::session::PlayerFlags;
use dplay_wire::{WideString, Wire};

use super::net::{Net, created, session_of};
use crate::dp4::{CommandError, DPID_ALLPLAYERS, Dp4Event, DropReason, GroupEvent, JoinError};

/// Node `i` creates group `name` and the exchange runs; its ID.
#[track_caller]
pub(super) fn group(net: &mut Net, i: usize, name: &str) -> u32 {
    let now = net.now;
    net.nodes[i].create_group(now, name).unwrap();
    net.run();
    let events = net.take(i);
    events
        .iter()
        .find_map(|e| match e {
            Dp4Event::Group(GroupEvent::Created { id, local: true, .. }) => Some(*id),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no local GroupCreated in {events:?}"))
}

/// The members of `group` as node `i` knows them.
#[track_caller]
fn members(net: &Net, i: usize, group: u32) -> Vec<u32> {
    net.nodes[i].group_members(group).expect("group known").collect()
}

/// Hands `body` to node `to` as if node 2 (10.0.0.3) sent it over TCP.
fn inject(net: &mut Net, to: usize, body: Dp4Body) {
    let bytes = Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, body).to_vec().unwrap();
    let now = net.now;
    net.nodes[to].handle_tcp(now, 77, "10.0.0.3:40002".parse().unwrap(), &bytes).unwrap();
    net.run();
}

/// The trace in a fixed order: instances are visited in player-ID order.
fn sorted_trace(net: &Net) -> Vec<String> {
    let mut t = net.trace();
    t.sort();
    t
}

#[track_caller]
fn bytes_of(net: &Net, name: &str) -> Vec<u8> {
    net.log.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no {name} sent")).bytes.clone()
}

fn dword(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// MC-DPL4CS 3.1.4.6, 3.1.5.11, 2.2.20: the host gives the group its ID itself and sends
/// CREATEGROUP (command 9, PlayerID = the group, CreateOffset 28) to every instance, which
/// adds it to its Group List, owned by the host's system player.
#[test]
fn host_creates_a_group() {
    let mut net = session_of(3, |_| {});
    (0..3).for_each(|i| drop(net.take(i)));
    net.log.clear();
    let g = group(&mut net, 0, "FS61_REQUEST_PARAMS");
    assert_eq!(sorted_trace(&net), ["0->1 Tcp DPSP_MSG_CREATEGROUP", "0->2 Tcp DPSP_MSG_CREATEGROUP"]);
    let bytes = bytes_of(&net, "DPSP_MSG_CREATEGROUP");
    assert_eq!(bytes[24..26], [9, 0]);
    assert_eq!([dword(&bytes, 28), dword(&bytes, 32), dword(&bytes, 36), dword(&bytes, 40)], [0, g, 0, 28]);
    let host = net.nodes[0].system_player().unwrap();
    for i in [1, 2] {
        let entry = &net.nodes[i].groups()[&g];
        assert_eq!(
            (entry.name().as_deref(), entry.system_player_id, entry.local),
            (Some("FS61_REQUEST_PARAMS"), host, false)
        );
        assert_eq!(
            net.take(i),
            [Dp4Event::Group(GroupEvent::Created {
                id: g,
                name: Some("FS61_REQUEST_PARAMS".into()),
                local: false
            })]
        );
        assert_eq!(net.nodes[i].group_named("FS61_REQUEST_PARAMS"), Some(g));
    }
}

/// MC-DPL4CS 3.1.4.6, 2.2.48, 3.2.5.4: a member asks the host with REQUESTGROUPID (command 6,
/// GL 0x8, 32 bytes), gets the ID in REQUESTPLAYERREPLY, then sends CREATEGROUP to every
/// instance.
#[test]
fn member_asks_the_host_for_a_group_id() {
    let mut net = session_of(3, |_| {});
    net.log.clear();
    let g = group(&mut net, 1, "FS61_REFUSE_PARAMS");
    assert_eq!(
        net.trace()[..2],
        ["1->0 Tcp DPSP_MSG_REQUESTGROUPID", "0->1 Tcp DPSP_MSG_REQUESTPLAYERREPLY"]
    );
    assert_eq!(
        sorted_trace(&net),
        [
            "0->1 Tcp DPSP_MSG_REQUESTPLAYERREPLY",
            "1->0 Tcp DPSP_MSG_CREATEGROUP",
            "1->0 Tcp DPSP_MSG_REQUESTGROUPID",
            "1->2 Tcp DPSP_MSG_CREATEGROUP"
        ]
    );
    let request = bytes_of(&net, "DPSP_MSG_REQUESTGROUPID");
    assert_eq!((request.len(), &request[24..26], dword(&request, 28)), (32, &[6u8, 0][..], 8));
    let owner = net.nodes[1].system_player().unwrap();
    for i in [0, 2] {
        assert_eq!(net.nodes[i].groups()[&g].system_player_id, owner);
    }
    assert!(!net.nodes[0].players().contains_key(&g), "a group ID is not a player");
}

/// MC-DPL4CS 3.1.4.6: no REQUESTPLAYERREPLY before the Reliable API timer: the higher layer
/// is told; a second request while one is outstanding is refused.
#[test]
fn group_request_times_out() {
    let mut net = session_of(2, |_| {});
    net.take(1);
    net.cut.insert((1, 0));
    let now = net.now;
    net.nodes[1].create_group(now, "lost").unwrap();
    assert_eq!(net.nodes[1].create_group(now, "again"), Err(CommandError::WrongState));
    assert_eq!(net.nodes[1].create_player(now, "p"), Err(CommandError::WrongState));
    net.advance(Duration::from_secs(30));
    assert_eq!(net.take(1), [Dp4Event::Group(GroupEvent::CreateFailed(JoinError::Timeout))]);
    assert!(net.nodes[1].groups().is_empty());
}

/// MC-DPL4CS 3.1.4.12, 3.1.5.20, 2.2.12 and 3.1.4.13, 3.1.5.21, 2.2.26: ADDPLAYERTOGROUP and
/// DELETEPLAYERFROMGROUP (commands 0x0D, 0x0E, 48 bytes, PlayerID at 32, GroupID at 36) go to
/// every instance, which updates the members and reports it.
#[test]
fn add_and_remove_a_member() {
    let mut net = session_of(3, |_| {});
    let g = group(&mut net, 0, "FS61_REFUSE_PARAMS");
    let p = created(&mut net, 1, "addon");
    (0..3).for_each(|i| drop(net.take(i)));
    net.log.clear();
    net.nodes[1].add_player_to_group(g, p).unwrap();
    net.run();
    assert_eq!(
        sorted_trace(&net),
        ["1->0 Tcp DPSP_MSG_ADDPLAYERTOGROUP", "1->2 Tcp DPSP_MSG_ADDPLAYERTOGROUP"]
    );
    let bytes = bytes_of(&net, "DPSP_MSG_ADDPLAYERTOGROUP");
    assert_eq!(
        (bytes.len(), &bytes[24..26], dword(&bytes, 32), dword(&bytes, 36)),
        (48, &[13u8, 0][..], p, g)
    );
    for i in 0..3 {
        assert_eq!(members(&net, i, g), [p]);
    }
    assert_eq!(net.take(0), [Dp4Event::Group(GroupEvent::PlayerAdded { group: g, player: p })]);
    net.log.clear();
    net.nodes[1].add_player_to_group(g, p).unwrap();
    assert!(net.nodes[1].poll_transmit().is_none(), "already a member: nothing sent");
    net.nodes[1].delete_player_from_group(g, p).unwrap();
    net.run();
    assert_eq!(bytes_of(&net, "DPSP_MSG_DELETEPLAYERFROMGROUP")[24..26], [14, 0]);
    for i in 0..3 {
        assert!(members(&net, i, g).is_empty());
    }
    let (added, removed) =
        (GroupEvent::PlayerAdded { group: g, player: p }, GroupEvent::PlayerRemoved { group: g, player: p });
    assert_eq!(net.take(2), [Dp4Event::Group(added), Dp4Event::Group(removed)]);
    assert_eq!(net.nodes[1].add_player_to_group(0x1234, p), Err(CommandError::UnknownGroup(0x1234)));
    assert_eq!(net.nodes[1].add_player_to_group(g, 0x1234), Err(CommandError::UnknownPlayer(0x1234)));
}

/// MC-DPL4CS 3.1.5.7, 2.2.53, 2.2.3: a joiner receives the groups after the players in
/// SUPERENUMPLAYERSREPLY, with their members (PC) and owner, and has the same Group List.
#[test]
fn joiner_receives_groups_and_members() {
    let mut net = session_of(2, |_| {});
    let request = group(&mut net, 0, "FS61_REQUEST_PARAMS");
    let refuse = group(&mut net, 0, "FS61_REFUSE_PARAMS");
    let p = created(&mut net, 1, "addon");
    net.nodes[1].add_player_to_group(refuse, p).unwrap();
    net.run();
    let mut net3 = Net {
        nodes: net.nodes,
        events: vec![Vec::new(); 3],
        log: Vec::new(),
        now: net.now,
        cut: net.cut,
        killed: net.killed,
        lost: net.lost,
    };
    net3.nodes.push(crate::dp4::Dp4Session::new(super::net::config(2)).unwrap());
    net3.join(2, None);
    assert_eq!(net3.nodes[2].groups().len(), 2);
    assert_eq!(net3.nodes[2].groups(), net3.nodes[1].groups());
    assert_eq!(members(&net3, 2, refuse), [p]);
    assert!(members(&net3, 2, request).is_empty());
    let reply = bytes_of(&net3, "DPSP_MSG_SUPERENUMPLAYERSREPLY");
    assert_eq!(dword(&reply, 32), 2, "GroupCount");
    assert_eq!(net3.nodes[2].stats().dropped_total(), 0);
}

/// MC-DPL4CS 3.1.4.16 and docs/decisions.md "DirectPlay 4 groups": a message to a group goes
/// once to each instance with a member in it and is delivered only where one of our players
/// is a member; elsewhere it is dropped and counted.
#[test]
fn messages_to_a_group_reach_its_members() {
    let mut net = session_of(3, |_| {});
    let g = group(&mut net, 0, "FS61_REQUEST_PARAMS");
    let a = created(&mut net, 0, "a");
    let b = created(&mut net, 1, "b");
    let c = created(&mut net, 2, "c");
    net.nodes[1].add_player_to_group(g, b).unwrap();
    net.run();
    (0..3).for_each(|i| drop(net.take(i)));
    net.log.clear();
    let now = net.now;
    net.nodes[0].send(now, a, g, b"params", true).unwrap();
    net.run();
    assert_eq!(net.trace(), ["0->1 Tcp PLAYERMESSAGE"]);
    assert_eq!(net.take(1), [Dp4Event::Message { from: Some(a), to: Some(g), data: b"params".to_vec() }]);
    // Node 2 has no member: a message to the group is not for it.
    let mut to_group = c.to_le_bytes().to_vec();
    to_group.extend_from_slice(&g.to_le_bytes());
    to_group.extend_from_slice(b"x");
    net.nodes[0].handle_udp(now, "10.0.0.3:2350".parse().unwrap(), &to_group);
    assert_eq!(net.nodes[0].stats().dropped(DropReason::UnknownPlayer), 1);
    net.nodes[0].send(now, a, DPID_ALLPLAYERS, b"all", true).unwrap();
    net.run();
    assert_eq!(net.take(2).len(), 1, "DPID_ALLPLAYERS still reaches everyone");
}

/// MC-DPL4CS 3.1.5.14, 3.1.5.16: a leaving player leaves its groups; the groups an instance
/// created go with it.
#[test]
fn leaving_instance_takes_its_groups_and_memberships() {
    let mut net = session_of(3, |_| {});
    let hosts = group(&mut net, 0, "hosts");
    let p = created(&mut net, 2, "p");
    let mine = group(&mut net, 2, "mine");
    net.nodes[2].add_player_to_group(hosts, p).unwrap();
    net.run();
    (0..3).for_each(|i| drop(net.take(i)));
    net.nodes[2].leave().unwrap();
    net.run();
    assert!(members(&net, 0, hosts).is_empty());
    assert!(!net.nodes[1].groups().contains_key(&mine));
    assert!(net.take(1).contains(&Dp4Event::Group(GroupEvent::Deleted { id: mine })));
}

/// MC-DPL4CS 3.1.4.7, 3.1.5.15, 2.2.23 (GroupID at 36) and 3.1.4.8, 3.1.5.16, 3.1.5.17: the
/// owner deletes its group and changes its data; a GROUPNAMECHANGED renames it.
#[test]
fn delete_group_and_data_and_name_changes() {
    let mut net = session_of(2, |_| {});
    let g = group(&mut net, 0, "old");
    let h = group(&mut net, 0, "other");
    net.take(1);
    net.nodes[0].set_group_data(g, &[1, 2, 3]).unwrap();
    net.run();
    assert_eq!(net.take(1), [Dp4Event::Group(GroupEvent::DataChanged { id: g, data: vec![1, 2, 3] })]);
    assert_eq!(net.nodes[1].groups()[&g].group_data.0, [1, 2, 3]);
    assert_eq!(net.nodes[1].set_group_data(g, &[9]), Err(CommandError::UnknownGroup(g)), "not the owner");
    let rename = NameChanged { id_to: 0, id: g, short_name: Some(WideString::new("new")), long_name: None };
    inject(&mut net, 1, Dp4Body::GroupNameChanged(rename));
    assert_eq!(net.nodes[1].group_named("new"), Some(g));
    assert_eq!(
        net.take(1),
        [Dp4Event::Group(GroupEvent::NameChanged { id: g, short_name: Some("new".into()), long_name: None })]
    );
    net.log.clear();
    net.nodes[0].delete_group(h).unwrap();
    net.run();
    let bytes = bytes_of(&net, "DPSP_MSG_DELETEGROUP");
    assert_eq!((&bytes[24..26], dword(&bytes, 36)), (&[12u8, 0][..], h));
    assert_eq!(net.take(1), [Dp4Event::Group(GroupEvent::Deleted { id: h })]);
    assert_eq!(net.nodes[1].groups().keys().copied().collect::<Vec<_>>(), [g]);
}

/// MC-DPL4CS 3.1.5.15, 3.1.5.20, 3.1.5.21, 3.1.5.11 with hostile input: unknown groups,
/// players and owners are dropped and counted, never applied.
#[test]
fn hostile_group_messages_are_dropped_and_counted() {
    let mut net = session_of(2, |_| {});
    let g = group(&mut net, 0, "g");
    net.take(1);
    let ids = |player_id, group_id| PlayerGroupIds { player_id, group_id, ..Default::default() };
    let me = net.nodes[1].system_player().unwrap();
    inject(&mut net, 1, Dp4Body::AddPlayerToGroup(ids(me, 0xBAD)));
    inject(&mut net, 1, Dp4Body::AddPlayerToGroup(ids(0xBAD, g)));
    inject(&mut net, 1, Dp4Body::DeletePlayerFromGroup(ids(me, g)));
    inject(&mut net, 1, Dp4Body::DeleteGroup(ids(0, 0xBAD)));
    assert_eq!(net.nodes[1].stats().dropped(DropReason::UnknownPlayer), 4);
    assert!(members(&net, 1, g).is_empty());
    assert!(net.take(1).is_empty());
}

/// MC-DPL4CS 3.1.5.7, 2.2.3 with hostile input: SUPERENUMPLAYERSREPLY groups whose parents
/// loop or are unknown become top-level, members we do not know are left out, and an entry
/// with a player's ID is ignored; each is counted.
#[test]
fn hostile_group_list_is_repaired() {
    let mut net = session_of(2, |_| {});
    let host = net.nodes[0].system_player().unwrap();
    let entry = |id, parent: u32, members: Vec<u32>| SuperPackedPlayer {
        flags: PlayerFlags::empty(),
        id,
        version_or_system_player_id: host,
        short_name: None,
        long_name: None,
        player_data: None,
        sp_data: None,
        player_ids: Some(dplay_wire::dp4::player::Counted::narrowest(members.clone(), members.len())),
        parent_id: Some(parent),
        shortcut_ids: None,
    };
    let entries = [
        entry(0xA, 0xB, vec![host]),
        entry(0xB, 0xA, vec![0xBAD]),
        entry(0xC, 0xF00, vec![]),
        entry(host, 0, vec![]),
    ];
    let node = &mut net.nodes[1];
    node.load_groups(entries.iter().map(crate::dp4::group_table::Group::from_super).collect());
    assert_eq!(node.groups().keys().copied().collect::<Vec<_>>(), [0xA, 0xB, 0xC]);
    assert!(node.groups().values().all(|g| g.parent_id == 0));
    assert_eq!(node.groups()[&0xA].members.iter().copied().collect::<Vec<_>>(), [host]);
    assert!(node.groups()[&0xB].members.is_empty());
    assert_eq!(node.stats().dropped(DropReason::Malformed), 4);
    assert_eq!(node.stats().dropped(DropReason::UnknownPlayer), 1);
}

/// MC-DPL4CS 3.1.7.1, 3.2.5.4 note, 3.1.5.16: after host migration the new host's IDs never
/// repeat a live group's; the old host's groups went with it, the members' stay.
#[test]
fn migrated_host_never_reuses_a_group_id() {
    let mut net = session_of(3, |c| c.flags = dplay_wire::dp4::session::SessionFlags::MIGRATE_HOST);
    let old = group(&mut net, 0, "old host's");
    let kept = [group(&mut net, 1, "one"), group(&mut net, 2, "two")];
    net.nodes[0].leave().unwrap();
    net.run();
    let new_host = (1..3).find(|&i| net.nodes[i].role() == crate::dp4::Role::Host).expect("a new host");
    assert_eq!(net.nodes[new_host].groups().keys().copied().collect::<Vec<_>>(), {
        let mut k = kept.to_vec();
        k.sort_unstable();
        k
    });
    assert!(!net.nodes[new_host].groups().contains_key(&old));
    let fresh = group(&mut net, new_host, "fresh");
    assert!(!kept.contains(&fresh) && !net.nodes[new_host].players().contains_key(&fresh));
}

/// MC-DPL4CS 3.1.5.11, 2.2.20: a CREATEGROUP whose GroupInfo names no known instance is owned by
/// the instance that sent it; from no instance at all it is dropped and counted.
#[test]
fn create_group_owner_falls_back_on_the_sender() {
    use dplay_wire::Blob;
    use dplay_wire::dp4::join::PlayerInfoMessage;
    use dplay_wire::dp4::player::PackedPlayer;

    let mut net = session_of(3, |_| {});
    (0..3).for_each(|i| drop(net.take(i)));
    let info = |id| PlayerInfoMessage {
        id_to: 0,
        player_id: id,
        group_id: 0,
        password_offset: 0,
        player_info: PackedPlayer {
            flags: PlayerFlags::empty(),
            player_id: id,
            system_player_id: 0,
            player_version: 14,
            parent_id: 0,
            short_name: Some(WideString::new("w")),
            long_name: None,
            sp_data: Blob::default(),
            player_data: Blob::default(),
            player_ids: vec![0xBAD],
            size_counts_player_ids: false,
        },
        reserved: None,
    };
    // Node 2 (10.0.0.3) sends it with the SockAddr "0.0.0.0:2300": its listener.
    let bytes = Dp4Message::new(
        Token::FROM_REMOTE,
        SockAddrIn::new("0.0.0.0:2300".parse().unwrap()),
        14,
        Dp4Body::CreateGroup(info(0x0600_0001)),
    )
    .to_vec()
    .unwrap();
    let now = net.now;
    net.nodes[0].handle_tcp(now, 78, "10.0.0.3:40002".parse().unwrap(), &bytes).unwrap();
    let owner = net.nodes[2].system_player().unwrap();
    let g = &net.nodes[0].groups()[&0x0600_0001];
    assert_eq!((g.system_player_id, g.members.len()), (owner, 0));
    assert_eq!(net.nodes[0].stats().dropped(DropReason::UnknownPlayer), 1, "the unknown member");
    inject(&mut net, 1, Dp4Body::CreateGroup(info(0x0600_0002)));
    assert!(!net.nodes[1].groups().contains_key(&0x0600_0002), "SockAddr 0.0.0.0:0 names no instance");
    assert_eq!(net.nodes[1].stats().dropped(DropReason::UnknownPlayer), 1);
}

/// MC-DPL4CS 3.1.4.6, 2.2.50: a REQUESTPLAYERREPLY refusing our REQUESTGROUPID is reported with
/// its Result; a reply naming an ID already in use is refused too, and counted.
#[test]
fn refused_group_request() {
    use dplay_wire::dp4::join::{DPERR_NONEWPLAYERS, RequestPlayerReply};
    use dplay_wire::dp4::session::SecurityDesc;

    let mut net = session_of(2, |_| {});
    net.take(1);
    net.cut.insert((1, 0));
    let reply = |id, result| {
        Dp4Body::RequestPlayerReply(RequestPlayerReply {
            id,
            sec_desc: SecurityDesc::default(),
            result,
            sspi_provider: None,
            capi_provider: None,
        })
    };
    let refused = Dp4Event::Group(GroupEvent::CreateFailed(JoinError::Refused(DPERR_NONEWPLAYERS)));
    let now = net.now;
    net.nodes[1].create_group(now, "g").unwrap();
    inject(&mut net, 1, reply(0, DPERR_NONEWPLAYERS));
    assert_eq!(net.take(1), std::slice::from_ref(&refused));
    let me = net.nodes[1].system_player().unwrap();
    net.nodes[1].create_group(now, "g").unwrap();
    inject(&mut net, 1, reply(me, 0));
    assert_eq!(net.take(1), [refused]);
    assert_eq!(net.nodes[1].stats().dropped(DropReason::Unexpected), 1);
    assert!(net.nodes[1].groups().is_empty());
}

/// Issue 27 item 15 (MC-DPL4CS 3.1.5.23, 3.1.5.24, 2.2.13, 2.2.24, 2.2.53): groups in groups.
/// ADDSHORTCUTTOGROUP and DELETEGROUPFROMGROUP from a Windows peer are applied and reported,
/// and a later joiner gets the shortcut in SUPERENUMPLAYERSREPLY's shortcut entries.
#[test]
fn shortcuts_are_kept_reported_and_relayed() {
    use dplay_wire::dp4::nametable::GroupGroupIds;

    let mut net = super::net::session_in(4, 3, |_| {});
    let (outer, inner) = (group(&mut net, 1, "outer"), group(&mut net, 1, "inner"));
    (0..4).for_each(|i| drop(net.take(i)));
    let ids = GroupGroupIds { child_group_id: inner, parent_group_id: outer, ..GroupGroupIds::default() };
    inject(&mut net, 0, Dp4Body::AddShortcutToGroup(ids));
    let added = Dp4Event::Group(GroupEvent::ShortcutAdded { group: outer, child: inner });
    assert_eq!(net.take(0), [added]);
    net.join(3, None);
    assert!(net.trace().iter().any(|t| t == "0->3 Tcp DPSP_MSG_SUPERENUMPLAYERSREPLY"));
    assert!(net.nodes[3].groups()[&outer].shortcuts.contains(&inner), "relayed to the joiner");
    net.take(0);
    inject(&mut net, 0, Dp4Body::DeleteGroupFromGroup(ids));
    let removed = Dp4Event::Group(GroupEvent::ShortcutRemoved { group: outer, child: inner });
    assert_eq!(net.take(0), [removed]);
    assert!(net.nodes[0].groups()[&outer].shortcuts.is_empty());
}
