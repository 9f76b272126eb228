//! Leaving (MS-DPDX 3.1.5.3-3.1.5.6; MC-DPL8CS 3.2.5.1-3.2.5.3): a graceful leave, the host's
//! forced removal and TERMINATE_SESSION, lost connections with the integrity check, and the
//! host's name-table version bookkeeping (NAMETABLE_VERSION, RESYNC_VERSION).

use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::DisconnectReason;
use dplay_wire::Blob;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    DestroyReason, IntegrityCheck, ReqIntegrityCheck, SessionMessage, TerminateSession, VersionInfo,
};

use crate::config::Mode;
use crate::event::{CommandError, EndReason, Event};
use crate::session::{Link, LinkState, Phase, Session};
use crate::stats::DropReason;

impl Session {
    /// Leaves the session gracefully: every connection ends with END_STREAM after what is
    /// queued (MS-DPDX 3.1.5.3). The host leaving lets the oldest peer take over when the
    /// session allows migration (MS-DPDX 3.1.5.4). [`crate::Event::SessionEnded`] follows at
    /// once, but the closes are still under way: keep driving the session (datagrams in, timers,
    /// datagrams out) until [`Session::is_finished`] before dropping the socket,
    /// or the peers see a lost connection instead of a graceful leave.
    pub fn leave(&mut self, now: Instant) {
        self.seeker = None;
        if self.phase == Phase::Idle {
            self.phase = Phase::Ended;
            return;
        }
        self.end(now, EndReason::Left);
    }

    /// True once the session ended ([`Phase::Ended`]) and every transport connection finished
    /// closing, so the caller may stop driving it and drop its socket. After [`Session::leave`]
    /// each connection sends END_STREAM after what is queued, and the graceful close ends once
    /// both sides' END_STREAMs are acknowledged (MS-DPDX 3.1.5.3; MC-DPL8R 3.1.4.3): a few round
    /// trips on a working link (5-20 ms on loopback in `examples/host_and_join.rs`). A
    /// connection whose peer stopped answering ends when its retries run out instead (tens of
    /// seconds with the default `max_retries` and `retry_max_interval`). A closed connection still answers the peer's retries for a while
    /// (`linger`); that tail is not waited for.
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Ended && self.ep.active_connection_count() == 0
    }

    /// Host: removes a player (MS-DPDX 3.1.5.5; MC-DPL8CS 3.2.5.2): TERMINATE_SESSION to it,
    /// DESTROY_PLAYER to the others.
    pub fn remove_player(&mut self, now: Instant, dpnid: Dpnid) -> Result<(), CommandError> {
        self.remove_player_with_data(now, dpnid, &[])
    }

    /// [`Session::remove_player`], telling the player why: DN_TERMINATE_SESSION carries
    /// `terminate_data` (MC-DPL8CS 2.2.2.1: "data passed from the server/host application that
    /// describes why the client or the peer is being terminated"; DestroyPeer's
    /// `pvDestroyData`), which the player reads in [`Session::terminate_data`].
    pub fn remove_player_with_data(
        &mut self,
        now: Instant,
        dpnid: Dpnid,
        terminate_data: &[u8],
    ) -> Result<(), CommandError> {
        if self.phase != Phase::Host || dpnid == self.local {
            return Err(CommandError::WrongState);
        }
        let addr = self.route(dpnid).ok_or(CommandError::UnknownPlayer)?;
        let msg =
            SessionMessage::TerminateSession(TerminateSession { terminate_data: Blob::new(terminate_data) });
        self.send_msg(now, addr, &msg);
        self.close_link(now, addr);
        self.destroy_player(now, dpnid, DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER);
        Ok(())
    }

    /// Host: ends the session for everyone with TERMINATE_SESSION (MC-DPL8CS 2.2.2.1), which
    /// carries `terminate_data` to every member ([`Session::terminate_data`] there).
    pub fn terminate_session(&mut self, now: Instant, terminate_data: &[u8]) -> Result<(), CommandError> {
        if self.phase != Phase::Host {
            return Err(CommandError::WrongState);
        }
        let msg =
            SessionMessage::TerminateSession(TerminateSession { terminate_data: Blob::new(terminate_data) });
        for (_, addr) in self.member_routes(None) {
            self.send_msg(now, addr, &msg);
        }
        self.end(now, EndReason::Left);
        Ok(())
    }

    /// Host: a connection ended. A member is destroyed, reason NORMAL (MS-DPDX 2.2.15, 3.1.5.3,
    /// 3.1.5.6); our own application hears CONNECTIONLOST when it did not end gracefully.
    pub(crate) fn host_link_lost(&mut self, now: Instant, link: Option<Link>, reason: DisconnectReason) {
        let Some(Link { dpnid: Some(dpnid), state }) = link else { return };
        if state == LinkState::Refused || !self.table.contains(dpnid) {
            return;
        }
        // MS-DPDX 2.2.15 allows only NORMAL and HOSTDESTROYEDPLAYER: a player whose connection
        // ended, gracefully or not, is leaving.
        self.destroy_player(now, dpnid, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL);
        if !matches!(reason, DisconnectReason::Closed | DisconnectReason::ClosedByPeer) {
            self.report_lost(dpnid);
        }
    }

    /// Host: the member at `peer` closed its connection gracefully (its END_STREAM came,
    /// MC-DPL8R 3.1.4.3; MS-DPDX 3.1.5.3): it is gone now, not when our own END_STREAM has
    /// been acknowledged, which a departed Windows client never does (issue 25 item 5: 14.4 s
    /// of retries with the player still counted).
    pub(crate) fn member_leaving(&mut self, now: Instant, peer: SocketAddr) {
        let Some(link) = self.links.get(&peer).copied() else { return };
        if link.state != LinkState::Member {
            return;
        }
        if let Some(dpnid) = link.dpnid {
            self.destroy_player(now, dpnid, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL);
        }
    }

    /// Host: the player just destroyed as NORMAL on the wire (MS-DPDX 2.2.15) was lost, not
    /// gone by its own wish: our application's [`Event::PlayerRemoved`] says
    /// DPNDESTROYPLAYERREASON_CONNECTIONLOST, as DirectPlay's own host reports it locally
    /// (issue 25 item 6; docs/decisions.md).
    pub(crate) fn report_lost(&mut self, dpnid: Dpnid) {
        let removed = self.events.iter_mut().rev().find_map(|e| match e {
            Event::PlayerRemoved { dpnid: d, reason } if *d == dpnid => Some(reason),
            _ => None,
        });
        if let Some(reason) = removed {
            *reason = DestroyReason::DPNDESTROYPLAYERREASON_CONNECTIONLOST;
        }
    }

    /// Member: a connection ended. The host's loss starts a migration or ends the session; a
    /// peer's loss asks the host for an integrity check (MC-DPL8CS 3.2.5.3); a failed
    /// instructed connect is reported (MS-DPDX 3.1.5.2).
    pub(crate) fn member_link_lost(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        link: Option<Link>,
        reason: DisconnectReason,
    ) {
        let Some(Link { dpnid: Some(dpnid), state }) = link else { return };
        if state == LinkState::Closing || !self.table.contains(dpnid) {
            return;
        }
        if state == LinkState::Instructed && reason == DisconnectReason::ConnectTimeout {
            let host = self.host;
            self.send_to_player(now, host, &SessionMessage::InstructedConnectFailed { dpn_id: dpnid });
            return;
        }
        self.lost.insert(dpnid);
        if Some(peer) == self.host_addr || dpnid == self.host {
            return self.host_lost(now);
        }
        if self.migration.is_some() {
            return self.migration_peer_lost(now);
        }
        if self.cfg.mode == Mode::PeerToPeer {
            let req = ReqIntegrityCheck { req_context: self.next_context(), dpnid_target: dpnid };
            let host = self.host;
            self.send_to_player(now, host, &SessionMessage::ReqIntegrityCheck(req));
        }
    }

    /// Host: REQ_INTEGRITY_CHECK (MC-DPL8CS 3.2.5.3): ask the target, or destroy it at once
    /// when we cannot reach it either.
    pub(crate) fn on_req_integrity_check(&mut self, now: Instant, from: Option<Dpnid>, target: Dpnid) {
        let Some(requester) = from else { return };
        if target == self.local {
            return self.stats.drop(DropReason::UnknownDpnid);
        }
        if !self.table.contains(target) {
            // The target is gone already: it left, closing its connection to the requester
            // before our DESTROY_PLAYER reached it. The usual race of a leave, not a bad
            // message, so not counted (issue 25 item 18; docs/decisions.md); the requester
            // hears the DESTROY_PLAYER.
            tracing::debug!(%target, "integrity check of a player already gone");
            return;
        }
        let check = SessionMessage::IntegrityCheck(IntegrityCheck { dpnid_requesting: requester });
        if self.send_to_player(now, target, &check) {
            self.integrity.insert(target, requester);
            self.note_check(now, target);
        } else if self.migration.is_none() {
            self.destroy_player(now, target, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL);
            self.report_lost(target);
        }
    }

    /// Host: INTEGRITY_CHECK_RESPONSE: the target is alive, so the requester goes
    /// (MC-DPL8CS 3.2.5.3; MS-DPDX 3.1.5.6). A requester still joining failed its join: the
    /// failed-join policy may remove the target instead (docs/limits.md).
    pub(crate) fn on_integrity_check_response(
        &mut self,
        now: Instant,
        from: Option<Dpnid>,
        requester: Dpnid,
    ) {
        let Some(target) = from else { return };
        if self.integrity.get(&target) != Some(&requester) {
            return self.stats.drop(DropReason::WrongState);
        }
        self.integrity.remove(&target);
        self.check_done(target);
        if self.is_joining(now, requester) && self.blame_member(now, target, requester) {
            return;
        }
        if let Some(addr) = self.route(requester) {
            let msg = SessionMessage::TerminateSession(TerminateSession { terminate_data: Blob::default() });
            self.send_msg(now, addr, &msg);
            self.close_link(now, addr);
        }
        self.destroy_player(now, requester, DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER);
    }

    /// Host: NAMETABLE_VERSION. When the oldest version every member holds advances,
    /// RESYNC_VERSION lets everyone free older operations (MC-DPL8CS 2.2.6; INDEX F-17).
    pub(crate) fn on_nametable_version(&mut self, now: Instant, from: Option<Dpnid>, version: u32) {
        let Some(from) = from else { return };
        if self.migration.is_some() {
            // During a migration a member may be ahead of us (MC-DPL8CS 3.2.5.4).
            self.reported.insert(from, version);
            return self.migration_progress(now);
        }
        if version > self.table.version() {
            return self.stats.drop(DropReason::BadVersion);
        }
        self.reported.insert(from, version);
        // A member still behind the version at which we took over missed our migration (it
        // followed another claimant first): it gets the operations it misses (MC-DPL8CS 3.2.5.4).
        if version < self.host_since {
            let ops = self.table.ops_after(version);
            let contiguous = ops.first().and_then(crate::name_table::op_version) == Some(version + 1);
            for msg in ops.into_iter().filter(|_| contiguous).map(crate::table_ops::op_message) {
                self.send_to_player(now, from, &msg);
            }
        }
        let members = self.member_routes(None);
        let oldest =
            members.iter().map(|(d, _)| self.reported.get(d).copied().unwrap_or(0)).min().unwrap_or(0);
        if oldest > self.resync {
            self.resync = oldest;
            self.table.free_through(oldest);
            let msg = SessionMessage::ResyncVersion(VersionInfo { version: oldest, version_not_used: 0 });
            for (_, addr) in members {
                self.send_msg(now, addr, &msg);
            }
        }
    }
}
