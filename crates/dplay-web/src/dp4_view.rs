//! The dashboard's view of a DirectPlay 4 host ([`Hosted`] for [`Dp4Protocol`]): the Player
//! List (MC-DPL4CS 3.1.1), kicks with DELETEPLAYER, bans, chat with DPSP_MSG_CHAT and the
//! session description changed live with SESSIONDESCCHANGED (MC-DPL4CS 2.2.25, 2.2.19, 2.2.51);
//! and the pieces the FS98 add-on host reuses ([`dp4_snapshot`], [`dp4_seen`],
//! [`dp4_commands`]).

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Instant;

use dplay_runtime::{Dp4Command, Dp4Event, Dp4Protocol, PeerBytes, Protocol};
use dplay_session::dp4::table::Player;
use dplay_session::dp4::{Dp4Event as SessionEvent, Dp4Session};
use dplay_wire::WideString;
use dplay_wire::dp4::session::SessionFlags;

use crate::host_view::{Hosted, Seen, dpnid};
use crate::link::AdminCommand;
use crate::snapshot::{PlayerView, SessionView, Snapshot};

/// The players the dashboard lists: every application player, and the system player of each
/// instance that has none (so every instance can be seen and kicked).
fn listed(players: &dplay_session::dp4::table::PlayerList) -> impl Iterator<Item = &Player> {
    let with_players: BTreeSet<u32> =
        players.values().filter(|p| !p.is_system()).map(|p| p.system_player_id).collect();
    players.values().filter(move |p| !p.is_system() || !with_players.contains(&p.id))
}

fn name(p: &Player) -> Option<String> {
    p.short_name.as_ref().map(WideString::to_string_lossy)
}

/// The TCP listener of `p`'s instance, for a remote player.
fn instance_addr(
    players: &dplay_session::dp4::table::PlayerList,
    p: &Player,
) -> Option<std::net::SocketAddr> {
    let system = players.get(&p.system_player_id)?;
    system.addrs.filter(|_| !system.local).map(|(stream, _)| stream)
}

/// One row of the Player List. Round trips and bytes are those of the player's (remote)
/// instance: from PINGREPLY, and counted by the runtime.
fn player_view(s: &Dp4Session, bytes: &PeerBytes, host: Option<u32>, p: &Player) -> PlayerView {
    let system = s.players().get(&p.system_player_id).filter(|system| !system.local);
    let counts = system.and_then(|system| system.addrs).and_then(|a| bytes.instance(a));
    PlayerView {
        dpnid: dpnid(p.id),
        id: p.id,
        name: name(p).unwrap_or_default(),
        address: instance_addr(s.players(), p).map(|a| a.to_string()),
        joined_at_s: 0,
        state: if p.local {
            "local"
        } else if Some(p.system_player_id) == host {
            "host"
        } else if p.is_system() {
            "system"
        } else {
            "connected"
        },
        rtt_ms: system
            .and_then(|system| system.round_trip)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        bytes_sent: counts.map(|c| c.sent),
        bytes_received: counts.map(|c| c.received),
        retransmissions: None,
    }
}

/// The session and its players as the dashboard shows them (times left for [`crate::Observed`]).
pub(crate) fn dp4_snapshot(s: &Dp4Session, bytes: &PeerBytes) -> Snapshot {
    let host = s.host_player();
    let players: Vec<PlayerView> = listed(s.players()).map(|p| player_view(s, bytes, host, p)).collect();
    let desc = s.session_desc();
    let session = SessionView {
        name: s.session_name().unwrap_or_default(),
        protocol: "DirectPlay 4",
        guid: desc.map(|d| d.instance_guid.to_string()).unwrap_or_default(),
        mode: if desc.is_some_and(|d| d.flags.contains(SessionFlags::CLIENT_SERVER)) {
            "client-server"
        } else {
            "peer-to-peer"
        },
        uptime_s: 0,
        players: players.len(),
        max_players: desc.map_or(0, |d| d.max_players),
        host_migrations: 0,
        hosting: s.role() == dplay_session::dp4::Role::Host,
        addon: false,
        voice: false,
    };
    Snapshot {
        session,
        players: players.into(),
        traffic: None,
        relay: None,
        voice: None,
        counters: crate::Counters::default(),
    }
}

/// What a DirectPlay 4 session event means to the dashboard.
pub(crate) fn dp4_seen(e: &SessionEvent, s: &Dp4Session) -> Option<Seen> {
    Some(match e {
        SessionEvent::PlayerJoined { id, name, system } => Seen::Join {
            id: *id,
            name: if *system { None } else { Some(name.clone().unwrap_or_default()) },
            local: false,
        },
        SessionEvent::PlayerCreated { id } => {
            Seen::Join { id: *id, name: s.players().get(id).and_then(name), local: true }
        }
        SessionEvent::PlayerLeft { id } => Seen::Leave { id: *id, reason: "DELETEPLAYER" },
        SessionEvent::Chat { from, text, .. } => {
            Seen::Chat { id: *from, text: text.clone().unwrap_or_default() }
        }
        SessionEvent::HostMigrated { .. } => Seen::Migrated,
        SessionEvent::JoinRefused { from, name, code } => Seen::Refused {
            address: *from,
            name: name.clone(),
            code: dplay_wire::dp4::DpResult(*code).to_string(),
        },
        _ => return None,
    })
}

/// The session commands that carry out `command` on a DirectPlay 4 host, and a line for the
/// operator. New bans also remove the instances they ban (by a player's name, or by the
/// address of its instance). `Dp4Command::Chat` is DPSP_MSG_CHAT; the FS98 add-on host sends
/// its CHAT_TEXT_SEND instead.
pub(crate) fn dp4_commands(command: AdminCommand, s: &Dp4Session) -> (Vec<Dp4Command>, String) {
    match command {
        // A player gone by the time the kick is carried out (issue 25 item 13) is said so.
        AdminCommand::Kick(id) if !s.players().contains_key(&id) => {
            (Vec::new(), format!("kick of {}: no such player (already gone)", dpnid(id)))
        }
        AdminCommand::Kick(id) => {
            let who = s.players().get(&id).and_then(name).unwrap_or_default();
            (vec![Dp4Command::RemoveInstance(id)], format!("kicked {who} ({})", dpnid(id)))
        }
        AdminCommand::SetBans(bans) => {
            let mut systems: BTreeSet<u32> = BTreeSet::new();
            for p in s.players().values().filter(|p| !p.local) {
                let ip: Option<IpAddr> = instance_addr(s.players(), p).map(|a| a.ip());
                let by_name = name(p).is_some_and(|n| bans.is_name_banned(&n));
                if by_name || ip.is_some_and(|ip| bans.is_address_banned(ip)) {
                    systems.insert(p.system_player_id);
                }
            }
            let text = format!("ban list applied; {} instance(s) in the session removed", systems.len());
            let mut commands = vec![Dp4Command::SetBans(bans)];
            commands.extend(systems.into_iter().map(Dp4Command::RemoveInstance));
            (commands, text)
        }
        AdminCommand::Chat(text) => (vec![Dp4Command::Chat(text)], "chat line sent to everyone".into()),
        AdminCommand::MaxPlayers(max_players) => {
            let flags = s.session_desc().map_or(SessionFlags::empty(), |d| d.flags);
            (
                vec![Dp4Command::SetSession { max_players, flags }],
                format!("max players {max_players}, told to every instance (SESSIONDESCCHANGED)"),
            )
        }
        AdminCommand::Password(p) => (
            vec![Dp4Command::SetPassword(p)],
            "password changed, told to every instance (SESSIONDESCCHANGED)".into(),
        ),
    }
}

impl Hosted for Dp4Protocol {
    fn snapshot(&self) -> Snapshot {
        crate::dp8_view::with_voice(self.voice_server(), dp4_snapshot(self.session(), self.peer_bytes()))
    }

    fn voice(&self, now: Instant) -> Option<crate::voice_view::VoiceView> {
        self.voice_server().map(|v| crate::voice_view::VoiceView::of(v, now))
    }

    fn seen(&self, event: &Dp4Event) -> Option<Seen> {
        let Dp4Event::Session(e) = event else { return None };
        dp4_seen(e, self.session())
    }

    fn probe(&mut self, now: Instant) {
        self.probe_round_trips(now);
    }

    fn admin(&mut self, now: Instant, command: AdminCommand) -> String {
        let (commands, text) = dp4_commands(command, self.session());
        for c in commands {
            self.handle_command(now, c);
        }
        text
    }
}
