//! Fast-signed sessions (MC-DPL8R 3.1.4.4, 3.1.5.1.3, 3.1.5.2.7; MC-DPL8CS 2.2.1.4 and
//! MC-DPLHP 2.2.2 `DPNSESSION_FAST_SIGNED`) on dplay-sim.

use std::time::Duration;

use dplay_dframe::{DropReason, Signing, SigningMode};
use dplay_wire::dp8::cframe::{Cframe, Masks, Sack};
use dplay_wire::dp8::dframe::{Dframe, DframeCommand, DframeControl, DframeHeader};
use dplay_wire::dp8::session::ApplicationDescFlags;

use super::*;
use dplay_session::{EndReason, SendFlags};

/// A mesh of `n` whose nodes all sign (the host requires it, the joiners were told by the
/// EnumResponse).
fn signed_mesh(seed: u64, n: usize) -> Mesh {
    Mesh::new(seed, n, link(0.0), |_, cfg| cfg.transport.signing = Signing::Fast)
}

/// MC-DPL8R 3.1.5.1.3, 3.1.4.4; MC-DPL8CS 2.2.1.4: three peers join a host that requires fast
/// signing; its EnumResponse and every member's application description carry
/// DPNSESSION_FAST_SIGNED, every connection (host-member and member-member) is signed, and
/// data flows.
#[test]
fn three_peers_in_a_signed_session() {
    let mut mesh = signed_mesh(41, 3);
    mesh.host(0);
    mesh.with(1, |s, now| s.enum_hosts(now, addr(0), None)).expect("idle");
    mesh.sim.run_for(Duration::from_millis(200));
    let flags = events(&mesh, 1)
        .iter()
        .find_map(|e| match e {
            Event::HostFound { response, .. } => Some(response.application_desc_flags),
            _ => None,
        })
        .expect("an EnumResponse");
    assert!(flags.contains(ApplicationDescFlags::FAST_SIGNED));
    mesh.with(1, |s, _| s.stop_enum());
    mesh.join(1, 0);
    mesh.join(2, 0);
    assert!(mesh.run_until_joined(&[0, 1, 2], Duration::from_secs(10)));
    mesh.sim.run_for(Duration::from_secs(1));
    mesh.tables_agree(&[0, 1, 2]).expect("identical name tables");
    for i in 1..3 {
        assert!(events(&mesh, i).iter().any(
            |e| matches!(e, Event::Joined { flags, .. } if flags.contains(ApplicationDescFlags::FAST_SIGNED))
        ));
    }
    for (a, b) in [(0, 1), (0, 2), (1, 2), (1, 0), (2, 0), (2, 1)] {
        let ep = session(&mesh, a).endpoint();
        assert!(ep.is_connected(addr(b)) && ep.is_signed(addr(b)), "{a} -> {b} not signed");
        assert_eq!(ep.stats(addr(b)).unwrap().drops.get(DropReason::BadSignature), 0);
    }
    let to = session(&mesh, 2).local_dpnid();
    mesh.with(1, |s, now| s.send_to(now, to, b"signed hello", SendFlags::RELIABLE)).expect("send");
    mesh.sim.run_for(Duration::from_millis(200));
    assert!(
        events(&mesh, 2)
            .iter()
            .any(|e| matches!(e, Event::Message { data, .. } if data.as_slice() == b"signed hello"))
    );
}

/// MC-DPL8R 3.1.5.2.7, 3.1.5.1.5: a forged DFRAME (wrong signature), an unsigned one and an
/// unsigned SACK, all from a member's address into the host, are dropped and counted; the
/// session goes on unchanged (HARD_DISCONNECT: dplay-dframe's signing tests).
#[test]
fn forged_and_unsigned_frames_are_dropped_and_counted() {
    let mut mesh = signed_mesh(43, 3);
    mesh.host(0);
    mesh.join(1, 0);
    mesh.join(2, 0);
    assert!(mesh.run_until_joined(&[0, 1, 2], Duration::from_secs(10)));
    mesh.sim.run_for(Duration::from_secs(1));
    let before = session(&mesh, 0).endpoint().stats(addr(1)).unwrap();
    let header = |signature| DframeHeader {
        command: DframeCommand::DATA
            | DframeCommand::RELIABLE
            | DframeCommand::NEW_MSG
            | DframeCommand::END_MSG
            | DframeCommand::POLL,
        control: DframeControl::empty(),
        seq: 40,
        n_rcv: 0,
        masks: Masks::default(),
        signature,
        sess_id: None,
    };
    let forged =
        Dframe { header: header(Some(0x0BAD_0BAD_0BAD_0BAD)), payload: dplay_wire::Blob::new(b"evil") };
    let unsigned = Dframe { header: header(None), payload: dplay_wire::Blob::new(b"unsigned evil") };
    let sack = Cframe::Sack(Sack {
        poll: false,
        response: true,
        retry: 0,
        n_seq: 0,
        n_rcv: 0,
        timestamp: 0,
        masks: Masks::default(),
        signature: None,
    });
    let now = mesh.sim.now();
    for bytes in [forged.to_vec(), unsigned.to_vec(), sack.to_vec()] {
        mesh.sim.inject(now, addr(1), mesh.ids[0], bytes.expect("emit"));
    }
    mesh.sim.run_for(Duration::from_millis(300));
    let after = session(&mesh, 0).endpoint().stats(addr(1)).unwrap();
    assert_eq!(after.drops.get(DropReason::BadSignature) - before.drops.get(DropReason::BadSignature), 3);
    assert_eq!(after.messages_received, before.messages_received);
    mesh.tables_agree(&[0, 1, 2]).expect("unchanged");
    assert!(events(&mesh, 0).iter().all(|e| !matches!(e, Event::Message { .. })));
}

/// MC-DPL8R 3.1.5.1.3: a joiner that was not told to sign gets CONNECTED_SIGNED from the
/// host and fails at once, naming fast signing, instead of retrying CONNECT for 50 s.
#[test]
fn unsigned_joiner_fails_at_once_naming_fast_signing() {
    let mut mesh = Mesh::new(47, 2, link(0.0), |i, cfg| {
        if i == 0 {
            cfg.transport.signing = Signing::Fast;
        }
    });
    mesh.host(0);
    mesh.join(1, 0);
    mesh.sim.run_for(Duration::from_millis(100));
    assert_eq!(
        events(&mesh, 1).last(),
        Some(&Event::SessionEnded { reason: EndReason::SigningRequired(SigningMode::Fast) })
    );
    assert_eq!(session(&mesh, 0).name_table().len(), 1);
    assert_eq!(session(&mesh, 0).endpoint().connection_count(), 0, "the host kept no state");
}

/// MC-DPL8R 3.1.5.1.3 under loss, with MC-DPL8CS 3.2.5.4: five signing peers join
/// simultaneously under 0%, 5% and 20% loss (lost CONNECTED_SIGNED confirmations included),
/// the host leaves, the oldest survivor takes over; every remaining connection is signed and
/// no frame was refused for its signature.
#[test]
fn signed_sessions_join_and_migrate_under_loss() {
    for (k, loss) in dplay_testkit::sim_check::LOSSES.into_iter().enumerate() {
        let mut mesh =
            Mesh::new(60 + k as u64, 5, link(loss), |_, cfg| cfg.transport.signing = Signing::Fast);
        mesh.host(0);
        for i in 1..5 {
            mesh.join(i, 0);
        }
        assert!(mesh.run_until_joined(&[0, 1, 2, 3, 4], Duration::from_secs(120)), "loss {loss}");
        mesh.with(0, |s, now| s.leave(now));
        mesh.sim.run_for(Duration::from_secs(120));
        let live = [1, 2, 3, 4];
        // The oldest survivor took over: which one depends on the join order under loss.
        let new_host = session(&mesh, 1).host_dpnid();
        assert!(live.iter().any(|i| session(&mesh, *i).local_dpnid() == new_host), "loss {loss}");
        for i in live {
            assert_eq!(session(&mesh, i).host_dpnid(), new_host, "loss {loss}: node {i}");
            for j in live.into_iter().filter(|j| *j != i) {
                let ep = session(&mesh, i).endpoint();
                assert!(ep.is_signed(addr(j)), "loss {loss}: {i} -> {j}");
                assert_eq!(ep.stats(addr(j)).unwrap().drops.get(DropReason::BadSignature), 0);
            }
        }
        mesh.tables_agree(&live).expect("tables");
    }
}
