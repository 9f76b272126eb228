//! What a host holds for joiners and for how long (issue 14; docs/limits.md): the join
//! deadline, the caps on joiners not yet members, the limits on names and data, the deadline of
//! an integrity check, the failed-join policy against a member that never connects to joiners,
//! and, on the joiner's side, the report of an older peer that never connected. The specs set
//! none of these; each is a decision in docs/decisions.md.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use dplay_wire::Blob;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    DestroyReason, PlayerConnectInfo, ReqIntegrityCheck, ResultCode, SessionMessage, TerminateSession,
};
use dplay_wire::log_limit::LogLimit;

use crate::bans::{Bans, DPNERR_HOSTREJECTEDCONNECTION};
use crate::config::Mode;
use crate::memory::Memory;
use crate::session::{LinkState, Phase, Session};

/// `DPNERR_INVALIDPARAM` (E_INVALIDARG): a name or data over its limit. MC-DPL8CS 2.2.1.3 lists
/// no code for it; this is the one DirectPlay's API returns for a bad parameter (decision).
pub const DPNERR_INVALIDPARAM: ResultCode = ResultCode::DPNERR_INVALIDPARAM;

/// The state of these rules, one per session.
#[derive(Debug, Default)]
pub(crate) struct Admission {
    /// Host: joiners' connections that are not members yet: since when, and the deadline of
    /// their next step (PLAYER_CONNECT_INFO, then membership).
    pending: BTreeMap<SocketAddr, (Instant, Instant)>,
    /// Host: joiners sent INSTRUCT_CONNECT, and until when their join counts as under way.
    joining: BTreeMap<Dpnid, Instant>,
    /// Host: the deadline of each integrity check, by target (MC-DPL8CS 3.2.5.3).
    checks: BTreeMap<Dpnid, Instant>,
    /// Host: the failed joins counted against each member: when, and the joiner's IP.
    strikes: BTreeMap<Dpnid, Vec<(Instant, IpAddr)>>,
    /// Joiner: when to report the older peers that have not connected.
    report_at: Option<Instant>,
    /// When each source was last logged.
    logged: LogLimit,
    /// The host's memory budget and the session layer's accounts on it.
    pub(crate) memory: Memory,
    /// Host: the names and addresses refused at join (issue 17).
    bans: Bans,
}

impl Admission {
    /// The rules' state, with a memory budget of `memory_budget` bytes.
    pub(crate) fn new(memory_budget: usize) -> Self {
        Self { memory: Memory::new(memory_budget), ..Self::default() }
    }

    /// The earliest deadline of these rules.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let pending = self.pending.values().map(|(_, at)| *at).min();
        let checks = self.checks.values().min().copied();
        [pending, checks, self.report_at].into_iter().flatten().min()
    }

    /// Joiners not yet members.
    pub(crate) fn pending_count(&self) -> usize {
        self.pending.len()
    }
}

impl Session {
    /// Host: the names and addresses refused at join from now on; players already in the
    /// session stay (the caller removes them with [`Session::remove_player`] if it wants).
    pub fn set_bans(&mut self, bans: Bans) {
        self.admission.bans = bans;
    }

    /// The names and addresses refused at join.
    pub fn bans(&self) -> &Bans {
        &self.admission.bans
    }

    /// Host: refuses a banned joiner with DPNERR_HOSTREJECTEDCONNECTION, the code of an
    /// application that declines a connection (MC-DPL8CS 2.2.1.3; docs/decisions.md, "Bans").
    pub(crate) fn check_bans(
        &mut self,
        peer: SocketAddr,
        info: &PlayerConnectInfo,
    ) -> Result<(), ResultCode> {
        let name = info.name.as_ref().map(dplay_wire::WideString::to_string_lossy);
        if !self.admission.bans.refuses(peer.ip(), name.as_deref()) {
            return Ok(());
        }
        self.stats.refused_banned += 1;
        // The JoinRefused event reports it: a log line here would say it twice.
        tracing::debug!(%peer, "join refused: banned (DPNERR_HOSTREJECTEDCONNECTION)");
        Err(DPNERR_HOSTREJECTEDCONNECTION)
    }

    /// Logs a refusal or drop concerning `source`, once per source per `log_interval`.
    pub(crate) fn log_refusal(&mut self, now: Instant, source: SocketAddr, what: &str) {
        let interval = self.cfg.limits.log_interval;
        if self.admission.logged.may_log(now, source.ip(), interval) {
            tracing::warn!(%source, "{what} (further ones from this address are not logged for {interval:?})");
        }
    }

    /// Host: a joiner's transport connection is up. It must be a member within
    /// `join_timeout`; past the caps on joiners not yet members, the oldest (of its IP, then
    /// of all) is dropped.
    pub(crate) fn admit_connection(&mut self, now: Instant, peer: SocketAddr) {
        let same_ip = self.admission.pending.keys().filter(|a| a.ip() == peer.ip()).count();
        if same_ip >= self.cfg.limits.max_pending_joins_per_ip() {
            let oldest = self.oldest_pending(Some(peer.ip()));
            self.drop_joiner(now, oldest, "too many joins under way from one address");
        }
        if self.admission.pending.len() >= self.cfg.limits.max_pending_joins() {
            let oldest = self.oldest_pending(None);
            self.drop_joiner(now, oldest, "too many joins under way");
        }
        let l = &self.cfg.limits;
        self.admission.pending.insert(peer, (now, now + l.connect_info_timeout.min(l.join_timeout)));
        self.ep.set_message_limit(peer, self.cfg.limits.max_join_message);
    }

    /// Would the joiner of `info` take what we hold for others past `memory_budget`? Its
    /// name-table entry is counted twice: in the table, and in the ADD_PLAYER kept until every
    /// member has it. Its connection's frames are already charged by the transport.
    pub(crate) fn over_budget(&self, info: &PlayerConnectInfo) -> bool {
        let name = info.name.as_ref().map_or(0, |n| 2 * n.units().len());
        let url = info.url.as_ref().map_or(0, |u| u.as_bytes().len());
        let entry = crate::name_table::ENTRY_OVERHEAD + name + info.data.len() + url;
        !self.admission.memory.fits_entry(2 * entry)
    }

    fn oldest_pending(&self, ip: Option<IpAddr>) -> Option<SocketAddr> {
        self.admission
            .pending
            .iter()
            .filter(|(a, _)| ip.is_none_or(|ip| a.ip() == ip))
            .min_by_key(|(_, (since, _))| *since)
            .map(|(a, _)| *a)
    }

    /// Host: the joiner at `peer` sent its PLAYER_CONNECT_INFO: it has until `join_timeout`
    /// after its connection came up to be a member.
    pub(crate) fn connect_info_came(&mut self, peer: SocketAddr) {
        let join_timeout = self.cfg.limits.join_timeout;
        if let Some((since, at)) = self.admission.pending.get_mut(&peer) {
            *at = *since + join_timeout;
        }
    }

    /// Host: the joiner at `peer` is a member now, or its connection is gone.
    pub(crate) fn admission_done(&mut self, peer: SocketAddr) {
        if self.admission.pending.remove(&peer).is_some() {
            let max = self.cfg.transport.max_message_size;
            self.ep.set_message_limit(peer, max);
        }
    }

    /// Host: drops a joiner that is not a member yet: its connection is aborted and, when it
    /// already has a DPNID, it leaves the table.
    fn drop_joiner(&mut self, now: Instant, peer: Option<SocketAddr>, why: &str) {
        let Some(peer) = peer else { return };
        self.admission.pending.remove(&peer);
        self.indication_aborted(peer);
        let Some(link) = self.links.get(&peer).copied() else { return };
        if !matches!(link.state, LinkState::Joining | LinkState::AwaitingAck | LinkState::Refused) {
            return;
        }
        self.stats.join_timeouts += 1;
        self.log_refusal(now, peer, why);
        self.links.remove(&peer);
        self.ep.abort(now, peer);
        // The host removes it (MS-DPDX 2.2.15 allows NORMAL and HOSTDESTROYEDPLAYER only).
        if let Some(dpnid) = link.dpnid.filter(|_| link.state == LinkState::AwaitingAck) {
            self.destroy_player(now, dpnid, DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER);
        }
    }

    /// Checks a joiner's PLAYER_CONNECT_INFO against the limits on names and data.
    pub(crate) fn check_limits(&self, info: &PlayerConnectInfo) -> Result<(), &'static str> {
        let l = &self.cfg.limits;
        let units = |s: &Option<dplay_wire::WideString>| s.as_ref().map_or(0, |s| s.units().len());
        if units(&info.name) > l.max_name_units {
            return Err("player name over its limit");
        }
        if units(&info.password) > l.max_name_units {
            return Err("password over its limit");
        }
        if info.data.len() > l.max_player_data {
            return Err("player data over its limit");
        }
        if info.connect_data.len() > l.max_app_data {
            return Err("connect data over its limit");
        }
        Ok(())
    }

    /// Checks our own session description against the limits before hosting.
    pub(crate) fn check_own_limits(&self) -> bool {
        let l = &self.cfg.limits;
        let units = |s: &str| s.encode_utf16().count();
        units(&self.cfg.session_name) <= l.max_name_units
            && units(&self.cfg.player_name) <= l.max_name_units
            && self.cfg.player_data.len() <= l.max_player_data
            && self.cfg.enum_reply_data.len() <= l.max_app_data
            && self.cfg.connect_reply_data.len() <= l.max_app_data
    }

    /// Host: INSTRUCT_CONNECT went out for `joiner`: its join is under way for `join_timeout`.
    pub(crate) fn note_instructed(&mut self, now: Instant, joiner: Dpnid) {
        let until = now + self.cfg.limits.join_timeout;
        self.admission.joining.retain(|_, at| *at > now);
        self.admission.joining.insert(joiner, until);
    }

    /// Host: is `dpnid` a joiner whose join is still under way?
    pub(crate) fn is_joining(&self, now: Instant, dpnid: Dpnid) -> bool {
        self.admission.joining.get(&dpnid).is_some_and(|at| *at > now)
    }

    /// Host: an integrity check of `target` started (MC-DPL8CS 3.2.5.3).
    pub(crate) fn note_check(&mut self, now: Instant, target: Dpnid) {
        self.admission.checks.insert(target, now + self.cfg.limits.integrity_timeout);
    }

    /// Host: the check of `target` ended (answered, or the target left).
    pub(crate) fn check_done(&mut self, target: Dpnid) {
        self.admission.checks.remove(&target);
    }

    /// Host policy for a join that failed because `member` did not connect to `joiner`
    /// (INSTRUCTED_CONNECT_FAILED, or the joiner's REQ_INTEGRITY_CHECK answered by the member):
    /// the failure counts against `member`, by the joiner's IP address. Once joiners from
    /// `evict_after_failed_joins` addresses failed within `failed_join_window`, the member is
    /// removed (DN_TERMINATE_SESSION, DESTROY_PLAYER) and the joiner stays: returns true. Else
    /// the caller removes the joiner, as MC-DPL8CS 3.1.5.2 and 3.2.5.3 do.
    pub(crate) fn blame_member(&mut self, now: Instant, member: Dpnid, joiner: Dpnid) -> bool {
        self.stats.failed_joins += 1;
        let limit = self.cfg.limits.evict_after_failed_joins;
        let window = self.cfg.limits.failed_join_window;
        let Some(joiner_addr) = self.links.iter().find(|(_, l)| l.dpnid == Some(joiner)).map(|(a, _)| *a)
        else {
            return false;
        };
        let strikes = self.admission.strikes.entry(member).or_default();
        strikes.retain(|(at, _)| now.saturating_duration_since(*at) < window);
        strikes.push((now, joiner_addr.ip()));
        let mut ips: Vec<IpAddr> = strikes.iter().map(|(_, ip)| *ip).collect();
        ips.sort_unstable();
        ips.dedup();
        self.log_refusal(now, joiner_addr, "a join failed: an existing member did not connect to the joiner");
        if limit == 0 || ips.len() < usize::try_from(limit).unwrap_or(usize::MAX) || member == self.local {
            return false;
        }
        self.stats.members_evicted += 1;
        if let Some(addr) = self.route(member) {
            tracing::warn!(%member, %addr, failed = ips.len(), "member removed: joiners could not reach it");
            let msg = SessionMessage::TerminateSession(TerminateSession { terminate_data: Blob::default() });
            self.send_msg(now, addr, &msg);
            self.close_link(now, addr);
        }
        self.destroy_player(now, member, DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER);
        true
    }

    /// Host: a member left the table: its records go with it.
    pub(crate) fn forget_member(&mut self, dpnid: Dpnid) {
        self.admission.strikes.remove(&dpnid);
        self.admission.joining.remove(&dpnid);
        self.admission.checks.remove(&dpnid);
    }

    /// Joiner: our INSTRUCT_CONNECT came; older peers have `peer_connect_timeout` to connect.
    pub(crate) fn start_peer_wait(&mut self, now: Instant) {
        if self.cfg.mode == Mode::PeerToPeer && !self.joined {
            self.admission.report_at = Some(now + self.cfg.limits.peer_connect_timeout);
        }
    }

    /// The deadlines of these rules that are due.
    pub(crate) fn admission_timeout(&mut self, now: Instant) {
        let late: Vec<SocketAddr> =
            self.admission.pending.iter().filter(|(_, (_, at))| *at <= now).map(|(a, _)| *a).collect();
        for peer in late {
            self.drop_joiner(now, Some(peer), "join deadline passed: dropped");
        }
        let silent: Vec<Dpnid> =
            self.admission.checks.iter().filter(|(_, at)| **at <= now).map(|(d, _)| *d).collect();
        for target in silent {
            self.admission.checks.remove(&target);
            if self.integrity.remove(&target).is_some() && self.phase == Phase::Host {
                // The target answered nothing: it is lost, and the requester stays.
                self.stats.integrity_timeouts += 1;
                if let Some(addr) = self.route(target) {
                    self.links.remove(&addr);
                    self.ep.abort(now, addr);
                }
                // Gone, as a target we cannot reach (NORMAL, MS-DPDX 2.2.15; decision).
                self.destroy_player(now, target, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL);
                self.report_lost(target);
            }
        }
        if self.admission.report_at.is_some_and(|at| at <= now) {
            self.admission.report_at = None;
            self.report_missing_peers(now);
        }
    }

    /// Joiner: every older peer that has not connected to us is reported to the host with
    /// REQ_INTEGRITY_CHECK, as a lost connection is (MC-DPL8CS 3.2.5.3; decision): the host
    /// either removes it or removes us.
    fn report_missing_peers(&mut self, now: Instant) {
        if self.joined || self.phase != Phase::Member {
            return;
        }
        let mine = self.table.get(self.local).map(|e| e.version).unwrap_or(0);
        let missing: Vec<Dpnid> = self
            .table
            .players()
            .filter(|e| e.version < mine && e.dpnid != self.host)
            .filter(|e| {
                !self.links.values().any(|l| l.dpnid == Some(e.dpnid) && l.state == LinkState::Member)
            })
            .map(|e| e.dpnid)
            .collect();
        let host = self.host;
        for target in missing {
            tracing::info!(%target, "an older peer did not connect: reported to the host");
            let req = ReqIntegrityCheck { req_context: self.next_context(), dpnid_target: target };
            self.send_to_player(now, host, &SessionMessage::ReqIntegrityCheck(req));
        }
    }
}
