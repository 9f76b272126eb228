use dplay_wire::WideString;
use dplay_wire::dp8::session::{DestroyPlayer, InstructConnect, NameTableEntryFlags};

use super::*;

/// The instance GUID of the MC-DPL8CS 4 example.
fn example_instance() -> Uuid {
    Uuid::from_bytes_le([
        0x23, 0x81, 0xBE, 0x94, 0xAB, 0xA1, 0xFB, 0x48, 0xA2, 0xE7, 0x23, 0x85, 0x9E, 0x65, 0x89, 0x36,
    ])
}

fn entry(name: &str, flags: NameTableEntryFlags) -> NameTableEntry {
    NameTableEntry {
        dpnid: Dpnid::NONE,
        dpnid_owner: Dpnid::NONE,
        flags,
        version: 0,
        version_not_used: 0,
        dnet_version: 7,
        name: Some(WideString::new(name)),
        data: Default::default(),
        url: None,
    }
}

/// A host table with the host and one joiner, as in MC-DPL8CS 4.
fn host_table() -> NameTable {
    let mut t = NameTable::new(example_instance());
    t.allocate(entry("host", NameTableEntryFlags::HOST | NameTableEntryFlags::PEER));
    t.allocate(entry("joiner", NameTableEntryFlags::PEER));
    t
}

/// MC-DPL8CS 2.2.7 and the section 4 example: the host is index 2 at version 2 (0x949E8121),
/// the joiner index 3 at version 3 (0x948E8120).
#[test]
fn mc_dpl8cs_2_2_7_dpnids_match_the_example() {
    let t = host_table();
    let ids: Vec<Dpnid> = t.players().map(|e| e.dpnid).collect();
    assert_eq!(ids, [Dpnid(0x948E_8120), Dpnid(0x949E_8121)]);
    assert_eq!(t.get(Dpnid(0x949E_8121)).map(|e| e.version), Some(2));
    assert_eq!(t.get(Dpnid(0x948E_8120)).map(|e| e.version), Some(3));
    assert_eq!(t.version(), 3);
}

/// MC-DPL8CS 2.2.6: every operation takes the next version; a destroy of an unknown player
/// changes nothing.
#[test]
fn mc_dpl8cs_2_2_6_version_grows_with_every_change() {
    let mut t = host_table();
    let joiner = Dpnid(0x948E_8120);
    assert_eq!(t.instruct(joiner).version, 4);
    let d = t.destroy(joiner, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL).expect("a player");
    assert_eq!(d.version, 5);
    assert!(t.destroy(joiner, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL).is_none());
    assert_eq!(t.version(), 5);
    // Indices are not reused: the next player is index 4, version 6.
    let next = t.allocate(entry("late", NameTableEntryFlags::PEER)).entry.dpnid;
    assert_eq!((next.index(&t.instance()), next.version(&t.instance())), (4, 6));
}

/// A member applies the host's operations in version order only (MC-DPL8CS 2.2.6); one that
/// names an unknown player still takes its version, so the table never stops there.
#[test]
fn apply_accepts_only_the_next_version() {
    let host = host_table();
    let mut member =
        NameTable::from_entries(host.instance(), host.version(), &host.wire_entries(), &host.memberships());
    assert_eq!(member.fingerprint(), host.fingerprint());
    let destroy = |version, dpnid| {
        NameTableOp::DestroyPlayer(DestroyPlayer {
            dpnid_leaving: dpnid,
            version,
            version_not_used: 0,
            destroy_reason: DestroyReason::DPNDESTROYPLAYERREASON_NORMAL,
        })
    };
    let joiner = Dpnid(0x948E_8120);
    assert_eq!(member.apply(&destroy(3, joiner)), Err(OpError::Version { expected: 4, got: 3 }));
    assert_eq!(member.apply(&destroy(5, joiner)), Err(OpError::Version { expected: 4, got: 5 }));
    assert_eq!(member.version(), 3);
    assert_eq!(member.apply(&destroy(4, Dpnid(0x1234))), Err(OpError::Dpnid(Dpnid(0x1234))));
    assert_eq!((member.version(), member.len()), (4, 2));
    assert_eq!(member.apply(&destroy(5, joiner)), Ok(()));
    assert_eq!(member.len(), 1);
    assert_eq!(member.ops_after(0), [destroy(4, Dpnid(0x1234)), destroy(5, joiner)]);
}

/// A duplicate ADD_PLAYER takes its version and changes nothing else.
#[test]
fn apply_ignores_a_duplicate_add() {
    let mut host = host_table();
    let mut member =
        NameTable::from_entries(host.instance(), host.version(), &host.wire_entries(), &host.memberships());
    let add = host.allocate(entry("third", NameTableEntryFlags::PEER));
    assert_eq!(member.apply(&NameTableOp::AddPlayer(add.clone())), Ok(()));
    let mut again = add;
    again.entry.version = 5;
    assert_eq!(member.apply(&NameTableOp::AddPlayer(again.clone())), Err(OpError::Dpnid(again.entry.dpnid)));
    assert_eq!((member.version(), member.len()), (5, 3));
}

/// A gap is crossed only by as many versions as operations of the host we could not read
/// (MC-DPL8CS 2.2.6; DN_CREATE_GROUP as printed has no version, INDEX F-15).
#[test]
fn apply_crosses_a_gap_left_by_unread_operations() {
    let host = host_table();
    let mut member =
        NameTable::from_entries(host.instance(), host.version(), &host.wire_entries(), &host.memberships());
    let joiner = Dpnid(0x948E_8120);
    let printed = NameTableOp::CreateGroup(dplay_wire::dp8::session::CreateGroup {
        dpnid_requesting: joiner,
        packet_context: 1,
        group: None,
        layout: Default::default(),
    });
    assert_eq!(member.apply(&printed), Err(OpError::Unversioned));
    member.note_unreadable();
    let instruct = |version| {
        NameTableOp::InstructConnect(InstructConnect { dpnid: joiner, version, version_not_used: 0 })
    };
    assert_eq!(member.apply(&instruct(6)), Err(OpError::Version { expected: 4, got: 6 }));
    assert_eq!(member.apply(&instruct(5)), Ok(()));
    assert_eq!(member.apply(&instruct(7)), Err(OpError::Version { expected: 6, got: 7 }));
}

/// Groups, memberships and information (MC-DPL8CS 2.2.4, 2.2.5): a departing player leaves
/// its groups; DN_SEND_CONNECT_INFO's entries and memberships rebuild the same table, host
/// first.
#[test]
fn groups_memberships_and_info() {
    use dplay_wire::dp8::session::{CreateGroup, GroupMember, InfoFlags, UpdateInfo};
    let mut t = host_table();
    let (host, joiner) = (Dpnid(0x949E_8121), Dpnid(0x948E_8120));
    let group = t.next_dpnid();
    let mut g = entry("team", NameTableEntryFlags::GROUP);
    g.dpnid = group;
    g.version = 4;
    g.dpnid_owner = joiner;
    let create = CreateGroup {
        dpnid_requesting: joiner,
        packet_context: 9,
        group: Some(g),
        layout: Default::default(),
    };
    assert_eq!(t.apply(&NameTableOp::CreateGroup(create)), Ok(()));
    let member = |version| GroupMember {
        dpnid_group: group,
        dpnid_player: joiner,
        version,
        version_not_used: 0,
        dpnid_requesting: joiner,
        packet_context: 10,
    };
    assert_eq!(t.apply(&NameTableOp::AddPlayerToGroup(member(5))), Ok(()));
    let update = UpdateInfo {
        packet_context: 11,
        dpnid: host,
        version: 6,
        version_not_used: 0,
        info_flags: InfoFlags::NAME,
        name: Some(WideString::new("renamed")),
        data: Default::default(),
        dpnid_requesting: host,
        layout: Default::default(),
    };
    assert_eq!(t.apply(&NameTableOp::UpdateInfo(update)), Ok(()));
    assert_eq!(t.get(host).and_then(|e| e.name.clone()), Some(WideString::new("renamed")));
    assert_eq!(t.group_members(group).collect::<Vec<_>>(), [joiner]);
    let entries = t.wire_entries();
    assert_eq!(entries.iter().map(|e| e.dpnid).collect::<Vec<_>>(), [host, joiner, group]);
    let copy = NameTable::from_entries(t.instance(), t.version(), &entries, &t.memberships());
    assert_eq!(copy.fingerprint(), t.fingerprint());
    assert_eq!(copy.next_dpnid().index(&t.instance()), 5);
    t.destroy(joiner, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL).expect("a player");
    assert_eq!(t.group_members(group).count(), 0);
    assert!(t.group(group).is_some());
}

/// The op log answers REQ_NAMETABLE_OP and is freed by RESYNC_VERSION (MC-DPL8CS 2.2.2.5,
/// 2.2.2.9).
#[test]
fn op_log_after_and_free() {
    let mut t = host_table();
    t.instruct(Dpnid(0x948E_8120));
    assert_eq!(t.ops_after(2).len(), 2);
    t.free_through(3);
    assert_eq!(t.ops_after(0).len(), 1);
}

/// The oldest player is the migration candidate (MC-DPL8CS 3.2.5.4); LOCAL never goes out.
#[test]
fn oldest_and_wire_entries() {
    let mut t = host_table();
    let host = Dpnid(0x949E_8121);
    assert_eq!(t.oldest(|_| false), Some(host));
    assert_eq!(t.oldest(|d| d == host), Some(Dpnid(0x948E_8120)));
    t.set_local(host);
    assert!(t.get(host).is_some_and(|e| e.flags.contains(NameTableEntryFlags::LOCAL)));
    assert!(t.wire_entries().iter().all(|e| !e.flags.contains(NameTableEntryFlags::LOCAL)));
    t.set_host(Dpnid(0x948E_8120));
    assert!(t.get(host).is_some_and(|e| !e.flags.contains(NameTableEntryFlags::HOST)));
}
