//! Per-connection and per-endpoint counters.

use std::time::Duration;

/// Why a datagram or frame was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DropReason {
    /// It does not parse (MC-DPL8R 2.2; MS-DPDX 3.1.5.9).
    Malformed,
    /// From an address without a connection in the right state (MC-DPL8R 3.1.5.1, 3.1.5.2).
    UnknownAddress,
    /// A CFRAME or KeepAlive whose `dwSessID` is not the connection's (MC-DPL8R 3.1.5.2).
    BadSessionId,
    /// A major version other than 1, or below the lowest we accept (MC-DPL8R 2.2.1.1).
    BadVersion,
    /// The frame breaks a handshake rule: POLL wrong, unexpected in this state
    /// (MC-DPL8R 3.1.5.1.1-3.1.5.1.2).
    HandshakeRule,
    /// `bSeq` outside `[NRcv, NRcv + 63]` (MC-DPL8R 3.1.5.2.1).
    OutOfWindow,
    /// A frame already received (MC-DPL8R 3.1.5.2.1).
    Duplicate,
    /// CONNECT while not listening (MC-DPL8R 3.1.5.1.1).
    NotListening,
    /// A handshake frame whose signing does not match ours: an unsigned CONNECTED while we
    /// sign, a CONNECTED_SIGNED to a listener that does not, or FULL (MC-DPL8R 3.1.5.1.2-3).
    SigningMismatch,
    /// A piece of a message whose earlier pieces were dropped (MC-DPL8R 3.1.5.2.6).
    Orphaned,
    /// Not a DirectPlay 8 transport frame and not lead byte 0 (MC-DPL8R 3.1.5).
    NotDirectPlay,
    /// On a signed connection, a frame without the peer's `ullSignature`; or a
    /// CONNECTED_SIGNED whose `ullConnectSig` cookie is not ours (MC-DPL8R 3.1.5.1.3,
    /// 3.1.5.2.7).
    BadSignature,
    /// A CONNECT retry from an unconfirmed source that already had its
    /// [`crate::Config::handshake_replies`] answers.
    HandshakeBudget,
    /// The host's memory budget is full: a frame was not stored (and not acknowledged, so
    /// its sender sends it again) or a CONNECT was not answered (docs/limits.md).
    OverBudget,
}

impl DropReason {
    /// Every reason, in declaration order.
    pub const ALL: [Self; Self::COUNT] = [
        Self::Malformed,
        Self::UnknownAddress,
        Self::BadSessionId,
        Self::BadVersion,
        Self::HandshakeRule,
        Self::OutOfWindow,
        Self::Duplicate,
        Self::NotListening,
        Self::SigningMismatch,
        Self::Orphaned,
        Self::NotDirectPlay,
        Self::BadSignature,
        Self::HandshakeBudget,
        Self::OverBudget,
    ];

    /// A short name for logs and stats output.
    pub fn name(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::UnknownAddress => "unknown_address",
            Self::BadSessionId => "bad_session_id",
            Self::BadVersion => "bad_version",
            Self::HandshakeRule => "handshake_rule",
            Self::OutOfWindow => "out_of_window",
            Self::Duplicate => "duplicate",
            Self::NotListening => "not_listening",
            Self::SigningMismatch => "signing_mismatch",
            Self::Orphaned => "orphaned",
            Self::NotDirectPlay => "not_directplay",
            Self::BadSignature => "bad_signature",
            Self::HandshakeBudget => "handshake_budget",
            Self::OverBudget => "transport_over_budget",
        }
    }

    const COUNT: usize = 14;

    fn index(self) -> usize {
        self as usize
    }
}

/// Drops counted by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Drops([u64; DropReason::COUNT]);

impl Drops {
    /// How many were dropped for `reason`.
    pub fn get(&self, reason: DropReason) -> u64 {
        self.0.get(reason.index()).copied().unwrap_or(0)
    }

    /// All drops.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Adds every count of `other`.
    pub fn add_all(&mut self, other: &Drops) {
        for (n, m) in self.0.iter_mut().zip(other.0) {
            *n += m;
        }
    }

    /// Counts a drop and logs it at trace level (the peer comes from the caller's span): at
    /// debug a flood of hostile datagrams would flood the log too.
    pub(crate) fn add(&mut self, reason: DropReason) {
        tracing::trace!(?reason, "dropped");
        if let Some(n) = self.0.get_mut(reason.index()) {
            *n += 1;
        }
    }
}

/// One connection's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Datagrams sent (CFRAMEs and DFRAMEs, retries included).
    pub frames_sent: u64,
    /// Bytes of those datagrams.
    pub bytes_sent: u64,
    /// Datagrams received from the peer.
    pub frames_received: u64,
    /// Bytes of those datagrams.
    pub bytes_received: u64,
    /// DFRAMEs sent again (MC-DPL8R 3.1.6.5).
    pub retransmissions: u64,
    /// Bytes of those datagrams.
    pub retransmitted_bytes: u64,
    /// Unreliable frames given up and announced in a send mask (MC-DPL8R 3.1.6.5).
    pub send_masked: u64,
    /// Payload bytes of those frames.
    pub send_masked_bytes: u64,
    /// New DFRAMEs sent with `PACKET_COMMAND_RELIABLE` (first transmissions), and their bytes.
    pub reliable_frames_sent: u64,
    /// Bytes of those datagrams.
    pub reliable_bytes_sent: u64,
    /// New DFRAMEs sent without `PACKET_COMMAND_RELIABLE`.
    pub unreliable_frames_sent: u64,
    /// Bytes of those datagrams.
    pub unreliable_bytes_sent: u64,
    /// DFRAMEs received with `PACKET_COMMAND_RELIABLE` (those that parse).
    pub reliable_frames_received: u64,
    /// Bytes of those datagrams.
    pub reliable_bytes_received: u64,
    /// DFRAMEs received without `PACKET_COMMAND_RELIABLE`.
    pub unreliable_frames_received: u64,
    /// Bytes of those datagrams.
    pub unreliable_bytes_received: u64,
    /// Messages handed to the transport.
    pub messages_sent: u64,
    /// Application messages (not USER_1 session messages) whose last frame went out, by
    /// [`crate::Priority::index`].
    pub messages_transmitted: [u64; 3],
    /// Application messages dropped unsent at their deadline, by [`crate::Priority::index`].
    pub messages_timed_out: [u64; 3],
    /// Messages delivered to the caller.
    pub messages_received: u64,
    /// Dropped input, by reason.
    pub drops: Drops,
    /// Smoothed round-trip time, once measured.
    pub rtt: Option<Duration>,
}

impl Stats {
    pub(crate) fn sent(&mut self, bytes: usize) {
        self.frames_sent += 1;
        self.bytes_sent += bytes as u64;
    }

    pub(crate) fn received(&mut self, bytes: usize) {
        self.frames_received += 1;
        self.bytes_received += bytes as u64;
    }
}
