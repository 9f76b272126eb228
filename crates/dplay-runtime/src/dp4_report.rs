//! What a DirectPlay 4 host drops and refuses, as its operator sees it (issue 14;
//! docs/limits.md): every drop and refusal counted by reason, logged at most once per source
//! per [`LOG_WINDOW`], and reported as events at most once per [`REPORT_INTERVAL`] (so a flood
//! makes neither a log flood nor an event flood), with a summary when the session ends.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_session::dp4::Stats;
use dplay_session::dp4::guard::{LOG_WINDOW, SourceWindow};

use crate::{CloseReason, Dp4Event};

/// New counts are reported at most this often.
pub(crate) const REPORT_INTERVAL: Duration = Duration::from_secs(1);

/// The counter of connections refused by the protocol (bad size, bad token, no signature).
const TCP_REJECTED: &str = "tcp-rejected";

/// Counters of drops and refusals, and what of them was reported.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// Connections closed by the runtime's guards or refused by the session, by reason.
    refused: BTreeMap<&'static str, u64>,
    /// The totals last reported, by reason (session drops and refusals alike).
    reported: BTreeMap<&'static str, u64>,
    /// When new counts may next be reported; `None` when nothing is pending.
    due: Option<Instant>,
    /// The last report.
    last: Option<Instant>,
    logged: SourceWindow,
}

impl Report {
    /// A TCP connection closed for `reason`: counted and logged if the runtime closed it to
    /// protect itself (a deadline, a cap, an eviction).
    pub(crate) fn stream_closed(&mut self, now: Instant, peer: SocketAddr, reason: &CloseReason) {
        if let Some(name) = reason.guard_name()
            && self.count(now, peer, name)
        {
            tracing::warn!(%peer, reason = name, "TCP connection closed (logged once per source per 10 s)");
        }
    }

    /// The session refused a connection's bytes; whether to report it as an event of its own
    /// (the first from its source per window).
    pub(crate) fn stream_rejected(&mut self, now: Instant, peer: SocketAddr, why: &str) -> bool {
        // Not logged: the caller reports it as Dp4Event::StreamRejected, which says it once.
        let first = self.count(now, peer, TCP_REJECTED);
        tracing::debug!(%peer, why, first, "TCP connection rejected");
        first
    }

    /// Counts one `name` from `peer`: whether it is the first from its source this window
    /// (to be logged or reported).
    fn count(&mut self, now: Instant, peer: SocketAddr, name: &'static str) -> bool {
        *self.refused.entry(name).or_default() += 1;
        self.pending(now);
        self.logged.first_log(now, peer.ip(), LOG_WINDOW)
    }

    /// New counts wait for the next report.
    pub(crate) fn pending(&mut self, now: Instant) {
        if self.due.is_none() {
            self.due = Some(self.last.map_or(now, |t| (t + REPORT_INTERVAL).max(now)));
        }
    }

    /// When [`Report::report`] must next run.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.due
    }

    /// Every count of `stats` and ours, by reason name.
    fn totals(&self, stats: &Stats) -> BTreeMap<&'static str, u64> {
        let mut all: BTreeMap<&'static str, u64> =
            stats.dropped.iter().map(|(r, n)| (r.name(), *n)).collect();
        all.extend(self.refused.iter().map(|(k, v)| (*k, *v)));
        all
    }

    /// Session drops not yet reported make a report pending.
    fn watch(&mut self, now: Instant, stats: &Stats) {
        let dropped: u64 = stats.dropped_total();
        let reported: u64 =
            stats.dropped.keys().map(|r| self.reported.get(r.name()).copied().unwrap_or(0)).sum();
        if dropped != reported {
            self.pending(now);
        }
    }

    /// Session drops not yet reported make a report pending; if one is due at `now`, one
    /// [`Dp4Event::Dropped`] per reason whose count grew since the last, passed to `emit`.
    pub(crate) fn report(&mut self, now: Instant, stats: &Stats, mut emit: impl FnMut(Dp4Event)) {
        self.watch(now, stats);
        if self.due.is_none_or(|t| t > now) {
            return;
        }
        self.due = None;
        self.last = Some(now);
        for (reason, total) in self.totals(stats) {
            let before = self.reported.insert(reason, total).unwrap_or(0);
            if total > before {
                tracing::info!(reason, count = total - before, total, "DP4 drops and refusals");
                emit(Dp4Event::Dropped { reason, count: total - before, total });
            }
        }
    }

    /// Every count so far, by reason, and what is held for others now: the summary at the end
    /// or on demand.
    pub(crate) fn summary(&self, stats: &Stats) -> [Dp4Event; 2] {
        let counts = self.totals(stats).into_iter().filter(|(_, n)| *n > 0).collect();
        let held = Dp4Event::MemoryHeld {
            held: stats.bytes_held,
            peak: stats.bytes_peak,
            budget: stats.memory_budget,
        };
        [Dp4Event::DropSummary(counts), held]
    }
}
