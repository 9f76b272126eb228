//! The narrow hook DirectPlay Voice needs (MC-DPLVP 2.1; MC-DPL8R 2.2.3): DFRAMEs with
//! `PACKET_COMMAND_USER_2` are delivered as [`Event::Voice`] with the sender's DPNID, and
//! [`Session::send_voice`] sends them. The voice protocol itself lives above the session
//! (`dplay-voice`).

use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::MessageKind;
use dplay_wire::dp8::dpnid::Dpnid;

use crate::event::{CommandError, Event};
use crate::session::{LinkState, Phase, Session};
use crate::stats::DropReason;

impl Session {
    /// Sends one voice message to the player `to` with USER_2 (never USER_1): guaranteed and
    /// ordered when `reliable`, else neither (speech, MC-DPLVP 2.2).
    pub fn send_voice(
        &mut self,
        now: Instant,
        to: Dpnid,
        data: &[u8],
        reliable: bool,
    ) -> Result<(), CommandError> {
        if !self.is_joined() {
            return Err(CommandError::WrongState);
        }
        let addr = self.route(to).ok_or(CommandError::UnknownPlayer)?;
        let kind = MessageKind { user_2: true, ..MessageKind::new(reliable, reliable) };
        self.ep.send(now, addr, data, kind)?;
        Ok(())
    }

    /// A USER_2 message from `peer`: delivered only from an identified member once we are in
    /// the session (voice starts after the game session, MC-DPLVP 1.5); never held.
    pub(crate) fn on_voice(&mut self, peer: SocketAddr, data: Vec<u8>) {
        let from = self.links.get(&peer).filter(|l| l.state == LinkState::Member).and_then(|l| l.dpnid);
        match from {
            Some(from) if self.is_joined() || self.phase == Phase::Host => {
                self.events.push_back(Event::Voice { from, data })
            }
            _ => self.stats.drop(DropReason::UnknownSender),
        }
    }
}
