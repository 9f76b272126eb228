//! Test support for the session layers, never published (docs/ARCHITECTURE.md, "Test support"):
//! the simulator's scenarios live here and in `dplay-session/tests`, not in a product crate's
//! source.
//!
//! - [`sim_check`]: DirectPlay 8 sessions on `dplay-sim` (a [`sim_check::Mesh`] by index) and
//!   the many-seed name-table property that `cargo xtask sim` runs
//!   (`examples/name_table_sweep.rs`).
//! - [`dp4_sim`]: DirectPlay 4 sessions wired together in memory with every datagram and TCP
//!   write captured, and the scenarios the tshark conformance test replays.
//! - [`dp4_node`]: DirectPlay 4 sessions and scripted Windows-shaped peers on `dplay-sim`,
//!   TCP streams included.
//! - [`wait`]: a runtime's events awaited, with a timeout, by the tests over real sockets.
#![deny(missing_docs)]

pub mod dp4_node;
pub mod dp4_sim;
pub mod sim_check;
pub mod wait;
