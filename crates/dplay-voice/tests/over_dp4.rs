//! The voice server and scripted voice clients over real DirectPlay 4 sessions on the simulated
//! LAN (dplay-testkit's `Dp4Net`), UDP datagrams lost at 0, 5 and 20% (seeded): voice messages
//! travel in DPSP_MSG_VOICE (MC-DPL4CS 2.2.54), speech as UDP datagrams, control messages over
//! TCP (MC-DPLVP 2.2). A voice client's DVID is its application player's ID; the server speaks
//! as the host's system player (docs/decisions.md, "DirectPlay Voice"). Three clients:
//! forwarding to one, to all, to a group from the DirectPlay 4 Group List; echo; a client's
//! player leaving the session (3.2.7).
#![allow(clippy::disallowed_methods)] // a time origin for the sessions; time here is virtual
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use std::time::{Duration, Instant};

use dplay_session::dp4::{Dp4Event, HostConfig};
use dplay_testkit::dp4_sim::Dp4Net;
use dplay_voice::{
    ClientEvent, ClientGone, ServerEvent, VoiceClient, VoiceClientConfig, VoiceServer, VoiceServerConfig,
};
use dplay_wire::Wire;
use dplay_wire::voice::{Dvid, VoiceMessage, VoiceSessionFlags};

const HOST: usize = 0;
const CLIENTS: [usize; 3] = [1, 2, 3];

struct Voice {
    net: Dp4Net,
    server: VoiceServer,
    /// The host's system player: the voice server's DVID.
    server_id: u32,
    /// (node, application player, client).
    clients: Vec<(usize, u32, VoiceClient)>,
    /// Events of each node already looked at.
    seen: Vec<usize>,
    /// (receiver node, message) of every voice message the clients got.
    heard: Vec<(usize, VoiceMessage)>,
    server_events: Vec<ServerEvent>,
}

impl Voice {
    fn new(seed: u64, loss: u64, cfg: VoiceServerConfig) -> Self {
        let mut net = Dp4Net::lan(4, Instant::now()).unwrap();
        net.host(HOST, HostConfig::new("voice", dplay_wire::Uuid::from_u128(0x5eed))).unwrap();
        // The host has an application player too, as `dplay host --dp4` does: not a voice client.
        net.create_player(HOST, "host").unwrap().unwrap();
        let server_id = net.nodes[HOST].system_player().unwrap();
        let mut clients = Vec::new();
        for i in CLIENTS {
            net.join(i, HOST, None).unwrap();
            let id = net.create_player(i, &format!("player {i}")).unwrap().unwrap();
            assert_eq!(net.nodes[i].host_player(), Some(server_id));
            let cfg = VoiceClientConfig { server: Dvid(server_id), local: Dvid(id), frames_per_burst: 20 };
            clients.push((i, id, VoiceClient::new(cfg)));
        }
        // From now on, `loss` percent of the UDP datagrams are lost (speech, PINGs).
        let mut state = seed;
        let first = net.captures.len();
        for index in first..first + 200_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (state >> 33) % 100 < loss {
                net.lose.insert(index);
            }
        }
        let seen = net.events.iter().map(Vec::len).collect();
        let mut v = Self {
            net,
            server: VoiceServer::new(cfg).unwrap(),
            server_id,
            clients,
            seen,
            heard: Vec::new(),
            server_events: Vec::new(),
        };
        let now = v.net.now;
        v.clients.iter_mut().for_each(|(_, _, c)| c.connect(now));
        v.run(Duration::from_secs(3));
        assert!(v.clients.iter().all(|(_, _, c)| c.is_connected()), "loss {loss}: every client connected");
        v
    }

    fn new_events(&mut self, i: usize) -> Vec<Dp4Event> {
        let all = &self.net.events[i];
        let new = all[self.seen[i]..].to_vec();
        self.seen[i] = all.len();
        new
    }

    /// Moves voice between the sessions and the voice layer until the network is quiet.
    fn pump(&mut self) {
        loop {
            self.net.run().unwrap();
            let now = self.net.now;
            let mut moved = false;
            for e in self.new_events(HOST) {
                match e {
                    Dp4Event::Voice { from, data, .. } => {
                        let host = &self.net.nodes[HOST];
                        let members = |d: Dvid| host.group_members(d.0).map(|m| m.map(Dvid).collect());
                        self.server.handle_message(now, Dvid(from), &data, &members);
                    }
                    Dp4Event::PlayerLeft { id } => self.server.player_left(Dvid(id)),
                    _ => {}
                }
            }
            while let Some(o) = self.server.poll_outgoing() {
                moved = true;
                let _ = self.net.nodes[HOST].send_voice(now, self.server_id, o.to.0, &o.bytes, o.reliable);
            }
            self.server_events.extend(std::iter::from_fn(|| self.server.poll_event()));
            let mut clients = std::mem::take(&mut self.clients);
            for (i, id, client) in &mut clients {
                for e in self.new_events(*i) {
                    match e {
                        Dp4Event::Voice { from, data, .. } => {
                            self.heard.push((*i, VoiceMessage::parse(&data).unwrap()));
                            client.handle_message(now, Dvid(from), &data);
                        }
                        Dp4Event::PlayerLeft { id } => client.player_left(Dvid(id)),
                        _ => {}
                    }
                }
                client.handle_timeout(now);
                while let Some(o) = client.poll_outgoing() {
                    moved = true;
                    let _ = self.net.nodes[*i].send_voice(now, *id, o.to.0, &o.bytes, o.reliable);
                }
            }
            self.clients = clients;
            if !moved {
                return;
            }
        }
    }

    /// Runs for `time`, 10 ms at a time.
    fn run(&mut self, time: Duration) {
        let end = self.net.now + time;
        while self.net.now < end {
            self.net.advance(Duration::from_millis(10)).unwrap();
            self.pump();
        }
    }

    fn client(&mut self, node: usize) -> &mut VoiceClient {
        &mut self.clients.iter_mut().find(|(i, ..)| *i == node).unwrap().2
    }

    fn player(&self, node: usize) -> Dvid {
        Dvid(self.clients.iter().find(|(i, ..)| *i == node).unwrap().1)
    }

    fn talk(&mut self, node: usize, targets: &[Dvid], frames: usize) {
        for _ in 0..frames {
            assert!(self.client(node).send_speech_to(targets, &[0x33; 40]));
            self.run(Duration::from_millis(100));
        }
        self.run(Duration::from_secs(1));
    }

    /// Nodes that got SPEECHWITHFROM from `node`'s player, with counts.
    fn heard_from(&mut self, node: usize) -> Vec<(usize, usize)> {
        let source = self.player(node);
        common::speech_from(&mut self.heard, source)
    }
}

/// Forwarding to one player, to everyone (DVID 0 = DPID_ALLPLAYERS), to a DirectPlay 4 group
/// (its members from the host's Group List, the sender left out); then a client's player leaves
/// and the server drops it (3.2.7).
#[test]
fn forwarding_over_dp4_sessions_under_loss() {
    for (seed, loss) in [(11, 0), (12, 5), (13, 20)] {
        let mut v = Voice::new(seed, loss, VoiceServerConfig::forwarding());
        let accepted = v.heard.iter().find_map(|(_, m)| match m {
            VoiceMessage::ConnectAccept { session_flags, .. } => Some(*session_flags),
            _ => None,
        });
        assert_eq!(accepted, Some(VoiceSessionFlags::NO_HOST_MIGRATION));
        let frames = 50;
        let budget = |n: usize| n + 2 * frames * usize::try_from(loss).unwrap() / 100 + 3 >= frames;
        let two = v.player(2);
        v.talk(1, &[two], frames);
        let one = v.heard_from(1);
        assert_eq!(one.iter().map(|h| h.0).collect::<Vec<_>>(), [2], "loss {loss}: {one:?}");
        v.talk(2, &[Dvid::ALL_PLAYERS], frames);
        let all = v.heard_from(2);
        assert_eq!(all.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 3], "loss {loss}: {all:?}");
        // A group of players 1 and 3, made by the host: player 1 talks to it, player 3 hears.
        let now = v.net.now;
        v.net.nodes[HOST].create_group(now, "team").unwrap();
        v.net.run().unwrap();
        let team = v.net.nodes[HOST].group_named("team").unwrap();
        for node in [1, 3] {
            let player = v.player(node).0;
            v.net.nodes[HOST].add_player_to_group(team, player).unwrap();
        }
        v.net.run().unwrap();
        v.talk(1, &[Dvid(team)], frames);
        let group = v.heard_from(1);
        assert_eq!(group.iter().map(|h| h.0).collect::<Vec<_>>(), [3], "loss {loss}: {group:?}");
        for (_, n) in one.iter().chain(&all).chain(&group) {
            assert!(*n <= frames && budget(*n), "loss {loss}: {n} of {frames}");
        }
        // A client's player leaves the session: the server drops it (3.2.7).
        let three = v.player(3);
        v.net.leave(3).unwrap();
        v.run(Duration::from_secs(2));
        assert!(
            v.server_events.iter().any(|e| matches!(e, ServerEvent::ClientGone { dvid, reason: ClientGone::LeftSession, .. } if *dvid == three)),
            "loss {loss}: {:?}",
            v.server_events
        );
        assert_eq!(v.server.talkers().len(), 2);
        assert_eq!(v.server.stats().dropped(), 0, "loss {loss}: {:?}", v.server.stats());
    }
}

/// Echo: every frame comes back as SPEECHBOUNCE from the host's system player, but those lost.
#[test]
fn echo_over_dp4_sessions_under_loss() {
    for (seed, loss) in [(14, 0), (15, 5), (16, 20)] {
        let mut v = Voice::new(seed, loss, VoiceServerConfig::echo());
        let frames = 50u64;
        for _ in 0..frames {
            let now = v.net.now;
            assert!(v.client(1).send_frame(now, &[0x80; 394]));
            v.run(Duration::from_millis(50));
        }
        v.run(Duration::from_secs(1));
        let rt = v.client(1).round_trips();
        assert_eq!(rt.sent, frames);
        // Each frame crosses the lossy link twice.
        let floor = frames - 2 * frames * loss / 100 - 3;
        assert!(rt.received >= floor && rt.received <= frames, "loss {loss}: {rt:?}");
        assert!(loss == 0 || rt.received < frames, "loss {loss}: nothing was lost: {rt:?}");
        assert!(matches!(v.client(1).poll_event(), Some(ClientEvent::Connected { .. })));
    }
}

/// The host leaves: SESSIONLOST (3.2.4) reaches every client over TCP before the session's
/// DELETEPLAYERs, and every client's voice session ends.
#[test]
fn host_shutdown_over_dp4_ends_every_client() {
    let mut v = Voice::new(17, 5, VoiceServerConfig::forwarding());
    v.server.shutdown();
    v.pump();
    v.net.leave(HOST).unwrap();
    v.run(Duration::from_secs(1));
    for (i, _, c) in &mut v.clients {
        assert!(c.is_done(), "client {i}");
        let ended: Vec<_> = std::iter::from_fn(|| c.poll_event()).collect();
        assert!(ended.contains(&ClientEvent::Ended("the voice session was lost")), "client {i}: {ended:?}");
    }
}
