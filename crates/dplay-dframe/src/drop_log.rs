//! Transport drops, logged once per source per interval (issue 14; docs/limits.md): a flood
//! of hostile datagrams is counted in full but makes one log line per source address per
//! [`crate::Config::drop_log_interval`] (the limit is [`dplay_wire::log_limit`], shared with
//! the session layer).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_wire::log_limit::LogLimit;

use crate::stats::{DropReason, Drops};

/// When each source was last logged.
#[derive(Debug, Default)]
pub(crate) struct DropLog {
    logged: LogLimit,
}

impl DropLog {
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
        if !worth_logging(reason) || !self.logged.may_log(now, from.ip(), interval) {
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
