//! Client/server sessions (DPSESSION_CLIENTSERVER, the CS flag: MC-DPL4CS 1.3, 2.2.5,
//! `Session.ClientServer` in 3.1.1, the 2.2.28 and 2.2.53 notes, 3.1.4.3).
//!
//! The host is the server. "When joining a game session, the game host will transmit
//! information only about the system players on all the joined machines, not about the normal
//! players" (1.3), and "DirectPlay will download information about the DPPLAYER_SERVERPLAYER
//! only" (2.2.5): a client's name table is the system players and the server player, whose ID
//! is `DPID_SERVERPLAYER` (1), sent as ENUMPLAYERSREPLY (2.2.28 note). A client talks only to
//! the server: its CREATEPLAYER, DELETEPLAYER and player messages go there, and the server
//! relays a message for another client's player (or for everyone) to that client's instance
//! with its IDs unchanged. No host migration: CS "is incompatible with the
//! DPSESSION_MIGRATEHOST option" (1.3), so losing the server ends the session for its clients.
//! docs/decisions.md ("DirectPlay 4 client/server sessions") records what the spec leaves open.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp4::enumeration::EnumPlayersReply;
use dplay_wire::dp4::message::Dp4Body;
use dplay_wire::dp4::nametable::PlayerGroupIds;
use dplay_wire::dp4::player_message::{DatagramPlayerMessage, PlayerIds};
use dplay_wire::dp4::session::{SessionDesc2, SessionFlags};

use crate::dp4::event::{Dp4Event, DropReason};
use crate::dp4::members::DPID_ALLPLAYERS;
use crate::dp4::session::{Dp4Session, Role};
use crate::dp4::table::Player;

/// `DPID_SERVERPLAYER`: the server's application player in a client/server session, 1 on the
/// wire (DirectX `dplay.h`; the DPPLAYER_SERVERPLAYER of MC-DPL4CS 2.2.5).
pub const DPID_SERVERPLAYER: u32 = 1;

impl Dp4Session {
    /// Whether the session is client/server (CS, MC-DPL4CS 2.2.5).
    pub(crate) fn client_server(&self) -> bool {
        self.desc.is_some_and(|d| d.flags.contains(SessionFlags::CLIENT_SERVER))
    }

    /// Whether we talk to the instance of system player `p` directly: a client only to the
    /// server (MC-DPL4CS 1.3); otherwise every instance.
    pub(crate) fn reaches(&self, p: &Player) -> bool {
        !(self.client_server() && self.role == Role::Member) || Some(p.id) == self.host_id
    }

    /// A client's route for every player message: the server's listener and game socket.
    pub(crate) fn client_route(&self) -> Option<(SocketAddr, SocketAddr)> {
        if !(self.client_server() && self.role == Role::Member) {
            return None;
        }
        self.host_id.and_then(|h| self.players.get(&h)).and_then(|p| p.addrs)
    }

    /// Server: the ID of a new local application player; the first is `DPID_SERVERPLAYER`.
    pub(crate) fn server_player_id(&self) -> Option<u32> {
        (self.client_server() && self.role == Role::Host && !self.players.contains_key(&DPID_SERVERPLAYER))
            .then_some(DPID_SERVERPLAYER)
    }

    /// Whether the players of other instances hear of our player `id` (CREATEPLAYER): a
    /// server announces only the server player (MC-DPL4CS 1.3, 2.2.5).
    pub(crate) fn announces(&self, id: u32) -> bool {
        !(self.client_server() && self.role == Role::Host) || id == DPID_SERVERPLAYER
    }

    /// Server: whether a client hears of player `p`: system players and the server player.
    fn in_client_table(p: &Player) -> bool {
        p.is_system() || p.id == DPID_SERVERPLAYER
    }

    /// Server: the name table a client gets, as ENUMPLAYERSREPLY (MC-DPL4CS 2.2.28 note: "If
    /// the CS flag ... is set, implementations SHOULD use the DPSP_MSG_ENUMPLAYERSREPLY
    /// message"): the system players and the server player, no groups (docs/decisions.md).
    pub(crate) fn client_table(&self, desc: SessionDesc2, with_password: bool) -> Dp4Body {
        Dp4Body::EnumPlayersReply(EnumPlayersReply {
            shortcut_count: 0,
            session_desc: desc,
            session_name: self.session_name.clone(),
            password: if with_password { self.password.clone() } else { None },
            players: self
                .players
                .values()
                .filter(|p| Self::in_client_table(p))
                .map(Player::to_packed)
                .collect(),
            groups: Vec::new(),
        })
    }

    /// Server: the players of a vanished instance the others are told about with DELETEPLAYER:
    /// in client/server only its system player, the one they know.
    pub(crate) fn told_players(&self, system: u32) -> Vec<u32> {
        if self.client_server() { vec![system] } else { self.instance_players(system) }
    }

    /// Server: a client deleted its system player (it left, MC-DPL4CS 3.1.4.5); it told only
    /// us, so we tell the other clients, who know its system player.
    pub(crate) fn relay_delete(&mut self, id: u32) {
        let system = self.players.get(&id).is_some_and(|p| p.is_system() && !p.local);
        if system && self.client_server() && self.role == Role::Host {
            let body = Dp4Body::DeletePlayer(PlayerGroupIds { player_id: id, ..PlayerGroupIds::default() });
            self.send_to_instances(&body, Some(id));
        }
    }

    /// A player message received from `from` (`guaranteed` when it came by TCP, or by MC-DPL4R
    /// with RLY);
    /// in client/server a server relays it and a client takes it from players it does not
    /// know when the server sent it (MC-DPL4CS 1.3).
    pub(crate) fn on_routed_player_message(
        &mut self,
        now: Instant,
        from: SocketAddr,
        guaranteed: bool,
        pm: DatagramPlayerMessage,
    ) {
        let Some(ids) = pm.ids.filter(|_| self.client_server()) else {
            return self.on_player_message(pm);
        };
        match self.role {
            Role::Host => self.relay(now, ids, pm, guaranteed),
            Role::Member if !self.players.contains_key(&ids.id_from) && self.sent_by_server(from) => {
                if !self.addressed_to_us(ids.id_to) {
                    return self.drop_msg(DropReason::UnknownPlayer, "relayed message for no player of ours");
                }
                if let Some(host) = self.host_id.and_then(|h| self.players.get_mut(&h)) {
                    host.chatter += 1;
                }
                let (from, to) = (Some(ids.id_from), Some(ids.id_to));
                self.events.push_back(Dp4Event::Message { from, to, data: pm.payload.0 });
            }
            _ => self.on_player_message(pm),
        }
    }

    /// Whether `from` is the server's address (its connection or game socket).
    fn sent_by_server(&self, from: SocketAddr) -> bool {
        let host = self.host_id.and_then(|h| self.players.get(&h)).and_then(|p| p.addrs);
        host.is_some_and(|(s, d)| d == from || s.ip() == from.ip())
    }

    /// Server: a client's message for another client's player goes to that player's instance,
    /// one for everyone to every other client as well as to us; one for us is delivered.
    fn relay(&mut self, now: Instant, ids: PlayerIds, pm: DatagramPlayerMessage, guaranteed: bool) {
        let Some(sender) = self.players.get(&ids.id_from).filter(|p| !p.local).map(|p| p.system_player_id)
        else {
            return self.on_player_message(pm);
        };
        let targets: Vec<(SocketAddr, SocketAddr)> = if ids.id_to == DPID_ALLPLAYERS {
            self.players
                .values()
                .filter(|p| p.is_system() && !p.local && p.id != sender)
                .filter_map(|p| p.addrs)
                .collect()
        } else {
            self.players
                .get(&ids.id_to)
                .filter(|p| !p.local && p.system_player_id != sender)
                .and_then(|p| self.players.get(&p.system_player_id))
                .and_then(|s| s.addrs)
                .into_iter()
                .collect()
        };
        if !targets.is_empty() {
            self.stats.relayed += 1;
            if let Err(e) = self.transmit_player(now, Some(ids), &targets, &pm.payload.0, guaranteed) {
                tracing::debug!(error = %e, "client/server relay not sent");
            }
        }
        // Ours, or for no one: the usual checks deliver or drop it.
        if ids.id_to == DPID_ALLPLAYERS || self.addressed_to_us(ids.id_to) || targets.is_empty() {
            self.on_player_message(pm);
        }
    }
}
