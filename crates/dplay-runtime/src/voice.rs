//! DirectPlay Voice over a DirectPlay 8 session (MC-DPLVP 2.1): the voice server of `dplay host
//! --voice`, or the test client of `dplay join --voice-test`, fed the session's USER_2
//! messages and player departures, its messages sent back through [`Session::send_voice`].

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use dplay_session::{Event, Session};
use dplay_voice::{
    ClientEvent, RoundTrips, ServerEvent, VoiceClient, VoiceClientConfig, VoiceServer, VoiceServerConfig,
};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::voice::{Codec, Dvid};

/// Which voice role a DirectPlay 8 protocol plays.
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

/// The voice layer of one DirectPlay 8 protocol.
#[derive(Debug)]
pub(crate) struct VoiceLayer {
    role: Role,
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
        Some(Self { role })
    }

    /// The server, when we are one.
    pub(crate) fn server(&self) -> Option<&VoiceServer> {
        match &self.role {
            Role::Server(s) => Some(s),
            Role::Test { .. } => None,
        }
    }

    /// Looks at a session event before it is reported; true when it was voice and is consumed.
    pub(crate) fn on_event(&mut self, now: Instant, session: &Session, event: &Event) -> bool {
        match (&mut self.role, event) {
            (Role::Server(s), Event::Voice { from, data }) => {
                let table = session.name_table();
                let members = |d: Dvid| {
                    table
                        .group(Dpnid(d.0))
                        .map(|_| table.group_members(Dpnid(d.0)).map(|m| Dvid(m.0)).collect())
                };
                s.handle_message(now, Dvid(from.0), data, &members);
                true
            }
            (Role::Server(s), Event::PlayerRemoved { dpnid, .. }) => {
                s.player_left(Dvid(dpnid.0));
                false
            }
            (Role::Test { client: Some(c), .. }, Event::Voice { from, data }) => {
                c.handle_message(now, Dvid(from.0), data);
                true
            }
            (Role::Test { client: Some(c), .. }, Event::PlayerRemoved { dpnid, .. }) => {
                c.player_left(Dvid(dpnid.0));
                false
            }
            (Role::Test { client: client @ None, .. }, Event::Joined { .. }) => {
                // Our host is the voice server (docs/decisions.md, "DirectPlay Voice").
                let cfg = VoiceClientConfig {
                    server: Dvid(session.host_dpnid().0),
                    local: Dvid(session.local_dpnid().0),
                    frames_per_burst: 20,
                };
                let mut c = VoiceClient::new(cfg);
                c.connect(now);
                *client = Some(c);
                false
            }
            (_, Event::Voice { .. }) => true,
            _ => false,
        }
    }

    /// Sends what the voice layer queued, runs its timers and reports its events.
    pub(crate) fn pump(&mut self, now: Instant, session: &mut Session, events: &mut VecDeque<VoiceEvent>) {
        match &mut self.role {
            Role::Server(s) => {
                while let Some(o) = s.poll_outgoing() {
                    // A client gone meanwhile: nothing to send to.
                    let _ = session.send_voice(now, Dpnid(o.to.0), &o.bytes, o.reliable);
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
                    let _ = session.send_voice(now, Dpnid(o.to.0), &o.bytes, o.reliable);
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
