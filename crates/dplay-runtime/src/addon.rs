//! [`AddonProtocol`]: the Flight Simulator add-on ([`dplay_addon`]) over a DirectPlay 8 session.
//!
//! The bridge the add-on's [`Endpoint`] interface asks for (`dplay_addon::session_iface`):
//! session roster changes become `player_joined` / `player_left` (every player already present
//! once the session is joined), application messages become `handle_message`, and each
//! [`Outgoing`] becomes a session send, guaranteed ones reliable and sequential, the others
//! unreliable datagrams. [`dplay_addon::Event::Disconnect`] leaves the session.

use std::collections::{BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_addon::packet::ZString;
use dplay_addon::{
    Client, ClientConfig, Endpoint, Host, HostConfig, Outgoing, PlayerId, Position, Target, Velocity,
};
use dplay_session::{CommandError, Event, SendFlags, SessionConfig};
use dplay_wire::dp8::dpnid::Dpnid;

use crate::Protocol;
use crate::dp8::{Dp8Command, Dp8Event, Dp8Protocol};

/// How long a message to a player we cannot reach yet is kept: a player enters the name table
/// (and the add-on's roster) before our connection to it is up (MC-DPL8CS 3.1.5.2), and the
/// add-on answers newcomers at once.
const UNROUTED_KEEP: Duration = Duration::from_secs(5);
/// How often those messages are tried again.
const UNROUTED_RETRY: Duration = Duration::from_millis(50);

/// A message to one player not reachable yet.
#[derive(Debug)]
struct Unrouted {
    since: Instant,
    to: Dpnid,
    data: Vec<u8>,
    flags: SendFlags,
}

/// Which side of the add-on protocol we run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddonRole {
    /// The session's host, answering joins.
    Host(HostConfig),
    /// A player or an observer joining a session.
    Client(ClientConfig),
}

/// What an application asks of the add-on.
#[derive(Debug, Clone, PartialEq)]
pub enum AddonCommand {
    /// A command for the DirectPlay 8 session underneath (host, join, leave ...).
    Session(Dp8Command),
    /// A player's position from now on (sent four times a second by the add-on).
    SetPosition(Position, Option<Velocity>),
    /// CHAT_TEXT to everyone.
    Chat(String),
}

/// What the add-on and its session tell the application.
#[derive(Debug, Clone, PartialEq)]
pub enum AddonEvent {
    /// An event of the session underneath (application messages go to the add-on instead).
    Session(Dp8Event),
    /// An event of the add-on.
    Addon(dplay_addon::Event),
    /// A newer position of another player was accepted.
    Position {
        /// Whose.
        id: PlayerId,
        /// Where.
        position: Position,
        /// Its velocities, if sent.
        velocity: Option<Velocity>,
    },
}

/// The add-on's state machine, once we know our own id.
#[derive(Debug)]
enum App {
    Client(Box<Client>),
    Host(Box<Host>),
}

impl App {
    fn endpoint(&mut self) -> &mut dyn Endpoint {
        match self {
            Self::Client(c) => c.as_mut(),
            Self::Host(h) => h.as_mut(),
        }
    }

    fn endpoint_ref(&self) -> &dyn Endpoint {
        match self {
            Self::Client(c) => c.as_ref(),
            Self::Host(h) => h.as_ref(),
        }
    }

    fn position(&self, id: PlayerId) -> Option<(Position, Option<Velocity>)> {
        let tracker = match self {
            Self::Client(c) => c.tracker(),
            Self::Host(h) => h.tracker(),
        };
        tracker.get(id)?.fix.as_ref().map(|f| (f.position, f.velocity))
    }
}

/// The add-on over a DirectPlay 8 session, as a runtime [`Protocol`].
#[derive(Debug)]
pub struct AddonProtocol {
    inner: Dp8Protocol,
    role: AddonRole,
    app: Option<App>,
    /// Other players in the session, as the session reported them.
    players: BTreeSet<PlayerId>,
    /// A position set before the add-on started.
    position: Option<(Position, Option<Velocity>)>,
    /// Messages to players whose connection is not up yet, oldest first.
    unrouted: VecDeque<Unrouted>,
    /// When the unrouted messages are tried next.
    retry_at: Option<Instant>,
    events: VecDeque<AddonEvent>,
}

impl AddonProtocol {
    /// An add-on in no session yet; send [`Dp8Command::Host`] or [`Dp8Command::Join`].
    pub fn new(config: SessionConfig, role: AddonRole, now: Instant) -> Self {
        Self {
            inner: Dp8Protocol::new(config, now),
            role,
            app: None,
            players: BTreeSet::new(),
            position: None,
            unrouted: VecDeque::new(),
            retry_at: None,
            events: VecDeque::new(),
        }
    }

    /// The DirectPlay 8 driver underneath.
    pub fn dp8(&self) -> &Dp8Protocol {
        &self.inner
    }

    /// Hands session events to the add-on and the add-on's output to the session, until both
    /// are quiet.
    fn pump(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            while let Some(event) = self.inner.poll_event() {
                busy = true;
                self.session_event(now, event);
            }
            let Some(app) = self.app.as_mut() else { return };
            let mut outgoing = Vec::new();
            let mut app_events = Vec::new();
            {
                let ep = app.endpoint();
                while let Some(o) = ep.poll_outgoing() {
                    outgoing.push(o);
                }
                while let Some(e) = ep.poll_event() {
                    app_events.push(e);
                }
            }
            busy |= !outgoing.is_empty() || !app_events.is_empty();
            for o in outgoing {
                self.send(now, o);
            }
            for e in app_events {
                self.addon_event(now, e);
            }
            if !busy {
                return;
            }
        }
    }

    fn session_event(&mut self, now: Instant, event: Dp8Event) {
        if let Dp8Event::Session(e) = &event {
            match e {
                Event::Joined { local, .. } => self.start(now, *local),
                Event::PlayerAdded { dpnid, .. } => {
                    let id = PlayerId(dpnid.0);
                    if self.players.insert(id)
                        && let Some(app) = self.app.as_mut()
                    {
                        app.endpoint().player_joined(now, id);
                    }
                }
                Event::PlayerRemoved { dpnid, .. } => {
                    let id = PlayerId(dpnid.0);
                    if self.players.remove(&id)
                        && let Some(app) = self.app.as_mut()
                    {
                        app.endpoint().player_left(now, id);
                    }
                }
                Event::Message { from, data, .. } => {
                    if let Some(app) = self.app.as_mut() {
                        app.endpoint().handle_message(now, PlayerId(from.0), data);
                    }
                    return;
                }
                _ => {}
            }
        }
        self.events.push_back(AddonEvent::Session(event));
    }

    /// We are in the session as `local`: the add-on starts and hears of every other player.
    fn start(&mut self, now: Instant, local: Dpnid) {
        let own = PlayerId(local.0);
        self.players.remove(&own);
        let mut app = match &self.role {
            AddonRole::Host(config) => App::Host(Box::new(Host::new(*config, own))),
            AddonRole::Client(config) => {
                let mut client = Client::new(config.clone());
                // Only fails when already started, and this client is new.
                let _ = client.start(now, own);
                if let Some((p, v)) = self.position {
                    client.set_position(now, p, v);
                }
                App::Client(Box::new(client))
            }
        };
        for id in &self.players {
            app.endpoint().player_joined(now, *id);
        }
        self.app = Some(app);
    }

    fn send(&mut self, now: Instant, o: Outgoing) {
        let flags = if o.guaranteed { SendFlags::RELIABLE_SEQUENTIAL } else { SendFlags::DATAGRAM };
        match o.to {
            Target::All => self.inner.handle_command(now, Dp8Command::SendAll { data: o.bytes, flags }),
            Target::One(id) => {
                let to = Dpnid(id.0);
                match self.inner.try_send_to(now, to, &o.bytes, flags) {
                    Err(CommandError::UnknownPlayer) if self.players.contains(&id) => {
                        self.unrouted.push_back(Unrouted { since: now, to, data: o.bytes, flags });
                        self.retry_at.get_or_insert(now + UNROUTED_RETRY);
                    }
                    Err(e) => tracing::debug!("add-on message to {to} not sent: {e}"),
                    Ok(()) => {}
                }
            }
        }
    }

    /// Tries the unrouted messages again; drops those too old or to players gone.
    fn retry_unrouted(&mut self, now: Instant) {
        for u in std::mem::take(&mut self.unrouted) {
            let present = self.players.contains(&PlayerId(u.to.0));
            if !present || now.saturating_duration_since(u.since) > UNROUTED_KEEP {
                tracing::debug!("add-on message to {} dropped: no connection", u.to);
                continue;
            }
            if let Err(CommandError::UnknownPlayer) = self.inner.try_send_to(now, u.to, &u.data, u.flags) {
                self.unrouted.push_back(u);
            }
        }
        self.retry_at = (!self.unrouted.is_empty()).then(|| now + UNROUTED_RETRY);
    }

    fn addon_event(&mut self, now: Instant, event: dplay_addon::Event) {
        match &event {
            dplay_addon::Event::PositionUpdated { id } => {
                if let Some((position, velocity)) = self.app.as_ref().and_then(|a| a.position(*id)) {
                    self.events.push_back(AddonEvent::Position { id: *id, position, velocity });
                }
                return;
            }
            dplay_addon::Event::Disconnect(_) => self.inner.handle_command(now, Dp8Command::Leave),
            _ => {}
        }
        self.events.push_back(AddonEvent::Addon(event));
    }
}

impl Protocol for AddonProtocol {
    type Command = AddonCommand;
    type Event = AddonEvent;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.inner.handle_datagram(now, from, data);
        self.pump(now);
    }

    fn handle_command(&mut self, now: Instant, command: AddonCommand) {
        match command {
            AddonCommand::Session(c) => self.inner.handle_command(now, c),
            AddonCommand::SetPosition(p, v) => {
                self.position = Some((p, v));
                if let Some(App::Client(c)) = self.app.as_mut() {
                    c.set_position(now, p, v);
                }
            }
            AddonCommand::Chat(text) => {
                let text = ZString::from_ascii_lossy(&text);
                match self.app.as_mut() {
                    Some(App::Client(c)) => {
                        if let Err(e) = c.send_chat(now, text) {
                            let error = e.to_string();
                            self.events.push_back(AddonEvent::Session(Dp8Event::CommandFailed {
                                command: "chat",
                                error,
                            }));
                        }
                    }
                    Some(App::Host(h)) => h.send_chat(now, text),
                    None => self.events.push_back(AddonEvent::Session(Dp8Event::CommandFailed {
                        command: "chat",
                        error: "not in a session yet".into(),
                    })),
                }
            }
        }
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.retry_at.is_some_and(|t| t <= now) {
            self.retry_unrouted(now);
        }
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now);
        }
        if let Some(app) = self.app.as_mut()
            && app.endpoint_ref().poll_timeout().is_some_and(|t| t <= now)
        {
            app.endpoint().handle_timeout(now);
        }
        self.pump(now);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        self.inner.poll_transmit(now, buf)
    }

    fn poll_event(&mut self) -> Option<AddonEvent> {
        self.events.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let app = self.app.as_ref().and_then(|a| a.endpoint_ref().poll_timeout());
        self.inner.poll_timeout().into_iter().chain(app).chain(self.retry_at).min()
    }

    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}
