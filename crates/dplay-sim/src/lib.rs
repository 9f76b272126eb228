//! A deterministic simulated network for tests, after smoltcp's netsim and neqo's test-fixture sim.
//!
//! A [`Sim`] drives any number of sans-IO [`Node`]s through `handle_datagram`, `handle_timeout`,
//! `poll_transmit` and `poll_timeout`. Every directed link between two nodes has a [`LinkConfig`]:
//! latency, jitter, loss, duplication, reordering, corruption and an MTU, and any pair of nodes
//! can be partitioned and healed, now or at a scheduled time mid-run. [`LinkStats`] counts what
//! each link did, and an optional trace (see [`Sim::enable_trace`]) has one line per datagram
//! plus notes and a summary supplied by the test. NATs are link models ([`NatConfig`]), and
//! nodes may also use TCP-like streams ([`stream`]: [`Node::handle_stream`],
//! [`Node::poll_stream`], [`Sim::listen`]).
//!
//! Time is virtual: the sim reads the clock once, for a base `Instant`, and then jumps from event
//! to event, so a run that covers minutes of protocol time takes milliseconds and never sleeps.
//! All randomness comes from one seed (a `ChaCha8Rng`): the same seed and the same nodes give the
//! same run, byte for byte and line for line. [`Sim::from_env`] and [`seeds_from_env`] read
//! `DPLAY_SIM_SEED` / `DPLAY_SIM_SEEDS`, and a run that panics prints
//! `DPLAY_SIM_SEED=<seed>` so it can be replayed (see [`run_seeds`]).
//!
//! This crate never opens a socket, never spawns a thread, never sleeps, and depends on no other
//! crate of the workspace: it only moves byte vectors between the nodes a test gives it.
//!
//! # Order of events
//!
//! Before every step the sim drains each node (in the order they were added) of its transmits and
//! asks for its next deadline. It then takes the earliest of: the queued datagrams and scheduled
//! partition changes (in the order they were queued when their times are equal), and the node
//! deadlines (the first-added node first when equal). Queued events come before node deadlines at
//! the same instant. A deadline in the past is handled at the current time.
//!
//! ```
//! use std::net::SocketAddr;
//! use std::time::{Duration, Instant};
//! use dplay_sim::{LinkConfig, Node, Sim, Transmit};
//!
//! /// Sends one datagram to `peer` at the start, counts what it receives.
//! struct Pinger { peer: SocketAddr, sent: bool, received: usize }
//!
//! impl Node for Pinger {
//!     fn handle_datagram(&mut self, _now: Instant, _from: SocketAddr, _data: &[u8]) {
//!         self.received += 1;
//!     }
//!     fn handle_timeout(&mut self, _now: Instant) {}
//!     fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
//!         let first = !self.sent;
//!         self.sent = true;
//!         first.then(|| Transmit { destination: self.peer, contents: b"ping".to_vec() })
//!     }
//!     fn poll_timeout(&mut self) -> Option<Instant> { None }
//! }
//!
//! let a: SocketAddr = "10.0.0.1:6073".parse().unwrap();
//! let b: SocketAddr = "10.0.0.2:2302".parse().unwrap();
//! let mut sim = Sim::from_env(1);
//! sim.set_default_link(LinkConfig::clean().with_latency(Duration::from_millis(20)));
//! let na = sim.add_node(a, Pinger { peer: b, sent: false, received: 0 });
//! let nb = sim.add_node(b, Pinger { peer: a, sent: false, received: 0 });
//! sim.run_for(Duration::from_millis(100));
//! assert_eq!(sim.node::<Pinger>(na).received, 1);
//! assert_eq!(sim.node::<Pinger>(nb).received, 1);
//! assert_eq!(sim.stats(na, nb).delivered, 1);
//! ```
#![deny(missing_docs)]

mod link;
mod nat;
mod seed;
mod sim;
pub mod stream;
mod trace;

use std::net::SocketAddr;
use std::time::Instant;

pub use link::{LinkConfig, LinkStats};
pub use nat::{Filtering, Mapping, NatConfig, NatId};
pub use seed::{SEED_VAR, SEEDS_VAR, run_seeds, seed_from_env, seeds_from_env, sweep_args};
pub use sim::{NodeId, Sim};
pub use stream::{StreamCommand, StreamConfig, StreamEnd, StreamEvent, StreamId, StreamStats};

/// A datagram a node wants sent: the sim delivers `contents` to the node bound to `destination`,
/// with the sender's address as `from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where the datagram goes.
    pub destination: SocketAddr,
    /// The datagram's bytes (a UDP payload).
    pub contents: Vec<u8>,
}

/// A sans-IO endpoint the sim can drive: the same four calls a real socket loop would make.
///
/// The sim calls `poll_transmit` until it returns `None` and then `poll_timeout` before every
/// step, so a node may change what it wants to send or when it wants to wake up after any call,
/// including calls a test makes through [`Sim::node_mut`].
pub trait Node {
    /// A datagram arrived from `from` at `now`.
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]);
    /// The deadline last returned by `poll_timeout` has been reached; `now` is at or after it.
    fn handle_timeout(&mut self, now: Instant);
    /// The next datagram to send at `now`, or `None` when there is nothing more for now.
    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit>;
    /// When the node next wants `handle_timeout`, or `None` for never. Returning the same
    /// deadline again after `handle_timeout` asks to be called again at once.
    fn poll_timeout(&mut self) -> Option<Instant>;
    /// A stream event ([`crate::stream`]); a node without streams never gets one.
    fn handle_stream(&mut self, _now: Instant, _event: StreamEvent) {}
    /// The next stream command at `now` (collected after the datagrams), or `None`.
    fn poll_stream(&mut self, _now: Instant) -> Option<StreamCommand> {
        None
    }
}
