//! What the runtime drives: a sans-IO protocol with the handle/poll shape of STYLE.md §2.

use std::net::SocketAddr;
use std::time::Instant;

/// One of the sockets a runtime binds: the index of its [`crate::SocketSpec`] in
/// [`crate::RuntimeConfig::sockets`]. A DirectPlay 8 runtime has one, [`SocketId::MAIN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SocketId(pub usize);

impl SocketId {
    /// The first socket: the one single-socket protocols use.
    pub const MAIN: Self = Self(0);
}

/// One TCP connection, accepted or opened; never reused within a runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

/// How a [`Transmit`] travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Path {
    /// A datagram sent from this UDP socket.
    Udp(SocketId),
    /// Bytes on the TCP connection the runtime keeps to the destination: opened (without
    /// blocking) on first use and reused while it stays open. The bytes are written in order,
    /// whole, after everything queued before them on that connection.
    Tcp,
    /// Bytes on this connection, accepted or opened (a relay answers a peer behind NAT on the
    /// connection the peer opened; docs/relay.md). Dropped when it has closed; `to` is only
    /// for the record.
    Stream(StreamId),
}

/// Where the bytes [`Protocol::poll_send`] wrote go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Transmit {
    /// The destination: a UDP socket, or a TCP listener.
    pub to: SocketAddr,
    /// UDP (from which socket) or TCP.
    pub path: Path,
}

/// Why a TCP connection ended, for [`Protocol::handle_stream_closed`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The peer closed it.
    Closed,
    /// It could not be opened: refused, unreachable, or no answer within the connect timeout.
    ConnectFailed(String),
    /// A read or a write failed (reset by the peer, broken pipe ...).
    Failed(String),
    /// [`Protocol::handle_stream`] refused its bytes, for this reason.
    Rejected(String),
    /// More bytes were queued for it than [`crate::RuntimeConfig::stream_write_limit`], or
    /// past [`crate::WRITE_BACKLOG`] while the memory budget was full
    /// ([`Protocol::memory_budget`]): the peer does not read.
    Overflow,
    /// It missed one of the deadlines of [`crate::StreamLimits`].
    TimedOut(StreamDeadline),
    /// We opened it to an address the protocol gave up on ([`Protocol::poll_abandon`]).
    Abandoned,
    /// Accepted and closed at once: its source IP already has
    /// [`crate::StreamLimits::max_per_source`] connections, or every connection is taken by
    /// known peers.
    Refused(StreamRefusal),
    /// Closed to make room for a newer connection when [`crate::RuntimeConfig::max_streams`]
    /// were open: the oldest accepted one belonging to no known peer, else the longest idle
    /// one we opened with nothing left to write.
    Evicted,
}

/// Which deadline of [`crate::StreamLimits`] a connection missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum StreamDeadline {
    /// No whole message within [`crate::StreamLimits::first_message`] of being accepted.
    FirstMessage,
    /// No whole message for [`crate::StreamLimits::idle_unknown`] while belonging to no known
    /// peer.
    IdleUnknown,
    /// A message begun and not finished within [`crate::StreamLimits::partial_message`].
    PartialMessage,
    /// A connection we opened had no read or write for [`crate::StreamLimits::idle_opened`].
    IdleOpened,
}

/// Why an accepted connection was closed at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum StreamRefusal {
    /// Its source IP has [`crate::StreamLimits::max_per_source`] connections already.
    PerSource,
    /// [`crate::RuntimeConfig::max_streams`] connections are open and none can be evicted
    /// (all accepted ones belong to known peers, all opened ones have bytes to write).
    Full,
}

impl CloseReason {
    /// A short name (lower case with `-`) of a close the runtime decided on to protect itself (a
    /// deadline, a cap, an eviction), for counters, logs and JSON; `None` for the others.
    pub fn guard_name(&self) -> Option<&'static str> {
        Some(match self {
            Self::TimedOut(StreamDeadline::FirstMessage) => "tcp-first-message-timeout",
            Self::TimedOut(StreamDeadline::IdleUnknown) => "tcp-idle-timeout",
            Self::TimedOut(StreamDeadline::PartialMessage) => "tcp-partial-message-timeout",
            Self::TimedOut(StreamDeadline::IdleOpened) => "tcp-idle-opened-timeout",
            Self::Refused(StreamRefusal::PerSource) => "tcp-per-source-cap",
            Self::Refused(StreamRefusal::Full) => "tcp-full",
            Self::Evicted => "tcp-evicted",
            Self::Closed
            | Self::ConnectFailed(_)
            | Self::Failed(_)
            | Self::Rejected(_)
            | Self::Overflow
            | Self::Abandoned => {
                return None;
            }
        })
    }
}

/// What a protocol tells the runtime about a TCP connection after a read, so the runtime can
/// hold it to the deadlines of [`crate::StreamLimits`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamStatus {
    /// The read completed at least one whole message.
    pub message: bool,
    /// Bytes of a message not yet complete are held.
    pub partial: bool,
    /// The connection belongs to a peer the protocol knows (a player exists for it): the
    /// deadlines for unknown connections no longer apply, and it is never evicted.
    pub known: bool,
}

/// A TCP connection that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamClosed {
    /// The remote end.
    pub peer: SocketAddr,
    /// For a connection we opened, the address it was opened to (a [`Transmit::to`]);
    /// `None` for one we accepted.
    pub opened_to: Option<SocketAddr>,
    /// Why it ended.
    pub reason: CloseReason,
    /// Bytes queued for it that were never written.
    pub unsent: usize,
}

/// A sans-IO protocol endpoint driven by the runtime's event loop.
///
/// The runtime calls, in this order on every turn of its loop: `handle_udp` for each datagram
/// read and `handle_stream` for each read on a TCP connection (`handle_stream_closed` when one
/// ends), `handle_command` for each command received, `handle_timeout` once the deadline from
/// `poll_timeout` has passed, then `poll_send` until it returns `None` and `poll_event` until it
/// returns `None`, and finally `poll_timeout` for the next wake-up.
///
/// A protocol on one UDP socket (DirectPlay 8) implements `handle_datagram` and
/// `poll_transmit`; the defaults of `handle_udp` and `poll_send` route them through
/// [`SocketId::MAIN`]. A protocol with several sockets and TCP (DirectPlay 4) implements
/// `handle_udp`, `poll_send`, `handle_stream` and `handle_stream_closed` instead.
pub trait Protocol: Send + 'static {
    /// What the application asks of the protocol.
    type Command: Send + 'static;
    /// What the protocol tells the application.
    type Event: Send + 'static;

    /// A datagram arrived from `from` on the main socket.
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let _ = (now, from, data);
    }
    /// A datagram arrived from `from` on UDP socket `socket`.
    fn handle_udp(&mut self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) {
        let _ = socket;
        self.handle_datagram(now, from, data);
    }
    /// Bytes read on TCP connection `stream`, whose remote end is `peer`: any number, from
    /// part of a message to several. An error closes the connection, with its text logged and
    /// reported as [`CloseReason::Rejected`]; else the [`StreamStatus`] feeds its deadlines.
    fn handle_stream(
        &mut self,
        now: Instant,
        stream: StreamId,
        peer: SocketAddr,
        data: &[u8],
    ) -> Result<StreamStatus, String> {
        let _ = (now, stream, peer, data);
        Err("this protocol takes no TCP connections".into())
    }
    /// Listener `listener` accepted connection `stream` from `peer` (before its first bytes).
    fn handle_stream_accepted(
        &mut self,
        now: Instant,
        stream: StreamId,
        listener: SocketId,
        peer: SocketAddr,
    ) {
        let _ = (now, stream, listener, peer);
    }
    /// TCP connection `stream` ended; nothing more is read from or written to it. Connections
    /// refused at once ([`CloseReason::Refused`]) are reported here too, with a fresh id.
    fn handle_stream_closed(&mut self, now: Instant, stream: StreamId, closed: &StreamClosed) {
        let _ = (now, stream, closed);
    }
    /// The application sent a command.
    fn handle_command(&mut self, now: Instant, command: Self::Command);
    /// The deadline given by `poll_timeout` has passed.
    fn handle_timeout(&mut self, now: Instant);
    /// The next datagram to send from the main socket: writes it into `buf` (cleared by the
    /// caller) and returns its destination, or `None` when nothing is queued.
    fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let _ = (now, buf);
        None
    }
    /// The next bytes to send: writes them into `buf` (cleared by the caller) and says where
    /// they go, or `None` when nothing is queued.
    fn poll_send(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let to = self.poll_transmit(now, buf)?;
        Some(Transmit { to, path: Path::Udp(SocketId::MAIN) })
    }
    /// The next event for the application.
    fn poll_event(&mut self) -> Option<Self::Event>;
    /// The memory budget that the bytes queued on its TCP connections are charged to
    /// (docs/limits.md), asked once when the loop starts; `None` charges nothing.
    fn memory_budget(&self) -> Option<dplay_wire::budget::MemoryBudget> {
        None
    }
    /// When `handle_timeout` must next be called.
    fn poll_timeout(&self) -> Option<Instant>;
    /// True once the protocol has nothing left to do: the loop ends by itself once this holds
    /// and everything queued has been written.
    fn is_finished(&self) -> bool {
        false
    }

    /// An address whose peer the protocol gave up on (it went silent): every TCP connection
    /// we opened to it is closed now with what it still holds
    /// ([`CloseReason::Abandoned`]), so the next message there opens a new one rather than
    /// queue behind a dead link; asked after every turn until `None`.
    fn poll_abandon(&mut self) -> Option<SocketAddr> {
        None
    }

    /// A socket of the configuration left closed ([`crate::SocketSpec::on_demand`]) to open
    /// now; asked after every turn until `None`.
    fn poll_open(&mut self) -> Option<SocketId> {
        None
    }

    /// Socket `id` asked for by [`Protocol::poll_open`] was opened at this address, or could
    /// not be, and why.
    fn handle_opened(&mut self, now: Instant, id: SocketId, result: Result<SocketAddr, String>) {
        let _ = (now, id, result);
    }
}

/// Which way bytes went, for a [`Tap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Read from the socket.
    Received,
    /// Written to the socket.
    Sent,
}

/// Sees every datagram and every TCP read and write of the runtime (for `--pcap` recording
/// and tracing).
pub trait Tap: Send + 'static {
    /// One datagram between `local` and `remote`.
    fn datagram(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]);
    /// Bytes read from or written to the TCP connection between `local` and `remote`, as the
    /// socket took or gave them (message boundaries are not kept).
    fn stream(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        let _ = (direction, local, remote, data);
    }
}
