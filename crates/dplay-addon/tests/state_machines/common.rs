//! Helpers for driving an [`Endpoint`] in tests.

use std::time::{Duration, Instant};

use dplay_addon::packet::{Dialect, Packet};
use dplay_addon::{Endpoint, Event, Target};

/// The one clock reading of a test run; every other instant is this plus a duration.
#[allow(clippy::disallowed_methods)] // tests need one real Instant to offset from
pub(crate) fn t0() -> Instant {
    Instant::now()
}

/// `secs` seconds after `base`.
pub(crate) fn at(base: Instant, secs: f64) -> Instant {
    base + Duration::from_secs_f64(secs)
}

/// Everything queued for sending, parsed back: (target, guaranteed, packet).
pub(crate) fn sent(e: &mut impl Endpoint, dialect: Dialect) -> Vec<(Target, bool, Packet)> {
    std::iter::from_fn(|| e.poll_outgoing())
        .map(|o| (o.to, o.guaranteed, Packet::parse(dialect, &o.bytes).expect("we emit valid packets")))
        .collect()
}

/// Every queued event.
pub(crate) fn events(e: &mut impl Endpoint) -> Vec<Event> {
    std::iter::from_fn(|| e.poll_event()).collect()
}

/// The bytes of `p` in `dialect`.
pub(crate) fn wire(dialect: Dialect, p: &Packet) -> Vec<u8> {
    p.to_vec(dialect).expect("emit")
}
