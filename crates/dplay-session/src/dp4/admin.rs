//! The host operator's tools (issue 17): removing an instance with DELETEPLAYER, refusing
//! banned names and addresses, and changing the password live with SESSIONDESCCHANGED
//! (MC-DPL4CS 2.2.25, 2.2.51, 3.1.5.14, 3.1.5.22; docs/decisions.md, "Bans" and "Live session
//! settings").

use std::net::IpAddr;
use std::time::Instant;

use dplay_wire::WideString;
use dplay_wire::dp4::message::{Dp4Body, Empty};
use dplay_wire::dp4::nametable::{PlayerGroupIds, SessionDescChanged};
use dplay_wire::dp4::session::SessionFlags;

use crate::bans::Bans;
use crate::dp4::event::{CommandError, DropReason, Via};
use crate::dp4::session::{Dp4Session, Role};
use crate::dp4::table::Player;

impl Dp4Session {
    /// Host: the names and addresses refused at join from now on ([`crate::DPERR_ACCESSDENIED`]);
    /// instances already in stay (remove them with [`Dp4Session::remove_instance`]).
    pub fn set_bans(&mut self, bans: Bans) {
        self.guard.bans = bans;
    }

    /// The names and addresses refused at join.
    pub fn bans(&self) -> &Bans {
        &self.guard.bans
    }

    /// Host: removes the instance that player `id` belongs to (a system or an application
    /// player): DPSP_MSG_DELETEPLAYER for each of its players, its system player last, to
    /// every instance, the removed one included (MC-DPL4CS 3.1.5.14: "instructed to leave the
    /// game session by the game session host").
    pub fn remove_instance(&mut self, now: Instant, id: u32) -> Result<(), CommandError> {
        if self.role != Role::Host {
            return Err(CommandError::WrongState);
        }
        let system =
            self.players.get(&id).map(|p| p.system_player_id).ok_or(CommandError::UnknownPlayer(id))?;
        if self.players.get(&system).is_none_or(|p| p.local) {
            return Err(CommandError::UnknownPlayer(id));
        }
        let ids = self.instance_players(system);
        let stream = self.players.get(&system).and_then(|p| p.addrs).map(|(s, _)| s);
        for player_id in ids {
            let body = Dp4Body::DeletePlayer(PlayerGroupIds { player_id, ..PlayerGroupIds::default() });
            self.send_to_instances(&body, None);
        }
        // 3.1.5.32: after the DELETEPLAYERs, YOUAREDEAD tells the removed instance to go; a
        // Windows client without keep-alive would not learn it otherwise (issue 27 item 11).
        if let Some(stream) = stream {
            self.send_body(Via::Tcp, stream, Dp4Body::YouAreDead(Empty));
        }
        tracing::info!(id = system, "DP4 instance removed by the host");
        self.remove_player(now, system);
        Ok(())
    }

    /// Host: whether a joiner from `ip` whose player `p` is given is banned; counted and
    /// logged when it is.
    pub(crate) fn banned(&mut self, now: Instant, ip: IpAddr, p: Option<&Player>) -> bool {
        let name = |n: Option<&WideString>| n.map(WideString::to_string_lossy);
        let names = p.map_or([None, None], |p| [name(p.short_name.as_ref()), name(p.long_name.as_ref())]);
        let bans = &self.guard.bans;
        let banned = bans.is_address_banned(ip) || names.iter().flatten().any(|n| bans.is_name_banned(n));
        if banned {
            self.refuse(now, ip, DropReason::Banned, "banned (DPERR_ACCESSDENIED)");
        }
        banned
    }

    /// Host: a member created a player with a banned name (MC-DPL4CS 3.1.5.12): its instance is
    /// removed, as the name was not known when it joined. True when it was.
    pub(crate) fn remove_if_banned(&mut self, now: Instant, ip: IpAddr, p: &Player) -> bool {
        if self.role != Role::Host || self.guard.bans.is_empty() || !self.banned(now, ip, Some(p)) {
            return false;
        }
        let system = p.system_player_id;
        self.remove_instance(now, system).is_ok()
    }

    /// Host: the password joins need from now on (`None`: none), with
    /// DPSESSION_PASSWORDREQUIRED, told to every instance with SESSIONDESCCHANGED unless the
    /// session has DPSESSION_NOSESSIONDESCMESSAGES (MC-DPL4CS 2.2.51, 3.1.5.22).
    pub fn set_password(&mut self, password: Option<&str>) -> Result<(), CommandError> {
        let Some(mut desc) = self.desc.filter(|_| self.role == Role::Host) else {
            return Err(CommandError::WrongState);
        };
        if let Some(p) = password {
            self.check_player_name(p)?;
        }
        self.password = password.filter(|p| !p.is_empty()).map(WideString::new);
        desc.flags.set(SessionFlags::PASSWORD_REQUIRED, self.password.is_some());
        self.desc = Some(desc);
        self.announce_desc();
        Ok(())
    }

    /// SESSIONDESCCHANGED to every instance, unless NS is set (MC-DPL4CS 2.2.51, 3.1.5.22).
    pub(crate) fn announce_desc(&mut self) {
        let Some(desc) = self.current_desc() else { return };
        if desc.flags.contains(SessionFlags::NO_SESSION_DESC_MESSAGES) {
            return;
        }
        let body = Dp4Body::SessionDescChanged(SessionDescChanged {
            id_to: 0,
            session_desc: desc,
            session_name: self.session_name.clone(),
            password: self.password.clone(),
        });
        self.send_to_instances(&body, None);
    }

    /// The password a host requires, if any.
    pub fn password(&self) -> Option<String> {
        self.password.as_ref().map(WideString::to_string_lossy)
    }
}
