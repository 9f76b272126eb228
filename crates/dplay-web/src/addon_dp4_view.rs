//! The dashboard's view of a Flight Simulator 98 add-on host (`dplay fs host --dp4`):
//! [`Hosted`] for [`AddonDp4Protocol`], the DirectPlay 4 view and commands underneath
//! ([`dp4_snapshot`], [`dp4_commands`]: DELETEPLAYER, bans, SESSIONDESCCHANGED), with the
//! add-on's CHAT_TEXT_SEND (FS98 0x1020; seed 004, FS-MULTIPLAYER.md 1.2, 1.3) for chat lines
//! both ways instead of DPSP_MSG_CHAT (docs/decisions.md "FS98 dashboard").

use std::time::Instant;

use dplay_addon::TrafficSnapshot;
use dplay_runtime::{AddonDp4Command, AddonDp4Event, AddonDp4Protocol, Dp4Command, Dp4Event, Protocol};

use crate::dp4_view::{dp4_commands, dp4_seen, dp4_snapshot};
use crate::host_view::{Hosted, Seen};
use crate::link::AdminCommand;
use crate::snapshot::Snapshot;

/// The add-on command that carries out a DirectPlay 4 host command the dashboard gives.
fn addon_command(c: Dp4Command) -> Option<AddonDp4Command> {
    Some(match c {
        Dp4Command::RemoveInstance(id) => AddonDp4Command::RemoveInstance(id),
        Dp4Command::SetBans(bans) => AddonDp4Command::SetBans(bans),
        Dp4Command::SetSession { max_players, flags } => AddonDp4Command::SetSession { max_players, flags },
        Dp4Command::SetPassword(p) => AddonDp4Command::SetPassword(p),
        Dp4Command::Chat(text) => AddonDp4Command::Chat(text),
        // dp4_commands gives no other command.
        _ => return None,
    })
}

impl Hosted for AddonDp4Protocol {
    fn snapshot(&self) -> Snapshot {
        crate::dp8_view::with_voice(
            self.voice_server(),
            dp4_snapshot(self.bridge().session(), self.peer_bytes()),
        )
    }

    fn voice(&self, now: Instant) -> Option<crate::voice_view::VoiceView> {
        self.voice_server().map(|v| crate::voice_view::VoiceView::of(v, now))
    }

    fn seen(&self, event: &AddonDp4Event) -> Option<Seen> {
        match event {
            AddonDp4Event::Dp4(Dp4Event::Session(e)) => dp4_seen(e, self.bridge().session()),
            AddonDp4Event::Addon(dplay_addon::Event::Chat { from, text }) => {
                Some(Seen::Chat { id: from.0, text: text.to_text() })
            }
            _ => None,
        }
    }

    fn admin(&mut self, now: Instant, command: AdminCommand) -> String {
        let (commands, text) = dp4_commands(command, self.bridge().session());
        for c in commands.into_iter().filter_map(addon_command) {
            self.handle_command(now, c);
        }
        text
    }

    fn probe(&mut self, now: Instant) {
        self.probe_round_trips(now);
    }

    fn traffic(&self, now: Instant) -> Option<TrafficSnapshot> {
        Some(AddonDp4Protocol::traffic(self, now))
    }
}
