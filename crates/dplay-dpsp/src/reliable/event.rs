//! What a reliable endpoint reports: events for the layer above, and counters.

use std::net::SocketAddr;
use std::time::Duration;

/// Something the layer above needs to know, from [`crate::reliable::Reliable::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A whole message arrived: the Data of its frames from STA to EOM, concatenated in
    /// sequence order (MC-DPL4R 3.1.5.2).
    Delivered {
        /// The link's peer.
        from: SocketAddr,
        /// `messageid`.
        message_id: u8,
        /// Whether it was sent with RLY.
        reliable: bool,
        /// The message.
        data: Vec<u8>,
    },
    /// The link gave up: its oldest frame went unacknowledged too long. Everything queued or
    /// in flight on it is dropped and the link is closed.
    LinkFailed {
        /// The link's peer.
        peer: SocketAddr,
        /// Sends of the frame that was never acknowledged.
        sends: u32,
        /// Time since that frame's first send.
        elapsed: Duration,
    },
}

/// Why an incoming frame was dropped. Counted in [`Stats::dropped`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DropReason {
    /// The frame did not parse (MC-DPL4R 2.2), or is larger than the MTU.
    Malformed,
    /// No link is open to the sender's address.
    UnknownPeer,
    /// `IdFrom` is not a player of the link's instance, or `IdTo` not one of ours
    /// (MC-DPL4R 3.1.5.1).
    WrongPlayer,
    /// A data frame already received (counted; answered with an ACK, 3.1.5.2).
    Duplicate,
    /// A data frame whose sequence or messageid lies outside the receive windows
    /// (MC-DPL4R 3.1.5.2: "the Data frame MUST be ignored").
    OutOfWindow,
    /// A frame that breaks message structure: a continuation with no STA before it, or a
    /// messageid that changes inside a message. The partial message goes with it.
    Inconsistent,
    /// A message growing past `Limits::max_message_size`.
    TooLarge,
    /// An ACK or NACK for a sequence never sent.
    BadAck,
    /// An ACK or NACK older than what was already acknowledged.
    StaleAck,
    /// An incomplete unreliable message discarded because a frame 24 or more messageids newer
    /// arrived (MC-DPL4R 3.1.5.2 "+24"): its missing frames will never come.
    Abandoned,
    /// A data frame the host's memory budget cannot hold
    /// ([`crate::reliable::Reliable::set_memory_budget`]): not acknowledged, so it is sent again.
    OverBudget,
}

impl DropReason {
    /// Every reason, in declaration order.
    pub const ALL: [Self; 11] = [
        Self::Malformed,
        Self::UnknownPeer,
        Self::WrongPlayer,
        Self::Duplicate,
        Self::OutOfWindow,
        Self::Inconsistent,
        Self::TooLarge,
        Self::BadAck,
        Self::StaleAck,
        Self::Abandoned,
        Self::OverBudget,
    ];
}

/// Counters of what the endpoint did and refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Messages given to `send`.
    pub messages_sent: u64,
    /// Data frames transmitted, first sends and resends.
    pub frames_sent: u64,
    /// Of those, resends (NACK or retry timer).
    pub frames_resent: u64,
    /// ACK frames transmitted.
    pub acks_sent: u64,
    /// NACK frames transmitted: always 0, since Windows has no NACK (MC-DPL4R 6 <2>); kept so
    /// reports keep their shape.
    pub nacks_sent: u64,
    /// Frames handled (accepted or dropped).
    pub frames_received: u64,
    /// Messages delivered.
    pub messages_delivered: u64,
    /// Links that gave up.
    pub links_failed: u64,
    drops: [u64; DropReason::ALL.len()],
}

impl Stats {
    /// Frames dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops.get(reason as usize).copied().unwrap_or(0)
    }

    /// Frames dropped for any reason.
    pub fn dropped_total(&self) -> u64 {
        self.drops.iter().sum()
    }

    pub(crate) fn drop(&mut self, reason: DropReason) {
        if let Some(n) = self.drops.get_mut(reason as usize) {
            *n += 1;
        }
    }
}

/// What one link knows about itself, from [`crate::reliable::Reliable::link_info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LinkInfo {
    /// Smoothed round trip, once measured (MC-DPL4R 3.1.1 "Average Latency").
    pub srtt: Option<Duration>,
    /// Its mean deviation.
    pub rttvar: Duration,
    /// The current retry time-out: average round trip plus three deviations, backed off
    /// after expiries (MC-DPL4R 3.1.2).
    pub rto: Duration,
    /// Bytes received on this link, duplicates included (MC-DPL4R 3.1.5.4), as sent in our
    /// ACKs and NACKs.
    pub bytes_received: u32,
    /// `bytes received` of the peer's latest ACK or NACK: what it got from us.
    pub peer_bytes_received: u32,
    /// The peer's receive rate in bytes per second, from the change of `bytes received` over
    /// the change of `local tick count` between two of its ACKs (MC-DPL4R 2.2.4).
    pub peer_receive_rate: Option<u64>,
    /// Data frames sent and not yet acknowledged.
    pub in_flight: usize,
    /// Bytes waiting to be framed.
    pub queued_bytes: usize,
}
