//! The voice server's counters, and its dropped messages by reason (MC-DPLVP 5.1), logged at
//! most once per reason per interval.

use std::time::{Duration, Instant};

/// Why a voice message was dropped. Each name contains `voice` or `speech`, as the refusals
/// summary shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VoiceDrop {
    /// Not a voice message: too short, an unknown type, a length that does not add up.
    Malformed,
    /// A target list over 64 (2.2.2.6): the whole message is dropped.
    TooManyTargets,
    /// `SpeechData` over [`crate::MAX_SPEECH_DATA`].
    TooLarge,
    /// Speech from a player that has not sent SETTINGSCONFIRM (5.1).
    NotConnected,
    /// Over the per-client rate ([`crate::SPEECH_PER_SECOND`]).
    RateLimited,
    /// A message this session type or a server does not take (3.2.5.5.1, 3.2.5.6.1).
    Unexpected,
}

impl VoiceDrop {
    /// Every reason, in the order the summary lists them.
    pub const ALL: [Self; 6] = [
        Self::Malformed,
        Self::TooManyTargets,
        Self::TooLarge,
        Self::NotConnected,
        Self::RateLimited,
        Self::Unexpected,
    ];

    /// The name in the refusals summary, `--json` and `/metrics`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Malformed => "voice_malformed",
            Self::TooManyTargets => "speech_too_many_targets",
            Self::TooLarge => "speech_too_large",
            Self::NotConnected => "speech_before_settings_confirm",
            Self::RateLimited => "speech_rate_limited",
            Self::Unexpected => "voice_unexpected",
        }
    }
}

/// Counters of a voice server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VoiceStats {
    /// Voice messages received, whatever became of them.
    pub received: u64,
    /// Speech messages accepted (forwarded or bounced).
    pub speech_in: u64,
    /// Speech messages sent (one per target reached).
    pub speech_out: u64,
    /// Voice clients that completed the connection (SETTINGSCONFIRM).
    pub clients_connected: u64,
    /// Drops, by reason ([`VoiceDrop::ALL`] order).
    pub drops: [u64; 6],
}

impl VoiceStats {
    /// `(name, count)` of every reason with a count.
    pub fn drops(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        VoiceDrop::ALL.iter().zip(self.drops).filter(|(_, n)| *n > 0).map(|(r, n)| (r.name(), n))
    }

    /// Every drop.
    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// At most one log line per reason per this interval: a flood is counted, not printed.
const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Counts a drop and logs it unless this reason was logged within [`LOG_INTERVAL`].
#[derive(Debug, Default)]
pub(crate) struct DropLog {
    last: [Option<Instant>; 6],
}

impl DropLog {
    pub(crate) fn drop(
        &mut self,
        stats: &mut VoiceStats,
        now: Instant,
        reason: VoiceDrop,
        from: dplay_wire::voice::Dvid,
    ) {
        let i = VoiceDrop::ALL.iter().position(|r| *r == reason).unwrap_or(0);
        if let Some(n) = stats.drops.get_mut(i) {
            *n += 1;
        }
        let Some(last) = self.last.get_mut(i) else { return };
        if last.is_none_or(|t| now.saturating_duration_since(t) >= LOG_INTERVAL) {
            *last = Some(now);
            tracing::warn!(from = %from, reason = reason.name(), "voice message dropped (further drops for this reason counted, not logged, for 10 s)");
        }
    }
}
