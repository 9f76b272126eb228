//! TCP-like streams between simulated addresses (docs/decisions.md, "dplay-sim streams").
//!
//! A node connects to a listener ([`crate::Sim::listen`]) with [`StreamCommand::Connect`],
//! writes with [`StreamCommand::Write`] and closes with [`StreamCommand::Close`]; it hears
//! [`StreamEvent`]s. What a stream promises is what TCP promises: the bytes arrive once, in
//! order, cut into segments at places the seed picks. The link's loss shows only as delay
//! (a lost segment is retransmitted after a retransmission timeout that doubles, and every
//! later byte waits for it); a partition stalls the stream, and a stream stalled for
//! [`StreamConfig::stall_reset`] is reset at the end that has bytes to send (with
//! [`StreamConfig::keepalive`], every connection a partition cuts is reset at both ends after
//! that, idle or not). A connect to an
//! address whose host has no listener there is refused after a round trip; one to nothing
//! (an unused address, a NATed address from outside, across a partition) is unanswered and
//! times out after [`StreamConfig::connect_timeout`]. An outbound connection through a NAT
//! takes a mapping from the NAT's TCP table (cone or symmetric as the NAT says); no inbound
//! connect ever passes a NAT.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Where accepted connections are numbered from: ids below it are the connecting node's own.
pub const ACCEPTED_BASE: u64 = 1 << 63;

/// A connection's id at one end: the connecting node picks it (below [`ACCEPTED_BASE`], unique
/// among that node's open connections); the sim numbers accepted ones from [`ACCEPTED_BASE`].
pub type StreamId = u64;

/// What a node asks of its streams ([`crate::Node::poll_stream`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamCommand {
    /// Opens connection `conn` to the listener `to`. Writes may follow at once: they wait for
    /// the handshake, as in a socket's send buffer.
    Connect {
        /// The id the node picks (below [`ACCEPTED_BASE`]).
        conn: StreamId,
        /// The listener.
        to: SocketAddr,
    },
    /// Appends `data` to connection `conn`.
    Write {
        /// The connection.
        conn: StreamId,
        /// The bytes.
        data: Vec<u8>,
    },
    /// Closes connection `conn` after what was written (a FIN): the node hears nothing more
    /// of it, the peer hears [`StreamEnd::Closed`] after the last byte.
    Close {
        /// The connection.
        conn: StreamId,
    },
}

/// Why a connection ended, as its end hears it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The peer closed it after its last byte (a FIN).
    Closed,
    /// A connect reached a host with no listener there (an RST answered the SYN).
    Refused,
    /// A connect was never answered within [`StreamConfig::connect_timeout`].
    TimedOut,
    /// Reset: it stalled past [`StreamConfig::stall_reset`], the peer reset it, or the peer
    /// had closed it when our bytes arrived.
    Reset,
}

/// What a node hears of its streams ([`crate::Node::handle_stream`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Our listener `listener` accepted connection `conn` from `peer` (as seen from here:
    /// after any NAT).
    Accepted {
        /// The id at this end.
        conn: StreamId,
        /// Which of our listeners.
        listener: SocketAddr,
        /// The connecting end's address.
        peer: SocketAddr,
    },
    /// Our connect `conn` was answered.
    Connected {
        /// The connection.
        conn: StreamId,
    },
    /// The next bytes of connection `conn`.
    Data {
        /// The connection.
        conn: StreamId,
        /// One segment.
        data: Vec<u8>,
    },
    /// Connection `conn` ended; nothing more comes on it, and writes to it are dropped.
    Ended {
        /// The connection.
        conn: StreamId,
        /// How.
        how: StreamEnd,
    },
}

/// How streams behave; the link's latency, jitter, loss and partitions apply too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamConfig {
    /// The largest segment (bytes); each segment's size is drawn in `1..=mss`.
    pub mss: usize,
    /// The first retransmission timeout of a lost segment; it doubles for each loss of the
    /// same segment.
    pub rto: Duration,
    /// The first SYN retransmission timeout; it doubles likewise.
    pub syn_rto: Duration,
    /// An unanswered connect ends [`StreamEnd::TimedOut`] after this.
    pub connect_timeout: Duration,
    /// A stream that cannot deliver for this long (a partition: a pulled cable) is reset at
    /// the end that has bytes waiting.
    pub stall_reset: Duration,
    /// With keepalive (and a user timeout) on every connection, as `dplay-runtime` sets them:
    /// a connection cut by a partition is reset at both ends after this, idle or not (`None`:
    /// only [`Self::stall_reset`] ends it, at the end with bytes waiting).
    pub keepalive: Option<Duration>,
}

impl Default for StreamConfig {
    /// Linux's, roughly (the kernel under our runtime): segments of up to 1460 bytes, RTO
    /// 200 ms, SYN RTO 1 s (RFC 6298); a connect given up after 21 s (Windows' bound; Linux
    /// tries for 127 s) and a stalled stream reset after 60 s, so that tests stay short.
    fn default() -> Self {
        Self {
            mss: 1460,
            rto: Duration::from_millis(200),
            syn_rto: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(21),
            stall_reset: Duration::from_secs(60),
            keepalive: None,
        }
    }
}

/// What the streams did, over the whole sim.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Connects tried.
    pub connects: u64,
    /// Connects accepted by a listener.
    pub accepted: u64,
    /// Connects refused (no listener at that host).
    pub refused: u64,
    /// Connects never answered.
    pub timed_out: u64,
    /// Connects a NAT dropped (inbound to a NATed address).
    pub nat_dropped: u64,
    /// Segments delivered.
    pub segments: u64,
    /// Bytes delivered.
    pub bytes: u64,
    /// Segment and SYN retransmissions (each a loss on the link).
    pub retransmits: u64,
    /// Connections reset.
    pub resets: u64,
}

/// One segment in flight or held: bytes, or the FIN after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Data(Vec<u8>),
    Fin,
    /// The sender reset the connection.
    Rst,
}

/// One direction of a connection.
#[derive(Debug, Default)]
pub(crate) struct Direction {
    /// When the last segment sent this way arrives: later ones never overtake it.
    pub(crate) last_arrival: Option<Instant>,
    /// Segments waiting out a partition, in order.
    pub(crate) held: VecDeque<Segment>,
    /// Since when it has been stalled.
    pub(crate) stalled_since: Option<Instant>,
    /// The next retry's backoff.
    pub(crate) backoff: Duration,
    /// How many of `held` were already in flight when the partition caught them: they go
    /// before those sent since.
    pub(crate) returned: usize,
}

/// A value for each end of a connection: end 0 connected, end 1 accepted (any other index
/// is end 1).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ends<T>(pub(crate) T, pub(crate) T);

impl<T> Ends<T> {
    pub(crate) fn at(&self, end: usize) -> T
    where
        T: Copy,
    {
        if end == 0 { self.0 } else { self.1 }
    }

    pub(crate) fn at_ref(&self, end: usize) -> &T {
        if end == 0 { &self.0 } else { &self.1 }
    }

    pub(crate) fn at_mut(&mut self, end: usize) -> &mut T {
        if end == 0 { &mut self.0 } else { &mut self.1 }
    }
}

/// One connection; direction `d` runs from end `d`.
#[derive(Debug)]
pub(crate) struct Conn {
    pub(crate) nodes: Ends<crate::NodeId>,
    pub(crate) ids: Ends<StreamId>,
    /// The connector's address as the acceptor sees it, and the listener.
    pub(crate) addrs: Ends<SocketAddr>,
    pub(crate) established: bool,
    /// Whether each end still has it (not closed by it, not ended for it).
    pub(crate) open: Ends<bool>,
    /// What end 0 wrote before the handshake finished.
    pub(crate) early: Vec<Segment>,
    pub(crate) dirs: Ends<Direction>,
}
