//! The Group List (MC-DPL4CS 3.1.1) and its conversions to and from DPLAYI_PACKEDPLAYER
//! (CREATEGROUP's GroupInfo, 2.2.20; ENUMPLAYERSREPLY's group entries, 2.2.28) and
//! DPLAYI_SUPERPACKEDPLAYER (SUPERENUMPLAYERSREPLY's group entries, 2.2.3, 2.2.53).

use std::collections::{BTreeMap, BTreeSet};

use dplay_wire::dp4::player::{Counted, PackedPlayer, SuperPackedPlayer};
use dplay_wire::dp4::session::PlayerFlags;
use dplay_wire::{Blob, WideString};

/// One entry of the Group List (MC-DPL4CS 3.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// `Group.ID`.
    pub id: u32,
    /// The flags as announced, PL removed.
    pub flags: PlayerFlags,
    /// The system player of the instance that created it: its owner (MC-DPL4CS 3.1.5.16).
    pub system_player_id: u32,
    /// `Group.ParentID`: the containing group, 0 for a top-level group.
    pub parent_id: u32,
    /// The short name.
    pub short_name: Option<WideString>,
    /// The long name.
    pub long_name: Option<WideString>,
    /// The group's application data.
    pub group_data: Blob,
    /// The member players (MC-DPL4CS 3.1.5.20, 3.1.5.21).
    pub members: BTreeSet<u32>,
    /// The groups added to it as shortcuts (groups in groups: MC-DPL4CS 3.1.5.23, 3.1.5.24,
    /// DPLAYI_SUPERPACKEDPLAYER's ShortcutIDs, 2.2.3).
    pub shortcuts: BTreeSet<u32>,
    /// Whether this endpoint created it.
    pub local: bool,
}

impl Group {
    /// The short name as a `String`.
    pub fn name(&self) -> Option<String> {
        self.short_name.as_ref().map(WideString::to_string_lossy)
    }

    /// From CREATEGROUP's GroupInfo (MC-DPL4CS 2.2.20, 2.2.2; `id` is the message's PlayerID)
    /// or an ENUMPLAYERSREPLY group entry (2.2.28; `id` is the entry's PlayerID).
    pub fn from_packed(id: u32, p: &PackedPlayer) -> Self {
        Self {
            id,
            flags: p.flags - PlayerFlags::LOCAL,
            system_player_id: p.system_player_id,
            parent_id: p.parent_id,
            short_name: p.short_name.clone(),
            long_name: p.long_name.clone(),
            group_data: p.player_data.clone(),
            members: p.player_ids.iter().copied().collect(),
            shortcuts: BTreeSet::new(),
            local: false,
        }
    }

    /// From a SUPERPACKEDPLAYER group entry: `VersionOrSystemPlayerID` is the owner's system
    /// player, `PlayerIDs` the members (MC-DPL4CS 2.2.3).
    pub fn from_super(p: &SuperPackedPlayer) -> Self {
        Self {
            id: p.id,
            flags: p.flags - PlayerFlags::LOCAL,
            system_player_id: p.version_or_system_player_id,
            parent_id: p.parent_id.unwrap_or(0),
            short_name: p.short_name.clone(),
            long_name: p.long_name.clone(),
            group_data: p.player_data.as_ref().map(|c| c.value.clone()).unwrap_or_default(),
            members: p.player_ids.as_ref().map(|c| c.value.iter().copied().collect()).unwrap_or_default(),
            shortcuts: p.shortcut_ids.as_ref().map(|c| c.value.iter().copied().collect()).unwrap_or_default(),
            local: false,
        }
    }

    /// Flags as sent: PL on our own groups, as for players (MC-DPL4CS 2.2.2).
    fn wire_flags(&self) -> PlayerFlags {
        if self.local { self.flags | PlayerFlags::LOCAL } else { self.flags }
    }

    /// As CREATEGROUP's GroupInfo (MC-DPL4CS 2.2.20, 2.2.2): no SPData, the members as
    /// `PlayerIDs`.
    pub fn to_packed(&self, version: u32) -> PackedPlayer {
        PackedPlayer {
            flags: self.wire_flags(),
            player_id: self.id,
            system_player_id: self.system_player_id,
            player_version: version,
            parent_id: self.parent_id,
            short_name: self.short_name.clone(),
            long_name: self.long_name.clone(),
            sp_data: Blob::default(),
            player_data: self.group_data.clone(),
            player_ids: self.members.iter().copied().collect(),
            size_counts_player_ids: false,
        }
    }

    /// As SUPERENUMPLAYERSREPLY's shortcut entry for this group (MC-DPL4CS 2.2.53): the group
    /// again, with SC and its shortcuts; `None` when it has none.
    pub fn to_super_shortcuts(&self) -> Option<SuperPackedPlayer> {
        let ids: Vec<u32> = self.shortcuts.iter().copied().collect();
        (!ids.is_empty()).then(|| SuperPackedPlayer {
            shortcut_ids: Some(Counted::narrowest(ids.clone(), ids.len())),
            ..self.to_super()
        })
    }

    /// As a SUPERPACKEDPLAYER group entry (MC-DPL4CS 2.2.3): PC with the members, PI with a
    /// non-zero parent.
    pub fn to_super(&self) -> SuperPackedPlayer {
        let members: Vec<u32> = self.members.iter().copied().collect();
        SuperPackedPlayer {
            flags: self.wire_flags(),
            id: self.id,
            version_or_system_player_id: self.system_player_id,
            short_name: self.short_name.clone(),
            long_name: self.long_name.clone(),
            player_data: (!self.group_data.is_empty())
                .then(|| Counted::narrowest(self.group_data.clone(), self.group_data.len())),
            sp_data: None,
            player_ids: (!members.is_empty()).then(|| Counted::narrowest(members.clone(), members.len())),
            parent_id: (self.parent_id != 0).then_some(self.parent_id),
            shortcut_ids: None,
        }
    }
}

/// The Group List, by ID.
pub type GroupList = BTreeMap<u32, Group>;

/// Whether following `Group.ParentID` from `id` ends at a top-level group, through known groups
/// and without a loop.
pub fn parent_chain_ok(groups: &GroupList, id: u32) -> bool {
    let mut seen = BTreeSet::new();
    let mut at = id;
    while let Some(g) = groups.get(&at) {
        if !seen.insert(at) {
            return false;
        }
        if g.parent_id == 0 {
            return true;
        }
        at = g.parent_id;
    }
    false
}
