//! The joining side: enumeration, the join exchange and creating players
//! (MC-DPL4CS 3.1.4.1, 3.1.4.2, 3.1.4.4, 3.1.5.1, 3.1.5.7, 3.1.5.8, 3.1.5.10; INDEX E.6), with the
//! name table from SUPERENUMPLAYERSREPLY or ENUMPLAYERSREPLY (2.2.53, 2.2.28).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Instant;

use dplay_wire::WideString;
use dplay_wire::dp4::enumeration::{
    EnumPlayersReply, EnumSessions, EnumSessionsReply, SuperEnumPlayersReply,
};
use dplay_wire::dp4::join::{
    AddForwardRequest, Dword, PlayerInfoMessage, RequestPlayerFlags, RequestPlayerId, RequestPlayerReply,
};
use dplay_wire::dp4::message::Dp4Body;
use dplay_wire::dp4::session::{PlayerFlags, SecurityDesc, SessionDesc2, SessionFlags};

use crate::dp4::config::{ENUM_PORT, EnumRequest};
use crate::dp4::event::{
    CommandError, Dp4Event, DropReason, FoundSession, GroupEvent, JoinError, Timer, Via,
};
use crate::dp4::group_table::Group;
use crate::dp4::session::{Dp4Session, Role};
use crate::dp4::table::Player;

/// Instances forwarded during our own join that we keep for the name table: a host adds
/// joiners one at a time, so a handful is plenty; beyond it they are still acknowledged.
pub(crate) const MAX_EARLY_FORWARDS: usize = 16;

impl Dp4Session {
    /// Sends DPSP_MSG_ENUMSESSIONS to port 47624 of `to`, or broadcast to 255.255.255.255,
    /// and collects replies until the Session Enumeration timer ends (MC-DPL4CS 3.1.4.1, 2.1).
    pub fn enum_sessions(&mut self, now: Instant, to: Option<IpAddr>, request: &EnumRequest) {
        let target = SocketAddr::new(to.unwrap_or(IpAddr::V4(Ipv4Addr::BROADCAST)), ENUM_PORT);
        self.enum_sessions_at(now, target, request);
    }

    /// As [`Dp4Session::enum_sessions`], to a host whose enumeration socket is `target`: port
    /// 47624 on another machine, another port to reach one of several hosts on one machine.
    pub fn enum_sessions_at(&mut self, now: Instant, target: SocketAddr, request: &EnumRequest) {
        self.epoch.get_or_insert(now);
        let body = Dp4Body::EnumSessions(EnumSessions {
            application_guid: request.application_guid,
            flags: request.flags,
            password: request.password.as_deref().map(WideString::new),
        });
        self.send_body(Via::Udp, target, body);
        self.timers.set(Timer::Enumeration, now + self.config.enum_timeout);
    }

    /// DPSP_MSG_ENUMSESSIONSREPLY while enumerating (MC-DPL4CS 3.1.4.1).
    pub(crate) fn on_enum_sessions_reply(&mut self, reply_to: SocketAddr, m: EnumSessionsReply) {
        if !self.timers.is_set(Timer::Enumeration) {
            return self.drop_msg(DropReason::Unexpected, "ENUMSESSIONSREPLY while not enumerating");
        }
        if let Err(e) = self.check_session_name(m.session_name.as_ref()) {
            return self.drop_msg(DropReason::TooLong, &e.to_string());
        }
        self.events.push_back(Dp4Event::SessionFound(FoundSession {
            host: reply_to,
            desc: m.session_desc,
            name: m.session_name.as_ref().map(WideString::to_string_lossy),
        }));
    }

    /// Joins the session whose host listens on `host` (a [`FoundSession::host`]): sends
    /// REQUESTPLAYERID with SP and starts the Reliable API timer (MC-DPL4CS 3.1.4.2).
    pub fn join(
        &mut self,
        now: Instant,
        host: SocketAddr,
        password: Option<&str>,
    ) -> Result<(), CommandError> {
        self.restart()?;
        self.epoch.get_or_insert(now);
        self.password = password.map(WideString::new);
        // SP | PL (0x9), as Windows sends it (Wine's dplayx tests); the host ignores PL.
        let flags = RequestPlayerFlags::SYSTEM_PLAYER | RequestPlayerFlags::LOCAL;
        self.send_body(Via::Tcp, host, Dp4Body::RequestPlayerId(RequestPlayerId { flags }));
        self.role = Role::RequestingId { host };
        self.timers.set(Timer::ReliableApi, now + self.config.reliable_api_timeout);
        Ok(())
    }

    /// Creates a local application player named `name`: the host gives the ID itself, a
    /// member asks with REQUESTPLAYERID (MC-DPL4CS 3.1.4.4, 3.2.4). Ends in
    /// [`Dp4Event::PlayerCreated`] or [`Dp4Event::PlayerCreateFailed`].
    pub fn create_player(&mut self, now: Instant, name: &str) -> Result<(), CommandError> {
        self.create_player_with_data(now, name, &[])
    }

    /// [`Self::create_player`], the player's data `data` sent in its CREATEPLAYER
    /// (MC-DPL4CS 2.2.21, DPLAYI_PACKEDPLAYER's PlayerData, 2.2.2), within
    /// `Dp4Limits::max_player_data`.
    pub fn create_player_with_data(
        &mut self,
        now: Instant,
        name: &str,
        data: &[u8],
    ) -> Result<(), CommandError> {
        self.check_player_name(name)?;
        self.check_player_data(data)?;
        match self.role {
            Role::Host => {
                self.host_create_player(now, name, data);
                Ok(())
            }
            Role::Member if self.creating.is_none() && self.creating_group.is_none() => {
                let Some(host) = self.host_stream() else { return Err(CommandError::WrongState) };
                self.creating = Some((name.to_owned(), data.to_vec()));
                // PL (0x8), as Windows sends it (Wine's dplayx tests).
                let body = Dp4Body::RequestPlayerId(RequestPlayerId { flags: RequestPlayerFlags::LOCAL });
                self.send_body(Via::Tcp, host, body);
                self.timers.set(Timer::ReliableApi, now + self.config.reliable_api_timeout);
                Ok(())
            }
            _ => Err(CommandError::WrongState),
        }
    }

    /// The host's TCP listener.
    pub(crate) fn host_stream(&self) -> Option<SocketAddr> {
        self.host_id.and_then(|h| self.players.get(&h)).and_then(|p| p.addrs).map(|(s, _)| s)
    }

    /// DPSP_MSG_REQUESTPLAYERREPLY: for our system player, go on with ADDFORWARDREQUEST; for
    /// an application player, announce it with CREATEPLAYER (MC-DPL4CS 3.1.5.1).
    pub(crate) fn on_request_player_reply(&mut self, now: Instant, m: &RequestPlayerReply) {
        match self.role {
            Role::RequestingId { host } => {
                self.timers.cancel(Timer::ReliableApi);
                if m.result != 0 {
                    self.role = Role::Idle;
                    return self.events.push_back(Dp4Event::JoinFailed(JoinError::Refused(m.result)));
                }
                // A secure server names its SSPI provider and security description here
                // (2.2.50) and waits for a logon we do not do: stop now, saying why, rather
                // than time out (issue 27 item 9).
                if m.sspi_provider.is_some() || m.sec_desc != SecurityDesc::default() {
                    self.role = Role::Idle;
                    let refused = JoinError::Unsupported(SessionFlags::SECURE_SERVER);
                    return self.events.push_back(Dp4Event::JoinFailed(refused));
                }
                self.me = Some(m.id);
                // SP only: the host adds PG (MC-DPL4CS 2.2.2); with PL this is the 0x9 Windows
                // sends (Wine's dplayx tests).
                let me = self.local_system_player(m.id, PlayerFlags::SYSTEM_PLAYER);
                let body = Dp4Body::AddForwardRequest(AddForwardRequest {
                    id_to: 0,
                    player_id: m.id,
                    group_id: 0,
                    player_info: me.to_packed(),
                    // Always present, empty when none, as Windows sends it (Wine's dplayx tests).
                    password: Some(self.password.clone().unwrap_or_default()),
                    tick_count: self.tick(now),
                });
                self.players.insert(m.id, me);
                self.send_body(Via::Tcp, host, body);
                self.role = Role::AddingForward { host };
                // The host may wait for ADDFORWARDACKs as long as its Name Table Population
                // timer: our wait outlasts it (3.1.5.1 vs 3.2.2.1; docs/decisions.md).
                let wait = self.config.reliable_api_timeout + self.config.name_table_timeout;
                self.timers.set(Timer::ReliableApi, now + wait);
            }
            Role::Member if self.creating_group.is_some() => self.on_request_group_reply(m),
            Role::Member | Role::Host if self.creating.is_some() => {
                self.timers.cancel(Timer::ReliableApi);
                let (name, data) = self.creating.take().unwrap_or_default();
                if m.result == 0 {
                    self.create_local_player(now, m.id, &name, &data);
                } else {
                    self.events.push_back(Dp4Event::PlayerCreateFailed(JoinError::Refused(m.result)));
                }
            }
            _ => self.drop_msg(DropReason::Unexpected, "REQUESTPLAYERREPLY with no request outstanding"),
        }
    }

    /// DPSP_MSG_ADDFORWARDREPLY: the join failed (MC-DPL4CS 3.1.5.8).
    pub(crate) fn on_add_forward_reply(&mut self, error: u32) {
        if !matches!(self.role, Role::AddingForward { .. }) {
            return self.drop_msg(DropReason::Unexpected, "ADDFORWARDREPLY while not joining");
        }
        self.reset_join();
        self.events.push_back(Dp4Event::JoinFailed(JoinError::Refused(error)));
    }

    pub(crate) fn reset_join(&mut self) {
        self.early_forwards.clear();
        self.timers.cancel(Timer::ReliableApi);
        self.role = Role::Idle;
        self.players.clear();
        self.me = None;
    }

    /// DPSP_MSG_SUPERENUMPLAYERSREPLY: merge the name table; we are in (MC-DPL4CS 3.1.5.7).
    pub(crate) fn on_super_enum_players_reply(
        &mut self,
        now: Instant,
        seen: IpAddr,
        m: SuperEnumPlayersReply,
    ) {
        let table = NameTable {
            message: "SUPERENUMPLAYERSREPLY",
            desc: m.session_desc,
            name: m.session_name,
            players: m.players.iter().map(|p| Player::from_super(p, seen)).collect(),
            groups: m.groups.iter().chain(&m.shortcuts).map(Group::from_super).collect(),
        };
        self.complete_join(now, table);
    }

    /// DPSP_MSG_ENUMPLAYERSREPLY: the same name table as DPLAYI_PACKEDPLAYERs, which a host
    /// may send instead of SUPERENUMPLAYERSREPLY (MC-DPL4CS 2.2.28, 3.1.4.3; 3.1.5.7 applies
    /// alike, docs/decisions.md). `ShortcutCount` is ignored (2.2.28, <9>).
    pub(crate) fn on_enum_players_reply(&mut self, now: Instant, seen: IpAddr, m: EnumPlayersReply) {
        let table = NameTable {
            message: "ENUMPLAYERSREPLY",
            desc: m.session_desc,
            name: m.session_name,
            players: m.players.iter().map(|p| Player::from_packed(p, seen)).collect(),
            groups: m.groups.iter().map(|g| Group::from_packed(g.player_id, g)).collect(),
        };
        self.complete_join(now, table);
    }

    /// The end of a join: merge the host's name table into ours and tell the application we
    /// are in (MC-DPL4CS 3.1.5.7); a session with options we do not implement is left.
    fn complete_join(&mut self, now: Instant, m: NameTable) {
        let Role::AddingForward { host } = self.role else {
            return self.drop_msg(DropReason::Unexpected, &format!("{} while not joining", m.message));
        };
        self.timers.cancel(Timer::ReliableApi);
        let Some(me) = self.me else { return };
        let unsupported = m.desc.flags & crate::dp4::host::UNSUPPORTED_SESSION_FLAGS;
        if !unsupported.is_empty() {
            // The host has added us: say goodbye so its name table stays right (3.1.4.5).
            let body = Dp4Body::DeletePlayer(dplay_wire::dp4::nametable::PlayerGroupIds {
                player_id: me,
                ..Default::default()
            });
            self.send_body(Via::Tcp, host, body);
            self.reset_join();
            return self.events.push_back(Dp4Event::JoinFailed(JoinError::Unsupported(unsupported)));
        }
        self.desc = Some(m.desc);
        // Our limits hold for the host's table too (issue 14): a session name over them is
        // not kept, a player or group over them is left out of our lists (docs/limits.md).
        self.session_name = match self.check_session_name(m.name.as_ref()) {
            Ok(()) => m.name,
            Err(e) => {
                self.drop_msg(DropReason::TooLong, &e.to_string());
                None
            }
        };
        self.role = Role::Member;
        self.events.push_back(Dp4Event::Joined { system_player: me });
        for player in m.players.into_iter().filter(|p| p.id != me) {
            if let Err(e) = self.check_player(&player) {
                self.drop_msg(DropReason::TooLong, &e.to_string());
                continue;
            }
            if player.flags.contains(PlayerFlags::NAME_SERVER) {
                self.host_id = Some(player.id);
            }
            self.add_player(player);
        }
        for p in std::mem::take(&mut self.early_forwards) {
            if !self.players.contains_key(&p.id) {
                self.add_player(p);
            }
        }
        self.load_groups(m.groups);
        if self.host_id.is_none() {
            self.host_id = self.instance_at(host);
        }
        self.start_ping_timer(now);
    }

    /// DPSP_MSG_ADDFORWARD: a new instance; acknowledge to the host (MC-DPL4CS 3.1.5.10).
    /// While our own join is pending (another joiner came in between, 3.2.2.1) it is
    /// acknowledged at once too, since the host waits for every member's ACK and a Windows
    /// joiner's timer is short, and kept to be added with the name table.
    pub(crate) fn on_add_forward(&mut self, seen: IpAddr, m: &PlayerInfoMessage) {
        let mut p = Player::from_packed(&m.player_info, seen);
        p.id = m.player_id;
        if let Role::AddingForward { host } = self.role {
            if self.early_forwards.len() < MAX_EARLY_FORWARDS && self.check_player(&p).is_ok() {
                self.early_forwards.push(p);
            }
            return self.send_body(Via::Tcp, host, Dp4Body::AddForwardAck(Dword(m.player_id)));
        }
        let Some(host) = self.host_stream().filter(|_| self.role == Role::Member) else {
            return self.drop_msg(DropReason::Unexpected, "ADDFORWARD while not a member");
        };
        // Over our limits: not in our Player List, but acknowledged, so the host's join goes on.
        match self.check_player(&p) {
            Ok(()) => self.add_player(p),
            Err(e) => self.drop_msg(DropReason::TooLong, &e.to_string()),
        }
        self.send_body(Via::Tcp, host, Dp4Body::AddForwardAck(Dword(m.player_id)));
    }

    /// The Reliable API timer ran out (MC-DPL4CS 3.1.2.2, 3.1.4.2).
    pub(crate) fn on_reliable_api_timeout(&mut self) {
        if matches!(self.role, Role::RequestingId { .. } | Role::AddingForward { .. }) {
            self.reset_join();
            self.events.push_back(Dp4Event::JoinFailed(JoinError::Timeout));
        } else if self.creating.take().is_some() {
            self.events.push_back(Dp4Event::PlayerCreateFailed(JoinError::Timeout));
        } else if self.creating_group.take().is_some() {
            self.events.push_back(Dp4Event::Group(GroupEvent::CreateFailed(JoinError::Timeout)));
        }
    }
}

/// A host's name table as a joiner receives it, from either reply (MC-DPL4CS 2.2.28, 2.2.53).
struct NameTable {
    /// The message it came in, for the logs.
    message: &'static str,
    desc: SessionDesc2,
    name: Option<WideString>,
    players: Vec<Player>,
    groups: Vec<Group>,
}
