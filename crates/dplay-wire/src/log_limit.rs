//! Logs about a source address, at most once per source per interval (issue 14;
//! docs/limits.md): a flood of hostile datagrams is counted in full by its receiver, but makes
//! one log line per source per interval, with at most [`LOGGED_SOURCES`] sources remembered.
//!
//! It lives here, next to [`crate::budget`], because the DirectPlay 8 transport
//! (`dplay-dframe`) and the session layer above it both log refusals this way, and this is the
//! crate they share. Time is passed in: it reads no clock.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Sources remembered at most; past it, new ones are not logged until entries age out.
pub const LOGGED_SOURCES: usize = 4096;

/// When each source was last logged.
#[derive(Debug, Clone, Default)]
pub struct LogLimit {
    logged: BTreeMap<IpAddr, Instant>,
}

impl LogLimit {
    /// True when `ip` may be logged at `now`, and notes that it is: once per `interval` per
    /// source, and while fewer than [`LOGGED_SOURCES`] sources were logged within `interval`.
    pub fn may_log(&mut self, now: Instant, ip: IpAddr, interval: Duration) -> bool {
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
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(Ipv4Addr::from(0x0A00_0000 + n))
    }

    /// Once per source per interval; a flood from many addresses cannot grow the table past
    /// [`LOGGED_SOURCES`], and old entries age out.
    #[test]
    fn once_per_source_per_interval_and_a_bounded_table() {
        let now = dplay_sim::Sim::new(0).now();
        let interval = Duration::from_secs(10);
        let mut log = LogLimit::default();
        assert!(log.may_log(now, ip(1), interval));
        assert!(!log.may_log(now + Duration::from_secs(9), ip(1), interval));
        assert!(log.may_log(now + interval, ip(1), interval));
        let later = now + interval + Duration::from_secs(1);
        let logged = (0..10_000).filter(|n| log.may_log(later, ip(n + 2), interval)).count();
        assert_eq!(logged, LOGGED_SOURCES - 1);
        assert_eq!(log.logged.len(), LOGGED_SOURCES);
        assert!(log.may_log(now + 3 * interval, ip(20_000), interval), "old entries age out");
        assert!(log.logged.len() <= LOGGED_SOURCES);
    }

    /// Sources are independent, and a clock that goes back never panics nor logs twice.
    #[test]
    fn sources_are_independent_and_time_may_go_back() {
        let now = dplay_sim::Sim::new(0).now() + Duration::from_secs(60);
        let interval = Duration::from_secs(10);
        let mut log = LogLimit::default();
        assert!(log.may_log(now, ip(1), interval));
        assert!(log.may_log(now, ip(2), interval));
        assert!(!log.may_log(now - Duration::from_secs(5), ip(1), interval));
        assert!(log.may_log(now, IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]), interval));
    }
}
