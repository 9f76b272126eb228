//! Application data (MC-DPL8CS 2.2.3.1; MS-DPDX 3.1.5.7): DFRAMEs with USER_1 clear, to one
//! player or to all, in any of the four delivery categories, received with the sender's
//! DPNID; and DXDiag's chat message.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::{Cancelled, MessageKind, Priority, Tracked};
use dplay_wire::Wire;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{CHAT_MESSAGE_LEN, ChatMessage};

use crate::event::{CommandError, Event, ProcessToken, SendFlags};
use crate::session::{LinkState, Phase, Session};
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
        self.send_to_player_app(now, to, data, flags, None)
    }

    /// [`Session::send_to`], tracked by the transport: [`Event::SendDone`] with `track.id`
    /// follows once the message is acknowledged (reliable), sent (not reliable), dropped at
    /// its deadline, or lost with the connection (DPN_MSGID_SEND_COMPLETE).
    pub fn send_to_tracked(
        &mut self,
        now: Instant,
        to: Dpnid,
        data: &[u8],
        flags: SendFlags,
        track: Tracked,
    ) -> Result<(), CommandError> {
        self.send_to_player_app(now, to, data, flags, Some(track))
    }

    fn send_to_player_app(
        &mut self,
        now: Instant,
        to: Dpnid,
        data: &[u8],
        flags: SendFlags,
        track: Option<Tracked>,
    ) -> Result<(), CommandError> {
        if !self.is_joined() {
            return Err(CommandError::WrongState);
        }
        let addr = self.route(to).ok_or(CommandError::UnknownPlayer)?;
        self.send_app(now, addr, data, flags, track)
    }

    /// Cancels the tracked send `id` (every copy of it: to a group or to everyone), as
    /// [`dplay_dframe::Endpoint::cancel`] does: a copy not yet started is dropped and
    /// [`Event::SendDone`] reports it [`dplay_dframe::SendOutcome::Cancelled`]; the started
    /// ones are counted and finish (DirectPlay 8's CancelAsyncOperation on a send).
    pub fn cancel_send(&mut self, now: Instant, id: u64) -> Cancelled {
        let result = self.ep.cancel(id);
        self.pump(now);
        result
    }

    /// Cancels, as [`Session::cancel_send`] does, every tracked send queued for the member `to`, or only those of
    /// `priority` (CancelAsyncOperation's DPNCANCEL_PLAYER_SENDS forms).
    pub fn cancel_sends_to(
        &mut self,
        now: Instant,
        to: Dpnid,
        priority: Option<Priority>,
    ) -> Result<Cancelled, CommandError> {
        let addr = self.route(to).ok_or(CommandError::UnknownPlayer)?;
        let result = self.ep.cancel_queued(addr, priority);
        self.pump(now);
        Ok(result)
    }

    /// One application message to `addr`, tracked or not.
    pub(crate) fn send_app(
        &mut self,
        now: Instant,
        addr: SocketAddr,
        data: &[u8],
        flags: SendFlags,
        track: Option<Tracked>,
    ) -> Result<(), CommandError> {
        let kind = MessageKind::new(flags.reliable, flags.sequential);
        match track {
            Some(t) => self.ep.send_tracked(now, addr, data, kind, t)?,
            None => self.ep.send(now, addr, data, kind)?,
        }
        Ok(())
    }

    /// Sends `data` to every player we are connected to.
    pub fn send_all(&mut self, now: Instant, data: &[u8], flags: SendFlags) -> Result<(), CommandError> {
        self.send_all_app(now, data, flags, None).map(|_| ())
    }

    /// [`Session::send_all`], each copy tracked with `track` ([`Session::send_to_tracked`]):
    /// returns how many copies were queued, as many [`Event::SendDone`] follow.
    pub fn send_all_tracked(
        &mut self,
        now: Instant,
        data: &[u8],
        flags: SendFlags,
        track: Tracked,
    ) -> Result<usize, CommandError> {
        self.send_all_app(now, data, flags, Some(track))
    }

    fn send_all_app(
        &mut self,
        now: Instant,
        data: &[u8],
        flags: SendFlags,
        track: Option<Tracked>,
    ) -> Result<usize, CommandError> {
        if !self.is_joined() {
            return Err(CommandError::WrongState);
        }
        let routes = self.member_routes(None);
        for (_, addr) in &routes {
            self.send_app(now, *addr, data, flags, track)?;
        }
        Ok(routes.len())
    }

    /// A tracked message is done with (the transport's `SendDone`).
    pub(crate) fn on_send_done(
        &mut self,
        id: u64,
        outcome: dplay_dframe::SendOutcome,
        first_frame: Option<dplay_dframe::FirstFrame>,
    ) {
        self.events.push_back(Event::SendDone { id, outcome, first_frame });
    }

    /// Sends DXDiag's TRANS_USERDATA_SEND_MESSAGE to everyone, sequential and not reliable
    /// (MS-DPDX 3.1.4.1; the MC-DPL8CS 4 capture's `bCommand` is 0x3D: DATA, SEQUENTIAL, POLL,
    /// NEW_MSG, END_MSG, no RELIABLE).
    pub fn send_chat(&mut self, now: Instant, text: &str) -> Result<(), CommandError> {
        let bytes = ChatMessage::new(text).to_vec().map_err(|_| CommandError::WrongState)?;
        self.send_all(now, &bytes, SendFlags { reliable: false, sequential: true, no_loopback: true })
    }

    /// Application data from `peer`: delivered with its DPNID, held when it comes from an
    /// identified member before we are joined (delivered right after [`Event::Joined`]), or
    /// dropped when the sender has not identified itself. A 402-byte chat message is reported as
    /// [`Event::Chat`]. `process_token` goes with an [`Event::Message`]; true when it went (not
    /// when the message was dropped, or is a chat message, which carries none).
    pub(crate) fn on_app_data(
        &mut self,
        peer: SocketAddr,
        data: Vec<u8>,
        reliable: bool,
        sequential: bool,
        process_token: Option<ProcessToken>,
    ) -> bool {
        let from = self.links.get(&peer).filter(|l| l.state == LinkState::Member).and_then(|l| l.dpnid);
        let Some(from) =
            from.filter(|_| self.is_joined() || matches!(self.phase, Phase::Host | Phase::Member))
        else {
            self.stats.drop(DropReason::UnknownSender);
            return false;
        };
        let (event, carried) = if data.len() == CHAT_MESSAGE_LEN
            && let Ok(chat) = ChatMessage::parse(&data)
        {
            (Event::Chat { from, text: chat.text() }, false)
        } else {
            let carried = process_token.is_some();
            (Event::Message { from, data, reliable, sequential, process_token }, carried)
        };
        if self.is_joined() || self.phase == Phase::Host {
            self.stats.app_received += 1;
            self.events.push_back(event);
            return carried;
        }
        self.hold_early(event) && carried
    }

    /// A member's message before we are joined: MC-DPL8CS 3.1.5.2 gives a nascent peer its name
    /// table with DN_SEND_CONNECT_INFO, and the host and every established peer may send to it
    /// from the moment their connection is up, before its last DN_SEND_PLAYER_DPNID; the
    /// message is kept (up to [`EARLY_DATA_MESSAGES`] / [`EARLY_DATA_BYTES`]) rather than lost.
    fn hold_early(&mut self, event: Event) -> bool {
        let len = match &event {
            Event::Message { data, .. } => data.len(),
            _ => CHAT_MESSAGE_LEN,
        };
        if self.early.len() >= EARLY_DATA_MESSAGES
            || self.early_bytes + len > EARLY_DATA_BYTES
            || !self.admission.memory.early.grow(len)
        {
            self.stats.drop(DropReason::EarlyDataOverflow);
            return false;
        }
        self.stats.early_data_held += 1;
        self.early_bytes += len;
        self.early.push_back(event);
        true
    }

    /// Delivers the held messages, in arrival order, right after [`Event::Joined`]; those from a
    /// player destroyed meanwhile are dropped (its DESTROY_PLAYER was reported first).
    pub(crate) fn release_early(&mut self) {
        self.early_bytes = 0;
        self.admission.memory.early.shrink(usize::MAX);
        for event in std::mem::take(&mut self.early) {
            let from = match &event {
                Event::Message { from, .. } | Event::Chat { from, .. } => *from,
                _ => continue,
            };
            if self.table.contains(from) {
                self.stats.app_received += 1;
                self.events.push_back(event);
            } else {
                self.stats.drop(DropReason::UnknownSender);
            }
        }
    }
}

/// At most this many application messages are held for a nascent member (see
/// `Session::hold_early`): a join takes a few round trips, and a member sends a handful of
/// messages in that time.
pub const EARLY_DATA_MESSAGES: usize = 256;
/// At most this many bytes of application messages are held for a nascent member.
pub const EARLY_DATA_BYTES: usize = 256 * 1024;
