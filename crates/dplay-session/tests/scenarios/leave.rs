//! Leaving (MS-DPDX 3.1.5.3, 3.1.5.5, 3.1.5.6; MC-DPL8CS 3.2.5.1-3.2.5.3).

use std::time::Duration;

use dplay_wire::dp8::session::DestroyReason;

use super::*;
use dplay_session::{EndReason, Phase};

/// A mesh of `n` joined peers under `loss`.
fn joined_mesh(seed: u64, n: usize, loss: f64) -> Mesh {
    let mut mesh = Mesh::new(seed, n, link(loss), |_, _| {});
    mesh.host(0);
    for i in 1..n {
        mesh.join(i, 0);
    }
    let all: Vec<usize> = (0..n).collect();
    assert!(mesh.run_until_joined(&all, Duration::from_secs(120)), "seed {seed}: not all joined");
    mesh
}

/// The reasons node `i` heard for `dpnid`'s removal.
fn removals(mesh: &Mesh, i: usize, dpnid: dplay_wire::dp8::dpnid::Dpnid) -> Vec<DestroyReason> {
    events(mesh, i)
        .iter()
        .filter_map(|e| match e {
            Event::PlayerRemoved { dpnid: d, reason } if *d == dpnid => Some(*reason),
            _ => None,
        })
        .collect()
}

/// MS-DPDX 3.1.5.3: a peer leaves gracefully; everyone else drops it with reason NORMAL.
#[test]
fn graceful_leave_under_loss() {
    for (k, loss) in dplay_testkit::sim_check::LOSSES.into_iter().enumerate() {
        let mut mesh = joined_mesh(200 + k as u64, 5, loss);
        let leaver = session(&mesh, 3).local_dpnid();
        mesh.with(3, |s, now| s.leave(now));
        mesh.sim.run_for(Duration::from_secs(60));
        assert_eq!(session(&mesh, 3).phase(), Phase::Ended);
        let live = [0, 1, 2, 4];
        mesh.tables_agree(&live).unwrap_or_else(|e| panic!("loss {loss}: {e}"));
        for i in live {
            assert_eq!(
                removals(&mesh, i, leaver),
                [DestroyReason::DPNDESTROYPLAYERREASON_NORMAL],
                "node {i}"
            );
        }
    }
}

/// MC-DPL8R 3.1.4.3: once a leaver's goodbye is done, the host's summary holds no connection
/// for it; the closed link only lingers (answering retries) until `Config::linger`, then goes
/// (issue 25: `held: 1 connection` seconds after the last player left).
#[test]
fn a_finished_goodbye_is_no_connection_held() {
    let mut mesh = joined_mesh(205, 2, 0.0);
    mesh.with(1, |s, now| s.leave(now));
    mesh.sim.run_for(Duration::from_secs(2));
    assert_eq!(session(&mesh, 1).phase(), Phase::Ended);
    let held = session(&mesh, 0).refusals();
    assert_eq!((held.connections, held.lingering), (0, 1), "{held}");
    assert!(held.to_string().contains("held: 0 connections, 1 lingering, "), "{held}");
    mesh.sim.run_for(Duration::from_secs(10));
    let held = session(&mesh, 0).refusals();
    assert_eq!((held.connections, held.lingering), (0, 0), "{held}");
}

/// MS-DPDX 3.1.5.5: the host removes a peer: TERMINATE_SESSION to it, DESTROY_PLAYER
/// (HOSTDESTROYEDPLAYER) to the rest.
#[test]
fn forced_removal() {
    let mut mesh = joined_mesh(210, 4, 0.05);
    let victim = session(&mesh, 2).local_dpnid();
    mesh.with(0, |s, now| s.remove_player(now, victim)).expect("host removes");
    mesh.sim.run_for(Duration::from_secs(60));
    assert_eq!(events(&mesh, 2).last(), Some(&Event::SessionEnded { reason: EndReason::Terminated }));
    mesh.tables_agree(&[0, 1, 3]).expect("tables");
    assert_eq!(removals(&mesh, 1, victim), [DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER]);
}

/// MS-DPDX 3.1.5.6: a killed peer is found out (connection lost, integrity check) and removed
/// everywhere, under 0%, 5% and 20% loss.
#[test]
fn killed_peer_is_removed_under_loss() {
    for (k, loss) in dplay_testkit::sim_check::LOSSES.into_iter().enumerate() {
        let mut mesh = joined_mesh(220 + k as u64, 5, loss);
        mesh.kill(2);
        // Traffic makes the loss visible sooner than keep-alives would.
        mesh.with(1, |s, now| s.send_all(now, b"ping", dplay_session::SendFlags::RELIABLE)).expect("send");
        mesh.sim.run_for(Duration::from_secs(240));
        mesh.tables_agree(&[0, 1, 3, 4]).unwrap_or_else(|e| panic!("loss {loss}: {e}"));
    }
}

/// MC-DPL8CS 3.2.5.3: the integrity check. A peer that lost only its link to another asks
/// the host; the other answers INTEGRITY_CHECK_RESPONSE, so the requester is terminated.
#[test]
fn integrity_check_terminates_the_requester() {
    let mut mesh = joined_mesh(230, 4, 0.0);
    let (a, b) = (mesh.ids[1], mesh.ids[2]);
    mesh.sim.partition(a, b);
    mesh.with(1, |s, now| s.send_all(now, b"ping", dplay_session::SendFlags::RELIABLE)).expect("send");
    mesh.sim.run_for(Duration::from_secs(240));
    let one_ended = [1, 2]
        .iter()
        .any(|i| events(&mesh, *i).contains(&Event::SessionEnded { reason: EndReason::Terminated }));
    assert!(one_ended, "one side of the broken link is terminated");
    let live = mesh.live(&[]);
    assert_eq!(live.len(), 3);
    mesh.tables_agree(&live).expect("tables");
}

/// MC-DPL8CS 2.2.2.1: the host ends the session for everyone.
#[test]
fn terminate_session() {
    let mut mesh = joined_mesh(240, 3, 0.0);
    mesh.with(0, |s, now| s.terminate_session(now, b"bye")).expect("host");
    mesh.sim.run_for(Duration::from_secs(10));
    for i in 1..3 {
        assert_eq!(events(&mesh, i).last(), Some(&Event::SessionEnded { reason: EndReason::Terminated }));
    }
}

/// Application data (MC-DPL8CS 2.2.3.1) and the DXDiag chat message (MS-DPDX 3.1.5.7).
#[test]
fn application_data_and_chat() {
    let mut mesh = joined_mesh(250, 3, 0.0);
    let (one, two) = (session(&mesh, 1).local_dpnid(), session(&mesh, 2).local_dpnid());
    mesh.with(1, |s, now| s.send_to(now, two, b"direct", dplay_session::SendFlags::DATAGRAM))
        .expect("send_to");
    mesh.with(1, |s, now| s.send_chat(now, "hello all")).expect("chat");
    mesh.sim.run_for(Duration::from_secs(1));
    let got: Vec<&Event> =
        events(&mesh, 2).iter().filter(|e| matches!(e, Event::Message { .. } | Event::Chat { .. })).collect();
    assert_eq!(
        got,
        [
            &Event::Message {
                from: one,
                data: b"direct".to_vec(),
                reliable: false,
                sequential: false,
                process_token: None
            },
            &Event::Chat { from: one, text: "hello all".into() },
        ]
    );
    assert!(events(&mesh, 0).iter().any(|e| *e == Event::Chat { from: one, text: "hello all".into() }));
}

/// MC-DPL8CS 3.2.5.1: a client leaves (the server drops it); then the server leaves and the
/// clients' sessions end (no migration in client/server).
#[test]
fn client_server_leaves() {
    let mut mesh = Mesh::new(260, 3, link(0.05), |_, cfg| cfg.mode = dplay_session::Mode::ClientServer);
    mesh.host(0);
    mesh.join(1, 0);
    mesh.join(2, 0);
    assert!(mesh.run_until_joined(&[1, 2], Duration::from_secs(60)));
    let leaver = session(&mesh, 1).local_dpnid();
    mesh.with(1, |s, now| s.leave(now));
    mesh.sim.run_for(Duration::from_secs(30));
    assert_eq!(removals(&mesh, 0, leaver), [DestroyReason::DPNDESTROYPLAYERREASON_NORMAL]);
    assert_eq!(session(&mesh, 0).name_table().len(), 2);
    assert!(removals(&mesh, 2, leaver).is_empty(), "clients do not see each other");
    mesh.with(0, |s, now| s.leave(now));
    mesh.sim.run_for(Duration::from_secs(30));
    assert_eq!(events(&mesh, 2).last(), Some(&Event::SessionEnded { reason: EndReason::HostLost }));
}

/// MC-DPL8R 3.1.4.3, MS-DPDX 3.1.5.3 (issue 25 item 5): a client that closes gracefully and
/// goes before acknowledging our END_STREAM, as a departing Windows client does, leaves our
/// client/server host's table at its END_STREAM, not after our END_STREAM's retries.
#[test]
fn a_departed_client_leaves_at_its_end_stream() {
    let mut mesh = Mesh::new(2505, 2, link(0.0), |_, c| c.mode = dplay_session::Mode::ClientServer);
    mesh.host(0);
    mesh.join(1, 0);
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(30)));
    let client = session(&mesh, 1).local_dpnid();
    mesh.with(1, |s, now| s.leave(now));
    // Its END_STREAM reaches the host (15 ms); the host's answer never reaches it.
    mesh.sim.run_for(Duration::from_millis(20));
    mesh.kill(1);
    mesh.sim.run_for(Duration::from_secs(1));
    assert!(!session(&mesh, 0).name_table().contains(client), "the client lingers");
    assert_eq!(removals(&mesh, 0, client), [DestroyReason::DPNDESTROYPLAYERREASON_NORMAL]);
}

/// MC-DPL8CS 2.2.2.1: DN_TERMINATE_SESSION carries the host application's data: to the
/// removed peer alone (DestroyPeer's `pvDestroyData`), then to every member (TerminateSession's
/// `pvTerminateData`).
#[test]
fn terminate_data_reaches_the_members() {
    let mut mesh = joined_mesh(211, 3, 0.05);
    let victim = session(&mesh, 2).local_dpnid();
    mesh.with(0, |s, now| s.remove_player_with_data(now, victim, b"kicked")).expect("host removes");
    mesh.sim.run_for(Duration::from_secs(30));
    let last_two = |mesh: &Mesh, i: usize| {
        let e = events(mesh, i);
        e[e.len().saturating_sub(2)..].to_vec()
    };
    let ended = Event::SessionEnded { reason: EndReason::Terminated };
    assert_eq!(last_two(&mesh, 2), [Event::TerminateData { data: b"kicked".to_vec() }, ended.clone()]);
    assert_eq!(session(&mesh, 2).terminate_data(), b"kicked");
    assert_eq!(session(&mesh, 1).terminate_data(), b"");
    mesh.with(0, |s, now| s.terminate_session(now, b"game over")).expect("host terminates");
    mesh.sim.run_for(Duration::from_secs(30));
    assert_eq!(last_two(&mesh, 1), [Event::TerminateData { data: b"game over".to_vec() }, ended]);
    assert_eq!(session(&mesh, 1).terminate_data(), b"game over");
}

/// A tracked send's copies each complete once: acknowledged under 20% loss (MC-DPL8R
/// 3.1.5.2.2), or failed with the connection of a peer that was killed (MC-DPL8R 3.1.6.5).
#[test]
fn tracked_sends_complete_once() {
    use dplay_session::{SendFlags, SendOutcome, Tracked};
    let done = |mesh: &Mesh| -> Vec<(u64, SendOutcome)> {
        events(mesh, 0)
            .iter()
            .filter_map(|e| match e {
                Event::SendDone { id, outcome, .. } => Some((*id, *outcome)),
                _ => None,
            })
            .collect()
    };
    let mut mesh = joined_mesh(212, 3, 0.2);
    let copies =
        mesh.with(0, |s, now| s.send_all_tracked(now, &[7; 3000], SendFlags::RELIABLE, Tracked::new(42)));
    assert_eq!(copies, Ok(2));
    mesh.sim.run_for(Duration::from_secs(30));
    assert_eq!(done(&mesh), [(42, SendOutcome::Acknowledged); 2]);
    let to = session(&mesh, 2).local_dpnid();
    mesh.kill(2);
    mesh.with(0, |s, now| s.send_to_tracked(now, to, b"gone", SendFlags::RELIABLE, Tracked::new(43)))
        .expect("queued");
    mesh.sim.run_for(Duration::from_secs(240));
    let last = done(&mesh).pop();
    assert!(matches!(last, Some((43, SendOutcome::Failed(_)))), "{last:?}");
}
