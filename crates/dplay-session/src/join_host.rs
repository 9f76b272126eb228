//! The host's side of joining (MC-DPL8CS 3.1.5.1-3.1.5.2; MS-DPDX 3.1.5.1-3.1.5.2, 4.3):
//! creating the session, validating PLAYER_CONNECT_INFO, SEND_CONNECT_INFO with the name
//! table, ADD_PLAYER to the existing peers, INSTRUCT_CONNECT once the joiner acknowledges, and
//! INSTRUCTED_CONNECT_FAILED. Also the dispatch of every message a host receives.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::Signing;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    ApplicationDescFlags, ConnectFailed, DestroyPlayer, DestroyReason, NameTableEntry, NameTableEntryFlags,
    NameTableOp, ObjectType, PlayerConnectInfo, ResultCode, SendConnectInfo, SessionMessage,
};
use dplay_wire::dp8::url::{AddressingUrl, DirectPlayUrl};
use dplay_wire::{Blob, WideString};
use rand::Rng;

use crate::config::Mode;
use crate::event::{CommandError, Event};
use crate::name_table::NameTable;
use crate::session::{AppDesc, Link, LinkState, Phase, Session};
use crate::stats::DropReason;

/// `DPNERR_SESSIONFULL`: the session has `dwMaxPlayers` players. MC-DPL8CS 2.2.1.3 lists no
/// code for a full session; this is the SDK header's (0x80158610, decisions.md 2026-11-24).
pub const DPNERR_SESSIONFULL: ResultCode = ResultCode::DPNERR_SESSIONFULL;

/// The highest `dwDNETVersion` we know: 8, DirectX 9.0c (MC-DPL8CS 2.2.1.1).
const MAX_DNET_VERSION: u32 = 8;

/// The URL of a player at `addr` (MC-DPL8CS 2.2.8).
pub(crate) fn url_of(addr: SocketAddr) -> Option<AddressingUrl> {
    Some(AddressingUrl::from(&DirectPlayUrl::ip(&addr.ip().to_string(), addr.port())))
}

impl Session {
    /// Creates a session with us as its host (peer-to-peer) or server (client/server), from
    /// the configuration; the instance GUID comes from the seeded RNG. [`Event::Joined`]
    /// follows at once.
    pub fn host(&mut self, _now: std::time::Instant) -> Result<(), CommandError> {
        if self.phase != Phase::Idle {
            return Err(CommandError::WrongState);
        }
        if !self.check_own_limits() || !self.fits_enum_response(&self.cfg.application_reserved_data) {
            return Err(CommandError::InvalidParam);
        }
        let instance = uuid::Builder::from_random_bytes(self.rng.r#gen()).into_uuid();
        let mut flags = ApplicationDescFlags::empty();
        flags.set(ApplicationDescFlags::CLIENT_SERVER, self.cfg.mode == Mode::ClientServer);
        flags.set(
            ApplicationDescFlags::MIGRATE_HOST,
            self.cfg.migrate_host && self.cfg.mode == Mode::PeerToPeer,
        );
        flags.set(ApplicationDescFlags::REQUIREPASSWORD, self.cfg.password.is_some());
        flags.set(ApplicationDescFlags::NOENUMS, self.cfg.no_enums);
        // Every connection of the session signs: the host's listener requires it, and a joiner
        // learns it from the EnumResponse (MC-DPL8CS 2.2.1.4; MC-DPLHP 2.2.2; MC-DPL8R 1.7).
        flags.set(ApplicationDescFlags::FAST_SIGNED, self.cfg.transport.signing == Signing::Fast);
        self.desc = Some(AppDesc {
            instance,
            flags,
            max_players: self.cfg.max_players,
            session_name: self.cfg.session_name.clone(),
            application_reserved_data: self.cfg.application_reserved_data.clone(),
        });
        self.table = NameTable::new(instance);
        let role = match self.cfg.mode {
            Mode::PeerToPeer => NameTableEntryFlags::PEER,
            Mode::ClientServer => NameTableEntryFlags::SERVER,
        };
        let entry = self.local_entry(role | NameTableEntryFlags::HOST);
        let add = self.table.allocate(entry);
        self.local = add.entry.dpnid;
        self.host = self.local;
        self.table.set_local(self.local);
        self.phase = Phase::Host;
        self.joined = true;
        self.seeker = None;
        self.events.push_back(Event::Joined { local: self.local, host: self.host, flags });
        Ok(())
    }

    /// Host: a new `dwMaxPlayers` (0: no limit) for the joins and EnumResponses from now on.
    /// MC-DPL8CS has no message that updates the members' application description, so they
    /// keep the old value (a new host after a migration uses its own copy; docs/decisions.md,
    /// "Live session settings"). Players already in stay, even over the new limit.
    pub fn set_max_players(&mut self, max_players: u32) -> Result<(), CommandError> {
        let desc =
            self.desc.as_mut().filter(|_| self.phase == Phase::Host).ok_or(CommandError::WrongState)?;
        desc.max_players = max_players;
        self.cfg.max_players = max_players;
        Ok(())
    }

    /// Host: the password joins need from now on (`None`: none), and
    /// `DPNSESSION_REQUIREPASSWORD` in the EnumResponse with it (MC-DPL8CS 3.1.5.1 step 4).
    /// As with [`Session::set_max_players`], members are not told.
    pub fn set_password(&mut self, password: Option<String>) -> Result<(), CommandError> {
        let desc =
            self.desc.as_mut().filter(|_| self.phase == Phase::Host).ok_or(CommandError::WrongState)?;
        if password.as_ref().is_some_and(|p| p.encode_utf16().count() > self.cfg.limits.max_name_units) {
            return Err(CommandError::InvalidParam);
        }
        desc.flags.set(ApplicationDescFlags::REQUIREPASSWORD, password.is_some());
        self.cfg.password = password;
        Ok(())
    }

    /// Host: new `ApplicationReservedData` for the joins and EnumResponses from now on (as
    /// with [`Session::set_max_players`], members are not told); `InvalidParam` when the
    /// EnumResponse would no longer fit one datagram.
    pub fn set_application_reserved_data(&mut self, data: &[u8]) -> Result<(), CommandError> {
        if self.phase != Phase::Host {
            return Err(CommandError::WrongState);
        }
        if !self.fits_enum_response(data) {
            return Err(CommandError::InvalidParam);
        }
        self.cfg.application_reserved_data = data.to_vec();
        if let Some(desc) = self.desc.as_mut() {
            desc.application_reserved_data = data.to_vec();
        }
        Ok(())
    }

    /// The session's `ApplicationReservedData`: ours when hosting, the host's (from
    /// DN_SEND_CONNECT_INFO) when joined; empty before.
    pub fn application_reserved_data(&self) -> &[u8] {
        self.desc.as_ref().map_or(&[], |d| &d.application_reserved_data)
    }

    /// Our own entry, before the host gives it a DPNID.
    pub(crate) fn local_entry(&self, flags: NameTableEntryFlags) -> NameTableEntry {
        NameTableEntry {
            dpnid: Dpnid::NONE,
            dpnid_owner: Dpnid::NONE,
            flags,
            version: 0,
            version_not_used: 0,
            dnet_version: self.cfg.dnet_version,
            name: Some(WideString::new(&self.cfg.player_name)),
            data: Blob::new(&self.cfg.player_data),
            // A Windows host's own entry has no URL (MC-DPL8CS 4): its members reached it
            // already, and our socket's address may be unspecified (0.0.0.0).
            url: None,
        }
    }

    /// Every session message a host receives.
    pub(crate) fn host_message(&mut self, now: Instant, peer: SocketAddr, link: Link, msg: SessionMessage) {
        let from = link.dpnid;
        match (link.state, msg) {
            (LinkState::Joining, SessionMessage::PlayerConnectInfo(info)) => {
                self.on_connect_info(now, peer, &info)
            }
            (LinkState::AwaitingAck, SessionMessage::AckConnectInfo) => {
                self.on_ack_connect_info(now, peer, from)
            }
            (LinkState::Member, SessionMessage::InstructedConnectFailed { dpn_id }) => {
                self.on_instructed_connect_failed(now, from, dpn_id)
            }
            (LinkState::Member, SessionMessage::NameTableVersion(v)) => {
                self.on_nametable_version(now, from, v.version)
            }
            (LinkState::Member, SessionMessage::ReqIntegrityCheck(r)) => {
                self.on_req_integrity_check(now, from, r.dpnid_target)
            }
            (LinkState::Member, SessionMessage::IntegrityCheckResponse(r)) => {
                self.on_integrity_check_response(now, from, r.dpnid_requesting)
            }
            (LinkState::Member, SessionMessage::AckNameTableOp(ack)) => {
                self.on_ack_nametable_op(now, from, &ack)
            }
            (LinkState::Member, SessionMessage::ReqProcessCompletion(r)) => {
                self.on_req_process_completion(now, peer, r)
            }
            (LinkState::Member, SessionMessage::ProcessCompletion(c)) => self.on_process_completion(peer, c),
            (
                LinkState::Member,
                msg @ (SessionMessage::ReqCreateGroup(_)
                | SessionMessage::ReqDestroyGroup(_)
                | SessionMessage::ReqAddPlayerToGroup(_)
                | SessionMessage::ReqDeletePlayerFromGroup(_)
                | SessionMessage::ReqUpdateInfo(_)),
            ) => self.on_request(now, from, msg),
            (LinkState::Joining | LinkState::AwaitingAck | LinkState::Refused | LinkState::Closing, _) => {
                self.stats.drop(DropReason::WrongState)
            }
            _ => self.stats.drop(DropReason::WrongRole),
        }
    }

    /// Checks a join request in the order of MC-DPL8CS 3.1.5.1 step 2.
    fn validate(&self, info: &PlayerConnectInfo) -> Result<(), ResultCode> {
        let desc = self.desc.as_ref().ok_or(ResultCode::DPNERR_NOTHOST)?;
        if self.migration.is_some() {
            return Err(ResultCode::DPNERR_ALREADYCLOSING);
        }
        if !info.guid_instance.is_nil() && info.guid_instance != desc.instance {
            return Err(ResultCode::DPNERR_INVALIDINSTANCE);
        }
        if info.guid_application != self.cfg.application_guid {
            return Err(ResultCode::DPNERR_INVALIDAPPLICATION);
        }
        let wanted = match self.cfg.mode {
            Mode::PeerToPeer => ObjectType::DN_OBJECT_TYPE_PEER,
            Mode::ClientServer => ObjectType::DN_OBJECT_TYPE_CLIENT,
        };
        if info.flags != wanted {
            return Err(ResultCode::DPNERR_INVALIDINTERFACE);
        }
        if info.dnet_version == 0 || info.dnet_version > MAX_DNET_VERSION {
            return Err(ResultCode::DPNERR_INVALIDVERSION);
        }
        if let Some(required) = &self.cfg.password {
            let given = info.password.as_ref().map(WideString::to_string_lossy);
            if given.as_deref() != Some(required.as_str()) {
                return Err(ResultCode::DPNERR_INVALIDPASSWORD);
            }
        }
        let count = u32::try_from(self.table.len()).unwrap_or(u32::MAX);
        if desc.max_players != 0 && count >= desc.max_players {
            return Err(DPNERR_SESSIONFULL);
        }
        Ok(())
    }

    /// PLAYER_CONNECT_INFO from a joiner (MC-DPL8CS 3.1.5.2 steps 1-3; MS-DPDX 4.3 steps 7-8).
    fn on_connect_info(&mut self, now: Instant, peer: SocketAddr, info: &PlayerConnectInfo) {
        self.connect_info_came(peer);
        // Banned joiners first: they learn nothing about the password or the session's room.
        let checked = self.check_bans(peer, info).and_then(|()| self.validate(info)).and_then(|()| {
            self.check_limits(info).map_err(|why| {
                self.stats.refused_limits += 1;
                // The JoinRefused event below reports it: a log line here would say it twice.
                tracing::debug!(%peer, "join refused: {why} (DPNERR_INVALIDPARAM)");
                crate::admission::DPNERR_INVALIDPARAM
            })
        });
        let checked = checked.and_then(|()| {
            if !self.over_budget(info) {
                return Ok(());
            }
            self.stats.refused_budget += 1;
            tracing::debug!(%peer, "join refused: the memory budget is reached (DPNERR_SESSIONFULL)");
            Err(DPNERR_SESSIONFULL)
        });
        if let Err(code) = checked {
            return self.refuse(now, peer, info, code, &[]);
        }
        if self.cfg.indicate_connect {
            return self.indicate(peer, info);
        }
        let reply = self.cfg.connect_reply_data.clone();
        self.admit(now, peer, info, &reply);
    }

    /// Refuses a join with CONNECT_FAILED carrying `code` and `reply`, then END_OF_STREAM once
    /// it is delivered (MC-DPL8CS 3.1.5.1 step 2; MS-DPDX 4.3 step 7).
    pub(crate) fn refuse(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        info: &PlayerConnectInfo,
        code: ResultCode,
        reply: &[u8],
    ) {
        tracing::debug!(%peer, %code, "join refused: CONNECT_FAILED");
        self.stats.joins_refused += 1;
        let failed = ConnectFailed { result_code: code, reply: Blob::new(reply) };
        self.send_msg(now, peer, &SessionMessage::ConnectFailed(failed));
        self.links.insert(peer, Link { dpnid: None, state: LinkState::Refused });
        self.ep.disconnect(now, peer);
        let name = info.name.as_ref().map(|n| crate::event::refused_name(n.to_string_lossy()));
        self.events.push_back(Event::JoinRefused { from: peer, name, code });
    }

    /// Admits a joiner that passed the checks: its DPNID, SEND_CONNECT_INFO with `reply`, and
    /// ADD_PLAYER to the others (MC-DPL8CS 3.1.5.2 steps 2-3).
    pub(crate) fn admit(&mut self, now: Instant, peer: SocketAddr, info: &PlayerConnectInfo, reply: &[u8]) {
        let role = match self.cfg.mode {
            Mode::PeerToPeer => NameTableEntryFlags::PEER,
            Mode::ClientServer => NameTableEntryFlags::CLIENT,
        };
        let entry = NameTableEntry {
            dpnid: Dpnid::NONE,
            dpnid_owner: Dpnid::NONE,
            flags: role,
            version: 0,
            version_not_used: 0,
            dnet_version: info.dnet_version,
            name: info.name.clone(),
            data: info.data.clone(),
            // Where the joiner's datagrams come from, which a NAT may have changed; or where
            // a relay takes them (AddressMap).
            url: url_of(self.advertised(peer)),
        };
        let add = self.table.allocate(entry);
        let joiner = add.entry.dpnid;
        tracing::debug!(%peer, dpnid = %joiner, "join admitted: SEND_CONNECT_INFO");
        let name = add.entry.name.as_ref().map(WideString::to_string_lossy).unwrap_or_default();
        self.links.insert(peer, Link { dpnid: Some(joiner), state: LinkState::AwaitingAck });
        let welcome = self.connect_info_for(joiner, reply);
        self.send_msg(now, peer, &SessionMessage::SendConnectInfo(Box::new(welcome)));
        if self.cfg.mode == Mode::PeerToPeer {
            let msg = SessionMessage::AddPlayer(add);
            for (_, addr) in self.member_routes(Some(joiner)) {
                self.send_msg(now, addr, &msg);
            }
        }
        self.events.push_back(Event::PlayerAdded { dpnid: joiner, name });
    }

    /// The address the other members are given for the joiner at `peer`, who takes the next
    /// DPNID: `peer`, or what the [`crate::AddressMap`] says.
    fn advertised(&self, peer: SocketAddr) -> SocketAddr {
        let Some(map) = &self.cfg.address_map else { return peer };
        let (app, instance) = (self.cfg.application_guid, self.table.instance());
        let dpnid = self.table.next_dpnid();
        map.with(|m| m.admitted(dpnid, peer, app, instance)).unwrap_or(peer)
    }

    /// DN_SEND_CONNECT_INFO for `joiner`: the whole table in peer-to-peer, host first, with its
    /// groups and memberships; the server and the joiner in client/server (MC-DPL8CS 2.2.1.4,
    /// 3.4.5.1).
    fn connect_info_for(&self, joiner: Dpnid, reply: &[u8]) -> SendConnectInfo {
        let desc = self.desc.clone().unwrap_or(AppDesc {
            instance: self.table.instance(),
            flags: ApplicationDescFlags::empty(),
            max_players: 0,
            session_name: String::new(),
            application_reserved_data: Vec::new(),
        });
        let entries = match self.cfg.mode {
            Mode::PeerToPeer => self.table.wire_entries(),
            // Only the two entries are copied, the server's first: a server may hold thousands.
            Mode::ClientServer => [self.local, joiner]
                .iter()
                .filter_map(|d| self.table.get(*d))
                .map(crate::name_table::wire_entry)
                .collect(),
        };
        SendConnectInfo {
            reply: Blob::new(reply),
            flags: desc.flags,
            max_players: desc.max_players,
            current_players: u32::try_from(self.table.len()).unwrap_or(u32::MAX),
            session_name: Some(WideString::new(&desc.session_name)),
            password: self.cfg.password.as_deref().map(WideString::new),
            reserved_data: Blob::default(),
            application_reserved_data: Blob::new(&desc.application_reserved_data),
            guid_instance: desc.instance,
            guid_application: self.cfg.application_guid,
            dpnid: joiner,
            version: self.table.version(),
            version_not_used: 0,
            memberships: match self.cfg.mode {
                Mode::PeerToPeer => self.table.memberships(),
                Mode::ClientServer => Vec::new(),
            },
            entries,
            layout: Default::default(),
        }
    }

    /// ACK_CONNECT_INFO (MC-DPL8CS 3.1.5.2 step 5; MS-DPDX 4.3 steps 10-12): INSTRUCT_CONNECT
    /// to every existing peer, then to the joiner.
    fn on_ack_connect_info(&mut self, now: Instant, peer: SocketAddr, joiner: Option<Dpnid>) {
        let Some(joiner) = joiner else { return };
        if let Some(l) = self.links.get_mut(&peer) {
            l.state = LinkState::Member;
        }
        self.admission_done(peer);
        if self.cfg.mode == Mode::ClientServer {
            return;
        }
        self.note_instructed(now, joiner);
        let op = self.table.instruct(joiner);
        let msg = SessionMessage::InstructConnect(op);
        for (_, addr) in self.member_routes(Some(joiner)) {
            self.send_msg(now, addr, &msg);
        }
        self.send_msg(now, peer, &msg);
    }

    /// INSTRUCTED_CONNECT_FAILED (MS-DPDX 3.1.5.2; MC-DPL8CS 3.1.5.2 step 8): the joiner hears
    /// CONNECT_ATTEMPT_FAILED and the host removes it (HOSTDESTROYEDPLAYER, MS-DPDX 2.2.15),
    /// unless the failed-join policy removed the member instead (docs/limits.md).
    fn on_instructed_connect_failed(&mut self, now: Instant, from: Option<Dpnid>, joiner: Dpnid) {
        let Some(existing) = from else { return };
        if !self.table.contains(joiner) {
            self.stats.drop(DropReason::UnknownDpnid);
            return;
        }
        if self.blame_member(now, existing, joiner) {
            return;
        }
        self.send_to_player(now, joiner, &SessionMessage::ConnectAttemptFailed { dpn_id: existing });
        if let Some(addr) = self.route(joiner) {
            self.close_link(now, addr);
        }
        self.destroy_player(now, joiner, DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER);
    }

    /// Host: removes `dpnid` from the table and tells every other member (MC-DPL8CS 2.2.2.2);
    /// it leaves its groups on every member (3.4.1). `reason` is one MS-DPDX 2.2.15 allows:
    /// NORMAL when the player is gone, HOSTDESTROYEDPLAYER when we removed it.
    pub(crate) fn destroy_player(&mut self, now: Instant, dpnid: Dpnid, reason: DestroyReason) {
        if !self.table.contains(dpnid) {
            return;
        }
        self.forget_member(dpnid);
        if let Some(map) = &self.cfg.address_map {
            map.with(|m| m.removed(dpnid));
        }
        self.reported.remove(&dpnid);
        self.integrity.remove(&dpnid);
        if let Some(m) = self.migration.as_mut() {
            m.forget(dpnid);
        }
        let op = DestroyPlayer {
            dpnid_leaving: dpnid,
            version: self.table.next_version(),
            version_not_used: 0,
            destroy_reason: reason,
        };
        self.host_op(now, NameTableOp::DestroyPlayer(op));
        // A migration may have been waiting for this player's version.
        self.migration_progress(now);
    }
}
