//! Groups between our own peers (MC-DPL8CS 2.2.1.4-2.2.1.6, 3.4.5.2): requests from members,
//! sends to a group, a late joiner's table, and a departing member's memberships.

use std::time::Duration;

use super::*;
use dplay_wire::dp8::dpnid::Dpnid;

use dplay_session::{SendFlags, TableChange};

/// MC-DPL8CS 3.4.5.2, 2.2.1.4: a member creates a group and adds itself and another member
/// through the host; a message to the group reaches its members only; a peer that joins later
/// gets the group and its memberships in DN_SEND_CONNECT_INFO; a member that leaves leaves
/// the group on every member (3.4.1).
#[test]
fn mc_dpl8cs_3_4_5_2_groups_between_peers() {
    let mut mesh = Mesh::new(77, 5, link(0.05), |_, _| {});
    mesh.host(0);
    for i in 1..4 {
        mesh.join(i, 0);
    }
    assert!(mesh.run_until_joined(&[1, 2, 3], Duration::from_secs(60)));
    let context = mesh.with(1, |s, now| s.create_group(now, "crew", b"x", false)).expect("create");
    mesh.sim.run_for(Duration::from_secs(2));
    assert!(events(&mesh, 1).contains(&Event::Completed { context, result: Ok(()) }));
    let group = session(&mesh, 1).name_table().groups().next().map(|g| g.dpnid).expect("the group");
    let (one, two) = (session(&mesh, 1).local_dpnid(), session(&mesh, 2).local_dpnid());
    for p in [one, two] {
        mesh.with(1, |s, now| s.add_to_group(now, group, p)).expect("add");
    }
    mesh.sim.run_for(Duration::from_secs(2));
    mesh.with(3, |s, now| s.send_to_group(now, group, b"to the crew", SendFlags::RELIABLE)).expect("send");
    mesh.sim.run_for(Duration::from_secs(2));
    let got = |mesh: &Mesh, i| {
        events(mesh, i).iter().any(|e| matches!(e, Event::Message { data, .. } if data == b"to the crew"))
    };
    assert!(got(&mesh, 1) && got(&mesh, 2) && !got(&mesh, 0), "members only");

    mesh.join(4, 0);
    assert!(mesh.run_until_joined(&[4], Duration::from_secs(60)));
    mesh.tables_agree(&[0, 1, 2, 3, 4]).expect("the joiner's table has the group");
    assert!(events(&mesh, 4).contains(&Event::NameTable(TableChange::MemberAdded { group, player: two })));

    mesh.with(2, |s, now| s.leave(now));
    mesh.sim.run_for(Duration::from_secs(10));
    for i in [0, 1, 3, 4] {
        assert_eq!(
            session(&mesh, i).name_table().group_members(group).collect::<Vec<_>>(),
            [one],
            "node {i}"
        );
        assert!(
            events(&mesh, i).contains(&Event::NameTable(TableChange::MemberRemoved { group, player: two }))
        );
    }
    mesh.tables_agree(&[0, 1, 3, 4]).expect("tables");
}

/// IDirectPlay8Peer::SendTo (DirectX 9 SDK): a send to a group the sender is a member of is
/// also delivered to the sender, from its own DPNID, unless DPNSEND_NOLOOPBACK; a group the
/// sender is not in is sent to its members only (MC-DPL8CS 3.4.5.2).
#[test]
fn group_send_loops_back_to_a_member_sender() {
    let mut mesh = Mesh::new(79, 3, link(0.0), |_, _| {});
    mesh.host(0);
    for i in [1, 2] {
        mesh.join(i, 0);
    }
    assert!(mesh.run_until_joined(&[1, 2], Duration::from_secs(10)));
    mesh.with(1, |s, now| s.create_group(now, "pair", b"", false)).expect("create");
    mesh.sim.run_for(Duration::from_secs(1));
    let group = session(&mesh, 1).name_table().groups().next().map(|g| g.dpnid).expect("the group");
    let (one, two) = (session(&mesh, 1).local_dpnid(), session(&mesh, 2).local_dpnid());
    for p in [one, two] {
        mesh.with(1, |s, now| s.add_to_group(now, group, p)).expect("add");
    }
    mesh.sim.run_for(Duration::from_secs(1));
    let received = |mesh: &Mesh, i: usize, what: &[u8]| -> Vec<Dpnid> {
        events(mesh, i)
            .iter()
            .filter_map(|e| match e {
                Event::Message { from, data, .. } if data == what => Some(*from),
                _ => None,
            })
            .collect()
    };
    mesh.with(1, |s, now| s.send_to_group(now, group, b"both", SendFlags::RELIABLE)).expect("send");
    let looped = mesh.with(1, |s, _| std::iter::from_fn(|| s.poll_event()).collect::<Vec<_>>());
    let back = Event::Message {
        from: one,
        data: b"both".to_vec(),
        reliable: true,
        sequential: false,
        process_token: None,
    };
    assert_eq!(looped, [back], "looped back at once");
    let quiet = SendFlags::RELIABLE.without_loopback();
    mesh.with(1, |s, now| s.send_to_group(now, group, b"not me", quiet)).expect("send");
    mesh.with(0, |s, now| s.send_to_group(now, group, b"from outside", SendFlags::RELIABLE)).expect("send");
    mesh.sim.run_for(Duration::from_secs(1));
    assert_eq!(received(&mesh, 2, b"both"), [one]);
    assert_eq!(received(&mesh, 2, b"not me"), [one]);
    assert_eq!(received(&mesh, 1, b"not me"), [], "DPNSEND_NOLOOPBACK");
    assert_eq!(received(&mesh, 1, b"both"), [], "delivered once, at the send");
    assert_eq!(received(&mesh, 0, b"from outside"), [], "the host is not a member");
    let host = session(&mesh, 0).local_dpnid();
    assert_eq!(received(&mesh, 1, b"from outside"), [host]);
}
