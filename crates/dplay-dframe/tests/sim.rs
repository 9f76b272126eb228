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
    insta::assert_snapshot!("transfer_loss_20", sim.trace());
}
