//! The add-on carried by a DirectPlay 8 session: [`AddonOverDp8`] owns a
//! [`dplay_session::Session`] and the add-on's [`Client`] or [`Host`], and is driven exactly like
//! a session (FS-MULTIPLAYER.md 1.1, 3.1; INDEX.md H; docs/decisions.md "Add-on over DP8").
//!
//! The mapping:
//! * session [`SessionEvent::Joined`] starts the add-on with our DPNID as its [`PlayerId`]
//!   ([`Client::start`], or [`Host::new`] for a session we host);
//! * [`SessionEvent::PlayerAdded`] / [`SessionEvent::PlayerRemoved`] become
//!   [`Endpoint::player_joined`] / [`Endpoint::player_left`] (a DPNID is the add-on's player
//!   id, FS-MULTIPLAYER.md 4);
//! * [`SessionEvent::Message`] becomes [`Endpoint::handle_message`];
//! * each [`Outgoing`] becomes [`Session::send_to`] ([`Target::One`]) or [`Session::send_all`]
//!   ([`Target::All`]): guaranteed as reliable and sequential, not guaranteed as an unreliable,
//!   non-sequential datagram (the `packet_index` rule orders positions);
//! * [`AddonEvent::Disconnect`] becomes [`Session::leave`] (or, for a host ending the session,
//!   [`Session::terminate_session`]);
//! * a message to one player the session knows but cannot reach yet (a newer peer is in the name
//!   table before our connection to it is up, MC-DPL8CS 3.1.5.2) is held and tried again every
//!   [`HELD_RETRY`] for up to [`HELD_KEEP`], so the add-on's answers to a newcomer
//!   (QUERY_PLAYER_TYPE) do not wait for its 30 s retransmit.
//!
//! # Poll order
//!
//! As for a session: after [`AddonOverDp8::handle_datagram`], [`AddonOverDp8::handle_timeout`]
//! or a command, drain [`AddonOverDp8::poll_transmit`] into the socket and
//! [`AddonOverDp8::poll_event`] into the application, then sleep until
//! [`AddonOverDp8::poll_timeout`]. Inside, every input is followed by a pump that repeats, until
//! nothing moves: session events into the add-on, add-on outgoing messages into the session,
//! add-on events out (a disconnect closes the session, whose end is one more session event).
//! Events come out in that order: a session event, then the add-on events it caused.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_dframe::Transmit;
use dplay_session::{CommandError as SessionError, Event as SessionEvent, SendFlags, Session};
use dplay_wire::dp8::dpnid::Dpnid;
use uuid::Uuid;

use crate::client::{Client, CommandError};
use crate::host::{Host, HostConfig};
use crate::session_iface::{DisconnectReason, Endpoint, Event as AddonEvent, Outgoing, PlayerId, Target};
use crate::tracking::Tracker;

/// How long a message to a player we cannot reach yet is held before it is dropped.
pub const HELD_KEEP: Duration = Duration::from_secs(5);
/// How often held messages are tried again. The session reports no event when a connection to
/// a member comes up, so the bridge polls; 50 ms is short next to a join's round trips.
pub const HELD_RETRY: Duration = Duration::from_millis(50);

/// A message to one player that the session could not route yet.
#[derive(Debug)]
struct Held {
    since: Instant,
    to: Dpnid,
    bytes: Vec<u8>,
    flags: SendFlags,
}

/// The add-on side of the bridge.
#[derive(Debug)]
enum Side {
    /// A player or an observer; started once the session is joined.
    Client(Client),
    /// The host side, built once the session is created and our DPNID is known.
    PendingHost(HostConfig),
    /// The host side.
    Host(Host),
}

/// What the bridge reports: the session's events and the add-on's, in the order they happened.
/// Session [`SessionEvent::Message`]s are the add-on's input and do not appear here.
#[derive(Debug, Clone, PartialEq)]
pub enum OverDp8Event {
    /// From the DirectPlay 8 session.
    Session(SessionEvent),
    /// From the add-on.
    Addon(AddonEvent),
}

/// Counters of the bridge itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OverDp8Stats {
    /// Add-on messages the session accepted (a send to all counts once).
    pub sent: u64,
    /// Add-on messages dropped: the session refused them (not joined, player unknown), or they
    /// were held for [`HELD_KEEP`] without the player becoming reachable, or it left meanwhile.
    /// The add-on's own retransmits (QUERY_PLAYER_TYPE, RETRANSMIT_JOIN_*) cover the handshake
    /// messages lost this way.
    pub send_failed: u64,
    /// Add-on messages held because their player was in the name table but not reachable yet.
    pub held: u64,
}

/// The Flight Simulator add-on over one DirectPlay 8 [`Session`], sans-IO, with the session's
/// handle/poll interface (module documentation).
#[derive(Debug)]
pub struct AddonOverDp8 {
    session: Session,
    side: Side,
    events: VecDeque<OverDp8Event>,
    stats: OverDp8Stats,
    /// Messages to players not reachable yet, oldest first.
    held: VecDeque<Held>,
    /// When the held messages are tried next.
    held_retry: Option<Instant>,
    /// The session ended: the add-on is no longer driven.
    ended: bool,
}

impl AddonOverDp8 {
    /// A player or an observer over `session` (idle): [`AddonOverDp8::join`] it, or join through
    /// [`AddonOverDp8::session_mut`] after enumerating hosts.
    pub fn client(session: Session, client: Client) -> Self {
        Self::with_side(session, Side::Client(client))
    }

    /// The host side over `session` (idle): [`AddonOverDp8::host_session`] creates the session.
    pub fn host(session: Session, config: HostConfig) -> Self {
        Self::with_side(session, Side::PendingHost(config))
    }

    fn with_side(session: Session, side: Side) -> Self {
        Self {
            session,
            side,
            events: VecDeque::new(),
            stats: OverDp8Stats::default(),
            held: VecDeque::new(),
            held_retry: None,
            ended: false,
        }
    }

    /// Joins the session hosted at `host` ([`Session::join`]); the add-on starts once joined.
    pub fn join(
        &mut self,
        now: Instant,
        host: SocketAddr,
        instance: Option<Uuid>,
    ) -> Result<(), SessionError> {
        let r = self.session.join(now, host, instance);
        self.pump(now);
        r
    }

    /// Creates the session ([`Session::host`]); the add-on host starts at once.
    pub fn host_session(&mut self, now: Instant) -> Result<(), SessionError> {
        let r = self.session.host(now);
        self.pump(now);
        r
    }

    /// Runs `f` on the add-on client (`None` for a host), then pumps: for commands such as
    /// [`Client::set_position`], [`Client::request_observer`] or [`Client::leave`].
    pub fn with_client<T>(
        &mut self,
        now: Instant,
        f: impl FnOnce(&mut Client, Instant) -> Result<T, CommandError>,
    ) -> Option<Result<T, CommandError>> {
        let Side::Client(c) = &mut self.side else { return None };
        let r = f(c, now);
        self.pump(now);
        Some(r)
    }

    /// Runs `f` on the add-on host once it exists (`None` otherwise), then pumps: for
    /// [`Host::remove_player`], [`Host::end_session`], [`Host::send_chat`].
    pub fn with_host<T>(&mut self, now: Instant, f: impl FnOnce(&mut Host, Instant) -> T) -> Option<T> {
        let Side::Host(h) = &mut self.side else { return None };
        let r = f(h, now);
        self.pump(now);
        Some(r)
    }

    /// The session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session, for its own commands (enumeration, chat ...). Call
    /// [`AddonOverDp8::handle_timeout`] with the same `now` afterwards so that its events reach
    /// the add-on, or use [`AddonOverDp8::with_session`].
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Runs `f` on the session (a command such as [`Session::enum_hosts`], [`Session::send_all`]
    /// or [`Session::leave`]), then pumps its events into the add-on.
    pub fn with_session<T>(&mut self, now: Instant, f: impl FnOnce(&mut Session, Instant) -> T) -> T {
        let r = f(&mut self.session, now);
        self.pump(now);
        r
    }

    /// The add-on client, if this is one.
    pub fn client_ref(&self) -> Option<&Client> {
        match &self.side {
            Side::Client(c) => Some(c),
            _ => None,
        }
    }

    /// The add-on host, once the session is created.
    pub fn host_ref(&self) -> Option<&Host> {
        match &self.side {
            Side::Host(h) => Some(h),
            _ => None,
        }
    }

    /// The other players, as the add-on tracks them.
    pub fn tracker(&self) -> Option<&Tracker> {
        match &self.side {
            Side::Client(c) => Some(c.tracker()),
            Side::Host(h) => Some(h.tracker()),
            Side::PendingHost(_) => None,
        }
    }

    /// The add-on's receive counters (zero before a host exists).
    pub fn addon_stats(&self) -> crate::Stats {
        match &self.side {
            Side::Client(c) => c.stats(),
            Side::Host(h) => h.stats(),
            Side::PendingHost(_) => crate::Stats::default(),
        }
    }

    /// The bridge's counters.
    pub fn stats(&self) -> OverDp8Stats {
        self.stats
    }

    /// A datagram arrived from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        self.session.handle_datagram(now, from, bytes);
        self.pump(now);
    }

    /// Call at (or after) the deadline from [`AddonOverDp8::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.held_retry.is_some_and(|t| now >= t) {
            self.retry_held(now);
        }
        if self.session.poll_timeout().is_some_and(|t| now >= t) {
            self.session.handle_timeout(now);
        }
        self.pump(now);
        if let Some(e) = self.endpoint_mut().filter(|e| e.poll_timeout().is_some_and(|t| now >= t)) {
            e.handle_timeout(now);
        }
        self.pump(now);
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.session.poll_transmit()
    }

    /// The earliest deadline of the session and the add-on (absolute).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let addon = self.endpoint().and_then(|e| e.poll_timeout());
        self.session.poll_timeout().into_iter().chain(addon).chain(self.held_retry).min()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<OverDp8Event> {
        self.events.pop_front()
    }

    /// The add-on while it is driven: started or not, and not after the session ended.
    fn endpoint(&self) -> Option<&dyn Endpoint> {
        match &self.side {
            _ if self.ended => None,
            Side::Client(c) => Some(c),
            Side::Host(h) => Some(h),
            Side::PendingHost(_) => None,
        }
    }

    fn endpoint_mut(&mut self) -> Option<&mut dyn Endpoint> {
        match &mut self.side {
            _ if self.ended => None,
            Side::Client(c) => Some(c),
            Side::Host(h) => Some(h),
            Side::PendingHost(_) => None,
        }
    }

    /// Moves everything between the session and the add-on until nothing moves (module
    /// documentation, "Poll order").
    fn pump(&mut self, now: Instant) {
        loop {
            let mut moved = false;
            while let Some(ev) = self.session.poll_event() {
                moved = true;
                self.on_session_event(now, ev);
            }
            while let Some(out) = self.endpoint_mut().and_then(|e| e.poll_outgoing()) {
                moved = true;
                self.send(now, &out);
            }
            while let Some(ev) = self.endpoint_mut().and_then(|e| e.poll_event()) {
                moved = true;
                if let AddonEvent::Disconnect(reason) = ev {
                    self.close(now, reason);
                }
                self.events.push_back(OverDp8Event::Addon(ev));
            }
            if !moved {
                break;
            }
        }
    }

    fn on_session_event(&mut self, now: Instant, ev: SessionEvent) {
        match &ev {
            SessionEvent::Joined { local, .. } => self.start(now, *local),
            SessionEvent::PlayerAdded { dpnid, .. } => {
                if let Some(e) = self.endpoint_mut() {
                    e.player_joined(now, player_id(*dpnid));
                }
            }
            SessionEvent::PlayerRemoved { dpnid, .. } => {
                if let Some(e) = self.endpoint_mut() {
                    e.player_left(now, player_id(*dpnid));
                }
            }
            SessionEvent::Message { from, data, .. } => {
                if let Some(e) = self.endpoint_mut() {
                    e.handle_message(now, player_id(*from), data);
                }
                return;
            }
            SessionEvent::SessionEnded { .. } => {
                self.ended = true;
                self.stats.send_failed += self.held.len() as u64;
                self.held.clear();
                self.held_retry = None;
            }
            SessionEvent::HostFound { .. }
            | SessionEvent::HostMigrated { .. }
            | SessionEvent::Chat { .. } => {}
        }
        self.events.push_back(OverDp8Event::Session(ev));
    }

    /// The session is joined as `local`: the add-on starts.
    fn start(&mut self, now: Instant, local: Dpnid) {
        let own = player_id(local);
        match &mut self.side {
            // Only an idle client starts; a second Joined (none is expected) changes nothing.
            Side::Client(c) => drop(c.start(now, own)),
            Side::PendingHost(config) => self.side = Side::Host(Host::new(*config, own)),
            Side::Host(_) => {}
        }
    }

    fn send(&mut self, now: Instant, out: &Outgoing) {
        let flags = if out.guaranteed { SendFlags::RELIABLE_SEQUENTIAL } else { SendFlags::DATAGRAM };
        let r = match out.to {
            // Behind messages still held for the same player, to keep the order they were sent.
            Target::One(id) if self.held.iter().any(|h| h.to.0 == id.0) => Err(SessionError::UnknownPlayer),
            Target::One(id) => self.session.send_to(now, Dpnid(id.0), &out.bytes, flags),
            Target::All => self.session.send_all(now, &out.bytes, flags),
        };
        match (r, out.to) {
            (Ok(()), _) => self.stats.sent += 1,
            (Err(SessionError::UnknownPlayer), Target::One(id))
                if self.session.name_table().contains(Dpnid(id.0)) =>
            {
                self.stats.held += 1;
                let to = Dpnid(id.0);
                self.held.push_back(Held { since: now, to, bytes: out.bytes.clone(), flags });
                self.held_retry.get_or_insert(now + HELD_RETRY);
            }
            (Err(_), _) => self.stats.send_failed += 1,
        }
    }

    /// Tries the held messages again, in the order they were sent; drops those held too long
    /// or to players gone from the name table.
    fn retry_held(&mut self, now: Instant) {
        for h in std::mem::take(&mut self.held) {
            let gone = !self.session.name_table().contains(h.to);
            if gone || now.saturating_duration_since(h.since) > HELD_KEEP {
                self.stats.send_failed += 1;
                continue;
            }
            // A later message to the same player must not overtake an earlier one still held.
            if self.held.iter().any(|e| e.to == h.to) {
                self.held.push_back(h);
                continue;
            }
            match self.session.send_to(now, h.to, &h.bytes, h.flags) {
                Ok(()) => self.stats.sent += 1,
                Err(SessionError::UnknownPlayer) => self.held.push_back(h),
                Err(_) => self.stats.send_failed += 1,
            }
        }
        self.held_retry = (!self.held.is_empty()).then(|| now + HELD_RETRY);
    }

    /// The add-on asked to close: a host ending the session terminates it for everyone
    /// (MC-DPL8CS 2.2.2.1), anything else leaves (MS-DPDX 3.1.5.3).
    fn close(&mut self, now: Instant, reason: DisconnectReason) {
        if reason == DisconnectReason::SessionEnded && self.session.terminate_session(now, &[]).is_ok() {
            return;
        }
        self.session.leave(now);
    }
}

/// A DPNID as the add-on's player id (FS-MULTIPLAYER.md 4 DPID/DPNID).
fn player_id(dpnid: Dpnid) -> PlayerId {
    PlayerId(dpnid.0)
}
