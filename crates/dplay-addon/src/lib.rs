//! The Microsoft Flight Simulator multiplayer "add-on" protocol, sans-IO (seed 004;
//! FS-MULTIPLAYER.md).
//!
//! * [`packet`]: the MULTIPLAYER_PACKET_HEADER, every FS98 packet id (0x1000-0x1020) and the
//!   payloads the SDK defines, and the FS2004 dialect with its player info.
//! * [`units`]: 48-bit fixed-point latitude, longitude and altitude, the pbh word, 16.16
//!   velocities, and their conversions.
//! * [`tracking`]: other players' latest positions, the `packet_index` rule, the 10-second
//!   collision-avoidance window, extrapolation, planes.
//! * [`traffic`]: [`TrafficSnapshot`], one row per tracked aircraft, for people and programs.
//! * [`client`]: the add-on as a player or an observer (which takes over the host's duties when
//!   the session's host role migrates to it); [`host`]: the host of a session: FS98's join
//!   handshake, or FS2004's player data.
//! * [`session_iface`]: the small interface to a session layer (DirectPlay 8 or 4): players
//!   joined and left, messages in from an id, [`Outgoing`] messages to one or all, guaranteed or
//!   not, and [`Event`]s.
//! * [`over_dp8`]: [`AddonOverDp8`], the add-on over a DirectPlay 8 session
//!   (`dplay-session`), driven like the session itself.
//! * [`over_dp4`]: [`AddonOverDp4`], the FS98 dialect over a DirectPlay 4 session
//!   (`dplay_session::dp4`) under [`GUID_FS6`], driven the same way.
//!
//! This crate never reads a clock, opens a socket or spawns a thread: `now` is a parameter and
//! every output is queued for the caller. Hostile input is counted and dropped, never a panic.
//!
//! # The handle/poll contract
//!
//! [`AddonOverDp8`] (and [`AddonOverDp4`]) are driven exactly like the session they own: the
//! caller hands every received datagram to `handle_datagram`, calls `handle_timeout` once
//! `poll_timeout`'s instant has passed, and after any input or command drains `poll_transmit`
//! into the socket and `poll_event` into the application until both return `None`. Commands to
//! the add-on go through [`AddonOverDp8::with_client`] or [`AddonOverDp8::with_host`], which
//! pump the session afterwards. `examples/observer.rs` spells the loop out over std
//! `UdpSocket`s.
//!
//! # Lifecycle
//!
//! 1. **Join**: [`AddonOverDp8::join`] (or [`AddonOverDp8::host_session`]); once the session is
//!    joined the add-on starts and reports [`Event::Joined`] with the role granted, or
//!    [`Event::Refused`].
//! 2. **Fly or watch**: a player gives its position with [`Client::set_position`] and the add-on
//!    sends it four times a second; everyone's [`Tracker`] follows the others
//!    ([`Event::PositionUpdated`], [`Event::PlaneChanged`], [`Event::Chat`]).
//! 3. **Leave**: [`Client::leave`] (or [`Host::end_session`]) ends the add-on, which leaves the
//!    session; keep driving until [`AddonOverDp8::session`]`().is_finished()` so
//!    the others see a graceful leave.
//!
//! # Errors and what to do
//!
//! - [`CommandError`] from a [`Client`] command: the command does not fit the add-on's state
//!   ([`Client::state`]): wait for [`Event::Joined`] before flying, do not ask twice to become
//!   an observer, do not report a crash with a player inside its collision-avoidance window.
//! - Session commands fail with [`dplay_session::CommandError`] (see that crate's docs).
//! - [`Event::Disconnect`] with a [`DisconnectReason`] says why the add-on closed its session:
//!   refused, removed by the host, the session ended, or we left.
#![deny(missing_docs)]
#![warn(clippy::indexing_slicing)]

mod bridge;
pub mod client;
pub mod host;
pub mod over_dp4;
pub mod over_dp8;
pub mod packet;
pub mod session_iface;
pub mod tracking;
pub mod traffic;
pub mod units;

#[cfg(test)]
mod testutil;

pub use client::{Client, ClientConfig, ClientState, CommandError, PositionFormat};
pub use host::{Host, HostConfig, HostPolicy};
pub use over_dp4::{
    AddonOverDp4, FS61_REFUSE_PARAMS, FS61_REQUEST_PARAMS, GUID_FS6, OverDp4Event, OverDp4Stats,
};
pub use over_dp8::{AddonOverDp8, FS2004_PORT, GUID_FS2004, OverDp8Event, OverDp8Stats};
pub use packet::{Dialect, Packet, PacketId};
pub use session_iface::{DisconnectReason, Endpoint, Event, Outgoing, PlayerId, Role, Stats, Target};
pub use tracking::{Position, Tracker, Velocity};
pub use traffic::{Aircraft, TrafficSnapshot};
