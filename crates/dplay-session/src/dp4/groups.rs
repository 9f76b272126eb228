//! Groups: creating them (the host allocates the ID, a member asks with REQUESTGROUPID),
//! deleting them, membership, group data and names, and the Group List a joiner receives
//! (MC-DPL4CS 3.1.4.6-3.1.4.9, 3.1.4.12, 3.1.4.13, 3.1.5.7, 3.1.5.11, 3.1.5.15-3.1.5.17,
//! 3.1.5.20, 3.1.5.21, 3.2.5.4). Multicast-server routing (MS) is not supported: these go to
//! every instance directly. Shortcuts (groups in groups) received are kept and relayed to
//! joiners in the name table (3.1.5.23, 3.1.5.24, 2.2.53); we send none (3.1.4.14, 3.1.4.15).

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp4::join::{
    DPERR_NONEWPLAYERS, PlayerInfoMessage, RequestGroupFlags, RequestGroupId, RequestPlayerReply,
};
use dplay_wire::dp4::message::Dp4Body;
use dplay_wire::dp4::nametable::{DataChanged, GroupGroupIds, NameChanged, PlayerGroupIds};
use dplay_wire::dp4::player::SuperPackedPlayer;
use dplay_wire::dp4::session::{PlayerFlags, SecurityDesc};
use dplay_wire::{Blob, WideString};

use crate::dp4::event::{CommandError, Dp4Event, DropReason, GroupEvent, JoinError, Timer, Via};
use crate::dp4::group_table::{Group, GroupList, parent_chain_ok};
use crate::dp4::ids::IdAllocator;
use crate::dp4::session::{Dp4Session, Role};

impl Dp4Session {
    /// The Group List (MC-DPL4CS 3.1.1).
    pub fn groups(&self) -> &GroupList {
        &self.groups
    }

    /// The members of group `id`, if we know the group (MC-DPL4CS 3.1.5.20).
    pub fn group_members(&self, id: u32) -> Option<impl Iterator<Item = u32> + '_> {
        self.groups.get(&id).map(|g| g.members.iter().copied())
    }

    /// The group whose short name is `name` (the lowest ID if several are).
    pub fn group_named(&self, name: &str) -> Option<u32> {
        self.groups.values().find(|g| g.name().as_deref() == Some(name)).map(|g| g.id)
    }

    fn in_session(&self) -> Result<(), CommandError> {
        if matches!(self.role, Role::Member | Role::Host) { Ok(()) } else { Err(CommandError::WrongState) }
    }

    /// Creates a top-level group named `name`: the host allocates its ID itself, a member sends
    /// REQUESTGROUPID to the host and waits for REQUESTPLAYERREPLY under the Reliable API
    /// timer; the group is then announced with CREATEGROUP to every instance (MC-DPL4CS
    /// 3.1.4.6, 2.2.48, 2.2.20). Ends in [`GroupEvent::Created`] (with `local`) or
    /// [`GroupEvent::CreateFailed`].
    pub fn create_group(&mut self, now: Instant, name: &str) -> Result<(), CommandError> {
        self.in_session()?;
        self.check_player_name(name)?;
        if self.creating.is_some() || self.creating_group.is_some() {
            return Err(CommandError::WrongState);
        }
        if self.role == Role::Host {
            match self.ids.as_mut().and_then(IdAllocator::allocate) {
                Some(id) => self.create_local_group(id, name),
                None => self.events.push_back(Dp4Event::Group(GroupEvent::CreateFailed(JoinError::Refused(
                    DPERR_NONEWPLAYERS,
                )))),
            }
            return Ok(());
        }
        let host = self.host_stream().ok_or(CommandError::WrongState)?;
        self.creating_group = Some(name.to_owned());
        // GL (0x8), as PL is sent for a player (Wine's dplayx tests); ignored by the host.
        let body = Dp4Body::RequestGroupId(RequestGroupId { flags: RequestGroupFlags::LOCAL });
        self.send_body(Via::Tcp, host, body);
        self.timers.set(Timer::ReliableApi, now + self.config.reliable_api_timeout);
        Ok(())
    }

    /// Adds our new group and sends CREATEGROUP to every other instance (MC-DPL4CS 2.2.20).
    pub(crate) fn create_local_group(&mut self, id: u32, name: &str) {
        let Some(me) = self.me else { return };
        let group = Group {
            id,
            flags: PlayerFlags::empty(),
            system_player_id: me,
            parent_id: 0,
            short_name: Some(WideString::new(name)),
            long_name: None,
            group_data: Blob::default(),
            members: Default::default(),
            shortcuts: Default::default(),
            local: true,
        };
        let body = Dp4Body::CreateGroup(PlayerInfoMessage {
            id_to: 0,
            player_id: id,
            group_id: 0,
            password_offset: 0,
            player_info: group.to_packed(u32::from(self.config.version)),
            reserved: None,
        });
        self.groups.insert(id, group);
        self.send_to_instances(&body, None);
        self.events.push_back(Dp4Event::Group(GroupEvent::Created {
            id,
            name: Some(name.to_owned()),
            local: true,
        }));
    }

    /// REQUESTPLAYERREPLY to our REQUESTGROUPID (MC-DPL4CS 3.1.4.6, 2.2.50).
    pub(crate) fn on_request_group_reply(&mut self, m: &RequestPlayerReply) {
        self.timers.cancel(Timer::ReliableApi);
        let name = self.creating_group.take().unwrap_or_default();
        let taken = self.players.contains_key(&m.id) || self.groups.contains_key(&m.id);
        match m.result {
            0 if !taken && m.id != 0 => self.create_local_group(m.id, &name),
            0 => {
                self.drop_msg(DropReason::Unexpected, "REQUESTPLAYERREPLY with an ID in use");
                self.events.push_back(Dp4Event::Group(GroupEvent::CreateFailed(JoinError::Refused(
                    DPERR_NONEWPLAYERS,
                ))));
            }
            e => self.events.push_back(Dp4Event::Group(GroupEvent::CreateFailed(JoinError::Refused(e)))),
        }
    }

    /// Host: DPSP_MSG_REQUESTGROUPID from a joined instance: a new ID from the same allocator as
    /// player IDs (MC-DPL4CS 2.2.48, 3.2.5.4 note). The spec gives no refusal rule for groups;
    /// DPERR_NONEWPLAYERS when the IDs run out.
    pub(crate) fn on_request_group_id(&mut self, reply_to: SocketAddr) {
        if self.role != Role::Host {
            return self.drop_msg(DropReason::Unexpected, "REQUESTGROUPID while not hosting");
        }
        if self.instance_at(reply_to).is_none() {
            return self.drop_msg(DropReason::UnknownPlayer, "REQUESTGROUPID from no instance");
        }
        let id = self.ids.as_mut().and_then(IdAllocator::allocate);
        let body = Dp4Body::RequestPlayerReply(RequestPlayerReply {
            id: id.unwrap_or(0),
            sec_desc: SecurityDesc::default(),
            result: if id.is_some() { 0 } else { DPERR_NONEWPLAYERS },
            sspi_provider: None,
            capi_provider: None,
        });
        self.send_body(Via::Tcp, reply_to, body);
    }

    /// Adds player `player` to group `group` and sends ADDPLAYERTOGROUP to every instance
    /// (MC-DPL4CS 3.1.4.12, 2.2.12). Adding a member again sends nothing.
    pub fn add_player_to_group(&mut self, group: u32, player: u32) -> Result<(), CommandError> {
        self.in_session()?;
        if !self.players.contains_key(&player) {
            return Err(CommandError::UnknownPlayer(player));
        }
        let g = self.groups.get_mut(&group).ok_or(CommandError::UnknownGroup(group))?;
        if g.members.insert(player) {
            let body = Dp4Body::AddPlayerToGroup(PlayerGroupIds {
                player_id: player,
                group_id: group,
                ..Default::default()
            });
            self.send_to_instances(&body, None);
        }
        Ok(())
    }

    /// Removes player `player` from group `group` and sends DELETEPLAYERFROMGROUP to every
    /// instance (MC-DPL4CS 3.1.4.13, 2.2.26).
    pub fn delete_player_from_group(&mut self, group: u32, player: u32) -> Result<(), CommandError> {
        self.in_session()?;
        let g = self.groups.get_mut(&group).ok_or(CommandError::UnknownGroup(group))?;
        if !g.members.remove(&player) {
            return Err(CommandError::UnknownPlayer(player));
        }
        let body = Dp4Body::DeletePlayerFromGroup(PlayerGroupIds {
            player_id: player,
            group_id: group,
            ..Default::default()
        });
        self.send_to_instances(&body, None);
        Ok(())
    }

    /// Sets the data of group `group` and sends GROUPDATACHANGED to every instance
    /// (MC-DPL4CS 3.1.4.8, 2.2.31). Only its owner may (3.1.5.16).
    pub fn set_group_data(&mut self, group: u32, data: &[u8]) -> Result<(), CommandError> {
        self.in_session()?;
        self.check_player_data(data)?;
        let g = self.groups.get_mut(&group).filter(|g| g.local).ok_or(CommandError::UnknownGroup(group))?;
        g.group_data = Blob::new(data);
        let body = Dp4Body::GroupDataChanged(DataChanged { id_to: 0, id: group, data: Blob::new(data) });
        self.send_to_instances(&body, None);
        Ok(())
    }

    /// Renames our group `group` and sends GROUPNAMECHANGED to every instance (MC-DPL4CS
    /// 3.1.4.9, 2.2.32).
    pub fn set_group_name(
        &mut self,
        group: u32,
        short: Option<&str>,
        long: Option<&str>,
    ) -> Result<(), CommandError> {
        self.in_session()?;
        for name in [short, long].into_iter().flatten() {
            self.check_player_name(name)?;
        }
        let g = self.groups.get_mut(&group).filter(|g| g.local).ok_or(CommandError::UnknownGroup(group))?;
        let (short_name, long_name) = (short.map(WideString::new), long.map(WideString::new));
        g.short_name = short_name.clone();
        g.long_name = long_name.clone();
        let body = Dp4Body::GroupNameChanged(NameChanged { id_to: 0, id: group, short_name, long_name });
        self.send_to_instances(&body, None);
        Ok(())
    }

    /// Deletes our group `group` and sends DELETEGROUP to every instance (MC-DPL4CS 3.1.4.7,
    /// 2.2.23).
    pub fn delete_group(&mut self, group: u32) -> Result<(), CommandError> {
        self.in_session()?;
        if !self.groups.get(&group).is_some_and(|g| g.local) {
            return Err(CommandError::UnknownGroup(group));
        }
        self.remove_group(group, false);
        let body = Dp4Body::DeleteGroup(PlayerGroupIds { group_id: group, ..Default::default() });
        self.send_to_instances(&body, None);
        Ok(())
    }

    /// Removes a group and the groups inside it, reporting each when `report`.
    fn remove_group(&mut self, id: u32, report: bool) {
        let mut gone = vec![id];
        let mut i = 0;
        while let Some(&at) = gone.get(i) {
            let children = self.groups.values().filter(|g| g.parent_id == at && !gone.contains(&g.id));
            let children: Vec<u32> = children.map(|g| g.id).collect();
            gone.extend(children);
            i += 1;
        }
        for g in &gone {
            self.groups.values_mut().for_each(|parent| {
                parent.shortcuts.remove(g);
            });
        }
        for g in gone {
            if self.groups.remove(&g).is_some() {
                if let Some(ids) = self.ids.as_mut() {
                    ids.release(g);
                }
                if report {
                    self.events.push_back(Dp4Event::Group(GroupEvent::Deleted { id: g }));
                }
            }
        }
    }

    /// A player left: out of every group; a system player's groups go with its instance
    /// (MC-DPL4CS 3.1.5.14, 3.1.5.16 "When a DirectPlay client is destroyed, so are any groups
    /// that it created").
    pub(crate) fn forget_in_groups(&mut self, id: u32, system: bool) {
        self.groups.values_mut().for_each(|g| {
            g.members.remove(&id);
        });
        if system {
            let owned: Vec<u32> =
                self.groups.values().filter(|g| g.system_player_id == id).map(|g| g.id).collect();
            owned.into_iter().for_each(|g| self.remove_group(g, true));
        }
    }

    /// Whether a known remote instance owns a group it announces.
    fn remote_owner(&self, system_player_id: u32) -> bool {
        self.players.get(&system_player_id).is_some_and(|s| s.is_system() && !s.local)
    }

    /// DPSP_MSG_CREATEGROUP: a new entry in the Group List (MC-DPL4CS 3.1.5.11). The owner is
    /// GroupInfo's SystemPlayerID if that is a known instance, else the sending instance; the
    /// parent must be a known group; members we do not know are left out.
    pub(crate) fn on_create_group(&mut self, reply_to: SocketAddr, m: &PlayerInfoMessage) {
        if !matches!(self.role, Role::Member | Role::Host) {
            return self.drop_msg(DropReason::Unexpected, "CREATEGROUP while not joined");
        }
        if self.groups.contains_key(&m.player_id) {
            return;
        }
        let mut g = Group::from_packed(m.player_id, &m.player_info);
        if let Err(e) = self.check_names(g.short_name.as_ref(), g.long_name.as_ref()) {
            return self.drop_msg(DropReason::TooLong, &e.to_string());
        }
        if let Err(e) = self.check_player_data(&g.group_data) {
            return self.drop_msg(DropReason::TooLong, &e.to_string());
        }
        if g.id == 0 || self.players.contains_key(&g.id) {
            return self.drop_msg(DropReason::Unexpected, "CREATEGROUP with a player's ID");
        }
        if !self.remote_owner(g.system_player_id) {
            // 2.2.20 does not say what GroupInfo's SystemPlayerID holds: fall back on the sender.
            match self.instance_at(reply_to).filter(|&s| self.remote_owner(s)) {
                Some(sender) => g.system_player_id = sender,
                None => {
                    return self.drop_msg(DropReason::UnknownPlayer, "CREATEGROUP of an unknown instance");
                }
            }
        }
        if g.parent_id != 0 && !self.groups.contains_key(&g.parent_id) {
            return self.drop_msg(DropReason::UnknownPlayer, "CREATEGROUP in an unknown group");
        }
        let before = g.members.len();
        g.members.retain(|p| self.players.contains_key(p));
        if g.members.len() != before {
            self.drop_msg(DropReason::UnknownPlayer, "CREATEGROUP member unknown");
        }
        let (id, name) = (g.id, g.name());
        self.groups.insert(id, g);
        self.events.push_back(Dp4Event::Group(GroupEvent::Created { id, name, local: false }));
    }

    /// The Group List from a joiner's name table: SUPERENUMPLAYERSREPLY's group and shortcut
    /// entries or ENUMPLAYERSREPLY's group PACKEDPLAYERs (MC-DPL4CS 3.1.5.7, 2.2.53, 2.2.28),
    /// after its players: entries clashing with a player, members we do not know and parents
    /// that are unknown or loop are dropped and counted.
    pub(crate) fn load_groups(&mut self, entries: Vec<Group>) {
        self.groups.clear();
        for mut g in entries {
            if g.id == 0 || self.players.contains_key(&g.id) {
                self.drop_msg(DropReason::Malformed, "name table group with a player's ID");
                continue;
            }
            let within = self
                .check_names(g.short_name.as_ref(), g.long_name.as_ref())
                .and_then(|()| self.check_player_data(&g.group_data));
            if let Err(err) = within {
                self.drop_msg(DropReason::TooLong, &err.to_string());
                continue;
            }
            let before = g.members.len();
            g.members.retain(|p| self.players.contains_key(p));
            if g.members.len() != before {
                self.drop_msg(DropReason::UnknownPlayer, "name table group member unknown");
            }
            // A group listed again among the shortcut entries keeps its first record and adds
            // the shortcuts.
            let shortcuts = std::mem::take(&mut g.shortcuts);
            self.groups.entry(g.id).or_insert(g).shortcuts.extend(shortcuts);
        }
        let ids: Vec<u32> = self.groups.keys().copied().collect();
        for g in self.groups.values_mut() {
            g.shortcuts.retain(|c| ids.contains(c) && *c != g.id);
        }
        let bad: Vec<u32> =
            self.groups.keys().copied().filter(|&id| !parent_chain_ok(&self.groups, id)).collect();
        for id in bad {
            self.drop_msg(DropReason::Malformed, "name table group parent unknown or looping");
            if let Some(g) = self.groups.get_mut(&id) {
                g.parent_id = 0;
            }
        }
    }

    /// SUPERENUMPLAYERSREPLY's group entries for a joiner (MC-DPL4CS 2.2.53, 3.2.5.6).
    pub(crate) fn super_groups(&self) -> Vec<SuperPackedPlayer> {
        self.groups.values().map(Group::to_super).collect()
    }

    /// SUPERENUMPLAYERSREPLY's shortcut entries: each group with shortcuts again, with SC
    /// (MC-DPL4CS 2.2.53; docs/decisions.md).
    pub(crate) fn super_shortcuts(&self) -> Vec<SuperPackedPlayer> {
        self.groups.values().filter_map(Group::to_super_shortcuts).collect()
    }

    /// DPSP_MSG_ADDSHORTCUTTOGROUP: `ChildGroupID` goes into `ParentGroupID` (MC-DPL4CS
    /// 3.1.5.23, 2.2.13). Both must be known, and different.
    pub(crate) fn on_add_shortcut_to_group(&mut self, m: &GroupGroupIds) {
        let (child, parent) = (m.child_group_id, m.parent_group_id);
        if !self.known_group(parent, "ADDSHORTCUTTOGROUP to an unknown group")
            || !self.known_group(child, "ADDSHORTCUTTOGROUP of an unknown group")
        {
            return;
        }
        if child == parent {
            return self.drop_msg(DropReason::Malformed, "ADDSHORTCUTTOGROUP of a group to itself");
        }
        if self.groups.get_mut(&parent).is_some_and(|g| g.shortcuts.insert(child)) {
            self.events.push_back(Dp4Event::Group(GroupEvent::ShortcutAdded { group: parent, child }));
        }
    }

    /// DPSP_MSG_DELETEGROUPFROMGROUP: `ChildGroupID` leaves `ParentGroupID` (MC-DPL4CS
    /// 3.1.5.24, 2.2.24).
    pub(crate) fn on_delete_group_from_group(&mut self, m: &GroupGroupIds) {
        let (child, parent) = (m.child_group_id, m.parent_group_id);
        if !self.known_group(parent, "DELETEGROUPFROMGROUP of an unknown group") {
            return;
        }
        if self.groups.get_mut(&parent).is_some_and(|g| g.shortcuts.remove(&child)) {
            self.events.push_back(Dp4Event::Group(GroupEvent::ShortcutRemoved { group: parent, child }));
        } else {
            self.drop_msg(DropReason::UnknownPlayer, "DELETEGROUPFROMGROUP of a group not in it");
        }
    }

    /// The group a change names, if we know it.
    fn known_group(&mut self, id: u32, what: &str) -> bool {
        let known = matches!(self.role, Role::Member | Role::Host) && self.groups.contains_key(&id);
        if !known {
            self.drop_msg(DropReason::UnknownPlayer, what);
        }
        known
    }

    /// DPSP_MSG_DELETEGROUP: `GroupID` leaves the Group List, with the groups inside it
    /// (MC-DPL4CS 3.1.5.15, 2.2.23).
    pub(crate) fn on_delete_group(&mut self, m: &PlayerGroupIds) {
        if self.known_group(m.group_id, "DELETEGROUP of an unknown group") {
            self.remove_group(m.group_id, true);
        }
    }

    /// DPSP_MSG_ADDPLAYERTOGROUP (MC-DPL4CS 3.1.5.20, 2.2.12).
    pub(crate) fn on_add_player_to_group(&mut self, m: &PlayerGroupIds) {
        if !self.known_group(m.group_id, "ADDPLAYERTOGROUP to an unknown group") {
            return;
        }
        if !self.players.contains_key(&m.player_id) {
            return self.drop_msg(DropReason::UnknownPlayer, "ADDPLAYERTOGROUP of an unknown player");
        }
        if self.groups.get_mut(&m.group_id).is_some_and(|g| g.members.insert(m.player_id)) {
            self.events.push_back(Dp4Event::Group(GroupEvent::PlayerAdded {
                group: m.group_id,
                player: m.player_id,
            }));
        }
    }

    /// DPSP_MSG_DELETEPLAYERFROMGROUP (MC-DPL4CS 3.1.5.21, 2.2.26).
    pub(crate) fn on_delete_player_from_group(&mut self, m: &PlayerGroupIds) {
        if !self.known_group(m.group_id, "DELETEPLAYERFROMGROUP of an unknown group") {
            return;
        }
        if self.groups.get_mut(&m.group_id).is_some_and(|g| g.members.remove(&m.player_id)) {
            self.events.push_back(Dp4Event::Group(GroupEvent::PlayerRemoved {
                group: m.group_id,
                player: m.player_id,
            }));
        } else {
            self.drop_msg(DropReason::UnknownPlayer, "DELETEPLAYERFROMGROUP of a non-member");
        }
    }

    /// DPSP_MSG_GROUPDATACHANGED (MC-DPL4CS 3.1.5.16, 2.2.31).
    pub(crate) fn on_group_data_changed(&mut self, m: DataChanged) {
        if !self.known_group(m.id, "GROUPDATACHANGED of an unknown group") {
            return;
        }
        if let Err(e) = self.check_player_data(&m.data) {
            return self.drop_msg(DropReason::TooLong, &e.to_string());
        }
        if let Some(g) = self.groups.get_mut(&m.id) {
            g.group_data = m.data.clone();
        }
        self.events.push_back(Dp4Event::Group(GroupEvent::DataChanged { id: m.id, data: m.data.0 }));
    }

    /// DPSP_MSG_GROUPNAMECHANGED (MC-DPL4CS 3.1.5.17, 2.2.32).
    pub(crate) fn on_group_name_changed(&mut self, m: NameChanged) {
        if !self.known_group(m.id, "GROUPNAMECHANGED of an unknown group") {
            return;
        }
        if let Err(e) = self.check_names(m.short_name.as_ref(), m.long_name.as_ref()) {
            return self.drop_msg(DropReason::TooLong, &e.to_string());
        }
        if let Some(g) = self.groups.get_mut(&m.id) {
            g.short_name = m.short_name.clone();
            g.long_name = m.long_name.clone();
        }
        self.events.push_back(Dp4Event::Group(GroupEvent::NameChanged {
            id: m.id,
            short_name: m.short_name.as_ref().map(WideString::to_string_lossy),
            long_name: m.long_name.as_ref().map(WideString::to_string_lossy),
        }));
    }

    /// Whether a message to `id` is for us: a group with one of our players in it
    /// (docs/decisions.md "DirectPlay 4 groups").
    pub(crate) fn group_has_local_member(&self, id: u32) -> bool {
        self.groups
            .get(&id)
            .is_some_and(|g| g.members.iter().any(|m| self.players.get(m).is_some_and(|p| p.local)))
    }

    /// The instances (stream, datagram) holding the remote members of group `id`, each once.
    pub(crate) fn group_targets(&self, id: u32) -> Option<Vec<(SocketAddr, SocketAddr)>> {
        let g = self.groups.get(&id)?;
        let systems: std::collections::BTreeSet<u32> = g
            .members
            .iter()
            .filter_map(|m| self.players.get(m).filter(|p| !p.local).map(|p| p.system_player_id))
            .collect();
        Some(systems.iter().filter_map(|s| self.players.get(s).and_then(|p| p.addrs)).collect())
    }
}
