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
//! datagrams go out through [`Session::poll_transmit`], and randomness (the instance GUID, from
//! which every DPNID follows, and EnumPayload values) comes from an RNG seeded from the
//! operating system by default, or from [`SessionConfig::with_seed`] to replay a run.
//!
//! # The handle/poll contract
//!
//! The caller owns the UDP socket and the clock. Inputs: [`Session::handle_datagram`] for every
//! datagram the socket receives, [`Session::handle_timeout`] once [`Session::poll_timeout`]'s
//! instant has passed, and commands ([`Session::host`], [`Session::enum_hosts`],
//! [`Session::join`], [`Session::send_to`], [`Session::send_all`], [`Session::leave`], ...).
//! After any of them, drain [`Session::poll_transmit`] into the socket and
//! [`Session::poll_event`] into the application until both return `None`, then wait for the
//! next datagram or the next [`Session::poll_timeout`], whichever comes first. `now` must never
//! go backwards. `examples/host_and_join.rs` spells the loop out over a std `UdpSocket`.
//!
//! # Lifecycle
//!
//! 1. **Connect**: [`Session::host`] creates a session ([`Event::Joined`] at once), or
//!    [`Session::enum_hosts`] finds one ([`Event::HostFound`]) and [`Session::join`] joins it:
//!    [`Event::Joined`] with our DPNID, or [`Event::SessionEnded`] with the reason it failed.
//! 2. **Run**: [`Event::PlayerAdded`] and [`Event::PlayerRemoved`] track the name table
//!    ([`Session::name_table`]), [`Event::Message`] and [`Event::Chat`] carry data,
//!    [`Event::HostMigrated`] names a new host.
//! 3. **Leave**: [`Session::leave`] (or, for a host, [`Session::terminate_session`]) reports
//!    [`Event::SessionEnded`] at once, but the connections are still closing gracefully. Keep
//!    driving the session until [`Session::is_finished`] (a few round trips on a working link;
//!    tens of seconds if a peer stopped answering and its retries must run out) before
//!    dropping the socket; otherwise the others see a lost connection, not a leave. A session
//!    that ends on its own (terminated, host lost) also reports [`Event::SessionEnded`];
//!    nothing more comes after it.
//!
//! # Errors and what to do
//!
//! - [`CommandError::WrongState`]: the command does not fit [`Session::phase`] (joining twice,
//!   sending before [`Event::Joined`], a host-only command as a peer): wait for the event that
//!   changes the phase, or use a new `Session`. [`CommandError::UnknownPlayer`]: the DPNID left
//!   or is not connected yet; [`Event::PlayerRemoved`] tells which. [`CommandError::Transport`]:
//!   the transport refused the message ([`dplay_dframe::SendError`]: too large, queue full).
//! - [`EndReason`] says why a session ended: `Refused` carries the host's DPNERR code (a wrong
//!   password, a full session: [`DPNERR_SESSIONFULL`]), `HostLost` and `ConnectAttemptFailed`
//!   are network failures (try again, check the address and firewall), `Terminated` the host's
//!   decision, `Left` ours.
//! - Bad datagrams are never errors: they are dropped and counted in [`Session::stats`].
//!
//! # Example
//!
//! A host and a joiner, the datagrams carried by hand and the clock advanced to each deadline
//! (a program uses a UDP socket and waits instead):
//!
//! ```
//! use std::net::SocketAddr;
//! use std::time::Instant;
//! use dplay_session::{Event, Session, SessionConfig};
//! use uuid::Uuid;
//!
//! let app = Uuid::from_u128(0x1234);
//! let (host_addr, alice_addr): (SocketAddr, SocketAddr) =
//!     ("10.0.0.1:6073".parse().unwrap(), "10.0.0.2:2302".parse().unwrap());
//! # #[allow(clippy::disallowed_methods)]
//! let mut now = Instant::now(); // the caller's clock; this crate never reads one
//! let mut host = Session::new(SessionConfig::new(app, host_addr, "host"), now);
//! let mut alice = Session::new(SessionConfig::new(app, alice_addr, "alice"), now);
//! host.host(now).unwrap();
//! alice.join(now, host_addr, None).unwrap();
//! let mut joined = false;
//! for _ in 0..200 {
//!     let mut moved = false;
//!     while let Some(t) = host.poll_transmit() {
//!         alice.handle_datagram(now, host_addr, &t.contents);
//!         moved = true;
//!     }
//!     while let Some(t) = alice.poll_transmit() {
//!         host.handle_datagram(now, alice_addr, &t.contents);
//!         moved = true;
//!     }
//!     while let Some(event) = alice.poll_event() {
//!         joined |= matches!(event, Event::Joined { .. });
//!     }
//!     if !moved {
//!         // Nothing in flight: jump to the earliest deadline and run the timers.
//!         let Some(next) = host.poll_timeout().into_iter().chain(alice.poll_timeout()).min() else { break };
//!         now = now.max(next);
//!         host.handle_timeout(now);
//!         alice.handle_timeout(now);
//!     }
//!     if joined {
//!         break;
//!     }
//! }
//! assert!(joined && alice.name_table().len() == 2);
//! ```
//!
//! DirectPlay 4 sessions ([`dp4`]) follow the same contract with their own inputs (UDP and TCP)
//! and are documented there.
#![deny(missing_docs)]
#![warn(clippy::indexing_slicing)]

mod address_map;
mod admission;
mod app_data;
mod bans;
mod completion;
mod config;
pub mod dp4;
mod enumeration;
mod event;
mod groups;
mod indication;
mod join_host;
mod join_peer;
mod leave;
mod memory;
mod migration;
mod name_table;
pub mod nat_resolver;
mod path_test;
mod session;
mod stats;
mod table_ops;
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub mod test_hooks;
mod unprocessed;
mod voice;

pub use address_map::{AddressMap, AddressMapHandle};
pub use admission::DPNERR_INVALIDPARAM;
pub use app_data::{EARLY_DATA_BYTES, EARLY_DATA_MESSAGES};
pub use bans::{BanError, Bans, DPERR_ACCESSDENIED, DPNERR_HOSTREJECTEDCONNECTION, MAX_BAN_NAME, MAX_BANS};
pub use completion::MAX_PENDING;
pub use config::{Limits, MIN_PERIOD, Mode, SessionConfig};
/// A tracked send's priority, deadline and outcome ([`Session::send_to_tracked`]).
pub use dplay_dframe::{Cancelled, FirstFrame, Priority, SendOutcome, Tracked};
pub use event::{
    CommandError, CompletionError, EndReason, Event, ProcessToken, REFUSED_NAME_CHARS, SendFlags, TableChange,
};
pub use groups::MAX_GROUPS;
pub use join_host::DPNERR_SESSIONFULL;
pub use name_table::{ENTRY_OVERHEAD, NameTable, OpError, entry_bytes};
pub use session::{Phase, Session};
pub use stats::{Refusals, Stats};
