//! Transport drops, logged once per source per interval (issue 14; docs/limits.md): a flood
//! of hostile datagrams is counted in full but makes one log line per source address per
//! [`crate::Config::drop_log_interval`], with at most [`LOGGED_SOURCES`] addresses remembered.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use crate::stats::{DropReason, Drops};

/// Sources remembered at most; past it, new ones are not logged until entries age out.
pub(crate) const LOGGED_SOURCES: usize = 4096;

/// When each source was last logged.
#[derive(Debug, Default)]
pub(crate) struct DropLog {
    logged: BTreeMap<IpAddr, Instant>,
}

impl DropLog {
    /// True when `ip` may be logged now, and notes that it is.
    fn may_log(&mut self, now: Instant, ip: IpAddr, interval: Duration) -> bool {
        if self.logged.get(&ip).is_some_and(|at| now.saturating_duration_since(*at) < interval) {
            return false;
        }
        if self.logged.len() >= LOGGED_SOURCES {
            self.logged.retain(|_, at| now.saturating_duration_since(*at) < interval);
            if self.logged.len() >= LOGGED_SOURCES {
                return false;
            }
        }
        self.logged.insert(ip, now);
        true
    }

    /// A datagram from `from` moved the drop counts from `before` to `after`: logs the first
    /// reason that grew if it says something about the sender (normal loss effects such as
    /// duplicates are not logged) and the source was not logged within `interval`.
    pub(crate) fn note(
        &mut self,
        now: Instant,
        from: SocketAddr,
        before: &Drops,
        after: &Drops,
        interval: Duration,
    ) {
        let Some(reason) = DropReason::ALL.into_iter().find(|r| after.get(*r) > before.get(*r)) else {
            return;
        };
        if !worth_logging(reason) || !self.may_log(now, from.ip(), interval) {
            return;
        }
        tracing::info!(
            source = %from,
            reason = reason.name(),
            "datagram dropped (further drops from this address are not logged for {interval:?})"
        );
    }
}

/// Reasons that point at a broken or hostile sender, not at loss or reordering on the way.
fn worth_logging(reason: DropReason) -> bool {
    !matches!(
        reason,
        DropReason::Duplicate | DropReason::OutOfWindow | DropReason::Orphaned | DropReason::UnknownAddress
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_per_source_per_interval_and_a_bounded_table() {
        let now = dplay_sim::Sim::new(0).now();
        let interval = Duration::from_secs(10);
        let mut log = DropLog::default();
        let ip = |n: u32| IpAddr::from(std::net::Ipv4Addr::from(0x0A00_0000 + n));
        assert!(log.may_log(now, ip(1), interval));
        assert!(!log.may_log(now + Duration::from_secs(9), ip(1), interval));
        assert!(log.may_log(now + interval, ip(1), interval));
        let logged = (0..10_000).filter(|n| log.may_log(now + interval, ip(n + 2), interval)).count();
        assert_eq!(logged, LOGGED_SOURCES - 1);
        assert!(log.may_log(now + 3 * interval, ip(20_000), interval), "old entries age out");
        assert!(log.logged.len() <= LOGGED_SOURCES);
    }
}
