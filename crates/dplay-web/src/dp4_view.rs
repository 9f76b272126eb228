//! The dashboard's view of a DirectPlay 4 host ([`Hosted`] for [`Dp4Protocol`]): the Player
//! List (MC-DPL4CS 3.1.1), kicks with DELETEPLAYER, bans, chat with DPSP_MSG_CHAT and the
//! session description changed live with SESSIONDESCCHANGED (MC-DPL4CS 2.2.25, 2.2.19, 2.2.51).

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::Instant;

use dplay_runtime::{Dp4Command, Dp4Event, Dp4Protocol, Protocol};
use dplay_session::dp4::Dp4Event as SessionEvent;
use dplay_session::dp4::table::Player;
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

impl Hosted for Dp4Protocol {
    fn snapshot(&self) -> Snapshot {
        let s = self.session();
        let host = s.host_player();
        let players: Vec<PlayerView> = listed(s.players())
            .map(|p| PlayerView {
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
                rtt_ms: None,
                bytes_sent: None,
                bytes_received: None,
                retransmissions: None,
            })
            .collect();
        let desc = s.session_desc();
        let session = SessionView {
            name: s.session_name().unwrap_or_default(),
            protocol: "DirectPlay 4",
            guid: desc.map(|d| d.instance_guid.to_string()).unwrap_or_default(),
            mode: "peer-to-peer",
            uptime_s: 0,
            players: players.len(),
            max_players: desc.map_or(0, |d| d.max_players),
            host_migrations: 0,
            hosting: s.role() == dplay_session::dp4::Role::Host,
            addon: false,
        };
        Snapshot { session, players: players.into(), traffic: None, counters: crate::Counters::default() }
    }

    fn seen(&self, event: &Dp4Event) -> Option<Seen> {
        let Dp4Event::Session(e) = event else { return None };
        Some(match e {
            SessionEvent::PlayerJoined { id, name, system } => Seen::Join {
                id: *id,
                name: if *system { None } else { Some(name.clone().unwrap_or_default()) },
                local: false,
            },
            SessionEvent::PlayerCreated { id } => {
                Seen::Join { id: *id, name: self.session().players().get(id).and_then(name), local: true }
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

    fn admin(&mut self, now: Instant, command: AdminCommand) -> String {
        let (commands, text) = match command {
            AdminCommand::Kick(id) => {
                let who = self.session().players().get(&id).and_then(name).unwrap_or_default();
                (vec![Dp4Command::RemoveInstance(id)], format!("kicked {who} ({})", dpnid(id)))
            }
            AdminCommand::SetBans(bans) => {
                let s = self.session();
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
                let flags = self.session().session_desc().map_or(SessionFlags::empty(), |d| d.flags);
                (
                    vec![Dp4Command::SetSession { max_players, flags }],
                    format!("max players {max_players}, told to every instance (SESSIONDESCCHANGED)"),
                )
            }
            AdminCommand::Password(p) => (
                vec![Dp4Command::SetPassword(p)],
                "password changed, told to every instance (SESSIONDESCCHANGED)".into(),
            ),
        };
        for c in commands {
            self.handle_command(now, c);
        }
        text
    }
}
