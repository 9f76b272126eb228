use dplay_wire::WideString;
use dplay_wire::dp8::session::{DestroyPlayer, NameTableEntryFlags};

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

/// A member applies the host's operations in version order only (MC-DPL8CS 2.2.6).
#[test]
fn apply_accepts_only_the_next_version() {
    let host = host_table();
    let mut member = NameTable::from_entries(host.instance(), host.version(), &host.wire_entries());
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
    assert_eq!(member.apply(&destroy(4, Dpnid(0x1234))), Err(OpError::Dpnid(Dpnid(0x1234))));
    assert_eq!(member.version(), 3);
    assert_eq!(member.apply(&destroy(4, joiner)), Ok(()));
    assert_eq!(member.len(), 1);
    assert_eq!(member.ops_after(0), [destroy(4, joiner)]);
}

/// A duplicate ADD_PLAYER is refused.
#[test]
fn apply_refuses_a_duplicate_add() {
    let mut host = host_table();
    let mut member = NameTable::from_entries(host.instance(), host.version(), &host.wire_entries());
    let add = host.allocate(entry("third", NameTableEntryFlags::PEER));
    assert_eq!(member.apply(&NameTableOp::AddPlayer(add.clone())), Ok(()));
    let mut again = add;
    again.entry.version = 5;
    assert_eq!(member.apply(&NameTableOp::AddPlayer(again.clone())), Err(OpError::Dpnid(again.entry.dpnid)));
    assert_eq!(member.fingerprint(), host.fingerprint());
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
