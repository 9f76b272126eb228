//! The game host's duties: answering enumeration (of sessions and of players), handing out
//! IDs, forwarding joins and sending the name table (MC-DPL4CS 3.1.4.3, 3.2.3, 3.2.5.3-3.2.5.6,
//! 3.2.6.1).

use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use dplay_wire::dp4::enumeration::{
    EnumSessions, EnumSessionsFlags, EnumSessionsReply, SuperEnumPlayersReply,
};
use dplay_wire::dp4::header::Header;
use dplay_wire::dp4::join::{
    AddForwardRequest, CreateReserved, DPERR_NONEWPLAYERS, Dword, PlayerInfoMessage, RequestPlayerFlags,
    RequestPlayerId, RequestPlayerReply,
};
use dplay_wire::dp4::message::Dp4Body;
use dplay_wire::dp4::session::{PlayerFlags, SESSION_DESC_LEN, SecurityDesc, SessionDesc2, SessionFlags};
use dplay_wire::{Blob, WideString};
use rand::Rng;

use crate::dp4::config::HostConfig;
use crate::dp4::event::{CommandError, Dp4Event, DropReason, JoinError, Timer, Via};
use crate::dp4::ids::IdAllocator;
use crate::dp4::session::{Dp4Session, PendingJoin, Role};
use crate::dp4::table::Player;

/// `DPERR_INVALIDPASSWORD`, MAKE_DPHRESULT(340): the ADDFORWARDREPLY `Error` for a wrong
/// password (MC-DPL4CS 2.2.10; docs/decisions.md).
pub const DPERR_INVALIDPASSWORD: u32 = 0x8877_0154;

/// `DPERR_INVALIDPARAMS` (= E_INVALIDARG): the ADDFORWARDREPLY `Error` for a joiner whose
/// player names or data are over the host's limits (MC-DPL4CS 2.2.10; docs/decisions.md).
pub const DPERR_INVALIDPARAMS: u32 = 0x8007_0057;

/// Session options not implemented here, refused when hosting and left when found in a
/// joined session (docs/decisions.md): SS (secure server: the NTLM/SSPI logon of MC-DPL4CS
/// 3.1.5.2-3.1.5.6 and CAPI signing, 3.1.4.16.1) and MS (multicast server: routing group
/// traffic through the host, 3.1.4.16, 3.2.5.1-2). RP (DPSESSION_DIRECTPLAYPROTOCOL, MC-DPL4R)
/// and CS (client/server, `dp4::client_server`) are supported.
pub const UNSUPPORTED_SESSION_FLAGS: SessionFlags =
    SessionFlags::SECURE_SERVER.union(SessionFlags::MULTICAST_SERVER);

impl Dp4Session {
    /// Starts hosting (MC-DPL4CS 3.2.3): a new instance GUID and ID key from the seed (unless
    /// given), our system player as name server, and the Ping timer when KA is set.
    pub fn host(&mut self, now: Instant, config: HostConfig) -> Result<(), CommandError> {
        let unsupported = config.flags & UNSUPPORTED_SESSION_FLAGS;
        if !unsupported.is_empty() {
            return Err(CommandError::Unsupported(unsupported));
        }
        self.check_session_name(Some(&WideString::new(&config.name)))?;
        self.restart()?;
        self.epoch.get_or_insert(now);
        let identity = config.identity.unwrap_or_else(|| crate::dp4::config::SessionIdentity {
            instance_guid: uuid::Builder::from_random_bytes(self.rng.r#gen()).into_uuid(),
            reserved1: self.rng.r#gen(),
        });
        let mut ids = IdAllocator::new(identity.reserved1, self.rng.r#gen());
        let me = ids.allocate().ok_or(CommandError::WrongState)?;
        // CS "is incompatible with the DPSESSION_MIGRATEHOST option" (MC-DPL4CS 1.3): a
        // client/server session never says it migrates.
        let mut flags = config.flags;
        if flags.contains(SessionFlags::CLIENT_SERVER) {
            flags.remove(SessionFlags::MIGRATE_HOST);
        }
        self.desc = Some(SessionDesc2 {
            size: u32::try_from(SESSION_DESC_LEN).unwrap_or_default(),
            flags,
            instance_guid: identity.instance_guid,
            application_guid: config.application_guid,
            max_players: config.max_players,
            current_player_count: 0,
            session_name: 0,
            password: 0,
            reserved1: identity.reserved1,
            reserved2: 0,
            application_defined: config.application_defined,
        });
        self.session_name = Some(WideString::new(&config.name));
        self.password = config.password.as_deref().map(WideString::new);
        self.ids = Some(ids);
        self.me = Some(me);
        self.host_id = Some(me);
        let flags = PlayerFlags::SYSTEM_PLAYER | PlayerFlags::NAME_SERVER | PlayerFlags::IN_GROUP;
        let player = self.local_system_player(me, flags);
        self.players.insert(me, player);
        self.role = Role::Host;
        self.start_ping_timer(now);
        self.sync_memory();
        Ok(())
    }

    /// The description with `CurrentPlayerCount` = the application (non-system) players.
    pub(crate) fn current_desc(&self) -> Option<SessionDesc2> {
        let count = self.players.values().filter(|p| !p.is_system()).count();
        self.desc
            .map(|d| SessionDesc2 { current_player_count: u32::try_from(count).unwrap_or(u32::MAX), ..d })
    }

    /// Whether no more players fit (`MaxPlayers` 0: no limit).
    fn full(desc: &SessionDesc2) -> bool {
        desc.max_players != 0 && desc.current_player_count >= desc.max_players
    }

    fn password_matches(&self, given: Option<&WideString>) -> bool {
        self.password.as_ref().is_none_or(|p| p.units().is_empty() || Some(p) == given)
    }

    /// DPSP_MSG_ENUMSESSIONS: answer over TCP if the session passes the filters
    /// (MC-DPL4CS 3.2.5.3; F-28; docs/decisions.md).
    /// The reply is a TCP connect to the sender's IP, which UDP cannot prove: it is rate
    /// limited per source ([`Dp4Session::reply_allowed`]).
    pub(crate) fn on_enum_sessions(&mut self, now: Instant, reply_to: SocketAddr, m: &EnumSessions) {
        let Some(desc) = self.current_desc().filter(|_| self.role == Role::Host) else {
            return self.drop_msg(DropReason::Unexpected, "ENUMSESSIONS while not hosting");
        };
        let guid_ok = m.application_guid.is_nil() || m.application_guid == desc.application_guid;
        let closed = Self::full(&desc)
            || desc.flags.intersects(SessionFlags::JOIN_DISABLED | SessionFlags::NEW_PLAYERS_DISABLED);
        let only_open =
            m.flags.contains(EnumSessionsFlags::AVAILABLE) && !m.flags.contains(EnumSessionsFlags::ALL);
        let pw_ok = self.password_matches(m.password.as_ref());
        let hidden = (desc.flags.contains(SessionFlags::PRIVATE) && !pw_ok)
            || (desc.flags.contains(SessionFlags::PASSWORD_REQUIRED)
                && !pw_ok
                && !m.flags.contains(EnumSessionsFlags::PASSWORD_REQUIRED));
        if !guid_ok || (only_open && closed) || hidden {
            tracing::debug!(%reply_to, guid_ok, closed, hidden, "ENUMSESSIONS not answered");
            return;
        }
        let body = Dp4Body::EnumSessionsReply(EnumSessionsReply {
            session_desc: desc,
            session_name: self.session_name.clone(),
        });
        if self.reply_allowed(now, reply_to, "ENUMSESSIONSREPLY") {
            self.send_body(Via::Tcp, reply_to, body);
        }
    }

    /// DPSP_MSG_ENUMPLAYER from an instance that has not joined: the name table, as
    /// SUPERENUMPLAYERSREPLY, or in a client/server session as the ENUMPLAYERSREPLY a client
    /// gets (MC-DPL4CS 2.2.27, 2.2.28 and 2.2.53 notes, 3.1.4.3), without the password; a
    /// session with a password is not enumerated, as Windows does not (docs/decisions.md).
    /// Rate limited as ENUMSESSIONS is.
    pub(crate) fn on_enum_player(&mut self, now: Instant, reply_to: SocketAddr) {
        let Some(desc) = self.current_desc().filter(|_| self.role == Role::Host) else {
            return self.drop_msg(DropReason::Unexpected, "ENUMPLAYER while not hosting");
        };
        if !self.password_matches(None) {
            tracing::debug!(%reply_to, "ENUMPLAYER not answered: the session has a password");
            return;
        }
        if !self.reply_allowed(now, reply_to, "SUPERENUMPLAYERSREPLY") {
            return;
        }
        if self.client_server() {
            let body = self.client_table(desc, false);
            return self.send_body(Via::Tcp, reply_to, body);
        }
        let body = Dp4Body::SuperEnumPlayersReply(SuperEnumPlayersReply {
            session_desc: desc,
            session_name: self.session_name.clone(),
            password: None,
            players: self.super_players(),
            groups: self.super_groups(),
            shortcuts: self.super_shortcuts(),
        });
        self.send_body(Via::Tcp, reply_to, body);
    }

    /// DPSP_MSG_REQUESTPLAYERID: a new ID, or DPERR_NONEWPLAYERS (MC-DPL4CS 3.2.5.4). One that
    /// came over TCP is held only to the total reply limit, not the per-source one
    /// ([`Dp4Session::proven_reply_allowed`]): a joiner retrying at once with the right password
    /// gets in (issue 25 item 19).
    pub(crate) fn on_request_player_id(
        &mut self,
        now: Instant,
        reply_to: SocketAddr,
        m: RequestPlayerId,
        via: Via,
    ) {
        let Some(desc) = self.current_desc().filter(|_| self.role == Role::Host) else {
            return self.drop_msg(DropReason::Unexpected, "REQUESTPLAYERID while not hosting");
        };
        let system = m.flags.contains(RequestPlayerFlags::SYSTEM_PLAYER);
        if !system && self.instance_at(reply_to).is_none() {
            return self.drop_msg(DropReason::UnknownPlayer, "REQUESTPLAYERID (player) from no instance");
        }
        let allowed = match via {
            Via::Tcp => self.proven_reply_allowed(now, reply_to, "REQUESTPLAYERREPLY"),
            Via::Udp => self.reply_allowed(now, reply_to, "REQUESTPLAYERREPLY"),
        };
        if !allowed {
            return;
        }
        // A banned address gets no ID: DPERR_ACCESSDENIED (docs/decisions.md, "Bans").
        if system && self.banned(now, reply_to.ip(), None) {
            self.join_refused(reply_to, None, crate::bans::DPERR_ACCESSDENIED);
            let body = Dp4Body::RequestPlayerReply(RequestPlayerReply {
                id: 0,
                sec_desc: SecurityDesc::default(),
                result: crate::bans::DPERR_ACCESSDENIED,
                sspi_provider: None,
                capi_provider: None,
            });
            return self.send_body(Via::Tcp, reply_to, body);
        }
        let closing = if system { SessionFlags::JOIN_DISABLED } else { SessionFlags::NEW_PLAYERS_DISABLED };
        let id = if Self::full(&desc) || desc.flags.contains(closing) {
            None
        } else {
            self.ids.as_mut().and_then(IdAllocator::allocate)
        };
        if let (Some(id), true) = (id, system) {
            self.reserved.insert(id);
            let wait = self.config.reliable_api_timeout + self.config.name_table_timeout;
            self.timers.set(Timer::Reservation(id), now + wait);
        }
        if system && id.is_none() {
            self.join_refused(reply_to, None, DPERR_NONEWPLAYERS);
        }
        let body = Dp4Body::RequestPlayerReply(RequestPlayerReply {
            id: id.unwrap_or(0),
            sec_desc: SecurityDesc::default(),
            result: if id.is_some() { 0 } else { DPERR_NONEWPLAYERS },
            sspi_provider: None,
            capi_provider: None,
        });
        self.send_body(Via::Tcp, reply_to, body);
    }

    /// DPSP_MSG_ADDFORWARDREQUEST: check the password, add the system player, ADDFORWARD it
    /// to every other instance and start the Name Table Population timer (MC-DPL4CS 3.2.5.5,
    /// 3.2.2.1; INDEX E.6 step 6).
    pub(crate) fn on_add_forward_request(
        &mut self,
        now: Instant,
        seen: IpAddr,
        reply_to: SocketAddr,
        header: &Header,
        m: &AddForwardRequest,
    ) {
        if self.role != Role::Host {
            return self.drop_msg(DropReason::Unexpected, "ADDFORWARDREQUEST while not hosting");
        }
        if !self.reserved.remove(&m.player_id) {
            return self.drop_msg(DropReason::UnknownPlayer, "ADDFORWARDREQUEST for an ID not handed out");
        }
        self.timers.cancel(Timer::Reservation(m.player_id));
        let mut p = Player::from_packed(&m.player_info, seen);
        let name = p.short_name.as_ref().map(WideString::to_string_lossy);
        if !self.password_matches(m.password.as_ref()) {
            if let Some(ids) = self.ids.as_mut() {
                ids.release(m.player_id);
            }
            self.join_refused(reply_to, name, DPERR_INVALIDPASSWORD);
            return self.send_body(
                Via::Tcp,
                reply_to,
                Dp4Body::AddForwardReply(Dword(DPERR_INVALIDPASSWORD)),
            );
        }
        if self.banned(now, seen, Some(&p)) {
            if let Some(ids) = self.ids.as_mut() {
                ids.release(m.player_id);
            }
            self.join_refused(reply_to, name, crate::bans::DPERR_ACCESSDENIED);
            let body = Dp4Body::AddForwardReply(Dword(crate::bans::DPERR_ACCESSDENIED));
            return self.send_body(Via::Tcp, reply_to, body);
        }
        if let Err(e) = self.check_player(&p) {
            if let Some(ids) = self.ids.as_mut() {
                ids.release(m.player_id);
            }
            self.refuse(now, seen, DropReason::TooLong, &e.to_string());
            self.join_refused(reply_to, name, DPERR_INVALIDPARAMS);
            let body = Dp4Body::AddForwardReply(Dword(DPERR_INVALIDPARAMS));
            return self.send_body(Via::Tcp, reply_to, body);
        }
        if !self.memory.fits_entry(p.held_bytes()) {
            if let Some(ids) = self.ids.as_mut() {
                ids.release(m.player_id);
            }
            self.refuse(now, seen, DropReason::OverBudget, "join refused: the memory budget is full");
            self.join_refused(reply_to, name, DPERR_NONEWPLAYERS);
            let body = Dp4Body::AddForwardReply(Dword(dplay_wire::dp4::join::DPERR_NONEWPLAYERS));
            return self.send_body(Via::Tcp, reply_to, body);
        }
        // A listener address still held by a known instance belongs to a new process now:
        // that instance vanished without a word (killed), so it goes first, with all its
        // players, and the rejoin works at once (issue 27 item 10).
        if let Some(ghost) =
            self.instance_at(reply_to).filter(|g| self.players.get(g).is_some_and(|p| !p.local))
        {
            tracing::info!(%reply_to, ghost, "DP4 instance replaced by a new join from its address");
            self.drop_instance_and_tell(now, ghost);
        }
        p.id = m.player_id;
        p.system_player_id = m.player_id;
        p.flags = PlayerFlags::SYSTEM_PLAYER | PlayerFlags::IN_GROUP;
        p.version = u32::from(header.version);
        // The UDP game socket at the sender's IP too, unless told to follow headers.
        let datagram = p.addrs.map_or(reply_to, |(_, d)| self.reply_addr(sock_v4(d), seen));
        p.addrs = Some((reply_to, datagram));
        self.map_admitted(p.id, (reply_to, datagram));
        let body = Dp4Body::AddForward(PlayerInfoMessage {
            id_to: 0,
            player_id: p.id,
            group_id: 0,
            password_offset: 0,
            player_info: self.packed_for_others(&p),
            reserved: None,
        });
        self.add_player(p);
        let awaiting = self.send_to_instances(&body, Some(m.player_id));
        if awaiting.is_empty() {
            self.finish_join(m.player_id);
        } else {
            self.joins.insert(m.player_id, PendingJoin { awaiting });
            self.timers.set(Timer::NameTable(m.player_id), now + self.config.name_table_timeout);
        }
    }

    /// Host: tells the application a joining instance at `from` was refused with `code`.
    fn join_refused(&mut self, from: SocketAddr, name: Option<String>, code: u32) {
        let name = name.map(crate::event::refused_name);
        self.events.push_back(Dp4Event::JoinRefused { from, name, code });
    }

    /// A reserved system player ID nobody claimed goes back to the pool.
    pub(crate) fn on_reservation_expired(&mut self, id: u32) {
        if self.reserved.remove(&id) {
            tracing::debug!(id, "unclaimed system player ID released");
            if let Some(ids) = self.ids.as_mut() {
                ids.release(id);
            }
        }
    }

    /// DPSP_MSG_ADDFORWARDACK from one instance (MC-DPL4CS 3.2.5.6).
    pub(crate) fn on_add_forward_ack(&mut self, reply_to: SocketAddr, id: u32) {
        let Some(sender) = self.instance_at(reply_to).filter(|_| self.role == Role::Host) else {
            return self.drop_msg(DropReason::UnknownPlayer, "ADDFORWARDACK from no instance");
        };
        let Some(join) = self.joins.get_mut(&id) else {
            return self.drop_msg(DropReason::Unexpected, "ADDFORWARDACK for no pending join");
        };
        join.awaiting.remove(&sender);
        if join.awaiting.is_empty() {
            self.finish_join(id);
        }
    }

    /// Sends SUPERENUMPLAYERSREPLY to the joiner, or ENUMPLAYERSREPLY in a client/server
    /// session (2.2.28 note): on the last ACK or when the Name Table Population timer expires
    /// (MC-DPL4CS 3.2.5.6, 3.2.6.1).
    pub(crate) fn finish_join(&mut self, id: u32) {
        self.timers.cancel(Timer::NameTable(id));
        self.joins.remove(&id);
        let (Some(to), Some(desc)) = (self.players.get(&id).and_then(|p| p.addrs), self.current_desc())
        else {
            return;
        };
        if self.client_server() {
            let body = self.client_table(desc, true);
            return self.send_body(Via::Tcp, to.0, body);
        }
        let body = Dp4Body::SuperEnumPlayersReply(SuperEnumPlayersReply {
            session_desc: desc,
            session_name: self.session_name.clone(),
            password: self.password.clone(),
            players: self.super_players(),
            groups: self.super_groups(),
            shortcuts: self.super_shortcuts(),
        });
        self.send_body(Via::Tcp, to.0, body);
    }

    /// Host side of Create Player: the ID is ours to give (MC-DPL4CS 3.2.4, 3.2.5.4). The name
    /// was checked by `create_player`.
    pub(crate) fn host_create_player(&mut self, now: Instant, name: &str, data: &[u8]) {
        let Some(desc) = self.current_desc() else { return };
        let id = if Self::full(&desc) || desc.flags.contains(SessionFlags::NEW_PLAYERS_DISABLED) {
            None
        } else if let Some(server) = self.server_player_id() {
            Some(server)
        } else {
            self.ids.as_mut().and_then(IdAllocator::allocate)
        };
        match id {
            Some(id) => self.create_local_player(now, id, name, data),
            None => {
                self.events.push_back(Dp4Event::PlayerCreateFailed(JoinError::Refused(DPERR_NONEWPLAYERS)))
            }
        }
    }

    /// Adds our new application player and sends CREATEPLAYER to every other instance
    /// (MC-DPL4CS 3.1.5.1, 2.2.21).
    pub(crate) fn create_local_player(&mut self, now: Instant, id: u32, name: &str, data: &[u8]) {
        let Some(me) = self.me else { return };
        let mut p = self.local_system_player(id, PlayerFlags::empty());
        p.system_player_id = me;
        p.short_name = Some(WideString::new(name));
        p.player_data = dplay_wire::Blob::new(data);
        let body = Dp4Body::CreatePlayer(PlayerInfoMessage {
            id_to: 0,
            player_id: id,
            group_id: 0,
            password_offset: 0,
            player_info: p.to_packed(),
            reserved: Some(CreateReserved::default()),
        });
        self.players.insert(id, p);
        self.recent.insert(id, now);
        if self.announces(id) {
            self.send_to_instances(&body, None);
        }
        self.events.push_back(Dp4Event::PlayerCreated { id });
    }

    /// Host: changes `MaxPlayers` and the flags, and sends SESSIONDESCCHANGED unless NS is set
    /// (MC-DPL4CS 2.2.51, 3.1.5.22).
    pub fn set_session(&mut self, max_players: u32, flags: SessionFlags) -> Result<(), CommandError> {
        let unsupported = flags & UNSUPPORTED_SESSION_FLAGS;
        if !unsupported.is_empty() {
            return Err(CommandError::Unsupported(unsupported));
        }
        let Some(desc) = self.desc.as_mut().filter(|_| self.role == Role::Host) else {
            return Err(CommandError::WrongState);
        };
        // Client/server or not is fixed for the session's life: clients joined knowing it.
        if (flags ^ desc.flags).contains(SessionFlags::CLIENT_SERVER) {
            return Err(CommandError::Unsupported(SessionFlags::CLIENT_SERVER));
        }
        desc.max_players = max_players;
        desc.flags = flags;
        self.announce_desc();
        Ok(())
    }

    /// Our SPData, for IAMNAMESERVER.
    pub(crate) fn own_sp_data(&self) -> Blob {
        crate::dp4::table::sp_data(
            SocketAddr::V4(self.config.stream_addr),
            SocketAddr::V4(self.config.datagram_addr),
        )
    }
}

/// `addr` as IPv4 (DirectPlay 4 addresses are; an IPv6 one becomes 0.0.0.0, "the sender's").
pub(crate) fn sock_v4(addr: SocketAddr) -> std::net::SocketAddrV4 {
    match addr {
        SocketAddr::V4(a) => a,
        SocketAddr::V6(a) => std::net::SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, a.port()),
    }
}
