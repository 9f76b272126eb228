//! The groups of the name table and their members (MC-DPL8CS 2.2.1.5, 2.2.1.6, 3.4.1): what
//! DN_CREATE_GROUP, DN_DESTROY_GROUP, DN_ADD_PLAYER_TO_GROUP and DN_DELETE_PLAYER_FROM_GROUP
//! change, and what DN_SEND_CONNECT_INFO carries as group entries and membership records.

use std::collections::BTreeMap;

use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{NameTableEntry, NameTableMembership};

/// Every group and every membership, each with the version of the operation that made it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Groups {
    entries: BTreeMap<Dpnid, NameTableEntry>,
    /// (group, player) to the version that added the player.
    members: BTreeMap<(Dpnid, Dpnid), u32>,
}

impl Groups {
    pub(crate) fn get(&self, group: Dpnid) -> Option<&NameTableEntry> {
        self.entries.get(&group)
    }

    pub(crate) fn get_mut(&mut self, group: Dpnid) -> Option<&mut NameTableEntry> {
        self.entries.get_mut(&group)
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = &NameTableEntry> {
        self.entries.values()
    }

    /// Adds a group; false when its DPNID is taken.
    pub(crate) fn create(&mut self, entry: NameTableEntry) -> bool {
        if self.entries.contains_key(&entry.dpnid) {
            return false;
        }
        self.entries.insert(entry.dpnid, entry);
        true
    }

    /// Removes a group and its memberships; false when there is no such group.
    pub(crate) fn destroy(&mut self, group: Dpnid) -> bool {
        self.members.retain(|(g, _), _| *g != group);
        self.entries.remove(&group).is_some()
    }

    /// Adds `player` to `group` at `version`; false when the group is unknown or holds it.
    pub(crate) fn add(&mut self, group: Dpnid, player: Dpnid, version: u32) -> bool {
        if !self.entries.contains_key(&group) || self.members.contains_key(&(group, player)) {
            return false;
        }
        self.members.insert((group, player), version);
        true
    }

    /// Removes `player` from `group`; false when it was not a member.
    pub(crate) fn remove(&mut self, group: Dpnid, player: Dpnid) -> bool {
        self.members.remove(&(group, player)).is_some()
    }

    /// A player left the session: it leaves every group. Returns those groups.
    pub(crate) fn drop_player(&mut self, player: Dpnid) -> Vec<Dpnid> {
        let left: Vec<Dpnid> = self.members.keys().filter(|(_, p)| *p == player).map(|(g, _)| *g).collect();
        self.members.retain(|(_, p), _| *p != player);
        left
    }

    /// The members of `group`, by DPNID.
    pub(crate) fn members(&self, group: Dpnid) -> impl Iterator<Item = Dpnid> + '_ {
        self.members.range((group, Dpnid(0))..=(group, Dpnid(u32::MAX))).map(|((_, p), _)| *p)
    }

    /// True when `player` is in `group`.
    pub(crate) fn has(&self, group: Dpnid, player: Dpnid) -> bool {
        self.members.contains_key(&(group, player))
    }

    /// The DN_NAMETABLE_MEMBERSHIP_INFO records, oldest first.
    pub(crate) fn memberships(&self) -> Vec<NameTableMembership> {
        let mut out: Vec<(u32, Dpnid, Dpnid)> = self.members.iter().map(|((g, p), v)| (*v, *g, *p)).collect();
        out.sort_unstable();
        out.into_iter().map(|(v, g, p)| NameTableMembership::new(p, g, v)).collect()
    }

    /// What every member must agree on: each group's entry and its members.
    pub(crate) fn fingerprint(&self, out: &mut Vec<String>) {
        for e in self.entries.values() {
            let name = e.name.as_ref().map(|n| n.to_string_lossy()).unwrap_or_default();
            let members: Vec<String> = self.members(e.dpnid).map(|p| p.to_string()).collect();
            out.push(format!(
                "group {} owner {} flags {:#x} v{} {name:?} data {:?} members [{}]",
                e.dpnid,
                e.dpnid_owner,
                e.flags.bits(),
                e.version,
                e.data.as_ref(),
                members.join(" ")
            ));
        }
    }
}
