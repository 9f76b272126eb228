//! [`Watched`]: what the dashboard needs of a DirectPlay 8 host, so one [`crate::Observed`]
//! serves both `dplay host` ([`Dp8Protocol`]) and `dplay fs host` ([`AddonProtocol`]).

use std::time::Instant;

use dplay_addon::TrafficSnapshot;
use dplay_runtime::{
    AddonCommand, AddonEvent, AddonProtocol, Dp8Command, Dp8Event, Dp8Protocol, Player, Protocol,
};
use dplay_session::Session;
use dplay_wire::dp8::dpnid::Dpnid;

/// A DirectPlay 8 host run by the runtime that the dashboard can show and administer.
pub trait Watched: Protocol {
    /// The session (read-only).
    fn session(&self) -> &Session;
    /// The name table as rows.
    fn players(&self) -> Vec<Player>;
    /// The command handing `command` to the session underneath (a kick, a chat line ...).
    fn session_command(command: Dp8Command) -> Self::Command;
    /// The session's event inside `event`, if it is one.
    fn session_event(event: &Self::Event) -> Option<&Dp8Event>;
    /// A chat line of the application on top (the add-on's CHAT_TEXT): sender and text.
    fn chat(event: &Self::Event) -> Option<(Dpnid, String)>;
    /// The add-on's aircraft at `now`; `None` for a session without the add-on.
    fn traffic(&self, now: Instant) -> Option<TrafficSnapshot>;
}

impl Watched for Dp8Protocol {
    fn session(&self) -> &Session {
        Dp8Protocol::session(self)
    }

    fn players(&self) -> Vec<Player> {
        Dp8Protocol::players(self)
    }

    fn session_command(command: Dp8Command) -> Dp8Command {
        command
    }

    fn session_event(event: &Dp8Event) -> Option<&Dp8Event> {
        Some(event)
    }

    fn chat(_: &Dp8Event) -> Option<(Dpnid, String)> {
        None
    }

    fn traffic(&self, _: Instant) -> Option<TrafficSnapshot> {
        None
    }
}

/// The Flight Simulator add-on over DirectPlay 8 (FS2004, seed 004).
impl Watched for AddonProtocol {
    fn session(&self) -> &Session {
        self.bridge().session()
    }

    fn players(&self) -> Vec<Player> {
        AddonProtocol::players(self)
    }

    fn session_command(command: Dp8Command) -> AddonCommand {
        AddonCommand::Session(command)
    }

    fn session_event(event: &AddonEvent) -> Option<&Dp8Event> {
        match event {
            AddonEvent::Session(e) => Some(e),
            _ => None,
        }
    }

    /// CHAT_TEXT (FS-MULTIPLAYER.md 1.3, 3.2), decoded from the code page the add-on sends.
    fn chat(event: &AddonEvent) -> Option<(Dpnid, String)> {
        match event {
            AddonEvent::Addon(dplay_addon::Event::Chat { from, text }) => {
                Some((Dpnid(from.0), text.to_text()))
            }
            _ => None,
        }
    }

    fn traffic(&self, now: Instant) -> Option<TrafficSnapshot> {
        Some(AddonProtocol::traffic(self, now))
    }
}
