//! The endpoint: one per socket, holding every connection by peer address, demultiplexing
//! datagrams (MC-DPL8R 3.1.5; INDEX B.1) and collecting what the connections send and report.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::Wire;
use dplay_wire::dp8::cframe::{CFRAME_MIN_LEN, Cframe, PACKET_COMMAND_CFRAME, PACKET_COMMAND_POLL};
use dplay_wire::dp8::dframe::DFRAME_MIN_LEN;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::Config;
use crate::connection::{Connection, Out};
use crate::event::{ConnectError, DisconnectReason, Event, MessageKind, SendError};
use crate::handshake::version_ok;
use crate::send_queue::{Body, OutMessage};
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
pub struct EndpointStats {
    /// Datagrams dropped before reaching a connection, by reason.
    pub drops: Drops,
    /// Datagrams handed to the caller as [`Event::Unowned`].
    pub unowned: u64,
}

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
    transmits: VecDeque<Transmit>,
    events: VecDeque<Event>,
    stats: EndpointStats,
}

impl Endpoint {
    /// An endpoint with no connections; `now` is the origin of the `tTimestamp` ticks.
    pub fn new(config: Config, now: Instant) -> Self {
        let rng = ChaCha8Rng::seed_from_u64(config.rng_seed);
        Self {
            config,
            epoch: now,
            rng,
            connections: Connections::default(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: EndpointStats::default(),
        }
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
        let mut conn = Connection::new(&self.config, peer, now, self.epoch, true, sess_id);
        let mut out = Out { transmits: &mut self.transmits, events: &mut self.events };
        conn.send_connect(now, &self.config, &mut out);
        conn.arm_connect_retry(now);
        self.connections.insert(peer, conn);
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
        conn.stats.messages_sent += 1;
        conn.sender.push(OutMessage::new(data.to_vec(), kind, Body::Data));
        let mut out = Out { transmits: &mut self.transmits, events: &mut self.events };
        conn.flush(now, cfg, &mut out);
        Ok(())
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

    /// The counters of the connection with `peer`.
    pub fn stats(&self, peer: SocketAddr) -> Option<Stats> {
        self.connections.get(&peer).map(|c| {
            let mut s = c.stats;
            s.rtt = c.sender.rtt();
            s
        })
    }

    /// Drops that belong to no connection.
    pub fn endpoint_stats(&self) -> EndpointStats {
        self.stats
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

    /// Runs `f` on the connection with `peer`, if any, and removes it once finished.
    fn with_conn(&mut self, peer: SocketAddr, f: impl FnOnce(&mut Connection, &Config, &mut Out<'_>)) {
        if let Some(conn) = self.connections.get_mut(&peer) {
            let mut out = Out { transmits: &mut self.transmits, events: &mut self.events };
            f(conn, &self.config, &mut out);
            if conn.is_finished() {
                self.connections.remove(&peer);
            }
        }
    }

    /// A datagram arrived from `from` (MC-DPL8R 3.1.5): a DFRAME (low bit set, at least 4
    /// bytes), a CFRAME (0x80 or 0x88, at least 12 bytes), lead byte 0 for the caller, or
    /// nothing of ours.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
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
        if let Cframe::Connect(f) = &frame
            && self.connections.get(&from).is_none_or(Connection::is_lingering)
        {
            self.accept(now, from, f);
            return;
        }
        if !self.connections.contains_key(&from) {
            self.stats.drops.add(DropReason::UnknownAddress);
            return;
        }
        self.with_conn(from, |conn, cfg, out| match &frame {
            Cframe::Connect(f) => conn.handle_connect(now, cfg, f, out),
            Cframe::Connected(f) => conn.handle_connected(now, cfg, f, out),
            Cframe::ConnectedSigned(_) => conn.stats.drops.add(DropReason::Signed),
            Cframe::HardDisconnect(h) => conn.handle_hard_disconnect(now, cfg, h, out),
            Cframe::Sack(s) => conn.handle_sack(now, cfg, s, data.len(), out),
        });
    }

    /// A CONNECT from an unknown address (MC-DPL8R 3.1.5.1.1): when listening and the version
    /// is one we talk to, allocate the connection and answer CONNECTED (POLL set).
    fn accept(&mut self, now: Instant, from: SocketAddr, f: &dplay_wire::dp8::cframe::ConnectFields) {
        if !self.config.accept_incoming {
            self.stats.drops.add(DropReason::NotListening);
            return;
        }
        if !version_ok(f.protocol_version) {
            self.stats.drops.add(DropReason::BadVersion);
            return;
        }
        let mut conn = Connection::new(&self.config, from, now, self.epoch, false, f.sess_id);
        conn.peer_version = f.protocol_version;
        conn.handshake.peer_msg_id = f.msg_id;
        conn.stats.received(16);
        let mut out = Out { transmits: &mut self.transmits, events: &mut self.events };
        conn.send_connected(now, &self.config, true, &mut out);
        conn.arm_connect_retry(now);
        self.connections.insert(from, conn);
    }

    /// Call at (or after) the deadline from [`Endpoint::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut due: Vec<SocketAddr> = self
            .connections
            .iter()
            .filter(|(_, c)| c.next_deadline().is_some_and(|at| at <= now))
            .map(|(addr, _)| *addr)
            .collect();
        due.sort_unstable();
        for peer in due {
            self.with_conn(peer, |conn, cfg, out| conn.handle_timeout(now, cfg, out));
        }
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest timer deadline of any connection (absolute).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.connections.values().filter_map(Connection::next_deadline).min()
    }
}
