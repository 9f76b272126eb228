//! [`Observed`]: a DirectPlay 8 host driven by the runtime, seen by the dashboard. It wraps a
//! [`Watched`] protocol ([`Dp8Protocol`], or the add-on's) on the protocol thread, publishes
//! [`Snapshot`]s and [`WebEvent`]s from there and carries out queued [`AdminCommand`]s, without
//! ever waiting for the web server.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Protocol};
use dplay_session::{Event, Mode};
use dplay_wire::dp8::dpnid::Dpnid;

use crate::counters::Tally;
use crate::link::{AdminCommand, LoopSide};
use crate::snapshot::{CHAT_CHARS, PlayerView, SessionView, Snapshot, WebEvent};
use crate::traffic::{Traffic, Trails};
use crate::watched::Watched;

/// How often the loop looks at the admin queue and refreshes the statistics it publishes.
pub const PUBLISH_INTERVAL: Duration = Duration::from_millis(250);

/// The statistics' refresh for a name table of `players`: [`PUBLISH_INTERVAL`], stretched by
/// 1 ms per player past 250, so that building snapshots (O(players) on the protocol thread)
/// stays under about a thousandth of the loop's time however large the session (a second
/// for 1,000 players; joins and leaves still publish at once).
fn publish_interval(players: usize) -> Duration {
    let stretched = Duration::from_millis(u64::try_from(players).unwrap_or(u64::MAX));
    PUBLISH_INTERVAL.max(stretched)
}

/// A [`Watched`] host that reports to the dashboard through a [`LoopSide`].
#[derive(Debug)]
pub struct Observed<P = Dp8Protocol> {
    inner: P,
    link: LoopSide,
    start: Instant,
    /// When each player entered the name table (bounded by the name table: removed on leave).
    joined: HashMap<Dpnid, Instant>,
    /// Names of the players in the name table, for the leave events.
    names: HashMap<Dpnid, String>,
    /// Host migrations seen.
    migrations: u32,
    /// The time of the last protocol call.
    last_call: Instant,
    /// The next publish; `None`: publish at the next call.
    next_publish: Option<Instant>,
    /// The add-on's aircraft trails (empty without the add-on).
    trails: Trails,
    /// Datagrams, bytes, joins and leaves for `/metrics`.
    tally: Tally,
}

impl<P: Watched> Observed<P> {
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
            trails: Trails::default(),
            tally: Tally::default(),
        }
    }

    fn secs(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.start).as_secs()
    }

    /// Runs queued admin commands and publishes when due: after every protocol call.
    fn tick(&mut self, now: Instant) {
        self.last_call = now;
        while let Some(command) = self.link.admin() {
            match command {
                AdminCommand::Kick(id) => {
                    self.inner.handle_command(now, P::session_command(Dp8Command::RemovePlayer(Dpnid(id))));
                }
            }
        }
        if self.next_publish.is_none_or(|t| now >= t) {
            let mut snapshot = self.snapshot(now);
            if let Some(traffic) = self.inner.traffic(now) {
                self.trails.sample(&traffic, now);
                snapshot.traffic = Some(Traffic::new(&traffic, &self.trails));
                snapshot.session.addon = true;
            }
            let published = self.link.publish(snapshot);
            // A busy cell (the server cloning its pointer) is tried again at the next call.
            self.next_publish = published.then_some(now + publish_interval(self.joined.len()));
        }
    }

    fn snapshot(&self, now: Instant) -> Snapshot {
        let session = self.inner.session();
        let players = self.inner.players();
        let config = session.config();
        let view = SessionView {
            name: config.session_name.clone(),
            guid: session.name_table().instance().to_string(),
            mode: match config.mode {
                Mode::PeerToPeer => "peer-to-peer",
                Mode::ClientServer => "client-server",
            },
            uptime_s: self.secs(now),
            players: players.len(),
            max_players: config.max_players,
            host_migrations: self.migrations,
            hosting: session.is_joined(),
            addon: false,
        };
        // One pass over the connections, not one per player: the name table may be large.
        let addresses: HashMap<Dpnid, SocketAddr> = session.player_addresses().into_iter().collect();
        let players = players
            .into_iter()
            .map(|p| {
                let address = addresses.get(&p.dpnid).copied();
                let stats = address.and_then(|a| session.endpoint().stats(a));
                PlayerView {
                    dpnid: p.dpnid.to_string(),
                    id: p.dpnid.0,
                    name: p.name,
                    address: address.map(|a: SocketAddr| a.to_string()),
                    joined_at_s: self.joined.get(&p.dpnid).map_or(0, |t| self.secs(*t)),
                    state: if p.is_local {
                        "local"
                    } else if p.is_host {
                        "host"
                    } else {
                        "connected"
                    },
                    rtt_ms: stats
                        .and_then(|s| s.rtt)
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                    bytes_sent: stats.map(|s| s.bytes_sent),
                    bytes_received: stats.map(|s| s.bytes_received),
                    retransmissions: stats.map(|s| s.retransmissions),
                }
            })
            .collect();
        Snapshot { session: view, players, traffic: None, counters: self.tally.counters(session) }
    }

    /// Turns a join, leave or chat line into a [`WebEvent`]; publishes a changed name table at
    /// once.
    fn observe(&mut self, event: &P::Event, now: Instant) {
        if let Some((from, text)) = P::chat(event) {
            let name = self.names.get(&from).cloned().unwrap_or_default();
            let text = text.chars().take(CHAT_CHARS).collect();
            self.link.event(WebEvent::Chat { dpnid: from.to_string(), name, text, at_s: self.secs(now) });
            return;
        }
        let Some(Dp8Event::Session(event)) = P::session_event(event) else { return };
        let web = match event {
            Event::PlayerAdded { dpnid, name } => {
                if *dpnid != self.inner.session().local_dpnid() {
                    self.tally.join();
                }
                self.joined.insert(*dpnid, now);
                self.names.insert(*dpnid, name.clone());
                WebEvent::Join { dpnid: dpnid.to_string(), name: name.clone(), at_s: self.secs(now) }
            }
            Event::PlayerRemoved { dpnid, reason } => {
                self.joined.remove(dpnid);
                self.tally.leave(reason.name().unwrap_or("unknown reason"));
                WebEvent::Leave {
                    dpnid: dpnid.to_string(),
                    name: self.names.remove(dpnid).unwrap_or_default(),
                    reason: reason.name().unwrap_or("unknown reason").to_owned(),
                    at_s: self.secs(now),
                }
            }
            Event::Chat { from, text } => WebEvent::Chat {
                dpnid: from.to_string(),
                name: self.names.get(from).cloned().unwrap_or_default(),
                text: text.chars().take(CHAT_CHARS).collect(),
                at_s: self.secs(now),
            },
            Event::HostMigrated { .. } => {
                self.migrations = self.migrations.saturating_add(1);
                self.next_publish = None;
                return;
            }
            _ => return,
        };
        self.link.event(web);
        self.next_publish = None;
    }
}

impl<P: Watched> Protocol for Observed<P> {
    type Command = P::Command;
    type Event = P::Event;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.tally.received(data.len());
        self.inner.handle_datagram(now, from, data);
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
