//! What every joined instance does: the name table's changes, player messages, leave and
//! host migration (MC-DPL4CS 3.1.4.5, 3.1.4.16, 3.1.5.12-3.1.5.14, 3.1.5.22, 3.1.5.32,
//! 3.1.7.1); PING and the Ping timer are in `ping.rs`.

use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use dplay_dpsp::Reliability;
use dplay_wire::dp4::header::SockAddrIn;
use dplay_wire::dp4::join::{IAmNameServer, PlayerInfoMessage};
use dplay_wire::dp4::message::{Dp4Body, Empty};
use dplay_wire::dp4::nametable::{PlayerGroupIds, SessionDescChanged};
use dplay_wire::dp4::player_message::{DatagramPlayerMessage, PlayerIds, PlayerMessage};
use dplay_wire::dp4::routing::PlayerWrapper;
use dplay_wire::dp4::session::{PlayerFlags, SessionFlags};
use dplay_wire::{Blob, WideString, Wire, WireError};

use crate::dp4::event::{CommandError, Dp4Event, Dp4Transmit, DropReason, EndReason, JoinError, Timer, Via};
use crate::dp4::ids::IdAllocator;
use crate::dp4::session::{Dp4Session, Role};
use crate::dp4::table::Player;

/// `DPID_ALLPLAYERS`: the player ID that addresses every player of the session.
pub const DPID_ALLPLAYERS: u32 = 0;

/// DX61VERSION: the first dialect whose new host sends IAMNAMESERVER (MC-DPL4CS 2.2.3).
const DX61_VERSION: u32 = 10;

/// How long a created player is verified to instances that announce theirs (MC-DPL4CS 2.2.22).
const CREATE_PLAYER_VERIFY_WINDOW: std::time::Duration = std::time::Duration::from_secs(40);

impl Dp4Session {
    pub(crate) fn joined(&self) -> bool {
        matches!(self.role, Role::Member | Role::Host)
    }

    /// DPSP_MSG_CREATEPLAYER / CREATEPLAYERVERIFY: a new application player of a known
    /// instance (MC-DPL4CS 3.1.5.12, 3.1.5.13). `version` is the CREATEPLAYER header's dialect
    /// (0 for CREATEPLAYERVERIFY, which is never answered).
    pub(crate) fn on_create_player(
        &mut self,
        now: Instant,
        seen: IpAddr,
        reply_to: SocketAddr,
        version: u16,
        m: &PlayerInfoMessage,
    ) {
        if !self.joined() {
            return self.drop_msg(DropReason::Unexpected, "CREATEPLAYER while not joined");
        }
        if self.players.contains_key(&m.player_id) {
            return;
        }
        let mut p = Player::from_packed(&m.player_info, seen);
        p.id = m.player_id;
        if !self.players.get(&p.system_player_id).is_some_and(|s| s.is_system() && !s.local) {
            return self.drop_msg(DropReason::UnknownPlayer, "CREATEPLAYER of an unknown instance");
        }
        if let Err(e) = self.check_player(&p) {
            return self.refuse(now, seen, DropReason::TooLong, &e.to_string());
        }
        // Its instance sent it: its addresses are at the sender's IP, unless told otherwise.
        p.addrs = p.addrs.map(|(s, d)| {
            (
                self.reply_addr(crate::dp4::host::sock_v4(s), seen),
                self.reply_addr(crate::dp4::host::sock_v4(d), seen),
            )
        });
        let system = p.is_system();
        let ours = p.system_player_id;
        if !system && self.role == Role::Host && self.remove_if_banned(now, seen, &p) {
            return tracing::debug!(id = ours, "a banned name was created: its instance removed");
        }
        self.add_player(p);
        if self.role == Role::Member && !system && version >= 13 {
            self.send_create_player_verify(now, reply_to);
        }
    }

    /// CREATEPLAYERVERIFY for each local application player created in the last 40 s, to the
    /// instance whose CREATEPLAYER showed it may not know them (MC-DPL4CS 2.2.22).
    fn send_create_player_verify(&mut self, now: Instant, to: SocketAddr) {
        self.recent.retain(|_, at| now.saturating_duration_since(*at) < CREATE_PLAYER_VERIFY_WINDOW);
        let ids: Vec<u32> = self.recent.keys().copied().collect();
        for id in ids {
            let Some(p) = self.players.get(&id).filter(|p| p.local) else { continue };
            let body = Dp4Body::CreatePlayerVerify(PlayerInfoMessage {
                id_to: 0,
                player_id: id,
                group_id: 0,
                password_offset: 0,
                player_info: p.to_packed(),
                reserved: Some(dplay_wire::dp4::join::CreateReserved::default()),
            });
            self.send_body(Via::Tcp, to, body);
        }
    }

    /// DPSP_MSG_DELETEPLAYER: remove the player; a system player takes its instance's players
    /// along, and the host's starts host migration (MC-DPL4CS 3.1.5.14, 3.1.7.1).
    /// Our own system player, deleted by the host, means we were told to leave (3.1.5.14): the
    /// session ends for us ([`EndReason::Removed`]).
    pub(crate) fn on_delete_player(&mut self, now: Instant, reply_to: SocketAddr, id: u32) {
        if !self.joined() {
            return self.drop_msg(DropReason::Unexpected, "DELETEPLAYER while not joined");
        }
        let from_host = self.role == Role::Member && self.host_stream() == Some(reply_to);
        match self.players.get(&id) {
            None => self.drop_msg(DropReason::UnknownPlayer, "DELETEPLAYER of an unknown player"),
            Some(p) if p.local && p.is_system() && from_host => {
                tracing::info!(id, "the host deleted our system player: removed from the session");
                self.end(EndReason::Removed);
            }
            Some(p) if p.local => self.drop_msg(DropReason::Unexpected, "DELETEPLAYER of one of ours"),
            Some(_) => {
                self.relay_delete(id);
                self.remove_player(now, id);
            }
        }
    }

    /// Removes a player (and, for a system player, its instance).
    pub(crate) fn remove_player(&mut self, now: Instant, id: u32) {
        let Some(p) = self.players.get(&id) else { return };
        let mut gone: Vec<u32> = if p.is_system() {
            self.players.values().filter(|q| q.system_player_id == id && q.id != id).map(|q| q.id).collect()
        } else {
            Vec::new()
        };
        gone.push(id);
        if let Some((_, datagram)) = self.players.get(&id).filter(|p| p.is_system()).and_then(|p| p.addrs) {
            self.dpsp.forget_peer(now, datagram);
            self.pump_dpsp(now);
        }
        self.map_removed(id);
        for g in &gone {
            let system = self.players.remove(g).is_some_and(|p| p.is_system());
            self.forget_in_groups(*g, system);
            self.recent.remove(g);
            self.checked.remove(g);
            self.timers.cancel(Timer::Check(*g));
            if let Some(ids) = self.ids.as_mut() {
                ids.release(*g);
            }
            self.events.push_back(Dp4Event::PlayerLeft { id: *g });
        }
        if self.role == Role::Host {
            self.reserved.remove(&id);
            let finished: Vec<u32> = self
                .joins
                .iter_mut()
                .filter_map(|(j, pending)| {
                    (pending.awaiting.remove(&id) && pending.awaiting.is_empty()).then_some(*j)
                })
                .collect();
            finished.into_iter().for_each(|j| self.finish_join(j));
            if self.joins.remove(&id).is_some() {
                self.timers.cancel(Timer::NameTable(id));
            }
        }
        if self.host_id == Some(id) {
            self.host_lost(now);
        }
    }

    /// The host is gone: migrate if MH allows, else the session is over (MC-DPL4CS 3.1.7.1).
    fn host_lost(&mut self, now: Instant) {
        self.host_id = None;
        // Never in client/server, which "is incompatible with the DPSESSION_MIGRATEHOST
        // option" (MC-DPL4CS 1.3).
        let migrate = self.desc.is_some_and(|d| {
            d.flags.contains(SessionFlags::MIGRATE_HOST) && !d.flags.contains(SessionFlags::CLIENT_SERVER)
        });
        if !migrate {
            return self.end(EndReason::HostLost);
        }
        self.check_migration(now);
    }

    /// With no host: if our system player now has the lowest ID, we become the host and send
    /// IAMNAMESERVER; otherwise ping everyone until someone does (MC-DPL4CS 3.1.7.1, 3.1.2.5).
    pub(crate) fn check_migration(&mut self, now: Instant) {
        let lowest = self.players.values().filter(|p| p.is_system()).map(|p| p.id).min();
        let Some(me) = self.me else { return };
        if lowest != Some(me) {
            // A DirectPlay 6 instance (dialect 9) takes over without IAMNAMESERVER, which only
            // DX61 (10) and later send (2.2.3): it is the host now (issue 27 item 15).
            if let Some(p) =
                lowest.and_then(|id| self.players.get_mut(&id)).filter(|p| p.version < DX61_VERSION)
            {
                p.flags |= PlayerFlags::NAME_SERVER;
                self.host_id = Some(p.id);
                self.events.push_back(Dp4Event::HostMigrated { host: p.id, local: false });
            }
            return self.start_ping_timer(now);
        }
        let Some(desc) = self.desc else { return };
        self.role = Role::Host;
        self.host_id = Some(me);
        let live = self.players.keys().chain(self.groups.keys()).copied();
        self.ids = Some(IdAllocator::from_live(desc.reserved1, live));
        let flags = PlayerFlags::SYSTEM_PLAYER | PlayerFlags::NAME_SERVER | PlayerFlags::IN_GROUP;
        if let Some(p) = self.players.get_mut(&me) {
            p.flags = flags;
        }
        let body = Dp4Body::IAmNameServer(IAmNameServer {
            id_to: 0,
            id_host: me,
            flags,
            sp_data: self.own_sp_data(),
        });
        self.send_to_instances(&body, None);
        self.events.push_back(Dp4Event::HostMigrated { host: me, local: true });
        self.start_ping_timer(now);
    }

    /// DPSP_MSG_IAMNAMESERVER: the sender is the new host; a host answers YOUAREDEAD
    /// (MC-DPL4CS 3.1.5.32, 3.1.7.1).
    pub(crate) fn on_i_am_name_server(&mut self, now: Instant, reply_to: SocketAddr, m: &IAmNameServer) {
        match self.role {
            Role::Host => self.send_you_are_dead(now, reply_to),
            // No migration in client/server (MC-DPL4CS 1.3): no other instance becomes host.
            Role::Member if self.client_server() => {
                self.drop_msg(DropReason::Unexpected, "IAMNAMESERVER in a client/server session")
            }
            Role::Member => {
                let Some(p) = self.players.get_mut(&m.id_host).filter(|p| p.is_system() && !p.local) else {
                    return self.drop_msg(DropReason::UnknownPlayer, "IAMNAMESERVER from an unknown player");
                };
                p.flags |= PlayerFlags::NAME_SERVER;
                self.host_id = Some(m.id_host);
                self.events.push_back(Dp4Event::HostMigrated { host: m.id_host, local: false });
            }
            _ => self.drop_msg(DropReason::Unexpected, "IAMNAMESERVER while not joined"),
        }
    }

    /// Host: YOUAREDEAD to an instance it does not know (MC-DPL4CS 3.2.5.10), rate limited:
    /// the PING that asks for it may come from a forged address.
    pub(crate) fn send_you_are_dead(&mut self, now: Instant, to: SocketAddr) {
        if self.reply_allowed(now, to, "YOUAREDEAD") {
            self.send_body(Via::Tcp, to, Dp4Body::YouAreDead(Empty));
        }
    }

    /// DPSP_MSG_YOUAREDEAD: leave at once (MC-DPL4CS 3.1.5.32).
    pub(crate) fn on_you_are_dead(&mut self) {
        if self.role != Role::Member {
            return self.drop_msg(DropReason::Unexpected, "YOUAREDEAD while not a member");
        }
        self.end(EndReason::YouAreDead);
    }

    /// DPSP_MSG_SESSIONDESCCHANGED (MC-DPL4CS 3.1.5.22).
    pub(crate) fn on_session_desc_changed(&mut self, m: SessionDescChanged) {
        if self.role != Role::Member {
            return self.drop_msg(DropReason::Unexpected, "SESSIONDESCCHANGED while not a member");
        }
        if let Err(e) = self.check_session_name(m.session_name.as_ref()) {
            return self.drop_msg(DropReason::TooLong, &e.to_string());
        }
        self.desc = Some(m.session_desc);
        self.session_name = m.session_name;
        // Kept, so that if this instance becomes host by migration it checks joins against the
        // password the session has now (2.2.51 Password; issue 27 item 15).
        self.password = m.password.filter(|p| !p.units().is_empty());
        self.events.push_back(Dp4Event::SessionDescChanged(m.session_desc));
    }

    /// The runtime could not reach the TCP listener `stream` (connect refused or the connection
    /// broke): its instance is gone. The host drops it and tells the others with DELETEPLAYER;
    /// a member that loses the host runs host migration (MC-DPL4CS 3.1.7.1, "leaves the game
    /// session for any reason").
    /// The host we are joining unreachable fails the join at once ([`JoinError::Unreachable`]).
    pub fn handle_unreachable(&mut self, now: Instant, stream: SocketAddr) {
        if self.joining_host() == Some(stream) {
            tracing::info!(%stream, "the DP4 host to join cannot be reached");
            self.reset_join();
            return self.events.push_back(Dp4Event::JoinFailed(JoinError::Unreachable));
        }
        let Some(id) = self.instance_at(stream).filter(|_| self.joined()) else { return };
        if self.players.get(&id).is_some_and(|p| p.local) {
            return;
        }
        tracing::info!(%stream, id, "DP4 instance unreachable");
        if self.role == Role::Host {
            self.drop_instance_and_tell(now, id);
        } else {
            self.remove_player(now, id);
        }
    }

    /// The players of the instance whose system player is `system`: its application players,
    /// then the system player itself (the order 3.1.5.14 deletes them in).
    pub(crate) fn instance_players(&self, system: u32) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .players
            .values()
            .filter(|p| p.system_player_id == system && p.id != system)
            .map(|p| p.id)
            .collect();
        ids.push(system);
        ids
    }

    /// Host: drops a vanished instance and tells every other instance about each of its
    /// players with DELETEPLAYER, not only its system player, so every name table loses them
    /// all (MC-DPL4CS 3.1.5.14; issue 27 item 10).
    pub(crate) fn drop_instance_and_tell(&mut self, now: Instant, id: u32) {
        let ids = self.told_players(id);
        self.remove_player(now, id);
        for player_id in ids {
            let body = Dp4Body::DeletePlayer(PlayerGroupIds { player_id, ..PlayerGroupIds::default() });
            self.send_to_instances(&body, None);
        }
    }

    /// A player message (or PLAYERWRAPPER's content): from a known remote player to one of
    /// ours, unless the session has NM (MC-DPL4CS 2.2.45, 3.1.4.16.2).
    pub(crate) fn on_player_message(&mut self, pm: DatagramPlayerMessage) {
        if !self.joined() {
            return self.drop_msg(DropReason::Unexpected, "player message while not joined");
        }
        let (from, to) = match pm.ids {
            None => (None, None),
            Some(ids) => {
                let sender = self.players.get(&ids.id_from).filter(|p| !p.local).map(|p| p.system_player_id);
                let to_ours = self.addressed_to_us(ids.id_to);
                let Some(system) = sender.filter(|_| to_ours) else {
                    return self
                        .drop_msg(DropReason::UnknownPlayer, "player message between unknown players");
                };
                if let Some(s) = self.players.get_mut(&system) {
                    s.chatter += 1;
                }
                (Some(ids.id_from), Some(ids.id_to))
            }
        };
        self.events.push_back(Dp4Event::Message { from, to, data: pm.payload.0 });
    }

    /// Whether a player message to `id_to` is for us: everyone, a group with one of our
    /// players, or one of our players.
    pub(crate) fn addressed_to_us(&self, id_to: u32) -> bool {
        id_to == DPID_ALLPLAYERS
            || self.group_has_local_member(id_to)
            || self.players.get(&id_to).is_some_and(|p| p.local)
    }

    /// Sends `data` from our player `from` to player `to` ([`DPID_ALLPLAYERS`]: one copy to
    /// every other instance; a group: one copy to each instance with a member in it,
    /// 3.1.4.16): over TCP with the size/token and
    /// SockAddr prefix when `guaranteed`, else as a UDP datagram of IDs and data, fragmented
    /// with DPSP_MSG_PACKET beyond the MTU; wrapped in PLAYERWRAPPER when its bytes would
    /// carry 'play' at offset 20 (MC-DPL4CS 3.1.4.16, 3.1.4.16.2, 3.1.4.18). In a session with
    /// DPSESSION_DIRECTPLAYPROTOCOL it goes over MC-DPL4R instead, reliable (RLY) when
    /// `guaranteed`, to each instance's game socket. In NM sessions `from` is not checked and
    /// no IDs are sent.
    pub fn send(
        &mut self,
        now: Instant,
        from: u32,
        to: u32,
        data: &[u8],
        guaranteed: bool,
    ) -> Result<(), CommandError> {
        if !self.joined() {
            return Err(CommandError::WrongState);
        }
        let ids = if self.ids_present() {
            if !self.players.get(&from).is_some_and(|p| p.local) {
                return Err(CommandError::UnknownPlayer(from));
            }
            Some(PlayerIds { id_from: from, id_to: to })
        } else {
            None
        };
        let targets: Vec<(SocketAddr, SocketAddr)> = if let Some(server) = self.client_route() {
            // A client/server client sends everything to the server (MC-DPL4CS 1.3).
            vec![server]
        } else if to == DPID_ALLPLAYERS {
            self.players.values().filter(|p| p.is_system() && !p.local).filter_map(|p| p.addrs).collect()
        } else if let Some(targets) = self.group_targets(to) {
            targets
        } else {
            vec![self.player_instance(to)?]
        };
        self.transmit_player(now, ids, &targets, data, guaranteed)
    }

    /// The (listener, game socket) of the instance of remote player `to`: those of its
    /// system player.
    pub(crate) fn player_instance(&self, to: u32) -> Result<(SocketAddr, SocketAddr), CommandError> {
        self.players
            .get(&to)
            .filter(|p| !p.local)
            .and_then(|p| self.players.get(&p.system_player_id))
            .and_then(|s| s.addrs)
            .ok_or(CommandError::UnknownPlayer(to))
    }

    /// Sends one player message with `ids` to each instance (listener, game socket) of
    /// `targets`, as [`Self::send`] describes.
    pub(crate) fn transmit_player(
        &mut self,
        now: Instant,
        ids: Option<PlayerIds>,
        targets: &[(SocketAddr, SocketAddr)],
        data: &[u8],
        guaranteed: bool,
    ) -> Result<(), CommandError> {
        if self.uses_reliable_protocol() {
            // 3.1.4.16: "MUST transmit the message using" MC-DPL4R.
            self.sync_links();
            let pm = DatagramPlayerMessage::new(ids, Blob::new(data));
            for &(_, datagram) in targets {
                self.send_reliable_player(now, datagram, &pm, guaranteed)?;
            }
            return Ok(());
        }
        // The stream form on TCP, the datagram form on UDP (2.2.45; docs/decisions.md), each
        // wrapped when it would carry 'play' at offset 20 (3.1.4.16.2).
        let wrapped = |w: Result<PlayerWrapper, WireError>| -> Result<Vec<u8>, CommandError> {
            let body = Dp4Body::PlayerWrapper(w.map_err(|_| CommandError::Unencodable)?);
            self.message(body).to_vec().map_err(|_| CommandError::Unencodable)
        };
        let bytes = if guaranteed {
            let pm = PlayerMessage {
                sock_addr: SockAddrIn::new(self.config.stream_addr),
                ..PlayerMessage::new(ids, Blob::new(data))
            };
            if pm.needs_wrapper() {
                wrapped(PlayerWrapper::wrap(&pm))?
            } else {
                pm.to_vec().map_err(|_| CommandError::Unencodable)?
            }
        } else {
            let pm = DatagramPlayerMessage::new(ids, Blob::new(data));
            if pm.needs_wrapper() {
                wrapped(PlayerWrapper::wrap_datagram(&pm))?
            } else {
                pm.to_vec().map_err(|_| CommandError::Unencodable)?
            }
        };
        for &target in targets {
            self.transmit_message(now, target, bytes.clone(), guaranteed)?;
        }
        Ok(())
    }

    /// Sends one whole message `bytes` to instance `target` (listener, game socket) without
    /// MC-DPL4R: on a TCP connection to the listener when `guaranteed`, else a UDP datagram
    /// to the game socket, fragmented with DPSP_MSG_PACKET beyond the MTU (3.1.4.18).
    pub(crate) fn transmit_message(
        &mut self,
        now: Instant,
        (stream, datagram): (SocketAddr, SocketAddr),
        bytes: Vec<u8>,
        guaranteed: bool,
    ) -> Result<(), CommandError> {
        if guaranteed {
            self.transmits.push_back(Dp4Transmit { via: Via::Tcp, to: stream, bytes });
        } else if bytes.len() <= self.config.mtu {
            self.transmits.push_back(Dp4Transmit { via: Via::Udp, to: datagram, bytes });
        } else {
            self.dpsp
                .send(now, datagram, &bytes, Reliability::Unreliable)
                .map_err(|_| CommandError::Unencodable)?;
            self.pump_dpsp(now);
        }
        Ok(())
    }

    /// Leaves: DELETEPLAYER for each of our players, ours last, to every other instance
    /// (MC-DPL4CS 3.1.4.5, 3.1.5.14). With MH the others then elect a new host.
    pub fn leave(&mut self) -> Result<(), CommandError> {
        if self.role == Role::Ended {
            return Err(CommandError::WrongState);
        }
        if self.joined() {
            let mut ours: Vec<&Player> = self.players.values().filter(|p| p.local).collect();
            ours.sort_by_key(|p| p.is_system());
            let ids: Vec<u32> = ours.iter().map(|p| p.id).collect();
            for id in ids {
                let body =
                    Dp4Body::DeletePlayer(PlayerGroupIds { player_id: id, ..PlayerGroupIds::default() });
                self.send_to_instances(&body, None);
            }
        }
        self.end(EndReason::Left);
        Ok(())
    }

    /// Makes an idle or ended endpoint ready for a new session.
    pub(crate) fn restart(&mut self) -> Result<(), CommandError> {
        if !matches!(self.role, Role::Idle | Role::Ended) {
            return Err(CommandError::WrongState);
        }
        self.role = Role::Idle;
        self.desc = None;
        self.session_name = None;
        self.password = None;
        self.ids = None;
        self.me = None;
        self.host_id = None;
        Ok(())
    }

    /// The session is over for us.
    pub(crate) fn end(&mut self, reason: EndReason) {
        self.role = Role::Ended;
        self.timers = Default::default();
        self.players.clear();
        self.joins.clear();
        self.reserved.clear();
        self.recent.clear();
        self.checked.clear();
        self.groups.clear();
        self.creating = None;
        self.creating_group = None;
        self.sync_links();
        self.events.push_back(Dp4Event::Ended(reason));
    }

    /// The session name.
    pub fn session_name(&self) -> Option<String> {
        self.session_name.as_ref().map(WideString::to_string_lossy)
    }
}
