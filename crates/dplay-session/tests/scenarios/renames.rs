//! Renames obey the join limits (issue 25 item 2): DN_REQ_UPDATE_INFO (MC-DPL8CS 2.2.5.1,
//! 3.5.5.1) with a name over `max_name_units`, an empty player name or data over
//! `max_player_data` is refused as PLAYER_CONNECT_INFO would be (DPNERR_INVALIDPARAM).

use std::time::Duration;

use super::*;
use dplay_session::CommandError;

/// The host's name of node `i`'s player, as node `at` holds it.
fn name_of(mesh: &Mesh, at: usize, i: usize) -> Option<String> {
    let me = session(mesh, i).local_dpnid();
    session(mesh, at).name_table().get(me).and_then(|e| e.name.as_ref()).map(|n| n.to_string_lossy())
}

#[test]
fn renames_obey_the_join_limits() {
    // The member raised its own limits: only the host's check stands between it and the table.
    let mut mesh = Mesh::new(2501, 2, link(0.0), |i, c| {
        if i == 0 {
            c.limits.max_name_units = 16;
        } else {
            c.limits.max_name_units = 100_000;
        }
    });
    mesh.host(0);
    mesh.join(1, 0);
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(30)));
    let me = session(&mesh, 1).local_dpnid();
    let before = name_of(&mesh, 0, 1);
    let long = "x".repeat(100_000);
    for bad in [long.as_str(), ""] {
        let sent = mesh.with(1, |s, now| s.set_info(now, me, Some(bad), None));
        if bad.is_empty() {
            // An empty name is refused by the member's own check already.
            assert_eq!(sent, Err(CommandError::InvalidParam));
        } else {
            sent.expect("sent: the member's own limits allow it");
        }
        mesh.sim.run_for(Duration::from_secs(2));
        assert_eq!(name_of(&mesh, 0, 1), before, "the host took {bad:.20?}");
    }
    mesh.with(1, |s, now| s.set_info(now, me, Some("ace"), None)).expect("a good rename");
    mesh.sim.run_for(Duration::from_secs(2));
    assert_eq!(name_of(&mesh, 0, 1).as_deref(), Some("ace"));
    assert_eq!(name_of(&mesh, 1, 1).as_deref(), Some("ace"));

    // The host's own renames: refused at once with the join's code.
    let host = session(&mesh, 0).local_dpnid();
    for bad in ["x".repeat(17), String::new()] {
        let refused = mesh.with(0, |s, now| s.set_info(now, host, Some(&bad), None));
        assert_eq!(refused, Err(CommandError::InvalidParam), "{bad:.20?}");
    }
}
