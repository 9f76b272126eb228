//! MC-DPL4R over dplay-sim (`common/reliable_exchange.rs`): two endpoints exchange messages of
//! every size, reliable and not, both ways, over links that lose, duplicate, delay and reorder
//! datagrams. Every reliable message arrives exactly once, intact, and in order on an ordered
//! link; nothing arrives twice or damaged. Seeds: `DPLAY_SIM_SEEDS` (default 40), replay with
//! `DPLAY_SIM_SEED`. `cargo xtask sim` runs the same profiles for more seeds.

#[path = "common/reliable_exchange.rs"]
mod exchange;

use std::time::Duration;

use dplay_sim::LinkConfig;
use exchange::{exchange, hostile_network};

#[track_caller]
fn run(seed: u64, link: LinkConfig, ordered: bool, count: u32) -> u64 {
    exchange(seed, link, ordered, count, false).unwrap_or_else(|e| panic!("seed {seed}: {e}")).resent
}

/// A fixed-seed exchange over a 20%-loss link, one line per datagram: the reviewable record of
/// data frames, SAKs, ACKs, NACKs and resends (MC-DPL4R 2.2, 3.1.5).
#[test]
fn trace_of_an_exchange_over_20_percent_loss() {
    let link = LinkConfig::clean().with_latency(Duration::from_millis(20)).with_loss(0.2);
    let trace = exchange(7, link, true, 4, true).unwrap().trace;
    insta::assert_snapshot!("dp4r_exchange_loss_20", trace);
}

/// MC-DPL4R 3.1.5.2, 3.1.5.3 under 20% loss, 10% duplication and 20% reordering, ordered.
#[test]
fn sweep_ordered_exactly_once_in_order() {
    dplay_sim::run_seeds(40, |seed| {
        run(seed, hostile_network(), true, 60);
    });
}

/// The same on an unordered link (DPSESSION_NOPRESERVEORDER): exactly once, any order.
#[test]
fn sweep_unordered_exactly_once() {
    dplay_sim::run_seeds(20, |seed| {
        run(seed, hostile_network(), false, 60);
    });
}

/// A clean link: everything arrives, and no frame is ever resent.
#[test]
fn clean_link_needs_no_resends() {
    assert_eq!(run(1, LinkConfig::clean().with_latency(Duration::from_millis(10)), true, 100), 0);
}

/// Heavy loss (40%) still converges.
#[test]
fn heavy_loss_converges() {
    dplay_sim::run_seeds(5, |seed| {
        run(seed, LinkConfig::lossy(0.4), true, 30);
    });
}

/// The sweep's profiles all hold for a few seeds (the sweep itself runs many more).
#[test]
fn sweep_profiles_hold() {
    for (name, link, ordered, count) in exchange::profiles() {
        for seed in 0..2 {
            exchange(seed, link.clone(), ordered, count, false)
                .unwrap_or_else(|e| panic!("{name}, seed {seed}: {e}"));
        }
    }
}
