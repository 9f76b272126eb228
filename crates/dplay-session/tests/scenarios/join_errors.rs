//! Join errors that say what happened (MC-DPL8R 3.1.6.1; MC-DPL8CS 2.2.1.3, 3.1.5.1-3.1.5.2).

use std::time::Duration;

use super::*;
use dplay_session::{DPNERR_SESSIONFULL, EndReason};

/// MC-DPL8R 3.1.6.1: nothing answers our CONNECT: after the retries the join ends with
/// `NoAnswer`, not with a lost connection.
#[test]
fn nothing_answers_the_connect() {
    let mut mesh = Mesh::new(71, 2, link(0.0), |_, _| {});
    mesh.kill(0);
    mesh.join(1, 0);
    mesh.sim.run_for(Duration::from_secs(90));
    assert_eq!(events(&mesh, 1).last(), Some(&Event::SessionEnded { reason: EndReason::NoAnswer }));
}

/// MC-DPL8CS 2.2.1.3: a refusal names its DPNERR code (DPNERR_SESSIONFULL included, which the
/// spec does not list), never as hex.
#[test]
fn refusals_name_their_code() {
    let mut mesh = Mesh::new(73, 2, link(0.0), |i, cfg| {
        if i == 0 {
            cfg.max_players = 1;
        }
    });
    mesh.host(0);
    mesh.join(1, 0);
    mesh.sim.run_for(Duration::from_secs(2));
    let reason = EndReason::Refused(DPNERR_SESSIONFULL);
    assert_eq!(events(&mesh, 1).last(), Some(&Event::SessionEnded { reason }));
    assert_eq!(reason.to_string(), "the host refused the join with DPNERR_SESSIONFULL");
}
