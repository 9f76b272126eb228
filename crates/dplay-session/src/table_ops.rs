//! Name-table operations as the session sees them (MC-DPL8CS 2.2.6): each one applied and
//! reported to the application the same way whether it came live from the host, inside a
//! DN_ACK_NAMETABLE_OP replay during a migration, or was made by us as host; the host's
//! broadcast of its own operations; and the operations a member could not read.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::WideString;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    DestroyGroup, InfoFlags, NameTableEntryFlags, NameTableOp, PacketType, SessionMessage,
};

use crate::config::Mode;
use crate::event::{Event, TableChange};
use crate::name_table::OpError;
use crate::session::{Phase, Session};

/// An operation as the message that carries it (MC-DPL8CS 2.2.6).
pub(crate) fn op_message(op: NameTableOp) -> SessionMessage {
    match op {
        NameTableOp::AddPlayer(a) => SessionMessage::AddPlayer(a),
        NameTableOp::DestroyPlayer(d) => SessionMessage::DestroyPlayer(d),
        NameTableOp::InstructConnect(i) => SessionMessage::InstructConnect(i),
        NameTableOp::CreateGroup(c) => SessionMessage::CreateGroup(c),
        NameTableOp::DestroyGroup(d) => SessionMessage::DestroyGroup(d),
        NameTableOp::AddPlayerToGroup(m) => SessionMessage::AddPlayerToGroup(m),
        NameTableOp::DeletePlayerFromGroup(m) => SessionMessage::DeletePlayerFromGroup(m),
        NameTableOp::UpdateInfo(u) => SessionMessage::UpdateInfo(u),
    }
}

/// The operation a message carries, for the messages that are name-table operations.
pub(crate) fn message_op(msg: SessionMessage) -> Option<NameTableOp> {
    Some(match msg {
        SessionMessage::AddPlayer(a) => NameTableOp::AddPlayer(a),
        SessionMessage::DestroyPlayer(d) => NameTableOp::DestroyPlayer(d),
        SessionMessage::InstructConnect(i) => NameTableOp::InstructConnect(i),
        SessionMessage::CreateGroup(c) => NameTableOp::CreateGroup(c),
        SessionMessage::DestroyGroup(d) => NameTableOp::DestroyGroup(d),
        SessionMessage::AddPlayerToGroup(m) => NameTableOp::AddPlayerToGroup(m),
        SessionMessage::DeletePlayerFromGroup(m) => NameTableOp::DeletePlayerFromGroup(m),
        SessionMessage::UpdateInfo(u) => NameTableOp::UpdateInfo(u),
        _ => return None,
    })
}

/// `dpnidRequesting` and `dwPacketContext` of an operation that answers a request.
pub(crate) fn requester(op: &NameTableOp) -> Option<(Dpnid, u32)> {
    match op {
        NameTableOp::CreateGroup(c) => Some((c.dpnid_requesting, c.packet_context)),
        NameTableOp::DestroyGroup(d) => Some((d.dpnid_requesting, d.packet_context)),
        NameTableOp::AddPlayerToGroup(m) | NameTableOp::DeletePlayerFromGroup(m) => {
            Some((m.dpnid_requesting, m.packet_context))
        }
        NameTableOp::UpdateInfo(u) => Some((u.dpnid_requesting, u.packet_context)),
        _ => None,
    }
}

fn text(s: &Option<WideString>) -> String {
    s.as_ref().map(WideString::to_string_lossy).unwrap_or_default()
}

impl Session {
    /// Applies `op` to our table and reports what changed (MC-DPL8CS 2.2.6). A player that
    /// leaves leaves its groups first (3.4.1), each reported.
    pub(crate) fn apply_reported(&mut self, op: &NameTableOp) -> Result<(), OpError> {
        let left = match op {
            NameTableOp::DestroyPlayer(d) => {
                self.groups_of(d.dpnid_leaving).into_iter().map(|g| (g, d.dpnid_leaving)).collect()
            }
            _ => Vec::new(),
        };
        self.table.apply(op)?;
        for (group, player) in left {
            self.events.push_back(Event::NameTable(TableChange::MemberRemoved { group, player }));
        }
        let event = match op {
            NameTableOp::AddPlayer(a) => {
                Event::PlayerAdded { dpnid: a.entry.dpnid, name: text(&a.entry.name) }
            }
            NameTableOp::DestroyPlayer(d) => {
                Event::PlayerRemoved { dpnid: d.dpnid_leaving, reason: d.destroy_reason }
            }
            NameTableOp::InstructConnect(_) => return Ok(()),
            NameTableOp::CreateGroup(c) => {
                let Some(g) = &c.group else { return Ok(()) };
                Event::NameTable(TableChange::GroupCreated {
                    group: g.dpnid,
                    name: text(&g.name),
                    requested_by: c.dpnid_requesting,
                })
            }
            NameTableOp::DestroyGroup(d) => {
                Event::NameTable(TableChange::GroupDestroyed { group: d.dpnid_group })
            }
            NameTableOp::AddPlayerToGroup(m) => {
                Event::NameTable(TableChange::MemberAdded { group: m.dpnid_group, player: m.dpnid_player })
            }
            NameTableOp::DeletePlayerFromGroup(m) => {
                Event::NameTable(TableChange::MemberRemoved { group: m.dpnid_group, player: m.dpnid_player })
            }
            NameTableOp::UpdateInfo(u) => Event::NameTable(TableChange::InfoUpdated {
                dpnid: u.dpnid,
                group: self.table.group(u.dpnid).is_some(),
                name: u.info_flags.contains(InfoFlags::NAME).then(|| text(&u.name)),
                data: u.info_flags.contains(InfoFlags::DATA).then(|| u.data.0.clone()),
            }),
        };
        self.events.push_back(event);
        Ok(())
    }

    /// The groups `player` is a member of.
    pub(crate) fn groups_of(&self, player: Dpnid) -> Vec<Dpnid> {
        self.table.groups().map(|g| g.dpnid).filter(|g| self.table.is_member(*g, player)).collect()
    }

    /// Host: applies an operation we made (its version the next one), reports it, sends it to
    /// the members it concerns, and destroys the auto-destruct groups it emptied
    /// (DPNGROUP_AUTODESTRUCT, MC-DPL8CS 2.2.4.1).
    pub(crate) fn host_op(&mut self, now: Instant, op: NameTableOp) {
        let emptied = match &op {
            NameTableOp::DestroyPlayer(d) => self.groups_of(d.dpnid_leaving),
            NameTableOp::DeletePlayerFromGroup(m) => vec![m.dpnid_group],
            _ => Vec::new(),
        };
        if self.apply_reported(&op).is_err() {
            return;
        }
        for (_, addr) in self.op_routes(&op) {
            self.send_msg(now, addr, &op_message(op.clone()));
        }
        let local = self.local;
        for group in emptied {
            let auto = self.table.group(group).is_some_and(|g| {
                g.flags.contains(NameTableEntryFlags::GROUP_AUTODESTRUCT)
                    && self.table.group_members(group).next().is_none()
            });
            if auto {
                let version = self.table.next_version();
                let destroy = DestroyGroup {
                    dpnid_group: group,
                    version,
                    version_not_used: 0,
                    dpnid_requesting: local,
                    packet_context: 0,
                };
                self.host_op(now, NameTableOp::DestroyGroup(destroy));
            }
        }
    }

    /// Who hears a host operation: every member in peer-to-peer; in client/server only an
    /// information update, of the server to every client and of a client to that client, as a
    /// client keeps only its own and the server's entries (MC-DPL8CS 3.4.5.1, 3.5.1).
    fn op_routes(&self, op: &NameTableOp) -> Vec<(Dpnid, SocketAddr)> {
        let routes = self.member_routes(None);
        match (self.cfg.mode, op) {
            (Mode::PeerToPeer, NameTableOp::DestroyPlayer(d)) => {
                routes.into_iter().filter(|(id, _)| *id != d.dpnid_leaving).collect()
            }
            (Mode::PeerToPeer, _) => routes,
            (Mode::ClientServer, NameTableOp::UpdateInfo(u)) if u.dpnid == self.local => routes,
            (Mode::ClientServer, NameTableOp::UpdateInfo(u)) => {
                routes.into_iter().filter(|(id, _)| *id == u.dpnid).collect()
            }
            (Mode::ClientServer, _) => Vec::new(),
        }
    }

    /// A session message that did not parse: when it came from our host and its type is a
    /// name-table operation's (MC-DPL8CS 2.2.6), its version is lost, and the next gap of one
    /// version is taken as it, so that the table goes on.
    pub(crate) fn unreadable_from(&mut self, peer: SocketAddr, data: &[u8]) {
        let Some(ty) = data.first_chunk::<4>().map(|b| PacketType(u32::from_le_bytes(*b))) else { return };
        let op = matches!(
            ty,
            PacketType::DN_MSG_INTERNAL_INSTRUCT_CONNECT
                | PacketType::DN_MSG_INTERNAL_ADD_PLAYER
                | PacketType::DN_MSG_INTERNAL_DESTROY_PLAYER
                | PacketType::DN_MSG_INTERNAL_CREATE_GROUP
                | PacketType::DN_MSG_INTERNAL_DESTROY_GROUP
                | PacketType::DN_MSG_INTERNAL_ADD_PLAYER_TO_GROUP
                | PacketType::DN_MSG_INTERNAL_DELETE_PLAYER_FROM_GROUP
                | PacketType::DN_MSG_INTERNAL_UPDATE_INFO
        );
        if op && self.phase == Phase::Member && Some(peer) == self.host_addr {
            self.table.note_unreadable();
        }
    }
}
