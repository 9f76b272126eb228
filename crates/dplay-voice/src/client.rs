//! A voice client (MC-DPLVP 3.1) for checking a host's voice: it connects, sends frames in
//! bursts and measures each frame's round trip (echo: SPEECHBOUNCE; forwarding: its own
//! SPEECHWITHFROM, targeting itself).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use dplay_wire::Wire;
use dplay_wire::text::Blob;
use dplay_wire::voice::{
    Codec, Dvid, NO_HOST_ORDER_ID, Speech, SpeechWithTarget, VoiceMessage, VoicePlayerFlags,
    VoiceSessionType, VoiceVersion,
};

use crate::Outgoing;

/// The Connection Retry Timer (3.1.2).
pub const CONNECT_RETRY: Duration = Duration::from_millis(1250);
/// The Connection Request Timer (3.1.2).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How the client runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoiceClientConfig {
    /// The voice server's DVID: the session host's player (3.1.3, client/server; in a DirectPlay 4
    /// or peer-to-peer session our host is the voice server too, docs/decisions.md).
    pub server: Dvid,
    /// Our own DVID (forwarding frames target it to come back).
    pub local: Dvid,
    /// Frames per voice burst.
    pub frames_per_burst: u8,
}

/// What the client tells its caller.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    /// CONNECTACCEPT arrived and SETTINGSCONFIRM went back (3.1.5.1.3).
    Connected {
        /// The session type.
        session_type: VoiceSessionType,
        /// The codec's GUID and, if known, the codec.
        codec: Option<&'static Codec>,
    },
    /// CONNECTREFUSE (3.1.5.1.4), or no answer within [`CONNECT_TIMEOUT`], or a session type
    /// this client cannot use (mixing, peer).
    Refused(String),
    /// The voice session ended: SESSIONLOST, DISCONNECTCONFIRM, or the server left (3.1.7).
    Ended(&'static str),
    /// A frame we sent came back after `rtt`.
    RoundTrip(Duration),
}

/// Round-trip figures of the frames that came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoundTrips {
    /// Frames sent.
    pub sent: u64,
    /// Frames that came back.
    pub received: u64,
    /// Fastest.
    pub min: Option<Duration>,
    /// Slowest.
    pub max: Option<Duration>,
    /// Sum of every round trip (for the mean).
    pub total: Duration,
}

impl RoundTrips {
    /// The mean round trip.
    pub fn mean(&self) -> Option<Duration> {
        u32::try_from(self.received).ok().filter(|&n| n > 0).map(|n| self.total / n)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Connecting { since: Instant, retry: Instant },
    Connected { session_type: VoiceSessionType },
    Disconnecting,
    Done,
}

/// The voice client.
#[derive(Debug)]
pub struct VoiceClient {
    cfg: VoiceClientConfig,
    state: State,
    codec: Option<&'static Codec>,
    message_number: u8,
    sequence_number: u8,
    /// When each sequence number of the current burst was sent.
    sent_at: Vec<Option<Instant>>,
    rtt: RoundTrips,
    out: VecDeque<Outgoing>,
    events: VecDeque<ClientEvent>,
}

impl VoiceClient {
    /// A client not connected yet (3.1.3).
    pub fn new(cfg: VoiceClientConfig) -> Self {
        Self {
            cfg,
            state: State::Idle,
            codec: None,
            message_number: 0,
            sequence_number: 0,
            sent_at: vec![None; 256],
            rtt: RoundTrips::default(),
            out: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Sends CONNECTREQUEST (3.1.5.1.2) and starts the connection timers.
    pub fn connect(&mut self, now: Instant) {
        self.state = State::Connecting { since: now, retry: now + CONNECT_RETRY };
        self.send(&VoiceMessage::ConnectRequest(VoiceVersion::SPEC));
    }

    /// True once SETTINGSCONFIRM went out and the session type is one we speak.
    pub fn is_connected(&self) -> bool {
        matches!(self.state, State::Connected { .. })
    }

    /// True once the voice session is over for us.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The round trips so far.
    pub fn round_trips(&self) -> RoundTrips {
        self.rtt
    }

    /// The codec the server announced.
    pub fn codec(&self) -> Option<&'static Codec> {
        self.codec
    }

    /// The next message to send (to [`VoiceClientConfig::server`]).
    pub fn poll_outgoing(&mut self) -> Option<Outgoing> {
        self.out.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// The next deadline.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.state {
            State::Connecting { since, retry } => Some(retry.min(since + CONNECT_TIMEOUT)),
            _ => None,
        }
    }

    fn send(&mut self, msg: &VoiceMessage) {
        if let Ok(bytes) = msg.to_vec() {
            self.out.push_back(Outgoing { to: self.cfg.server, bytes, reliable: !msg.is_speech() });
        }
    }

    /// 3.1.6: resends CONNECTREQUEST every 1,250 ms; gives up after 30 s.
    pub fn handle_timeout(&mut self, now: Instant) {
        let State::Connecting { since, retry } = self.state else { return };
        if now >= since + CONNECT_TIMEOUT {
            self.state = State::Done;
            self.events.push_back(ClientEvent::Refused("no answer from the voice server in 30 s".into()));
        } else if now >= retry {
            self.state = State::Connecting { since, retry: now + CONNECT_RETRY };
            self.send(&VoiceMessage::ConnectRequest(VoiceVersion::SPEC));
        }
    }

    /// A voice message from `from`; only the server's count (3.1.5.1.3-3.1.5.6.3), anything
    /// unrecognized or malformed is ignored (3.1.5.1.1).
    pub fn handle_message(&mut self, now: Instant, from: Dvid, bytes: &[u8]) {
        let Ok(msg) = VoiceMessage::parse(bytes) else { return };
        if from != self.cfg.server {
            return;
        }
        match (self.state, msg) {
            (
                State::Connecting { .. },
                VoiceMessage::ConnectAccept { session_type, compression_type, .. },
            ) => {
                self.codec = Codec::by_guid(compression_type);
                let supported =
                    [VoiceSessionType::DVSESSIONTYPE_FORWARDING, VoiceSessionType::DVSESSIONTYPE_ECHO];
                if !supported.contains(&session_type) {
                    // 3.1.5.1.3: a client that cannot take part sends nothing more.
                    self.state = State::Done;
                    let text = format!("voice session type {session_type} is not one this client speaks");
                    return self.events.push_back(ClientEvent::Refused(text));
                }
                self.send(&VoiceMessage::SettingsConfirm {
                    player_flags: VoicePlayerFlags::empty(),
                    host_order_id: NO_HOST_ORDER_ID,
                });
                self.state = State::Connected { session_type };
                self.events.push_back(ClientEvent::Connected { session_type, codec: self.codec });
            }
            (State::Connecting { .. }, VoiceMessage::ConnectRefuse { reason, .. }) => {
                self.state = State::Done;
                self.events.push_back(ClientEvent::Refused(format!("the voice server refused: {reason}")));
            }
            (State::Connected { .. } | State::Disconnecting, VoiceMessage::SessionLost { .. }) => {
                self.end("the voice session was lost")
            }
            (State::Disconnecting, VoiceMessage::DisconnectConfirm) => self.end("disconnected"),
            (State::Connected { .. } | State::Disconnecting, VoiceMessage::SpeechBounce(s)) => {
                self.came_back(now, s.message_number, s.sequence_number)
            }
            (State::Connected { .. } | State::Disconnecting, VoiceMessage::SpeechWithFrom(s))
                if s.source == self.cfg.local =>
            {
                self.came_back(now, s.message_number, s.sequence_number)
            }
            _ => {}
        }
    }

    fn end(&mut self, why: &'static str) {
        self.state = State::Done;
        self.events.push_back(ClientEvent::Ended(why));
    }

    /// 3.1.7: the server's player left; without host migration voice ends.
    pub fn player_left(&mut self, dvid: Dvid) {
        if dvid == self.cfg.server && self.state != State::Done {
            self.end("the voice server left the session");
        }
    }

    fn came_back(&mut self, now: Instant, message_number: u8, sequence_number: u8) {
        if message_number != self.message_number {
            return;
        }
        let Some(sent) = self.sent_at.get_mut(usize::from(sequence_number)).and_then(Option::take) else {
            return;
        };
        let rtt = now.saturating_duration_since(sent);
        let r = &mut self.rtt;
        r.received += 1;
        r.total += rtt;
        r.min = Some(r.min.map_or(rtt, |m| m.min(rtt)));
        r.max = Some(r.max.map_or(rtt, |m| m.max(rtt)));
        self.events.push_back(ClientEvent::RoundTrip(rtt));
    }

    /// Sends the next frame (3.1.5.6.2 in echo, 3.1.5.5.3 in forwarding, to ourselves): a
    /// new burst every [`VoiceClientConfig::frames_per_burst`] frames (3.1.4). `frame` is
    /// the speech data: PCM for DPVCTGUID_NONE.
    pub fn send_frame(&mut self, now: Instant, frame: &[u8]) -> bool {
        let State::Connected { session_type } = self.state else { return false };
        if frame.is_empty() {
            return false;
        }
        if self.sequence_number == 0 || self.sequence_number >= self.cfg.frames_per_burst.max(1) {
            // Start Voice Burst (3.1.4).
            self.message_number = self.message_number.wrapping_add(1);
            self.sequence_number = 0;
            self.sent_at.iter_mut().for_each(|s| *s = None);
        }
        let (m, s) = (self.message_number, self.sequence_number);
        let data = Blob::new(frame);
        let msg = if session_type == VoiceSessionType::DVSESSIONTYPE_ECHO {
            VoiceMessage::Speech(Speech { message_number: m, sequence_number: s, data })
        } else {
            VoiceMessage::SpeechWithTarget(SpeechWithTarget {
                message_number: m,
                sequence_number: s,
                targets: vec![self.cfg.local],
                data,
            })
        };
        self.send(&msg);
        if let Some(slot) = self.sent_at.get_mut(usize::from(s)) {
            *slot = Some(now);
        }
        self.sequence_number = s.wrapping_add(1);
        self.rtt.sent += 1;
        true
    }

    /// Sends any SPEECHWITHTARGET to `targets` (forwarding; 3.1.5.5.3).
    pub fn send_speech_to(&mut self, targets: &[Dvid], frame: &[u8]) -> bool {
        if !matches!(self.state, State::Connected { session_type } if session_type == VoiceSessionType::DVSESSIONTYPE_FORWARDING)
        {
            return false;
        }
        let msg = VoiceMessage::SpeechWithTarget(SpeechWithTarget {
            message_number: self.message_number,
            sequence_number: self.sequence_number,
            targets: targets.to_vec(),
            data: Blob::new(frame),
        });
        self.sequence_number = self.sequence_number.wrapping_add(1);
        self.send(&msg);
        true
    }

    /// 3.1.5.2.3: DVMSGID_DISCONNECT; no more speech.
    pub fn disconnect(&mut self) {
        if self.is_connected() {
            self.state = State::Disconnecting;
            self.send(&VoiceMessage::Disconnect);
        }
    }
}
