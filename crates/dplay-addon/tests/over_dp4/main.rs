//! The add-on (FS98 dialect) over DirectPlay 4 sessions on a small simulated network of UDP
//! datagrams and TCP streams: a host, two players and an observer exchanging positions under
//! loss, enumeration under GUID_FS6, a refused join, a removed player, the end of the session
//! and FS98's two groups (seed 004; FS-MULTIPLAYER.md 1.4, 1.5; MC-DPL4CS 2.1, 3.1, 3.2).
//!
//! Replay one seed with `DPLAY_SIM_SEED=<seed>`; run more with `DPLAY_SIM_SEEDS=<n>`.

#[path = "../common/mod.rs"]
mod common;
mod groups;
mod lifecycle;
mod migration;
mod net;
mod scenarios;
mod support;
mod trace;
