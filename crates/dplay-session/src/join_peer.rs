//! The joiner's and the existing peers' sides of joining (MC-DPL8CS 3.1.5.1-3.1.5.2; MS-DPDX
//! 4.3 steps 3-17), the name-table operations a member applies, and the dispatch of every
//! message a member receives.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp8::alternate_address::{AlternateAddress, MAX_ALTERNATE_ADDRESSES};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    ApplicationDescFlags, NameTableEntryFlags, NameTableOp, ObjectType, PlayerConnectInfo, SendConnectInfo,
    SessionMessage, VersionInfo,
};
use dplay_wire::{Blob, WideString};
use uuid::Uuid;

use crate::config::Mode;
use crate::event::{CommandError, EndReason, Event, TableChange};
use crate::name_table::{NameTable, OpError};
use crate::session::{AppDesc, Link, LinkState, Phase, Session};
use crate::stats::DropReason;

impl Session {
    /// Joins the session hosted at `host`: connects, then sends PLAYER_CONNECT_INFO
    /// (MC-DPL8CS 3.1.5.1-3.1.5.2). `instance` is the EnumResponse's instance GUID, or `None`
    /// to send zeros. [`Event::Joined`] or [`Event::SessionEnded`] follows.
    pub fn join(
        &mut self,
        now: Instant,
        host: SocketAddr,
        instance: Option<Uuid>,
    ) -> Result<(), CommandError> {
        if self.phase != Phase::Idle {
            return Err(CommandError::WrongState);
        }
        self.ep.connect(now, host).map_err(|_| CommandError::WrongState)?;
        tracing::debug!(%host, "join: connecting to the host");
        self.table = NameTable::new(instance.unwrap_or_default());
        self.host_addr = Some(host);
        self.phase = Phase::Connecting;
        Ok(())
    }

    /// The transport connection to the host is up: PLAYER_CONNECT_INFO (MS-DPDX 4.3 step 7).
    pub(crate) fn send_connect_info(&mut self, now: Instant, host: SocketAddr) {
        let flags = match self.cfg.mode {
            Mode::PeerToPeer => ObjectType::DN_OBJECT_TYPE_PEER,
            Mode::ClientServer => ObjectType::DN_OBJECT_TYPE_CLIENT,
        };
        let info = PlayerConnectInfo {
            flags,
            dnet_version: self.cfg.dnet_version,
            name: Some(WideString::new(&self.cfg.player_name)),
            data: Blob::new(&self.cfg.player_data),
            password: self.cfg.password.as_deref().map(WideString::new),
            connect_data: Blob::new(&self.cfg.connect_data),
            // As the DirectPlay 9 joiner of MC-DPL8CS 4: no URL, our address as one
            // DN_ALTERNATE_ADDRESS. The host writes our URL from where our datagrams come from.
            url: None,
            guid_instance: self.table.instance(),
            guid_application: self.cfg.application_guid,
            alternate_addresses: self.alternate_addresses(),
            layout: Default::default(),
        };
        self.links.insert(host, Link { dpnid: None, state: LinkState::Member });
        self.phase = Phase::AwaitingInfo;
        tracing::debug!(%host, "join: PLAYER_CONNECT_INFO sent");
        self.seeker = None;
        self.send_msg(now, host, &SessionMessage::PlayerConnectInfo(info));
    }

    /// The DN_ALTERNATE_ADDRESS records of our PLAYER_CONNECT_INFO (MC-DPL8CS 2.2.1.2, 2.2.9):
    /// our socket's address, or when it is unspecified the interface addresses we were given,
    /// with our port; never an unspecified address, at most 12.
    pub(crate) fn alternate_addresses(&self) -> Vec<AlternateAddress> {
        let local = self.cfg.local_addr;
        let ips =
            if local.ip().is_unspecified() { self.cfg.interface_addrs.clone() } else { vec![local.ip()] };
        ips.into_iter()
            .filter(|ip| !ip.is_unspecified())
            .map(|ip| AlternateAddress(SocketAddr::new(ip, local.port())))
            .take(MAX_ALTERNATE_ADDRESSES)
            .collect()
    }

    /// Every session message a member (or joiner) receives.
    pub(crate) fn member_message(&mut self, now: Instant, peer: SocketAddr, link: Link, msg: SessionMessage) {
        let from_host = Some(peer) == self.host_addr && link.state == LinkState::Member;
        match msg {
            SessionMessage::SendConnectInfo(info) if from_host && self.phase == Phase::AwaitingInfo => {
                self.on_send_connect_info(now, peer, &info)
            }
            SessionMessage::ConnectFailed(f) if from_host && self.phase == Phase::AwaitingInfo => {
                self.connect_reply = f.reply.0;
                self.end(now, EndReason::Refused(f.result_code))
            }
            _ if self.phase == Phase::AwaitingInfo => self.stats.drop(DropReason::WrongState),
            SessionMessage::SendPlayerDpnid { dpn_id } if link.state == LinkState::Unidentified => {
                self.on_send_player_dpnid(now, peer, dpn_id)
            }
            SessionMessage::HostMigrate(m) if link.state == LinkState::Member => {
                self.on_host_migrate(now, peer, link, m)
            }
            _ if link.state != LinkState::Member => self.stats.drop(DropReason::UnknownSender),
            SessionMessage::ReqProcessCompletion(r) => self.on_req_process_completion(now, peer, r),
            SessionMessage::ProcessCompletion(c) => self.on_process_completion(peer, c),
            _ if !from_host => self.stats.drop(DropReason::WrongRole),
            SessionMessage::ResyncVersion(v) => self.table.free_through(v.version),
            SessionMessage::ConnectAttemptFailed { dpn_id } if !self.joined => {
                self.end(now, EndReason::ConnectAttemptFailed { peer: dpn_id })
            }
            SessionMessage::TerminateSession(t) => {
                self.terminate_data = t.terminate_data.0;
                if !self.terminate_data.is_empty() {
                    self.events.push_back(Event::TerminateData { data: self.terminate_data.clone() });
                }
                self.end(now, EndReason::Terminated)
            }
            SessionMessage::IntegrityCheck(c) => {
                self.send_msg(now, peer, &SessionMessage::IntegrityCheckResponse(c));
            }
            SessionMessage::ReqNameTableOp(v) => self.on_req_nametable_op(now, peer, v.version),
            SessionMessage::HostMigrateComplete => self.on_host_migrate_complete(),
            msg => match crate::table_ops::message_op(msg) {
                Some(op) => self.apply_op(now, peer, op),
                None => self.stats.drop(DropReason::WrongRole),
            },
        }
    }

    /// SEND_CONNECT_INFO (MC-DPL8CS 3.1.5.2 step 4; MS-DPDX 4.3 steps 8-10): build the table,
    /// start the path tests, acknowledge.
    ///
    /// The host is the entry flagged HOST, or SERVER in client/server (MC-DPL8CS 2.2.7).
    fn on_send_connect_info(&mut self, now: Instant, host: SocketAddr, info: &SendConnectInfo) {
        self.connect_reply.clone_from(&info.reply.0);
        let host_entry = info
            .entries
            .iter()
            .find(|e| e.flags.intersects(NameTableEntryFlags::HOST | NameTableEntryFlags::SERVER));
        let (Some(host_entry), true) = (host_entry, info.entries.iter().any(|e| e.dpnid == info.dpnid))
        else {
            self.stats.drop(DropReason::UnknownDpnid);
            return;
        };
        let host_dpnid = host_entry.dpnid;
        if !info.dpnid.is_valid() || host_dpnid == info.dpnid {
            self.stats.drop(DropReason::UnknownDpnid);
            return;
        }
        let bytes = info.entries.iter().map(crate::name_table::entry_bytes).sum();
        if !self.admission.memory.admit_table(bytes) {
            return self.table_over_budget(now, host, bytes);
        }
        self.table =
            NameTable::from_entries(info.guid_instance, info.version, &info.entries, &info.memberships);
        self.local = info.dpnid;
        self.host = host_dpnid;
        self.table.set_local(self.local);
        tracing::debug!(
            local = %self.local, host = %host_dpnid, version = info.version, players = info.entries.len(),
            "join: SEND_CONNECT_INFO, name table received"
        );
        self.desc = Some(AppDesc {
            instance: info.guid_instance,
            flags: info.flags,
            max_players: info.max_players,
            session_name: info.session_name.as_ref().map(WideString::to_string_lossy).unwrap_or_default(),
            application_reserved_data: info.application_reserved_data.0.clone(),
        });
        if let Some(l) = self.links.get_mut(&host) {
            l.dpnid = Some(host_dpnid);
        }
        self.phase = Phase::Member;
        let others: Vec<(Dpnid, String)> = self
            .table
            .players()
            .filter(|e| e.dpnid != self.local)
            .map(|e| (e.dpnid, e.name.as_ref().map(WideString::to_string_lossy).unwrap_or_default()))
            .collect();
        for (dpnid, name) in others {
            self.events.push_back(Event::PlayerAdded { dpnid, name });
        }
        // The groups and memberships the table came with (MC-DPL8CS 2.2.1.4-2.2.1.6).
        let groups: Vec<TableChange> = self
            .table
            .groups()
            .map(|g| TableChange::GroupCreated {
                group: g.dpnid,
                name: g.name.as_ref().map(WideString::to_string_lossy).unwrap_or_default(),
                requested_by: g.dpnid_owner,
            })
            .collect();
        let members = self
            .table
            .memberships()
            .into_iter()
            .map(|m| TableChange::MemberAdded { group: m.group(), player: m.player() });
        let changes: Vec<TableChange> = groups.into_iter().chain(members).collect();
        self.events.extend(changes.into_iter().map(Event::NameTable));
        // A client/server host sends no INSTRUCT_CONNECT and clients connect to nobody else
        // (MC-DPL8CS 3.1.5.1): the session's flag or a SERVER entry says so, whatever we
        // were configured as.
        let client_server = self.cfg.mode == Mode::ClientServer
            || info.flags.contains(ApplicationDescFlags::CLIENT_SERVER)
            || host_entry.flags.contains(NameTableEntryFlags::SERVER);
        if !client_server {
            self.start_path_tests(now);
        }
        self.send_msg(now, host, &SessionMessage::AckConnectInfo);
        if client_server {
            // From now on we are a client, whatever we were configured as: no inbound
            // connections, no instruction awaited.
            self.cfg.mode = Mode::ClientServer;
            self.instructed_self = true;
        }
        self.check_joined();
    }

    /// A name-table operation from the host, applied in version order (MC-DPL8CS 2.2.6). In
    /// client/server the server sends a client only what concerns it (3.5.1), so any newer
    /// version is taken. An operation that takes its version but names what we lack is counted
    /// and the table goes on; one without a version is counted as unread. One that would take
    /// the table past our memory budget ends our session (DPNERR_OUTOFMEMORY).
    pub(crate) fn apply_op(&mut self, now: Instant, host: SocketAddr, op: NameTableOp) {
        let got = crate::name_table::op_version(&op);
        let client_server = self.cfg.mode == Mode::ClientServer
            || self.desc.as_ref().is_some_and(|d| d.flags.contains(ApplicationDescFlags::CLIENT_SERVER));
        if client_server && let Some(v) = got.filter(|v| *v > self.table.version()) {
            self.table.skip_to(v.wrapping_sub(1));
        }
        let grows = crate::name_table::op_bytes(&op);
        if !self.admission.memory.admit_growth(grows) {
            return self.table_over_budget(now, host, grows);
        }
        let requested = crate::table_ops::requester(&op);
        match self.apply_reported(&op) {
            Ok(()) => {}
            Err(OpError::Version { .. }) => return self.stats.drop(DropReason::BadVersion),
            Err(OpError::Dpnid(_)) => self.stats.drop(DropReason::UnknownDpnid),
            Err(OpError::Unversioned) => {
                self.table.note_unreadable();
                return self.stats.drop(DropReason::Malformed);
            }
        }
        if let Some((requesting, context)) = requested {
            self.request_answered(requesting, context);
        }
        match op {
            NameTableOp::DestroyPlayer(d) => {
                self.lost.remove(&d.dpnid_leaving);
                self.path_tests.retain(|p| p.target != d.dpnid_leaving);
                if let Some(addr) =
                    self.links.iter().find(|(_, l)| l.dpnid == Some(d.dpnid_leaving)).map(|(a, _)| *a)
                {
                    self.close_link(now, addr);
                }
                self.check_joined();
            }
            NameTableOp::InstructConnect(i) => self.on_instruct_connect(now, i.dpnid),
            _ => {}
        }
        let version = self.table.version();
        if version.is_multiple_of(4) && self.phase == Phase::Member && self.migration.is_none() {
            let v = SessionMessage::NameTableVersion(VersionInfo { version, version_not_used: 0 });
            let host = self.host;
            self.send_to_player(now, host, &v);
        }
    }

    /// Our host's name table would take what we hold past our memory budget: we leave with
    /// DPNERR_OUTOFMEMORY rather than hold it. A member cannot refuse part of its host's
    /// table and stay consistent with the others (docs/decisions.md).
    fn table_over_budget(&mut self, now: Instant, host: SocketAddr, bytes: usize) {
        let budget = self.admission.memory.budget.clone();
        // The session's end (EndReason::OutOfMemory) says it; the figures are for debugging.
        tracing::debug!(
            %host, bytes, held = budget.held(), limit = budget.limit(),
            "the host's name table is over our memory budget: leaving (DPNERR_OUTOFMEMORY)"
        );
        self.end(now, EndReason::OutOfMemory);
    }

    /// INSTRUCT_CONNECT (MS-DPDX 4.3 steps 11-13): the joiner syncs; an older peer connects
    /// to the joiner it learnt from ADD_PLAYER, at the address its PATH_TEST came from if any.
    fn on_instruct_connect(&mut self, now: Instant, joiner: Dpnid) {
        tracing::debug!(%joiner, "INSTRUCT_CONNECT");
        if joiner == self.local {
            self.start_peer_wait(now);
            self.instructed_self = true;
            self.check_joined();
            return;
        }
        let mine = self.table.get(self.local).map(|e| e.version).unwrap_or(u32::MAX);
        let Some(entry) = self.table.get(joiner) else { return };
        if entry.version <= mine || self.links.values().any(|l| l.dpnid == Some(joiner)) {
            // The joiner is older: it connects to us, or already did.
            return;
        }
        let addr = self.path_test_from.get(&joiner).copied().or_else(|| {
            let url = entry.url.as_ref()?.url().ok()?;
            let ip = url.hostname()?.parse().ok()?;
            Some(SocketAddr::new(ip, url.port()?))
        });
        match addr.map(|a| (a, self.ep.connect(now, a))) {
            Some((a, Ok(()))) => {
                self.links.insert(a, Link { dpnid: Some(joiner), state: LinkState::Instructed });
            }
            _ => {
                let host = self.host;
                self.send_to_player(now, host, &SessionMessage::InstructedConnectFailed { dpn_id: joiner });
            }
        }
    }

    /// Our instructed connect is up: SEND_PLAYER_DPNID (MS-DPDX 4.3 step 17).
    pub(crate) fn instructed_connected(&mut self, now: Instant, peer: SocketAddr) {
        let Some(link) = self.links.get_mut(&peer).filter(|l| l.state == LinkState::Instructed) else {
            self.stats.drop(DropReason::WrongState);
            return;
        };
        link.state = LinkState::Member;
        let local = self.local;
        tracing::debug!(%peer, "instructed connect up: SEND_PLAYER_DPNID");
        self.send_msg(now, peer, &SessionMessage::SendPlayerDpnid { dpn_id: local });
    }

    /// SEND_PLAYER_DPNID on an inbound connection: only an older player of our table may
    /// connect to us; anything else is refused.
    fn on_send_player_dpnid(&mut self, now: Instant, peer: SocketAddr, dpnid: Dpnid) {
        let mine = self.table.get(self.local).map(|e| e.version).unwrap_or(0);
        let known = self.table.get(dpnid).is_some_and(|e| e.version < mine)
            && dpnid != self.host
            && !self.links.values().any(|l| l.dpnid == Some(dpnid));
        tracing::debug!(%peer, %dpnid, known, "SEND_PLAYER_DPNID");
        if !known {
            self.stats.drop(DropReason::RejectedConnection);
            self.links.remove(&peer);
            self.ep.abort(now, peer);
            return;
        }
        self.links.insert(peer, Link { dpnid: Some(dpnid), state: LinkState::Member });
        self.path_tests.retain(|p| p.target != dpnid);
        self.check_joined();
    }

    /// Joined once our INSTRUCT_CONNECT came and every older peer identified itself
    /// (MC-DPL8CS 3.1.5.2 step 6); until then [`Event::JoinPending`] says what we wait for.
    pub(crate) fn check_joined(&mut self) {
        if self.joined || self.phase != Phase::Member {
            return;
        }
        let mine = self.table.get(self.local).map(|e| e.version).unwrap_or(0);
        let waiting: Vec<Dpnid> = self
            .table
            .players()
            .filter(|e| {
                e.version < mine
                    && e.dpnid != self.host
                    && !self.links.values().any(|l| l.dpnid == Some(e.dpnid) && l.state == LinkState::Member)
            })
            .map(|e| e.dpnid)
            .collect();
        if waiting.is_empty() && self.instructed_self {
            tracing::debug!(local = %self.local, host = %self.host, "joined");
            self.joined = true;
            self.path_tests.clear();
            let mut flags = self.desc.as_ref().map(|d| d.flags).unwrap_or_else(ApplicationDescFlags::empty);
            // A host whose name-table entry says SERVER (MC-DPL8CS 2.2.1.4) runs a client/server
            // session, whatever its application description says (issue 25 item 7).
            if self.table.get(self.host).is_some_and(|e| e.flags.contains(NameTableEntryFlags::SERVER)) {
                flags |= ApplicationDescFlags::CLIENT_SERVER;
            }
            self.events.push_back(Event::Joined { local: self.local, host: self.host, flags });
            self.release_early();
        } else {
            self.events.push_back(Event::JoinPending {
                local: self.local,
                host: self.host,
                awaiting_instruction: !self.instructed_self,
                awaiting_peers: waiting,
            });
        }
    }
}
