//! The endpoint: one per socket, holding every connection by peer address, demultiplexing
//! datagrams (MC-DPL8R 3.1.5; INDEX B.1) and collecting what the connections send and report.

use std::cmp::Reverse;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::Wire;
use dplay_wire::budget::MemoryBudget;
use dplay_wire::dp8::cframe::{
    CFRAME_MIN_LEN, Cframe, ConnectFields, ConnectedSigned, PACKET_COMMAND_CFRAME, PACKET_COMMAND_POLL,
    SigningOpts,
};
use dplay_wire::dp8::dframe::DFRAME_MIN_LEN;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::Config;
use crate::connection::{Connection, Out};
use crate::drop_log::DropLog;
use crate::event::{
    Cancelled, ConnectError, DisconnectReason, Event, MessageKind, Priority, SendError, Tracked,
};
use crate::half_open::{HALF_OPEN_BYTES, HalfOpen};
use crate::handshake::version_ok;
use crate::send_queue::{Body, OutMessage};
use crate::signing::{Cookies, FastSigning, Signing, confirmation_ok, signing_version_ok};
use crate::stats::{DropReason, Drops, Stats};

/// A datagram to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where it goes.
    pub destination: SocketAddr,
    /// The UDP payload.
    pub contents: Vec<u8>,
}

/// Drops that belong to no connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct EndpointStats {
    /// Datagrams dropped before reaching a connection, by reason.
    pub drops: Drops,
    /// Datagrams handed to the caller as [`Event::Unowned`].
    pub unowned: u64,
    /// Unverified inbound attempts dropped to make room for a newer one, past
    /// [`Config::max_half_open`] or [`Config::max_half_open_per_ip`].
    pub half_open_evicted: u64,
    /// Drops counted by connections that are gone.
    pub retired: Drops,
    /// DFRAMEs sent again on connections that are gone (MC-DPL8R 3.1.6.5).
    pub retired_retransmissions: u64,
    /// Messages refused with [`SendError::QueueFull`] because the peer was a window or more
    /// behind while the memory budget was full (docs/limits.md).
    pub send_over_budget: u64,
}

/// Datagram buffers kept for reuse at most (about 96 KiB).
const SPARE_BUFFERS: usize = 64;

/// A fixed hasher: iteration order, and so every simulated run, is reproducible.
type Connections = HashMap<SocketAddr, Connection, BuildHasherDefault<DefaultHasher>>;

/// The DirectPlay 8 transport on one socket, sans-IO.
///
/// Feed it with [`Endpoint::handle_datagram`] and, at the deadline [`Endpoint::poll_timeout`]
/// gives, [`Endpoint::handle_timeout`]. After every call (input or command) drain
/// [`Endpoint::poll_transmit`] into the socket and [`Endpoint::poll_event`] into the
/// application, then ask [`Endpoint::poll_timeout`] again.
#[derive(Debug)]
pub struct Endpoint {
    config: Config,
    epoch: Instant,
    rng: ChaCha8Rng,
    connections: Connections,
    /// The inbound attempts whose source is unverified, oldest first.
    half_open: HalfOpen,
    /// Every connection's next deadline, earliest first. An entry is current while it equals
    /// the connection's `scheduled`; others are stale and dropped when they reach the top, so
    /// the top is always current and [`Endpoint::poll_timeout`] is O(1).
    timers: BinaryHeap<Reverse<(Instant, SocketAddr)>>,
    /// Reused by `handle_timeout` for the peers due.
    due: Vec<SocketAddr>,
    /// Datagram buffers handed back by [`Endpoint::poll_transmit_into`], reused for the next
    /// datagrams so that sending allocates nothing once warm.
    spare: Vec<Vec<u8>>,
    transmits: VecDeque<Transmit>,
    events: VecDeque<Event>,
    stats: EndpointStats,
    /// The listener's `ullConnectSig` cookies (MC-DPL8R 3.1.5.1.3).
    cookies: Cookies,
    /// What the half-open table and each connection's receive window hold is charged here.
    budget: MemoryBudget,
    /// When each source's drops were last logged.
    drop_log: DropLog,
}

impl Endpoint {
    /// An endpoint with no connections; `now` is the origin of the `tTimestamp` ticks.
    pub fn new(config: Config, now: Instant) -> Self {
        let rng = ChaCha8Rng::seed_from_u64(config.rng_seed);
        let cookies = Cookies::new(config.rng_seed);
        Self {
            config,
            epoch: now,
            rng,
            connections: Connections::default(),
            half_open: HalfOpen::default(),
            timers: BinaryHeap::new(),
            due: Vec::new(),
            spare: Vec::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: EndpointStats::default(),
            cookies,
            budget: MemoryBudget::unlimited(),
            drop_log: DropLog::default(),
        }
    }

    /// Charges what this endpoint holds for others to `budget` (shared with the session
    /// layer, docs/limits.md): the half-open table ([`HALF_OPEN_BYTES`] each) and the frames
    /// and partial messages of each connection's receive window. Frames past it are not
    /// stored (nor acknowledged: the peer sends them again), and a CONNECT is answered only
    /// after the oldest half-open attempts are forgotten to make room, or not at all. Set it
    /// before the first datagram; without it the budget is unlimited.
    pub fn set_memory_budget(&mut self, budget: MemoryBudget) {
        self.half_open.set_charge(budget.account());
        self.budget = budget;
    }

    /// The budget this endpoint charges.
    pub fn memory_budget(&self) -> &MemoryBudget {
        &self.budget
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Opens a connection to `peer`: sends CONNECT and starts the connect retry timer
    /// (MC-DPL8R 3.1.4.2). [`Event::Connected`] or [`Event::Disconnected`] follows.
    pub fn connect(&mut self, now: Instant, peer: SocketAddr) -> Result<(), ConnectError> {
        if self.connections.get(&peer).is_some_and(|c| !c.is_lingering()) {
            return Err(ConnectError::AlreadyConnected);
        }
        // A non-zero dwSessID, as peers that sign require (MC-DPL8R 2.2.1.1).
        let sess_id = self.rng.gen_range(1..=u32::MAX);
        tracing::debug!(%peer, sess_id, "CONNECT sent");
        let mut conn = Connection::new(&self.config, peer, now, self.epoch, true, sess_id, &self.budget);
        if self.config.signing == Signing::Fast {
            conn.signing = Some(FastSigning::draw(&mut self.rng));
        }
        let mut out =
            Out { transmits: &mut self.transmits, events: &mut self.events, spare: &mut self.spare };
        conn.send_connect(now, &self.config, &mut out);
        conn.arm_connect_retry(now);
        self.connections.insert(peer, conn);
        self.reschedule(peer);
        Ok(())
    }

    /// Queues a message for `peer`. Messages may be queued during the handshake; they go out
    /// once it completes. Large messages are split (MC-DPL8R 3.1.4.4).
    pub fn send(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        data: &[u8],
        kind: MessageKind,
    ) -> Result<(), SendError> {
        self.queue_message(now, peer, data, kind, None)
    }

    /// Queues a message for `peer` as [`Endpoint::send`] does, at `track`'s priority and with
    /// its deadline; [`Event::SendDone`] with `track.id` reports how it ended (when this
    /// returns `Ok`; exactly once).
    pub fn send_tracked(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        data: &[u8],
        kind: MessageKind,
        track: Tracked,
    ) -> Result<(), SendError> {
        self.queue_message(now, peer, data, kind, Some(track))
    }

    fn queue_message(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        data: &[u8],
        kind: MessageKind,
        track: Option<Tracked>,
    ) -> Result<(), SendError> {
        let cfg = &self.config;
        let conn = self.connections.get_mut(&peer).filter(|c| c.is_open()).ok_or(SendError::NotConnected)?;
        if conn.closing.is_some() {
            return Err(SendError::Closing);
        }
        if data.is_empty() {
            return Err(SendError::Empty);
        }
        if data.len() > cfg.max_message_size {
            return Err(SendError::TooLarge);
        }
        if conn.sender.queued_bytes().saturating_add(data.len()) > cfg.max_send_queue {
            return Err(SendError::QueueFull);
        }
        // A peer that is a window or more behind holds what we send it; when the memory budget
        // is full it is sent no more until it catches up (docs/limits.md).
        let window = usize::from(cfg.max_window()).saturating_mul(cfg.max_frame_payload());
        if conn.sender.held_bytes() >= window && !self.budget.fits(data.len()) {
            self.stats.send_over_budget += 1;
            return Err(SendError::QueueFull);
        }
        conn.stats.messages_sent += 1;
        let msg = OutMessage::new(data.to_vec(), kind, Body::Data);
        conn.sender.push(match track {
            Some(t) => msg.tracked(t),
            None => msg,
        });
        let mut out =
            Out { transmits: &mut self.transmits, events: &mut self.events, spare: &mut self.spare };
        conn.flush(now, cfg, &mut out);
        conn.sender.sync_charge();
        self.reschedule(peer);
        Ok(())
    }

    /// Cancels the tracked message `id` ([`Endpoint::send_tracked`]) on every connection it
    /// was queued on: a copy none of whose frames went out is dropped and reported
    /// [`SendOutcome::Cancelled`](crate::SendOutcome::Cancelled) now; one partly sent, or waiting for its acknowledgement, is
    /// finished (frames on the wire cannot be taken back) and counted as started. Nothing
    /// found: the message is done with, or was never tracked. O(connections x queue).
    pub fn cancel(&mut self, id: u64) -> Cancelled {
        let peers: Vec<SocketAddr> = self.connections.keys().copied().collect();
        let mut total = Cancelled::default();
        for peer in peers {
            total = total + self.cancel_on(peer, |i, _| i == id);
        }
        total
    }

    /// Cancels, as [`Endpoint::cancel`] does, every tracked message queued for `peer`, or
    /// only those of `priority`.
    pub fn cancel_queued(&mut self, peer: SocketAddr, priority: Option<Priority>) -> Cancelled {
        self.cancel_on(peer, |_, p| priority.is_none_or(|want| want == p))
    }

    fn cancel_on(&mut self, peer: SocketAddr, which: impl Fn(u64, Priority) -> bool) -> Cancelled {
        let mut result = Cancelled::default();
        self.with_conn(peer, |conn, _, out| {
            result = conn.sender.cancel(which);
            conn.report_sends(out);
        });
        result
    }

    /// Closes the connection with `peer` gracefully: queued messages go first, then
    /// END_STREAM (MC-DPL8R 3.1.4.3). [`Event::Disconnected`] follows when the exchange ends.
    pub fn disconnect(&mut self, now: Instant, peer: SocketAddr) {
        self.with_conn(peer, |conn, cfg, out| conn.close(now, cfg, out));
    }

    /// Ends the connection with `peer` at once with HARD_DISCONNECT (MC-DPL8R 3.1.4.5);
    /// [`Event::Disconnected`] with [`DisconnectReason::Aborted`] is reported now.
    pub fn abort(&mut self, now: Instant, peer: SocketAddr) {
        self.with_conn(peer, |conn, cfg, out| conn.abort(now, cfg, DisconnectReason::Aborted, out));
    }

    /// Sends a datagram the transport does not own (an enumeration answer) through the same
    /// socket.
    pub fn send_unowned(&mut self, destination: SocketAddr, contents: Vec<u8>) {
        self.transmits.push_back(Transmit { destination, contents });
    }

    /// True while a connection (or attempt) with `peer` exists and has not ended.
    pub fn is_connected(&self, peer: SocketAddr) -> bool {
        self.connections.get(&peer).is_some_and(Connection::is_open)
    }

    /// True when `peer` started a graceful close: its END_STREAM arrived in order (MC-DPL8R
    /// 3.1.4.3) and ours has not been acknowledged yet. Nothing more comes from it; the
    /// [`crate::Event::Disconnected`] follows once our END_STREAM is acknowledged or given up.
    pub fn peer_is_leaving(&self, peer: SocketAddr) -> bool {
        self.connections.get(&peer).is_some_and(|c| c.peer_end && c.closing == Some(false) && c.is_open())
    }

    /// True when the connection with `peer` is fast-signed (MC-DPL8R 3.1.4.4), or, for an
    /// attempt under way, will be.
    pub fn is_signed(&self, peer: SocketAddr) -> bool {
        self.connections.get(&peer).is_some_and(|c| c.signing.is_some())
    }

    /// The counters of the connection with `peer`.
    pub fn stats(&self, peer: SocketAddr) -> Option<Stats> {
        self.connections.get(&peer).map(Connection::stats_now)
    }

    /// Application messages queued for `peer` and not yet sent, and their bytes not yet sent
    /// (a message partly on the wire counts with what is left), of `priority` or of all;
    /// session (USER_1) messages are not counted. O(queue).
    pub fn send_queue(&self, peer: SocketAddr, priority: Option<Priority>) -> Option<(usize, usize)> {
        self.connections.get(&peer).map(|c| c.sender.queued(priority))
    }

    /// Drops that belong to no connection.
    pub fn endpoint_stats(&self) -> EndpointStats {
        self.stats
    }

    /// Every drop so far, by reason: the endpoint's, those of connections that are gone and
    /// those of the connections held (O(connections)).
    pub fn all_drops(&self) -> Drops {
        let mut all = self.stats.drops;
        all.add_all(&self.stats.retired);
        for c in self.connections.values() {
            all.add_all(&c.stats.drops);
        }
        all
    }

    /// Every DFRAME sent again so far, on connections gone and held (O(connections)).
    pub fn all_retransmissions(&self) -> u64 {
        let live: u64 = self.connections.values().map(|c| c.stats.retransmissions).sum();
        self.stats.retired_retransmissions + live
    }

    /// Bytes the connections hold for reassembly now: frames received out of order and
    /// messages being put together (O(connections)).
    pub fn reassembly_bytes(&self) -> usize {
        self.connections.values().map(|c| c.receiver.held_bytes()).sum()
    }

    /// Number of connections held, lingering ones included.
    pub fn connection_count(&self) -> usize {
        self.connections.len()
    }

    /// Number of connections not yet closed: lingering ones (closed gracefully, only answering
    /// the peer's retries) are not counted.
    pub fn active_connection_count(&self) -> usize {
        self.connections.values().filter(|c| !c.is_lingering()).count()
    }

    /// Sets the largest message reassembled from `peer` (at most [`Config::max_message_size`]):
    /// a host keeps it small until a joiner is a member (docs/limits.md). A larger one ends the
    /// connection, as past the configured size (MC-DPL8R 3.1.5.2.6).
    pub fn set_message_limit(&mut self, peer: SocketAddr, bytes: usize) {
        let max = self.config.max_message_size;
        if let Some(conn) = self.connections.get_mut(&peer) {
            conn.receiver.set_max_message(bytes.min(max));
        }
    }

    /// Number of inbound attempts whose source is not verified yet (half-open).
    pub fn half_open_count(&self) -> usize {
        self.half_open.len()
    }

    /// Runs `f` on the connection with `peer`, if any, and removes it once finished.
    fn with_conn(&mut self, peer: SocketAddr, f: impl FnOnce(&mut Connection, &Config, &mut Out<'_>)) {
        if let Some(conn) = self.connections.get_mut(&peer) {
            let mut out =
                Out { transmits: &mut self.transmits, events: &mut self.events, spare: &mut self.spare };
            f(conn, &self.config, &mut out);
            conn.sender.sync_charge();
            if !conn.is_half_open() || conn.is_finished() {
                self.half_open.remove(peer);
            }
            if conn.is_finished() {
                self.stats.retired.add_all(&conn.stats.drops);
                self.stats.retired_retransmissions += conn.stats.retransmissions;
                self.connections.remove(&peer);
            }
            self.reschedule(peer);
        }
    }

    /// Puts the connection's new deadline in the timer heap if it changed, then drops stale
    /// entries from the top (and rebuilds the heap when stale entries dominate it).
    fn reschedule(&mut self, peer: SocketAddr) {
        if let Some(conn) = self.connections.get_mut(&peer) {
            let next = conn.next_deadline();
            if next != conn.scheduled {
                conn.scheduled = next;
                if let Some(at) = next {
                    self.timers.push(Reverse((at, peer)));
                }
            }
        }
        while let Some(Reverse((at, peer))) = self.timers.peek() {
            if self.connections.get(peer).is_some_and(|c| c.scheduled == Some(*at)) {
                break;
            }
            self.timers.pop();
        }
        if self.timers.len() > 2 * self.connections.len() + 64 {
            self.timers = self
                .connections
                .iter()
                .filter_map(|(peer, c)| c.scheduled.map(|at| Reverse((at, *peer))))
                .collect();
        }
    }

    /// A datagram arrived from `from` (MC-DPL8R 3.1.5): a DFRAME (low bit set, at least 4
    /// bytes), a CFRAME (0x80 or 0x88, at least 12 bytes), lead byte 0 for the caller, or
    /// nothing of ours.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        // Per peer: the drops, retries and window changes below are logged within it. A
        // disabled span is a level check (tracing: no formatting, no allocation).
        let _span = tracing::debug_span!("dframe", peer = %from).entered();
        let before = self.drops_seen(from);
        self.dispatch_datagram(now, from, data);
        let after = self.drops_seen(from);
        if after != before {
            let interval = self.config.drop_log_interval;
            self.drop_log.note(now, from, &before, &after, interval);
        }
    }

    /// The drops a datagram from `from` can add to: the endpoint's, those of connections gone,
    /// and `from`'s connection's.
    fn drops_seen(&self, from: SocketAddr) -> Drops {
        let mut all = self.stats.drops;
        all.add_all(&self.stats.retired);
        if let Some(conn) = self.connections.get(&from) {
            all.add_all(&conn.stats.drops);
        }
        all
    }

    fn dispatch_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let Some(&lead) = data.first() else {
            self.stats.drops.add(DropReason::Malformed);
            return;
        };
        if lead & 1 == 1 && data.len() >= DFRAME_MIN_LEN {
            if !self.connections.contains_key(&from) {
                self.stats.drops.add(DropReason::UnknownAddress);
                return;
            }
            self.with_conn(from, |conn, cfg, out| conn.handle_dframe(now, cfg, data, out));
        } else if (lead == PACKET_COMMAND_CFRAME || lead == PACKET_COMMAND_CFRAME | PACKET_COMMAND_POLL)
            && data.len() >= CFRAME_MIN_LEN
        {
            self.handle_cframe(now, from, data);
        } else if lead == 0 {
            self.stats.unowned += 1;
            self.events.push_back(Event::Unowned { from, data: data.to_vec() });
        } else {
            self.stats.drops.add(DropReason::NotDirectPlay);
        }
    }

    fn handle_cframe(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let Ok(frame) = Cframe::parse(data) else {
            match self.connections.get_mut(&from) {
                Some(conn) => conn.stats.drops.add(DropReason::Malformed),
                None => self.stats.drops.add(DropReason::Malformed),
            }
            return;
        };
        if self.connections.get(&from).is_none_or(Connection::is_lingering) {
            match &frame {
                Cframe::Connect(f) if self.config.signing == Signing::Fast => {
                    return self.answer_signed(now, from, f);
                }
                Cframe::Connect(f) => return self.accept(now, from, f),
                Cframe::ConnectedSigned(s) if self.config.signing == Signing::Fast => {
                    return self.accept_signed(now, from, s);
                }
                _ => {}
            }
        }
        if !self.connections.contains_key(&from) {
            self.stats.drops.add(DropReason::UnknownAddress);
            return;
        }
        self.with_conn(from, |conn, cfg, out| match &frame {
            Cframe::Connect(f) => conn.handle_connect(now, cfg, f, out),
            Cframe::Connected(f) => conn.handle_connected(now, cfg, f, out),
            Cframe::ConnectedSigned(s) => conn.handle_connected_signed(now, cfg, s, out),
            Cframe::HardDisconnect(h) => conn.handle_hard_disconnect(now, cfg, h, out),
            Cframe::Sack(s) => conn.handle_sack(now, cfg, s, data.len(), out),
        });
    }

    /// Makes room for one more half-open attempt from `from`: past a cap, the oldest (of that
    /// IP, then of all) is forgotten without a word, as if it never came (docs/limits.md).
    fn make_room(&mut self, from: SocketAddr) {
        let ip = from.ip();
        if self.half_open.count_ip(ip) >= self.config.max_half_open_per_ip() {
            let oldest = self.half_open.oldest(Some(ip));
            self.evict(oldest);
        }
        if self.half_open.len() >= self.config.max_half_open() {
            let oldest = self.half_open.oldest(None);
            self.evict(oldest);
        }
    }

    /// Makes room in the memory budget for one more half-open attempt by forgetting the
    /// oldest ones; false when even that is not enough.
    fn room_in_budget(&mut self) -> bool {
        while !self.budget.fits(HALF_OPEN_BYTES) {
            let Some(oldest) = self.half_open.oldest(None) else { return false };
            self.evict(Some(oldest));
        }
        true
    }

    fn evict(&mut self, peer: Option<SocketAddr>) {
        let Some(peer) = peer else { return };
        self.half_open.remove(peer);
        if let Some(conn) = self.connections.remove(&peer) {
            self.stats.retired.add_all(&conn.stats.drops);
            self.stats.retired_retransmissions += conn.stats.retransmissions;
            self.stats.half_open_evicted += 1;
        }
        // Its timer heap entry is now stale: dropped when it reaches the top.
        self.reschedule(peer);
    }

    /// A CONNECT from an unknown address (MC-DPL8R 3.1.5.1.1): when listening and the version
    /// is one we talk to, allocate the connection and answer CONNECTED (POLL set), within the
    /// half-open caps.
    fn accept(&mut self, now: Instant, from: SocketAddr, f: &dplay_wire::dp8::cframe::ConnectFields) {
        if !self.config.accept_incoming {
            self.stats.drops.add(DropReason::NotListening);
            return;
        }
        if !version_ok(f.protocol_version) {
            self.stats.drops.add(DropReason::BadVersion);
            return;
        }
        self.make_room(from);
        if !self.room_in_budget() {
            self.stats.drops.add(DropReason::OverBudget);
            return;
        }
        tracing::debug!(version = f.protocol_version, sess_id = f.sess_id, "CONNECT accepted");
        let mut conn = Connection::new(&self.config, from, now, self.epoch, false, f.sess_id, &self.budget);
        conn.peer_version = f.protocol_version;
        conn.handshake.peer_msg_id = f.msg_id;
        conn.stats.received(16);
        let mut out =
            Out { transmits: &mut self.transmits, events: &mut self.events, spare: &mut self.spare };
        conn.send_connected(now, &self.config, true, &mut out);
        conn.arm_connect_retry(now);
        if let Some(old) = self.connections.insert(from, conn) {
            self.stats.retired.add_all(&old.stats.drops);
            self.stats.retired_retransmissions += old.stats.retransmissions;
        }
        if !self.half_open.insert(from) {
            // Only if the budget shrank between the check and here: nothing is kept.
            self.connections.remove(&from);
            self.stats.drops.add(DropReason::OverBudget);
        }
        self.reschedule(from);
    }

    /// A CONNECT from an unknown address to a listener that requires signing (MC-DPL8R
    /// 3.1.5.1.1): answer CONNECTED_SIGNED with a cookie and keep no state. Versions below
    /// 0x00010006 and a zero `dwSessID` are ignored.
    fn answer_signed(&mut self, now: Instant, from: SocketAddr, f: &ConnectFields) {
        if !self.config.accept_incoming {
            self.stats.drops.add(DropReason::NotListening);
            return;
        }
        if !signing_version_ok(f.protocol_version) {
            self.stats.drops.add(DropReason::BadVersion);
            return;
        }
        if f.sess_id == 0 {
            self.stats.drops.add(DropReason::BadSessionId);
            return;
        }
        let elapsed = now.saturating_duration_since(self.epoch);
        #[allow(clippy::cast_possible_truncation)] // tTimestamp is a wrapping millisecond tick
        let timestamp = elapsed.as_millis() as u32;
        let reply = Cframe::ConnectedSigned(ConnectedSigned {
            fields: ConnectFields {
                poll: true,
                msg_id: 0,
                rsp_id: f.msg_id,
                protocol_version: self.config.protocol_version,
                sess_id: f.sess_id,
                timestamp,
            },
            connect_sig: self.cookies.issue(elapsed, from, f.sess_id),
            sender_secret: 0,
            receiver_secret: 0,
            signing_opts: SigningOpts::PACKET_SIGNING_FAST,
            echo_timestamp: 0,
        });
        if let Ok(contents) = reply.to_vec() {
            self.transmits.push_back(Transmit { destination: from, contents });
        }
    }

    /// The connector's CONNECTED_SIGNED confirmation from an address without a connection
    /// (MC-DPL8R 3.1.5.1.3): with our cookie and the rules of [`confirmation_ok`], the
    /// connection is allocated, established, and keeps the secrets it brings.
    fn accept_signed(&mut self, now: Instant, from: SocketAddr, s: &ConnectedSigned) {
        if !self.config.accept_incoming {
            self.stats.drops.add(DropReason::NotListening);
            return;
        }
        if let Err(reason) = confirmation_ok(s) {
            self.stats.drops.add(reason);
            return;
        }
        let elapsed = now.saturating_duration_since(self.epoch);
        if !self.cookies.check(elapsed, from, s.fields.sess_id, s.connect_sig) {
            self.stats.drops.add(DropReason::BadSignature);
            return;
        }
        let mut conn =
            Connection::new(&self.config, from, now, self.epoch, false, s.fields.sess_id, &self.budget);
        conn.peer_version = s.fields.protocol_version;
        conn.handshake.peer_msg_id = s.fields.msg_id;
        // The connector's ullSenderSecret signs what it sends us; its ullReceiverSecret what we
        // send it (MC-DPL8R 2.2.1.3).
        conn.signing =
            Some(FastSigning { local: s.receiver_secret, remote: s.sender_secret, confirmation: None });
        conn.stats.received(48);
        let mut out =
            Out { transmits: &mut self.transmits, events: &mut self.events, spare: &mut self.spare };
        conn.establish(now, &self.config, &mut out);
        self.connections.insert(from, conn);
        self.reschedule(from);
    }

    /// Call at (or after) the deadline from [`Endpoint::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut due = std::mem::take(&mut self.due);
        while let Some(&Reverse((at, peer))) = self.timers.peek()
            && at <= now
        {
            self.timers.pop();
            if self.connections.get(&peer).is_some_and(|c| c.scheduled == Some(at)) {
                due.push(peer);
            }
        }
        due.sort_unstable();
        due.dedup();
        for &peer in &due {
            let _span = tracing::debug_span!("dframe", %peer).entered();
            if let Some(conn) = self.connections.get_mut(&peer) {
                // Its heap entry is gone: a new one is pushed even if the deadline is unchanged.
                conn.scheduled = None;
            }
            self.with_conn(peer, |conn, cfg, out| conn.handle_timeout(now, cfg, out));
        }
        due.clear();
        self.due = due;
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next datagram to send, appended to `buf`; returns its destination. Unlike
    /// [`Endpoint::poll_transmit`] the datagram's buffer stays with the endpoint and is reused,
    /// so a caller that sends from its own buffer causes no allocation per datagram.
    pub fn poll_transmit_into(&mut self, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let Transmit { destination, mut contents } = self.transmits.pop_front()?;
        buf.extend_from_slice(&contents);
        if self.spare.len() < SPARE_BUFFERS {
            contents.clear();
            self.spare.push(contents);
        }
        Some(destination)
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest timer deadline of any connection (absolute), in O(1).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _))| *at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timer heap gives the same next deadline as a scan of every connection, through
    /// connect retries (MC-DPL8R 3.1.6.1) of many connections started at different times,
    /// until each attempt times out and is removed.
    #[test]
    fn timer_heap_matches_a_scan() {
        let origin = crate::tests::origin();
        let mut ep = Endpoint::new(Config::default(), origin);
        let scan = |ep: &Endpoint| ep.connections.values().filter_map(Connection::next_deadline).min();
        for i in 0..40u16 {
            let at = origin + std::time::Duration::from_millis(u64::from(i) * 7);
            ep.connect(at, SocketAddr::from(([192, 0, 2, 1], 2000 + i))).unwrap();
            assert_eq!(ep.poll_timeout(), scan(&ep));
        }
        let mut turns = 0;
        while let Some(at) = ep.poll_timeout() {
            let before = ep.transmits.len();
            ep.handle_timeout(at);
            assert!(
                ep.transmits.len() > before
                    || ep.events.iter().any(|e| matches!(e, Event::Disconnected { .. }))
            );
            assert_eq!(ep.poll_timeout(), scan(&ep));
            assert!(ep.timers.len() <= 2 * ep.connections.len() + 64);
            turns += 1;
        }
        assert_eq!(ep.connection_count(), 0);
        assert!(turns >= 40 * 14);
    }

    /// `poll_transmit_into` hands out the same datagrams as `poll_transmit` and keeps their
    /// buffers: once warm, the same buffers carry the next datagrams.
    #[test]
    fn transmit_buffers_are_reused() {
        let now = crate::tests::origin();
        let (a_addr, b_addr) = (SocketAddr::from(([192, 0, 2, 1], 1)), SocketAddr::from(([192, 0, 2, 2], 2)));
        let mut a = Endpoint::new(Config::default(), now);
        let mut b = Endpoint::new(Config::default().with_seed(1), now);
        a.connect(now, b_addr).unwrap();
        let mut buf = Vec::new();
        let mut delivered = 0;
        for round in 0..200u8 {
            if round > 10 {
                a.send(now, b_addr, &[round; 100], MessageKind::RELIABLE_SEQUENTIAL).unwrap();
            }
            for _ in 0..4 {
                while let Some(to) = a.poll_transmit_into(&mut buf) {
                    assert_eq!(to, b_addr);
                    b.handle_datagram(now, a_addr, &buf);
                    buf.clear();
                }
                while let Some(to) = b.poll_transmit_into(&mut buf) {
                    assert_eq!(to, a_addr);
                    a.handle_datagram(now, b_addr, &buf);
                    buf.clear();
                }
            }
            delivered +=
                std::iter::from_fn(|| b.poll_event()).filter(|e| matches!(e, Event::Message { .. })).count();
            while a.poll_event().is_some() {}
        }
        assert_eq!(delivered, 189);
        assert!(!a.spare.is_empty() && a.spare.len() <= SPARE_BUFFERS);
        assert!(a.spare.iter().all(|v| v.is_empty() && v.capacity() > 0));
    }
}
