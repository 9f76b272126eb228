//! Counters of a session: what was sent and received, and every input dropped, by reason.

/// Why an input was dropped instead of acted on. Hostile or broken input never panics and
/// never ends the session: it is counted here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum DropReason {
    /// It did not parse.
    Malformed,
    /// A message the sender's role may not send to ours (a host-only message from a peer ...).
    WrongRole,
    /// A message that does not fit our state (a second DN_SEND_CONNECT_INFO ...).
    WrongState,
    /// It names a DPNID that is not in our name table.
    UnknownDpnid,
    /// A name-table operation whose version is not the next one (old, duplicate or ahead).
    BadVersion,
    /// From a connection whose player has not identified itself.
    UnknownSender,
    /// A connection from a DPNID we were not told about (refused and closed).
    RejectedConnection,
    /// An EnumQuery for another application, or while enumeration is off.
    EnumFiltered,
    /// An EnumResponse that matches none of our queries.
    EnumUnmatched,
    /// A PATH_TEST whose key matches no expected joiner.
    PathTestUnmatched,
    /// Application data from a member before we were joined, past the bound on what is held.
    EarlyDataOverflow,
}

/// Session counters; read with [`crate::Session::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Session (USER_1) messages sent.
    pub messages_sent: u64,
    /// Session (USER_1) messages received and acted on.
    pub messages_received: u64,
    /// Application messages delivered.
    pub app_received: u64,
    /// EnumQuery messages sent.
    pub enum_queries_sent: u64,
    /// EnumResponse messages sent.
    pub enum_responses_sent: u64,
    /// PATH_TEST messages sent.
    pub path_tests_sent: u64,
    /// PATH_TEST messages that matched an expected joiner.
    pub path_tests_matched: u64,
    /// Joins we refused with DN_CONNECT_FAILED.
    pub joins_refused: u64,
    /// Inputs dropped: malformed.
    pub malformed: u64,
    /// Inputs dropped: wrong role.
    pub wrong_role: u64,
    /// Inputs dropped: wrong state.
    pub wrong_state: u64,
    /// Inputs dropped: unknown DPNID.
    pub unknown_dpnid: u64,
    /// Inputs dropped: a name-table version that is not the next one.
    pub bad_version: u64,
    /// Inputs dropped: from an unidentified connection.
    pub unknown_sender: u64,
    /// Connections refused: from a DPNID we were not told about.
    pub rejected_connections: u64,
    /// EnumQuery messages left unanswered by the filter.
    pub enum_filtered: u64,
    /// EnumResponse messages that matched no query.
    pub enum_unmatched: u64,
    /// PATH_TEST messages that matched nothing.
    pub path_test_unmatched: u64,
    /// Application messages that arrived before we were joined and were held until
    /// [`crate::Event::Joined`].
    pub early_data_held: u64,
    /// Application messages that arrived before we were joined, dropped because the hold was full.
    pub early_data_overflow: u64,
    /// Joins refused with DPNERR_INVALIDPARAM: a name or data over its limit (also counted in
    /// `joins_refused`).
    pub refused_limits: u64,
    /// Joins refused with DPNERR_SESSIONFULL because the joiner's name-table entry would take
    /// what the host holds for others past its memory budget (also counted in `joins_refused`).
    pub refused_budget: u64,
    /// Joins refused with DPNERR_HOSTREJECTEDCONNECTION: a banned name or address (also
    /// counted in `joins_refused`).
    pub refused_banned: u64,
    /// Joiners dropped because they were not members by the join deadline, or to make room
    /// under the cap on joins under way.
    pub join_timeouts: u64,
    /// Joins that failed because an existing member did not connect to the joiner.
    pub failed_joins: u64,
    /// Members removed because joiners from several addresses could not reach them.
    pub members_evicted: u64,
    /// Members removed because they did not answer an integrity check in time.
    pub integrity_timeouts: u64,
    /// With `SessionConfig::defer_process_completion`: DN_PROCESS_COMPLETION sent before the
    /// application processed the message, past `Limits::max_unprocessed_per_peer` or at
    /// `Limits::process_completion_timeout`.
    pub process_completions_early: u64,
}

impl Stats {
    /// Counts one dropped input.
    pub(crate) fn drop(&mut self, why: DropReason) {
        // Trace: hostile senders must not flood a debug log.
        tracing::trace!(reason = ?why, "session message dropped");
        let counter = match why {
            DropReason::Malformed => &mut self.malformed,
            DropReason::WrongRole => &mut self.wrong_role,
            DropReason::WrongState => &mut self.wrong_state,
            DropReason::UnknownDpnid => &mut self.unknown_dpnid,
            DropReason::BadVersion => &mut self.bad_version,
            DropReason::UnknownSender => &mut self.unknown_sender,
            DropReason::RejectedConnection => &mut self.rejected_connections,
            DropReason::EnumFiltered => &mut self.enum_filtered,
            DropReason::EnumUnmatched => &mut self.enum_unmatched,
            DropReason::PathTestUnmatched => &mut self.path_test_unmatched,
            DropReason::EarlyDataOverflow => &mut self.early_data_overflow,
        };
        *counter += 1;
    }

    /// Every dropped input, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.malformed
            + self.wrong_role
            + self.wrong_state
            + self.unknown_dpnid
            + self.bad_version
            + self.unknown_sender
            + self.rejected_connections
            + self.enum_filtered
            + self.enum_unmatched
            + self.path_test_unmatched
            + self.early_data_overflow
    }
}

/// Every drop and refusal made at the transport and session layers, by reason, and what is
/// held for others now: what `dplay host` shows its operator (docs/limits.md). Read with
/// [`crate::Session::refusals`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Refusals {
    /// Non-zero counts, by reason name, transport first.
    pub counts: Vec<(&'static str, u64)>,
    /// Inbound transport attempts not confirmed yet (half-open).
    pub half_open: usize,
    /// Joiners connected but not members yet.
    pub joining: usize,
    /// Transport connections open (lingering ones not included).
    pub connections: usize,
    /// Connections closed gracefully that still acknowledge the peer's retries for
    /// `dplay_dframe::Config::linger` (MC-DPL8R 3.1.4.3; docs/decisions.md): no player, no
    /// data, only a short deadline (issue 25: a host's summary said `held: 1 connection` for
    /// them seconds after the last player left).
    pub lingering: usize,
    /// Bytes held for others now, as charged to the memory budget (docs/limits.md).
    pub bytes_held: usize,
    /// The most bytes held at once so far.
    pub bytes_peak: usize,
    /// The memory budget (`Limits::memory_budget`).
    pub memory_budget: usize,
}

impl std::fmt::Display for Refusals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "drops and refusals:")?;
        if self.counts.is_empty() {
            write!(f, " none")?;
        }
        for (i, (name, n)) in self.counts.iter().enumerate() {
            write!(f, "{} {name} {n}", if i == 0 { "" } else { "," })?;
        }
        write!(
            f,
            "; held: {} connection{}, ",
            self.connections,
            if self.connections == 1 { "" } else { "s" },
        )?;
        if self.lingering > 0 {
            write!(f, "{} lingering, ", self.lingering)?;
        }
        write!(
            f,
            "{} half-open, {} joining, {} of {} bytes budgeted (peak {})",
            self.half_open, self.joining, self.bytes_held, self.memory_budget, self.bytes_peak
        )
    }
}

impl crate::Session {
    /// Every drop and refusal so far, by reason, and what is held for others now.
    pub fn refusals(&self) -> Refusals {
        let ep = self.endpoint().endpoint_stats();
        let drops = self.endpoint().all_drops();
        let mut counts: Vec<(&'static str, u64)> =
            dplay_dframe::DropReason::ALL.iter().map(|r| (r.name(), drops.get(*r))).collect();
        counts.push(("half_open_evicted", ep.half_open_evicted));
        counts.push(("send_over_budget", ep.send_over_budget));
        let s = self.stats();
        counts.extend([
            ("joins_refused", s.joins_refused),
            ("oversize", s.refused_limits),
            ("over_budget", s.refused_budget),
            ("banned", s.refused_banned),
            ("join_timeout", s.join_timeouts),
            ("failed_join", s.failed_joins),
            ("member_evicted", s.members_evicted),
            ("integrity_timeout", s.integrity_timeouts),
            ("malformed_message", s.malformed),
            ("wrong_role", s.wrong_role),
            ("wrong_state", s.wrong_state),
            ("unknown_dpnid", s.unknown_dpnid),
            ("bad_table_version", s.bad_version),
            ("unknown_sender", s.unknown_sender),
            ("rejected_connection", s.rejected_connections),
            ("early_data_overflow", s.early_data_overflow),
        ]);
        counts.retain(|(_, n)| *n > 0);
        let budget = &self.admission.memory.budget;
        Refusals {
            counts,
            half_open: self.endpoint().half_open_count(),
            joining: self.admission.pending_count(),
            connections: self.endpoint().active_connection_count(),
            lingering: self
                .endpoint()
                .connection_count()
                .saturating_sub(self.endpoint().active_connection_count()),
            bytes_held: budget.held(),
            bytes_peak: budget.peak(),
            memory_budget: budget.limit(),
        }
    }
}

#[cfg(test)]
mod tests {
    /// One connection is one, not "1 connections" (issue 25 item 18).
    #[test]
    fn refusals_count_in_words() {
        let one = super::Refusals { connections: 1, ..Default::default() };
        assert!(one.to_string().contains("held: 1 connection, "), "{one}");
        let two = super::Refusals { connections: 2, ..Default::default() };
        assert!(two.to_string().contains("held: 2 connections, "), "{two}");
        assert!(!two.to_string().contains("lingering"), "{two}");
        let closed = super::Refusals { lingering: 1, ..Default::default() };
        assert!(closed.to_string().contains("held: 0 connections, 1 lingering, 0 half-open"), "{closed}");
    }
}
