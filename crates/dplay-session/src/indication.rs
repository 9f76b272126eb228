//! The host application's say on each join (DPN_MSGID_INDICATE_CONNECT of IDirectPlay8Peer
//! and IDirectPlay8Server; MC-DPL8CS 3.1.5.1 step 2 leaves the decision to the host): with
//! `indicate_connect`, a joiner that passed every check is held, the application hears
//! [`Event::JoinRequest`] with its connect data, and [`Session::answer_join`] admits it with
//! reply data (SEND_CONNECT_INFO) or refuses it with a code and reply data (CONNECT_FAILED).
//!
//! What is held is bounded as every pending joiner is (docs/limits.md): the joiner's
//! PLAYER_CONNECT_INFO (at most `max_join_message`), for at most `max_pending_joins` joiners,
//! until the join deadline drops them ([`Event::JoinAborted`]).

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp8::session::{PlayerConnectInfo, ResultCode};

use crate::event::{CommandError, Event, refused_name};
use crate::session::{LinkState, Phase, Session};

impl Session {
    /// Holds the joiner at `peer` until the application answers.
    pub(crate) fn indicate(&mut self, peer: SocketAddr, info: &PlayerConnectInfo) {
        let name = info.name.as_ref().map(|n| refused_name(n.to_string_lossy()));
        let connect_data = info.connect_data.0.clone();
        self.indications.insert(peer, Box::new(info.clone()));
        self.events.push_back(Event::JoinRequest { from: peer, name, connect_data });
    }

    /// Host: answers the [`Event::JoinRequest`] of the joiner at `from`: `Ok(reply)` admits it
    /// (its DN_SEND_CONNECT_INFO carries `reply`), `Err((code, reply))` refuses it with
    /// DN_CONNECT_FAILED. `UnknownPlayer` when it is not waiting (it left, or was answered);
    /// `InvalidParam` when `reply` is over `max_app_data`.
    pub fn answer_join(
        &mut self,
        now: Instant,
        from: SocketAddr,
        answer: Result<Vec<u8>, (ResultCode, Vec<u8>)>,
    ) -> Result<(), CommandError> {
        if self.phase != Phase::Host {
            return Err(CommandError::WrongState);
        }
        let reply_len = match &answer {
            Ok(r) | Err((_, r)) => r.len(),
        };
        if reply_len > self.cfg.limits.max_app_data {
            return Err(CommandError::InvalidParam);
        }
        let waiting = self.links.get(&from).is_some_and(|l| l.state == LinkState::Joining);
        let Some(info) = self.indications.remove(&from).filter(|_| waiting) else {
            return Err(CommandError::UnknownPlayer);
        };
        match answer {
            Ok(reply) => self.admit(now, from, &info, &reply),
            Err((code, reply)) => self.refuse(now, from, &info, code, &reply),
        }
        Ok(())
    }

    /// The connection of a joiner we held ended: the application hears it.
    pub(crate) fn indication_aborted(&mut self, peer: SocketAddr) {
        if self.indications.remove(&peer).is_some() {
            self.events.push_back(Event::JoinAborted { from: peer });
        }
    }
}
