//! Player data and name changes and chat (MC-DPL4CS 3.1.4.10, 3.1.4.11, 3.1.4.17, 3.1.5.18,
//! 3.1.5.19, 3.1.5.26). Multicast-server routing (MS) is not supported: these go to every
//! instance directly.

use std::net::SocketAddr;

use dplay_wire::dp4::message::Dp4Body;
use dplay_wire::dp4::nametable::{DataChanged, NameChanged};
use dplay_wire::dp4::routing::{Chat, ChatFlags};
use dplay_wire::dp4::session::SessionFlags;
use dplay_wire::{Blob, WideString};

use crate::dp4::event::{CommandError, Dp4Event, DropReason, Via};
use crate::dp4::session::{Dp4Session, Role};

impl Dp4Session {
    /// A local player of a joined endpoint, or the error to return.
    pub(crate) fn local_player(&self, id: u32) -> Result<(), CommandError> {
        if !matches!(self.role, Role::Member | Role::Host) {
            return Err(CommandError::WrongState);
        }
        match self.players.get(&id) {
            Some(p) if p.local => Ok(()),
            _ => Err(CommandError::UnknownPlayer(id)),
        }
    }

    /// Sets our player's game data and sends PLAYERDATACHANGED to every instance, unless the
    /// session has ND (MC-DPL4CS 3.1.4.10, 1.3).
    pub fn set_player_data(&mut self, id: u32, data: &[u8]) -> Result<(), CommandError> {
        self.local_player(id)?;
        self.check_player_data(data)?;
        if let Some(p) = self.players.get_mut(&id) {
            p.player_data = Blob::new(data);
        }
        if !self.desc.is_some_and(|d| d.flags.contains(SessionFlags::NO_DATA_MESSAGES)) {
            let body = Dp4Body::PlayerDataChanged(DataChanged { id_to: 0, id, data: Blob::new(data) });
            self.send_to_instances(&body, None);
        }
        Ok(())
    }

    /// Renames our player and sends PLAYERNAMECHANGED to every instance (MC-DPL4CS 3.1.4.11).
    pub fn set_player_name(
        &mut self,
        id: u32,
        short: Option<&str>,
        long: Option<&str>,
    ) -> Result<(), CommandError> {
        self.local_player(id)?;
        for name in [short, long].into_iter().flatten() {
            self.check_player_name(name)?;
        }
        let (short_name, long_name) = (short.map(WideString::new), long.map(WideString::new));
        if let Some(p) = self.players.get_mut(&id) {
            p.short_name = short_name.clone();
            p.long_name = long_name.clone();
        }
        let body = Dp4Body::PlayerNameChanged(NameChanged { id_to: 0, id, short_name, long_name });
        self.send_to_instances(&body, None);
        Ok(())
    }

    /// Sends a DPSP_MSG_CHAT from our player `from` to player `to`, over TCP
    /// (MC-DPL4CS 3.1.4.17, 2.2.19). To a group: one CHAT naming the group to each other
    /// instance with a member in it (3.1.4.17, 3.1.5.26; issue 27 item 14).
    pub fn send_chat(&mut self, from: u32, to: u32, text: &str) -> Result<(), CommandError> {
        self.local_player(from)?;
        if let Some(group) = self.groups.get(&to) {
            let members = group.members.clone();
            let instances: std::collections::BTreeSet<SocketAddr> = members
                .iter()
                .filter_map(|m| self.players.get(m).filter(|p| !p.local))
                .filter_map(|p| self.players.get(&p.system_player_id).and_then(|s| s.addrs))
                .map(|(s, _)| s)
                .collect();
            for stream in instances {
                self.send_body(Via::Tcp, stream, chat_body(from, to, text));
            }
            return Ok(());
        }
        let stream = self
            .players
            .get(&to)
            .filter(|p| !p.local)
            .and_then(|p| self.players.get(&p.system_player_id))
            .and_then(|s| s.addrs)
            .map(|(s, _)| s)
            .ok_or(CommandError::UnknownPlayer(to))?;
        self.send_body(Via::Tcp, stream, chat_body(from, to, text));
        Ok(())
    }

    /// A chat line from our player `from` to everyone: one DPSP_MSG_CHAT per remote application
    /// player (the system player of an instance that has none), each naming its receiver, as a
    /// group's copies go to each member (MC-DPL4CS 3.1.4.17; docs/decisions.md). Returns how
    /// many were sent.
    pub fn send_chat_all(&mut self, from: u32, text: &str) -> Result<usize, CommandError> {
        self.local_player(from)?;
        let remote = || self.players.values().filter(|p| !p.local);
        let with_players: std::collections::BTreeSet<u32> =
            remote().filter(|p| !p.is_system()).map(|p| p.system_player_id).collect();
        let to: Vec<u32> =
            remote().filter(|p| !p.is_system() || !with_players.contains(&p.id)).map(|p| p.id).collect();
        for id in &to {
            self.send_chat(from, *id, text)?;
        }
        Ok(to.len())
    }

    /// The remote player a change names, if we know it.
    fn remote_player(&mut self, id: u32, what: &str) -> bool {
        let known =
            matches!(self.role, Role::Member | Role::Host) && self.players.get(&id).is_some_and(|p| !p.local);
        if !known {
            self.drop_msg(DropReason::UnknownPlayer, what);
        }
        known
    }

    /// DPSP_MSG_PLAYERDATACHANGED (MC-DPL4CS 3.1.5.19).
    pub(crate) fn on_player_data_changed(&mut self, m: DataChanged) {
        if !self.remote_player(m.id, "PLAYERDATACHANGED of an unknown player") {
            return;
        }
        if let Err(e) = self.check_player_data(&m.data) {
            return self.drop_msg(DropReason::TooLong, &e.to_string());
        }
        if let Some(p) = self.players.get_mut(&m.id) {
            p.player_data = m.data.clone();
        }
        self.events.push_back(Dp4Event::PlayerDataChanged { id: m.id, data: m.data.0 });
    }

    /// DPSP_MSG_PLAYERNAMECHANGED (MC-DPL4CS 3.1.5.18).
    pub(crate) fn on_player_name_changed(&mut self, m: NameChanged) {
        if !self.remote_player(m.id, "PLAYERNAMECHANGED of an unknown player") {
            return;
        }
        if let Err(e) = self.check_names(m.short_name.as_ref(), m.long_name.as_ref()) {
            return self.drop_msg(DropReason::TooLong, &e.to_string());
        }
        if let Some(p) = self.players.get_mut(&m.id) {
            p.short_name = m.short_name.clone();
            p.long_name = m.long_name.clone();
        }
        self.events.push_back(Dp4Event::PlayerNameChanged {
            id: m.id,
            short_name: m.short_name.as_ref().map(WideString::to_string_lossy),
            long_name: m.long_name.as_ref().map(WideString::to_string_lossy),
        });
    }

    /// DPSP_MSG_CHAT: from a known remote player to one of ours, or to a group one of ours
    /// is in (MC-DPL4CS 3.1.5.26).
    pub(crate) fn on_chat(&mut self, m: Chat) {
        let local = |id: &u32| self.players.get(id).is_some_and(|p| p.local);
        let to_ours =
            local(&m.id_to) || self.groups.get(&m.id_to).is_some_and(|g| g.members.iter().any(local));
        if !self.remote_player(m.id_from, "CHAT from an unknown player") {
            return;
        }
        if !to_ours {
            return self.drop_msg(DropReason::UnknownPlayer, "CHAT to none of ours");
        }
        self.events.push_back(Dp4Event::Chat {
            from: m.id_from,
            to: m.id_to,
            text: m.chat_message.as_ref().map(WideString::to_string_lossy),
        });
    }
}

/// A DPSP_MSG_CHAT (2.2.19), sent guaranteed over TCP.
fn chat_body(id_from: u32, id_to: u32, text: &str) -> Dp4Body {
    let chat_message = Some(WideString::new(text));
    Dp4Body::Chat(Chat { id_from, id_to, flags: ChatFlags::GUARANTEED, chat_message })
}
