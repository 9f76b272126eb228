//! The add-on carried by a DirectPlay 8 session: [`AddonOverDp8`] owns a
//! [`dplay_session::Session`] and the add-on's [`Client`] or [`Host`], and is driven exactly like
//! a session (FS-MULTIPLAYER.md 1.1, 3.1; INDEX.md H; docs/decisions.md "Add-on over DP8").
//!
//! The mapping:
//! * session [`SessionEvent::Joined`] starts the add-on with our DPNID as its [`PlayerId`]
//!   ([`Client::start`], or [`Host::new`] for a session we host);
//! * [`SessionEvent::PlayerAdded`] / [`SessionEvent::PlayerRemoved`] become
//!   [`Endpoint::player_joined`](crate::session_iface::Endpoint::player_joined) / [`Endpoint::player_left`](crate::session_iface::Endpoint::player_left) (a DPNID is the add-on's player
//!   id, FS-MULTIPLAYER.md 4);
//! * a player's data, when it is an FS2004 PLAYER_INFO_STRUCT, becomes
//!   [`Endpoint::player_info`](crate::session_iface::Endpoint::player_info) right after its
//!   `player_joined` (FS-MULTIPLAYER.md 3.1, 3.6);
//! * [`SessionEvent::HostMigrated`] to us makes a client take over the add-on host's duties
//!   ([`Client::become_host`]; docs/decisions.md "Add-on host migration");
//! * [`SessionEvent::Message`] becomes [`Endpoint::handle_message`](crate::session_iface::Endpoint::handle_message);
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

use crate::bridge::{self, AddonSide, Bridge};
use crate::client::{Client, CommandError};
use crate::host::{Host, HostConfig};
use crate::packet::PlayerInfo;
use crate::session_iface::{DisconnectReason, Event as AddonEvent, Outgoing, PlayerId, Target};
use crate::tracking::Tracker;

/// The DirectPlay 8 application GUID of FS2004 sessions, {0808CAA5-E62C-4691-8957-5D4524B922DA}
/// (FS-MULTIPLAYER.md 2, from swift's `CFs9Sdk::guid()`).
pub const GUID_FS2004: Uuid = uuid::uuid!("0808caa5-e62c-4691-8957-5d4524b922da");

/// The UDP port FS2004 multiplayer uses (MS KB 823630; FS-MULTIPLAYER.md 2).
pub const FS2004_PORT: u16 = 23456;

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
#[non_exhaustive]
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
    addon: AddonSide,
    events: VecDeque<OverDp8Event>,
    stats: OverDp8Stats,
    /// Messages to players not reachable yet, oldest first.
    held: VecDeque<Held>,
    /// When the held messages are tried next.
    held_retry: Option<Instant>,
}

impl AddonOverDp8 {
    /// A player or an observer over `session` (idle): [`AddonOverDp8::join`] it, or join through
    /// [`AddonOverDp8::session_mut`] after enumerating hosts.
    pub fn client(session: Session, client: Client) -> Self {
        Self::with_side(session, AddonSide::client(client))
    }

    /// The host side over `session` (idle): [`AddonOverDp8::host_session`] creates the session.
    pub fn host(session: Session, config: HostConfig) -> Self {
        Self::with_side(session, AddonSide::host(config))
    }

    fn with_side(session: Session, addon: AddonSide) -> Self {
        Self {
            session,
            addon,
            events: VecDeque::new(),
            stats: OverDp8Stats::default(),
            held: VecDeque::new(),
            held_retry: None,
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
        let c = self.addon.client_mut()?;
        let r = f(c, now);
        self.pump(now);
        Some(r)
    }

    /// Runs `f` on the add-on host once it exists (`None` otherwise), then pumps: for
    /// [`Host::remove_player`], [`Host::end_session`], [`Host::send_chat`].
    pub fn with_host<T>(&mut self, now: Instant, f: impl FnOnce(&mut Host, Instant) -> T) -> Option<T> {
        let h = self.addon.host_mut()?;
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
        self.addon.client_ref()
    }

    /// The add-on host, once the session is created.
    pub fn host_ref(&self) -> Option<&Host> {
        self.addon.host_ref()
    }

    /// The other players, as the add-on tracks them.
    pub fn tracker(&self) -> Option<&Tracker> {
        self.addon.tracker()
    }

    /// The add-on's receive counters (zero before a host exists).
    pub fn addon_stats(&self) -> crate::Stats {
        self.addon.stats()
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
        self.addon.handle_timeout(now);
        self.pump(now);
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.session.poll_transmit()
    }

    /// The earliest deadline of the session and the add-on (absolute).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.addon.poll_timeout(self.session.poll_timeout().into_iter().chain(self.held_retry))
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<OverDp8Event> {
        self.events.pop_front()
    }

    /// Moves everything between the session and the add-on until nothing moves (module
    /// documentation, "Poll order").
    fn pump(&mut self, now: Instant) {
        bridge::pump(self, now);
    }

    fn on_session_event(&mut self, now: Instant, ev: SessionEvent) {
        match &ev {
            SessionEvent::Joined { local, .. } => self.start(now, *local),
            SessionEvent::PlayerAdded { dpnid, .. } => {
                let info =
                    self.session.name_table().get(*dpnid).and_then(|e| PlayerInfo::parse(&e.data).ok());
                if let Some(e) = self.addon.endpoint_mut() {
                    e.player_joined(now, player_id(*dpnid));
                    if let Some(info) = info {
                        e.player_info(now, player_id(*dpnid), info);
                    }
                }
            }
            SessionEvent::HostMigrated { new_host } if *new_host == self.session.local_dpnid() => {
                self.addon.become_host();
            }
            SessionEvent::PlayerRemoved { dpnid, .. } => {
                if let Some(e) = self.addon.endpoint_mut() {
                    e.player_left(now, player_id(*dpnid));
                }
            }
            SessionEvent::Message { from, data, .. } => {
                if let Some(e) = self.addon.endpoint_mut() {
                    e.handle_message(now, player_id(*from), data);
                }
                return;
            }
            SessionEvent::SessionEnded { .. } => {
                self.addon.end();
                self.stats.send_failed += self.held.len() as u64;
                self.held.clear();
                self.held_retry = None;
            }
            SessionEvent::HostFound { .. }
            | SessionEvent::JoinPending { .. }
            | SessionEvent::HostMigrated { .. }
            | SessionEvent::Chat { .. }
            | SessionEvent::NameTable(_)
            | SessionEvent::Completed { .. } => {}
            // Any event a later session adds: passed on.
            _ => {}
        }
        self.events.push_back(OverDp8Event::Session(ev));
    }

    /// The session is joined as `local`: the add-on starts.
    fn start(&mut self, now: Instant, local: Dpnid) {
        self.addon.start(now, player_id(local));
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

impl Bridge for AddonOverDp8 {
    type SessionEvent = SessionEvent;

    fn poll_session_event(&mut self) -> Option<SessionEvent> {
        self.session.poll_event()
    }

    fn on_session_event(&mut self, now: Instant, ev: SessionEvent) {
        AddonOverDp8::on_session_event(self, now, ev);
    }

    fn addon(&mut self) -> &mut AddonSide {
        &mut self.addon
    }

    fn send(&mut self, now: Instant, out: &Outgoing) {
        AddonOverDp8::send(self, now, out);
    }

    fn on_addon_event(&mut self, now: Instant, ev: AddonEvent) {
        match ev {
            AddonEvent::Disconnect(reason) => self.close(now, reason),
            // Gone already, or not ours to remove (we are no longer the host): nothing to do.
            AddonEvent::Remove { id } => drop(self.session.remove_player(now, Dpnid(id.0))),
            _ => {}
        }
        self.events.push_back(OverDp8Event::Addon(ev));
    }
}

/// A DPNID as the add-on's player id (FS-MULTIPLAYER.md 4 DPID/DPNID).
fn player_id(dpnid: Dpnid) -> PlayerId {
    PlayerId(dpnid.0)
}
