//! Host migration (MC-DPL8CS 3.2.5.4; MS-DPDX 3.1.5.4): the oldest remaining peer takes over,
//! sends HOST_MIGRATE, collects NAMETABLE_VERSION, fetches what it misses with
//! REQ_NAMETABLE_OP / ACK_NAMETABLE_OP, brings lagging peers up to date, removes the old host
//! and ends with RESYNC_VERSION and HOST_MIGRATE_COMPLETE.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    AckNameTableOp, ApplicationDescFlags, DestroyReason, HostMigrate, NameTableOp, SessionMessage,
    VersionInfo,
};

use crate::config::Mode;
use crate::event::{EndReason, Event};
use crate::name_table::OpError;
use crate::session::{Link, Phase, Session};
use crate::stats::DropReason;
use crate::table_ops::op_message;

/// A migration under way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Migration {
    old_host: Dpnid,
    /// New host only: each member's reported version, `None` until its NAMETABLE_VERSION.
    versions: BTreeMap<Dpnid, Option<u32>>,
    /// New host only: the member asked for the operations we miss.
    requested: Option<Dpnid>,
    fetched: bool,
    /// Member only: the peers whose HOST_MIGRATE we accepted, and where they are.
    claims: BTreeMap<Dpnid, SocketAddr>,
}

impl Migration {
    /// A member left during the migration.
    pub(crate) fn forget(&mut self, dpnid: Dpnid) {
        self.versions.remove(&dpnid);
        if self.requested == Some(dpnid) {
            self.requested = None;
        }
    }
}

impl Session {
    /// Member: the host is gone. Migrate when the session allows it, else leave.
    pub(crate) fn host_lost(&mut self, now: Instant) {
        let migrate =
            self.desc.as_ref().is_some_and(|d| d.flags.contains(ApplicationDescFlags::MIGRATE_HOST));
        if !migrate || !self.joined || self.cfg.mode != Mode::PeerToPeer {
            return self.end(now, EndReason::HostLost);
        }
        let lost_host = self.host;
        match self.migration.as_mut() {
            // The peer that was taking over is gone too: another that claimed the host
            // (HOST_MIGRATE) takes its place, else we look for the next one.
            Some(m) => {
                m.claims.remove(&lost_host);
                let oldest = m.claims.iter().map(|(d, a)| (*d, *a)).min_by_key(|(d, _)| {
                    self.table.get(*d).map(|e| (e.version, *d)).unwrap_or((u32::MAX, *d))
                });
                let old = m.old_host;
                if let Some((claimant, addr)) = oldest {
                    self.host = claimant;
                    self.host_addr = Some(addr);
                    self.table.set_host(claimant);
                    let version = self.table.version();
                    let v = SessionMessage::NameTableVersion(VersionInfo { version, version_not_used: 0 });
                    self.send_msg(now, addr, &v);
                    return;
                }
                self.host = old;
            }
            None => {
                self.migration = Some(Migration {
                    old_host: self.host,
                    versions: BTreeMap::new(),
                    requested: None,
                    fetched: false,
                    claims: BTreeMap::new(),
                })
            }
        }
        self.choose_new_host(now);
    }

    /// Member during a migration: a peer is gone; it may have been the expected new host.
    pub(crate) fn migration_peer_lost(&mut self, now: Instant) {
        self.choose_new_host(now);
    }

    /// The oldest player still reachable takes over; if that is us, we do.
    fn choose_new_host(&mut self, now: Instant) {
        let Some(old) = self.migration.as_ref().map(|m| m.old_host) else { return };
        if self.host != old || self.phase != Phase::Member {
            return;
        }
        let lost = &self.lost;
        if self.table.oldest(|d| d == old || lost.contains(&d)) == Some(self.local) {
            self.become_host(now, old);
        }
    }

    fn become_host(&mut self, now: Instant, old: Dpnid) {
        self.phase = Phase::Host;
        self.host = self.local;
        self.host_addr = None;
        self.table.set_host(self.local);
        self.reported.clear();
        let members: Vec<(Dpnid, SocketAddr)> = self
            .member_routes(None)
            .into_iter()
            .filter(|(d, _)| *d != old && self.table.contains(*d))
            .collect();
        let msg =
            SessionMessage::HostMigrate(HostMigrate { dpnid_old_host: old, dpnid_new_host: self.local });
        for (_, addr) in &members {
            self.send_msg(now, *addr, &msg);
        }
        if let Some(m) = self.migration.as_mut() {
            m.versions = members.iter().map(|(d, _)| (*d, None)).collect();
        }
        self.migration_progress(now);
    }

    /// New host: moves the migration on once every member reported its version.
    pub(crate) fn migration_progress(&mut self, now: Instant) {
        if self.phase != Phase::Host {
            return;
        }
        let Some(m) = self.migration.as_mut() else { return };
        for (d, v) in m.versions.iter_mut() {
            if v.is_none() {
                *v = self.reported.get(d).copied();
            }
        }
        if m.versions.values().any(Option::is_none) || m.requested.is_some() {
            return;
        }
        let ours = self.table.version();
        let newest = m.versions.iter().filter_map(|(d, v)| v.map(|v| (v, *d))).max();
        if let Some((_, d)) = newest.filter(|(v, _)| *v > ours && !m.fetched) {
            m.requested = Some(d);
            m.fetched = true;
            let req = SessionMessage::ReqNameTableOp(VersionInfo { version: ours, version_not_used: 0 });
            self.send_to_player(now, d, &req);
            return;
        }
        let Some(m) = self.migration.take() else { return };
        self.finish_migration(now, &m);
    }

    fn finish_migration(&mut self, now: Instant, m: &Migration) {
        let ours = self.table.version();
        // A member that became reachable during the migration hears HOST_MIGRATE now; its
        // NAMETABLE_VERSION then brings it up to date (`on_nametable_version`).
        let late: Vec<(Dpnid, SocketAddr)> =
            self.member_routes(None).into_iter().filter(|(d, _)| !m.versions.contains_key(d)).collect();
        let migrate = SessionMessage::HostMigrate(HostMigrate {
            dpnid_old_host: m.old_host,
            dpnid_new_host: self.local,
        });
        for (_, addr) in late {
            self.send_msg(now, addr, &migrate);
        }
        for (d, v) in &m.versions {
            let behind = v.unwrap_or(ours);
            if behind < ours {
                for msg in self.table.ops_after(behind).into_iter().map(op_message) {
                    self.send_to_player(now, *d, &msg);
                }
            }
        }
        let gone: Vec<Dpnid> = self
            .table
            .players()
            .map(|e| e.dpnid)
            .filter(|d| *d != self.local && self.route(*d).is_none())
            .collect();
        // Gone, the old host included: NORMAL, as MS-DPDX 2.2.15 allows only it and
        // HOSTDESTROYEDPLAYER.
        for d in gone {
            self.destroy_player(now, d, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL);
        }
        self.lost.clear();
        let version = self.table.version();
        let members = self.member_routes(None);
        let resync = SessionMessage::ResyncVersion(VersionInfo { version, version_not_used: 0 });
        for (_, addr) in &members {
            self.send_msg(now, *addr, &resync);
            self.send_msg(now, *addr, &SessionMessage::HostMigrateComplete);
        }
        self.host_since = version;
        // Every member now holds `version`: later RESYNC_VERSIONs start from it and never go
        // back below it (MC-DPL8CS 2.2.2.5).
        self.resync = self.resync.max(version);
        self.events.push_back(Event::HostMigrated { new_host: self.local });
    }

    /// New host: ACK_NAMETABLE_OP with the operations we missed.
    pub(crate) fn on_ack_nametable_op(&mut self, now: Instant, from: Option<Dpnid>, ack: &AckNameTableOp) {
        let expected = self.migration.as_ref().and_then(|m| m.requested);
        if from.is_none() || expected != from {
            return self.stats.drop(DropReason::WrongState);
        }
        for op in &ack.ops {
            if op_version_le(op, self.table.version()) {
                continue;
            }
            match self.apply_reported(op) {
                Ok(()) | Err(OpError::Dpnid(_)) => {}
                Err(OpError::Unversioned) => self.table.note_unreadable(),
                Err(OpError::Version { .. }) => self.stats.drop(DropReason::BadVersion),
            }
        }
        if let Some(m) = self.migration.as_mut() {
            m.requested = None;
        }
        self.migration_progress(now);
    }

    /// Member: HOST_MIGRATE from the peer that takes over.
    pub(crate) fn on_host_migrate(&mut self, now: Instant, peer: SocketAddr, link: Link, m: HostMigrate) {
        if self.phase != Phase::Member
            || link.dpnid != Some(m.dpnid_new_host)
            || !self.table.contains(m.dpnid_new_host)
        {
            return self.stats.drop(DropReason::WrongRole);
        }
        // The old host must be one we know is gone or going: ours, the one our migration
        // started from, or one whose link we lost (a migration may restart when the peer
        // taking over goes too).
        let old = m.dpnid_old_host;
        let migrating_from = self.migration.as_ref().map(|m| m.old_host);
        let gone = self.lost.contains(&old) || !self.table.contains(old);
        if old != self.host && Some(old) != migrating_from && !gone {
            return self.stats.drop(DropReason::WrongState);
        }
        if self.migration.is_none() {
            self.migration = Some(Migration {
                old_host: m.dpnid_old_host,
                versions: BTreeMap::new(),
                requested: None,
                fetched: false,
                claims: BTreeMap::new(),
            });
        }
        if let Some(mig) = self.migration.as_mut() {
            mig.claims.insert(m.dpnid_new_host, peer);
        }
        self.host = m.dpnid_new_host;
        self.host_addr = Some(peer);
        self.table.set_host(m.dpnid_new_host);
        let version = self.table.version();
        self.send_msg(
            now,
            peer,
            &SessionMessage::NameTableVersion(VersionInfo { version, version_not_used: 0 }),
        );
    }

    /// Member: REQ_NAMETABLE_OP from the new host: the operations after its version.
    pub(crate) fn on_req_nametable_op(&mut self, now: Instant, peer: SocketAddr, version: u32) {
        let ops = self.table.ops_after(version);
        self.send_msg(
            now,
            peer,
            &SessionMessage::AckNameTableOp(AckNameTableOp { ops, layout: Default::default() }),
        );
    }

    /// Member: HOST_MIGRATE_COMPLETE.
    pub(crate) fn on_host_migrate_complete(&mut self) {
        if self.migration.take().is_none() {
            return self.stats.drop(DropReason::WrongState);
        }
        self.lost.retain(|d| self.table.contains(*d));
        self.events.push_back(Event::HostMigrated { new_host: self.host });
    }
}

fn op_version_le(op: &NameTableOp, version: u32) -> bool {
    crate::name_table::op_version(op).is_some_and(|v| v <= version)
}
