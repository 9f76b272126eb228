//! Every tunable of the transport, defaulting to the spec's recommendations (MC-DPL8R 3.1.2).

use std::time::Duration;

use crate::seq::WINDOW;
use crate::signing::{SIGNATURE_LEN, Signing};

/// The protocol version we offer in CONNECT and CONNECTED (MC-DPL8R 1.7; decision F-2).
pub const PROTOCOL_VERSION: u32 = 0x0001_0006;
/// The lowest version we talk to: the base features (MC-DPL8R 1.7).
pub const MIN_PROTOCOL_VERSION: u32 = 0x0001_0000;
/// Coalescence and the KeepAlive meaning of `bControl` 0x02 start here (MC-DPL8R 1.7, 2.2.2).
pub const COALESCE_VERSION: u32 = 0x0001_0005;

/// The largest DFRAME header: 4 bytes and four 4-byte masks (MC-DPL8R 2.2.2).
const MAX_DFRAME_HEADER: usize = 20;
/// The smallest `max_datagram`: the largest DFRAME header, `ullSignature` and one payload byte.
pub const MIN_DATAGRAM: usize = MAX_DFRAME_HEADER + SIGNATURE_LEN + 1;
/// The smallest KeepAlive timer granularity.
const MIN_KEEPALIVE_GRANULARITY: Duration = Duration::from_millis(1);

/// Transport configuration. `Config::default()` holds the values MC-DPL8R recommends; change a
/// public field by assignment, and the fields with a range the transport depends on (windows,
/// caps that must be positive, the KeepAlive tick, the datagram size) through their `set_*`
/// methods, which clamp into that range (docs/decisions.md, "Configurations").
///
/// ```
/// let mut config = dplay_dframe::Config::default().with_seed(7);
/// config.delayed_ack = std::time::Duration::from_millis(50);
/// config.set_max_window(200); // clamped to the 64 frames the SACK masks cover
/// assert_eq!(config.max_window(), dplay_dframe::WINDOW);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// `dwCurrentProtocolVersion` we send (MC-DPL8R 2.2.1.1).
    pub protocol_version: u32,
    /// Answer CONNECTs from unknown addresses (listening, MC-DPL8R 3.1.4.1).
    pub accept_incoming: bool,
    /// First connect retry interval: 200 ms (MC-DPL8R 3.1.2.1).
    pub connect_retry_initial: Duration,
    /// Cap of the doubling connect retry interval: 5 s (MC-DPL8R 3.1.2.1).
    pub connect_retry_max: Duration,
    /// Connect retries before the attempt fails: 14 (MC-DPL8R 3.1.2.1).
    pub connect_retries: u32,
    /// CONNECTED frames sent at most to an inbound attempt that has not confirmed yet, the
    /// first answer, timer retries and answers to CONNECT retries together: 3. The source of a
    /// CONNECT is unverified until its CONNECTED comes back, so this bounds what a spoofed
    /// CONNECT makes us send to a third party (decision in docs/decisions.md, in place of the
    /// 14 retries of MC-DPL8R 3.1.2.1; docs/limits.md).
    pub handshake_replies: u32,
    /// An inbound attempt not confirmed within this is forgotten: 5 s (docs/limits.md).
    pub half_open_timeout: Duration,
    /// Inbound attempts not yet confirmed, held at most; the oldest goes first: 1024. At
    /// least 1 ([`Config::set_max_half_open`]).
    max_half_open: usize,
    /// Of those, from one IP address at most; its oldest goes first: 16. At least 1.
    max_half_open_per_ip: usize,
    /// Datagrams dropped for what they are (malformed, wrong signature or session ID ...) are
    /// logged at most once per source address per this: 10 s (docs/limits.md).
    pub drop_log_interval: Duration,
    /// Delayed acknowledgement: 100 ms (MC-DPL8R 3.1.2.2).
    pub delayed_ack: Duration,
    /// Delayed acknowledgement for out-of-order and duplicate frames: 20 ms (MC-DPL8R 3.1.2.2).
    pub delayed_ack_short: Duration,
    /// Delayed send mask: 40 ms (MC-DPL8R 3.1.2.3).
    pub delayed_send_mask: Duration,
    /// RTT assumed before the first measurement.
    pub initial_rtt: Duration,
    /// Cap of the data retry interval: 5 s (MC-DPL8R 3.1.2.5).
    pub retry_max_interval: Duration,
    /// Retries of one frame before the connection is lost: 10 (MC-DPL8R 3.1.2.5).
    pub max_retries: u32,
    /// Floor of the first retry wait, which is otherwise RTT plus four mean deviations
    /// (decision in docs/decisions.md, in place of MC-DPL8R 3.1.2.5's 2.5 RTT + delayed ACK).
    pub retry_min_interval: Duration,
    /// Silence before a KeepAlive is sent: 25 s (MC-DPL8R 3.1.2.6).
    pub keepalive_idle: Duration,
    /// KeepAlive timer granularity: 4 s (MC-DPL8R 3.1.2.6). At least 1 ms
    /// ([`Config::set_keepalive_granularity`]).
    keepalive_granularity: Duration,
    /// HARD_DISCONNECT frames sent: 3 (MC-DPL8R 3.1.4.5).
    pub hard_disconnect_count: u32,
    /// Lower bound of the hard disconnect interval (RTT/2): 10 ms (MC-DPL8R 3.1.2.4).
    pub hard_disconnect_min: Duration,
    /// Upper bound of the hard disconnect interval: 500 ms (MC-DPL8R 3.1.2.4).
    pub hard_disconnect_max: Duration,
    /// SACKs sent each time after the peer's END_STREAM arrived: 4 (MS-DPDX 3.1.5.3).
    pub end_stream_sacks: u32,
    /// How long a gracefully closed connection keeps acknowledging the peer's retries.
    pub linger: Duration,
    /// Congestion window at the start: 2 frames (MC-DPL8R 3.1.4.4). In `1..=max_window`
    /// ([`Config::set_initial_window`]).
    initial_window: u8,
    /// Frames in flight at most: 64, a MUST (MC-DPL8R 3.1.4.4). In `1..=`[`WINDOW`]: the SACK
    /// masks cover 64 frames ([`Config::set_max_window`]).
    max_window: u8,
    /// Largest datagram we send; a DFRAME header plus payload stays below it (MC-DPL8R 2.2.2).
    /// At least [`MIN_DATAGRAM`] ([`Config::set_max_datagram`]).
    max_datagram: usize,
    /// Largest message sent or reassembled (MC-DPL8R 3.1.5.2.6 leaves the limit to us).
    pub max_message_size: usize,
    /// Bytes queued for sending on one connection before `send` refuses more.
    pub max_send_queue: usize,
    /// Coalesce small messages when the peer is at 0x00010005 or later (MC-DPL8R 2.2.3).
    pub coalesce: bool,
    /// Packet signing asked of the peers we connect to and required of those connecting to us
    /// (MC-DPL8R 3.1.4.4, 3.1.5.1.3).
    pub signing: Signing,
    /// Seed of the RNG that draws `dwSessID` values and signing secrets. The default comes from
    /// the operating system, so two endpoints never share one; set it (or use
    /// [`Config::with_seed`]) to replay a run.
    pub rng_seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            protocol_version: PROTOCOL_VERSION,
            accept_incoming: true,
            connect_retry_initial: Duration::from_millis(200),
            connect_retry_max: Duration::from_secs(5),
            connect_retries: 14,
            handshake_replies: 3,
            half_open_timeout: Duration::from_secs(5),
            max_half_open: 1024,
            max_half_open_per_ip: 16,
            drop_log_interval: Duration::from_secs(10),
            delayed_ack: Duration::from_millis(100),
            delayed_ack_short: Duration::from_millis(20),
            delayed_send_mask: Duration::from_millis(40),
            initial_rtt: Duration::from_millis(200),
            retry_max_interval: Duration::from_secs(5),
            max_retries: 10,
            retry_min_interval: Duration::from_millis(30),
            keepalive_idle: Duration::from_secs(25),
            keepalive_granularity: Duration::from_secs(4),
            hard_disconnect_count: 3,
            hard_disconnect_min: Duration::from_millis(10),
            hard_disconnect_max: Duration::from_millis(500),
            end_stream_sacks: 4,
            linger: Duration::from_secs(10),
            initial_window: 2,
            max_window: WINDOW,
            max_datagram: 1472,
            max_message_size: 1 << 20,
            max_send_queue: 4 << 20,
            coalesce: true,
            signing: Signing::Off,
            rng_seed: os_seed(),
        }
    }
}

impl Config {
    /// This configuration with a fixed `rng_seed`, for tests and replays.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.rng_seed = seed;
        self
    }

    /// The payload bytes one DFRAME carries: the datagram minus the largest header (4 bytes
    /// plus four masks, plus `ullSignature` when signing), so a retry with more masks still fits.
    pub fn max_frame_payload(&self) -> usize {
        let signature = if self.signing == Signing::Off { 0 } else { SIGNATURE_LEN };
        self.max_datagram.saturating_sub(MAX_DFRAME_HEADER + signature).max(1)
    }

    /// Inbound attempts not yet confirmed, held at most.
    pub fn max_half_open(&self) -> usize {
        self.max_half_open
    }

    /// Sets [`Config::max_half_open`]; 0 is raised to 1 (no listener works with none).
    pub fn set_max_half_open(&mut self, n: usize) -> &mut Self {
        self.max_half_open = n.max(1);
        self
    }

    /// Inbound attempts not yet confirmed held from one IP address at most.
    pub fn max_half_open_per_ip(&self) -> usize {
        self.max_half_open_per_ip
    }

    /// Sets [`Config::max_half_open_per_ip`]; 0 is raised to 1.
    pub fn set_max_half_open_per_ip(&mut self, n: usize) -> &mut Self {
        self.max_half_open_per_ip = n.max(1);
        self
    }

    /// KeepAlive timer granularity (MC-DPL8R 3.1.2.6).
    pub fn keepalive_granularity(&self) -> Duration {
        self.keepalive_granularity
    }

    /// Sets [`Config::keepalive_granularity`]; below 1 ms it is 1 ms, so the timer cannot fire
    /// in a loop.
    pub fn set_keepalive_granularity(&mut self, tick: Duration) -> &mut Self {
        self.keepalive_granularity = tick.max(MIN_KEEPALIVE_GRANULARITY);
        self
    }

    /// Congestion window at the start, in frames (MC-DPL8R 3.1.4.4).
    pub fn initial_window(&self) -> u8 {
        self.initial_window
    }

    /// Sets [`Config::initial_window`], clamped to `1..=max_window`.
    pub fn set_initial_window(&mut self, frames: u8) -> &mut Self {
        self.initial_window = frames.clamp(1, self.max_window);
        self
    }

    /// Frames in flight at most (MC-DPL8R 3.1.4.4).
    pub fn max_window(&self) -> u8 {
        self.max_window
    }

    /// Sets [`Config::max_window`], clamped to `1..=`[`WINDOW`] (the 64 frames the SACK masks
    /// cover, a MUST of MC-DPL8R 3.1.4.4); the initial window is lowered to it if above.
    pub fn set_max_window(&mut self, frames: u8) -> &mut Self {
        self.max_window = frames.clamp(1, WINDOW);
        self.initial_window = self.initial_window.min(self.max_window);
        self
    }

    /// Largest datagram we send (MC-DPL8R 2.2.2).
    pub fn max_datagram(&self) -> usize {
        self.max_datagram
    }

    /// Sets [`Config::max_datagram`]; below [`MIN_DATAGRAM`] it is [`MIN_DATAGRAM`], so every
    /// DFRAME, signed or not, carries at least one payload byte.
    pub fn set_max_datagram(&mut self, bytes: usize) -> &mut Self {
        self.max_datagram = bytes.max(MIN_DATAGRAM);
        self
    }
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
