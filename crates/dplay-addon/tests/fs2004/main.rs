//! FS2004 as FS9 peers speak it, on the simulated network (`dplay-sim`): our FS2004 host, two
//! swift-shaped peers, one of our FS2004 players and an observer, under loss; then the host
//! migrates and the add-on host role goes on (issue 16; FS-MULTIPLAYER.md 3).
//!
//! Replay one seed with `DPLAY_SIM_SEED=<seed>`; run more with `DPLAY_SIM_SEEDS=<n>`.

// Shared with over_dp4 and over_dp8; its `Kind` is theirs (nodes::Kind is this test's).
#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;
mod host_duties;
mod nodes;
mod scenario;
mod swift;
