//! The name-table property over many seeds (also run by `cargo xtask sim` through
//! [`dplay_testkit::sim_check::run`]): after joins, leaves, kills and migrations under 0%, 5% and 20%
//! loss, every live joined member holds the same name table.

use dplay_session::{Event, TableChange};
use dplay_testkit::sim_check::{name_table_property, property_run, run};

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

/// The property exercises what it claims to (MC-DPL8CS 2.2.4, 2.2.5, 3.2.5.4): over a few
/// seeds, groups are created, joined, left and destroyed, information changes, requests
/// complete and hosts migrate.
#[test]
fn property_covers_groups_info_and_migration() {
    let mut seen = [0usize; 6];
    for seed in 0..40 {
        let (mesh, result) = property_run(seed);
        result.unwrap_or_else(|e| panic!("{e}"));
        for i in 0..mesh.ids.len() {
            for e in &mesh.node(i).events {
                let k = match e {
                    Event::NameTable(TableChange::GroupCreated { .. }) => 0,
                    Event::NameTable(TableChange::MemberAdded { .. }) => 1,
                    Event::NameTable(TableChange::GroupDestroyed { .. }) => 2,
                    Event::NameTable(TableChange::InfoUpdated { .. }) => 3,
                    Event::Completed { result: Ok(()), .. } => 4,
                    Event::HostMigrated { .. } => 5,
                    _ => continue,
                };
                if let Some(n) = seen.get_mut(k) {
                    *n += 1;
                }
            }
        }
    }
    assert!(seen.iter().all(|n| *n > 0), "created, added, destroyed, info, completed, migrated: {seen:?}");
}
