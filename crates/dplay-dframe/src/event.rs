//! What the endpoint tells its caller, and why commands fail.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::stats::Stats;

/// How a message is sent and how it was received: the four categories of MS-DPDX 1.3
/// (`PACKET_COMMAND_RELIABLE`, `PACKET_COMMAND_SEQUENTIAL`) plus the consumer flags
/// `PACKET_COMMAND_USER_1/2`, passed through unchanged (MC-DPL8R 3.1.4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MessageKind {
    /// Retried until acknowledged.
    pub reliable: bool,
    /// Delivered in send order relative to the other sequential messages.
    pub sequential: bool,
    /// `PACKET_COMMAND_USER_1`: a DirectPlay 8 core (session) message.
    pub user_1: bool,
    /// `PACKET_COMMAND_USER_2`: voice.
    pub user_2: bool,
}

impl MessageKind {
    /// Reliable and sequential.
    pub const RELIABLE_SEQUENTIAL: Self = Self::new(true, true);
    /// Reliable and non-sequential.
    pub const RELIABLE: Self = Self::new(true, false);
    /// Not reliable, sequential.
    pub const SEQUENTIAL: Self = Self::new(false, true);
    /// Not reliable, non-sequential.
    pub const DATAGRAM: Self = Self::new(false, false);

    /// A kind without the user flags.
    pub const fn new(reliable: bool, sequential: bool) -> Self {
        Self { reliable, sequential, user_1: false, user_2: false }
    }
}

/// Where a message waits in the send queue: a higher one goes ahead of every lower one not yet
/// started, and never splits a message already on the wire (MC-DPL8R 3.1.4.4 frames whole
/// messages in queue order; DirectPlay 8's DPNSEND_PRIORITY_HIGH / _LOW, docs/decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Priority {
    /// After every normal and high message queued.
    Low,
    /// The default, and that of every message [`crate::Endpoint::send`] queues.
    #[default]
    Normal,
    /// Ahead of every normal and low message not yet started.
    High,
}

impl Priority {
    /// Low, normal, high: the index of this priority in per-priority counters.
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A message whose end the caller wants to hear of ([`crate::Endpoint::send_tracked`]):
/// [`Event::SendDone`] reports it once, with `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tracked {
    /// The caller's name for it, echoed in [`Event::SendDone`].
    pub id: u64,
    /// Its place in the queue.
    pub priority: Priority,
    /// Not started by then, it is dropped unsent ([`SendOutcome::TimedOut`]).
    pub expires: Option<Instant>,
}

impl Tracked {
    /// Normal priority, no deadline.
    pub const fn new(id: u64) -> Self {
        Self { id, priority: Priority::Normal, expires: None }
    }
}

/// What [`crate::Endpoint::cancel`] and [`crate::Endpoint::cancel_queued`] did with the
/// tracked messages they were asked to cancel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Cancelled {
    /// Taken out of the queue unsent: each reported [`SendOutcome::Cancelled`].
    pub removed: usize,
    /// Left to finish, as frames of them are on the wire (partly sent, or waiting for their
    /// acknowledgement): each reported later, as it ends.
    pub started: usize,
}

/// The two counts together (cancelling several messages, or one sent to several peers).
impl std::ops::Add for Cancelled {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self { removed: self.removed + other.removed, started: self.started + other.started }
    }
}

/// How the first frame of an acknowledged tracked message went (DPNMSG_SEND_COMPLETE's
/// `dwFirstFrameRTT` and `dwFirstFrameRetryCount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FirstFrame {
    /// From its latest transmission to its acknowledgement (`bNRcv` past it, or a SACK bit).
    pub rtt: Duration,
    /// Its retransmissions (MC-DPL8R 3.1.6.5).
    pub retries: u32,
}

/// How a tracked message ended ([`Event::SendDone`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SendOutcome {
    /// Reliable: every frame of it is acknowledged (`bNRcv` passed its last frame, MC-DPL8R
    /// 3.1.5.2.2).
    Acknowledged,
    /// Not reliable: its last frame went on the wire (nothing acknowledges it).
    Sent,
    /// Its deadline passed before its first frame was sent; nothing of it was sent.
    TimedOut,
    /// [`crate::Endpoint::cancel`] took it out of the queue before its first frame was sent;
    /// nothing of it was sent.
    Cancelled,
    /// The connection ended first, for this reason.
    Failed(DisconnectReason),
}

/// Why a connection ended (every connection reports one in [`Event::Disconnected`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum DisconnectReason {
    /// We closed gracefully and the END_STREAM exchange completed (MC-DPL8R 3.1.4.3).
    #[error("closed gracefully by us")]
    Closed,
    /// The peer closed gracefully and the END_STREAM exchange completed (MC-DPL8R 3.1.4.3).
    #[error("closed gracefully by the peer")]
    ClosedByPeer,
    /// We sent HARD_DISCONNECT (MC-DPL8R 3.1.4.5).
    #[error("hard disconnect by us")]
    Aborted,
    /// The peer sent HARD_DISCONNECT (MC-DPL8R 3.1.5.1.4).
    #[error("hard disconnect by the peer")]
    AbortedByPeer,
    /// CONNECT was retried the maximum number of times unanswered (MC-DPL8R 3.1.6.1).
    #[error("connect attempt timed out")]
    ConnectTimeout,
    /// A frame was retried the maximum number of times unacknowledged (MC-DPL8R 3.1.6.5).
    #[error("connection lost: retries exhausted")]
    RetriesExhausted,
    /// The peer broke a rule that ends the connection: a message over the reassembly limit
    /// (MC-DPL8R 3.1.5.2.6).
    #[error("protocol violation by the peer")]
    ProtocolViolation,
    /// The listener answered with CONNECTED_SIGNED asking for a signing mode we do not use
    /// (MC-DPL8R 3.1.5.1.3): fast signing while we do not sign, or full signing, which we do
    /// not implement. Reported at once rather than after the connect retries.
    #[error("the peer requires {0}")]
    SigningRequired(crate::signing::SigningMode),
}

/// Something the caller should know; drain with [`crate::Endpoint::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed (MC-DPL8R 3.1.5.1.2).
    Connected {
        /// The peer.
        peer: SocketAddr,
        /// True when we sent the CONNECT.
        outbound: bool,
    },
    /// A whole message arrived.
    Message {
        /// The peer.
        peer: SocketAddr,
        /// The message bytes, reassembled and decoalesced.
        data: Vec<u8>,
        /// `PACKET_COMMAND_RELIABLE` was set.
        reliable: bool,
        /// `PACKET_COMMAND_SEQUENTIAL` was set.
        sequential: bool,
        /// `PACKET_COMMAND_USER_1` was set.
        user_1: bool,
        /// `PACKET_COMMAND_USER_2` was set.
        user_2: bool,
    },
    /// The connection ended; nothing more comes from it.
    Disconnected {
        /// The peer.
        peer: SocketAddr,
        /// Why.
        reason: DisconnectReason,
        /// The connection's final counters (boxed: every event is as large as the largest).
        stats: Box<Stats>,
    },
    /// A message queued with [`crate::Endpoint::send_tracked`] is done with: acknowledged,
    /// sent, timed out, or lost with its connection (then reported before
    /// [`Event::Disconnected`]).
    SendDone {
        /// The peer.
        peer: SocketAddr,
        /// Its [`Tracked::id`].
        id: u64,
        /// How it ended.
        outcome: SendOutcome,
        /// Reliable and acknowledged: how its first frame went.
        first_frame: Option<FirstFrame>,
    },
    /// A datagram the transport does not own: lead byte 0, DirectPlay 8 enumeration and path
    /// test (MC-DPL8R 3.1.5; INDEX B.1). The caller answers it with
    /// [`crate::Endpoint::send_unowned`].
    Unowned {
        /// The sender.
        from: SocketAddr,
        /// The whole datagram.
        data: Vec<u8>,
    },
}

/// Why `connect` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// There already is a connection (or attempt) with this address.
    #[error("already connected or connecting to this address")]
    AlreadyConnected,
}

/// Why `send` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// No established connection with this address.
    #[error("not connected")]
    NotConnected,
    /// The connection is closing; nothing new may be sent (MC-DPL8R 3.1.4.3).
    #[error("the connection is closing")]
    Closing,
    /// Empty messages are refused: on the wire they would look like a KeepAlive.
    #[error("empty message")]
    Empty,
    /// Larger than `Config::max_message_size`.
    #[error("message larger than the configured maximum")]
    TooLarge,
    /// The connection's send queue is full (`Config::max_send_queue`), or the peer is a
    /// window or more behind while the memory budget is full (docs/limits.md).
    #[error("send queue full")]
    QueueFull,
}
