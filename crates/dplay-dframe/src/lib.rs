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
//! an RNG seeded from the operating system by default, or from [`Config::with_seed`] to replay
//! a run. Fast signing (CONNECTED_SIGNED, [`Signing::Fast`]) is implemented; full signing is
//! refused at once (INDEX F-9, docs/decisions.md).
//!
//! # The handle/poll contract
//!
//! The caller owns the socket and the clock. Inputs: [`Endpoint::handle_datagram`] for every
//! datagram the socket receives, [`Endpoint::handle_timeout`] once [`Endpoint::poll_timeout`]'s
//! instant has passed, and commands ([`Endpoint::connect`], [`Endpoint::send`],
//! [`Endpoint::disconnect`], [`Endpoint::abort`]). After any of them, drain
//! [`Endpoint::poll_transmit`] into the socket and [`Endpoint::poll_event`] into the
//! application until both return `None`, then wait for the next datagram or the next
//! [`Endpoint::poll_timeout`], whichever comes first. `now` must never go backwards.
//!
//! # Lifecycle of a connection
//!
//! 1. [`Endpoint::connect`] (or a peer's CONNECT, accepted when [`Config::accept_incoming`]):
//!    [`Event::Connected`], or [`Event::Disconnected`] with
//!    [`DisconnectReason::ConnectTimeout`] after 14 unanswered retries (about a minute).
//! 2. [`Endpoint::send`] in any of the four [`MessageKind`]s (it may be called while
//!    connecting); [`Event::Message`] at the other end. [`Endpoint::send_tracked`] also gives
//!    the message a [`Priority`] and a deadline, and reports its end with [`Event::SendDone`]:
//!    acknowledged (reliable), sent (unreliable), timed out unsent, or lost with the connection.
//!    [`Endpoint::send_queue`] counts what waits.
//! 3. [`Endpoint::disconnect`]: what is queued goes first, then END_STREAM; once both sides'
//!    END_STREAMs are acknowledged, [`Event::Disconnected`] with [`DisconnectReason::Closed`]
//!    (a few round trips on a working link). Keep driving the endpoint until then. The connection then
//!    lingers for [`Config::linger`], only answering the peer's retries;
//!    [`Endpoint::active_connection_count`] does not count it, so a program may stop once that
//!    is 0. [`Endpoint::abort`] ends at once with HARD_DISCONNECT instead. A disconnect before
//!    the handshake completed ends the attempt at once, dropping what was queued.
//!
//! # Errors and what to do
//!
//! - [`ConnectError::AlreadyConnected`]: use the connection there is, or wait for its
//!   [`Event::Disconnected`] before connecting again.
//! - [`SendError::NotConnected`] / [`SendError::Closing`]: the connection is gone or going;
//!   connect again if the application needs to. [`SendError::QueueFull`]: the peer is not
//!   keeping up; send again after some [`Event::Message`]s or timeouts have drained the queue,
//!   or drop the message if it was not reliable anyway. [`SendError::TooLarge`] /
//!   [`SendError::Empty`]: the message itself is wrong; raise [`Config::max_message_size`] or
//!   split it.
//! - [`DisconnectReason`] says how a connection ended: `RetriesExhausted` and `ConnectTimeout`
//!   mean the peer is unreachable or gone, `ProtocolViolation` that it broke a rule (see
//!   [`Stats`] and the `tracing` logs), the others a graceful or hard close by one side.
//! - Bad datagrams are never errors: they are dropped and counted ([`Endpoint::endpoint_stats`],
//!   [`Endpoint::stats`], [`DropReason`]).
//!
//! # Example
//!
//! Two endpoints, the datagrams carried by hand (a program uses a UDP socket: see
//! `examples/udp_pair.rs`):
//!
//! ```
//! use std::time::Instant;
//! use dplay_dframe::{Config, Endpoint, Event, MessageKind};
//!
//! # #[allow(clippy::disallowed_methods)]
//! let now = Instant::now(); // the caller's clock; this crate never reads one
//! let (a_addr, b_addr) = ("10.0.0.1:2302".parse().unwrap(), "10.0.0.2:6073".parse().unwrap());
//! let mut a = Endpoint::new(Config::default(), now);
//! let mut b = Endpoint::new(Config::default(), now);
//! a.connect(now, b_addr).unwrap();
//! a.send(now, b_addr, b"hello", MessageKind::RELIABLE_SEQUENTIAL).unwrap();
//! let mut received = Vec::new();
//! for _ in 0..10 {
//!     while let Some(t) = a.poll_transmit() {
//!         b.handle_datagram(now, a_addr, &t.contents);
//!     }
//!     while let Some(t) = b.poll_transmit() {
//!         a.handle_datagram(now, b_addr, &t.contents);
//!     }
//!     while let Some(event) = b.poll_event() {
//!         if let Event::Message { data, .. } = event {
//!             received.push(data);
//!         }
//!     }
//! }
//! assert_eq!(received, [b"hello".to_vec()]);
//! ```
#![deny(missing_docs)]
#![warn(clippy::indexing_slicing)]

mod coalesce;
mod config;
mod connection;
mod disconnect;
mod drop_log;
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

pub use config::{COALESCE_VERSION, Config, MIN_DATAGRAM, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION};
pub use endpoint::{Endpoint, EndpointStats, Transmit};
pub use event::{
    Cancelled, ConnectError, DisconnectReason, Event, FirstFrame, MessageKind, Priority, SendError,
    SendOutcome, Tracked,
};
pub use half_open::HALF_OPEN_BYTES;
pub use seq::WINDOW;
pub use signing::{SIGNING_VERSION, Signing, SigningMode};
pub use stats::{DropReason, Drops, Stats};
pub use timer::Timer;
#[cfg(test)]
mod tests;
