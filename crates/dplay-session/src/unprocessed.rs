//! The receiving side of sends with completion, when the application answers them
//! (`SessionConfig::defer_process_completion`): each DN_REQ_PROCESS_COMPLETION delivered with
//! a [`ProcessToken`] waits here until [`Session::processed`] sends its DN_PROCESS_COMPLETION
//! (MC-DPL8CS 2.2.3.3, 3.3: "returned ... after the sent payload has been consumed").
//!
//! What waits is held for its sender, so it has a cap and a deadline (docs/limits.md): at
//! most `Limits::max_unprocessed_per_peer` per sender (past it the oldest is answered at
//! once), each answered anyway at `Limits::process_completion_timeout`, and dropped
//! unanswered when its sender's connection ends (nothing could carry the answer).

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp8::session::{ProcessCompletion, SessionMessage};

use crate::event::ProcessToken;
use crate::session::Session;

/// One answer waiting for the application.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    peer: SocketAddr,
    /// The request's `dwPacketContext`, echoed by the answer.
    context: u32,
    deadline: Instant,
}

/// The answers waiting for the application, by token (oldest first) and by sender.
#[derive(Debug, Default)]
pub(crate) struct Unprocessed {
    last: u64,
    /// Tokens are given in arrival order and every one gets the same timeout, so the first is
    /// also the earliest deadline.
    waiting: BTreeMap<u64, Waiting>,
    by_peer: BTreeMap<SocketAddr, VecDeque<u64>>,
}

impl Unprocessed {
    /// Holds the answer to `context` from `peer`: its token, and the context of the sender's
    /// oldest one when `cap` was reached (to answer now). `None` when `cap` is 0.
    fn hold(
        &mut self,
        peer: SocketAddr,
        context: u32,
        deadline: Instant,
        cap: usize,
    ) -> Option<(ProcessToken, Option<u32>)> {
        if cap == 0 {
            return None;
        }
        let queue = self.by_peer.entry(peer).or_default();
        let evicted = if queue.len() >= cap {
            queue.pop_front().and_then(|oldest| self.waiting.remove(&oldest)).map(|w| w.context)
        } else {
            None
        };
        self.last += 1;
        queue.push_back(self.last);
        self.waiting.insert(self.last, Waiting { peer, context, deadline });
        Some((ProcessToken(self.last), evicted))
    }

    /// Takes the answer `token` stands for, if it still waits.
    fn take(&mut self, token: ProcessToken) -> Option<Waiting> {
        let w = self.waiting.remove(&token.0)?;
        if let Some(queue) = self.by_peer.get_mut(&w.peer) {
            queue.retain(|t| *t != token.0);
            if queue.is_empty() {
                self.by_peer.remove(&w.peer);
            }
        }
        Some(w)
    }

    /// The oldest answer whose deadline has passed.
    fn expired(&mut self, now: Instant) -> Option<Waiting> {
        let (&token, w) = self.waiting.first_key_value()?;
        if w.deadline > now {
            return None;
        }
        self.take(ProcessToken(token))
    }

    /// Forgets every answer owed to `peer`.
    fn forget_peer(&mut self, peer: SocketAddr) {
        for token in self.by_peer.remove(&peer).unwrap_or_default() {
            self.waiting.remove(&token);
        }
    }

    /// When the next answer is due anyway.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.waiting.first_key_value().map(|(_, w)| w.deadline)
    }
}

impl Session {
    /// The application has processed the message `token` came with
    /// ([`crate::Event::Message`]'s `process_token`): DN_PROCESS_COMPLETION goes to its sender
    /// now, with the request's `dwPacketContext` (MC-DPL8CS 2.2.3.3, 3.3). False when nothing
    /// waits for it any more: its sender left, the session ended, or it was answered at the
    /// cap or the deadline (docs/limits.md).
    pub fn processed(&mut self, now: Instant, token: ProcessToken) -> bool {
        let Some(w) = self.unprocessed.take(token) else { return false };
        self.answer_process_completion(now, w.peer, w.context);
        true
    }

    /// DN_REQ_PROCESS_COMPLETION `context` from `peer` is being delivered: a token when the
    /// answer waits for the application, else `None` (answer now). Past the sender's cap its
    /// oldest is answered now.
    pub(crate) fn defer_process_completion(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        context: u32,
    ) -> Option<ProcessToken> {
        if !self.cfg.defer_process_completion {
            return None;
        }
        let limits = &self.cfg.limits;
        let deadline = now + limits.process_completion_timeout;
        let (token, evicted) =
            self.unprocessed.hold(peer, context, deadline, limits.max_unprocessed_per_peer)?;
        if let Some(oldest) = evicted {
            tracing::trace!(%peer, "too many messages wait to be processed: the oldest is answered");
            self.stats.process_completions_early += 1;
            self.answer_process_completion(now, peer, oldest);
        }
        Some(token)
    }

    /// The message of `token` was not delivered with it: nothing waits for the application.
    pub(crate) fn undefer_process_completion(&mut self, token: ProcessToken) {
        self.unprocessed.take(token);
    }

    /// Answers whatever the application has not processed by its deadline.
    pub(crate) fn unprocessed_timeout(&mut self, now: Instant) {
        while let Some(w) = self.unprocessed.expired(now) {
            tracing::debug!(peer = %w.peer, "a message not processed in time: answered anyway");
            self.stats.process_completions_early += 1;
            self.answer_process_completion(now, w.peer, w.context);
        }
    }

    /// The connection with `peer` ended (or the session did): what it was owed is dropped.
    pub(crate) fn unprocessed_lost(&mut self, peer: SocketAddr) {
        self.unprocessed.forget_peer(peer);
    }

    /// DN_PROCESS_COMPLETION echoing `context` (MC-DPL8CS 2.2.3.3).
    pub(crate) fn answer_process_completion(&mut self, now: Instant, peer: SocketAddr, context: u32) {
        let answer = SessionMessage::ProcessCompletion(ProcessCompletion { packet_context: context });
        self.send_msg(now, peer, &answer);
    }
}

#[cfg(test)]
mod tests;
