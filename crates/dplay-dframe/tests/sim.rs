//! The transport over dplay-sim: a few seeds of every profile in the test suite (the full
//! sweep is `cargo xtask sim`), and the trace of a fixed-seed transfer over a 20%-loss link.
#![allow(clippy::indexing_slicing)]

#[path = "support/scenario.rs"]
mod scenario;

use scenario::Profile;

/// Every profile of the sweep, a few seeds each: reliable exactly once and intact, sequential
/// in order, unreliable at most once, and both ends agree on a graceful close.
#[test]
fn every_profile_a_few_seeds() {
    for profile in Profile::ALL {
        for seed in dplay_sim::seeds_from_env(3) {
            let (outcome, _) = scenario::run(seed, profile, 24, false);
            assert!(
                outcome.violations.is_empty(),
                "DPLAY_SIM_SEED={seed} {}: {:#?}",
                profile.name(),
                outcome.violations
            );
        }
    }
}

/// A fixed-seed transfer over a 20%-loss link, one line per datagram: the reviewable record
/// of handshake, retries, SACKs and the graceful close under loss.
#[test]
fn trace_of_a_transfer_over_20_percent_loss() {
    let (outcome, sim) = scenario::run(7, Profile::Loss20, 6, true);
    assert!(outcome.violations.is_empty(), "{:#?}", outcome.violations);
    let mut lines = Vec::new();
    for (side, id) in ["A->B", "B->A"].into_iter().zip(sim.node_ids()) {
        for (t, line) in sim.node::<scenario::Peer>(id).sent_log.iter().flatten() {
            lines.push((*t, side, line.clone()));
        }
    }
    lines.sort_by_key(|(t, side, _)| (*t, *side));
    let mut text: String = lines
        .iter()
        .map(|(t, side, line)| format!("t={:.3}ms {side} {line}\n", t.as_secs_f64() * 1e3))
        .collect();
    text.push_str("\n--- what the links did ---\n");
    text.push_str(sim.trace());
    insta::assert_snapshot!("transfer_loss_20", text);
}
