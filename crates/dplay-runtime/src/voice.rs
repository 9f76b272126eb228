//! DirectPlay Voice over a DirectPlay 8 or DirectPlay 4 session (MC-DPLVP 2.1): the voice
//! server of `dplay host --voice`, or the test client of `dplay join --voice-test`, fed the
//! session's voice messages (USER_2 DFRAMEs, DPSP_MSG_VOICE) and player departures, its
//! messages sent back through [`Session::send_voice`] or [`Dp4Session::send_voice`].

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use dplay_session::dp4::{Dp4Event as Dp4SessionEvent, Dp4Session};
use dplay_session::{Event, Session};
use dplay_voice::{
    ClientEvent, Outgoing, RoundTrips, ServerEvent, VoiceClient, VoiceClientConfig, VoiceServer,
    VoiceServerConfig,
};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::voice::{Codec, Dvid};

use crate::Dp4Event;

/// Which voice role a DirectPlay 8 or DirectPlay 4 protocol plays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VoiceRole {
    /// The voice server of the session (`dplay host --voice`).
    Server(VoiceServerConfig),
    /// The test client (`dplay join --voice-test`): `frames` frames of the announced codec's
    /// size, one per frame period (1.3.7), then DISCONNECT.
    Test {
        /// How many frames.
        frames: u32,
    },
}

/// What the voice layer reports.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VoiceEvent {
    /// The server's events.
    Server(ServerEvent),
    /// The test client connected: the session type and codec the server announced.
    TestConnected {
        /// `DVSESSIONTYPE_*`.
        session_type: String,
        /// The codec's constant, or its GUID when unknown.
        codec: String,
    },
    /// The test client could not use the voice server.
    TestFailed(String),
    /// The test ended: the round trips measured.
    TestDone(RoundTrips),
    /// Per-talker speech counts (with the refusals summary): each voice client's DVID and the
    /// speech messages accepted from it.
    Speech(Vec<(Dvid, u64)>),
}

#[derive(Debug)]
enum Role {
    Server(VoiceServer),
    Test { client: Option<VoiceClient>, frames_left: u32, next: Option<Instant>, started: bool, frames: u32 },
}

/// The voice layer of one DirectPlay 8 or DirectPlay 4 protocol: the carrier's voice messages
/// and player departures in, voice messages out through the carrier.
#[derive(Debug)]
pub(crate) struct VoiceLayer {
    role: Role,
    /// The test client's player, once it runs: over DirectPlay 4 its messages come from it,
    /// the server's from our system player (docs/decisions.md, "DirectPlay Voice"). Over
    /// DirectPlay 8 the session knows who sends.
    me: Option<Dvid>,
}

impl VoiceLayer {
    /// `None` for a server type this stack does not run (mixing, peer).
    pub(crate) fn new(role: VoiceRole) -> Option<Self> {
        let role = match role {
            VoiceRole::Server(cfg) => Role::Server(VoiceServer::new(cfg)?),
            VoiceRole::Test { frames } => {
                Role::Test { client: None, frames_left: frames, next: None, started: false, frames }
            }
        };
        Some(Self { role, me: None })
    }

    /// The server, when we are one.
    pub(crate) fn server(&self) -> Option<&VoiceServer> {
        match &self.role {
            Role::Server(s) => Some(s),
            Role::Test { .. } => None,
        }
    }

    /// A voice message from player `from`; `members` expands a group from the name table.
    fn voice(&mut self, now: Instant, from: Dvid, data: &[u8], members: &dyn Fn(Dvid) -> Option<Vec<Dvid>>) {
        match &mut self.role {
            Role::Server(s) => s.handle_message(now, from, data, members),
            Role::Test { client: Some(c), .. } => c.handle_message(now, from, data),
            Role::Test { client: None, .. } => {}
        }
    }

    /// A player left the session (MC-DPLVP 3.2.7, 3.1.7).
    fn player_left(&mut self, dvid: Dvid) {
        match &mut self.role {
            Role::Server(s) => s.player_left(dvid),
            Role::Test { client: Some(c), .. } => c.player_left(dvid),
            Role::Test { client: None, .. } => {}
        }
    }

    /// The test client connects to `server` as `local`, once (our host is the voice server:
    /// docs/decisions.md, "DirectPlay Voice").
    fn start_test(&mut self, now: Instant, server: Dvid, local: Dvid) {
        if let Role::Test { client: client @ None, .. } = &mut self.role {
            let mut c = VoiceClient::new(VoiceClientConfig { server, local, frames_per_burst: 20 });
            c.connect(now);
            *client = Some(c);
            self.me = Some(local);
        }
    }

    /// The host is leaving: SESSIONLOST to every voice client (MC-DPLVP 3.2.4, 3.2.5.2.1),
    /// sent by the next pump, before the leave.
    pub(crate) fn shutdown(&mut self) {
        if let Role::Server(s) = &mut self.role {
            s.shutdown();
        }
    }

    /// [`VoiceLayer::shutdown`] and its SESSIONLOSTs sent over DirectPlay 4.
    pub(crate) fn shutdown_dp4(&mut self, now: Instant, session: &mut Dp4Session) -> VecDeque<VoiceEvent> {
        self.shutdown();
        let mut events = VecDeque::new();
        self.pump_dp4(now, session, &mut events);
        events
    }

    /// Adds the server's drops by reason (names with `voice` or `speech`) to a DirectPlay 4
    /// drops-and-refusals summary; its per-talker speech counts, to report with it.
    pub(crate) fn dp4_summary(voice: Option<&Self>, summary: &mut [Dp4Event; 2]) -> Option<VoiceEvent> {
        let s = voice?.server()?;
        if let [Dp4Event::DropSummary(counts), _] = summary {
            counts.extend(s.stats().drops());
        }
        Some(VoiceEvent::Speech(s.talkers().iter().map(|t| (t.dvid, t.speech)).collect()))
    }

    /// Looks at a DirectPlay 8 session event before it is reported; true when it was voice
    /// and is consumed.
    pub(crate) fn on_event(&mut self, now: Instant, session: &Session, event: &Event) -> bool {
        match event {
            Event::Voice { from, data } => {
                let table = session.name_table();
                let members = |d: Dvid| {
                    table
                        .group(Dpnid(d.0))
                        .map(|_| table.group_members(Dpnid(d.0)).map(|m| Dvid(m.0)).collect())
                };
                self.voice(now, Dvid(from.0), data, &members);
                true
            }
            Event::PlayerRemoved { dpnid, .. } => {
                self.player_left(Dvid(dpnid.0));
                false
            }
            Event::Joined { .. } => {
                self.start_test(now, Dvid(session.host_dpnid().0), Dvid(session.local_dpnid().0));
                false
            }
            _ => false,
        }
    }

    /// Looks at a DirectPlay 4 session event before it is reported; true when it was voice
    /// and is consumed. A DVID is a player ID (MC-DPLVP 3.1.5.1.3 <1>); the test client
    /// starts once our application player exists, and talks to the host's system player.
    pub(crate) fn on_dp4_event(
        &mut self,
        now: Instant,
        session: &Dp4Session,
        event: &Dp4SessionEvent,
    ) -> bool {
        match event {
            Dp4SessionEvent::Voice { from, data, .. } => {
                let members = |d: Dvid| session.group_members(d.0).map(|m| m.map(Dvid).collect());
                self.voice(now, Dvid(*from), data, &members);
                true
            }
            Dp4SessionEvent::PlayerLeft { id } => {
                self.player_left(Dvid(*id));
                false
            }
            Dp4SessionEvent::PlayerCreated { id } => {
                if let Some(host) = session.host_player() {
                    self.start_test(now, Dvid(host), Dvid(*id));
                }
                false
            }
            _ => false,
        }
    }

    /// Sends what the voice layer queued over DirectPlay 8, runs its timers and reports its
    /// events.
    pub(crate) fn pump(&mut self, now: Instant, session: &mut Session, events: &mut VecDeque<VoiceEvent>) {
        // A player gone meanwhile: nothing to send to.
        self.pump_with(
            now,
            &mut |o| {
                let _ = session.send_voice(now, Dpnid(o.to.0), &o.bytes, o.reliable);
            },
            events,
        );
    }

    /// [`VoiceLayer::pump`] over DirectPlay 4: each message a DPSP_MSG_VOICE from our player
    /// ([`VoiceLayer::me`]; the server's is our system player).
    pub(crate) fn pump_dp4(
        &mut self,
        now: Instant,
        session: &mut Dp4Session,
        events: &mut VecDeque<VoiceEvent>,
    ) {
        let Some(me) = self.me.map(|d| d.0).or_else(|| session.system_player()) else { return };
        self.pump_with(
            now,
            &mut |o| {
                let _ = session.send_voice(now, me, o.to.0, &o.bytes, o.reliable);
            },
            events,
        );
    }

    fn pump_with(&mut self, now: Instant, send: &mut dyn FnMut(Outgoing), events: &mut VecDeque<VoiceEvent>) {
        match &mut self.role {
            Role::Server(s) => {
                while let Some(o) = s.poll_outgoing() {
                    send(o);
                }
                while let Some(e) = s.poll_event() {
                    events.push_back(VoiceEvent::Server(e));
                }
            }
            Role::Test { client: Some(c), frames_left, next, started, frames } => {
                c.handle_timeout(now);
                if c.is_connected() && *frames_left > 0 && next.is_none_or(|t| now >= t) {
                    let codec = c.codec().unwrap_or(Codec::pcm());
                    // PCM silence for DPVCTGUID_NONE; the server never decodes any codec.
                    let frame = vec![0x80; codec.frame_bytes as usize];
                    c.send_frame(now, &frame);
                    *frames_left -= 1;
                    *next = Some(now + Duration::from_millis(codec.frame_ms.into()));
                } else if c.is_connected()
                    && *frames_left == 0
                    && next.is_some_and(|t| now >= t + Duration::from_secs(1))
                {
                    // A second for the last frames to come back, then DISCONNECT.
                    c.disconnect();
                    *next = None;
                }
                while let Some(o) = c.poll_outgoing() {
                    send(o);
                }
                while let Some(e) = c.poll_event() {
                    match e {
                        ClientEvent::Connected { session_type, codec } => {
                            *started = true;
                            let codec =
                                codec.map_or_else(|| "an unknown codec".into(), |c| c.constant.to_string());
                            events.push_back(VoiceEvent::TestConnected {
                                session_type: session_type.to_string(),
                                codec,
                            });
                        }
                        ClientEvent::Refused(why) => events.push_back(VoiceEvent::TestFailed(why)),
                        ClientEvent::Ended(_) if *frames_left == 0 || !*started => {
                            events.push_back(VoiceEvent::TestDone(c.round_trips()));
                        }
                        ClientEvent::Ended(why) => events.push_back(VoiceEvent::TestFailed(format!(
                            "{why} after {} of {frames} frames",
                            c.round_trips().sent
                        ))),
                        ClientEvent::RoundTrip(_) => {}
                    }
                }
            }
            Role::Test { client: None, .. } => {}
        }
    }

    /// The voice layer's next deadline.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        match &self.role {
            Role::Test { client: Some(c), next, frames_left, .. } => {
                let frame = next.map(|t| if *frames_left == 0 { t + Duration::from_secs(1) } else { t });
                c.poll_timeout().into_iter().chain(frame).min()
            }
            _ => None,
        }
    }
}
