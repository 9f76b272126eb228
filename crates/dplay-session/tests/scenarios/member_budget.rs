//! A member's memory budget against a Windows-shaped hostile host (issue 14; docs/limits.md):
//! a name table that would take what the member holds past `Limits::memory_budget`, whole in
//! DN_SEND_CONNECT_INFO (MC-DPL8CS 2.2.1.4) or grown by a flood of DN_ADD_PLAYER (2.2.6), ends
//! the member's session with DPNERR_OUTOFMEMORY instead of growing. The host's messages are
//! laid out by hand as the spec draws them.

use std::time::Duration;

use dplay_spec_examples::mc_dpl8cs_4::{INSTANCE, JOINER_DPNID, SEND_CONNECT_INFO};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;
use uuid::Uuid;

use super::windows_peer::{Msg, Net, hex, len32, wide};
use dplay_session::{EndReason, Event, Phase};
use dplay_testkit::sim_check::sim_addr;

/// NAMETABLE_ENTRY_FLAG_PEER, and with NAMETABLE_ENTRY_FLAG_HOST (MC-DPL8CS 2.2.1.5).
const PEER: u32 = 0x100;
const HOST_PEER: u32 = 0x102;

/// Node 1 (ours, budget `budget` bytes) joins the Windows host at node 0; the network settles
/// until the host has our PLAYER_CONNECT_INFO.
fn joining(budget: usize) -> Net {
    let mut net = Net::new(2, 0, |_, c| {
        c.application_guid = DXDIAG_APPLICATION_GUID;
        c.limits.memory_budget = budget;
    });
    net.with(1, |s, now| s.join(now, sim_addr(0), None)).expect("join");
    net.sim.run_for(Duration::from_millis(500));
    assert_eq!(net.peer().of_type(0xC1).len(), 1, "PLAYER_CONNECT_INFO");
    net
}

fn ended(net: &Net) -> Option<EndReason> {
    net.ours(1).events.iter().find_map(|e| match e {
        Event::SessionEnded { reason } => Some(*reason),
        _ => None,
    })
}

/// A DN_NAMETABLE_ENTRY_INFO without name, data or URL (MC-DPL8CS 2.2.1.5): dpnid,
/// dpnidOwner, dwFlags, dwVersion, dwVersionNotUsed, dwDNETVersion 8, and three zero
/// offset/size pairs.
fn bare_entry(m: Msg, dpnid: Dpnid, flags: u32, version: u32) -> Msg {
    m.u32(dpnid.0).u32(0).u32(flags).u32(version).u32(0).u32(8).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0)
}

/// MC-DPL8CS 2.2.1.4: a DN_SEND_CONNECT_INFO of 1,000 entries (a 48,112-byte message, within
/// the 1 MiB a member reassembles) is a table of 128,000 bytes as the budget counts it; a
/// member with a 96 KiB budget leaves with DPNERR_OUTOFMEMORY, never acknowledges it and never
/// holds it.
#[test]
fn mc_dpl8cs_2_2_1_4_a_name_table_over_the_budget_ends_the_join() {
    const ENTRIES: u32 = 1000;
    let budget = 96 << 10;
    let mut net = joining(budget);
    let instance = Uuid::from_bytes_le(INSTANCE);
    let host = Dpnid::new(2, 2, &instance);
    let joiner = Dpnid::new(ENTRIES + 1, ENTRIES + 1, &instance);
    // dwPacketType, dwReplyOffset/Size 0, dwSize 0x50 (dwSize through guidApplication),
    // dwFlags MIGRATE_HOST, dwMaxPlayers 0, dwCurrentPlayers, the session name, password,
    // reserved and application reserved pairs all 0, guidInstance, guidApplication, dpnid,
    // dwVersion, dwVersionNotUsed, dwEntryCount, dwMembershipCount 0, then the entries.
    let mut m = Msg::new(0xC2).u32(0).u32(0).u32(0x50).u32(4).u32(0).u32(ENTRIES);
    for _ in 0..8 {
        m = m.u32(0);
    }
    m = m.bytes(&INSTANCE).bytes(&DXDIAG_APPLICATION_GUID.to_bytes_le());
    m = m.u32(joiner.0).u32(ENTRIES + 1).u32(0).u32(ENTRIES).u32(0);
    m = bare_entry(m, host, HOST_PEER, 2);
    for i in 3..=ENTRIES {
        m = bare_entry(m, Dpnid::new(i, i, &instance), PEER, i);
    }
    m = bare_entry(m, joiner, PEER, ENTRIES + 1);
    assert_eq!(m.0.len(), 112 + 48 * ENTRIES as usize);
    net.peer_send(1, &m.0);
    net.sim.run_for(Duration::from_secs(1));

    let s = &net.ours(1).session;
    assert_eq!(ended(&net), Some(EndReason::OutOfMemory));
    assert_eq!(s.phase(), Phase::Ended);
    assert!(s.name_table().is_empty(), "the table was not kept");
    assert!(net.peer().of_type(0xC3).is_empty(), "no ACK_CONNECT_INFO");
    let b = s.memory_budget();
    assert!(b.peak() <= budget, "peak {} over {budget}", b.peak());
    assert_eq!(
        EndReason::OutOfMemory.to_string(),
        "DPNERR_OUTOFMEMORY: the host's name table is over our memory budget"
    );
}

/// MC-DPL8CS 2.2.6: after the MC-DPL8CS 4 SEND_CONNECT_INFO, the host sends DN_ADD_PLAYER
/// after DN_ADD_PLAYER (a 200-character name each, about 1 KiB counted twice). The member
/// applies those that fit in its 16 KiB budget and leaves with DPNERR_OUTOFMEMORY at the first
/// that does not; what it holds never passes the budget, and its connection to the host ends.
#[test]
fn mc_dpl8cs_2_2_6_an_add_player_flood_ends_the_session() {
    let budget = 16 << 10;
    let mut net = joining(budget);
    net.peer_send(1, &hex(SEND_CONNECT_INFO));
    assert_eq!(net.peer().of_type(0xC3).len(), 1, "ACK_CONNECT_INFO");
    net.peer_send(1, &Msg::new(0xC6).u32(JOINER_DPNID).u32(4).u32(0).0);
    assert!(net.ours(1).session.is_joined());
    let instance = Uuid::from_bytes_le(INSTANCE);
    let name = wide(&"w".repeat(200));
    let mut sent = 0;
    for version in 5..105u32 {
        // DN_ADD_PLAYER: a DN_NAMETABLE_ENTRY_INFO, the name at offset 48.
        let add = Msg::new(0xD0)
            .u32(Dpnid::new(version, version, &instance).0)
            .u32(0)
            .u32(PEER)
            .u32(version)
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
        sent += 1;
        let held = net.ours(1).session.memory_budget().held();
        assert!(held <= budget, "{held} held after {sent} ADD_PLAYERs");
        if ended(&net).is_some() {
            break;
        }
    }
    net.sim.run_for(Duration::from_secs(2));
    let s = &net.ours(1).session;
    assert_eq!(ended(&net), Some(EndReason::OutOfMemory));
    let players = s.name_table().len();
    assert!((5..20).contains(&sent), "left after {sent} ADD_PLAYERs");
    assert_eq!(players, 2 + sent - 1, "every ADD_PLAYER but the last applied");
    assert!(s.memory_budget().peak() <= budget);
    assert!(!s.endpoint().is_connected(sim_addr(0)), "the connection to the host ended");
}

/// docs/limits.md: a member whose acknowledgements never reach the host falls behind; the
/// host's application data for it fills the host's 256 KiB budget, byte for byte, and is
/// then refused, and the
/// first session message the host cannot queue for it (its DN_UPDATE_INFO, MC-DPL8CS 2.2.5.2)
/// ends its connection: it is removed at once rather than left missing name-table operations,
/// and what the host held for it is released.
#[test]
fn a_member_too_far_behind_for_a_session_message_is_dropped() {
    let budget = 256 << 10;
    let mut mesh = dplay_testkit::sim_check::Mesh::new(5, 2, dplay_sim::LinkConfig::clean(), |i, c| {
        if i == 0 {
            c.limits.memory_budget = budget;
        }
    });
    mesh.host(0);
    mesh.join(1, 0);
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(10)));
    let (host, member) = (mesh.node(0).session.local_dpnid(), mesh.node(1).session.local_dpnid());
    mesh.sim.set_link_oneway(mesh.ids[1], mesh.ids[0], dplay_sim::LinkConfig::lossy(1.0));
    let flags = dplay_session::SendFlags { reliable: true, ..Default::default() };
    // Smaller and smaller messages until even one byte is refused: the budget is full.
    for size in [10_000, 1_000, 100, 10, 1] {
        let mut sent = 0;
        while mesh.with(0, |s, now| s.send_to(now, member, &vec![3; size], flags)).is_ok() {
            sent += 1;
            assert!(sent < 100, "never refused");
        }
    }
    assert_eq!(mesh.node(0).session.memory_budget().held(), budget);
    mesh.with(0, |s, now| s.set_info(now, host, Some("renamed"), None)).expect("set_info");
    mesh.sim.run_for(Duration::from_millis(100));
    let removed = mesh
        .node(0)
        .events
        .iter()
        .any(|e| matches!(e, Event::PlayerRemoved { dpnid, .. } if *dpnid == member));
    assert!(removed, "the member was not removed");
    assert!(mesh.node(0).session.memory_budget().held() < 10_000, "what it held is released");
}
