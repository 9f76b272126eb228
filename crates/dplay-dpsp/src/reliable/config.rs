//! Every limit and timer of the reliable protocol, with the spec's values where it gives any.

use std::time::Duration;

use dplay_wire::dp4::reliable::MAX_PLAYER_INDEX;

/// Most messages one link may have outstanding: "There MUST NOT be more than 24 outstanding
/// messageid(s) on any link" (MC-DPL4R 2.2.2).
pub const MAX_OUTSTANDING_MESSAGES: u8 = 24;

/// Most frames a receiver holds ahead of its last in-order frame: half the 8-bit sequence
/// space, so that "ahead" and "behind" stay unambiguous (MC-DPL4R 2.2.2 `sequence`).
pub const RECEIVE_WINDOW: u8 = 127;

/// Bytes a data frame spends before its Data at most: two 3-byte player indexes and
/// flags, messageid, sequence, serial (MC-DPL4R 2.2.1, 2.2.2).
pub const FRAME_OVERHEAD: usize = 3 + 3 + 4;

/// How a [`crate::reliable::Reliable`] endpoint behaves. `Config::default()` holds the spec's
/// values and ours where it gives none (docs/decisions.md).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The largest frame sent or accepted, player indexes included (the UDP payload). Data is
    /// cut into frames of `mtu - FRAME_OVERHEAD` bytes (MC-DPL4R 2: "constrained by the MTU").
    /// Default 1472: Ethernet less the IPv4 and UDP headers.
    pub mtu: usize,
    /// Frames one link may have sent and not yet acknowledged; at most [`RECEIVE_WINDOW`].
    /// Default 64.
    pub window: u8,
    /// Reliable messages are handed up in messageid order; false for a session with
    /// DPSESSION_NOPRESERVEORDER (MC-DPL4CS 1.3; MC-DPL4R 3.1.1 "Reliable Receive Queue").
    pub ordered: bool,
    /// The retry time-out before any round trip was measured: 1 s (MC-DPL4R 3.1.2).
    pub initial_rto: Duration,
    /// Floor of the retry time-out above `ack_delay`, so a very fast link does not resend on
    /// jitter or on a peer's delayed ACK. 20 ms (so 70 ms with the default `ack_delay`).
    pub min_rto: Duration,
    /// Ceiling of the retry time-out after backing off. 5 s.
    pub max_rto: Duration,
    /// How long an ACK may wait for more frames when no SAK and no end of message asks for it
    /// now (MC-DPL4R 3.1.3 "ACKs MAY wait for a timer"). 50 ms.
    pub ack_delay: Duration,
    /// SAK is set when this long has passed since the last SAK (and a quarter round trip):
    /// 50 ms (MC-DPL4R 6 <8>).
    pub sak_interval: Duration,
    /// Give up on a link when its oldest unacknowledged frame was sent this many times (16)
    /// and `give_up_after` has passed since its first send; both must hold (the values of
    /// MC-DPL4CS 3.1.6.1, since MC-DPL4R 3.1.6 leaves them to the implementation).
    pub give_up_sends: u32,
    /// See `give_up_sends`: 60 s.
    pub give_up_after: Duration,
    /// Memory and size limits.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            mtu: 1472,
            window: 64,
            ordered: true,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(20),
            max_rto: Duration::from_secs(5),
            ack_delay: Duration::from_millis(50),
            sak_interval: Duration::from_millis(50),
            give_up_sends: 16,
            give_up_after: Duration::from_secs(60),
            limits: Limits::default(),
        }
    }
}

impl Config {
    /// Data bytes one frame carries: `mtu - FRAME_OVERHEAD`.
    pub fn frame_data_len(&self) -> usize {
        self.mtu.saturating_sub(FRAME_OVERHEAD)
    }

    /// Checks that the values can work together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.frame_data_len() == 0 {
            return Err(ConfigError::MtuTooSmall { mtu: self.mtu, min: FRAME_OVERHEAD + 1 });
        }
        if self.window == 0 || self.window > RECEIVE_WINDOW {
            return Err(ConfigError::BadWindow(self.window));
        }
        let l = &self.limits;
        if l.max_message_size == 0 || l.max_links == 0 || self.give_up_sends == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        if l.max_message_size > l.max_queued_bytes {
            return Err(ConfigError::BudgetTooSmall);
        }
        if self.min_rto > self.max_rto || self.initial_rto > self.max_rto {
            return Err(ConfigError::BadRto);
        }
        if self.initial_rto.is_zero() || self.min_rto.saturating_add(self.ack_delay).is_zero() {
            return Err(ConfigError::ZeroTimer);
        }
        Ok(())
    }
}

/// What a peer, or the layer above, may make an endpoint hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The largest message sent or reassembled. Default 1 MiB, past the 0xFFFFF bytes a DP4
    /// message can describe (MC-DPL4CS 2.2.6).
    pub max_message_size: usize,
    /// Bytes waiting to be framed on one link, beyond those in flight. Default 4 MiB.
    pub max_queued_bytes: usize,
    /// Links open at once. Default 1024.
    pub max_links: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_message_size: 1 << 20, max_queued_bytes: 4 << 20, max_links: 1024 }
    }
}

/// Why a [`Config`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The MTU leaves no room for data.
    #[error("mtu {mtu} leaves no room for data; at least {min} is needed")]
    MtuTooSmall {
        /// The configured MTU.
        mtu: usize,
        /// The smallest MTU that carries one data byte.
        min: usize,
    },
    /// The send window is 0 or above [`RECEIVE_WINDOW`].
    #[error("window {0} must be 1..=127")]
    BadWindow(u8),
    /// A limit that must be positive is zero.
    #[error("max_message_size, max_links and give_up_sends must be positive")]
    ZeroLimit,
    /// The send queue cannot hold the largest message.
    #[error("need max_message_size <= max_queued_bytes")]
    BudgetTooSmall,
    /// The retry time-outs are out of order.
    #[error("need min_rto <= max_rto and initial_rto <= max_rto")]
    BadRto,
    /// A retry time-out is zero, so it would resend in a loop.
    #[error("initial_rto and min_rto + ack_delay must be positive")]
    ZeroTimer,
}

/// The player index of a player ID: the low 16 bits of the ID before the XOR with
/// `DPSESSIONDESC2.Reserved1` (MC-DPL4R 2.2.1; MC-DPL4CS 3.2.5.4; decision F-30).
pub fn player_index(id: u32, reserved1: u32) -> u16 {
    u16::try_from((id ^ reserved1) & u32::from(MAX_PLAYER_INDEX)).unwrap_or(MAX_PLAYER_INDEX)
}
