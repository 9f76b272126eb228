//! Who sent a message: the member at its public IP whose headers name its port, else, where
//! several do (members behind one NAT on one port), the one whose ID the message names as
//! its sender (docs/relay.md, "DirectPlay 4"; MC-DPL4CS 2.2.2, 2.2.42, 2.2.45).

use std::net::{IpAddr, SocketAddr};

use super::sender::{self, CREATE_PLAYER, CREATE_PLAYER_VERIFY};
use super::{Dp4Relay, OWNED_PER_ENDPOINT};

impl Dp4Relay {
    /// The member whose listener is `listener` (as the host's session answers it).
    pub(super) fn member_at(&self, listener: SocketAddr) -> Option<u32> {
        self.members.iter().find(|(_, m)| m.stream == listener).map(|(id, _)| *id)
    }

    /// The members at public IP `ip` whose headers name `header_port`, but `except`.
    pub(super) fn at(
        &self,
        ip: IpAddr,
        header_port: u16,
        except: Option<u32>,
    ) -> impl Iterator<Item = u32> + '_ {
        self.members
            .iter()
            .filter(move |(id, m)| {
                Some(**id) != except && m.stream.ip() == ip && m.header_port == header_port
            })
            .map(|(id, _)| *id)
    }

    /// The member that sent message `m` (with a header naming `header_port`) from public IP
    /// `ip`, but `except`: the only one there, else the one whose ID `m` names as its sender.
    pub(super) fn identify_stream(
        &self,
        ip: IpAddr,
        header_port: u16,
        except: Option<u32>,
        m: &[u8],
    ) -> Option<u32> {
        let mut at = self.at(ip, header_port, except);
        match (at.next(), at.next()) {
            (Some(id), None) => Some(id),
            (None, _) => None,
            _ => self
                .owner_of(sender::sender_id(m, false)?)
                .filter(|id| self.at(ip, header_port, except).any(|x| x == *id)),
        }
    }

    /// The member that sent datagram `data` from `from`, but `except`: a system message by its
    /// header ([`Self::identify_stream`]); a headerless player message (MC-DPL4CS 2.2.45) by
    /// its idFrom's instance at `from`'s IP, else by coming from a member's game socket (a
    /// cone NAT that keeps the port), else as the only other member at its IP.
    pub(super) fn identify_datagram(
        &self,
        except: Option<u32>,
        from: SocketAddr,
        data: &[u8],
    ) -> Option<u32> {
        let ip = from.ip();
        if sender::signed(data) {
            let port = sender::header_port(data)?;
            return self.identify_stream(ip, port, except, data);
        }
        let others = || self.members.iter().filter(move |(id, _)| Some(**id) != except);
        let by_id = sender::sender_id(data, true)
            .and_then(|p| self.owner_of(p))
            .filter(|id| Some(*id) != except && self.members.get(id).is_some_and(|m| m.stream.ip() == ip));
        if by_id.is_some() {
            return by_id;
        }
        if let Some((id, _)) = others().find(|(_, m)| m.datagram == from) {
            return Some(*id);
        }
        let mut at_ip = others().filter(|(_, m)| m.stream.ip() == ip);
        match (at_ip.next(), at_ip.next()) {
            (Some((id, _)), None) => Some(*id),
            _ => None,
        }
    }

    /// The member whose player `id` is: its system player, or an application player one of
    /// its CREATEPLAYERs named.
    pub(super) fn owner_of(&self, id: u32) -> Option<u32> {
        if self.members.contains_key(&id) { Some(id) } else { self.owners.get(&id).copied() }
    }

    /// Learns the player a CREATEPLAYER or CREATEPLAYERVERIFY `m` from member `sender` creates,
    /// when it names `sender` as its system player (MC-DPL4CS 2.2.2); at most
    /// [`OWNED_PER_ENDPOINT`] per endpoint.
    pub(super) fn learn(&mut self, sender: Option<u32>, m: &[u8]) {
        let Some(sender) = sender else { return };
        if !matches!(sender::command(m), Some(CREATE_PLAYER | CREATE_PLAYER_VERIFY)) {
            return;
        }
        let Some((player, system)) = sender::created_player(m) else { return };
        let room = self.owners.len() < OWNED_PER_ENDPOINT * self.endpoints.len().max(1);
        if system == sender && player != sender && (room || self.owners.contains_key(&player)) {
            self.owners.insert(player, sender);
        }
    }
}
