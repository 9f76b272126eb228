//! The DirectPlay 8 reliable transport (MC-DPL8R; MS-DPDX 3.1), sans-IO.
//!
//! An [`Endpoint`] serves one UDP socket and holds every connection on it, keyed by the peer's
//! address. It implements the CONNECT/CONNECTED handshake with its retry timer and version
//! negotiation, windowed data with 8-bit sequence numbers, cumulative `bNRcv`, 64-bit SACK and
//! send masks, retries with backoff, delayed acknowledgements, the four delivery categories
//! of MS-DPDX 1.3, large-message splitting and reassembly, coalescing of small messages,
//! KeepAlives, graceful (END_STREAM) and hard (HARD_DISCONNECT) disconnects, and per-connection
//! counters. Datagrams with lead byte 0 (enumeration, path test) are handed to the caller.
//!
//! This crate never reads a clock, opens a socket or spawns a thread: time comes in as `now`,
//! datagrams go out through [`Endpoint::poll_transmit`], and randomness (`dwSessID`) comes from
//! a seeded RNG in the [`Config`]. Fast signing (CONNECTED_SIGNED, [`Signing::Fast`]) is
//! implemented; full signing is refused at once (INDEX F-9, docs/decisions.md).
//!
//! # Poll order
//!
//! After any `handle_*` call or command, drain [`Endpoint::poll_transmit`] and
//! [`Endpoint::poll_event`], then sleep until [`Endpoint::poll_timeout`] and call
//! [`Endpoint::handle_timeout`].
#![warn(clippy::indexing_slicing)]

mod coalesce;
mod config;
mod connection;
mod disconnect;
mod endpoint;
mod event;
mod half_open;
mod handshake;
mod keepalive;
mod receive;
mod send_queue;
mod seq;
mod signing;
mod stats;
mod timer;

pub use config::{COALESCE_VERSION, Config, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION};
pub use endpoint::{Endpoint, EndpointStats, Transmit};
pub use event::{ConnectError, DisconnectReason, Event, MessageKind, SendError};
pub use seq::WINDOW;
pub use signing::{SIGNING_VERSION, Signing, SigningMode};
pub use stats::{DropReason, Drops, Stats};
pub use timer::Timer;
#[cfg(test)]
mod tests;
