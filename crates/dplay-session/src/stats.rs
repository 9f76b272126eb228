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
