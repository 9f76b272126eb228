//! Our operations that wait for an answer, and sends with completion.
//!
//! [`Pending`] holds the `dwPacketContext` of every operation of ours under way: a group or
//! information request to the host (MC-DPL8CS 3.4, 3.5: done when the host's operation echoes
//! the context with us as `dpnidRequesting`) and a send with completion (MC-DPL8CS 2.2.3.2,
//! 3.3, 3.3.5.1: done when DN_PROCESS_COMPLETION echoes it). Either fails when the connection
//! it waits on ends first ("the sender MUST treat the send operation as having failed").
//! The other side: a DN_REQ_PROCESS_COMPLETION we receive is handed to the application as
//! [`Event::Message`] and answered with DN_PROCESS_COMPLETION, at once or when the application
//! says it processed it (`crate::unprocessed`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::{MessageKind, Tracked};

use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{ProcessCompletion, ReqProcessCompletion, SessionMessage};
use dplay_wire::{Blob, Wire};

use crate::event::{CommandError, CompletionError, Event};
use crate::session::{Phase, Session};
use crate::stats::DropReason;

/// At most this many operations of ours wait for an answer at once.
pub const MAX_PENDING: usize = 256;

/// What an operation waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waiter {
    /// The host's name-table operation (a DN_REQ_* we sent it).
    Host,
    /// DN_PROCESS_COMPLETION from the peer at this address.
    Peer(SocketAddr),
}

/// The contexts of our operations under way.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    last: u32,
    waiting: BTreeMap<u32, Waiter>,
}

impl Pending {
    /// A context no operation under way uses, never 0.
    pub(crate) fn next_context(&mut self) -> u32 {
        loop {
            self.last = self.last.wrapping_add(1);
            if self.last != 0 && !self.waiting.contains_key(&self.last) {
                return self.last;
            }
        }
    }

    /// Starts an operation waiting on `who`: its context, or `Busy` at [`MAX_PENDING`].
    pub(crate) fn start(&mut self, who: Waiter) -> Result<u32, CommandError> {
        if self.waiting.len() >= MAX_PENDING {
            return Err(CommandError::Busy);
        }
        let context = self.next_context();
        self.waiting.insert(context, who);
        Ok(context)
    }

    /// `who` answered `context`: true when that operation of ours was waiting on it.
    pub(crate) fn finish(&mut self, context: u32, who: Waiter) -> bool {
        if self.waiting.get(&context) != Some(&who) {
            return false;
        }
        self.waiting.remove(&context);
        true
    }

    /// Gives up the operation `context` without an answer: true when it was waiting.
    pub(crate) fn forget(&mut self, context: u32) -> bool {
        self.waiting.remove(&context).is_some()
    }

    /// Ends every operation waiting on what `lost` matches; returns their contexts.
    pub(crate) fn fail(&mut self, lost: impl Fn(Waiter) -> bool) -> Vec<u32> {
        let gone: Vec<u32> = self.waiting.iter().filter(|(_, w)| lost(**w)).map(|(c, _)| *c).collect();
        for c in &gone {
            self.waiting.remove(c);
        }
        gone
    }
}

impl Session {
    /// Sends `data` to the player `to` with DN_REQ_PROCESS_COMPLETION (MC-DPL8CS 2.2.3.2, 3.3):
    /// reliable and sequential, as every USER_1 message (3.3.5.1). Returns the context;
    /// [`Event::Completed`] follows once the peer's application got it, or with
    /// [`CompletionError::ConnectionLost`] if the connection ends first.
    pub fn send_with_completion(
        &mut self,
        now: Instant,
        to: Dpnid,
        data: &[u8],
    ) -> Result<u32, CommandError> {
        self.completion_send(now, to, data, None)
    }

    /// [`Session::send_with_completion`], tracked by the transport as
    /// [`Session::send_to_tracked`] is: it can be cancelled ([`Session::cancel_send`]) or
    /// time out while none of its frames went out, and [`Event::SendDone`] with `track.id`
    /// reports its transport outcome. [`Event::Completed`] still ends it when it was sent;
    /// when it was not (cancelled, timed out), the caller gives its context up with
    /// [`Session::abandon_completion`].
    pub fn send_with_completion_tracked(
        &mut self,
        now: Instant,
        to: Dpnid,
        data: &[u8],
        track: Tracked,
    ) -> Result<u32, CommandError> {
        self.completion_send(now, to, data, Some(track))
    }

    /// A send with completion that never left (cancelled or timed out unsent): its context is
    /// freed and no [`Event::Completed`] will come. False when it was not waiting.
    pub fn abandon_completion(&mut self, context: u32) -> bool {
        self.pending.forget(context)
    }

    fn completion_send(
        &mut self,
        now: Instant,
        to: Dpnid,
        data: &[u8],
        track: Option<Tracked>,
    ) -> Result<u32, CommandError> {
        if !self.is_joined() {
            return Err(CommandError::WrongState);
        }
        let addr = self.route(to).ok_or(CommandError::UnknownPlayer)?;
        let context = self.pending.start(Waiter::Peer(addr))?;
        let msg = SessionMessage::ReqProcessCompletion(ReqProcessCompletion {
            packet_context: context,
            payload: Blob::new(data),
        });
        let Some(track) = track else {
            self.send_msg(now, addr, &msg);
            return Ok(context);
        };
        let kind = MessageKind { user_1: true, ..MessageKind::RELIABLE_SEQUENTIAL };
        let sent = msg.to_vec().map_err(|_| CommandError::InvalidParam).and_then(|bytes| {
            self.ep.send_tracked(now, addr, &bytes, kind, track).map_err(CommandError::from)
        });
        match sent {
            Ok(()) => {
                self.stats.messages_sent += 1;
                Ok(context)
            }
            Err(e) => {
                self.pending.forget(context);
                Err(e)
            }
        }
    }

    /// DN_REQ_PROCESS_COMPLETION from an identified member: its payload goes to the application
    /// like any message, and DN_PROCESS_COMPLETION goes back with the same context (MC-DPL8CS
    /// 3.3: "a DN_PROCESS_COMPLETION response message is sent back to the sender"): at once,
    /// or once the application says it processed it (`defer_process_completion`,
    /// [`Session::processed`]).
    pub(crate) fn on_req_process_completion(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        req: ReqProcessCompletion,
    ) {
        let context = req.packet_context;
        let token = self.defer_process_completion(now, peer, context);
        if self.on_app_data(peer, req.payload.0, true, true, token) {
            return;
        }
        if let Some(token) = token {
            self.undefer_process_completion(token);
        }
        self.answer_process_completion(now, peer, context);
    }

    /// DN_PROCESS_COMPLETION: one of our sends with completion was processed.
    pub(crate) fn on_process_completion(&mut self, peer: SocketAddr, done: ProcessCompletion) {
        if self.pending.finish(done.packet_context, Waiter::Peer(peer)) {
            self.events.push_back(Event::Completed { context: done.packet_context, result: Ok(()) });
        } else {
            self.stats.drop(DropReason::WrongState);
        }
    }

    /// The host's operation echoed `context` with us as the requester: our request is done.
    pub(crate) fn request_answered(&mut self, requesting: Dpnid, context: u32) {
        if requesting == self.local
            && self.phase == Phase::Member
            && self.pending.finish(context, Waiter::Host)
        {
            self.events.push_back(Event::Completed { context, result: Ok(()) });
        }
    }

    /// The connection with `peer` ended: what waited on it failed, and what we owed it is
    /// dropped (`crate::unprocessed`); requests to the host fail when it was the host's (MC-DPL8CS 3.3: "MUST treat the send operation as having failed").
    pub(crate) fn pending_lost(&mut self, peer: SocketAddr, was_host: bool) {
        self.unprocessed_lost(peer);
        for context in self.pending.fail(|w| w == Waiter::Peer(peer) || (was_host && w == Waiter::Host)) {
            self.events.push_back(Event::Completed { context, result: Err(CompletionError::ConnectionLost) });
        }
    }

    /// The session ends: everything under way fails.
    pub(crate) fn pending_end(&mut self) {
        self.unprocessed = crate::unprocessed::Unprocessed::default();
        for context in self.pending.fail(|_| true) {
            self.events.push_back(Event::Completed { context, result: Err(CompletionError::ConnectionLost) });
        }
    }
}
