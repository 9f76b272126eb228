//! The timers of the fragmentation layer: one enum variant per timer the spec names, held in a
//! table of deadlines keyed by message; the next wakeup is the earliest (STYLE.md §2).

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use uuid::Uuid;

/// One message of one peer: a sender's outgoing message or a receiver's partial one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct MessageKey {
    pub(crate) peer: SocketAddr,
    pub(crate) guid: Uuid,
}

/// Which timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Timer {
    /// Resend the current PACKET2_DATA, or give up (MC-DPL4CS 3.1.2.4, 3.1.6.1).
    Packetize,
    /// Discard a partial message that received no fragment for a while (MC-DPL4CS 2.2.41).
    Discard,
}

/// Deadlines by timer and message, ordered by time.
#[derive(Debug, Default)]
pub(crate) struct TimerTable {
    by_key: BTreeMap<(Timer, MessageKey), Instant>,
    by_deadline: BTreeSet<(Instant, Timer, MessageKey)>,
}

impl TimerTable {
    /// Arms (or re-arms) `timer` for `key`.
    pub(crate) fn set(&mut self, timer: Timer, key: MessageKey, deadline: Instant) {
        if let Some(old) = self.by_key.insert((timer, key), deadline) {
            self.by_deadline.remove(&(old, timer, key));
        }
        self.by_deadline.insert((deadline, timer, key));
    }

    /// Disarms `timer` for `key`, if armed.
    pub(crate) fn cancel(&mut self, timer: Timer, key: MessageKey) {
        if let Some(old) = self.by_key.remove(&(timer, key)) {
            self.by_deadline.remove(&(old, timer, key));
        }
    }

    /// The earliest deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.by_deadline.first().map(|&(at, _, _)| at)
    }

    /// Removes and returns the earliest timer due at `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<(Timer, MessageKey)> {
        let &(at, timer, key) = self.by_deadline.first()?;
        if at > now {
            return None;
        }
        self.by_deadline.pop_first();
        self.by_key.remove(&(timer, key));
        Some((timer, key))
    }

    /// Number of armed timers.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }
}

/// `now + after`, for a deadline. A duration too long for `Instant` is capped at about a
/// year, which no timer of this layer reaches, so that configuration can never cause a panic.
pub(crate) fn later(now: Instant, after: Duration) -> Instant {
    const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);
    now.checked_add(after.min(YEAR)).unwrap_or(now)
}
