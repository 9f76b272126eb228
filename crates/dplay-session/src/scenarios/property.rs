//! The name-table property over many seeds (also run by `cargo xtask sim` through
//! [`crate::sim_check::run`]): after joins, leaves, kills and migrations under 0%, 5% and 20%
//! loss, every live joined member holds the same name table.

use crate::sim_check::{name_table_property, run};

/// `DPLAY_SIM_SEEDS` (default 100) seeds, or the one in `DPLAY_SIM_SEED`.
#[test]
fn name_tables_agree_over_many_seeds() {
    dplay_sim::run_seeds(100, |seed| {
        if let Err(e) = name_table_property(seed) {
            panic!("{e}");
        }
    });
}

/// The sweep entry point counts its runs and names failing seeds.
#[test]
fn sweep_summary_counts_runs() {
    let summary = run(1000..1003);
    assert_eq!(summary.runs, 3);
    assert_eq!(summary.failures, []);
}
