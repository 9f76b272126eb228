//! What the voice server accepts from one client (MC-DPLVP 5.1; docs/limits.md, "Voice").

use std::time::{Duration, Instant};

/// The largest `SpeechData` accepted: the largest frame of 1.3.7 is PCM's 394 bytes; 1 KiB
/// leaves room for a codec the table does not list and stays well under 4 KiB.
pub const MAX_SPEECH_DATA: usize = 1024;
/// Speech messages per second a client may send on average. The codecs of 1.3.7 send 10 to
/// 20 frames a second; twice the fastest leaves room for jitter.
pub const SPEECH_PER_SECOND: u32 = 40;
/// Speech messages a client may send at once after a quiet spell (a burst that was held up).
pub const SPEECH_BURST: u32 = 80;

/// A token bucket: `SPEECH_PER_SECOND` refilled continuously, at most `SPEECH_BURST` held.
#[derive(Debug, Clone)]
pub(crate) struct RateCap {
    tokens: f64,
    last: Instant,
}

impl RateCap {
    pub(crate) fn new(now: Instant) -> Self {
        Self { tokens: f64::from(SPEECH_BURST), last: now }
    }

    /// Takes one token; false when the client is over its rate.
    pub(crate) fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).min(Duration::from_secs(10));
        self.last = now.max(self.last);
        self.tokens =
            (self.tokens + elapsed.as_secs_f64() * f64::from(SPEECH_PER_SECOND)).min(f64::from(SPEECH_BURST));
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}
