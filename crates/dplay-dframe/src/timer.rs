//! The timers of MC-DPL8R 3.1.2, one variant each, held in a table of absolute deadlines.

use std::time::Instant;

/// A per-connection timer (MC-DPL8R 3.1.2, plus the close linger this crate adds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// Resends CONNECT or CONNECTED until answered (MC-DPL8R 3.1.2.1, 3.1.6.1).
    ConnectRetry,
    /// Sends a dedicated SACK if no DFRAME carried the acknowledgement (MC-DPL8R 3.1.2.2).
    DelayedAck,
    /// Sends a dedicated SACK carrying the send mask (MC-DPL8R 3.1.2.3).
    DelayedSendMask,
    /// The earliest retry deadline of the frames in flight (MC-DPL8R 3.1.2.5).
    Retry,
    /// Sends a KeepAlive after a period with nothing received (MC-DPL8R 3.1.2.6).
    KeepAlive,
    /// Spaces the HARD_DISCONNECT frames (MC-DPL8R 3.1.2.4).
    HardDisconnect,
    /// After a graceful close, keeps acknowledging the peer's retries for a while (decision in
    /// docs/decisions.md: the spec has no TIME_WAIT, but a lost final SACK would otherwise make
    /// the peer report a lost connection).
    Linger,
    /// The earliest deadline of a queued tracked message (`Tracked::expires`; the send
    /// timeout of DirectPlay 8's SendTo, not a timer of MC-DPL8R).
    SendDeadline,
}

impl Timer {
    const COUNT: usize = 8;

    fn index(self) -> usize {
        match self {
            Self::ConnectRetry => 0,
            Self::DelayedAck => 1,
            Self::DelayedSendMask => 2,
            Self::Retry => 3,
            Self::KeepAlive => 4,
            Self::HardDisconnect => 5,
            Self::Linger => 6,
            Self::SendDeadline => 7,
        }
    }

    pub(crate) const ALL: [Self; Self::COUNT] = [
        Self::ConnectRetry,
        Self::DelayedAck,
        Self::DelayedSendMask,
        Self::Retry,
        Self::KeepAlive,
        Self::HardDisconnect,
        Self::Linger,
        Self::SendDeadline,
    ];
}

/// The deadlines of one connection; the next wakeup is the earliest.
#[derive(Debug, Clone, Default)]
pub(crate) struct TimerTable {
    deadlines: [Option<Instant>; Timer::COUNT],
}

impl TimerTable {
    pub(crate) fn set(&mut self, timer: Timer, at: Instant) {
        if let Some(slot) = self.deadlines.get_mut(timer.index()) {
            *slot = Some(at);
        }
    }

    /// Arms `timer` for `at` unless it is already due earlier.
    pub(crate) fn set_earlier(&mut self, timer: Timer, at: Instant) {
        if self.get(timer).is_none_or(|old| at < old) {
            self.set(timer, at);
        }
    }

    pub(crate) fn stop(&mut self, timer: Timer) {
        if let Some(slot) = self.deadlines.get_mut(timer.index()) {
            *slot = None;
        }
    }

    pub(crate) fn stop_all(&mut self) {
        self.deadlines = [None; Timer::COUNT];
    }

    pub(crate) fn get(&self, timer: Timer) -> Option<Instant> {
        self.deadlines.get(timer.index()).copied().flatten()
    }

    /// The earliest deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.deadlines.iter().flatten().min().copied()
    }

    /// Disarms `timer` and returns true when it is due at `now`.
    pub(crate) fn take_if_due(&mut self, timer: Timer, now: Instant) -> bool {
        let due = self.get(timer).is_some_and(|at| at <= now);
        if due {
            self.stop(timer);
        }
        due
    }
}
