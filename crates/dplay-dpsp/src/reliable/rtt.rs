//! Round-trip estimation, the retry time-out and the peer's receive rate (MC-DPL4R 3.1.2,
//! 2.2.4, 3.1.5.4).

use std::time::Duration;

use super::Config;

/// The round-trip state of one link.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rtt {
    pub(crate) srtt: Option<Duration>,
    pub(crate) rttvar: Duration,
    /// Expiries of the retry timer since the last new acknowledgement.
    backoff: u32,
}

impl Rtt {
    pub(crate) fn new() -> Self {
        Self { srtt: None, rttvar: Duration::ZERO, backoff: 0 }
    }

    /// A sample from an ACK that echoes the serial of the send it answers, so it can never
    /// match a retry (MC-DPL4R 2.2.4 `serial`). Smoothed as RFC 6298 does.
    pub(crate) fn sample(&mut self, rtt: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let err = srtt.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + err) / 4;
                self.srtt = Some((srtt * 7 + rtt) / 8);
            }
        }
    }

    /// New data was acknowledged: the back-off ends.
    pub(crate) fn acked(&mut self) {
        self.backoff = 0;
    }

    /// The retry timer expired: double the time-out, up to `max_rto`.
    pub(crate) fn expired(&mut self) {
        self.backoff = self.backoff.saturating_add(1).min(16);
    }

    /// The retry time-out: average round trip plus three deviations (MC-DPL4R 3.1.2), 1 s
    /// before any sample, at least `min_rto + ack_delay` (a peer may hold its ACK that long,
    /// and samples taken from immediate ACKs do not show it), at most `max_rto`, doubled per
    /// back-off.
    pub(crate) fn rto(&self, config: &Config) -> Duration {
        let base = match self.srtt {
            None => config.initial_rto,
            Some(srtt) => srtt.saturating_add(self.rttvar.saturating_mul(3)),
        };
        let floor = config.min_rto.saturating_add(config.ack_delay);
        let base = base.max(floor).min(config.max_rto);
        base.saturating_mul(1 << self.backoff.min(16)).min(config.max_rto)
    }

    /// The round trip, or the initial time-out before any sample.
    pub(crate) fn estimate(&self, config: &Config) -> Duration {
        self.srtt.unwrap_or(config.initial_rto)
    }
}

/// The peer's `bytes received` and `local tick count` from its last ACK or NACK, and the
/// rate they imply (MC-DPL4R 2.2.3, 2.2.4, 3.1.5.4).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PeerRate {
    last: Option<(u32, u32)>,
    pub(crate) bytes_received: u32,
    pub(crate) rate: Option<u64>,
}

impl PeerRate {
    pub(crate) fn update(&mut self, bytes_received: u32, tick: u32) {
        if let Some((bytes, at)) = self.last {
            let ms = tick.wrapping_sub(at);
            // Ticks that went backwards (wrapped far) or did not move give no rate.
            if ms > 0 && ms < u32::MAX / 2 {
                let delta = u64::from(bytes_received.wrapping_sub(bytes));
                self.rate = Some(delta.saturating_mul(1000) / u64::from(ms));
            }
        }
        self.last = Some((bytes_received, tick));
        self.bytes_received = bytes_received;
    }
}
