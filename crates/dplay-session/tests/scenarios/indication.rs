//! The host application answers each join itself (`indicate_connect`; DPN_MSGID_INDICATE_CONNECT
//! of the DirectPlay 8 API): the joiner's connect data reaches it, and its reply data reaches
//! the joiner in SEND_CONNECT_INFO or CONNECT_FAILED (MC-DPL8CS 2.2.1.2-2.2.1.4, 3.1.5.1).

use std::time::Duration;

use dplay_wire::dp8::session::ResultCode;

use super::*;
use dplay_session::{CommandError, EndReason};

/// The joiner's `connectData` as the host's application heard it, and where it came from.
fn request(mesh: &Mesh) -> Option<(SocketAddr, Vec<u8>)> {
    events(mesh, 0).iter().find_map(|e| match e {
        Event::JoinRequest { from, connect_data, .. } => Some((*from, connect_data.clone())),
        _ => None,
    })
}

fn mesh() -> Mesh {
    Mesh::new(41, 2, link(0.0), |i, cfg| match i {
        0 => cfg.indicate_connect = true,
        _ => cfg.connect_data = b"let me in".to_vec(),
    })
}

#[test]
fn an_accepted_join_carries_both_ways_data() {
    let mut mesh = mesh();
    mesh.host(0);
    mesh.join(1, 0);
    mesh.sim.run_for(Duration::from_secs(1));
    let (from, data) = request(&mesh).expect("JoinRequest on the host");
    assert_eq!(data, b"let me in");
    assert!(!session(&mesh, 1).is_joined(), "held until the host answers");
    assert_eq!(session(&mesh, 0).name_table().len(), 1);
    mesh.with(0, |s, now| s.answer_join(now, from, Ok(b"welcome".to_vec()))).unwrap();
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(5)));
    assert_eq!(session(&mesh, 1).connect_reply(), b"welcome");
    assert_eq!(session(&mesh, 0).name_table().len(), 2);
    // Answered once.
    let again = mesh.with(0, |s, now| s.answer_join(now, from, Ok(Vec::new())));
    assert_eq!(again, Err(CommandError::UnknownPlayer));
}

#[test]
fn a_refused_join_ends_with_the_hosts_code_and_reply() {
    let mut mesh = mesh();
    mesh.host(0);
    mesh.join(1, 0);
    mesh.sim.run_for(Duration::from_secs(1));
    let (from, _) = request(&mesh).expect("JoinRequest on the host");
    let code = ResultCode::DPNERR_HOSTREJECTEDCONNECTION;
    mesh.with(0, |s, now| s.answer_join(now, from, Err((code, b"full tonight".to_vec())))).unwrap();
    mesh.sim.run_for(Duration::from_secs(2));
    let ended = events(&mesh, 1).iter().find_map(|e| match e {
        Event::SessionEnded { reason } => Some(*reason),
        _ => None,
    });
    assert_eq!(ended, Some(EndReason::Refused(code)));
    assert_eq!(session(&mesh, 1).connect_reply(), b"full tonight");
    assert_eq!(session(&mesh, 0).name_table().len(), 1);
}

#[test]
fn a_joiner_that_is_never_answered_is_dropped_at_its_deadline() {
    let mut mesh = Mesh::new(42, 2, link(0.0), |i, cfg| {
        if i == 0 {
            cfg.indicate_connect = true;
            cfg.limits.join_timeout = Duration::from_secs(3);
        }
    });
    mesh.host(0);
    mesh.join(1, 0);
    mesh.sim.run_for(Duration::from_secs(10));
    let (from, _) = request(&mesh).expect("JoinRequest on the host");
    assert!(events(&mesh, 0).contains(&Event::JoinAborted { from }));
    assert!(!session(&mesh, 1).is_joined());
}
