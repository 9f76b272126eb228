//! The add-on carried by a DirectPlay 4 session, as FS98 and FS2000 speak it: [`AddonOverDp4`]
//! owns a [`Dp4Session`] and the add-on's [`Client`] or [`Host`] (FS98 dialect), and is driven
//! exactly like the session (FS-MULTIPLAYER.md 1.1, 1.5, 2; MC-DPL4CS 3.1, 3.2;
//! docs/decisions.md "Add-on over DirectPlay 4").
//!
//! The mapping:
//! * sessions are FS98's: application GUID [`GUID_FS6`] ([`fs98_host_config`],
//!   [`fs98_enum_request`]; FS-MULTIPLAYER.md 1.5 step 1, 2);
//! * once the session is joined (or hosted) the bridge creates our DirectPlay player with the
//!   configured short name (FS-MULTIPLAYER.md 1.5 step 2, [`Dp4Session::create_player`]); its
//!   DPID is the add-on's own [`PlayerId`], and the add-on starts on
//!   [`Dp4Event::PlayerCreated`] ([`Client::start`], or [`Host::new`] for a session we host);
//! * [`Dp4Event::PlayerJoined`] / [`Dp4Event::PlayerLeft`] of application players (not system
//!   players, which are instances) become [`Endpoint::player_joined`](crate::session_iface::Endpoint::player_joined) /
//!   [`Endpoint::player_left`](crate::session_iface::Endpoint::player_left); a DPID is the add-on's player id (FS-MULTIPLAYER.md 4, Q10);
//! * [`Dp4Event::Message`] becomes [`Endpoint::handle_message`](crate::session_iface::Endpoint::handle_message) with `idFrom` as the sender;
//! * each [`Outgoing`] becomes [`Dp4Session::send`] from our player to the target
//!   ([`Target::All`] is `DPID_ALLPLAYERS`), guaranteed over TCP or not over UDP as the add-on
//!   asks (seed 004: "Send this packet with guaranteed messaging");
//! * FS98's sessions have two groups, [`FS61_REQUEST_PARAMS`] and [`FS61_REFUSE_PARAMS`]: a
//!   host creates both once its player exists, and a client adds its player to
//!   [`FS61_REFUSE_PARAMS`] as soon as both exist, so that the PARAMS FS98 sends to
//!   [`FS61_REQUEST_PARAMS`] never reach it (FS-MULTIPLAYER.md 1.5 step 4;
//!   [`Dp4Session::create_group`], [`Dp4Session::add_player_to_group`]);
//! * [`Dp4Event::HostMigrated`] to us makes a client take over the add-on host's duties
//!   ([`Client::become_host`]; docs/decisions.md "Add-on host migration");
//! * [`AddonEvent::Disconnect`] becomes [`Dp4Session::leave`], which deletes our players at
//!   every instance; a host leaving ends the session for the others unless it may migrate
//!   (MC-DPL4CS 3.1.4.5, 3.1.7.1).
//!
//! # Poll order
//!
//! As for the session: after [`AddonOverDp4::handle_udp`], [`AddonOverDp4::handle_tcp`],
//! [`AddonOverDp4::handle_timeout`] or a command, drain [`AddonOverDp4::poll_transmit`] into the
//! sockets and [`AddonOverDp4::poll_event`] into the application, then sleep until
//! [`AddonOverDp4::poll_timeout`]. Inside, every input is followed by a pump that repeats until
//! nothing moves: session events into the add-on, add-on outgoing messages into the session,
//! add-on events out (a disconnect leaves the session, whose end is one more session event).

use std::collections::{BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::time::Instant;

use dplay_session::dp4::{
    CommandError as SessionError, ConnId, DPID_ALLPLAYERS, Dp4Event, Dp4Session, Dp4Transmit, EnumRequest,
    GroupEvent, HostConfig as SessionHostConfig, StreamError, TcpStatus,
};
use dplay_wire::dp4::enumeration::EnumSessionsFlags;
use uuid::Uuid;

use crate::bridge::{self, AddonSide, Bridge};
use crate::client::{Client, CommandError};
use crate::host::{Host, HostConfig};
use crate::session_iface::{Event as AddonEvent, Outgoing, PlayerId, Target};
use crate::tracking::Tracker;

/// `GUID_FS6`, the DirectPlay application GUID of Flight Simulator 98 sessions:
/// {CC080A27-6D4E-11D0-8E21-00A0C90542EF} (FS-MULTIPLAYER.md 2; SDK "Connecting an Add-On").
pub const GUID_FS6: Uuid = uuid::uuid!("cc080a27-6d4e-11d0-8e21-00a0c90542ef");

/// The group of players that want detailed aircraft data (PARAMS) (FS-MULTIPLAYER.md 1.5
/// step 4).
pub const FS61_REQUEST_PARAMS: &str = "FS61_REQUEST_PARAMS";

/// The group of players that do not want PARAMS: the add-on puts its player in it
/// (FS-MULTIPLAYER.md 1.5 step 4).
pub const FS61_REFUSE_PARAMS: &str = "FS61_REFUSE_PARAMS";

/// A DirectPlay 4 session of FS98 named `name`: application [`GUID_FS6`], no player limit, no
/// password, no flags (FS-MULTIPLAYER.md 1.5 step 1).
pub fn fs98_host_config(name: &str) -> SessionHostConfig {
    SessionHostConfig::new(name, GUID_FS6)
}

/// An enumeration of FS98 sessions ([`GUID_FS6`]), joinable or not, with a password or not
/// (FS-MULTIPLAYER.md 1.5 step 1; MC-DPL4CS 3.1.4.1): a session that needs a password is
/// listed too (PASSWORD_REQUIRED, 2.2.29), so a missing or wrong one is reported by the join.
pub fn fs98_enum_request(password: Option<&str>) -> EnumRequest {
    EnumRequest {
        application_guid: GUID_FS6,
        password: password.map(str::to_owned),
        flags: EnumSessionsFlags::ALL | EnumSessionsFlags::PASSWORD_REQUIRED,
    }
}

/// What the bridge reports: the session's events and the add-on's, in the order they happened.
/// Session [`Dp4Event::Message`]s are the add-on's input and do not appear here.
#[derive(Debug, Clone, PartialEq)]
pub enum OverDp4Event {
    /// From the DirectPlay 4 session (player names are in [`Dp4Event::PlayerJoined`]).
    Session(Dp4Event),
    /// From the add-on.
    Addon(AddonEvent),
}

/// Counters of the bridge itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct OverDp4Stats {
    /// Add-on messages the session accepted (a send to all counts once).
    pub sent: u64,
    /// Add-on messages the session refused: a player that has left, or no player of ours yet.
    pub send_failed: u64,
    /// Messages dropped because they carry no `idFrom` (a session with the NM flag,
    /// MC-DPL4CS 2.2.45): the add-on needs to know who sent a position.
    pub unattributed: u64,
}

/// The Flight Simulator add-on (FS98 dialect) over one DirectPlay 4 [`Dp4Session`], sans-IO,
/// with the session's handle/poll interface (module documentation).
#[derive(Debug)]
pub struct AddonOverDp4 {
    session: Dp4Session,
    addon: AddonSide,
    /// The short name of our DirectPlay player.
    name: String,
    /// Our DirectPlay player, once created.
    own: Option<u32>,
    /// The remote application players reported to the add-on.
    players: BTreeSet<u32>,
    events: VecDeque<OverDp4Event>,
    stats: OverDp4Stats,
}

impl AddonOverDp4 {
    /// A player or an observer over `session` (idle), whose DirectPlay player will be called
    /// `name`: [`AddonOverDp4::join`] a session, after [`AddonOverDp4::enum_sessions`] if the
    /// host's listener is not known.
    pub fn client(session: Dp4Session, client: Client, name: &str) -> Self {
        Self::with_side(session, AddonSide::client(client), name)
    }

    /// The host side over `session` (idle), whose DirectPlay player will be called `name`:
    /// [`AddonOverDp4::host_session`] creates the session.
    pub fn host(session: Dp4Session, config: HostConfig, name: &str) -> Self {
        Self::with_side(session, AddonSide::host(config), name)
    }

    fn with_side(session: Dp4Session, addon: AddonSide, name: &str) -> Self {
        Self {
            session,
            addon,
            name: name.to_owned(),
            own: None,
            players: BTreeSet::new(),
            events: VecDeque::new(),
            stats: OverDp4Stats::default(),
        }
    }

    /// Looks for FS98 sessions with [`fs98_enum_request`]: ENUMSESSIONS to `target`, a host's
    /// enumeration socket (port 47624 unless it was moved), or broadcast to port 47624 when
    /// `None` (MC-DPL4CS 3.1.4.1). Each answer is a [`Dp4Event::SessionFound`] whose `host` is
    /// where to [`AddonOverDp4::join`]; [`Dp4Event::EnumDone`] ends the search.
    pub fn enum_sessions(&mut self, now: Instant, target: Option<SocketAddr>, password: Option<&str>) {
        let request = fs98_enum_request(password);
        match target {
            Some(target) => self.session.enum_sessions_at(now, target, &request),
            None => self.session.enum_sessions(now, None, &request),
        }
        self.pump(now);
    }

    /// Joins the session whose host listens on `host` ([`Dp4Session::join`]); our player is
    /// created and the add-on starts once joined.
    pub fn join(
        &mut self,
        now: Instant,
        host: SocketAddr,
        password: Option<&str>,
    ) -> Result<(), SessionError> {
        let r = self.session.join(now, host, password);
        self.pump(now);
        r
    }

    /// Creates the session ([`Dp4Session::host`]; [`fs98_host_config`] for FS98's) and our
    /// player; the add-on host starts at once.
    pub fn host_session(&mut self, now: Instant, config: SessionHostConfig) -> Result<(), SessionError> {
        let r = self.session.host(now, config).and_then(|()| self.session.create_player(now, &self.name));
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
    pub fn session(&self) -> &Dp4Session {
        &self.session
    }

    /// The session, for its own commands. Call [`AddonOverDp4::handle_timeout`] with the same
    /// `now` afterwards so that its events reach the add-on.
    pub fn session_mut(&mut self) -> &mut Dp4Session {
        &mut self.session
    }

    /// Our DirectPlay player: the add-on's own id, once created.
    pub fn own_player(&self) -> Option<PlayerId> {
        self.own.map(PlayerId)
    }

    /// The short name of a player of the session (ours included), if it has one.
    pub fn player_name(&self, id: PlayerId) -> Option<String> {
        self.session.players().get(&id.0)?.short_name.as_ref().map(dplay_wire::WideString::to_string_lossy)
    }

    /// The add-on client, if this is one.
    pub fn client_ref(&self) -> Option<&Client> {
        self.addon.client_ref()
    }

    /// The add-on host, once it exists.
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
    pub fn stats(&self) -> OverDp4Stats {
        self.stats
    }

    /// A datagram from `from`, on the enumeration port or the game socket
    /// ([`Dp4Session::handle_udp`]).
    pub fn handle_udp(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        self.session.handle_udp(now, from, bytes);
        self.pump(now);
    }

    /// Bytes read from TCP connection `conn`, whose peer is `from` ([`Dp4Session::handle_tcp`]).
    /// On an error the caller closes that connection; the status feeds its deadlines.
    pub fn handle_tcp(
        &mut self,
        now: Instant,
        conn: ConnId,
        from: SocketAddr,
        bytes: &[u8],
    ) -> Result<TcpStatus, StreamError> {
        let r = self.session.handle_tcp(now, conn, from, bytes);
        self.pump(now);
        r
    }

    /// TCP connection `conn` closed ([`Dp4Session::handle_tcp_closed`]).
    pub fn handle_tcp_closed(&mut self, conn: ConnId) {
        self.session.handle_tcp_closed(conn);
    }

    /// TCP connection `conn` was closed or reset by its peer ([`Dp4Session::handle_tcp_lost`]):
    /// its instance is checked at once.
    pub fn handle_tcp_lost(&mut self, now: Instant, conn: ConnId, opened_to: Option<SocketAddr>) {
        self.session.handle_tcp_lost(now, conn, opened_to);
        self.pump(now);
    }

    /// The TCP listener `stream` cannot be reached ([`Dp4Session::handle_unreachable`]).
    pub fn handle_unreachable(&mut self, now: Instant, stream: SocketAddr) {
        self.session.handle_unreachable(now, stream);
        self.pump(now);
    }

    /// Call at (or after) the deadline from [`AddonOverDp4::poll_timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.session.poll_timeout().is_some_and(|t| now >= t) {
            self.session.handle_timeout(now);
        }
        self.pump(now);
        self.addon.handle_timeout(now);
        self.pump(now);
    }

    /// The next bytes to send.
    pub fn poll_transmit(&mut self) -> Option<Dp4Transmit> {
        self.session.poll_transmit()
    }

    /// The earliest deadline of the session and the add-on (absolute).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.addon.poll_timeout(self.session.poll_timeout())
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<OverDp4Event> {
        self.events.pop_front()
    }

    /// Moves everything between the session and the add-on until nothing moves (module
    /// documentation, "Poll order").
    fn pump(&mut self, now: Instant) {
        bridge::pump(self, now);
    }

    fn on_session_event(&mut self, now: Instant, ev: Dp4Event) {
        match &ev {
            Dp4Event::Joined { .. } => {
                // Refused only when not joined, which Joined rules out.
                let _ = self.session.create_player(now, &self.name);
            }
            Dp4Event::PlayerCreated { id } => {
                self.start(now, *id);
                self.params_groups(now);
            }
            Dp4Event::Group(GroupEvent::Created { name: Some(name), local: false, .. })
                if name == FS61_REFUSE_PARAMS =>
            {
                self.params_groups(now)
            }
            // Without a player of its own the add-on cannot take part (FS-MULTIPLAYER.md 1.5
            // step 2): leave again.
            Dp4Event::PlayerCreateFailed(_) if self.own.is_none() => {
                let _ = self.session.leave();
            }
            Dp4Event::PlayerJoined { id, system: false, .. } => self.player_joined(now, *id),
            Dp4Event::PlayerLeft { id } => self.player_left(now, *id),
            Dp4Event::Message { from, data, .. } => {
                match from {
                    Some(from) => {
                        if let Some(e) = self.addon.endpoint_mut() {
                            e.handle_message(now, PlayerId(*from), data);
                        }
                    }
                    None => self.stats.unattributed += 1,
                }
                return;
            }
            Dp4Event::Ended(_) => self.addon.end(),
            Dp4Event::HostMigrated { local: true, .. } => self.addon.become_host(),
            _ => {}
        }
        self.events.push_back(OverDp4Event::Session(ev));
    }

    /// A remote application player entered: the add-on's roster (system players are not).
    fn player_joined(&mut self, now: Instant, id: u32) {
        if Some(id) != self.own
            && self.players.insert(id)
            && let Some(e) = self.addon.endpoint_mut()
        {
            e.player_joined(now, PlayerId(id));
        }
    }

    fn player_left(&mut self, now: Instant, id: u32) {
        if self.players.remove(&id)
            && let Some(e) = self.addon.endpoint_mut()
        {
            e.player_left(now, PlayerId(id));
        }
    }

    /// Our player `id` exists: the add-on starts with it as its own id.
    fn start(&mut self, now: Instant, id: u32) {
        if self.own.is_some() {
            return;
        }
        self.own = Some(id);
        self.addon.start(now, PlayerId(id));
    }

    /// FS-MULTIPLAYER.md 1.5 step 4: a host makes FS98's two groups; a client puts its player
    /// in [`FS61_REFUSE_PARAMS`] once that group exists (adding a member again sends nothing).
    fn params_groups(&mut self, now: Instant) {
        let Some(own) = self.own else { return };
        if self.addon.is_client() {
            if let Some(group) = self.session.group_named(FS61_REFUSE_PARAMS) {
                // Refused only when not joined or the group or player is gone: nothing to do.
                let _ = self.session.add_player_to_group(group, own);
            }
        } else {
            for name in [FS61_REQUEST_PARAMS, FS61_REFUSE_PARAMS] {
                if self.session.group_named(name).is_none() {
                    // The host allocates at once; refused only when not in the session.
                    let _ = self.session.create_group(now, name);
                }
            }
        }
    }

    fn send(&mut self, now: Instant, out: &Outgoing) {
        let Some(own) = self.own else {
            self.stats.send_failed += 1;
            return;
        };
        let to = match out.to {
            Target::One(id) => id.0,
            Target::All => DPID_ALLPLAYERS,
        };
        match self.session.send(now, own, to, &out.bytes, out.guaranteed) {
            Ok(()) => self.stats.sent += 1,
            Err(_) => self.stats.send_failed += 1,
        }
    }
}

impl Bridge for AddonOverDp4 {
    type SessionEvent = Dp4Event;

    fn poll_session_event(&mut self) -> Option<Dp4Event> {
        self.session.poll_event()
    }

    fn on_session_event(&mut self, now: Instant, ev: Dp4Event) {
        AddonOverDp4::on_session_event(self, now, ev);
    }

    fn addon(&mut self) -> &mut AddonSide {
        &mut self.addon
    }

    fn send(&mut self, now: Instant, out: &Outgoing) {
        AddonOverDp4::send(self, now, out);
    }

    fn on_addon_event(&mut self, _now: Instant, ev: AddonEvent) {
        if let AddonEvent::Disconnect(_) = ev {
            // Already ended (a second disconnect): nothing left to close.
            let _ = self.session.leave();
        }
        self.events.push_back(OverDp4Event::Addon(ev));
    }
}

#[cfg(test)]
mod tests;
