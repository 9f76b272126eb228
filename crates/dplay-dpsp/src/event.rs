//! What the endpoint reports: events for the layer above, and counters.

use std::net::SocketAddr;
use std::time::Duration;

use uuid::Uuid;

use crate::Reliability;

/// Something the layer above needs to know, from [`crate::Dpsp::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Every fragment of a message arrived. `message` is the concatenation of their PacketData,
    /// to be handed back to the receive path as a freshly received DP4 message
    /// (MC-DPL4CS 2.2.41).
    Delivered {
        /// The sender.
        from: SocketAddr,
        /// `GuidMessage`.
        guid: Uuid,
        /// PACKET or PACKET2_DATA.
        reliability: Reliability,
        /// The reassembled message.
        message: Vec<u8>,
    },
    /// Every PACKET2_DATA of a reliable message was acknowledged (MC-DPL4CS 3.1.5.29).
    SendComplete {
        /// The receiver.
        to: SocketAddr,
        /// `GuidMessage`.
        guid: Uuid,
    },
    /// A reliable message was abandoned before every fragment was acknowledged.
    SendAborted {
        /// The receiver.
        to: SocketAddr,
        /// `GuidMessage`.
        guid: Uuid,
        /// Why.
        reason: AbortReason,
    },
    /// A partial message was thrown away before it was complete.
    ReassemblyAbandoned {
        /// The sender.
        from: SocketAddr,
        /// `GuidMessage`.
        guid: Uuid,
        /// Why.
        reason: AbandonReason,
    },
    /// A sender went past one of its limits: its fragment was refused, or its oldest partial
    /// message evicted (issue: "a sender that exceeds its limits is reported").
    LimitExceeded {
        /// The sender.
        from: SocketAddr,
        /// Which limit.
        limit: Limit,
    },
}

/// Why a reliable send was abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AbortReason {
    /// The Packetize timer expired after the same fragment was sent `sends` times and
    /// `elapsed` since its first send (MC-DPL4CS 3.1.6.1).
    GaveUp {
        /// `PacketIndex` of the unacknowledged fragment.
        packet_index: u32,
        /// How many times it was sent.
        sends: u32,
        /// Time since its first send.
        elapsed: Duration,
    },
    /// [`crate::Dpsp::forget_peer`] was called.
    PeerForgotten,
}

/// Why a partial message was thrown away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AbandonReason {
    /// No fragment for it within the idle time (MC-DPL4CS 2.2.41: 15 s without reliability).
    Idle,
    /// Evicted to respect a limit, oldest first.
    Evicted(Limit),
    /// Every fragment arrived, but the reassembled message is itself a DPSP_MSG_PACKET,
    /// PACKET2_DATA or PACKET2_ACK, which is refused.
    NestedFragment,
    /// [`crate::Dpsp::forget_peer`] was called.
    PeerForgotten,
}

/// A limit of [`crate::Limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// `max_message_size`: the fragment was refused ([`DropReason::TooLarge`]).
    MessageSize,
    /// `max_partials_per_sender`.
    PartialsPerSender,
    /// `max_bytes_per_sender`.
    BytesPerSender,
    /// `max_bytes_total`.
    BytesTotal,
    /// The host's memory budget ([`crate::Dpsp::set_memory_budget`]), shared with what the
    /// rest of the host holds for others.
    MemoryBudget,
}

/// Why an incoming message was dropped. Counted in [`Stats::dropped`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DropReason {
    /// The datagram did not parse ([`crate::Dpsp::handle_datagram`]).
    Malformed,
    /// `DataSize` is 0: a fragment must carry data.
    EmptyFragment,
    /// `TotalPackets` is 0 or larger than `MessageSize`.
    BadTotalPackets,
    /// `MessageSize` is above `Limits::max_message_size`.
    TooLarge,
    /// `PacketIndex` is not below `TotalPackets`.
    IndexOutOfRange,
    /// `Offset` + `DataSize` is beyond `MessageSize`.
    OutsideMessage,
    /// `TotalPackets`, `MessageSize` or the Command differ from the message's earlier fragments.
    Mismatch,
    /// `Offset` cannot be right: it overlaps or leaves a gap with the fragments around it.
    OffsetConflict,
    /// A fragment already held, or of a message already delivered.
    Duplicate,
    /// A fragment of a message abandoned earlier.
    Abandoned,
    /// A fragment that does not fit the limits even after evicting older messages.
    OverLimit,
    /// A PACKET2_ACK for no message being sent, or for a fragment not sent yet.
    UnknownAck,
    /// A PACKET2_ACK for a fragment acknowledged before (MC-DPL4CS 3.1.5.29: ignored).
    RepeatedAck,
}

impl DropReason {
    /// Every reason, in declaration order.
    pub const ALL: [Self; 13] = [
        Self::Malformed,
        Self::EmptyFragment,
        Self::BadTotalPackets,
        Self::TooLarge,
        Self::IndexOutOfRange,
        Self::OutsideMessage,
        Self::Mismatch,
        Self::OffsetConflict,
        Self::Duplicate,
        Self::Abandoned,
        Self::OverLimit,
        Self::UnknownAck,
        Self::RepeatedAck,
    ];
}

/// Counters of what the endpoint did and refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Messages given to [`crate::Dpsp::send`].
    pub messages_sent: u64,
    /// Fragments transmitted, first sends and resends.
    pub fragments_sent: u64,
    /// Of those, resends by the Packetize timer.
    pub fragments_resent: u64,
    /// PACKET2_ACKs transmitted.
    pub acks_sent: u64,
    /// Fragments handled (accepted or dropped).
    pub fragments_received: u64,
    /// PACKET2_ACKs handled.
    pub acks_received: u64,
    /// Messages delivered.
    pub messages_delivered: u64,
    /// Reliable sends fully acknowledged.
    pub sends_completed: u64,
    /// Reliable sends abandoned.
    pub sends_aborted: u64,
    /// Partial messages abandoned (idle, evicted, nested).
    pub reassemblies_abandoned: u64,
    /// Times a sender went past a limit.
    pub limits_exceeded: u64,
    drops: [u64; DropReason::ALL.len()],
}

impl Stats {
    /// Messages dropped for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.drops.get(reason as usize).copied().unwrap_or(0)
    }

    /// Messages dropped for any reason.
    pub fn dropped_total(&self) -> u64 {
        self.drops.iter().sum()
    }

    pub(crate) fn drop(&mut self, reason: DropReason) {
        if let Some(n) = self.drops.get_mut(reason as usize) {
            *n += 1;
        }
    }
}
