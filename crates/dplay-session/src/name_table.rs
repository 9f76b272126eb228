//! The name table: every player of the session, its DPNID, and the versioned log of the
//! operations that built it (MC-DPL8CS 2.2.6, 2.2.7; MS-DPDX 2.2.37).
//!
//! The host allocates DPNIDs from an index and the version of the operation that adds the
//! player, XORed with `Data1` of the instance GUID (MC-DPL8CS 2.2.7). Every operation (add,
//! destroy, instruct-connect) takes the next version, so every member that applies the same
//! operations in version order holds the same table.

use std::collections::BTreeMap;

use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    AddPlayer, DestroyPlayer, DestroyReason, InstructConnect, NameTableEntry, NameTableEntryFlags,
    NameTableOp,
};
use uuid::Uuid;

/// Version and index taken by the implicit all-players group, which is never sent: the host
/// player then gets index 2 and version 2, as in the MC-DPL8CS 4 example (decision).
const ALL_PLAYERS_GROUP_VERSION: u32 = 1;

/// Why an operation was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
    /// Its version is not the table's version plus one.
    #[error("version {got} where {expected} was expected")]
    Version {
        /// The next version the table takes.
        expected: u32,
        /// The operation's version.
        got: u32,
    },
    /// It names a player the table does not hold (or adds one it already holds).
    #[error("unknown or duplicate DPNID {0}")]
    Dpnid(Dpnid),
    /// Groups and information updates are not part of this layer.
    #[error("unsupported operation")]
    Unsupported,
}

/// One member's copy of the name table (players only; groups are out of scope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameTable {
    instance: Uuid,
    version: u32,
    next_index: u32,
    players: BTreeMap<Dpnid, NameTableEntry>,
    log: BTreeMap<u32, NameTableOp>,
}

impl NameTable {
    /// An empty table of the session `instance`.
    pub fn new(instance: Uuid) -> Self {
        Self {
            instance,
            version: ALL_PLAYERS_GROUP_VERSION,
            next_index: ALL_PLAYERS_GROUP_VERSION + 1,
            players: BTreeMap::new(),
            log: BTreeMap::new(),
        }
    }

    /// A joiner's table, from DN_SEND_CONNECT_INFO's entries and version (MC-DPL8CS 3.1.5.2
    /// step 4). Group entries are skipped.
    pub fn from_entries(instance: Uuid, version: u32, entries: &[NameTableEntry]) -> Self {
        let mut table = Self::new(instance);
        table.version = version;
        for e in entries.iter().filter(|e| !e.flags.contains(NameTableEntryFlags::GROUP)) {
            table.players.insert(e.dpnid, e.clone());
        }
        table.next_index = table.players.keys().map(|d| d.index(&instance) + 1).max().unwrap_or(2);
        table
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

    /// The entries as sent in DN_SEND_CONNECT_INFO: without our LOCAL flag.
    pub fn wire_entries(&self) -> Vec<NameTableEntry> {
        self.players.values().map(wire_entry).collect()
    }

    /// Host: allocates the next DPNID and adds `entry` under it at the next version
    /// (MC-DPL8CS 3.1.5.2 step 2). Returns the operation to broadcast.
    pub fn allocate(&mut self, mut entry: NameTableEntry) -> AddPlayer {
        self.version += 1;
        entry.dpnid = Dpnid::new(self.next_index, self.version, &self.instance);
        entry.version = self.version;
        entry.version_not_used = 0;
        self.next_index += 1;
        tracing::debug!(dpnid = %entry.dpnid, version = self.version, "name table: player added");
        let op = AddPlayer { entry: wire_entry(&entry), layout: Default::default() };
        self.players.insert(entry.dpnid, entry);
        self.log.insert(self.version, NameTableOp::AddPlayer(op.clone()));
        op
    }

    /// Host: removes `dpnid` at the next version; `None` when it is not a player.
    pub fn destroy(&mut self, dpnid: Dpnid, reason: DestroyReason) -> Option<DestroyPlayer> {
        self.players.remove(&dpnid)?;
        self.version += 1;
        tracing::debug!(%dpnid, version = self.version, %reason, "name table: player destroyed");
        let op = DestroyPlayer {
            dpnid_leaving: dpnid,
            version: self.version,
            version_not_used: 0,
            destroy_reason: reason,
        };
        self.log.insert(self.version, NameTableOp::DestroyPlayer(op));
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

    /// Applies an operation received from the host: its version must be exactly the next one
    /// (MC-DPL8CS 2.2.6), and it must name a player we hold (or, for an add, one we do not).
    pub fn apply(&mut self, op: &NameTableOp) -> Result<(), OpError> {
        let got = op_version(op).ok_or(OpError::Unsupported)?;
        let expected = self.version.wrapping_add(1);
        if got != expected {
            tracing::debug!(expected, got, "name-table op out of order");
            return Err(OpError::Version { expected, got });
        }
        match op {
            NameTableOp::AddPlayer(a) => {
                if self.players.contains_key(&a.entry.dpnid) || !a.entry.dpnid.is_valid() {
                    return Err(OpError::Dpnid(a.entry.dpnid));
                }
                self.next_index = self.next_index.max(a.entry.dpnid.index(&self.instance) + 1);
                self.players.insert(a.entry.dpnid, a.entry.clone());
            }
            NameTableOp::DestroyPlayer(d) => {
                self.players.remove(&d.dpnid_leaving).ok_or(OpError::Dpnid(d.dpnid_leaving))?;
            }
            NameTableOp::InstructConnect(i) => {
                if !self.players.contains_key(&i.dpnid) {
                    return Err(OpError::Dpnid(i.dpnid));
                }
            }
            _ => return Err(OpError::Unsupported),
        }
        tracing::debug!(version = got, ?op, "name-table op applied");
        self.version = got;
        self.log.insert(got, op.clone());
        Ok(())
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

    /// What every member must agree on: the version and each player's DPNID, flags without
    /// LOCAL, version, name and data.
    pub fn fingerprint(&self) -> Vec<String> {
        let mut out = vec![format!("version {}", self.version)];
        out.extend(self.players.values().map(|e| {
            let name = e.name.as_ref().map(|n| n.to_string_lossy()).unwrap_or_default();
            let flags = e.flags.difference(NameTableEntryFlags::LOCAL).bits();
            format!("{} flags {flags:#x} v{} {name:?} data {:?}", e.dpnid, e.version, e.data.as_ref())
        }));
        out
    }
}

/// The version an operation takes, for those this layer applies.
pub(crate) fn op_version(op: &NameTableOp) -> Option<u32> {
    match op {
        NameTableOp::AddPlayer(a) => Some(a.entry.version),
        NameTableOp::DestroyPlayer(d) => Some(d.version),
        NameTableOp::InstructConnect(i) => Some(i.version),
        _ => None,
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
