//! Host migration (MC-DPL8CS 3.2.5.4; MS-DPDX 3.1.5.4).

use std::time::Duration;

use super::*;
use crate::{EndReason, Phase};

fn joined_mesh(seed: u64, n: usize, loss: f64, migrate: bool) -> Mesh {
    let mut mesh = Mesh::new(seed, n, link(loss), |_, cfg| cfg.migrate_host = migrate);
    mesh.host(0);
    for i in 1..n {
        mesh.join(i, 0);
        assert!(mesh.run_until_joined(&[i], Duration::from_secs(60)), "seed {seed}: {i} did not join");
    }
    mesh
}

#[track_caller]
fn assert_migrated(mesh: &Mesh, live: &[usize], new_host: usize) {
    let host = session(mesh, new_host).local_dpnid();
    assert_eq!(session(mesh, new_host).phase(), Phase::Host);
    for &i in live {
        assert_eq!(session(mesh, i).host_dpnid(), host, "node {i}");
        assert!(
            events(mesh, i).contains(&Event::HostMigrated { new_host: host }),
            "node {i}: {:?}",
            events(mesh, i)
        );
    }
    mesh.tables_agree(live).expect("tables");
}

/// MS-DPDX 3.1.5.4: the host leaves; the oldest peer (node 1) takes over, under 0%, 5% and
/// 20% loss.
#[test]
fn host_leaves_oldest_takes_over() {
    for (k, loss) in crate::sim_check::LOSSES.into_iter().enumerate() {
        let mut mesh = joined_mesh(300 + k as u64, 5, loss, true);
        mesh.with(0, |s, now| s.leave(now));
        mesh.sim.run_for(Duration::from_secs(120));
        assert_migrated(&mesh, &[1, 2, 3, 4], 1);
    }
}

/// MC-DPL8CS 3.2.5.4: the host is killed; the others find out and migrate.
#[test]
fn host_killed_under_loss() {
    for (k, loss) in crate::sim_check::LOSSES.into_iter().enumerate() {
        let mut mesh = joined_mesh(310 + k as u64, 4, loss, true);
        mesh.kill(0);
        mesh.with(2, |s, now| s.send_all(now, b"ping", crate::SendFlags::RELIABLE)).expect("send");
        mesh.with(3, |s, now| s.send_all(now, b"ping", crate::SendFlags::RELIABLE)).expect("send");
        mesh.sim.run_for(Duration::from_secs(300));
        assert_migrated(&mesh, &[1, 2, 3], 1);
    }
}

/// Without DPNSESSION_MIGRATE_HOST the session ends when the host goes.
#[test]
fn no_migration_ends_the_session() {
    let mut mesh = joined_mesh(320, 3, 0.0, false);
    mesh.with(0, |s, now| s.leave(now));
    mesh.sim.run_for(Duration::from_secs(30));
    for i in 1..3 {
        assert_eq!(events(&mesh, i).last(), Some(&Event::SessionEnded { reason: EndReason::HostLost }));
    }
}

/// The new host then admits a new peer, which connects to every survivor.
#[test]
fn join_after_migration() {
    let mut mesh = Mesh::new(330, 5, link(0.05), |_, _| {});
    mesh.host(0);
    for i in 1..4 {
        mesh.join(i, 0);
    }
    assert!(mesh.run_until_joined(&[1, 2, 3], Duration::from_secs(60)));
    mesh.with(0, |s, now| s.leave(now));
    mesh.sim.run_for(Duration::from_secs(60));
    assert_migrated(&mesh, &[1, 2, 3], 1);
    mesh.join(4, 1);
    assert!(mesh.run_until_joined(&[4], Duration::from_secs(60)));
    mesh.sim.run_for(Duration::from_secs(5));
    mesh.tables_agree(&[1, 2, 3, 4]).expect("tables");
}
