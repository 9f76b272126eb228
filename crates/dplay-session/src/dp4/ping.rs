//! PING and PINGREPLY, the Ping timer and how a vanished instance is noticed (MC-DPL4CS
//! 2.2.42, 2.2.43, 3.1.2.5, 3.1.5.30, 3.1.5.31, 3.1.6.2, 3.2.2.2, 3.2.5.10, 3.2.5.11, 3.2.6.2;
//! issue 27 item 10; docs/decisions.md, "A silent peer").

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_wire::dp4::message::Dp4Body;
use dplay_wire::dp4::routing::Ping;
use dplay_wire::dp4::session::SessionFlags;

use crate::dp4::event::{DropReason, Timer, Via};
use crate::dp4::session::{Dp4Session, Role};
use crate::dp4::table::Player;

/// How often [`Dp4Session::probe_round_trips`] PINGs each instance.
pub const ROUND_TRIP_PROBE: Duration = Duration::from_secs(5);

/// A PINGREPLY whose echoed TickCount is older than this is no round trip of ours (the Ping
/// timer gives up on a silent peer that answers PINGs within two 35 s periods, MC-DPL4CS
/// 3.1.2.5).
const MAX_ROUND_TRIP_MS: u32 = 60_000;

/// An instance is PINGed for a closed connection at most this often
/// ([`Dp4Session::check_instance`]).
const CHECK_INTERVAL: Duration = Duration::from_secs(1);

impl Dp4Session {
    /// DPSP_MSG_PING: answer a known player, bump its ChatterCount; a host answers an unknown
    /// one with YOUAREDEAD (MC-DPL4CS 3.1.5.30, 3.2.5.10).
    pub(crate) fn on_ping(&mut self, now: Instant, from: SocketAddr, reply_to: SocketAddr, m: Ping) {
        let known = self.players.get_mut(&m.id_from).filter(|p| !p.local);
        match (known, self.me) {
            (Some(p), Some(me)) => {
                p.chatter += 1;
                let to = p.addrs.map_or(from, |(_, d)| d);
                self.send_datagram_body(
                    now,
                    to,
                    Dp4Body::PingReply(Ping { id_from: me, tick_count: m.tick_count }),
                );
            }
            _ if self.role == Role::Host => self.send_you_are_dead(now, reply_to),
            _ => self.drop_msg(DropReason::UnknownPlayer, "PING from an unknown player"),
        }
    }

    /// DPSP_MSG_PINGREPLY (MC-DPL4CS 3.1.5.31, 3.2.5.11); its echoed TickCount gives the
    /// round trip of our PING (2.2.43). IDFrom is read both ways (issue 27 item 13): 2.2.43
    /// says it is "the player who sent the ping", one of ours, and the replier is then found by
    /// the address it came from; Wine writes the replier's own system player. Neither reading is
    /// answered with YOUAREDEAD; only an ID that is neither ours nor known is (3.2.5.11).
    pub(crate) fn on_ping_reply(&mut self, now: Instant, from: SocketAddr, reply_to: SocketAddr, m: Ping) {
        let elapsed = self.tick(now).wrapping_sub(m.tick_count);
        let ours = self.players.get(&m.id_from).is_some_and(|p| p.local);
        let replier = if ours {
            self.players
                .values()
                .find(|p| {
                    p.is_system() && !p.local && p.addrs.is_some_and(|(s, d)| d == from || s == reply_to)
                })
                .map(|p| p.id)
        } else {
            Some(m.id_from)
        };
        match replier.and_then(|id| self.players.get_mut(&id)).filter(|p| !p.local) {
            Some(p) => {
                p.chatter += 1;
                p.missed_pings = 0;
                // A TickCount of no PING of ours (forged, or echoed very late) is not a round trip.
                if p.is_system() && elapsed <= MAX_ROUND_TRIP_MS {
                    p.round_trip = Some(Duration::from_millis(u64::from(elapsed)));
                }
                // Its instance answers PINGs: from now on silence through a period's PINGs
                // means it is gone (`on_ping_timer`).
                let system = p.system_player_id;
                if let Some(s) = self.players.get_mut(&system) {
                    s.answers_pings = true;
                }
            }
            None if self.role == Role::Host && !ours => self.send_you_are_dead(now, reply_to),
            None => self.drop_msg(DropReason::UnknownPlayer, "PINGREPLY from an unknown player"),
        }
    }

    /// Host or member: PING every other instance not probed within [`ROUND_TRIP_PROBE`], for
    /// its round trip ([`Player::round_trip`]), whether or not it is silent. Any instance must
    /// answer a PING with PINGREPLY (MC-DPL4CS 3.1.5.30); these do not count towards the
    /// Ping timer's give-up. For a dashboard: call it as often as you like.
    pub fn probe_round_trips(&mut self, now: Instant) {
        let Some(me) = self.me.filter(|_| self.joined()) else { return };
        let due =
            |p: &Player| p.probed_at.is_none_or(|t| now.saturating_duration_since(t) >= ROUND_TRIP_PROBE);
        let targets: Vec<(u32, SocketAddr)> = self
            .players
            .values()
            .filter(|p| p.is_system() && !p.local && due(p) && self.reaches(p))
            .filter_map(|p| p.addrs.map(|(_, d)| (p.id, d)))
            .collect();
        let tick = self.tick(now);
        for (id, to) in targets {
            if let Some(p) = self.players.get_mut(&id) {
                p.probed_at = Some(now);
            }
            self.send_datagram_body(now, to, Dp4Body::Ping(Ping { id_from: me, tick_count: tick }));
        }
    }

    /// The Ping timer (MC-DPL4CS 3.1.2.5, 3.2.2.2; 35 s), which runs in every joined session:
    /// each target (the host's: every other instance; a member's: the host, or every instance
    /// while it waits for IAMNAMESERVER) gets a PING over TCP, to its listener (in a session
    /// with MC-DPL4R, on the link, whose give-up drops a dead peer).
    ///
    /// A target is gone, and is removed with all its players (the host tells the others; a
    /// member that loses the host migrates or ends the session), when:
    /// - its process vanished: the PING's connect is refused, the runtime says so
    ///   ([`Dp4Session::handle_unreachable`]), within one period, KEEPALIVE or not;
    /// - it has answered a PING of ours before and nothing came from it since the last tick
    ///   although it was sent `ping_give_up` PINGs, the tick's and the follow-ups spread over
    ///   the period ([`Dp4Session::on_ping_retry`]): a machine that went silent (a pulled
    ///   cable closes nothing) goes within two periods of its last message, KEEPALIVE or not;
    /// - with KEEPALIVE (or while waiting for a new host), it stayed silent through
    ///   `ping_give_up` ticks (3.1.6.2, 3.2.6.2), whether or not it ever answered.
    ///
    /// A peer that never answers a PING (older Wine) is never removed for that alone: only for
    /// its connections failing, or by KEEPALIVE's rule (docs/decisions.md, "A silent peer").
    pub(crate) fn on_ping_timer(&mut self, now: Instant) {
        if !self.joined() {
            return;
        }
        let waiting = self.role == Role::Member && self.host_id.is_none();
        let give_up_on = self.keep_alive() || waiting;
        let give_up = self.config.ping_give_up;
        let mut dead = Vec::new();
        for id in self.ping_targets() {
            let Some(p) = self.players.get_mut(&id) else { continue };
            if p.chatter > 0 {
                p.missed_pings = 0;
            } else if p.answers_pings || (give_up_on && p.missed_pings >= give_up) {
                dead.push(id);
                continue;
            } else if give_up_on {
                p.missed_pings += 1;
            }
            p.chatter = 0;
            if self.uses_reliable_protocol() {
                // Short form, on the MC-DPL4R link (INDEX D.15), which gives up on a dead peer.
                self.send_datagram_ping(now, id);
            } else {
                self.send_tcp_ping(now, id);
            }
        }
        self.start_ping_timer(now);
        self.ping_tick = Some(now);
        self.ping_retries = give_up.saturating_sub(1);
        self.arm_ping_retry();
        for id in dead {
            tracing::info!(id, "DP4 peer dropped after unanswered PINGs");
            if let Some((stream, _)) = self.players.get(&id).and_then(|p| p.addrs) {
                self.abandoned.push_back(stream);
            }
            if self.role == Role::Host {
                self.drop_instance_and_tell(now, id);
            } else {
                self.remove_player(now, id);
                if self.role == Role::Member && self.host_id.is_none() {
                    self.check_migration(now);
                }
            }
        }
    }

    /// The Ping timer's targets: the host's, every other instance; a member's, the host, or
    /// every instance while it waits for IAMNAMESERVER (3.1.2.5, 3.2.2.2).
    fn ping_targets(&self) -> Vec<u32> {
        match (self.role, self.host_id) {
            (Role::Member, Some(host)) => vec![host],
            _ => self.other_instances().into_iter().map(|(id, _)| id).collect(),
        }
    }

    /// A follow-up PING, `ping_give_up` - 1 of them between two ticks: each target that has
    /// answered PINGs before and from which nothing came since the tick gets one more, by UDP
    /// (the tick's went by TCP, which a dead link holds in its send queue; a lost PINGREPLY
    /// must not cost a live peer its place). So "8 PINGs without a reply" (3.1.6.2, 3.2.6.2)
    /// take one period rather than eight for a peer known to answer.
    pub(crate) fn on_ping_retry(&mut self, now: Instant) {
        if !self.joined() {
            return;
        }
        let silent: Vec<u32> = self
            .ping_targets()
            .into_iter()
            .filter(|id| self.players.get(id).is_some_and(|p| p.answers_pings && p.chatter == 0))
            .collect();
        for id in silent {
            self.send_datagram_ping(now, id);
        }
        self.ping_retries = self.ping_retries.saturating_sub(1);
        self.arm_ping_retry();
    }

    /// Sets the follow-up timer while follow-ups are left: the k-th one `ping_give_up`-th of a
    /// period after the (k-1)-th, counted from the tick, so that late wakeups do not push the
    /// last one past the next tick.
    fn arm_ping_retry(&mut self) {
        let give_up = self.config.ping_give_up.max(1);
        let Some(tick) = self.ping_tick.filter(|_| (1..give_up).contains(&self.ping_retries)) else {
            return self.timers.cancel(Timer::PingRetry);
        };
        let spacing = self.config.ping_interval() / give_up;
        self.timers.set(Timer::PingRetry, tick + spacing * (give_up - self.ping_retries));
    }

    /// Whether the session has DPSESSION_KEEPALIVE.
    fn keep_alive(&self) -> bool {
        self.desc.is_some_and(|d| d.flags.contains(SessionFlags::KEEP_ALIVE))
    }

    /// (Re)starts the Ping timer: one period from `now`.
    pub(crate) fn start_ping_timer(&mut self, now: Instant) {
        self.timers.set(Timer::Ping, now + self.config.ping_interval());
    }

    /// A short-form PING to instance `id`'s game socket (on its MC-DPL4R link in such a
    /// session).
    fn send_datagram_ping(&mut self, now: Instant, id: u32) {
        let to = self.players.get(&id).and_then(|p| p.addrs).map(|(_, d)| d);
        let (Some(me), Some(to)) = (self.me, to) else { return };
        let body = Dp4Body::Ping(Ping { id_from: me, tick_count: self.tick(now) });
        self.send_datagram_body(now, to, body);
    }

    /// A PING over TCP to instance `id`'s listener: answered if it is there (3.1.5.30), a
    /// refused connect if its process is gone.
    fn send_tcp_ping(&mut self, now: Instant, id: u32) {
        let stream = self.players.get(&id).filter(|p| p.is_system() && !p.local).and_then(|p| p.addrs);
        let (Some(me), Some((stream, _))) = (self.me, stream) else { return };
        self.checked.insert(id, now);
        let body = Dp4Body::Ping(Ping { id_from: me, tick_count: self.tick(now) });
        self.send_body(Via::Tcp, stream, body);
    }

    /// A connection of instance `id` closed: PING it over TCP now, or, within
    /// [`CHECK_INTERVAL`] of the last check, once that has passed (the PING of the last check
    /// may have gone out on the very connection that then closed; and a peer that opens and
    /// closes connections cannot make us flood).
    pub(crate) fn check_instance(&mut self, now: Instant, id: u32) {
        if !self.joined() {
            return;
        }
        match self.checked.get(&id).map(|t| *t + CHECK_INTERVAL) {
            Some(next) if next > now => self.timers.set(Timer::Check(id), next),
            _ => {
                tracing::debug!(id, "a DP4 instance's connection closed: checking it is still there");
                self.send_tcp_ping(now, id);
            }
        }
    }
}
