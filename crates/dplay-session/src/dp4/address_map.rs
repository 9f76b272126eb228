//! The DirectPlay 4 host's hook on the addresses it hands out: the SPData of a joiner's system
//! player (its TCP listener and UDP game socket, MC-DPL4CS 2.2.2), which ADDFORWARD carries to
//! every other instance and SUPERENUMPLAYERSREPLY and ENUMPLAYERSREPLY to every later joiner
//! (2.2.8, 2.2.53, 2.2.28). A relay (`dplay-relay`) answers with the addresses of the relay
//! endpoint it gives the joiner, so members reach each other through the host; the host itself
//! keeps the joiner's own addresses, and holds no relay state (docs/relay.md, "DirectPlay 4").

use std::fmt;
use std::net::SocketAddr;

use dplay_wire::dp4::player::{Counted, PackedPlayer, SuperPackedPlayer};

use crate::dp4::table::{Player, sp_data};

/// What a DirectPlay 4 host tells the address map, and what the map answers.
pub trait Dp4AddressMap: Send + fmt::Debug {
    /// Host: the instance of system player `player` joined, its TCP listener at `stream` and
    /// its UDP game socket at `datagram` (as the host answers them). Returns the listener and
    /// game socket the other instances are given for it; `None` gives them its own.
    fn admitted(
        &mut self,
        player: u32,
        stream: SocketAddr,
        datagram: SocketAddr,
    ) -> Option<(SocketAddr, SocketAddr)>;
    /// Host: the instance of system player `player` left; what was held for it can go.
    fn removed(&mut self, player: u32);
}

/// A shared [`Dp4AddressMap`] in a [`crate::dp4::Dp4Config`].
pub type Dp4AddressMapHandle = crate::AddressMapHandle<dyn Dp4AddressMap>;

impl crate::dp4::Dp4Session {
    /// Host: asks the address map, if any, what the others are told of the instance of
    /// system player `id`, now at `addrs`.
    pub(crate) fn map_admitted(&mut self, id: u32, addrs: (SocketAddr, SocketAddr)) {
        let Some(map) = &self.config.address_map else { return };
        if let Some(told) = map.with(|m| m.admitted(id, addrs.0, addrs.1)) {
            self.advertised.insert(id, told);
        }
    }

    /// Host: the instance of system player `id` left the Player List.
    pub(crate) fn map_removed(&mut self, id: u32) {
        if let (Some(map), Some(_)) = (&self.config.address_map, self.advertised.remove(&id)) {
            map.with(|m| m.removed(id));
        }
    }

    /// `p` as a PACKEDPLAYER for other instances: with the SPData the address map gave its
    /// instance.
    pub(crate) fn packed_for_others(&self, p: &Player) -> PackedPlayer {
        let mut packed = p.to_packed();
        if let Some((s, d)) = self.advertised.get(&p.system_player_id) {
            packed.sp_data = sp_data(*s, *d);
        }
        packed
    }

    /// `p` as a SUPERPACKEDPLAYER for other instances, as [`Self::packed_for_others`].
    pub(crate) fn super_for_others(&self, p: &Player) -> SuperPackedPlayer {
        let mut packed = p.to_super();
        if let Some((s, d)) = self.advertised.get(&p.system_player_id) {
            let sp = sp_data(*s, *d);
            packed.sp_data = Some(Counted::narrowest(sp.clone(), sp.len()));
        }
        packed
    }

    /// The Player List as SUPERPACKEDPLAYERs for a joiner (MC-DPL4CS 2.2.53).
    pub(crate) fn super_players(&self) -> Vec<SuperPackedPlayer> {
        self.players.values().map(|p| self.super_for_others(p)).collect()
    }
}
