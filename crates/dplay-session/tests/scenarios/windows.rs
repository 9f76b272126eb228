//! Exchanges with a Windows-shaped peer ([`super::windows_peer`]) that sends every message as
//! MC-DPL8CS lays it out: the versioned name-table operations (2.2.6), the host's answers to
//! requests (2.2.4, 2.2.5, 3.4, 3.5), completions (2.2.3.2, 3.3) and the smaller rules of
//! issue 13 (MS-DPDX 2.2.15, 3.1.4.1; MC-DPL8CS 4).

use std::time::Duration;

use dplay_dframe::{Priority, SendOutcome, Tracked};
use dplay_spec_examples::mc_dpl8cs_4::{
    CONNECT_INFO_EX, HOST_DPNID, INSTANCE, JOINER_DPNID, SEND_CONNECT_INFO,
};
use dplay_wire::Wire;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;
use dplay_wire::dp8::session::{NameTableEntryFlags, SessionMessage};
use uuid::Uuid;

use super::windows_peer::{Msg, Net, create_group, hex, len32, update_info, wide};
use dplay_session::{CompletionError, Event, Mode, Phase, TableChange};
use dplay_testkit::sim_check::sim_addr;

const HOST: Dpnid = Dpnid(HOST_DPNID);
const JOINER: Dpnid = Dpnid(JOINER_DPNID);

/// The example joiner's PLAYER_CONNECT_INFO_EX with a zero `guidInstance` (allowed before an
/// enumeration, MC-DPL8CS 2.2.1.2) and `dwFlags` `flags`.
fn connect_info_ex(flags: u32) -> Vec<u8> {
    let mut b = hex(CONNECT_INFO_EX);
    b.splice(4..8, flags.to_le_bytes());
    b.splice(52..68, [0; 16]);
    b
}

fn dword(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b.get(at..at + 4).and_then(|s| s.try_into().ok()).expect("a DWORD"))
}

/// Node 1 (ours, a DXDiag peer) joins the Windows host at node 0, which answers with the
/// MC-DPL8CS 4 SEND_CONNECT_INFO and then DN_INSTRUCT_CONNECT (version 4).
fn joined_to_windows_host() -> Net {
    let mut net = Net::new(2, 0, |_, c| c.application_guid = DXDIAG_APPLICATION_GUID);
    net.with(1, |s, now| s.join(now, sim_addr(0), None)).expect("join");
    net.sim.run_for(Duration::from_millis(500));
    assert_eq!(net.peer().of_type(0xC1).len(), 1, "PLAYER_CONNECT_INFO");
    net.peer_send(1, &hex(SEND_CONNECT_INFO));
    assert_eq!(net.peer().of_type(0xC3).len(), 1, "ACK_CONNECT_INFO");
    net.peer_send(1, &Msg::new(0xC6).u32(JOINER.0).u32(4).u32(0).0);
    assert!(net.ours(1).session.is_joined());
    assert_eq!(net.ours(1).session.name_table().version(), 4);
    net
}

fn table_changes(net: &Net, i: usize) -> Vec<TableChange> {
    net.ours(i)
        .events
        .iter()
        .filter_map(|e| match e {
            Event::NameTable(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

/// MC-DPL8CS 2.2.6, 2.2.4.2, 2.2.4.4, 2.2.4.6, 2.2.4.8, 2.2.5.2, 2.2.1.7: a Windows host's
/// versioned operations are applied live, in version order; DN_CREATE_GROUP as printed (no
/// version, INDEX F-15) and an update of an unknown player do not stop the table, so the
/// DN_ADD_PLAYER that follows is applied and the member reports version 12 (2.2.2.4).
#[test]
fn mc_dpl8cs_2_2_6_windows_host_operations_in_version_order() {
    let mut net = joined_to_windows_host();
    let instance = Uuid::from_bytes_le(INSTANCE);
    let group = Dpnid::new(4, 5, &instance);
    let team = wide("Team");
    // DN_CREATE_GROUP v5.
    let create = create_group(0xD7, HOST, 0, group, 5, &team);
    net.peer_send(1, &create.0);
    // DN_ADD_PLAYER_TO_GROUP v6: dpnidGroup, dpnidPlayer, dwVersion, dwVersionNotUsed,
    // dpnidRequesting, dwPacketContext.
    net.peer_send(1, &Msg::new(0xD9).u32(group.0).u32(JOINER.0).u32(6).u32(0).u32(HOST.0).u32(0).0);
    // DN_UPDATE_INFO v7: dwPacketContext, dpnid, dwVersion, dwVersionNotUsed, dwInfoFlags
    // (NAME), name and data pairs, dpnidRequesting, then the name at offset 40.
    let renamed = wide("Host 2");
    let update = update_info(0xDB, 0, HOST, 7, Some(&renamed), None, HOST);
    net.peer_send(1, &update.0);
    // v8: DN_CREATE_GROUP exactly as MC-DPL8CS 2.2.4.2 prints it.
    net.peer_send(1, &Msg::new(0xD7).u32(HOST.0).u32(0).0);
    // DN_DELETE_PLAYER_FROM_GROUP v9, DN_DESTROY_GROUP v10.
    net.peer_send(1, &Msg::new(0xDA).u32(group.0).u32(JOINER.0).u32(9).u32(0).u32(HOST.0).u32(0).0);
    net.peer_send(1, &Msg::new(0xD8).u32(group.0).u32(10).u32(0).u32(HOST.0).u32(0).0);
    // DN_UPDATE_INFO v11 (DATA) of a player we do not hold.
    let unknown = update_info(0xDB, 0, Dpnid(0x1234_5678), 11, None, Some(&[1, 2, 3]), HOST);
    net.peer_send(1, &unknown.0);
    // DN_ADD_PLAYER v12: a DN_NAMETABLE_ENTRY_INFO, the name at offset 48.
    let late = Dpnid::new(5, 12, &instance);
    let name = wide("Late");
    let add = Msg::new(0xD0)
        .u32(late.0)
        .u32(0)
        .u32(0x100)
        .u32(12)
        .u32(0)
        .u32(8)
        .u32(48)
        .u32(len32(&name))
        .u32(0)
        .u32(0)
        .u32(0)
        .u32(0)
        .bytes(&name);
    net.peer_send(1, &add.0);

    let s = &net.ours(1).session;
    assert_eq!(s.name_table().version(), 12);
    assert!(s.name_table().contains(late), "the operation after the unreadable one applied");
    assert_eq!(s.name_table().groups().count(), 0);
    let host_name = s.name_table().get(HOST).and_then(|e| e.name.as_ref()).map(|n| n.to_string_lossy());
    assert_eq!(host_name.as_deref(), Some("Host 2"));
    assert_eq!(s.stats().bad_version, 0);
    assert_eq!(
        table_changes(&net, 1),
        [
            TableChange::GroupCreated { group, name: "Team".into(), requested_by: HOST },
            TableChange::MemberAdded { group, player: JOINER },
            TableChange::InfoUpdated { dpnid: HOST, group: false, name: Some("Host 2".into()), data: None },
            TableChange::MemberRemoved { group, player: JOINER },
            TableChange::GroupDestroyed { group },
        ]
    );
    let reported: Vec<u32> = net.peer().of_type(0xC9).iter().map(|b| dword(b, 4)).collect();
    assert_eq!(reported, [4, 12], "DN_NAMETABLE_VERSION at every multiple of 4 (MC-DPL8CS 2.2.6)");
}

/// MC-DPL8CS 2.2.5.1, 2.2.5.2, 3.5.5.1: our member's DN_REQ_UPDATE_INFO is laid out as the
/// diagram (fixed 28 bytes, data then name); the Windows host's DN_UPDATE_INFO echoing its
/// `dwPacketContext` with us as `dpnidRequesting` completes it.
#[test]
fn mc_dpl8cs_3_5_update_info_request_completes() {
    let mut net = joined_to_windows_host();
    let context = net.with(1, |s, now| s.set_info(now, JOINER, Some("Renamed"), None)).expect("set_info");
    net.sim.run_for(Duration::from_millis(200));
    let req = net.peer().of_type(0xD6).pop().expect("DN_REQ_UPDATE_INFO");
    let name = wide("Renamed");
    let expected =
        Msg::new(0xD6).u32(context).u32(JOINER.0).u32(1).u32(28).u32(len32(&name)).u32(0).u32(0).bytes(&name);
    assert_eq!(req, expected.0);
    assert!(
        !net.ours(1).events.iter().any(|e| matches!(e, Event::Completed { .. })),
        "not before the answer"
    );
    let answer = update_info(0xDB, context, JOINER, 5, Some(&name), None, JOINER);
    net.peer_send(1, &answer.0);
    assert!(net.ours(1).events.contains(&Event::Completed { context, result: Ok(()) }));
    let mine = net.ours(1).session.name_table().get(JOINER).and_then(|e| e.name.clone());
    assert_eq!(mine.map(|n| n.to_string_lossy()).as_deref(), Some("Renamed"));
}

/// MC-DPL8CS 2.2.3.2, 2.2.3.3, 3.3, 3.3.5.1: the Windows host's DN_REQ_PROCESS_COMPLETION is
/// delivered and answered with DN_PROCESS_COMPLETION carrying its context; our own send with
/// completion ends when the host answers, and fails when the connection drops first.
#[test]
fn mc_dpl8cs_3_3_process_completion_both_ways() {
    let mut net = joined_to_windows_host();
    net.peer_send(1, &Msg::new(0xE0).u32(0xABCD_0001).bytes(b"ping").0);
    let delivered = Event::Message {
        from: HOST,
        data: b"ping".to_vec(),
        reliable: true,
        sequential: true,
        process_token: None,
    };
    assert!(net.ours(1).events.contains(&delivered));
    assert_eq!(net.peer().of_type(0xE1), [Msg::new(0xE1).u32(0xABCD_0001).0]);

    let first = net.with(1, |s, now| s.send_with_completion(now, HOST, b"data")).expect("send");
    net.sim.run_for(Duration::from_millis(200));
    assert_eq!(net.peer().of_type(0xE0), [Msg::new(0xE0).u32(first).bytes(b"data").0]);
    net.peer_send(1, &Msg::new(0xE1).u32(first).0);
    assert!(net.ours(1).events.contains(&Event::Completed { context: first, result: Ok(()) }));

    let second = net.with(1, |s, now| s.send_with_completion(now, HOST, b"more")).expect("send");
    let windows = net.ids[0];
    net.sim.isolate(windows);
    net.sim.run_for(Duration::from_secs(120));
    let failed = Event::Completed { context: second, result: Err(CompletionError::ConnectionLost) };
    assert!(net.ours(1).events.contains(&failed), "{:?}", net.ours(1).events);
}

/// A tracked send with completion puts the same DN_REQ_PROCESS_COMPLETION on the wire
/// (MC-DPL8CS 2.2.3.2): the transport reports it acknowledged, and it ends only with the
/// peer's DN_PROCESS_COMPLETION. A context given up is no longer answered.
#[test]
fn mc_dpl8cs_3_3_tracked_send_with_completion() {
    let mut net = joined_to_windows_host();
    let track = Tracked { id: 77, priority: Priority::Normal, expires: None };
    let context =
        net.with(1, |s, now| s.send_with_completion_tracked(now, HOST, b"data", track)).expect("send");
    net.sim.run_for(Duration::from_millis(200));
    assert_eq!(net.peer().of_type(0xE0), [Msg::new(0xE0).u32(context).bytes(b"data").0]);
    let acked = |e: &Event| matches!(e, Event::SendDone { id: 77, outcome: SendOutcome::Acknowledged, .. });
    assert!(net.ours(1).events.iter().any(acked), "{:?}", net.ours(1).events);
    let done = Event::Completed { context, result: Ok(()) };
    assert!(!net.ours(1).events.contains(&done));
    net.peer_send(1, &Msg::new(0xE1).u32(context).0);
    assert!(net.ours(1).events.contains(&done));

    let given_up = net.with(1, |s, now| s.send_with_completion(now, HOST, b"more")).expect("send");
    assert!(net.with(1, |s, _| s.abandon_completion(given_up)));
    net.peer_send(1, &Msg::new(0xE1).u32(given_up).0);
    assert!(
        !net.ours(1)
            .events
            .iter()
            .any(|e| matches!(e, Event::Completed { context, .. } if *context == given_up))
    );
}

/// Node 0 hosts (ours, DXDiag's application), node 2 (ours) joins, then the Windows peer at
/// node 1 joins with the MC-DPL8CS 4 PLAYER_CONNECT_INFO_EX and acknowledges.
fn windows_joins_our_host(mode: Mode) -> (Net, Dpnid) {
    let mut net = Net::new(3, 1, |_, c| {
        c.application_guid = DXDIAG_APPLICATION_GUID;
        c.mode = mode;
    });
    net.with(0, |s, now| s.host(now)).expect("host");
    net.with(2, |s, now| s.join(now, sim_addr(0), None)).expect("join");
    net.sim.run_for(Duration::from_secs(2));
    assert!(net.ours(2).session.is_joined());
    net.peer_connect(0);
    let flags = if mode == Mode::ClientServer { 2 } else { 4 };
    net.peer_send(0, &connect_info_ex(flags));
    let welcome = net.peer().of_type(0xC2).pop().expect("DN_SEND_CONNECT_INFO");
    let Ok(SessionMessage::SendConnectInfo(info)) = SessionMessage::parse(&welcome) else {
        panic!("{welcome:?}")
    };
    net.peer_send(0, &Msg::new(0xC3).0);
    net.sim.run_for(Duration::from_secs(1));
    (net, info.dpnid)
}

/// MC-DPL8CS 2.2.4, 3.4.5.2, 2.2.5, 3.5.5.1: our host answers each DN_REQ_* of a Windows peer
/// (laid out as the diagrams: fixed part, then data, then name) with the operation at the next
/// version to every member, echoing `dwPacketContext` and naming the requester; invalid
/// requests are ignored (3.4); DPNGROUP_AUTODESTRUCT removes the emptied group.
#[test]
fn mc_dpl8cs_3_4_host_answers_windows_requests() {
    let (mut net, me) = windows_joins_our_host(Mode::PeerToPeer);
    let host = net.ours(0).session.local_dpnid();
    let v0 = net.ours(0).session.name_table().version();
    let blue = wide("Blue");
    // DN_REQ_CREATE_GROUP: dwPacketContext, dwGroupFlags (AUTODESTRUCT), dwInfoFlags
    // (NAME | DATA), name pair, data pair, then data at 28 and the name after it.
    let req = Msg::new(0xD2)
        .u32(0x11)
        .u32(1)
        .u32(3)
        .u32(30)
        .u32(len32(&blue))
        .u32(28)
        .u32(2)
        .bytes(&[7, 7])
        .bytes(&blue);
    net.peer_send(0, &req.0);
    let created = net.peer().of_type(0xD7).pop().expect("DN_CREATE_GROUP");
    assert_eq!((dword(&created, 4), dword(&created, 8)), (me.0, 0x11), "dpnidRequesting, dwPacketContext");
    let Ok(SessionMessage::CreateGroup(c)) = SessionMessage::parse(&created) else { panic!() };
    let g = c.group.expect("the group's entry");
    assert_eq!((g.version, g.dpnid_owner), (v0 + 1, me));
    assert_eq!(g.flags, NameTableEntryFlags::GROUP | NameTableEntryFlags::GROUP_AUTODESTRUCT);
    assert_eq!(g.data.0, [7, 7]);
    let group = g.dpnid;

    net.peer_send(0, &Msg::new(0xD3).u32(0x12).u32(group.0).u32(me.0).0);
    let added = net.peer().of_type(0xD9).pop().expect("DN_ADD_PLAYER_TO_GROUP");
    assert_eq!(added, Msg::new(0xD9).u32(group.0).u32(me.0).u32(v0 + 2).u32(0).u32(me.0).u32(0x12).0);

    let name = wide("Win");
    let update =
        Msg::new(0xD6).u32(0x13).u32(me.0).u32(1).u32(28).u32(len32(&name)).u32(0).u32(0).bytes(&name);
    net.peer_send(0, &update.0);
    let updated = net.peer().of_type(0xDB).pop().expect("DN_UPDATE_INFO");
    let echo = update_info(0xDB, 0x13, me, v0 + 3, Some(&name), None, me);
    assert_eq!(updated, echo.0);

    // Invalid: another player's information, an unknown group. Ignored, counted.
    let wrong =
        Msg::new(0xD6).u32(0x14).u32(host.0).u32(1).u32(28).u32(len32(&name)).u32(0).u32(0).bytes(&name);
    net.peer_send(0, &wrong.0);
    net.peer_send(0, &Msg::new(0xD5).u32(0x15).u32(0x0BAD_0BAD).u32(me.0).0);
    assert_eq!(net.peer().of_type(0xDB).len(), 1);
    assert!(net.peer().of_type(0xD8).is_empty());

    net.peer_send(0, &Msg::new(0xD4).u32(0x16).u32(group.0).u32(me.0).0);
    let removed = net.peer().of_type(0xDA).pop().expect("DN_DELETE_PLAYER_FROM_GROUP");
    assert_eq!(removed, Msg::new(0xDA).u32(group.0).u32(me.0).u32(v0 + 4).u32(0).u32(me.0).u32(0x16).0);
    let destroyed = net.peer().of_type(0xD8).pop().expect("DN_DESTROY_GROUP (autodestruct)");
    assert_eq!(destroyed, Msg::new(0xD8).u32(group.0).u32(v0 + 5).u32(0).u32(host.0).u32(0).0);

    let (ours, other) = (&net.ours(0).session, &net.ours(2).session);
    assert_eq!(ours.name_table().version(), v0 + 5);
    assert_eq!(ours.name_table().fingerprint(), other.name_table().fingerprint(), "our member agrees");
    assert!(ours.stats().wrong_role + ours.stats().unknown_dpnid >= 2);
    assert!(table_changes(&net, 2).contains(&TableChange::InfoUpdated {
        dpnid: me,
        group: false,
        name: Some("Win".into()),
        data: None
    }));
}

/// MC-DPL8CS 3.5.1, 3.4.5.1: a Windows client's DN_REQ_UPDATE_INFO is answered by our server
/// with DN_UPDATE_INFO to that client; a group request from a client is ignored (no group
/// transactions on the wire in client/server).
#[test]
fn mc_dpl8cs_3_5_client_server_update_info() {
    let (mut net, me) = windows_joins_our_host(Mode::ClientServer);
    let name = wide("Client");
    let update =
        Msg::new(0xD6).u32(0x21).u32(me.0).u32(1).u32(28).u32(len32(&name)).u32(0).u32(0).bytes(&name);
    net.peer_send(0, &update.0);
    let answer = net.peer().of_type(0xDB).pop().expect("DN_UPDATE_INFO");
    assert_eq!((dword(&answer, 4), dword(&answer, 8), dword(&answer, 40)), (0x21, me.0, me.0));
    assert!(table_changes(&net, 2).is_empty(), "another client hears nothing of it");
    let blue = wide("Blue");
    let req = Msg::new(0xD2).u32(0x22).u32(0).u32(1).u32(28).u32(len32(&blue)).u32(0).u32(0).bytes(&blue);
    net.peer_send(0, &req.0);
    assert!(net.peer().of_type(0xD7).is_empty());
    assert_eq!(net.ours(0).session.name_table().groups().count(), 0);
}

/// MC-DPL8CS 2.2.1.4 and 4 (issue 13 item 9): SEND_CONNECT_INFO lists the host first, then the
/// players oldest first, and packs its variable fields as the example does (so it parses with
/// no recorded layout); MS-DPDX 3.1.4.1: our DXDiag chat is sequential and not reliable.
#[test]
fn send_connect_info_host_first_and_chat_unreliable() {
    let (mut net, me) = windows_joins_our_host(Mode::PeerToPeer);
    let welcome = net.peer().of_type(0xC2).pop().expect("DN_SEND_CONNECT_INFO");
    let Ok(SessionMessage::SendConnectInfo(info)) = SessionMessage::parse(&welcome) else { panic!() };
    let order: Vec<Dpnid> = info.entries.iter().map(|e| e.dpnid).collect();
    let host = net.ours(0).session.local_dpnid();
    assert_eq!(order, [host, net.ours(2).session.local_dpnid(), me]);
    assert!(info.entries.first().is_some_and(|e| e.flags.contains(NameTableEntryFlags::HOST)));
    assert_eq!(info.layout, Default::default(), "packed as MC-DPL8CS 4 packs it");
    net.with(0, |s, now| s.send_chat(now, "HI THERE")).expect("chat");
    net.sim.run_for(Duration::from_millis(200));
    let chat = net.peer().app.last().cloned().expect("the chat");
    assert_eq!((chat.1.len(), chat.2, chat.3), (402, false, true), "402 bytes, not reliable, sequential");
}

/// MS-DPDX 2.2.15 (issue 13 item 9): whatever the cause (graceful leave, lost connection,
/// removal, a joiner an existing peer could not reach, the old host after a migration), a
/// DN_DESTROY_PLAYER carries NORMAL or HOSTDESTROYEDPLAYER only. Here: the Windows peer's
/// connection to our host is cut.
#[test]
fn ms_dpdx_2_2_15_a_lost_member_is_normal() {
    let (mut net, me) = windows_joins_our_host(Mode::PeerToPeer);
    let windows = net.ids[1];
    net.sim.isolate(windows);
    net.sim.run_for(Duration::from_secs(120));
    // Node 2 hears the wire's NORMAL; our host (node 0) tells its own application what
    // happened, CONNECTIONLOST (issue 25 item 6).
    use dplay_wire::dp8::session::DestroyReason as R;
    for (i, heard) in [(0, R::DPNDESTROYPLAYERREASON_CONNECTIONLOST), (2, R::DPNDESTROYPLAYERREASON_NORMAL)] {
        let reasons: Vec<_> = net
            .ours(i)
            .events
            .iter()
            .filter_map(|e| match e {
                Event::PlayerRemoved { dpnid, reason } if *dpnid == me => Some(*reason),
                _ => None,
            })
            .collect();
        assert_eq!(reasons, [heard], "node {i}");
    }
    assert_eq!(net.ours(0).session.phase(), Phase::Host);
}

/// MC-DPL8CS 2.2.2.9, 2.2.2.10, 2.2.6, 3.2.5.4: our host leaves; our oldest peer (node 2)
/// takes over and hears from the Windows peer that it is two operations ahead. It asks with
/// DN_REQ_NAMETABLE_OP, and the Windows peer's DN_ACK_NAMETABLE_OP (dwNumEntries, then
/// {dwMsgId, dwOpOffset, dwOpSize} records, then each operation's body, INDEX F-16) carries a
/// DN_CREATE_GROUP and a DN_UPDATE_INFO of that group: both are applied, in version order.
#[test]
fn mc_dpl8cs_2_2_2_10_group_operations_in_a_migration_replay() {
    let (mut net, me) = windows_joins_our_host(Mode::PeerToPeer);
    assert!(net.peer().connected.contains(&sim_addr(2)), "our older peer connected to the Windows peer");
    let v = net.ours(2).session.name_table().version();
    net.with(0, |s, now| s.leave(now));
    net.sim.run_for(Duration::from_secs(2));
    let migrate = net.peer().of_type(0xCD).pop().expect("DN_HOST_MIGRATE");
    let new_host = net.ours(2).session.local_dpnid();
    assert_eq!(dword(&migrate, 8), new_host.0);
    net.peer_send(2, &Msg::new(0xC9).u32(v + 2).u32(0).0);
    let req = net.peer().of_type(0xCB).pop().expect("DN_REQ_NAMETABLE_OP");
    assert_eq!(req, Msg::new(0xCB).u32(v).u32(0).0);

    let group = Dpnid::new(9, v + 1, &net.ours(2).session.name_table().instance());
    let name = wide("Red");
    let create = create_group(0, me, 5, group, v + 1, &name);
    let create = create.0.get(4..).expect("the op body").to_vec();
    let update = update_info(0, 6, group, v + 2, None, Some(&[9]), me);
    let update = update.0.get(4..).expect("the op body").to_vec();
    let first = 4 + 2 * 12_u32;
    let ack = Msg::new(0xCC)
        .u32(2)
        .u32(0xD7)
        .u32(first)
        .u32(len32(&create))
        .u32(0xDB)
        .u32(first + len32(&create))
        .u32(len32(&update))
        .bytes(&create)
        .bytes(&update);
    net.peer_send(2, &ack.0);
    net.sim.run_for(Duration::from_secs(2));

    let s = &net.ours(2).session;
    assert_eq!(s.phase(), Phase::Host);
    let g = s.name_table().group(group).expect("the replayed group");
    assert_eq!(
        (g.name.as_ref().map(|n| n.to_string_lossy()), g.data.0.clone()),
        (Some("Red".into()), vec![9])
    );
    assert_eq!(s.name_table().version(), v + 3, "then the old host's DN_DESTROY_PLAYER");
    assert!(table_changes(&net, 2).contains(&TableChange::GroupCreated {
        group,
        name: "Red".into(),
        requested_by: me
    }));
    assert!(net.peer().of_type(0xCE).len() == 1, "DN_HOST_MIGRATE_COMPLETE");
}
