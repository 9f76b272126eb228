//! The per-member rate cap: a token bucket of datagrams and one of bytes (docs/limits.md,
//! "Relay").

use std::time::{Duration, Instant};

/// What one member may have relayed: `datagrams` and `bytes` per second, with bursts of a
/// quarter second's worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Datagrams per second.
    pub datagrams: u32,
    /// Bytes per second.
    pub bytes: u32,
}

impl Default for RateLimit {
    /// 4,000 datagrams and 2 MiB per second: an FS2004 pilot in a full 32-pilot session sends
    /// about 1,240 position datagrams per second plus acknowledgements (docs/limits.md).
    fn default() -> Self {
        Self { datagrams: 4_000, bytes: 2 << 20 }
    }
}

/// The bursts allowed: this fraction of a second's worth.
const BURST: Duration = Duration::from_millis(250);

/// Two token buckets, refilled from the time passed in.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    datagrams: f64,
    bytes: f64,
    at: Option<Instant>,
}

impl Bucket {
    pub(crate) fn new() -> Self {
        Self { datagrams: 0.0, bytes: 0.0, at: None }
    }

    /// Takes one datagram of `len` bytes if both buckets hold enough.
    pub(crate) fn take(&mut self, now: Instant, len: usize, limit: RateLimit) -> bool {
        let burst = BURST.as_secs_f64();
        let (max_d, max_b) = (f64::from(limit.datagrams) * burst, f64::from(limit.bytes) * burst);
        let passed = self.at.map_or(burst, |at| now.saturating_duration_since(at).as_secs_f64());
        self.at = Some(now);
        self.datagrams = (self.datagrams + passed * f64::from(limit.datagrams)).min(max_d);
        self.bytes = (self.bytes + passed * f64::from(limit.bytes)).min(max_b);
        let len = len as f64;
        if self.datagrams < 1.0 || self.bytes < len {
            return false;
        }
        self.datagrams -= 1.0;
        self.bytes -= len;
        true
    }
}

#[cfg(test)]
mod tests;
