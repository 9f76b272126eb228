//! The narrow hook DirectPlay Voice needs over DirectPlay 4 (MC-DPLVP 2.1): DPSP_MSG_VOICE
//! (MC-DPL4CS 2.2.54) is delivered as [`Dp4Event::Voice`] with its player IDs (3.1.5.25), and
//! [`Dp4Session::send_voice`] sends one. The voice protocol itself lives above the session
//! (`dplay-voice`), which validates the voice bytes: they are delivered as they came.

use std::time::Instant;

use dplay_wire::Writer;
use dplay_wire::dp4::header::{Command, HEADER_LEN, Header, SIGNATURE_OFFSET, SockAddrIn, Token};

use crate::dp4::event::{CommandError, Dp4Event, DropReason};
use crate::dp4::members::DPID_ALLPLAYERS;
use crate::dp4::session::{Dp4Session, Role};

/// `dwIDFrom` and `dwIDTo` before the voice data (2.2.54).
const IDS_LEN: usize = 8;

impl Dp4Session {
    /// Sends one voice message `data` from our player `from` to player `to` in a
    /// DPSP_MSG_VOICE (MC-DPL4CS 2.2.54): guaranteed over TCP when `reliable` (every voice
    /// message but speech, MC-DPLVP 2.2), else a UDP datagram, fragmented beyond the MTU as
    /// non-guaranteed player messages are (3.1.4.18). In a session with
    /// DPSESSION_DIRECTPLAYPROTOCOL it goes over MC-DPL4R, reliable when `reliable`.
    pub fn send_voice(
        &mut self,
        now: Instant,
        from: u32,
        to: u32,
        data: &[u8],
        reliable: bool,
    ) -> Result<(), CommandError> {
        self.local_player(from)?;
        let target = self.player_instance(to)?;
        let bytes = self.voice_message(from, to, data)?;
        if !self.uses_reliable_protocol() {
            return self.transmit_message(now, target, bytes, reliable);
        }
        self.sync_links();
        self.reliable.send(now, target.1, &bytes, reliable).map_err(|_| CommandError::Unencodable)?;
        self.pump_reliable(now);
        Ok(())
    }

    /// A whole DPSP_MSG_VOICE carrying `data` as it is (the voice layer made it).
    fn voice_message(&self, from: u32, to: u32, data: &[u8]) -> Result<Vec<u8>, CommandError> {
        let header = Header {
            token: Token::FROM_REMOTE,
            sock_addr: SockAddrIn::new(self.config.stream_addr),
            command: Command::DPSP_MSG_VOICE,
            version: self.config.version,
        };
        let len = HEADER_LEN + IDS_LEN + data.len();
        let mut bytes = vec![0; len];
        let mut w = Writer::new(&mut bytes, len).map_err(|_| CommandError::Unencodable)?;
        header.write(&mut w, len).map_err(|_| CommandError::Unencodable)?;
        w.u32(from);
        w.u32(to);
        w.bytes(data);
        Ok(bytes)
    }

    /// A whole message that is a DPSP_MSG_VOICE: its player IDs and voice data, whatever the
    /// data holds (the voice layer counts what it cannot parse, MC-DPLVP 5.1).
    pub(crate) fn take_voice(&mut self, bytes: &[u8]) -> bool {
        // wCommand at 24 (decision F-20): most messages are not voice; tell them apart cheaply.
        let command = Command::DPSP_MSG_VOICE.0.to_le_bytes();
        if bytes.get(SIGNATURE_OFFSET + 4..HEADER_LEN - 2) != Some(&command[..]) {
            return false;
        }
        // A size that does not match goes the usual way, to be dropped as malformed.
        if Header::parse(bytes).map(|(_, size)| size) != Ok(bytes.len()) {
            return false;
        }
        let body = bytes.get(HEADER_LEN..).unwrap_or_default();
        match (body.get(..4), body.get(4..IDS_LEN), body.get(IDS_LEN..)) {
            (Some(from), Some(to), Some(data)) => {
                let id = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap_or_default());
                self.on_voice(id(from), id(to), data.to_vec());
            }
            _ => self.drop_msg(DropReason::Malformed, "DPSP_MSG_VOICE shorter than its IDs"),
        }
        true
    }

    /// DPSP_MSG_VOICE (MC-DPL4CS 3.1.5.25): from a known remote player to one of ours (or to
    /// DPID_ALLPLAYERS: a peer-to-peer CONNECTREQUEST goes to everyone, MC-DPLVP 3.1.5.1.2),
    /// once joined; handed up for the voice layer, which ignores it when none runs.
    pub(crate) fn on_voice(&mut self, from: u32, to: u32, data: Vec<u8>) {
        if !matches!(self.role, Role::Member | Role::Host) {
            return self.drop_msg(DropReason::Unexpected, "VOICE while not joined");
        }
        let remote = self.players.get(&from).is_some_and(|p| !p.local);
        let ours = to == DPID_ALLPLAYERS || self.players.get(&to).is_some_and(|p| p.local);
        if !remote || !ours {
            return self.drop_msg(DropReason::UnknownPlayer, "VOICE between unknown players");
        }
        self.events.push_back(Dp4Event::Voice { from, to, data });
    }
}
