//! The dashboard's view of a DirectPlay 8 host ([`Hosted`] for [`Dp8Protocol`]), and the two
//! pieces any DirectPlay 8 host reuses, the add-on host of `dplay fs host` included:
//! [`dp8_snapshot`] and [`dp8_commands`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Protocol};
use dplay_session::{Event, Mode, Session};
use dplay_wire::WideString;
use dplay_wire::dp8::dpnid::Dpnid;

use crate::host_view::{Hosted, Seen, dpnid};
use crate::link::AdminCommand;
use crate::players::{LinkNumbers, Players};
use crate::snapshot::{PlayerView, SessionView, Snapshot};
use crate::voice_view::VoiceView;

/// The session and its players as the dashboard shows them (times left for [`crate::Observed`]).
pub fn dp8_snapshot(session: &Session) -> Snapshot {
    let (local, host) = (session.local_dpnid(), session.host_dpnid());
    // One pass over the connections, not one per player: the name table may be large.
    let connections: HashMap<Dpnid, SocketAddr> = session.player_addresses().into_iter().collect();
    let mut addresses = Vec::with_capacity(session.name_table().len());
    let rows: Vec<PlayerView> = session
        .name_table()
        .players()
        .map(|e| {
            let address = connections.get(&e.dpnid).copied();
            addresses.push(address);
            let n = numbers(session, address);
            PlayerView {
                dpnid: dpnid(e.dpnid.0),
                id: e.dpnid.0,
                name: e.name.as_ref().map(WideString::to_string_lossy).unwrap_or_default(),
                address: address.map(|a| a.to_string()),
                joined_at_s: 0,
                state: if e.dpnid == local {
                    "local"
                } else if e.dpnid == host {
                    "host"
                } else {
                    "connected"
                },
                rtt_ms: n.rtt_ms,
                bytes_sent: n.bytes_sent,
                bytes_received: n.bytes_received,
                retransmissions: n.retransmissions,
            }
        })
        .collect();
    let players = Players::with_addresses(rows, addresses, roster_key(session));
    Snapshot {
        session: session_view(session, players.len()),
        players,
        traffic: None,
        relay: None,
        voice: None,
        counters: crate::counters::session_counters(session),
    }
}

/// A snapshot like `last` (the previous [`dp8_snapshot`] of `session`) with its numbers read
/// again: the round trips and counters of the players' connections, the session's counters.
/// Who the players are is shared with `last`, not rebuilt: O(players) lookups, no strings.
/// `None` when the players may have changed since (the name table's version, the number of
/// connections): then only a new [`dp8_snapshot`] will do.
pub fn dp8_refresh(session: &Session, last: &Snapshot) -> Option<Snapshot> {
    if last.players.key() != roster_key(session) || last.players.addresses().len() != last.players.len() {
        return None;
    }
    let links = last.players.addresses().iter().map(|a| numbers(session, *a)).collect();
    let players = last.players.refreshed(links);
    Some(Snapshot {
        session: session_view(session, players.len()),
        players,
        traffic: None,
        relay: None,
        voice: None,
        counters: crate::counters::session_counters(session),
    })
}

/// What changes when the players listed may have: a player added or removed, a name or a
/// host changed (each a new name-table version, MC-DPL8CS 2.2.1.1), a connection opened or
/// closed. The version in the high half, the connection count in the low one.
fn roster_key(session: &Session) -> u64 {
    let connections = u64::try_from(session.endpoint().connection_count()).unwrap_or(u64::MAX);
    u64::from(session.name_table().version()) << 32 ^ connections
}

/// The numbers of the connection at `address`, if any.
fn numbers(session: &Session, address: Option<SocketAddr>) -> LinkNumbers {
    let stats = address.and_then(|a| session.endpoint().stats(a));
    LinkNumbers {
        rtt_ms: stats.and_then(|s| s.rtt).map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        bytes_sent: stats.map(|s| s.bytes_sent),
        bytes_received: stats.map(|s| s.bytes_received),
        retransmissions: stats.map(|s| s.retransmissions),
    }
}

/// The session as `/api/session` shows it (times and migrations left for [`crate::Observed`]).
fn session_view(session: &Session, players: usize) -> SessionView {
    let config = session.config();
    SessionView {
        name: config.session_name.clone(),
        protocol: "DirectPlay 8",
        guid: session.name_table().instance().to_string(),
        mode: match config.mode {
            Mode::PeerToPeer => "peer-to-peer",
            Mode::ClientServer => "client-server",
        },
        uptime_s: 0,
        players,
        max_players: config.max_players,
        host_migrations: 0,
        hosting: session.is_joined(),
        addon: false,
        voice: false,
    }
}

/// The session commands that carry out `command` on a DirectPlay 8 host, and a line for the
/// operator. New bans also remove the players they ban (by name, or by the address of their
/// connection). `Dp8Command::Chat` is the DXDiag chat message; an add-on host sends its
/// CHAT_TEXT instead (`AddonCommand::Chat`).
pub fn dp8_commands(command: AdminCommand, session: &Session) -> (Vec<Dp8Command>, String) {
    match command {
        // A player gone by the time the kick is carried out (issue 25 item 13) is said so.
        AdminCommand::Kick(id) if session.name_table().get(Dpnid(id)).is_none() => {
            (Vec::new(), format!("kick of {}: no such player (already gone)", dpnid(id)))
        }
        AdminCommand::Kick(id) => {
            let name = player_name(session, Dpnid(id));
            (vec![Dp8Command::RemovePlayer(Dpnid(id))], format!("kicked {name} ({})", dpnid(id)))
        }
        AdminCommand::SetBans(bans) => {
            let addresses: HashMap<Dpnid, SocketAddr> = session.player_addresses().into_iter().collect();
            let local = session.local_dpnid();
            let banned: Vec<Dpnid> = session
                .name_table()
                .players()
                .filter(|e| e.dpnid != local)
                .filter(|e| {
                    let name = e.name.as_ref().map(WideString::to_string_lossy);
                    let ip = addresses.get(&e.dpnid).map(SocketAddr::ip);
                    name.is_some_and(|n| bans.is_name_banned(&n))
                        || ip.is_some_and(|ip| bans.is_address_banned(ip))
                })
                .map(|e| e.dpnid)
                .collect();
            let text = format!("ban list applied; {} player(s) in the session removed", banned.len());
            let mut commands = vec![Dp8Command::SetBans(bans)];
            commands.extend(banned.into_iter().map(Dp8Command::RemovePlayer));
            (commands, text)
        }
        AdminCommand::Chat(text) => (vec![Dp8Command::Chat(text)], "chat line sent to everyone".into()),
        AdminCommand::MaxPlayers(n) => (
            vec![Dp8Command::SetMaxPlayers(n)],
            format!(
                "max players {n} for the joins from now on (members are not told: MC-DPL8CS has no update)"
            ),
        ),
        AdminCommand::Password(p) => (
            vec![Dp8Command::SetPassword(p)],
            "password changed for the joins from now on (members are not told: MC-DPL8CS has no update)"
                .into(),
        ),
    }
}

fn player_name(session: &Session, id: Dpnid) -> String {
    let entry = session.name_table().get(id);
    entry.and_then(|e| e.name.as_ref()).map(WideString::to_string_lossy).unwrap_or_default()
}

/// What a DirectPlay 8 session event means to the dashboard; `local` is our own DPNID.
pub fn dp8_seen(event: &Event, local: Dpnid) -> Option<Seen> {
    Some(match event {
        Event::PlayerAdded { dpnid, name } => {
            Seen::Join { id: dpnid.0, name: Some(name.clone()), local: *dpnid == local }
        }
        Event::PlayerRemoved { dpnid, reason } => {
            Seen::Leave { id: dpnid.0, reason: reason.name().unwrap_or("unknown reason") }
        }
        Event::Chat { from, text } => Seen::Chat { id: from.0, text: text.clone() },
        Event::HostMigrated { .. } => Seen::Migrated,
        Event::JoinRefused { from, name, code } => {
            Seen::Refused { address: *from, name: name.clone(), code: code.to_string() }
        }
        _ => return None,
    })
}

/// The voice server's drops (`speech_*`, `voice_*`) beside the session's, for the dashboard's
/// refusals and `/metrics` (docs/json-events.md, "DirectPlay Voice").
pub(crate) fn with_voice(server: Option<&dplay_voice::VoiceServer>, mut s: Snapshot) -> Snapshot {
    if let Some(v) = server {
        s.counters.refusals.extend(v.stats().drops());
    }
    s
}

impl Hosted for Dp8Protocol {
    fn snapshot(&self) -> Snapshot {
        with_voice(self.voice_server(), dp8_snapshot(self.session()))
    }

    fn refresh(&self, last: &Snapshot) -> Option<Snapshot> {
        dp8_refresh(self.session(), last).map(|s| with_voice(self.voice_server(), s))
    }

    fn seen(&self, event: &Dp8Event) -> Option<Seen> {
        match event {
            Dp8Event::Session(e) => dp8_seen(e, self.session().local_dpnid()),
            _ => None,
        }
    }

    fn voice(&self, now: Instant) -> Option<VoiceView> {
        self.voice_server().map(|v| VoiceView::of(v, now))
    }

    fn admin(&mut self, now: Instant, command: AdminCommand) -> String {
        let (commands, text) = dp8_commands(command, self.session());
        for c in commands {
            self.handle_command(now, c);
        }
        text
    }
}
