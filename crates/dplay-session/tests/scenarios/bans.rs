//! Bans (issue 17; docs/decisions.md, "Bans"): a banned name or address is refused at join with
//! DN_CONNECT_FAILED and DPNERR_HOSTREJECTEDCONNECTION (MC-DPL8CS 2.2.1.3), and live limits
//! apply to the joins that follow.

use std::time::Duration;

use super::*;
use dplay_session::{Bans, DPNERR_HOSTREJECTEDCONNECTION, DPNERR_SESSIONFULL, EndReason};

fn refused_with(mesh: &Mesh, i: usize) -> Option<EndReason> {
    events(mesh, i).iter().find_map(|e| match e {
        Event::SessionEnded { reason } => Some(*reason),
        _ => None,
    })
}

/// A banned name (any case) and a banned address are refused with the code; others join.
#[test]
fn banned_names_and_addresses_are_refused_with_hostrejectedconnection() {
    let mut mesh = Mesh::new(91, 4, link(0.0), |i, cfg| {
        if i == 1 {
            cfg.player_name = "Mallory".into();
        }
    });
    mesh.host(0);
    let mut bans = Bans::new();
    bans.ban_name("MALLORY").unwrap();
    bans.ban_address(sim_addr(2).ip()).unwrap();
    mesh.with(0, |s, _| s.set_bans(bans));
    for i in 1..4 {
        mesh.join(i, 0);
    }
    mesh.sim.run_for(Duration::from_secs(3));
    let refused = Some(EndReason::Refused(DPNERR_HOSTREJECTEDCONNECTION));
    assert_eq!(refused_with(&mesh, 1), refused, "banned name");
    assert_eq!(refused_with(&mesh, 2), refused, "banned address");
    assert!(events(&mesh, 3).iter().any(|e| matches!(e, Event::Joined { .. })), "player3 joins");
    assert_eq!(session(&mesh, 0).name_table().len(), 2);
    assert_eq!(session(&mesh, 0).stats().refused_banned, 2);
    // The host reports each refusal: who, by address and name, and the code.
    let refusals: Vec<(std::net::SocketAddr, Option<String>)> = events(&mesh, 0)
        .iter()
        .filter_map(|e| match e {
            Event::JoinRefused { from, name, code: DPNERR_HOSTREJECTEDCONNECTION } => {
                Some((*from, name.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    assert!(
        refusals
            .iter()
            .any(|(from, name)| from.ip() == sim_addr(1).ip() && name.as_deref() == Some("Mallory"))
    );
    assert!(refusals.iter().any(|(from, _)| from.ip() == sim_addr(2).ip()));
    assert_eq!(
        EndReason::Refused(DPNERR_HOSTREJECTEDCONNECTION).to_string(),
        "the host refused the join with DPNERR_HOSTREJECTEDCONNECTION"
    );
}

/// Lifting a ban lets the next join with that name in, on the same host.
#[test]
fn an_unbanned_name_joins_again() {
    let mut mesh = Mesh::new(92, 3, link(0.0), |i, cfg| cfg.player_name = format!("player{}", i.min(1)));
    mesh.host(0);
    let mut bans = Bans::new();
    bans.ban_name("player1").unwrap();
    mesh.with(0, |s, _| s.set_bans(bans.clone()));
    mesh.join(1, 0);
    mesh.sim.run_for(Duration::from_secs(3));
    assert_eq!(refused_with(&mesh, 1), Some(EndReason::Refused(DPNERR_HOSTREJECTEDCONNECTION)));
    assert!(bans.unban_name("PLAYER1"));
    mesh.with(0, |s, _| s.set_bans(bans));
    assert!(mesh.with(0, |s, _| s.bans().is_empty()));
    mesh.join(2, 0);
    assert!(mesh.run_until_joined(&[2], Duration::from_secs(3)), "the same name, unbanned, joins");
}

/// A live max-players change refuses the next join with DPNERR_SESSIONFULL and shows in the
/// EnumResponse; a live password is required from the next join on (MC-DPL8CS 3.1.5.1).
#[test]
fn live_limits_apply_to_the_next_join() {
    let mut mesh = Mesh::new(94, 3, link(0.0), |_, _| {});
    mesh.host(0);
    mesh.join(1, 0);
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(3)));
    mesh.with(0, |s, _| s.set_max_players(2)).unwrap();
    mesh.join(2, 0);
    mesh.sim.run_for(Duration::from_secs(3));
    assert_eq!(refused_with(&mesh, 2), Some(EndReason::Refused(DPNERR_SESSIONFULL)));

    let mut mesh = Mesh::new(95, 2, link(0.0), |_, _| {});
    mesh.host(0);
    mesh.with(0, |s, _| s.set_password(Some("secret".into()))).unwrap();
    mesh.join(1, 0);
    mesh.sim.run_for(Duration::from_secs(3));
    let wrong = EndReason::Refused(dplay_wire::dp8::session::ResultCode::DPNERR_INVALIDPASSWORD);
    assert_eq!(refused_with(&mesh, 1), Some(wrong));
    let code = dplay_wire::dp8::session::ResultCode::DPNERR_INVALIDPASSWORD;
    assert!(
        events(&mesh, 0).iter().any(|e| matches!(e, Event::JoinRefused { code: c, .. } if *c == code)),
        "the host reports the wrong password"
    );
    assert_eq!(mesh.with(1, |s, _| s.set_max_players(3)), Err(dplay_session::CommandError::WrongState));
}
