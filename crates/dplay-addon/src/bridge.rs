//! The add-on side of a bridge to a DirectPlay session, shared by [`crate::over_dp4`] and
//! [`crate::over_dp8`]: the add-on [`Client`] or [`Host`] (a host is built once our own player
//! id is known), whether the session ended, and the pump that moves everything between the
//! session and the add-on (each bridge's module documentation, "Poll order").

use std::time::Instant;

use crate::client::Client;
use crate::host::{Host, HostConfig, HostPolicy};
use crate::session_iface::{Endpoint, Event as AddonEvent, Outgoing, PlayerId};
use crate::tracking::Tracker;

/// The add-on side of a bridge.
#[derive(Debug)]
enum Side {
    /// A player or an observer; started once our own player id is known.
    Client(Client),
    /// The host side, built once our own player id is known.
    PendingHost(HostConfig),
    /// The host side.
    Host(Host),
}

/// The add-on of a bridge and whether the session under it ended.
#[derive(Debug)]
pub(crate) struct AddonSide {
    side: Side,
    /// The session ended: the add-on is no longer driven.
    ended: bool,
}

impl AddonSide {
    /// A player or an observer, idle until [`AddonSide::start`].
    pub(crate) fn client(client: Client) -> Self {
        Self { side: Side::Client(client), ended: false }
    }

    /// A host, built at [`AddonSide::start`].
    pub(crate) fn host(config: HostConfig) -> Self {
        Self { side: Side::PendingHost(config), ended: false }
    }

    /// The session ended: the add-on is no longer driven.
    pub(crate) fn end(&mut self) {
        self.ended = true;
    }

    /// Whether this is the client side.
    pub(crate) fn is_client(&self) -> bool {
        matches!(self.side, Side::Client(_))
    }

    /// The add-on client, if this is one.
    pub(crate) fn client_ref(&self) -> Option<&Client> {
        match &self.side {
            Side::Client(c) => Some(c),
            _ => None,
        }
    }

    /// The add-on client, if this is one.
    pub(crate) fn client_mut(&mut self) -> Option<&mut Client> {
        match &mut self.side {
            Side::Client(c) => Some(c),
            _ => None,
        }
    }

    /// The add-on host, once it exists.
    pub(crate) fn host_ref(&self) -> Option<&Host> {
        match &self.side {
            Side::Host(h) => Some(h),
            _ => None,
        }
    }

    /// The add-on host, once it exists.
    pub(crate) fn host_mut(&mut self) -> Option<&mut Host> {
        match &mut self.side {
            Side::Host(h) => Some(h),
            _ => None,
        }
    }

    /// The other players, as the add-on tracks them.
    pub(crate) fn tracker(&self) -> Option<&Tracker> {
        match &self.side {
            Side::Client(c) => Some(c.tracker()),
            Side::Host(h) => Some(h.tracker()),
            Side::PendingHost(_) => None,
        }
    }

    /// The add-on's receive counters (zero before a host exists).
    pub(crate) fn stats(&self) -> crate::Stats {
        match &self.side {
            Side::Client(c) => c.stats(),
            Side::Host(h) => h.stats(),
            Side::PendingHost(_) => crate::Stats::default(),
        }
    }

    /// Our own player id is known: the add-on starts with it.
    pub(crate) fn start(&mut self, now: Instant, own: PlayerId) {
        match &mut self.side {
            // Only an idle client starts; a second start (none is expected) changes nothing.
            Side::Client(c) => drop(c.start(now, own)),
            Side::PendingHost(config) => self.side = Side::Host(Host::new(*config, own)),
            Side::Host(_) => {}
        }
    }

    /// The session's host role migrated to us: a client takes over the add-on host's duties
    /// with the default policy (accept every player and observer).
    pub(crate) fn become_host(&mut self) {
        if let Side::Client(c) = &mut self.side
            && !self.ended
        {
            c.become_host(HostPolicy::default());
        }
    }

    /// The add-on while it is driven: started or not, and not after the session ended.
    pub(crate) fn endpoint(&self) -> Option<&dyn Endpoint> {
        match &self.side {
            _ if self.ended => None,
            Side::Client(c) => Some(c),
            Side::Host(h) => Some(h),
            Side::PendingHost(_) => None,
        }
    }

    /// The add-on while it is driven, for input.
    pub(crate) fn endpoint_mut(&mut self) -> Option<&mut dyn Endpoint> {
        match &mut self.side {
            _ if self.ended => None,
            Side::Client(c) => Some(c),
            Side::Host(h) => Some(h),
            Side::PendingHost(_) => None,
        }
    }

    /// The earliest of `session`'s deadlines and the add-on's.
    pub(crate) fn poll_timeout(&self, session: impl IntoIterator<Item = Instant>) -> Option<Instant> {
        let addon = self.endpoint().and_then(|e| e.poll_timeout());
        session.into_iter().chain(addon).min()
    }

    /// Runs the add-on's timer if its deadline has come.
    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        if let Some(e) = self.endpoint_mut().filter(|e| e.poll_timeout().is_some_and(|t| now >= t)) {
            e.handle_timeout(now);
        }
    }
}

/// What a bridge does with what moves between its session and its add-on.
pub(crate) trait Bridge {
    /// The session's event type.
    type SessionEvent;
    /// The next session event.
    fn poll_session_event(&mut self) -> Option<Self::SessionEvent>;
    /// A session event: into the add-on and out as a bridge event.
    fn on_session_event(&mut self, now: Instant, ev: Self::SessionEvent);
    /// The add-on side.
    fn addon(&mut self) -> &mut AddonSide;
    /// An add-on message into the session.
    fn send(&mut self, now: Instant, out: &Outgoing);
    /// An add-on event: out as a bridge event (a disconnect closes the session first).
    fn on_addon_event(&mut self, now: Instant, ev: AddonEvent);
}

/// Moves everything between the session and the add-on until nothing moves (each bridge's
/// module documentation, "Poll order").
pub(crate) fn pump<B: Bridge>(bridge: &mut B, now: Instant) {
    loop {
        let mut moved = false;
        while let Some(ev) = bridge.poll_session_event() {
            moved = true;
            bridge.on_session_event(now, ev);
        }
        while let Some(out) = bridge.addon().endpoint_mut().and_then(|e| e.poll_outgoing()) {
            moved = true;
            bridge.send(now, &out);
        }
        while let Some(ev) = bridge.addon().endpoint_mut().and_then(|e| e.poll_event()) {
            moved = true;
            bridge.on_addon_event(now, ev);
        }
        if !moved {
            break;
        }
    }
}
