//! The dashboard's view of a Flight Simulator add-on host (`dplay fs host`): [`Hosted`] for
//! [`AddonProtocol`], the DirectPlay 8 view and commands underneath ([`dp8_snapshot`],
//! [`dp8_commands`]), with the add-on's CHAT_TEXT (seed 004) for chat lines both ways instead
//! of the DXDiag chat message.

use std::time::Instant;

use dplay_addon::TrafficSnapshot;
use dplay_runtime::{AddonCommand, AddonEvent, AddonProtocol, Dp8Command, Dp8Event, Protocol};

use crate::dp8_view::{dp8_commands, dp8_refresh, dp8_seen, dp8_snapshot, with_voice};
use crate::host_view::{Hosted, Seen};
use crate::link::AdminCommand;
use crate::snapshot::Snapshot;
use crate::voice_view::VoiceView;

impl Hosted for AddonProtocol {
    fn snapshot(&self) -> Snapshot {
        with_voice(self.voice_server(), dp8_snapshot(self.bridge().session()))
    }

    fn refresh(&self, last: &Snapshot) -> Option<Snapshot> {
        dp8_refresh(self.bridge().session(), last).map(|s| with_voice(self.voice_server(), s))
    }

    fn seen(&self, event: &AddonEvent) -> Option<Seen> {
        match event {
            AddonEvent::Session(Dp8Event::Session(e)) => dp8_seen(e, self.bridge().session().local_dpnid()),
            AddonEvent::Addon(dplay_addon::Event::Chat { from, text }) => {
                Some(Seen::Chat { id: from.0, text: text.to_text() })
            }
            _ => None,
        }
    }

    fn admin(&mut self, now: Instant, command: AdminCommand) -> String {
        let (commands, text) = dp8_commands(command, self.bridge().session());
        for c in commands {
            let c = match c {
                Dp8Command::Chat(line) => AddonCommand::Chat(line),
                other => AddonCommand::Session(other),
            };
            self.handle_command(now, c);
        }
        text
    }

    fn voice(&self, now: Instant) -> Option<VoiceView> {
        self.voice_server().map(|v| VoiceView::of(v, now))
    }

    fn traffic(&self, now: Instant) -> Option<TrafficSnapshot> {
        Some(AddonProtocol::traffic(self, now))
    }
}
