//! Host migration (MC-DPL8CS 3.2.5.4; MS-DPDX 3.1.5.4).

use std::time::Duration;

use super::*;
use dplay_session::{EndReason, Phase};

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
    for (k, loss) in dplay_testkit::sim_check::LOSSES.into_iter().enumerate() {
        let mut mesh = joined_mesh(300 + k as u64, 5, loss, true);
        mesh.with(0, |s, now| s.leave(now));
        mesh.sim.run_for(Duration::from_secs(120));
        assert_migrated(&mesh, &[1, 2, 3, 4], 1);
    }
}

/// MC-DPL8CS 3.2.5.4: the host is killed; the others find out and migrate.
#[test]
fn host_killed_under_loss() {
    for (k, loss) in dplay_testkit::sim_check::LOSSES.into_iter().enumerate() {
        let mut mesh = joined_mesh(310 + k as u64, 4, loss, true);
        mesh.kill(0);
        mesh.with(2, |s, now| s.send_all(now, b"ping", dplay_session::SendFlags::RELIABLE)).expect("send");
        mesh.with(3, |s, now| s.send_all(now, b"ping", dplay_session::SendFlags::RELIABLE)).expect("send");
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

/// MC-DPL8CS 3.2.5.4: the new host misses an operation another peer holds. The host removes
/// node 4 while its link to node 1 (the oldest peer) is cut, then dies: node 1 takes over,
/// learns from NAMETABLE_VERSION that node 2 is ahead, fetches the DESTROY_PLAYER with
/// REQ_NAMETABLE_OP / ACK_NAMETABLE_OP, and everyone agrees.
#[test]
fn new_host_fetches_missing_operations() {
    let mut mesh = joined_mesh(340, 5, 0.0, true);
    let (host, oldest) = (mesh.ids[0], mesh.ids[1]);
    mesh.sim.partition(host, oldest);
    let victim = session(&mesh, 4).local_dpnid();
    mesh.with(0, |s, now| s.remove_player(now, victim)).expect("host removes");
    mesh.sim.run_for(Duration::from_millis(300));
    assert!(session(&mesh, 1).name_table().contains(victim), "node 1 missed the DESTROY_PLAYER");
    mesh.kill(0);
    mesh.with(2, |s, now| s.send_all(now, b"ping", dplay_session::SendFlags::RELIABLE)).expect("send");
    mesh.sim.run_for(Duration::from_secs(300));
    assert_migrated(&mesh, &[1, 2, 3], 1);
    let removed = events(&mesh, 1).iter().any(|e| {
        *e == Event::PlayerRemoved {
            dpnid: victim,
            reason: dplay_wire::dp8::session::DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER,
        }
    });
    assert!(removed, "node 1 applied the fetched DESTROY_PLAYER: {:?}", events(&mesh, 1));
}

/// MS-DPDX 3.1.5.4 as a trace: the host leaves a session of three peers; HOST_MIGRATE,
/// NAMETABLE_VERSION, DESTROY_PLAYER, RESYNC_VERSION and HOST_MIGRATE_COMPLETE follow.
#[test]
fn host_migration_trace() {
    let mut mesh = joined_mesh(350, 4, 0.0, true);
    mesh.sim.run_for(Duration::from_secs(1));
    mesh.sim.enable_trace_with(describe);
    mesh.sim.note("the host leaves");
    mesh.with(0, |s, now| s.leave(now));
    mesh.sim.run_for(Duration::from_secs(5));
    assert_migrated(&mesh, &[1, 2, 3], 1);
    let trace = mesh.sim.trace().to_owned();
    let mut rest = trace.as_str();
    for step in [
        "TRANS_USERDATA_END_OF_STREAM",
        "TRANS_USERDATA_HOST_MIGRATE",
        "TRANS_USERDATA_NAMETABLE_VERSION",
        "TRANS_USERDATA_DESTROY_PLAYER",
        "TRANS_USERDATA_RESYNC_VERSION",
        "TRANS_USERDATA_HOST_MIGRATE_COMPLETE",
    ] {
        let at = rest.find(step).unwrap_or_else(|| panic!("{step} missing in order in:\n{trace}"));
        rest = rest.get(at + step.len()..).unwrap_or_default();
    }
    insta::assert_snapshot!("ms_dpdx_3_1_5_4_host_migration_trace", trace);
}

/// The DN_RESYNC_VERSION values in a trace, by receiver, in arrival order.
fn resyncs(trace: &str) -> std::collections::BTreeMap<String, Vec<u32>> {
    let mut out = std::collections::BTreeMap::<String, Vec<u32>>::new();
    for line in trace.lines().filter(|l| l.contains(" delivered")) {
        let (Some(to), Some(v)) = (line.split(" -> ").nth(1), line.split("RESYNC=").nth(1)) else { continue };
        let to = to.split_whitespace().next().unwrap_or_default().to_owned();
        out.entry(to).or_default().extend(v.split(',').filter_map(|x| x.trim().parse::<u32>().ok()));
    }
    out
}

/// `RESYNC=<version>` for a DFRAME carrying DN_RESYNC_VERSION (alone or coalesced).
fn describe_resync(bytes: &[u8]) -> String {
    let Ok(f) = Dframe::parse(bytes) else { return String::new() };
    let parts: Vec<Vec<u8>> = if f.header.control.contains(DframeControl::COALESCE) {
        parse_coalesced(&f.payload).map(|p| p.iter().map(|x| x.data.to_vec()).collect()).unwrap_or_default()
    } else {
        vec![f.payload.to_vec()]
    };
    let versions: Vec<String> = parts
        .iter()
        .filter_map(|p| match SessionMessage::parse(p) {
            Ok(SessionMessage::ResyncVersion(v)) => Some(v.version.to_string()),
            _ => None,
        })
        .collect();
    if versions.is_empty() { String::new() } else { format!("RESYNC={}", versions.join(",")) }
}

/// MC-DPL8CS 2.2.2.5, 2.2.6, 3.2.5.4 (issue 13 item 9): the new host ends its migration with
/// DN_RESYNC_VERSION at its version; the versions members reported during the migration are
/// older, and no later DN_RESYNC_VERSION goes back below it.
#[test]
fn mc_dpl8cs_2_2_2_5_resync_never_goes_back_after_migration() {
    let mut mesh = joined_mesh(330, 4, 0.0, true);
    mesh.sim.enable_trace_with(describe_resync);
    for k in 0..2 {
        let me = session(&mesh, 0).local_dpnid();
        mesh.with(0, |s, now| s.set_info(now, me, Some(&format!("h{k}")), None)).expect("set_info");
        mesh.sim.run_for(Duration::from_millis(300));
    }
    assert_eq!(session(&mesh, 0).name_table().version(), 10);
    mesh.with(0, |s, now| s.leave(now));
    mesh.sim.run_for(Duration::from_secs(30));
    assert_migrated(&mesh, &[1, 2, 3], 1);
    assert_eq!(session(&mesh, 1).name_table().version(), 11);
    let me = session(&mesh, 1).local_dpnid();
    mesh.with(1, |s, now| s.set_info(now, me, Some("new host"), None)).expect("set_info");
    mesh.sim.run_for(Duration::from_secs(5));
    let seen = resyncs(mesh.sim.trace());
    for i in [2, 3] {
        let got = seen.get(&addr(i).to_string()).cloned().unwrap_or_default();
        assert!(got.contains(&11), "node {i}: {got:?}");
        assert!(got.windows(2).all(|w| w[0] <= w[1]), "node {i} saw RESYNC_VERSION go back: {got:?}");
    }
}
