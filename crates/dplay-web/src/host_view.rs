//! [`Observed`]: a hosted session driven by the runtime, seen by the dashboard. It wraps a
//! [`Hosted`] protocol (DirectPlay 8: [`dplay_runtime::Dp8Protocol`]; DirectPlay 4:
//! [`dplay_runtime::Dp4Protocol`]; the Flight Simulator add-on over DirectPlay 8:
//! [`dplay_runtime::AddonProtocol`]; FS98's over DirectPlay 4:
//! [`dplay_runtime::AddonDp4Protocol`]) on the protocol thread, publishes [`Snapshot`]s and
//! [`WebEvent`]s from there and carries out queued [`AdminCommand`]s, without ever waiting for
//! the web server.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_addon::TrafficSnapshot;
use dplay_runtime::{Path, Protocol, SocketId, StreamClosed, StreamId, StreamStatus, Transmit};

use crate::counters::Tally;
use crate::link::{AdminCommand, LoopSide};
use crate::snapshot::{CHAT_CHARS, NAME_CHARS, Snapshot, WebEvent};
use crate::traffic::{Traffic, Trails};

/// How often the loop looks at the admin queue and refreshes the statistics it publishes.
pub const PUBLISH_INTERVAL: Duration = Duration::from_millis(250);

/// The statistics' refresh for a session of `players`: [`PUBLISH_INTERVAL`], stretched by
/// 1 ms per player past 250, so that building snapshots (O(players) on the protocol thread)
/// stays under about a thousandth of the loop's time however large the session (a second
/// for 1,000 players; joins and leaves still publish at once).
fn publish_interval(players: usize) -> Duration {
    let stretched = Duration::from_millis(u64::try_from(players).unwrap_or(u64::MAX));
    PUBLISH_INTERVAL.max(stretched)
}

/// A hosted session the dashboard can show and administer: one implementation per protocol,
/// the rest ([`Observed`]) shared.
pub trait Hosted: Protocol {
    /// The session and its players now, and the session's own counters (refusals, what it
    /// holds). [`Observed`] fills in `uptime_s`, `host_migrations`, each player's
    /// `joined_at_s`, and its tally of joins, leaves, datagrams and bytes.
    fn snapshot(&self) -> Snapshot;
    /// A snapshot like `last` (this protocol's previous [`Hosted::snapshot`], completed by
    /// [`Observed`]) with its numbers read again, sharing who the players are with `last`
    /// instead of rebuilding their strings: what the protocol thread does at most publishes
    /// of a large session. `None` (the default) when the players may have changed since, or
    /// the protocol has no cheaper way: then [`Observed`] takes a whole new snapshot.
    fn refresh(&self, _last: &Snapshot) -> Option<Snapshot> {
        None
    }
    /// What an event of the session means to the dashboard, if anything.
    fn seen(&self, event: &Self::Event) -> Option<Seen>;
    /// The Flight Simulator add-on's aircraft at `now`; `None` (the default) for a session
    /// without the add-on.
    fn traffic(&self, _now: Instant) -> Option<TrafficSnapshot> {
        None
    }
    /// The voice server at `now` (`dplay host --voice`); `None` (the default) for a host
    /// without one.
    fn voice(&self, _now: Instant) -> Option<crate::voice_view::VoiceView> {
        None
    }
    /// Carries out an admin command on the protocol thread; returns a line for the operator.
    fn admin(&mut self, now: Instant, command: AdminCommand) -> String;
    /// Called before each publish, on the protocol thread: a DirectPlay 4 host PINGs its
    /// instances for their round trips. Nothing by default.
    fn probe(&mut self, _now: Instant) {}
}

/// An event of the session, as the dashboard reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A player entered the session; `name` `None`: note its time, report nothing (a
    /// DirectPlay 4 system player).
    Join {
        /// Its ID.
        id: u32,
        /// Its name.
        name: Option<String>,
        /// One of ours (not counted as a join in `/metrics`).
        local: bool,
    },
    /// A player left, for this reason.
    Leave {
        /// Its ID.
        id: u32,
        /// Why, as the protocol names it (one of a few: counted by reason in `/metrics`).
        reason: &'static str,
    },
    /// A chat line from a player.
    Chat {
        /// The sender's ID.
        id: u32,
        /// The text.
        text: String,
    },
    /// A join was refused.
    Refused {
        /// Where the joiner came from.
        address: SocketAddr,
        /// The name it asked for, when known.
        name: Option<String>,
        /// The code it was sent, by name (a few: counted by code in `/metrics`).
        code: String,
    },
    /// The session has a new host.
    Migrated,
}

/// A [`Hosted`] protocol that reports to the dashboard through a [`LoopSide`].
#[derive(Debug)]
pub struct Observed<P> {
    inner: P,
    link: LoopSide,
    start: Instant,
    /// When each player entered the session (bounded by the session: removed on leave).
    joined: HashMap<u32, Instant>,
    /// Names of the players in the session, for the leave and chat events.
    names: HashMap<u32, String>,
    /// Host migrations seen.
    migrations: u32,
    /// The time of the last protocol call.
    last_call: Instant,
    /// The next publish; `None`: publish at the next call.
    next_publish: Option<Instant>,
    /// Datagrams, bytes, joins and leaves for `/metrics`.
    tally: Tally,
    /// The add-on's aircraft trails (empty without the add-on).
    trails: Trails,
    /// The last whole snapshot, whose players the next ones share ([`Hosted::refresh`]);
    /// `None` after a join, leave or migration: the next is a whole one.
    last: Option<Snapshot>,
}

impl<P: Hosted> Observed<P> {
    /// Observes `inner`; `start` is the session's start, for uptime and join times.
    pub fn new(inner: P, link: LoopSide, start: Instant) -> Self {
        Self {
            inner,
            link,
            start,
            joined: HashMap::new(),
            names: HashMap::new(),
            migrations: 0,
            last_call: start,
            next_publish: None,
            tally: Tally::default(),
            trails: Trails::default(),
            last: None,
        }
    }

    /// The protocol observed.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    fn secs(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.start).as_secs()
    }

    /// Runs queued admin commands and publishes when due: after every protocol call.
    fn tick(&mut self, now: Instant) {
        self.last_call = now;
        while let Some(command) = self.link.admin() {
            let text = self.inner.admin(now, command);
            self.link.event(WebEvent::Admin { text, at_s: self.secs(now) });
            // Published at once; what the command changes in the players (a kick, a ban)
            // comes back as leaves, which drop `last`.
            self.next_publish = None;
        }
        if self.next_publish.is_none_or(|t| now >= t) {
            self.inner.probe(now);
            let mut snapshot = self.snapshot(now);
            if let Some(traffic) = self.inner.traffic(now) {
                self.trails.sample(&traffic, now);
                snapshot.traffic = Some(Traffic::new(&traffic, &self.trails));
                snapshot.session.addon = true;
            }
            snapshot.voice = self.inner.voice(now);
            snapshot.session.voice = snapshot.voice.is_some();
            let published = self.link.publish(snapshot);
            // A busy cell (the server cloning its pointer) is tried again at the next call.
            self.next_publish = published.then_some(now + publish_interval(self.joined.len()));
        }
    }

    fn snapshot(&mut self, now: Instant) -> Snapshot {
        let refreshed = self.last.as_ref().and_then(|last| self.inner.refresh(last));
        let mut s = match refreshed {
            Some(s) => s,
            None => {
                let mut s = self.inner.snapshot();
                let (start, joined) = (self.start, &self.joined);
                for p in s.players.rows_mut() {
                    p.joined_at_s =
                        joined.get(&p.id).map_or(0, |t| t.saturating_duration_since(start).as_secs());
                }
                self.last = Some(s.clone());
                s
            }
        };
        s.session.uptime_s = self.secs(now);
        s.session.host_migrations = self.migrations;
        self.tally.fill(&mut s.counters);
        s
    }

    /// Turns a join, leave, refusal or chat line into a [`WebEvent`]; publishes a changed session at
    /// once.
    fn observe(&mut self, event: &P::Event, now: Instant) {
        let Some(seen) = self.inner.seen(event) else { return };
        let at_s = self.secs(now);
        let web = match seen {
            Seen::Join { id, name, local } => {
                if !local {
                    self.tally.join();
                }
                self.joined.insert(id, now);
                self.next_publish = None;
                self.last = None;
                let Some(name) = name else { return };
                self.names.insert(id, name.clone());
                WebEvent::Join { dpnid: dpnid(id), name, at_s }
            }
            Seen::Leave { id, reason } => {
                self.tally.leave(reason);
                self.joined.remove(&id);
                let name = self.names.remove(&id);
                self.next_publish = None;
                self.last = None;
                let Some(name) = name else { return };
                WebEvent::Leave { dpnid: dpnid(id), name, reason: reason.to_owned(), at_s }
            }
            Seen::Chat { id, text } => WebEvent::Chat {
                dpnid: dpnid(id),
                name: self.names.get(&id).cloned().unwrap_or_default(),
                text: text.chars().take(CHAT_CHARS).collect(),
                at_s,
            },
            Seen::Refused { address, name, code } => {
                self.tally.refused(&code);
                WebEvent::Refused {
                    address: address.to_string(),
                    name: name.map(|n| n.chars().take(NAME_CHARS).collect()),
                    code,
                    at_s,
                }
            }
            Seen::Migrated => {
                self.migrations = self.migrations.saturating_add(1);
                self.next_publish = None;
                self.last = None;
                return;
            }
        };
        self.link.event(web);
        self.next_publish = None;
    }
}

/// An ID as the dashboard shows it.
pub(crate) fn dpnid(id: u32) -> String {
    format!("0x{id:08X}")
}

impl<P: Hosted> Protocol for Observed<P> {
    type Command = P::Command;
    type Event = P::Event;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.tally.received(data.len());
        self.inner.handle_datagram(now, from, data);
        self.tick(now);
    }

    fn handle_udp(&mut self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) {
        self.tally.received(data.len());
        self.inner.handle_udp(now, socket, from, data);
        self.tick(now);
    }

    fn handle_stream(
        &mut self,
        now: Instant,
        stream: StreamId,
        peer: SocketAddr,
        data: &[u8],
    ) -> Result<StreamStatus, String> {
        let status = self.inner.handle_stream(now, stream, peer, data);
        self.tick(now);
        status
    }

    fn handle_stream_accepted(
        &mut self,
        now: Instant,
        stream: StreamId,
        listener: SocketId,
        peer: SocketAddr,
    ) {
        self.inner.handle_stream_accepted(now, stream, listener, peer);
    }

    fn handle_stream_closed(&mut self, now: Instant, stream: StreamId, closed: &StreamClosed) {
        self.inner.handle_stream_closed(now, stream, closed);
        self.tick(now);
    }

    fn handle_command(&mut self, now: Instant, command: P::Command) {
        self.inner.handle_command(now, command);
        self.tick(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now);
        }
        self.tick(now);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let to = self.inner.poll_transmit(now, buf)?;
        self.tally.sent(buf.len());
        Some(to)
    }

    /// What the runtime calls: datagrams are counted, TCP writes (DirectPlay 4) are not.
    fn poll_send(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let t = self.inner.poll_send(now, buf)?;
        if matches!(t.path, Path::Udp(_)) {
            self.tally.sent(buf.len());
        }
        Some(t)
    }

    fn poll_event(&mut self) -> Option<P::Event> {
        let event = self.inner.poll_event()?;
        // Events come out of the call just made: stamped with that call's time.
        self.observe(&event, self.last_call);
        Some(event)
    }

    /// The inner deadline, or the next look at the admin queue, whichever is first.
    fn poll_timeout(&self) -> Option<Instant> {
        let tick = self.next_publish.unwrap_or(self.start);
        Some(self.inner.poll_timeout().map_or(tick, |t| t.min(tick)))
    }

    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    fn poll_open(&mut self) -> Option<SocketId> {
        self.inner.poll_open()
    }

    fn poll_abandon(&mut self) -> Option<SocketAddr> {
        self.inner.poll_abandon()
    }

    fn handle_opened(&mut self, now: Instant, id: SocketId, result: Result<SocketAddr, String>) {
        self.inner.handle_opened(now, id, result);
    }

    fn memory_budget(&self) -> Option<dplay_wire::budget::MemoryBudget> {
        self.inner.memory_budget()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_sessions_are_published_less_often() {
        assert_eq!(publish_interval(0), PUBLISH_INTERVAL);
        assert_eq!(publish_interval(250), PUBLISH_INTERVAL);
        assert_eq!(publish_interval(1000), Duration::from_secs(1));
    }
}
