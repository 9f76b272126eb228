//! The name table: every player and group of the session, its DPNID, and the versioned log of
//! the operations that built it (MC-DPL8CS 2.2.6, 2.2.7; MS-DPDX 2.2.37).
//!
//! The host allocates DPNIDs from an index and the version of the operation that adds the
//! player or group, XORed with `Data1` of the instance GUID (MC-DPL8CS 2.2.7). Every operation
//! (add, destroy, instruct-connect, the group operations and DN_UPDATE_INFO) takes the next
//! version, so every member that applies the same operations in version order holds the same
//! table. An operation that takes its version but names something the table lacks changes
//! nothing else: the table never stops at it.

use std::collections::BTreeMap;

use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    AddPlayer, DestroyPlayer, DestroyReason, InfoFlags, InstructConnect, NameTableEntry, NameTableEntryFlags,
    NameTableMembership, NameTableOp,
};
use uuid::Uuid;

mod groups;

use groups::Groups;

/// Version and index taken by the implicit all-players group, which is never sent: the host
/// player then gets index 2 and version 2, as in the MC-DPL8CS 4 example (decision).
const ALL_PLAYERS_GROUP_VERSION: u32 = 1;

/// Why an operation was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// Its version is not the table's version plus one (old, duplicate, or ahead of a gap):
    /// nothing changed.
    #[error("version {got} where {expected} was expected")]
    Version {
        /// The next version the table takes.
        expected: u32,
        /// The operation's version.
        got: u32,
    },
    /// It took its version, but names a player or group the table does not hold (or adds one
    /// it already holds): nothing else changed, and the table goes on with the next version.
    #[error("unknown or duplicate DPNID {0}")]
    Dpnid(Dpnid),
    /// It carries no version (DN_CREATE_GROUP as MC-DPL8CS 2.2.4.2 prints it, INDEX F-15):
    /// nothing changed, and a later gap of one version is taken as this operation.
    #[error("an operation without a version")]
    Unversioned,
}

/// What an entry of the name table holds besides its name, data and URL, counted for the
/// memory budget: the record and its map node.
pub const ENTRY_OVERHEAD: usize = 128;

/// The bytes one entry holds, as [`NameTable::held_bytes`] counts them.
pub fn entry_bytes(e: &NameTableEntry) -> usize {
    let name = e.name.as_ref().map_or(0, |n| 2 * n.units().len());
    let url = e.url.as_ref().map_or(0, |u| u.as_bytes().len());
    ENTRY_OVERHEAD + name + e.data.len() + url
}

/// At most what applying `op` adds to [`NameTable::held_bytes`]: a new player or group
/// counts twice (its entry and the operation kept in the log), an information update the name
/// and data it brings and its log record, any other operation its log record.
pub(crate) fn op_bytes(op: &NameTableOp) -> usize {
    match op {
        NameTableOp::AddPlayer(a) => 2 * entry_bytes(&a.entry),
        NameTableOp::CreateGroup(c) => c.group.as_ref().map_or(ENTRY_OVERHEAD, |g| 2 * entry_bytes(g)),
        NameTableOp::UpdateInfo(u) => {
            ENTRY_OVERHEAD + u.name.as_ref().map_or(0, |n| 2 * n.units().len()) + u.data.len()
        }
        _ => ENTRY_OVERHEAD,
    }
}

/// One member's copy of the name table: players, groups and memberships.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameTable {
    instance: Uuid,
    version: u32,
    next_index: u32,
    players: BTreeMap<Dpnid, NameTableEntry>,
    groups: Groups,
    log: BTreeMap<u32, NameTableOp>,
    /// Operations from the host that we could not read: as many skipped versions are taken
    /// as theirs.
    unreadable: u32,
}

impl NameTable {
    /// An empty table of the session `instance`.
    pub fn new(instance: Uuid) -> Self {
        Self {
            instance,
            version: ALL_PLAYERS_GROUP_VERSION,
            next_index: ALL_PLAYERS_GROUP_VERSION + 1,
            players: BTreeMap::new(),
            groups: Groups::default(),
            log: BTreeMap::new(),
            unreadable: 0,
        }
    }

    /// A joiner's table, from DN_SEND_CONNECT_INFO's entries, memberships and version
    /// (MC-DPL8CS 2.2.1.4-2.2.1.6, 3.1.5.2 step 4). The all-players group's entry, if sent, is
    /// skipped; a membership naming an unknown group or player is skipped.
    pub fn from_entries(
        instance: Uuid,
        version: u32,
        entries: &[NameTableEntry],
        memberships: &[NameTableMembership],
    ) -> Self {
        let mut table = Self::new(instance);
        table.version = version;
        for e in entries.iter().filter(|e| !e.flags.contains(NameTableEntryFlags::ALL_PLAYERS_GROUP)) {
            if e.flags.contains(NameTableEntryFlags::GROUP) {
                table.groups.create(e.clone());
            } else {
                table.players.insert(e.dpnid, e.clone());
            }
        }
        for m in memberships.iter().filter(|m| table.players.contains_key(&m.player())) {
            table.groups.add(m.group(), m.player(), m.version.get());
        }
        let ids = table.players.keys().chain(table.groups.entries().map(|g| &g.dpnid));
        table.next_index = ids.map(|d| d.index(&instance) + 1).max().unwrap_or(2);
        table
    }

    /// About what the table holds, in bytes: each player's and group's entry (its name, data
    /// and URL plus a fixed [`ENTRY_OVERHEAD`]) and the operations kept for members that have
    /// not caught up. What a host charges to its memory budget for the table (docs/limits.md).
    pub fn held_bytes(&self) -> usize {
        let entries: usize = self.players.values().chain(self.groups.entries()).map(entry_bytes).sum();
        let log: usize = self
            .log
            .values()
            .map(|op| match op {
                NameTableOp::AddPlayer(a) => entry_bytes(&a.entry),
                _ => ENTRY_OVERHEAD,
            })
            .sum();
        entries + log
    }

    /// The session instance GUID.
    pub fn instance(&self) -> Uuid {
        self.instance
    }

    /// The current version: that of the last operation applied.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The player `dpnid`.
    pub fn get(&self, dpnid: Dpnid) -> Option<&NameTableEntry> {
        self.players.get(&dpnid)
    }

    /// True when `dpnid` is a player of the table.
    pub fn contains(&self, dpnid: Dpnid) -> bool {
        self.players.contains_key(&dpnid)
    }

    /// Every player, by DPNID.
    pub fn players(&self) -> impl Iterator<Item = &NameTableEntry> {
        self.players.values()
    }

    /// Number of players.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// True when the table holds no player.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// The group `dpnid`.
    pub fn group(&self, dpnid: Dpnid) -> Option<&NameTableEntry> {
        self.groups.get(dpnid)
    }

    /// Every group, by DPNID.
    pub fn groups(&self) -> impl Iterator<Item = &NameTableEntry> {
        self.groups.entries()
    }

    /// The players of the group `dpnid`, by DPNID.
    pub fn group_members(&self, dpnid: Dpnid) -> impl Iterator<Item = Dpnid> + '_ {
        self.groups.members(dpnid)
    }

    /// True when `player` is a member of `group`.
    pub fn is_member(&self, group: Dpnid, player: Dpnid) -> bool {
        self.groups.has(group, player)
    }

    /// The entries as sent in DN_SEND_CONNECT_INFO, without our LOCAL flag: the host first,
    /// then the players oldest first (as in the MC-DPL8CS 4 example), then the groups oldest
    /// first.
    pub fn wire_entries(&self) -> Vec<NameTableEntry> {
        let mut players: Vec<&NameTableEntry> = self.players.values().collect();
        players.sort_by_key(|e| (!e.flags.contains(NameTableEntryFlags::HOST), e.version, e.dpnid));
        let mut groups: Vec<&NameTableEntry> = self.groups.entries().collect();
        groups.sort_by_key(|e| (e.version, e.dpnid));
        players.into_iter().chain(groups).map(wire_entry).collect()
    }

    /// The DN_NAMETABLE_MEMBERSHIP_INFO records of DN_SEND_CONNECT_INFO, oldest first.
    pub fn memberships(&self) -> Vec<NameTableMembership> {
        self.groups.memberships()
    }

    /// The version the next operation takes.
    pub(crate) fn next_version(&self) -> u32 {
        self.version.wrapping_add(1)
    }

    /// Host: the DPNID the next player or group takes, at the next version (MC-DPL8CS 2.2.7).
    pub(crate) fn next_dpnid(&self) -> Dpnid {
        Dpnid::new(self.next_index, self.next_version(), &self.instance)
    }

    /// Host: allocates the next DPNID and adds `entry` under it at the next version
    /// (MC-DPL8CS 3.1.5.2 step 2). Returns the operation to broadcast.
    pub fn allocate(&mut self, mut entry: NameTableEntry) -> AddPlayer {
        entry.dpnid = self.next_dpnid();
        entry.version = self.next_version();
        entry.version_not_used = 0;
        let op = AddPlayer { entry: wire_entry(&entry), layout: Default::default() };
        let applied = self.apply(&NameTableOp::AddPlayer(op.clone()));
        debug_assert_eq!(applied, Ok(()));
        op
    }

    /// Host: removes `dpnid` at the next version; `None` when it is not a player.
    pub fn destroy(&mut self, dpnid: Dpnid, reason: DestroyReason) -> Option<DestroyPlayer> {
        if !self.players.contains_key(&dpnid) {
            return None;
        }
        let op = DestroyPlayer {
            dpnid_leaving: dpnid,
            version: self.next_version(),
            version_not_used: 0,
            destroy_reason: reason,
        };
        self.apply(&NameTableOp::DestroyPlayer(op)).ok()?;
        Some(op)
    }

    /// Host: records DN_INSTRUCT_CONNECT for `dpnid` at the next version (MC-DPL8CS 2.2.1.9).
    pub fn instruct(&mut self, dpnid: Dpnid) -> InstructConnect {
        self.version += 1;
        tracing::debug!(%dpnid, version = self.version, "name table: instruct connect");
        let op = InstructConnect { dpnid, version: self.version, version_not_used: 0 };
        self.log.insert(self.version, NameTableOp::InstructConnect(op));
        op
    }

    /// A DN_* message of the host that should have been a name-table operation did not
    /// parse, or carried no version: the next gap of one version is taken as it.
    pub(crate) fn note_unreadable(&mut self) {
        self.unreadable = self.unreadable.saturating_add(1).min(MAX_UNREADABLE);
    }

    /// A client/server client: the server sends it only the operations that concern it
    /// (MC-DPL8CS 3.5.1), so an operation may come at any newer version.
    pub(crate) fn skip_to(&mut self, version: u32) {
        self.version = self.version.max(version);
    }

    /// Applies an operation (received from the host, or made by us as host). Its version must
    /// be exactly the next one (MC-DPL8CS 2.2.6), or follow a gap left by as many operations
    /// we could not read. It then takes its version and is logged even when it names a player
    /// or group the table lacks ([`OpError::Dpnid`]), so that the table never stops there.
    pub fn apply(&mut self, op: &NameTableOp) -> Result<(), OpError> {
        let got = op_version(op).ok_or(OpError::Unversioned)?;
        let expected = self.next_version();
        let gap = got.wrapping_sub(expected);
        if got != expected && !(got > expected && gap <= self.unreadable) {
            tracing::debug!(expected, got, "name-table op out of order");
            return Err(OpError::Version { expected, got });
        }
        if got != expected {
            tracing::debug!(expected, got, "name-table op after {gap} unread");
            self.unreadable -= gap;
        }
        tracing::debug!(version = got, ?op, "name-table op applied");
        self.version = got;
        self.log.insert(got, op.clone());
        self.effect(op, got)
    }

    /// What `op` changes, once it took version `version`.
    fn effect(&mut self, op: &NameTableOp, version: u32) -> Result<(), OpError> {
        let ok = match op {
            NameTableOp::AddPlayer(a) => {
                let d = a.entry.dpnid;
                if self.players.contains_key(&d) || self.groups.get(d).is_some() || !d.is_valid() {
                    return Err(OpError::Dpnid(d));
                }
                self.next_index = self.next_index.max(d.index(&self.instance) + 1);
                self.players.insert(d, a.entry.clone());
                true
            }
            NameTableOp::DestroyPlayer(d) => {
                // A departing player leaves its groups on every member (MC-DPL8CS 3.4.1).
                self.groups.drop_player(d.dpnid_leaving);
                self.players.remove(&d.dpnid_leaving).is_some()
            }
            NameTableOp::InstructConnect(i) => self.players.contains_key(&i.dpnid),
            NameTableOp::CreateGroup(c) => {
                let Some(g) = &c.group else { return Err(OpError::Unversioned) };
                if self.players.contains_key(&g.dpnid) || !g.dpnid.is_valid() {
                    return Err(OpError::Dpnid(g.dpnid));
                }
                self.next_index = self.next_index.max(g.dpnid.index(&self.instance) + 1);
                let mut entry = wire_entry(g);
                entry.flags.insert(NameTableEntryFlags::GROUP);
                self.groups.create(entry)
            }
            NameTableOp::DestroyGroup(d) => self.groups.destroy(d.dpnid_group),
            NameTableOp::AddPlayerToGroup(m) => {
                self.players.contains_key(&m.dpnid_player)
                    && self.groups.add(m.dpnid_group, m.dpnid_player, version)
            }
            NameTableOp::DeletePlayerFromGroup(m) => self.groups.remove(m.dpnid_group, m.dpnid_player),
            NameTableOp::UpdateInfo(u) => {
                let entry = match self.players.get_mut(&u.dpnid) {
                    Some(e) => Some(e),
                    None => self.groups.get_mut(u.dpnid),
                };
                if let Some(e) = entry {
                    if u.info_flags.contains(InfoFlags::NAME) {
                        e.name.clone_from(&u.name);
                    }
                    if u.info_flags.contains(InfoFlags::DATA) {
                        e.data.clone_from(&u.data);
                    }
                    true
                } else {
                    false
                }
            }
        };
        if ok { Ok(()) } else { Err(OpError::Dpnid(op_target(op))) }
    }

    /// The logged operations after `version`, in order: what DN_ACK_NAMETABLE_OP carries and
    /// what a lagging peer is sent after a migration (MC-DPL8CS 3.2.5.4).
    pub fn ops_after(&self, version: u32) -> Vec<NameTableOp> {
        self.log.range(version.saturating_add(1)..).map(|(_, op)| op.clone()).collect()
    }

    /// Forgets the operations up to `version`, which every member holds (DN_RESYNC_VERSION,
    /// MC-DPL8CS 2.2.2.5).
    pub fn free_through(&mut self, version: u32) {
        self.log = self.log.split_off(&version.saturating_add(1));
    }

    /// Marks `dpnid` as the host and clears the flag elsewhere (MC-DPL8CS 2.2.1.5).
    pub fn set_host(&mut self, dpnid: Dpnid) {
        for (id, e) in &mut self.players {
            e.flags.set(NameTableEntryFlags::HOST, *id == dpnid);
        }
    }

    /// Marks `dpnid` as the local player (MC-DPL8CS 2.2.1.5).
    pub fn set_local(&mut self, dpnid: Dpnid) {
        for (id, e) in &mut self.players {
            e.flags.set(NameTableEntryFlags::LOCAL, *id == dpnid);
        }
    }

    /// The oldest player other than `except`: lowest entry version, then lowest DPNID; the
    /// host-migration candidate (MC-DPL8CS 3.2.5.4).
    pub fn oldest(&self, mut except: impl FnMut(Dpnid) -> bool) -> Option<Dpnid> {
        self.players
            .values()
            .filter(|e| !except(e.dpnid))
            .min_by_key(|e| (e.version, e.dpnid))
            .map(|e| e.dpnid)
    }

    /// What every member must agree on: the version, each player's DPNID, flags without
    /// LOCAL, version, name and data, and each group with its members.
    pub fn fingerprint(&self) -> Vec<String> {
        let mut out = vec![format!("version {}", self.version)];
        out.extend(self.players.values().map(|e| {
            let name = e.name.as_ref().map(|n| n.to_string_lossy()).unwrap_or_default();
            let flags = e.flags.difference(NameTableEntryFlags::LOCAL).bits();
            format!("{} flags {flags:#x} v{} {name:?} data {:?}", e.dpnid, e.version, e.data.as_ref())
        }));
        self.groups.fingerprint(&mut out);
        out
    }
}

/// At most this many unread operations are remembered (a hostile host cannot make us skip
/// more than this many versions at once).
const MAX_UNREADABLE: u32 = 16;

/// The version an operation takes; `None` for DN_CREATE_GROUP as printed.
pub(crate) fn op_version(op: &NameTableOp) -> Option<u32> {
    match op {
        NameTableOp::AddPlayer(a) => Some(a.entry.version),
        NameTableOp::DestroyPlayer(d) => Some(d.version),
        NameTableOp::InstructConnect(i) => Some(i.version),
        NameTableOp::CreateGroup(c) => c.group.as_ref().map(|g| g.version),
        NameTableOp::DestroyGroup(d) => Some(d.version),
        NameTableOp::AddPlayerToGroup(m) | NameTableOp::DeletePlayerFromGroup(m) => Some(m.version),
        NameTableOp::UpdateInfo(u) => Some(u.version),
    }
}

/// The player or group an operation is about.
fn op_target(op: &NameTableOp) -> Dpnid {
    match op {
        NameTableOp::AddPlayer(a) => a.entry.dpnid,
        NameTableOp::DestroyPlayer(d) => d.dpnid_leaving,
        NameTableOp::InstructConnect(i) => i.dpnid,
        NameTableOp::CreateGroup(c) => c.group.as_ref().map_or(Dpnid::NONE, |g| g.dpnid),
        NameTableOp::DestroyGroup(d) => d.dpnid_group,
        NameTableOp::AddPlayerToGroup(m) | NameTableOp::DeletePlayerFromGroup(m) => m.dpnid_player,
        NameTableOp::UpdateInfo(u) => u.dpnid,
    }
}

/// `e` as sent: without our LOCAL flag.
pub(crate) fn wire_entry(e: &NameTableEntry) -> NameTableEntry {
    let mut e = e.clone();
    e.flags.remove(NameTableEntryFlags::LOCAL);
    e
}

#[cfg(test)]
mod tests;
