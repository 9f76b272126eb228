//! TCP connections of the event loop: accepted from a listener or opened on demand to the
//! destination of a [`crate::Path::Tcp`] transmit (MC-DPL4CS 2.1).
//!
//! Every connection is non-blocking. Reads go until the socket would block, each chunk handed
//! to [`Protocol::handle_stream`]. Writes go into a per-connection buffer bounded by
//! [`crate::RuntimeConfig::stream_write_limit`] and leave it as the socket takes them (partial
//! writes keep the rest for the next writable event). A connection that closes, fails, is
//! refused by the protocol, overflows or cannot be opened within the connect timeout is
//! reported once through [`Protocol::handle_stream_closed`].
//!
//! Accepted connections are held to [`StreamLimits`] (issue 14; docs/limits.md): a first
//! whole message within a deadline, an idle deadline while no known peer owns them, a deadline
//! for every partial message, and a cap per source IP. At [`crate::RuntimeConfig::max_streams`]
//! a new connection, accepted or opened, evicts the oldest one that no known peer owns (else
//! the longest idle one we opened), so stalled connections cannot lock newcomers out, nor
//! replies to forged requests fill the table.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::IpAddr;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_wire::budget::{Charge, MemoryBudget};
use mio::net::TcpStream;
use mio::{Interest, Token};

use crate::bind::Bound;
use crate::event_loop::{EventLoop, StreamLimits};
use crate::{
    CloseReason, Direction, Protocol, RuntimeError, SocketId, StreamClosed, StreamDeadline, StreamId,
    StreamRefusal, StreamStatus,
};

/// Bytes queued for a connection that its peer may leave unread whatever the memory budget:
/// one socket buffer's worth. Past it, while the budget is full, more bytes for it close it as
/// [`CloseReason::Overflow`] (docs/limits.md).
pub const WRITE_BACKLOG: usize = 64 << 10;

/// Tokens from here on are connections: `Token(FIRST_STREAM_TOKEN + id)`.
const FIRST_STREAM_TOKEN: usize = 1 << 20;

/// The connection a token names, if it names one.
pub(crate) fn stream_of(token: Token) -> Option<StreamId> {
    token.0.checked_sub(FIRST_STREAM_TOKEN).and_then(|i| u64::try_from(i).ok()).map(StreamId)
}

fn token_of(id: StreamId) -> Token {
    Token(FIRST_STREAM_TOKEN.saturating_add(usize::try_from(id.0).unwrap_or(usize::MAX)))
}

/// One TCP connection.
struct Conn {
    socket: TcpStream,
    peer: SocketAddr,
    /// The destination it was opened to; `None` when accepted.
    opened_to: Option<SocketAddr>,
    /// Until when it may still be connecting; `None` once connected.
    connecting_until: Option<Instant>,
    /// Bytes queued; `out[written..]` is still to be written.
    out: Vec<u8>,
    written: usize,
    /// The bytes still to be written, charged to the memory budget as held.
    charge: Charge,
    /// Whether the socket is registered for writable events.
    writable_interest: bool,
    /// When it was accepted; `None` when we opened it.
    accepted_at: Option<Instant>,
    /// When its last whole message arrived.
    last_message: Option<Instant>,
    /// Since when part of a message is held.
    partial_since: Option<Instant>,
    /// The protocol said it belongs to a known peer.
    known: bool,
    /// Its last read or write.
    last_activity: Instant,
}

impl Conn {
    fn unsent(&self) -> usize {
        self.out.len().saturating_sub(self.written)
    }

    /// Charges what is still to be written: counted, never refused here ([`Streams`] closes a
    /// connection whose peer is behind when the budget is full).
    fn sync_charge(&mut self) {
        let unsent = self.unsent();
        self.charge.set_held(unsent);
    }

    /// An accepted connection that no known peer owns: the deadlines for unknown connections
    /// apply, and it may be evicted.
    fn unknown(&self) -> bool {
        self.accepted_at.is_some() && !self.known
    }

    /// The earliest deadline it is held to, and what missing it means.
    fn deadline(&self, limits: &StreamLimits) -> Option<(Instant, CloseReason)> {
        let connect = self.connecting_until.map(|t| (t, CloseReason::ConnectFailed("no answer".into())));
        let partial = self
            .partial_since
            .map(|t| (t + limits.partial_message, CloseReason::TimedOut(StreamDeadline::PartialMessage)));
        let unknown = self.accepted_at.filter(|_| !self.known).map(|accepted| match self.last_message {
            None => (accepted + limits.first_message, CloseReason::TimedOut(StreamDeadline::FirstMessage)),
            Some(t) => (t + limits.idle_unknown, CloseReason::TimedOut(StreamDeadline::IdleUnknown)),
        });
        let idle_opened = self.opened_to.filter(|_| self.connecting_until.is_none()).map(|_| {
            (self.last_activity + limits.idle_opened, CloseReason::TimedOut(StreamDeadline::IdleOpened))
        });
        [connect, partial, unknown, idle_opened].into_iter().flatten().min_by_key(|(t, _)| *t)
    }

    /// Takes what the protocol said after a read at `now`.
    fn update(&mut self, now: Instant, status: StreamStatus) {
        if status.message {
            self.last_message = Some(now);
        }
        self.partial_since = match (status.partial, status.message) {
            (false, _) => None,
            (true, true) => Some(now),
            (true, false) => Some(self.partial_since.unwrap_or(now)),
        };
        self.known |= status.known;
    }
}

/// The connection table.
pub(crate) struct Streams {
    conns: HashMap<StreamId, Conn>,
    /// The connection we opened to each destination, reused while open.
    outbound: HashMap<SocketAddr, StreamId>,
    next_id: u64,
    write_limit: usize,
    connect_timeout: Duration,
    max: usize,
    limits: StreamLimits,
    /// Accepted connections open, by source IP.
    per_source: HashMap<IpAddr, usize>,
    /// What the bytes queued for peers are charged to.
    budget: MemoryBudget,
}

impl Streams {
    pub(crate) fn new(
        write_limit: usize,
        connect_timeout: Duration,
        max: usize,
        limits: StreamLimits,
        budget: MemoryBudget,
    ) -> Self {
        Self {
            conns: HashMap::new(),
            outbound: HashMap::new(),
            next_id: 0,
            write_limit,
            connect_timeout,
            max,
            limits,
            per_source: HashMap::new(),
            budget,
        }
    }

    /// The earliest deadline of any connection.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.conns.values().filter_map(|c| c.deadline(&self.limits)).map(|(t, _)| t).min()
    }

    /// The connection to close when the table is full: the oldest accepted one no known peer
    /// owns; else the one we opened that has been idle longest, with nothing left to write
    /// (the next message to its peer opens a new one).
    fn eviction_victim(&self) -> Option<StreamId> {
        let unknown =
            self.conns.iter().filter(|(_, c)| c.unknown()).min_by_key(|(id, c)| (c.accepted_at, **id));
        let idle_opened = || {
            self.conns
                .iter()
                .filter(|(_, c)| c.opened_to.is_some() && c.connecting_until.is_none() && c.unsent() == 0)
                .min_by_key(|(id, c)| (c.last_activity, **id))
        };
        unknown.or_else(idle_opened).map(|(id, _)| *id)
    }

    /// True when no connection has bytes waiting to be written.
    pub(crate) fn all_written(&self) -> bool {
        self.conns.values().all(|c| c.unsent() == 0)
    }

    fn allocate(&mut self) -> StreamId {
        let id = StreamId(self.next_id);
        self.next_id += 1;
        id
    }
}

impl<P: Protocol> EventLoop<P> {
    /// Accepts every pending connection on listener `id`.
    pub(crate) fn accept_all(&mut self, id: SocketId) -> Result<(), RuntimeError> {
        loop {
            let Some(Bound::Listener(listener)) = self.sockets.get(id.0) else { return Ok(()) };
            let (mut socket, peer) = match listener.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A connection reset before we took it, or out of descriptors: it is lost,
                // the listener goes on.
                Err(e) => {
                    tracing::warn!("accepting a TCP connection failed: {e}");
                    return Ok(());
                }
            };
            let now = Instant::now();
            if let Some(refusal) = self.make_room(now, peer)? {
                // Counted and logged (once per source per interval) by the protocol.
                tracing::debug!(%peer, ?refusal, "TCP connection refused");
                let stream = self.streams.allocate();
                let closed =
                    StreamClosed { peer, opened_to: None, reason: CloseReason::Refused(refusal), unsent: 0 };
                self.protocol.handle_stream_closed(now, stream, &closed);
                continue;
            }
            let stream = self.streams.allocate();
            self.poll.registry().register(&mut socket, token_of(stream), Interest::READABLE)?;
            tracing::debug!(%peer, stream = stream.0, "TCP connection accepted");
            let conn = Conn {
                socket,
                peer,
                opened_to: None,
                connecting_until: None,
                out: Vec::new(),
                written: 0,
                charge: self.streams.budget.account(),
                writable_interest: false,
                accepted_at: Some(now),
                last_message: None,
                partial_since: None,
                known: false,
                last_activity: now,
            };
            *self.streams.per_source.entry(peer.ip()).or_default() += 1;
            self.streams.conns.insert(stream, conn);
            self.protocol.handle_stream_accepted(now, stream, id, peer);
        }
    }

    /// Room for a connection accepted from `peer`: `None` when it may stay (after evicting the
    /// oldest unknown connection if the table is full), else why it is refused.
    fn make_room(&mut self, now: Instant, peer: SocketAddr) -> Result<Option<StreamRefusal>, RuntimeError> {
        let from_source = self.streams.per_source.get(&peer.ip()).copied().unwrap_or(0);
        if from_source >= self.streams.limits.max_per_source {
            return Ok(Some(StreamRefusal::PerSource));
        }
        Ok((!self.room_for_one(now)?).then_some(StreamRefusal::Full))
    }

    /// Makes room for one more connection if the table is full, evicting
    /// [`Streams::eviction_victim`]; false when there is none to evict.
    fn room_for_one(&mut self, now: Instant) -> Result<bool, RuntimeError> {
        if self.streams.conns.len() < self.streams.max {
            return Ok(true);
        }
        let Some(victim) = self.streams.eviction_victim() else { return Ok(false) };
        let unsent = self.streams.conns.get(&victim).map_or(0, Conn::unsent);
        self.close(now, victim, CloseReason::Evicted, unsent)?;
        Ok(true)
    }

    /// Queues `data` on the connection to `to`, opening one if there is none.
    pub(crate) fn send_stream(
        &mut self,
        now: Instant,
        to: SocketAddr,
        data: &[u8],
    ) -> Result<(), RuntimeError> {
        let id = match self.streams.outbound.get(&to) {
            Some(id) => *id,
            None => match self.connect(now, to, data.len())? {
                Some(id) => id,
                None => return Ok(()),
            },
        };
        self.send_on_stream(now, id, data)
    }

    /// Queues `data` on connection `id`, accepted or opened ([`crate::Path::Stream`]); dropped
    /// when it is closed.
    pub(crate) fn send_on_stream(
        &mut self,
        now: Instant,
        id: StreamId,
        data: &[u8],
    ) -> Result<(), RuntimeError> {
        let Some(conn) = self.streams.conns.get_mut(&id) else {
            tracing::debug!(stream = id.0, len = data.len(), "bytes for a closed connection dropped");
            return Ok(());
        };
        let behind = conn.unsent() >= WRITE_BACKLOG && !self.streams.budget.fits(data.len());
        if conn.unsent() + data.len() > self.streams.write_limit || behind {
            let unsent = conn.unsent() + data.len();
            return self.close(now, id, CloseReason::Overflow, unsent);
        }
        if conn.written > 0 {
            conn.out.drain(..conn.written);
            conn.written = 0;
        }
        conn.out.extend_from_slice(data);
        conn.sync_charge();
        if conn.connecting_until.is_none() { self.write_pending(now, id) } else { Ok(()) }
    }

    /// The address to connect to `to` from: that of our first TCP listener when it is bound to
    /// one address of `to`'s family; else the route picks it.
    fn stream_source(&self, to: SocketAddr) -> Option<IpAddr> {
        let listener =
            self.sockets.iter().zip(&self.local_addrs).find(|(s, _)| matches!(s, Bound::Listener(_)));
        listener.map(|(_, a)| a.ip()).filter(|ip| !ip.is_unspecified() && ip.is_ipv4() == to.is_ipv4())
    }

    /// Starts connecting to `to`; on an immediate failure the protocol hears of it (with the
    /// `queued` bytes that will not be sent) and `None` comes back.
    fn connect(
        &mut self,
        now: Instant,
        to: SocketAddr,
        queued: usize,
    ) -> Result<Option<StreamId>, RuntimeError> {
        if !self.room_for_one(now)? {
            let stream = self.streams.allocate();
            let reason = CloseReason::ConnectFailed("every TCP connection is in use".into());
            tracing::debug!(%to, "cannot connect: every TCP connection is in use");
            let closed = StreamClosed { peer: to, opened_to: Some(to), reason, unsent: queued };
            self.protocol.handle_stream_closed(now, stream, &closed);
            return Ok(None);
        }
        let stream = self.streams.allocate();
        let mut socket = match crate::bind::connect(self.stream_source(to), to) {
            Ok(s) => s,
            Err(e) => {
                let closed = StreamClosed {
                    peer: to,
                    opened_to: Some(to),
                    reason: CloseReason::ConnectFailed(e.to_string()),
                    unsent: queued,
                };
                tracing::info!(%to, "cannot connect: {e}");
                self.protocol.handle_stream_closed(now, stream, &closed);
                return Ok(None);
            }
        };
        self.poll.registry().register(
            &mut socket,
            token_of(stream),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        let conn = Conn {
            socket,
            peer: to,
            opened_to: Some(to),
            connecting_until: Some(now + self.streams.connect_timeout),
            out: Vec::new(),
            written: 0,
            charge: self.streams.budget.account(),
            writable_interest: true,
            accepted_at: None,
            last_message: None,
            partial_since: None,
            known: false,
            last_activity: now,
        };
        self.streams.conns.insert(stream, conn);
        self.streams.outbound.insert(to, stream);
        Ok(Some(stream))
    }

    /// Closes the connection we opened to `to`, if any, with what it still holds
    /// ([`crate::Protocol::poll_abandon`]).
    pub(crate) fn abandon_streams(&mut self, now: Instant, to: SocketAddr) -> Result<(), RuntimeError> {
        let Some(id) = self.streams.outbound.get(&to).copied() else { return Ok(()) };
        let unsent = self.streams.conns.get(&id).map_or(0, Conn::unsent);
        tracing::debug!(%to, stream = id.0, unsent, "TCP connection to a silent peer abandoned");
        self.close(now, id, CloseReason::Abandoned, unsent)
    }

    /// Closes every connection past one of its deadlines: still connecting past the connect
    /// timeout, or past a deadline of [`StreamLimits`].
    pub(crate) fn expire_streams(&mut self, now: Instant) -> Result<(), RuntimeError> {
        let limits = &self.streams.limits;
        let late: Vec<(StreamId, CloseReason, usize)> = self
            .streams
            .conns
            .iter()
            .filter_map(|(id, c)| {
                let (at, reason) = c.deadline(limits)?;
                (at <= now).then(|| (*id, reason, c.unsent()))
            })
            .collect();
        for (id, reason, unsent) in late {
            self.close(now, id, reason, unsent)?;
        }
        Ok(())
    }

    /// A readiness event on connection `id`.
    pub(crate) fn stream_ready(
        &mut self,
        id: StreamId,
        readable: bool,
        writable: bool,
        buf: &mut [u8],
    ) -> Result<(), RuntimeError> {
        let now = Instant::now();
        let Some(conn) = self.streams.conns.get_mut(&id) else { return Ok(()) };
        if conn.connecting_until.is_some() {
            if !(readable || writable) {
                return Ok(());
            }
            let failed = match conn.socket.take_error() {
                Ok(Some(e)) | Err(e) => Some(e.to_string()),
                Ok(None) => match conn.socket.peer_addr() {
                    Ok(_) => None,
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => return Ok(()),
                    Err(e) => Some(e.to_string()),
                },
            };
            if let Some(e) = failed {
                let unsent = conn.unsent();
                tracing::info!(peer = %conn.peer, "cannot connect: {e}");
                return self.close(now, id, CloseReason::ConnectFailed(e), unsent);
            }
            conn.connecting_until = None;
            tracing::debug!(peer = %conn.peer, stream = id.0, "TCP connection opened");
        }
        if readable && !self.read_stream(now, id, buf)? {
            return Ok(());
        }
        if writable { self.write_pending(now, id) } else { Ok(()) }
    }

    /// Reads connection `id` until it would block; false when it was closed.
    fn read_stream(&mut self, now: Instant, id: StreamId, buf: &mut [u8]) -> Result<bool, RuntimeError> {
        loop {
            let Some(conn) = self.streams.conns.get_mut(&id) else { return Ok(false) };
            let unsent = conn.unsent();
            let peer = conn.peer;
            match conn.socket.read(buf) {
                Ok(0) => {
                    self.close(now, id, CloseReason::Closed, unsent)?;
                    return Ok(false);
                }
                Ok(len) => {
                    conn.last_activity = now;
                    let data = buf.get(..len).unwrap_or_default();
                    if let (Some(tap), Ok(local)) = (self.tap.as_mut(), conn.socket.local_addr()) {
                        tap.stream(Direction::Received, local, peer, data);
                    }
                    match self.protocol.handle_stream(now, id, peer, data) {
                        Ok(status) => {
                            if let Some(conn) = self.streams.conns.get_mut(&id) {
                                conn.update(now, status);
                            }
                        }
                        Err(reason) => {
                            // Logged, once per source per interval, by the protocol.
                            tracing::debug!(%peer, "TCP connection dropped: {reason}");
                            self.close(now, id, CloseReason::Rejected(reason), unsent)?;
                            return Ok(false);
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.close(now, id, CloseReason::Failed(e.to_string()), unsent)?;
                    return Ok(false);
                }
            }
        }
    }

    /// Writes connection `id`'s queued bytes until done or the socket would block.
    fn write_pending(&mut self, now: Instant, id: StreamId) -> Result<(), RuntimeError> {
        let Some(conn) = self.streams.conns.get_mut(&id) else { return Ok(()) };
        if conn.connecting_until.is_some() {
            return Ok(());
        }
        while conn.written < conn.out.len() {
            let Some(rest) = conn.out.get(conn.written..) else { break };
            match conn.socket.write(rest) {
                Ok(0) => {
                    let unsent = conn.unsent();
                    return self.close(
                        now,
                        id,
                        CloseReason::Failed("the connection took no bytes".into()),
                        unsent,
                    );
                }
                Ok(n) => {
                    if let (Some(tap), Ok(local)) = (self.tap.as_mut(), conn.socket.local_addr()) {
                        tap.stream(Direction::Sent, local, conn.peer, rest.get(..n).unwrap_or_default());
                    }
                    conn.written += n;
                    conn.last_activity = now;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let unsent = conn.unsent();
                    return self.close(now, id, CloseReason::Failed(e.to_string()), unsent);
                }
            }
        }
        if conn.written == conn.out.len() {
            conn.out.clear();
            conn.written = 0;
        }
        conn.sync_charge();
        let want = conn.written < conn.out.len();
        if want != conn.writable_interest {
            let interest = if want { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
            self.poll.registry().reregister(&mut conn.socket, token_of(id), interest)?;
            conn.writable_interest = want;
        }
        Ok(())
    }

    /// Forgets connection `id` (closing its socket) and tells the protocol why.
    fn close(
        &mut self,
        now: Instant,
        id: StreamId,
        reason: CloseReason,
        unsent: usize,
    ) -> Result<(), RuntimeError> {
        let Some(mut conn) = self.streams.conns.remove(&id) else { return Ok(()) };
        if conn.accepted_at.is_some()
            && let Some(n) = self.streams.per_source.get_mut(&conn.peer.ip())
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.streams.per_source.remove(&conn.peer.ip());
            }
        }
        if let Some(to) = conn.opened_to
            && self.streams.outbound.get(&to) == Some(&id)
        {
            self.streams.outbound.remove(&to);
        }
        // The socket is closed when dropped, registered or not.
        let _ = self.poll.registry().deregister(&mut conn.socket);
        tracing::debug!(peer = %conn.peer, stream = id.0, ?reason, unsent, "TCP connection closed");
        let closed = StreamClosed { peer: conn.peer, opened_to: conn.opened_to, reason, unsent };
        self.protocol.handle_stream_closed(now, id, &closed);
        Ok(())
    }
}
