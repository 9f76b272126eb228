//! [`Session`]: state, the handle/poll interface, and the dispatch of transport events and
//! session messages to the modules that own each sequence.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::{DisconnectReason, Endpoint, MessageKind, Transmit};
use dplay_wire::Wire;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{ApplicationDescFlags, SessionMessage};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use crate::admission::Admission;
use crate::completion::Pending;
use crate::config::{Mode, SessionConfig};
use crate::enumeration::Seeker;
use crate::event::{EndReason, Event};
use crate::migration::Migration;
use crate::name_table::NameTable;
use crate::path_test::PathTester;
use crate::stats::{DropReason, Stats};

/// Where the local participant stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// In no session; may enumerate hosts.
    Idle,
    /// Joining: the transport connection to the host is being made.
    Connecting,
    /// Joining: PLAYER_CONNECT_INFO sent, waiting for SEND_CONNECT_INFO or CONNECT_FAILED.
    AwaitingInfo,
    /// A member (peer or client) with a name table.
    Member,
    /// The host (or server).
    Host,
    /// Out of the session.
    Ended,
}

/// What one transport connection is to the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkState {
    /// Host: a joiner whose PLAYER_CONNECT_INFO has not come yet.
    Joining,
    /// Host: SEND_CONNECT_INFO sent, ACK_CONNECT_INFO awaited.
    AwaitingAck,
    /// Host: refused; the connection is closing.
    Refused,
    /// Member: an inbound peer that has not sent SEND_PLAYER_DPNID yet.
    Unidentified,
    /// Member: our connect to a newer peer, as instructed (MC-DPL8CS 3.1.5.2 step 6).
    Instructed,
    /// A member of the session, identified.
    Member,
    /// Closed by us; its end is expected.
    Closing,
}

/// One transport connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link {
    pub(crate) dpnid: Option<Dpnid>,
    pub(crate) state: LinkState,
}

/// The application description every member keeps (MC-DPL8CS 2.2.1.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AppDesc {
    pub(crate) instance: Uuid,
    pub(crate) flags: ApplicationDescFlags,
    pub(crate) max_players: u32,
    pub(crate) session_name: String,
    /// `ApplicationReservedData` (MC-DPL8CS 2.2.1.4; MC-DPLHP 2.2.2).
    pub(crate) application_reserved_data: Vec<u8>,
}

/// One local player in a DirectPlay 8 session, sans-IO. See the crate documentation for the
/// poll order.
#[derive(Debug)]
pub struct Session {
    pub(crate) cfg: SessionConfig,
    pub(crate) ep: Endpoint,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) phase: Phase,
    pub(crate) table: NameTable,
    pub(crate) desc: Option<AppDesc>,
    pub(crate) local: Dpnid,
    pub(crate) host: Dpnid,
    pub(crate) host_addr: Option<SocketAddr>,
    pub(crate) links: BTreeMap<SocketAddr, Link>,
    pub(crate) joined: bool,
    pub(crate) instructed_self: bool,
    /// Players whose connection we lost and who are still in the table.
    pub(crate) lost: BTreeSet<Dpnid>,
    /// Where a joiner's PATH_TEST came from: the address to connect to (MS-DPDX 4.3 step 13).
    pub(crate) path_test_from: BTreeMap<Dpnid, SocketAddr>,
    pub(crate) path_tests: Vec<PathTester>,
    pub(crate) seeker: Option<Seeker>,
    /// Host: the last NAMETABLE_VERSION of each member, and the last RESYNC_VERSION sent.
    pub(crate) reported: BTreeMap<Dpnid, u32>,
    pub(crate) resync: u32,
    /// Host: integrity checks under way, target to requester (MC-DPL8CS 3.2.5.3).
    pub(crate) integrity: BTreeMap<Dpnid, Dpnid>,
    pub(crate) migration: Option<Migration>,
    /// New host: the table version when our migration ended.
    pub(crate) host_since: u32,
    pub(crate) events: VecDeque<Event>,
    /// Application data from members before we were joined, delivered right after
    /// [`Event::Joined`] (`app_data`), and its size in bytes.
    pub(crate) early: VecDeque<Event>,
    pub(crate) early_bytes: usize,
    pub(crate) stats: Stats,
    pub(crate) integrity_context: u32,
    /// Our operations waiting for an answer (requests to the host, sends with completion).
    pub(crate) pending: Pending,
    /// Received DN_REQ_PROCESS_COMPLETION answers waiting for the application.
    pub(crate) unprocessed: crate::unprocessed::Unprocessed,
    /// Deadlines, caps and limits on what we hold for joiners (docs/limits.md).
    pub(crate) admission: Admission,
    /// Host with `indicate_connect`: joiners waiting for the application's answer.
    pub(crate) indications: BTreeMap<SocketAddr, Box<dplay_wire::dp8::session::PlayerConnectInfo>>,
    /// Joiner: the host's `reply` (SEND_CONNECT_INFO or CONNECT_FAILED).
    pub(crate) connect_reply: Vec<u8>,
    /// Member: the host's DN_TERMINATE_SESSION data.
    pub(crate) terminate_data: Vec<u8>,
}

impl Session {
    /// A participant in no session; `now` is the transport's time origin.
    pub fn new(mut cfg: SessionConfig, now: Instant) -> Self {
        cfg.transport.rng_seed = cfg.rng_seed ^ 0x5e55_1017;
        cfg.transport.accept_incoming = true;
        let mut ep = Endpoint::new(cfg.transport.clone(), now);
        let admission = Admission::new(cfg.limits.memory_budget);
        ep.set_memory_budget(admission.memory.budget.clone());
        let rng = ChaCha8Rng::seed_from_u64(cfg.rng_seed);
        Self {
            cfg,
            ep,
            rng,
            phase: Phase::Idle,
            table: NameTable::new(Uuid::nil()),
            desc: None,
            local: Dpnid::NONE,
            host: Dpnid::NONE,
            host_addr: None,
            links: BTreeMap::new(),
            joined: false,
            instructed_self: false,
            lost: BTreeSet::new(),
            path_test_from: BTreeMap::new(),
            path_tests: Vec::new(),
            seeker: None,
            reported: BTreeMap::new(),
            resync: 0,
            integrity: BTreeMap::new(),
            migration: None,
            host_since: 0,
            events: VecDeque::new(),
            early: VecDeque::new(),
            early_bytes: 0,
            stats: Stats::default(),
            integrity_context: 0,
            pending: Pending::default(),
            unprocessed: Default::default(),
            admission,
            indications: BTreeMap::new(),
            connect_reply: Vec::new(),
            terminate_data: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.cfg
    }

    /// Where we stand.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// True once [`Event::Joined`] was reported and until the session ends.
    pub fn is_joined(&self) -> bool {
        self.joined && matches!(self.phase, Phase::Member | Phase::Host)
    }

    /// Our DPNID (0 before joining).
    pub fn local_dpnid(&self) -> Dpnid {
        self.local
    }

    /// The host's DPNID (0 outside a session).
    pub fn host_dpnid(&self) -> Dpnid {
        self.host
    }

    /// Joiner: the application data the host answered our join with (`reply` of
    /// DN_SEND_CONNECT_INFO or DN_CONNECT_FAILED, MC-DPL8CS 2.2.1.3-2.2.1.4); empty before.
    pub fn connect_reply(&self) -> &[u8] {
        &self.connect_reply
    }

    /// Member: the data of the host's DN_TERMINATE_SESSION that ended our session
    /// ([`EndReason::Terminated`]; MC-DPL8CS 2.2.2.1): DestroyPeer's or TerminateSession's data
    /// on the host. Empty before, or when it carried none.
    pub fn terminate_data(&self) -> &[u8] {
        &self.terminate_data
    }

    /// Our copy of the name table.
    pub fn name_table(&self) -> &NameTable {
        &self.table
    }

    /// The session counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The memory budget that what we hold for others is charged to (`Limits::memory_budget`;
    /// docs/limits.md): its limit may be changed while running, and it can be read from
    /// another thread (a clone shares the counter).
    pub fn memory_budget(&self) -> &dplay_wire::budget::MemoryBudget {
        &self.admission.memory.budget
    }

    /// The transport.
    pub fn endpoint(&self) -> &Endpoint {
        &self.ep
    }

    /// A datagram arrived from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.ep.handle_datagram(now, from, data);
        self.pump(now);
        if self.phase == Phase::Host && self.ep.peer_is_leaving(from) {
            self.member_leaving(now, from);
        }
    }

    /// Call at (or after) the deadline from [`Session::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        self.ep.handle_timeout(now);
        self.pump(now);
        self.enum_timeout(now);
        self.path_test_timeout(now);
        self.admission_timeout(now);
        self.unprocessed_timeout(now);
        self.pump(now);
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.ep.poll_transmit()
    }

    /// The next datagram to send, appended to `buf`; returns its destination. The datagram's
    /// own buffer stays with the transport for the next one
    /// ([`dplay_dframe::Endpoint::poll_transmit_into`]), so a caller sending from a reused
    /// buffer causes no allocation per datagram.
    pub fn poll_transmit_into(&mut self, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        self.ep.poll_transmit_into(buf)
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The earliest deadline of the transport and the session timers (absolute).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let session =
            self.seeker.as_ref().map(|s| s.next).into_iter().chain(self.path_tests.iter().map(|p| p.next));
        self.ep
            .poll_timeout()
            .into_iter()
            .chain(session)
            .chain(self.admission.next_deadline())
            .chain(self.unprocessed.next_deadline())
            .min()
    }

    /// Handles every transport event, which may queue more.
    pub(crate) fn pump(&mut self, now: Instant) {
        while let Some(ev) = self.ep.poll_event() {
            match ev {
                dplay_dframe::Event::Connected { peer, outbound } => self.on_connected(now, peer, outbound),
                dplay_dframe::Event::Message { peer, data, reliable, sequential, user_1, user_2 } => {
                    if user_1 {
                        self.on_session_bytes(now, peer, &data);
                    } else if user_2 {
                        self.on_voice(peer, data);
                    } else {
                        self.on_app_data(peer, data, reliable, sequential, None);
                    }
                }
                dplay_dframe::Event::Disconnected { peer, reason, .. } => {
                    self.on_disconnected(now, peer, reason)
                }
                dplay_dframe::Event::Unowned { from, data } => self.on_unowned(from, &data),
                dplay_dframe::Event::SendDone { id, outcome, first_frame, .. } => {
                    self.on_send_done(id, outcome, first_frame);
                }
            }
        }
        self.admission.memory.sync_table(&self.table);
    }

    fn on_connected(&mut self, now: Instant, peer: SocketAddr, outbound: bool) {
        match (self.phase, outbound) {
            (Phase::Connecting, true) if Some(peer) == self.host_addr => self.send_connect_info(now, peer),
            (Phase::Host, false) => {
                self.links.insert(peer, Link { dpnid: None, state: LinkState::Joining });
                self.admit_connection(now, peer);
            }
            (Phase::Member, true) => self.instructed_connected(now, peer),
            (Phase::Member, false) if self.cfg.mode == Mode::PeerToPeer => {
                self.links.insert(peer, Link { dpnid: None, state: LinkState::Unidentified });
            }
            _ => {
                // Nobody may connect to us in this state (a client, or out of a session).
                self.stats.drop(DropReason::RejectedConnection);
                self.ep.abort(now, peer);
            }
        }
    }

    fn on_disconnected(&mut self, now: Instant, peer: SocketAddr, reason: DisconnectReason) {
        let link = self.links.remove(&peer);
        self.indication_aborted(peer);
        let was_host = self.phase != Phase::Host && Some(peer) == self.host_addr;
        self.pending_lost(peer, was_host);
        self.admission_done(peer);
        match self.phase {
            Phase::Connecting | Phase::AwaitingInfo if Some(peer) == self.host_addr => {
                let why = match reason {
                    DisconnectReason::ConnectTimeout => EndReason::NoAnswer,
                    DisconnectReason::SigningRequired(mode) => EndReason::SigningRequired(mode),
                    _ => EndReason::HostLost,
                };
                self.end(now, why);
            }
            Phase::Host => self.host_link_lost(now, link, reason),
            Phase::Member => self.member_link_lost(now, peer, link, reason),
            _ => {}
        }
    }

    fn on_session_bytes(&mut self, now: Instant, peer: SocketAddr, data: &[u8]) {
        let Ok(msg) = SessionMessage::parse(data) else {
            self.stats.drop(DropReason::Malformed);
            self.unreadable_from(peer, data);
            return;
        };
        let Some(link) = self.links.get(&peer).copied() else {
            // A connection we closed or never took in.
            self.stats.drop(DropReason::UnknownSender);
            return;
        };
        self.stats.messages_received += 1;
        match self.phase {
            Phase::Host => self.host_message(now, peer, link, msg),
            Phase::AwaitingInfo | Phase::Member => self.member_message(now, peer, link, msg),
            _ => self.stats.drop(DropReason::WrongState),
        }
    }

    /// Every member we have a connection with and its address, in one pass (for display and
    /// per-connection statistics).
    pub fn player_addresses(&self) -> Vec<(Dpnid, SocketAddr)> {
        self.member_routes(None)
    }

    /// The address of the identified member `dpnid`, when we have a connection with it.
    pub(crate) fn route(&self, dpnid: Dpnid) -> Option<SocketAddr> {
        self.links
            .iter()
            .find(|(_, l)| {
                l.dpnid == Some(dpnid) && matches!(l.state, LinkState::Member | LinkState::AwaitingAck)
            })
            .map(|(a, _)| *a)
    }

    /// Sends a session message: reliable, sequential, USER_1 (MC-DPL8CS 2.1.1).
    pub(crate) fn send_msg(&mut self, now: Instant, to: SocketAddr, msg: &SessionMessage) {
        let Ok(bytes) = msg.to_vec() else { return };
        let kind = MessageKind { user_1: true, ..MessageKind::RELIABLE_SEQUENTIAL };
        match self.ep.send(now, to, &bytes, kind) {
            Ok(()) => self.stats.messages_sent += 1,
            // Its queue is full, or it is a window behind while the memory budget is full: a
            // peer that cannot take the session's own messages would miss part of the name
            // table, so its connection is ended and it is handled as lost (docs/limits.md).
            Err(dplay_dframe::SendError::QueueFull) => {
                tracing::warn!(peer = %to, "too far behind to take a session message: connection ended");
                self.ep.abort(now, to);
            }
            Err(_) => {}
        }
    }

    /// Sends to the member `dpnid`; false when it has no connection.
    pub(crate) fn send_to_player(&mut self, now: Instant, dpnid: Dpnid, msg: &SessionMessage) -> bool {
        match self.route(dpnid) {
            Some(addr) => {
                self.send_msg(now, addr, msg);
                true
            }
            None => false,
        }
    }

    /// Every identified member connection but `except`, in address order.
    pub(crate) fn member_routes(&self, except: Option<Dpnid>) -> Vec<(Dpnid, SocketAddr)> {
        self.links
            .iter()
            .filter(|(_, l)| matches!(l.state, LinkState::Member | LinkState::AwaitingAck))
            .filter_map(|(a, l)| l.dpnid.map(|d| (d, *a)))
            .filter(|(d, _)| Some(*d) != except)
            .collect()
    }

    /// Closes the connection with `peer` gracefully and forgets it.
    pub(crate) fn close_link(&mut self, now: Instant, peer: SocketAddr) {
        if let Some(l) = self.links.get_mut(&peer) {
            l.state = LinkState::Closing;
        }
        self.ep.disconnect(now, peer);
    }

    /// Leaves the session: every connection closes gracefully, and the application hears why.
    pub(crate) fn end(&mut self, now: Instant, reason: EndReason) {
        if matches!(self.phase, Phase::Ended) {
            return;
        }
        tracing::debug!(%reason, "session ended");
        self.phase = Phase::Ended;
        self.joined = false;
        self.path_tests.clear();
        self.migration = None;
        self.early.clear();
        self.early_bytes = 0;
        self.admission.memory.early.shrink(usize::MAX);
        self.pending_end();
        let peers: Vec<SocketAddr> = self.links.keys().copied().collect();
        for peer in peers {
            self.close_link(now, peer);
        }
        if let Some(h) = self.host_addr.filter(|h| !self.links.contains_key(h)) {
            self.ep.disconnect(now, h);
        }
        self.events.push_back(Event::SessionEnded { reason });
    }

    /// Next integrity-check context value.
    pub(crate) fn next_context(&mut self) -> u32 {
        self.integrity_context = self.integrity_context.wrapping_add(1);
        self.integrity_context
    }
}
