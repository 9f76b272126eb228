//! Groups and information updates (MC-DPL8CS 2.2.4, 2.2.5, 3.4, 3.5): the commands, the
//! requests a member sends the host (DN_REQ_CREATE_GROUP, DN_REQ_DESTROY_GROUP,
//! DN_REQ_ADD_PLAYER_TO_GROUP, DN_REQ_DELETE_PLAYER_FROM_GROUP, DN_REQ_UPDATE_INFO), and the
//! host's answer: the operation at the next version to every member, echoing
//! `dwPacketContext` and naming the requester in `dpnidRequesting`.
//!
//! Only the host changes the table (3.4.5.2): on the host a command is applied at once; on a
//! member it is checked against our copy, sent as a request, and completes
//! ([`Event::Completed`]) when the host's operation comes back. In client/server only
//! information updates travel (3.4.5.1: no group transactions on the wire); a server's groups
//! are its own.

use std::time::Instant;

use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    CreateGroup, DestroyGroup, GroupFlags, GroupMember, InfoFlags, NameTableEntry, NameTableEntryFlags,
    NameTableOp, ReqCreateGroup, ReqGroupMember, ReqUpdateInfo, SessionMessage, UpdateInfo,
};
use dplay_wire::{Blob, WideString};

use crate::completion::Waiter;
use crate::config::Mode;
use crate::event::{CommandError, Event, SendFlags};
use crate::session::{Phase, Session};
use crate::stats::DropReason;

/// At most this many groups: a host holds them for every member.
pub const MAX_GROUPS: usize = 1024;

/// What a command or request asks of the host.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ask {
    Create { flags: GroupFlags, name: Option<WideString>, data: Option<Blob> },
    Destroy { group: Dpnid },
    Add { group: Dpnid, player: Dpnid },
    Remove { group: Dpnid, player: Dpnid },
    Update { dpnid: Dpnid, name: Option<WideString>, data: Option<Blob> },
}

fn info_flags(name: &Option<WideString>, data: &Option<Blob>) -> InfoFlags {
    let mut f = InfoFlags::empty();
    f.set(InfoFlags::NAME, name.is_some());
    f.set(InfoFlags::DATA, data.is_some());
    f
}

/// The fields a DN_REQ_* / DN_*_INFO carries for `flags`: the name and data only when flagged.
fn flagged(flags: InfoFlags, name: Option<WideString>, data: Blob) -> (Option<WideString>, Option<Blob>) {
    (name.filter(|_| flags.contains(InfoFlags::NAME)), flags.contains(InfoFlags::DATA).then_some(data))
}

impl Session {
    /// Creates a group named `name` with `data` (MC-DPL8CS 3.4.5.2); `autodestruct` deletes
    /// it when its last member leaves (DPNGROUP_AUTODESTRUCT). Returns the context of
    /// [`Event::Completed`]; the group appears as [`crate::TableChange::GroupCreated`].
    pub fn create_group(
        &mut self,
        now: Instant,
        name: &str,
        data: &[u8],
        autodestruct: bool,
    ) -> Result<u32, CommandError> {
        let mut flags = GroupFlags::empty();
        flags.set(GroupFlags::AUTODESTRUCT, autodestruct);
        let ask = Ask::Create { flags, name: Some(WideString::new(name)), data: Some(Blob::new(data)) };
        self.submit(now, ask)
    }

    /// Destroys the group `group` (MC-DPL8CS 3.4.5.2).
    pub fn destroy_group(&mut self, now: Instant, group: Dpnid) -> Result<u32, CommandError> {
        self.submit(now, Ask::Destroy { group })
    }

    /// Adds `player` to `group` (MC-DPL8CS 3.4.5.2).
    pub fn add_to_group(&mut self, now: Instant, group: Dpnid, player: Dpnid) -> Result<u32, CommandError> {
        self.submit(now, Ask::Add { group, player })
    }

    /// Removes `player` from `group` (MC-DPL8CS 3.4.5.2).
    pub fn remove_from_group(
        &mut self,
        now: Instant,
        group: Dpnid,
        player: Dpnid,
    ) -> Result<u32, CommandError> {
        self.submit(now, Ask::Remove { group, player })
    }

    /// Changes the name and/or data of our own player or of a group (MC-DPL8CS 3.5.5.1);
    /// `None` leaves a field as it is. Others hear [`crate::TableChange::InfoUpdated`].
    pub fn set_info(
        &mut self,
        now: Instant,
        dpnid: Dpnid,
        name: Option<&str>,
        data: Option<&[u8]>,
    ) -> Result<u32, CommandError> {
        let ask = Ask::Update { dpnid, name: name.map(WideString::new), data: data.map(Blob::new) };
        self.submit(now, ask)
    }

    /// Sends `data` to every member of `group` we are connected to, one copy each (the spec
    /// leaves group delivery to the sender: there is no group send message in MC-DPL8CS 2.2.3).
    /// When we are a member ourselves, we receive it too ([`Event::Message`] from our own
    /// DPNID), unless `flags.no_loopback` (DPNSEND_NOLOOPBACK of IDirectPlay8Peer::SendTo).
    pub fn send_to_group(
        &mut self,
        now: Instant,
        group: Dpnid,
        data: &[u8],
        flags: SendFlags,
    ) -> Result<(), CommandError> {
        self.send_to_group_app(now, group, data, flags, None).map(|_| ())
    }

    /// [`Session::send_to_group`], each copy tracked with `track`
    /// ([`Session::send_to_tracked`]): returns how many copies the transport queued, as many
    /// [`Event::SendDone`] follow (the copy to ourselves is not one).
    pub fn send_to_group_tracked(
        &mut self,
        now: Instant,
        group: Dpnid,
        data: &[u8],
        flags: SendFlags,
        track: dplay_dframe::Tracked,
    ) -> Result<usize, CommandError> {
        self.send_to_group_app(now, group, data, flags, Some(track))
    }

    fn send_to_group_app(
        &mut self,
        now: Instant,
        group: Dpnid,
        data: &[u8],
        flags: SendFlags,
        track: Option<dplay_dframe::Tracked>,
    ) -> Result<usize, CommandError> {
        if !self.is_joined() {
            return Err(CommandError::WrongState);
        }
        if self.table.group(group).is_none() {
            return Err(CommandError::InvalidGroup);
        }
        let local = self.local;
        let mut looped = false;
        let mut queued = 0;
        let members: Vec<Dpnid> = self.table.group_members(group).collect();
        for player in members {
            if player == local {
                looped = !flags.no_loopback;
            } else if let Some(addr) = self.route(player) {
                self.send_app(now, addr, data, flags, track)?;
                queued += 1;
            }
        }
        if looped {
            let (reliable, sequential) = (flags.reliable, flags.sequential);
            self.events.push_back(Event::Message {
                from: local,
                data: data.to_vec(),
                reliable,
                sequential,
                process_token: None,
            });
        }
        Ok(queued)
    }

    /// Host: applies `ask` at once; member: sends it as a request.
    fn submit(&mut self, now: Instant, ask: Ask) -> Result<u32, CommandError> {
        if !self.is_joined() {
            return Err(CommandError::WrongState);
        }
        let local = self.local;
        if let Ask::Update { dpnid, .. } = &ask
            && *dpnid != local
            && self.table.group(*dpnid).is_none()
        {
            // Only our own entry or a group's (decision): another player's is its own business.
            return Err(CommandError::UnknownPlayer);
        }
        let is_group_op = !matches!(ask, Ask::Update { .. });
        if self.phase == Phase::Host {
            let context = self.pending.next_context();
            let op = self.make_op(local, context, ask)?;
            self.host_op(now, op);
            self.events.push_back(Event::Completed { context, result: Ok(()) });
            return Ok(context);
        }
        if is_group_op && self.cfg.mode == Mode::ClientServer {
            // No group transactions on the wire in client/server (MC-DPL8CS 3.4.5.1).
            return Err(CommandError::WrongState);
        }
        // Checked against our copy first, so that the host never has to ignore it.
        self.make_op(local, 0, ask.clone())?;
        let context = self.pending.start(Waiter::Host)?;
        let msg = request_message(context, local, ask);
        let host = self.host;
        if !self.send_to_player(now, host, &msg) {
            self.pending.finish(context, Waiter::Host);
            return Err(CommandError::UnknownPlayer);
        }
        Ok(context)
    }

    /// Host: the operation that grants `ask` for `requesting`, at the next version, or why not.
    fn make_op(&self, requesting: Dpnid, context: u32, ask: Ask) -> Result<NameTableOp, CommandError> {
        self.check_info_limits(&ask)?;
        let version = self.table.next_version();
        let group_known = |g: Dpnid| self.table.group(g).is_some();
        Ok(match ask {
            Ask::Create { flags, name, data } => {
                if self.table.groups().count() >= MAX_GROUPS {
                    return Err(CommandError::Busy);
                }
                let mut entry_flags = NameTableEntryFlags::GROUP;
                entry_flags
                    .set(NameTableEntryFlags::GROUP_AUTODESTRUCT, flags.contains(GroupFlags::AUTODESTRUCT));
                let group = NameTableEntry {
                    dpnid: self.table.next_dpnid(),
                    dpnid_owner: requesting,
                    flags: entry_flags,
                    version,
                    version_not_used: 0,
                    dnet_version: 0,
                    name,
                    data: data.unwrap_or_default(),
                    url: None,
                };
                NameTableOp::CreateGroup(CreateGroup {
                    dpnid_requesting: requesting,
                    packet_context: context,
                    group: Some(group),
                    layout: Default::default(),
                })
            }
            Ask::Destroy { group } if group_known(group) => NameTableOp::DestroyGroup(DestroyGroup {
                dpnid_group: group,
                version,
                version_not_used: 0,
                dpnid_requesting: requesting,
                packet_context: context,
            }),
            Ask::Add { group, .. } | Ask::Remove { group, .. } if !group_known(group) => {
                return Err(CommandError::InvalidGroup);
            }
            Ask::Add { player, .. } | Ask::Remove { player, .. } if !self.table.contains(player) => {
                return Err(CommandError::UnknownPlayer);
            }
            Ask::Add { group, player } if !self.table.is_member(group, player) => {
                NameTableOp::AddPlayerToGroup(member_op(group, player, version, requesting, context))
            }
            Ask::Remove { group, player } if self.table.is_member(group, player) => {
                NameTableOp::DeletePlayerFromGroup(member_op(group, player, version, requesting, context))
            }
            Ask::Update { dpnid, name, data } if self.table.contains(dpnid) || group_known(dpnid) => {
                NameTableOp::UpdateInfo(UpdateInfo {
                    packet_context: context,
                    dpnid,
                    version,
                    version_not_used: 0,
                    info_flags: info_flags(&name, &data),
                    name,
                    data: data.unwrap_or_default(),
                    dpnid_requesting: requesting,
                    layout: Default::default(),
                })
            }
            Ask::Update { .. } => return Err(CommandError::UnknownPlayer),
            Ask::Destroy { .. } | Ask::Add { .. } | Ask::Remove { .. } => {
                return Err(CommandError::InvalidGroup);
            }
        })
    }

    /// Host: a member's DN_REQ_* (MC-DPL8CS 3.4, 3.5): granted with the operation to every
    /// member, or, when invalid, ignored and counted (3.4: "the host performs cleanup and the
    /// message is ignored"). A player may change only its own information and groups'; in
    /// client/server a client may change only its own.
    pub(crate) fn on_request(&mut self, now: Instant, from: Option<Dpnid>, msg: SessionMessage) {
        let Some(requesting) = from else { return };
        let (context, ask) = match msg {
            SessionMessage::ReqCreateGroup(r) => {
                let (name, data) = flagged(r.info_flags, r.name, r.data);
                (r.packet_context, Ask::Create { flags: r.group_flags, name, data })
            }
            SessionMessage::ReqDestroyGroup(r) => (r.packet_context, Ask::Destroy { group: r.dpnid_group }),
            SessionMessage::ReqAddPlayerToGroup(r) => {
                (r.packet_context, Ask::Add { group: r.dpnid_group, player: r.dpnid_player })
            }
            SessionMessage::ReqDeletePlayerFromGroup(r) => {
                (r.packet_context, Ask::Remove { group: r.dpnid_group, player: r.dpnid_player })
            }
            SessionMessage::ReqUpdateInfo(r) => {
                let (name, data) = flagged(r.info_flags, r.name, r.data);
                (r.packet_context, Ask::Update { dpnid: r.dpnid, name, data })
            }
            _ => return self.stats.drop(DropReason::WrongRole),
        };
        let allowed = match &ask {
            Ask::Update { dpnid, .. } => {
                *dpnid == requesting
                    || (self.cfg.mode == Mode::PeerToPeer && self.table.group(*dpnid).is_some())
            }
            _ => self.cfg.mode == Mode::PeerToPeer,
        };
        if !allowed {
            return self.stats.drop(DropReason::WrongRole);
        }
        match self.make_op(requesting, context, ask) {
            Ok(op) => self.host_op(now, op),
            // A name or data over the join limits (issue 25 item 2): ignored as 3.4 says, and
            // counted with what does not parse, as such a PLAYER_CONNECT_INFO would be refused.
            Err(CommandError::InvalidParam) => self.stats.drop(DropReason::Malformed),
            Err(_) => self.stats.drop(DropReason::UnknownDpnid),
        }
    }
}

impl Session {
    /// A new name or data obeys the limits a joiner's PLAYER_CONNECT_INFO does
    /// ([`crate::Limits`]: `max_name_units`, `max_player_data`), refused with the same
    /// DPNERR_INVALIDPARAM; a player's new name may not be empty either (issue 25 item 2;
    /// docs/decisions.md, "Renames obey the join limits").
    fn check_info_limits(&self, ask: &Ask) -> Result<(), CommandError> {
        let (name, data, player) = match ask {
            Ask::Create { name, data, .. } => (name, data, false),
            Ask::Update { dpnid, name, data } => (name, data, self.table.group(*dpnid).is_none()),
            Ask::Destroy { .. } | Ask::Add { .. } | Ask::Remove { .. } => return Ok(()),
        };
        let units = name.as_ref().map(|n| n.units().len());
        let l = &self.cfg.limits;
        if units.is_some_and(|u| u > l.max_name_units || (player && u == 0))
            || data.as_ref().is_some_and(|d| d.len() > l.max_player_data)
        {
            return Err(CommandError::InvalidParam);
        }
        Ok(())
    }
}

fn member_op(group: Dpnid, player: Dpnid, version: u32, requesting: Dpnid, context: u32) -> GroupMember {
    GroupMember {
        dpnid_group: group,
        dpnid_player: player,
        version,
        version_not_used: 0,
        dpnid_requesting: requesting,
        packet_context: context,
    }
}

/// The DN_REQ_* message that asks for `ask` (MC-DPL8CS 2.2.4.1, 2.2.4.3, 2.2.4.5, 2.2.4.7,
/// 2.2.5.1). DN_REQ_DESTROY_GROUP's `dpnidPlayer`, which the spec does not explain (INDEX
/// F-15), carries the requester.
fn request_message(context: u32, local: Dpnid, ask: Ask) -> SessionMessage {
    let member =
        |group, player| ReqGroupMember { packet_context: context, dpnid_group: group, dpnid_player: player };
    match ask {
        Ask::Create { flags, name, data } => SessionMessage::ReqCreateGroup(ReqCreateGroup {
            packet_context: context,
            group_flags: flags,
            info_flags: info_flags(&name, &data),
            name,
            data: data.unwrap_or_default(),
            layout: Default::default(),
        }),
        Ask::Destroy { group } => SessionMessage::ReqDestroyGroup(member(group, local)),
        Ask::Add { group, player } => SessionMessage::ReqAddPlayerToGroup(member(group, player)),
        Ask::Remove { group, player } => SessionMessage::ReqDeletePlayerFromGroup(member(group, player)),
        Ask::Update { dpnid, name, data } => SessionMessage::ReqUpdateInfo(ReqUpdateInfo {
            packet_context: context,
            dpnid,
            info_flags: info_flags(&name, &data),
            name,
            data: data.unwrap_or_default(),
            layout: Default::default(),
        }),
    }
}
