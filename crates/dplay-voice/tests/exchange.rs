//! Scripted voice clients following MC-DPLVP 3.1 against the server, speech lost at 0, 5 and
//! 20% (seeded; speech is neither guaranteed nor ordered, control messages are both, 2.2):
//! forwarding to one, to all, to a group; echo; a client leaving; the server leaving; and the
//! hostile cases of 5.1.

use std::time::{Duration, Instant};

use dplay_voice::{
    ClientEvent, ClientGone, MAX_SPEECH_DATA, Outgoing, SPEECH_BURST, ServerEvent, VoiceClient,
    VoiceClientConfig, VoiceServer, VoiceServerConfig,
};
use dplay_wire::Wire;
use dplay_wire::text::Blob;
use dplay_wire::voice::{Codec, Dvid, SpeechWithTarget, VoiceMessage, VoiceSessionFlags, VoiceSessionType};

const HOST: Dvid = Dvid(0x0010_0001);
const GROUP: Dvid = Dvid(0x0090_0009);

fn members(d: Dvid) -> Option<Vec<Dvid>> {
    (d == GROUP).then(|| vec![Dvid(0x200), Dvid(0x300)])
}

/// A seeded loss model: drops unreliable messages at `percent`.
struct Net {
    state: u64,
    percent: u64,
}

impl Net {
    fn lost(&mut self, o: &Outgoing) -> bool {
        self.state = self.state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        !o.reliable && (self.state >> 33) % 100 < self.percent
    }
}

struct World {
    now: Instant,
    server: VoiceServer,
    clients: Vec<(Dvid, VoiceClient)>,
    net: Net,
    /// (to, message) the scripted clients received.
    inbox: Vec<(Dvid, VoiceMessage)>,
}

impl World {
    fn new(cfg: VoiceServerConfig, ids: &[u32], loss: u64) -> Self {
        let clients = ids
            .iter()
            .map(|&id| {
                let local = Dvid(id);
                (local, VoiceClient::new(VoiceClientConfig { server: HOST, local, frames_per_burst: 20 }))
            })
            .collect();
        let mut w = Self {
            // The tests' clock is a fixed base; only differences matter.
            #[allow(clippy::disallowed_methods)]
            now: Instant::now(),
            server: VoiceServer::new(cfg).unwrap(),
            clients,
            net: Net { state: loss + 7, percent: loss },
            inbox: Vec::new(),
        };
        let now = w.now;
        w.clients.iter_mut().for_each(|(_, c)| c.connect(now));
        w.run();
        w
    }

    fn run(&mut self) {
        loop {
            let mut moved = false;
            for (id, c) in &mut self.clients {
                while let Some(o) = c.poll_outgoing() {
                    moved = true;
                    assert_eq!(o.to, HOST);
                    if !self.net.lost(&o) {
                        self.server.handle_message(self.now, *id, &o.bytes, &members);
                    }
                }
            }
            while let Some(o) = self.server.poll_outgoing() {
                moved = true;
                if self.net.lost(&o) {
                    continue;
                }
                self.inbox.push((o.to, VoiceMessage::parse(&o.bytes).unwrap()));
                if let Some((_, c)) = self.clients.iter_mut().find(|(id, _)| *id == o.to) {
                    c.handle_message(self.now, HOST, &o.bytes);
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn client(&mut self, id: u32) -> &mut VoiceClient {
        &mut self.clients.iter_mut().find(|(d, _)| d.0 == id).unwrap().1
    }

    fn speech_to(&mut self, from: u32, targets: &[Dvid], frames: usize) {
        for _ in 0..frames {
            self.now += Duration::from_millis(100);
            assert!(self.client(from).send_speech_to(targets, &[0x55; 40]));
            self.run();
        }
    }

    /// Who received SPEECHWITHFROM from `source`, and how many.
    fn heard(&self, source: u32) -> Vec<(u32, usize)> {
        let mut out: Vec<(u32, usize)> = Vec::new();
        for (to, m) in &self.inbox {
            if let VoiceMessage::SpeechWithFrom(s) = m
                && s.source.0 == source
            {
                match out.iter_mut().find(|(t, _)| *t == to.0) {
                    Some((_, n)) => *n += 1,
                    None => out.push((to.0, 1)),
                }
            }
        }
        out.sort();
        out
    }
}

fn events(s: &mut VoiceServer) -> Vec<ServerEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

#[test]
fn connect_sequence_follows_4_1() {
    let mut w = World::new(VoiceServerConfig::forwarding(), &[0x100], 0);
    let accept = &w.inbox[0];
    assert_eq!(
        accept.1,
        VoiceMessage::ConnectAccept {
            session_type: VoiceSessionType::DVSESSIONTYPE_FORWARDING,
            version: Default::default(),
            session_flags: VoiceSessionFlags::NO_HOST_MIGRATION,
            compression_type: Codec::sc03().guid,
        }
    );
    assert!(matches!(w.inbox[1].1, VoiceMessage::CreateVoicePlayer(e) if e.dvid == Dvid(0x100)));
    assert!(w.client(0x100).is_connected());
    assert_eq!(
        events(&mut w.server),
        [ServerEvent::ClientConnected { dvid: Dvid(0x100), half_duplex: false }]
    );
}

#[test]
fn forwarding_to_one_to_all_and_to_a_group_under_loss() {
    for loss in [0, 5, 20] {
        let mut w = World::new(VoiceServerConfig::forwarding(), &[0x100, 0x200, 0x300], loss);
        let frames = 200;
        w.speech_to(0x100, &[Dvid(0x200)], frames);
        let one = w.heard(0x100);
        assert_eq!(one.len(), 1, "loss {loss}: {one:?}");
        assert_eq!(one[0].0, 0x200);
        w.inbox.clear();
        w.speech_to(0x200, &[Dvid::ALL_PLAYERS], frames);
        let all = w.heard(0x200);
        assert_eq!(all.iter().map(|h| h.0).collect::<Vec<_>>(), [0x100, 0x300], "loss {loss}");
        w.inbox.clear();
        // The group and one of its members named again: one copy each, never the sender.
        w.speech_to(0x300, &[GROUP, Dvid(0x200)], frames);
        let group = w.heard(0x300);
        assert_eq!(group.iter().map(|h| h.0).collect::<Vec<_>>(), [0x200], "loss {loss}");
        for (_, n) in one.iter().chain(&all).chain(&group) {
            let lost = frames - n;
            // Two hops of `loss`% each: well within twice the expectation plus slack.
            assert!(
                lost <= frames * 2 * 2 * usize::try_from(loss).unwrap() / 100 + 3,
                "loss {loss}: {n} of {frames}"
            );
            assert!(*n <= frames, "no duplicates");
        }
        // Forwarded bytes keep the numbers and the frame, and add the sender (3.2.5.5.2).
        if let Some((_, VoiceMessage::SpeechWithFrom(s))) = w.inbox.last() {
            assert_eq!(s.data, Blob::new(&[0x55; 40]));
        }
    }
}

#[test]
fn echo_bounces_speech_and_measures_round_trips() {
    for loss in [0, 5, 20] {
        let mut w = World::new(
            VoiceServerConfig { codec: Codec::pcm(), ..VoiceServerConfig::echo() },
            &[0x100],
            loss,
        );
        assert_eq!(w.client(0x100).codec(), Some(Codec::pcm()));
        for _ in 0..100 {
            w.now += Duration::from_millis(50);
            let now = w.now;
            assert!(w.client(0x100).send_frame(now, &[0x80; 394]));
            w.run();
        }
        let rt = w.client(0x100).round_trips();
        assert_eq!(rt.sent, 100);
        assert!(rt.received >= 100 - 2 * 2 * loss - 3, "loss {loss}: {rt:?}");
        assert_eq!(rt.max, Some(Duration::ZERO), "the simulated network is instant");
        // SPEECHWITHTARGET is not echo's (3.2.5.6.1): dropped.
        let before = w.server.stats().dropped();
        let stray = VoiceMessage::SpeechWithTarget(SpeechWithTarget {
            message_number: 0,
            sequence_number: 0,
            targets: vec![Dvid(0x100)],
            data: Blob::new(&[1]),
        });
        w.server.handle_message(w.now, Dvid(0x100), &stray.to_vec().unwrap(), &members);
        assert_eq!(w.server.stats().dropped(), before + 1);
    }
}

#[test]
fn forwarding_round_trip_to_self() {
    let mut w = World::new(VoiceServerConfig::forwarding(), &[0x100], 0);
    let now = w.now;
    assert!(w.client(0x100).send_frame(now, &[1; 40]));
    w.run();
    assert_eq!(w.client(0x100).round_trips().received, 1);
}

#[test]
fn a_client_leaving_is_removed_and_gets_no_more_speech() {
    let mut w = World::new(VoiceServerConfig::forwarding(), &[0x100, 0x200, 0x300], 0);
    events(&mut w.server);
    // Graceful: DISCONNECT, then DISCONNECTCONFIRM (3.2.5.2.3).
    w.client(0x300).disconnect();
    w.run();
    assert!(w.client(0x300).is_done());
    assert!(matches!(w.inbox.last(), Some((Dvid(0x300), VoiceMessage::DisconnectConfirm))));
    // Its player leaves the DirectPlay session (3.2.7).
    w.server.player_left(Dvid(0x200));
    let ev = events(&mut w.server);
    assert_eq!(ev.len(), 2);
    assert!(matches!(
        ev[0],
        ServerEvent::ClientGone { dvid: Dvid(0x300), reason: ClientGone::Disconnected, .. }
    ));
    assert!(matches!(
        ev[1],
        ServerEvent::ClientGone { dvid: Dvid(0x200), reason: ClientGone::LeftSession, .. }
    ));
    w.inbox.clear();
    w.speech_to(0x100, &[Dvid::ALL_PLAYERS, Dvid(0x200)], 5);
    assert!(w.heard(0x100).is_empty());
}

/// The server's player leaving: forwarding and echo have no voice host migration (1.3.3.1 is
/// the peer type's; our CONNECTACCEPT says DVSESSION_NOHOSTMIGRATION), so clients end (3.1.7);
/// a server shutting down sends SESSIONLOST first (3.2.4).
#[test]
fn server_leaving_ends_the_voice_session() {
    let mut w = World::new(VoiceServerConfig::forwarding(), &[0x100, 0x200], 0);
    w.server.shutdown();
    w.run();
    assert!(matches!(w.client(0x100).poll_event(), Some(ClientEvent::Connected { .. })));
    assert_eq!(w.client(0x100).poll_event(), Some(ClientEvent::Ended("the voice session was lost")));
    // After shutdown nothing is answered.
    w.server.handle_message(
        w.now,
        Dvid(0x400),
        &VoiceMessage::ConnectRequest(Default::default()).to_vec().unwrap(),
        &members,
    );
    assert!(w.server.poll_outgoing().is_none());

    let mut w = World::new(VoiceServerConfig::echo(), &[0x100], 0);
    w.client(0x100).player_left(HOST);
    assert!(w.client(0x100).is_done());
}

/// 5.1: speech before SETTINGSCONFIRM, oversized speech, 65 targets, a flood: each dropped
/// and counted by reason, the client stays connected and honest speech still flows.
#[test]
fn hostile_speech_is_dropped_and_counted() {
    let mut w = World::new(VoiceServerConfig::forwarding(), &[0x100, 0x200], 0);
    let now = w.now;
    let speech = |targets: Vec<Dvid>, len: usize| {
        VoiceMessage::SpeechWithTarget(SpeechWithTarget {
            message_number: 1,
            sequence_number: 1,
            targets,
            data: Blob(vec![0; len]),
        })
        .to_vec()
        .unwrap()
    };
    // A stranger: nothing is kept for it, whatever it sends.
    w.server.handle_message(now, Dvid(0x999), &speech(vec![Dvid(0x100)], 40), &members);
    // Too large.
    w.server.handle_message(now, Dvid(0x100), &speech(vec![Dvid(0x200)], MAX_SPEECH_DATA + 1), &members);
    // 65 targets: the count is checked before anything is read.
    let mut many = speech(vec![Dvid(0x200)], 4);
    many[3] = 65;
    w.server.handle_message(now, Dvid(0x100), &many, &members);
    // Garbage.
    w.server.handle_message(now, Dvid(0x100), &[0x63, 0, 0], &members);
    // A flood in one instant: the burst passes, the rest is capped.
    for _ in 0..1000 {
        w.server.handle_message(now, Dvid(0x100), &speech(vec![Dvid(0x200)], 40), &members);
    }
    let drops: Vec<_> = w.server.stats().drops().collect();
    assert_eq!(
        drops,
        [
            ("voice_malformed", 1),
            ("speech_too_many_targets", 1),
            ("speech_too_large", 1),
            ("speech_before_settings_confirm", 1),
            ("speech_rate_limited", 1000 - u64::from(SPEECH_BURST)),
        ]
    );
    let forwarded = std::iter::from_fn(|| w.server.poll_outgoing()).count();
    assert_eq!(forwarded, SPEECH_BURST as usize);
    assert_eq!(w.server.talkers().len(), 2, "nobody was kicked, the stranger was not added");
    // A second later honest speech flows again.
    w.now += Duration::from_secs(1);
    w.speech_to(0x100, &[Dvid(0x200)], 5);
    assert_eq!(w.heard(0x100), [(0x200, 5)]);
}

#[test]
fn mixing_and_peer_are_refused() {
    for t in [VoiceSessionType::DVSESSIONTYPE_MIXING, VoiceSessionType::DVSESSIONTYPE_PEER] {
        assert!(
            VoiceServer::new(VoiceServerConfig { session_type: t, ..VoiceServerConfig::forwarding() })
                .is_none()
        );
    }
}

#[test]
fn server_controlled_targets_only_when_asked() {
    let mut w = World::new(VoiceServerConfig::forwarding(), &[0x100], 0);
    assert!(!w.server.set_targets(Dvid(0x100), &[Dvid(0x200)]));
    let cfg = VoiceServerConfig { server_control_target: true, ..VoiceServerConfig::forwarding() };
    let mut w2 = World::new(cfg, &[0x100], 0);
    assert!(w2.server.set_targets(Dvid(0x100), &[Dvid(0x200), Dvid(0x200)]));
    let out = w2.server.poll_outgoing().unwrap();
    assert_eq!(
        VoiceMessage::parse(&out.bytes).unwrap(),
        VoiceMessage::SetTargets { targets: vec![Dvid(0x200)] }
    );
    assert!(out.reliable);
    drop(w.server.poll_outgoing());
}
