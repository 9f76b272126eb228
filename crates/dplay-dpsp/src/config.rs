//! Every limit and timer of the fragmentation layer, with the spec's values as defaults.

use std::time::Duration;

use dplay_wire::dp4::fragment::FRAGMENT_BODY_FIXED_LEN;
use dplay_wire::dp4::header::{HEADER_LEN, SockAddrIn, Token};

/// Bytes a fragment datagram spends before its PacketData: the 28-byte DPSP_MSG_HEADER and the
/// 40 bytes from GuidMessage to PacketOffset (MC-DPL4CS 2.2.39, 2.2.41; INDEX D.16).
pub const FRAGMENT_OVERHEAD: usize = HEADER_LEN + FRAGMENT_BODY_FIXED_LEN;

/// How a [`crate::Dpsp`] endpoint behaves. `Config::default()` holds the spec's timers; change
/// its fields by assignment. [`crate::Dpsp::new`] checks the whole ([`Config::validate`]).
///
/// ```
/// let mut config = dplay_dpsp::Config::default().with_seed(7);
/// config.mtu = 576;
/// config.limits.max_partials_per_sender = 4;
/// assert!(dplay_dpsp::Dpsp::new(config).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The largest datagram the transport carries, header included. A message is cut into
    /// fragments of `mtu - FRAGMENT_OVERHEAD` data bytes (MC-DPL4CS 3.1.4.18). Default 1472:
    /// an Ethernet frame less the IPv4 and UDP headers.
    pub mtu: usize,
    /// Seed of the random source that makes each message's `GuidMessage`. The default comes
    /// from the operating system, so two endpoints never share one; set it (or use
    /// [`Config::with_seed`]) to replay a run.
    pub seed: u64,
    /// Token written in the header of every datagram sent (MC-DPL4CS 2.2.6).
    pub token: Token,
    /// SockAddr written in the header of every datagram sent (MC-DPL4CS 2.2.6).
    pub sock_addr: SockAddrIn,
    /// Version (dialect) written in the header of every datagram sent (MC-DPL4CS 2.2.6).
    pub version: u16,
    /// Packetize timer before the first PACKET2_ACK of a message: 900 ms (MC-DPL4CS 3.1.2.4).
    pub packetize_initial: Duration,
    /// Floor on the measured round trip: 25 ms, so the timer is at least 37.5 ms
    /// (MC-DPL4CS 3.1.2.4). After an ACK the timer is 1.5 × the round trip.
    pub packetize_rtt_floor: Duration,
    /// Give up on a reliable message when the Packetize timer expires after its fragment in
    /// flight was sent this many times (16) and `give_up_after` has passed since that fragment's
    /// first send (MC-DPL4CS 3.1.6.1): both must hold.
    pub give_up_sends: u32,
    /// See `give_up_sends`: 60 s (MC-DPL4CS 3.1.6.1).
    pub give_up_after: Duration,
    /// Discard a partial message sent without reliability after this long with no fragment
    /// for it: 15 s (MC-DPL4CS 2.2.41).
    pub unreliable_idle: Duration,
    /// Discard a partial reliable message after this long with no fragment for it. The spec
    /// is silent; the default, 75 s, outlasts a sender's 60 s give-up (docs/decisions.md).
    pub reliable_idle: Duration,
    /// How long the GuidMessage of a finished (delivered or abandoned) message is remembered,
    /// so late duplicates are acknowledged or refused instead of starting it again. 75 s.
    pub finished_memory: Duration,
    /// Memory and size limits.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            mtu: 1472,
            seed: os_seed(),
            token: Token::FROM_REMOTE,
            sock_addr: SockAddrIn::unspecified(),
            version: 14,
            packetize_initial: Duration::from_millis(900),
            packetize_rtt_floor: Duration::from_millis(25),
            give_up_sends: 16,
            give_up_after: Duration::from_secs(60),
            unreliable_idle: Duration::from_secs(15),
            reliable_idle: Duration::from_secs(75),
            finished_memory: Duration::from_secs(75),
            limits: Limits::default(),
        }
    }
}

impl Config {
    /// This configuration with a fixed `seed`, for tests and replays.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Data bytes carried by each fragment: `mtu - FRAGMENT_OVERHEAD`.
    pub fn fragment_data_len(&self) -> usize {
        self.mtu.saturating_sub(FRAGMENT_OVERHEAD)
    }

    /// Checks that the values can work together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.fragment_data_len() == 0 {
            return Err(ConfigError::MtuTooSmall { mtu: self.mtu, min: FRAGMENT_OVERHEAD + 1 });
        }
        let l = &self.limits;
        if l.max_message_size == 0 || l.max_partials_per_sender == 0 || l.max_finished == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        if (l.max_message_size as usize) > l.max_bytes_per_sender
            || l.max_bytes_per_sender > l.max_bytes_total
        {
            return Err(ConfigError::BudgetTooSmall);
        }
        if self.give_up_sends == 0 {
            return Err(ConfigError::ZeroLimit);
        }
        if self.packetize_initial.is_zero() || self.packetize_rtt_floor.is_zero() {
            return Err(ConfigError::ZeroTimer);
        }
        Ok(())
    }
}

/// What a peer may make this endpoint hold (issue: limits, all configurable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The largest message sent or reassembled (`MessageSize`). Default 1 MiB: the DP4 header's
    /// 20-bit size field cannot describe more (MC-DPL4CS 2.2.6).
    pub max_message_size: u32,
    /// Partial messages one sender may have under reassembly at once. Default 16.
    pub max_partials_per_sender: usize,
    /// Bytes held for one sender's partial messages. Default 4 MiB.
    pub max_bytes_per_sender: usize,
    /// Bytes held for all partial messages together. Default 64 MiB.
    pub max_bytes_total: usize,
    /// Finished GuidMessages remembered (see [`Config::finished_memory`]). Default 4096.
    pub max_finished: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_size: 1 << 20,
            max_partials_per_sender: 16,
            max_bytes_per_sender: 4 << 20,
            max_bytes_total: 64 << 20,
            max_finished: 4096,
        }
    }
}

/// Why a [`Config`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The MTU leaves no room for fragment data.
    #[error("mtu {mtu} leaves no room for data; at least {min} is needed")]
    MtuTooSmall {
        /// The configured MTU.
        mtu: usize,
        /// The smallest MTU that carries one data byte.
        min: usize,
    },
    /// A limit that must be positive is zero.
    #[error("max_message_size, max_partials_per_sender, max_finished and give_up_sends must be positive")]
    ZeroLimit,
    /// A byte budget cannot hold the largest message.
    #[error("need max_message_size <= max_bytes_per_sender <= max_bytes_total")]
    BudgetTooSmall,
    /// A retry timer is zero, so it would resend in a loop.
    #[error("packetize_initial and packetize_rtt_floor must be positive")]
    ZeroTimer,
}

/// A seed from the operating system's random source, for configurations built with the defaults
/// (docs/decisions.md, "Random by default"). Drawing it is no network or clock I/O, so the
/// crate stays sans-IO.
///
/// # Panics
///
/// If the operating system has no random source to give, which `getrandom` reports only on
/// platforms where none can work: there is no safe identifier to fall back to.
pub(crate) fn os_seed() -> u64 {
    getrandom::u64().expect("the operating system's random source failed")
}
