//! Rate limits on what an endpoint does for sources it cannot verify, and on how often it logs
//! their refusals (issue 14; docs/limits.md).
//!
//! A UDP source address can be forged, and a DirectPlay 4 reply goes over TCP: every
//! ENUMSESSIONSREPLY, REQUESTPLAYERREPLY or YOUAREDEAD to an unknown address is a connect to
//! whoever that address names. [`SourceWindow`] counts such replies per source IP and in total
//! over a fixed window, so a flood of forged requests yields a bounded number of connects.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_wire::WideString;

use crate::dp4::event::{CommandError, DropReason};
use crate::dp4::session::Dp4Session;
use crate::dp4::table::Player;

/// The replies sent to unknown sources, and the refusals logged, in the current window.
#[derive(Debug, Clone, Default)]
pub(crate) struct Guard {
    replies: SourceWindow,
    logged: SourceWindow,
    /// Host: the names and addresses refused at join (see `dp4::admin`).
    pub(crate) bans: crate::bans::Bans,
}

impl Dp4Session {
    /// Logs that input from `from` was dropped (the total was `before`), once per source per
    /// [`LOG_WINDOW`]: a flood is counted in full but not logged in full.
    pub(crate) fn log_drops(&mut self, now: Instant, from: SocketAddr, before: u64) {
        let after = self.stats.dropped_total();
        if after > before && self.guard.logged.first_log(now, from.ip(), LOG_WINDOW) {
            tracing::info!(source = %from, dropped = after - before, "DP4 input dropped (further drops from this address are not logged for 10 s)");
        }
    }

    /// Whether a TCP reply to `to` may go: always to a known instance; to anyone else within
    /// `Dp4Limits::replies_per_source` and `replies_per_interval`, else it is counted as
    /// [`DropReason::RateLimited`] and not sent.
    pub(crate) fn reply_allowed(&mut self, now: Instant, to: SocketAddr, what: &str) -> bool {
        if self.instance_at(to).is_some() {
            return true;
        }
        let l = &self.config.limits;
        let (window, per_source, total) = (l.reply_interval, l.replies_per_source, l.replies_per_interval);
        if self.guard.replies.admit(now, to.ip(), window, per_source, total) {
            return true;
        }
        self.refuse(now, to.ip(), DropReason::RateLimited, what);
        false
    }

    /// As [`Dp4Session::reply_allowed`], for a request that came over TCP: the connection
    /// proved the sender's IP and the reply goes back to that IP, so no third party can be
    /// aimed at; only the total per interval holds (each REQUESTPLAYERREPLY reserves an ID).
    pub(crate) fn proven_reply_allowed(&mut self, now: Instant, to: SocketAddr, what: &str) -> bool {
        if self.instance_at(to).is_some() {
            return true;
        }
        let l = &self.config.limits;
        let (window, total) = (l.reply_interval, l.replies_per_interval);
        if self.guard.replies.admit(now, to.ip(), window, total, total) {
            return true;
        }
        self.refuse(now, to.ip(), DropReason::RateLimited, what);
        false
    }

    /// Counts a refused message from `ip` and logs it, once per source per window.
    pub(crate) fn refuse(&mut self, now: Instant, ip: IpAddr, reason: DropReason, what: &str) {
        *self.stats.dropped.entry(reason).or_default() += 1;
        if self.guard.logged.first_log(now, ip, self.config.limits.reply_interval.max(LOG_WINDOW)) {
            tracing::info!(%ip, reason = reason.name(), what, "DP4 message refused (logged once per source per 10 s)");
        } else {
            tracing::debug!(%ip, reason = reason.name(), what, "DP4 message refused");
        }
    }
}

/// `Err(TooLong)` when `len` is over `max`.
fn within(what: &'static str, len: usize, max: usize) -> Result<(), CommandError> {
    if len > max { Err(CommandError::TooLong { what, len, max }) } else { Ok(()) }
}

/// A name's length in UTF-16 units (0 when absent).
fn units(name: Option<&WideString>) -> usize {
    name.map_or(0, |n| n.units().len())
}

impl Dp4Session {
    /// A player's names and data within `Dp4Limits` (MC-DPL4CS 2.2.3), or which is too long.
    /// Groups are held to the same limits.
    pub(crate) fn check_player(&self, p: &Player) -> Result<(), CommandError> {
        self.check_names(p.short_name.as_ref(), p.long_name.as_ref())?;
        self.check_player_data(&p.player_data)
    }

    /// A player's or group's short and long names within `Dp4Limits::max_player_name`.
    pub(crate) fn check_names(
        &self,
        short: Option<&WideString>,
        long: Option<&WideString>,
    ) -> Result<(), CommandError> {
        let max = self.config.limits.max_player_name;
        within("the short name", units(short), max)?;
        within("the long name", units(long), max)
    }

    /// A player or group name given as text within `Dp4Limits::max_player_name`.
    pub(crate) fn check_player_name(&self, name: &str) -> Result<(), CommandError> {
        within("the player name", name.encode_utf16().count(), self.config.limits.max_player_name)
    }

    /// A player's or group's data within `Dp4Limits::max_player_data`.
    pub(crate) fn check_player_data(&self, data: &[u8]) -> Result<(), CommandError> {
        within("the player data", data.len(), self.config.limits.max_player_data)
    }

    /// A session name within `Dp4Limits::max_session_name` (MC-DPL4CS 2.2.30).
    pub(crate) fn check_session_name(&self, name: Option<&WideString>) -> Result<(), CommandError> {
        within("the session name", units(name), self.config.limits.max_session_name)
    }
}

/// Each source's refusals are logged at most once per this long.
pub const LOG_WINDOW: Duration = Duration::from_secs(10);

/// Most distinct sources whose refusals are logged per window: the log stays bounded however
/// many addresses a flood uses.
pub const LOGGED_SOURCES_PER_WINDOW: u32 = 16;

/// Counts events per source IP and in total over a fixed window. Its map holds at most as many
/// sources as the total allows, and is cleared each window.
#[derive(Debug, Clone, Default)]
pub struct SourceWindow {
    start: Option<Instant>,
    per_source: HashMap<IpAddr, u32>,
    total: u32,
}

impl SourceWindow {
    /// Counts one event from `ip` at `now` if `ip` has had fewer than `per_source` and all
    /// sources fewer than `total` in the current `window`; whether it was counted.
    pub fn admit(&mut self, now: Instant, ip: IpAddr, window: Duration, per_source: u32, total: u32) -> bool {
        if self.start.is_none_or(|s| now.saturating_duration_since(s) >= window) {
            self.start = Some(now);
            self.per_source.clear();
            self.total = 0;
        }
        if self.total >= total {
            return false;
        }
        let n = self.per_source.entry(ip).or_default();
        if *n >= per_source {
            return false;
        }
        *n += 1;
        self.total += 1;
        true
    }

    /// Whether a refusal from `ip` is the first of this window (then it is logged).
    pub fn first_log(&mut self, now: Instant, ip: IpAddr, window: Duration) -> bool {
        self.admit(now, ip, window, 1, LOGGED_SOURCES_PER_WINDOW)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At most `per_source` per source and `total` overall per window; a new window starts
    /// afresh.
    #[test]
    fn counts_per_source_and_in_total() {
        let t0 = crate::dp4::tests::net::start();
        let w = Duration::from_secs(1);
        let mut s = SourceWindow::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let admitted = (0..10).filter(|_| s.admit(t0, a, w, 4, 6)).count();
        assert_eq!(admitted, 4);
        let others = (2..10u8).filter(|i| s.admit(t0, IpAddr::from([10, 0, 0, *i]), w, 4, 6)).count();
        assert_eq!(others, 2, "the total caps every source together");
        assert!(s.admit(t0 + w, a, w, 4, 6), "a new window");
    }

    /// A flood from many sources logs at most LOGGED_SOURCES_PER_WINDOW lines per window, and
    /// each source once.
    #[test]
    fn logs_once_per_source_per_window() {
        let t0 = crate::dp4::tests::net::start();
        let w = Duration::from_secs(10);
        let mut s = SourceWindow::default();
        let ip = |i: u32| IpAddr::from(i.to_be_bytes());
        assert!(s.first_log(t0, ip(1), w));
        assert!(!s.first_log(t0, ip(1), w));
        let logged = (0..1000).filter(|i| s.first_log(t0, ip(i + 2), w)).count();
        assert_eq!(logged, LOGGED_SOURCES_PER_WINDOW as usize - 1);
    }
}
