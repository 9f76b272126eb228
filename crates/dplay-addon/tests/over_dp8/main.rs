//! The add-on over DirectPlay 8 sessions on the simulated network (`dplay-sim`): a host, two
//! players and an observer exchanging positions under loss, a refused join, a change from
//! player to observer, and the trace of a join (seed 004; FS-MULTIPLAYER.md 1.4, 1.5).
//!
//! Replay one seed with `DPLAY_SIM_SEED=<seed>`; run more with `DPLAY_SIM_SEEDS=<n>`.

#[path = "../common/mod.rs"]
mod common;
mod lifecycle;
mod scenarios;
mod support;
mod trace;
