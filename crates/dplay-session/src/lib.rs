//! The DirectPlay 8 session layer (MC-DPL8CS; MS-DPDX 3.1.5; MC-DPLHP), sans-IO, over the
//! `dplay-dframe` transport.
//!
//! One [`Session`] is one local player. It owns the transport [`dplay_dframe::Endpoint`] of its
//! socket and speaks the session messages of `dplay_wire::dp8::session` on it: host enumeration
//! (EnumQuery / EnumResponse), the join sequences of MC-DPL8CS 3.1.5.1-3.1.5.2 and MS-DPDX 4.3
//! (PLAYER_CONNECT_INFO, SEND_CONNECT_INFO, ADD_PLAYER, PATH_TEST, INSTRUCT_CONNECT,
//! SEND_PLAYER_DPNID), the versioned name table, disconnects and integrity checks
//! (MC-DPL8CS 3.2.5.1-3.2.5.3), host migration (MC-DPL8CS 3.2.5.4) and application data.
//! Roles: host and peer (peer-to-peer), server and client (client/server). A host may require
//! fast signing of every connection (`DPNSESSION_FAST_SIGNED`, through the transport's
//! [`dplay_dframe::Signing`]). Groups and information updates (MC-DPL8CS 2.2.4, 2.2.5, 3.4,
//! 3.5) and sends with completion (2.2.3.2, 3.3) are part of it.
//!
//! DirectPlay 4 sessions (MC-DPL4CS: Flight Simulator 98/2000 and other DirectPlay 4 games) are
//! the separate [`dp4`] module, with the same handle/poll shape.
//!
//! This crate never reads a clock, opens a socket or spawns a thread: time comes in as `now`,
//! datagrams go out through [`Session::poll_transmit`], and randomness (the instance GUID,
//! EnumPayload values) comes from a seeded RNG in the [`SessionConfig`].
//!
//! # Poll order
//!
//! After any `handle_*` call or command, drain [`Session::poll_transmit`] into the socket and
//! [`Session::poll_event`] into the application, then sleep until [`Session::poll_timeout`]
//! and call [`Session::handle_timeout`].
#![warn(clippy::indexing_slicing)]

mod admission;
mod app_data;
mod completion;
mod config;
pub mod dp4;
#[cfg(feature = "sim")]
pub mod dp4_sim;
mod enumeration;
mod event;
mod groups;
mod join_host;
mod join_peer;
mod leave;
mod migration;
mod name_table;
mod path_test;
#[cfg(test)]
mod scenarios;
mod session;
#[cfg(any(test, feature = "sim"))]
pub mod sim_check;
mod stats;
mod table_ops;

pub use admission::DPNERR_INVALIDPARAM;
pub use app_data::{EARLY_DATA_BYTES, EARLY_DATA_MESSAGES};
pub use completion::MAX_PENDING;
pub use config::{Limits, Mode, SessionConfig};
pub use event::{CommandError, CompletionError, EndReason, Event, SendFlags, TableChange};
pub use groups::MAX_GROUPS;
pub use join_host::DPNERR_SESSIONFULL;
pub use name_table::{NameTable, OpError};
pub use session::{Phase, Session};
pub use stats::{Refusals, Stats};
