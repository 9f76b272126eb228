//! Hooks into a [`Session`]'s state for the simulator scenarios (`dplay-testkit` and this
//! crate's `tests/scenarios`): they set up what no peer's message can (a host whose entry lost
//! its HOST flag, a setting changed in the middle of a join, a peer posing as a member) or
//! explain a failure. Behind the `test-hooks` feature, hidden from the documentation, and no
//! part of the API (docs/ARCHITECTURE.md, "Test support").

use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::{ConnectError, Endpoint};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::SessionMessage;

use crate::session::{Link, LinkState};
use crate::{NameTable, Phase, Session, SessionConfig};

/// The transport endpoint, to send on a connection what the session never would.
pub fn endpoint_mut(s: &mut Session) -> &mut Endpoint {
    &mut s.ep
}

/// Sends `msg` to `to` as the session sends its own messages (reliable, sequential, USER_1).
pub fn send_session_message(s: &mut Session, now: Instant, to: SocketAddr, msg: &SessionMessage) {
    s.send_msg(now, to, msg);
}

/// The name table, to change it behind the session's back.
pub fn name_table_mut(s: &mut Session) -> &mut NameTable {
    &mut s.table
}

/// The configuration, to change it in the middle of a join.
pub fn config_mut(s: &mut Session) -> &mut SessionConfig {
    &mut s.cfg
}

/// Makes a session that is in no session pose as a member and connect to `peer`: a silent
/// one, or with `claimed` one instructed to connect as that DPNID (MC-DPL8CS 3.1.5.2).
pub fn pose_as_member(
    s: &mut Session,
    now: Instant,
    peer: SocketAddr,
    claimed: Option<Dpnid>,
) -> Result<(), ConnectError> {
    s.phase = Phase::Member;
    if let Some(local) = claimed {
        s.local = local;
        s.links.insert(peer, Link { dpnid: Some(local), state: LinkState::Instructed });
    }
    s.ep.connect(now, peer)
}

/// Host: the last DN_RESYNC_VERSION sent (MC-DPL8CS 2.2.2.5, 2.2.6).
pub fn resync_version(s: &Session) -> u32 {
    s.resync
}

/// What a failure report shows beyond the public accessors: the host migration under way and
/// the links.
pub fn internals(s: &Session) -> String {
    format!("migration {:?} links {:?}", s.migration, s.links)
}
