//! Application data (MC-DPL8CS 2.2.3.1; MS-DPDX 3.1.5.7): DFRAMEs with USER_1 clear, to one
//! player or to all, in any of the four delivery categories, received with the sender's
//! DPNID; and DXDiag's chat message.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::MessageKind;
use dplay_wire::Wire;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{CHAT_MESSAGE_LEN, ChatMessage};

use crate::event::{CommandError, Event, SendFlags};
use crate::session::{LinkState, Session};
use crate::stats::DropReason;

impl Session {
    /// Sends `data` to the player `to` (in client/server a client reaches only the server).
    pub fn send_to(
        &mut self,
        now: Instant,
        to: Dpnid,
        data: &[u8],
        flags: SendFlags,
    ) -> Result<(), CommandError> {
        if !self.is_joined() {
            return Err(CommandError::WrongState);
        }
        let addr = self.route(to).ok_or(CommandError::UnknownPlayer)?;
        self.ep.send(now, addr, data, MessageKind::new(flags.reliable, flags.sequential))?;
        Ok(())
    }

    /// Sends `data` to every player we are connected to.
    pub fn send_all(&mut self, now: Instant, data: &[u8], flags: SendFlags) -> Result<(), CommandError> {
        if !self.is_joined() {
            return Err(CommandError::WrongState);
        }
        for (_, addr) in self.member_routes(None) {
            self.ep.send(now, addr, data, MessageKind::new(flags.reliable, flags.sequential))?;
        }
        Ok(())
    }

    /// Sends DXDiag's TRANS_USERDATA_SEND_MESSAGE to everyone, reliably (MS-DPDX 3.1.4.1).
    pub fn send_chat(&mut self, now: Instant, text: &str) -> Result<(), CommandError> {
        let bytes = ChatMessage::new(text).to_vec().map_err(|_| CommandError::WrongState)?;
        self.send_all(now, &bytes, SendFlags::RELIABLE_SEQUENTIAL)
    }

    /// Application data from `peer`: delivered with its DPNID, or dropped when the sender has
    /// not identified itself. A 402-byte chat message is reported as [`Event::Chat`].
    pub(crate) fn on_app_data(&mut self, peer: SocketAddr, data: Vec<u8>, reliable: bool, sequential: bool) {
        let from = self.links.get(&peer).filter(|l| l.state == LinkState::Member).and_then(|l| l.dpnid);
        let Some(from) = from.filter(|_| self.is_joined() || self.phase == crate::Phase::Host) else {
            return self.stats.drop(DropReason::UnknownSender);
        };
        self.stats.app_received += 1;
        if data.len() == CHAT_MESSAGE_LEN
            && let Ok(chat) = ChatMessage::parse(&data)
        {
            return self.events.push_back(Event::Chat { from, text: chat.text() });
        }
        self.events.push_back(Event::Message { from, data, reliable, sequential });
    }
}
