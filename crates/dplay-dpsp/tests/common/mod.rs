//! Helpers shared by the integration tests.

#![allow(dead_code)] // each test binary uses a subset of the helpers

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Instant;

use dplay_dpsp::{Dpsp, Event, Transmit};

/// The one clock reading of a test; every other instant is this plus a duration.
#[allow(clippy::disallowed_methods)] // tests need one real Instant to offset from
pub(crate) fn base() -> Instant {
    Instant::now()
}

/// A peer address, 10.0.0.n:2300.
pub(crate) fn peer(n: u8) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, n), 2300))
}

/// Every queued datagram.
pub(crate) fn transmits(d: &mut Dpsp) -> Vec<Transmit> {
    std::iter::from_fn(|| d.poll_transmit()).collect()
}

/// Every queued event.
pub(crate) fn events(d: &mut Dpsp) -> Vec<Event> {
    std::iter::from_fn(|| d.poll_event()).collect()
}

/// The messages delivered among `events`.
pub(crate) fn delivered(events: &[Event]) -> Vec<&[u8]> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Delivered { message, .. } => Some(message.as_slice()),
            _ => None,
        })
        .collect()
}
