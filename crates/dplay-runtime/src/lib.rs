//! The only crate of the stack that touches sockets, clocks and threads.
//!
//! A [`Runtime`] owns one UDP socket and one thread running a mio event loop. It drives any
//! sans-IO [`Protocol`] (the DirectPlay 8 session layer, the add-on on top of it, a DirectPlay 4
//! session): it reads every datagram until the socket would block and hands each to
//! [`Protocol::handle_datagram`], calls [`Protocol::handle_timeout`] at the earliest
//! [`Protocol::poll_timeout`], and writes every [`Protocol::poll_transmit`], keeping a datagram
//! when the socket is full and waiting until it is writable. Applications talk to it through
//! crossbeam channels (commands in, events out) and a mio `Waker`; it stops on
//! [`Runtime::shutdown`] or when dropped.
//!
//! It contains no protocol logic: everything it knows about DirectPlay is in the crates it drives.
//! Two drivers come with it: [`Dp8Protocol`] (a DirectPlay 8 session) and [`AddonProtocol`] (the
//! Flight Simulator add-on over a DirectPlay 8 session).
#![allow(clippy::disallowed_methods)] // this crate is where the clock is read (clippy.toml)

mod addon;
mod dp8;
mod error;
mod event_loop;
mod protocol;
mod socket;

pub use addon::{AddonCommand, AddonEvent, AddonProtocol, AddonRole};
pub use dp8::{Dp8Command, Dp8Event, Dp8Protocol, Player};
pub use error::RuntimeError;
pub use event_loop::{Runtime, RuntimeConfig};
pub use protocol::{Direction, Protocol, Tap};
