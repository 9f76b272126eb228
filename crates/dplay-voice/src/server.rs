//! The voice server of the forwarding and echo session types (MC-DPLVP 3.2).

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use dplay_wire::Wire;
use dplay_wire::voice::{
    Codec, Dvid, NO_HOST_ORDER_ID, Speech, SpeechWithFrom, VoiceClientEntry, VoiceMessage, VoicePlayerFlags,
    VoiceResult, VoiceSessionFlags, VoiceSessionType, VoiceVersion,
};

use crate::Outgoing;
use crate::limits::{MAX_SPEECH_DATA, RateCap};
use crate::stats::{DropLog, VoiceDrop, VoiceStats};

/// How the server runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoiceServerConfig {
    /// DVSESSIONTYPE_FORWARDING or DVSESSIONTYPE_ECHO ([`VoiceServer::new`] refuses others).
    pub session_type: VoiceSessionType,
    /// The codec announced in CONNECTACCEPT (2.2.3.2); the server never decodes it.
    pub codec: &'static Codec,
    /// DVSESSION_SERVERCONTROLTARGET only when asked (2.2.2.5); DVSESSION_NOHOSTMIGRATION is
    /// always set: host migration is the peer type's (1.3.3.1).
    pub server_control_target: bool,
}

impl VoiceServerConfig {
    /// A forwarding server announcing DPVCTGUID_SC03, as the SDK samples did.
    pub fn forwarding() -> Self {
        Self {
            session_type: VoiceSessionType::DVSESSIONTYPE_FORWARDING,
            codec: Codec::sc03(),
            server_control_target: false,
        }
    }

    /// An echo server announcing DPVCTGUID_SC03.
    pub fn echo() -> Self {
        Self { session_type: VoiceSessionType::DVSESSIONTYPE_ECHO, ..Self::forwarding() }
    }

    fn session_flags(&self) -> VoiceSessionFlags {
        let mut f = VoiceSessionFlags::NO_HOST_MIGRATION;
        f.set(VoiceSessionFlags::SERVER_CONTROL_TARGET, self.server_control_target);
        f
    }
}

/// Why a voice client left the voice session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientGone {
    /// It sent DVMSGID_DISCONNECT (3.2.5.2.3).
    Disconnected,
    /// Its player left the DirectPlay session (3.2.7).
    LeftSession,
    /// The server shut down (3.2.4).
    ServerShutdown,
}

impl ClientGone {
    /// The reason as `--json` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Disconnected => "disconnected",
            Self::LeftSession => "left the session",
            Self::ServerShutdown => "server shut down",
        }
    }
}

/// What the server tells its caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEvent {
    /// A voice client completed the connection (SETTINGSCONFIRM, 3.2.5.1.5).
    ClientConnected {
        /// Its DVID.
        dvid: Dvid,
        /// DVPLAYERCAPS_HALFDUPLEX: it only listens.
        half_duplex: bool,
    },
    /// A voice client left.
    ClientGone {
        /// Its DVID.
        dvid: Dvid,
        /// Why.
        reason: ClientGone,
        /// Speech messages it sent that were accepted.
        speech: u64,
    },
}

/// One connected voice client (created at SETTINGSCONFIRM only, 5.1).
#[derive(Debug, Clone)]
struct Client {
    rate: RateCap,
    speech: u64,
    last_speech: Option<Instant>,
}

/// A voice client's state as the dashboard shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Talker {
    /// Its DVID.
    pub dvid: Dvid,
    /// Speech messages accepted from it.
    pub speech: u64,
    /// When its last accepted speech arrived.
    pub last_speech: Option<Instant>,
}

/// The voice server (MC-DPLVP 3.2) of a forwarding or echo voice session.
#[derive(Debug)]
pub struct VoiceServer {
    cfg: VoiceServerConfig,
    clients: HashMap<Dvid, Client>,
    out: VecDeque<Outgoing>,
    events: VecDeque<ServerEvent>,
    stats: VoiceStats,
    log: DropLog,
    shut_down: bool,
}

impl VoiceServer {
    /// A server with no voice client yet (3.2.3). `None` for the mixing and peer types, which
    /// this server does not run.
    pub fn new(cfg: VoiceServerConfig) -> Option<Self> {
        let supported = [VoiceSessionType::DVSESSIONTYPE_FORWARDING, VoiceSessionType::DVSESSIONTYPE_ECHO];
        supported.contains(&cfg.session_type).then(|| Self {
            cfg,
            clients: HashMap::new(),
            out: VecDeque::new(),
            events: VecDeque::new(),
            stats: VoiceStats::default(),
            log: DropLog::default(),
            shut_down: false,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &VoiceServerConfig {
        &self.cfg
    }

    /// The counters.
    pub fn stats(&self) -> &VoiceStats {
        &self.stats
    }

    /// The connected voice clients, by DVID.
    pub fn talkers(&self) -> Vec<Talker> {
        let mut t: Vec<_> = self
            .clients
            .iter()
            .map(|(&dvid, c)| Talker { dvid, speech: c.speech, last_speech: c.last_speech })
            .collect();
        t.sort_by_key(|t| t.dvid);
        t
    }

    /// The next message to send.
    pub fn poll_outgoing(&mut self) -> Option<Outgoing> {
        self.out.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    fn send(&mut self, to: Dvid, msg: &VoiceMessage) {
        if let Ok(bytes) = msg.to_vec() {
            self.out.push_back(Outgoing { to, bytes, reliable: !msg.is_speech() });
        }
    }

    fn drop_msg(&mut self, now: Instant, from: Dvid, reason: VoiceDrop) {
        self.log.drop(&mut self.stats, now, reason, from);
    }

    /// A voice message from the player `from`. `members` expands a group DVID to its
    /// players' DVIDs from the session's name table (`None`: not a group).
    pub fn handle_message(
        &mut self,
        now: Instant,
        from: Dvid,
        bytes: &[u8],
        members: &dyn Fn(Dvid) -> Option<Vec<Dvid>>,
    ) {
        self.stats.received += 1;
        let msg = match VoiceMessage::parse(bytes) {
            Ok(m) => m,
            Err(e) => {
                let reason = match e {
                    dplay_wire::WireError::InvalidValue { field: "TargetCount", .. } => {
                        VoiceDrop::TooManyTargets
                    }
                    _ => VoiceDrop::Malformed,
                };
                return self.drop_msg(now, from, reason);
            }
        };
        if self.shut_down {
            return self.drop_msg(now, from, VoiceDrop::Unexpected);
        }
        let echo = self.cfg.session_type == VoiceSessionType::DVSESSIONTYPE_ECHO;
        match msg {
            // 3.2.5.1.2: answered every time (a client may repeat it); nothing is kept (5.1).
            VoiceMessage::ConnectRequest(_) => self.send(
                from,
                &VoiceMessage::ConnectAccept {
                    session_type: self.cfg.session_type,
                    version: VoiceVersion::SPEC,
                    session_flags: self.cfg.session_flags(),
                    compression_type: self.cfg.codec.guid,
                },
            ),
            VoiceMessage::SettingsConfirm { player_flags, .. } => self.confirm(now, from, player_flags),
            VoiceMessage::Disconnect => self.disconnect(now, from),
            VoiceMessage::Speech(s) if echo => self.echo(now, from, s),
            VoiceMessage::SpeechWithTarget(s) if !echo => {
                if self.speech_ok(now, from, s.data.len()) {
                    let fwd = SpeechWithFrom {
                        message_number: s.message_number,
                        sequence_number: s.sequence_number,
                        source: from,
                        data: s.data,
                    };
                    self.forward(from, &s.targets, &VoiceMessage::SpeechWithFrom(fwd), members);
                }
            }
            _ => self.drop_msg(now, from, VoiceDrop::Unexpected),
        }
    }

    /// 3.2.5.1.5: the client joins the voice session; repeated confirmations change nothing.
    fn confirm(&mut self, now: Instant, from: Dvid, flags: VoicePlayerFlags) {
        if self.clients.contains_key(&from) {
            return;
        }
        self.clients.insert(from, Client { rate: RateCap::new(now), speech: 0, last_speech: None });
        self.stats.clients_connected += 1;
        let half_duplex = flags.contains(VoicePlayerFlags::HALF_DUPLEX);
        self.events.push_back(ServerEvent::ClientConnected { dvid: from, half_duplex });
        // Add Voice Client goes to every session type (2.2 table); the forwarding and echo
        // rules say no more, so it goes, as in mixing (3.2.5.4.2), to the new client alone.
        let entry = VoiceClientEntry { dvid: from, player_flags: flags, host_order_id: NO_HOST_ORDER_ID };
        self.send(from, &VoiceMessage::CreateVoicePlayer(entry));
    }

    /// 3.2.5.2.3: removed, then DISCONNECTCONFIRM.
    fn disconnect(&mut self, now: Instant, from: Dvid) {
        if !self.remove(from, ClientGone::Disconnected) {
            return self.drop_msg(now, from, VoiceDrop::NotConnected);
        }
        self.send(from, &VoiceMessage::DisconnectConfirm);
    }

    fn remove(&mut self, dvid: Dvid, reason: ClientGone) -> bool {
        let Some(c) = self.clients.remove(&dvid) else { return false };
        self.events.push_back(ServerEvent::ClientGone { dvid, reason, speech: c.speech });
        true
    }

    /// 3.2.7: the player left the DirectPlay session; if it was a voice client it is removed
    /// (the forwarding and echo types send no Remove Voice Client).
    pub fn player_left(&mut self, dvid: Dvid) {
        self.remove(dvid, ClientGone::LeftSession);
    }

    /// 3.2.4 Shutdown Request: SESSIONLOST to every client (host migration is off), then
    /// nothing more is answered (3.2.5.2.1).
    pub fn shutdown(&mut self) {
        if self.shut_down {
            return;
        }
        self.shut_down = true;
        let mut all: Vec<_> = self.clients.keys().copied().collect();
        all.sort();
        for dvid in all {
            self.send(dvid, &VoiceMessage::SessionLost { reason: VoiceResult::DVERR_SESSIONLOST });
            self.remove(dvid, ClientGone::ServerShutdown);
        }
    }

    /// 3.2.4 Change Voice Client List: a client's targets, set by the server (SETTARGETS,
    /// 2.2.2.5); sent only with DVSESSION_SERVERCONTROLTARGET. False when not sent.
    pub fn set_targets(&mut self, dvid: Dvid, targets: &[Dvid]) -> bool {
        let mut unique = Vec::with_capacity(targets.len().min(dplay_wire::voice::MAX_TARGETS));
        for t in targets {
            if !unique.contains(t) {
                unique.push(*t);
            }
        }
        if !self.cfg.server_control_target || !self.clients.contains_key(&dvid) || unique.len() > 64 {
            return false;
        }
        self.send(dvid, &VoiceMessage::SetTargets { targets: unique });
        true
    }

    /// The checks every speech message passes: a connected client (5.1), a frame under the
    /// cap, the client's rate.
    fn speech_ok(&mut self, now: Instant, from: Dvid, len: usize) -> bool {
        let reason = match self.clients.get_mut(&from) {
            None => VoiceDrop::NotConnected,
            Some(_) if len > MAX_SPEECH_DATA => VoiceDrop::TooLarge,
            Some(c) => {
                if !c.rate.take(now) {
                    VoiceDrop::RateLimited
                } else {
                    c.speech += 1;
                    c.last_speech = Some(now);
                    self.stats.speech_in += 1;
                    return true;
                }
            }
        };
        self.drop_msg(now, from, reason);
        false
    }

    /// 3.2.5.6.2: the frame goes straight back as SPEECHBOUNCE.
    fn echo(&mut self, now: Instant, from: Dvid, s: Speech) {
        if self.speech_ok(now, from, s.data.len()) {
            self.stats.speech_out += 1;
            self.send(from, &VoiceMessage::SpeechBounce(s));
        }
    }

    /// 3.2.5.5.2: SPEECHWITHFROM to every target that is a voice client. DVID 0 is every
    /// client but the sender; a group is its members; each client gets one copy however
    /// often the list names it. The sender gets its own speech only by naming itself.
    fn forward(
        &mut self,
        from: Dvid,
        targets: &[Dvid],
        msg: &VoiceMessage,
        members: &dyn Fn(Dvid) -> Option<Vec<Dvid>>,
    ) {
        let mut to: Vec<Dvid> = Vec::new();
        let add = |d: Dvid, to: &mut Vec<Dvid>| {
            if self.clients.contains_key(&d) && !to.contains(&d) {
                to.push(d);
            }
        };
        for &t in targets {
            if t == Dvid::ALL_PLAYERS {
                let mut all: Vec<_> = self.clients.keys().copied().filter(|&d| d != from).collect();
                all.sort();
                all.into_iter().for_each(|d| add(d, &mut to));
            } else if let Some(group) = members(t) {
                group.into_iter().filter(|&d| d != from).for_each(|d| add(d, &mut to));
            } else {
                add(t, &mut to);
            }
        }
        let Ok(bytes) = msg.to_vec() else { return };
        self.stats.speech_out += to.len() as u64;
        for d in to {
            self.out.push_back(Outgoing { to: d, bytes: bytes.clone(), reliable: false });
        }
    }
}
