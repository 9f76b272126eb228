//! The KeepAlive timer: after a period with nothing received, send a reliable KeepAlive
//! DFRAME, which then times out and retries like any reliable frame (MC-DPL8R 3.1.2.6,
//! 3.1.6.6).

use std::time::Instant;

use crate::config::Config;
use crate::connection::{Connection, Phase};
use crate::event::MessageKind;
use crate::send_queue::{Body, OutMessage};
use crate::timer::Timer;

impl Connection {
    /// The timer ticks at the configured granularity (4 s) and checks the silence.
    pub(crate) fn arm_keepalive(&mut self, now: Instant, cfg: &Config) {
        self.timers.set(Timer::KeepAlive, now + cfg.keepalive_granularity());
    }

    /// Sends a KeepAlive when nothing has been received for `keepalive_idle` and nothing is
    /// queued or in flight (which would itself draw an answer).
    pub(crate) fn on_keepalive_timer(&mut self, now: Instant, cfg: &Config) {
        if self.phase != Phase::Established {
            return;
        }
        let silent = now.saturating_duration_since(self.last_rx) >= cfg.keepalive_idle;
        if silent && self.sender.is_idle() && self.closing.is_none() {
            self.sender.push(OutMessage::new(Vec::new(), MessageKind::RELIABLE_SEQUENTIAL, Body::KeepAlive));
        }
        self.arm_keepalive(now, cfg);
    }
}
