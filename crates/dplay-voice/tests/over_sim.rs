//! The voice server and scripted voice clients over real DirectPlay 8 sessions on the
//! simulated network (dplay-sim, seeded): voice messages travel as DFRAMEs with USER_2
//! (Session::send_voice, Event::Voice), speech unreliable, control reliable (MC-DPLVP 2.1, 2.2),
//! under 0, 5 and 20% loss. Three clients: forwarding to one, to all, to a group; echo; a
//! client's player leaving the session (3.2.7).
#![allow(clippy::disallowed_methods)] // a time origin for the sessions; time here is virtual

mod common;

use std::time::Duration;

use dplay_session::{Event, Session};
use dplay_sim::LinkConfig;
use dplay_testkit::sim_check::{Mesh, SimNode};
use dplay_voice::{
    ClientEvent, ClientGone, ServerEvent, VoiceClient, VoiceClientConfig, VoiceServer, VoiceServerConfig,
};
use dplay_wire::Wire;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::voice::{Dvid, VoiceMessage};

struct Voice {
    mesh: Mesh,
    server: VoiceServer,
    clients: Vec<(usize, VoiceClient)>,
    /// (receiver node, message) of every voice message the clients got.
    heard: Vec<(usize, VoiceMessage)>,
    server_events: Vec<ServerEvent>,
}

fn dvid(s: &Session) -> Dvid {
    Dvid(s.local_dpnid().0)
}

impl Voice {
    fn new(seed: u64, loss: u32, cfg: VoiceServerConfig) -> Self {
        let mut mesh = Mesh::new(seed, 4, LinkConfig::lossy(f64::from(loss) / 100.0), |_, _| {});
        mesh.host(0);
        for i in 1..4 {
            mesh.join(i, 0);
        }
        assert!(mesh.run_until_joined(&[0, 1, 2, 3], Duration::from_secs(60)), "seed {seed}: joined");
        let host = mesh.with(0, |s, _| dvid(s));
        let clients = (1..4)
            .map(|i| {
                let local = mesh.with(i, |s, _| dvid(s));
                let mut c = VoiceClient::new(VoiceClientConfig { server: host, local, frames_per_burst: 20 });
                mesh.with(i, |_, now| c.connect(now));
                (i, c)
            })
            .collect();
        let mut v = Self {
            mesh,
            server: VoiceServer::new(cfg).unwrap(),
            clients,
            heard: Vec::new(),
            server_events: Vec::new(),
        };
        v.run(Duration::from_secs(5));
        assert!(v.clients.iter().all(|(_, c)| c.is_connected()), "loss {loss}: every client connected");
        v
    }

    fn events(&mut self, i: usize) -> Vec<Event> {
        let id = *self.mesh.ids.get(i).unwrap();
        std::mem::take(&mut self.mesh.sim.node_mut::<SimNode>(id).events)
    }

    /// Moves voice between the sessions and the voice layer for `time`, 10 ms at a time.
    fn run(&mut self, time: Duration) {
        let end = self.mesh.sim.now() + time;
        while self.mesh.sim.now() < end {
            self.mesh.sim.run_for(Duration::from_millis(10));
            for e in self.events(0) {
                match e {
                    Event::Voice { from, data } => {
                        let now = self.mesh.sim.now();
                        self.server.handle_message(now, Dvid(from.0), &data, &|_| None);
                    }
                    Event::PlayerRemoved { dpnid, .. } => self.server.player_left(Dvid(dpnid.0)),
                    _ => {}
                }
            }
            while let Some(o) = self.server.poll_outgoing() {
                let _ = self.mesh.with(0, |s, now| s.send_voice(now, Dpnid(o.to.0), &o.bytes, o.reliable));
            }
            self.server_events.extend(std::iter::from_fn(|| self.server.poll_event()));
            let mut clients = std::mem::take(&mut self.clients);
            for (i, client) in &mut clients {
                for e in self.events(*i) {
                    if let Event::Voice { from, data } = e {
                        let now = self.mesh.sim.now();
                        self.heard.push((*i, VoiceMessage::parse(&data).unwrap()));
                        client.handle_message(now, Dvid(from.0), &data);
                    }
                }
                while let Some(o) = client.poll_outgoing() {
                    let _ =
                        self.mesh.with(*i, |s, now| s.send_voice(now, Dpnid(o.to.0), &o.bytes, o.reliable));
                }
            }
            self.clients = clients;
        }
    }

    fn client(&mut self, node: usize) -> &mut VoiceClient {
        &mut self.clients.iter_mut().find(|(i, _)| *i == node).unwrap().1
    }

    fn talk(&mut self, node: usize, targets: &[Dvid], frames: usize) {
        for _ in 0..frames {
            assert!(self.client(node).send_speech_to(targets, &[0x33; 40]));
            self.run(Duration::from_millis(100));
        }
        self.run(Duration::from_secs(1));
    }

    /// Nodes that got SPEECHWITHFROM from `node`, with counts.
    fn heard_from(&mut self, node: usize) -> Vec<(usize, usize)> {
        let source = self.mesh.with(node, |s, _| dvid(s));
        common::speech_from(&mut self.heard, source)
    }
}

#[test]
fn forwarding_over_dp8_sessions_under_loss() {
    for (seed, loss) in [(1, 0), (2, 5), (3, 20)] {
        let mut v = Voice::new(seed, loss, VoiceServerConfig::forwarding());
        let frames = 50;
        let budget = |n: usize| n + 2 * frames * usize::try_from(loss).unwrap() / 100 + 3 >= frames;
        let two = v.mesh.with(2, |s, _| dvid(s));
        v.talk(1, &[two], frames);
        let one = v.heard_from(1);
        assert_eq!(one.iter().map(|h| h.0).collect::<Vec<_>>(), [2], "loss {loss}: {one:?}");
        v.talk(2, &[Dvid::ALL_PLAYERS], frames);
        let all = v.heard_from(2);
        assert_eq!(all.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 3], "loss {loss}: {all:?}");
        for (_, n) in one.iter().chain(&all) {
            assert!(*n <= frames && budget(*n), "loss {loss}: {n} of {frames}");
        }
        // A client's player leaves the session: the server drops it (3.2.7).
        v.mesh.with(3, |s, now| s.leave(now));
        v.run(Duration::from_secs(10));
        let three = v.mesh.with(3, |s, _| dvid(s));
        assert!(
            v.server_events.iter().any(|e| matches!(e, ServerEvent::ClientGone { dvid, reason: ClientGone::LeftSession, .. } if *dvid == three)),
            "loss {loss}: {:?}",
            v.server_events
        );
        assert_eq!(v.server.talkers().len(), 2);
    }
}

#[test]
fn echo_over_dp8_sessions_under_loss() {
    for (seed, loss) in [(4, 0), (5, 5), (6, 20)] {
        let mut v = Voice::new(seed, loss, VoiceServerConfig::echo());
        let frames = 50u64;
        for _ in 0..frames {
            let now = v.mesh.sim.now();
            assert!(v.client(1).send_frame(now, &[0x80; 394]));
            v.run(Duration::from_millis(50));
        }
        v.run(Duration::from_secs(1));
        let rt = v.client(1).round_trips();
        assert_eq!(rt.sent, frames);
        let floor = frames - 2 * frames * u64::from(loss) / 100 - 3;
        assert!(rt.received >= floor, "loss {loss}: {rt:?}");
        assert!(rt.min.is_some_and(|d| d > Duration::ZERO), "the simulated link has latency");
        assert!(matches!(v.client(1).poll_event(), Some(ClientEvent::Connected { .. })));
    }
}

/// The DirectPlay 8 host leaves with host migration on (MC-DPLVP 3.2.4; docs/decisions.md,
/// "DirectPlay Voice", host migration): its voice server first sends SESSIONLOST, which ends
/// every client's voice session; the member that becomes host is no voice server, and no voice
/// message follows.
#[test]
fn host_migration_ends_forwarding_voice() {
    let mut v = Voice::new(7, 5, VoiceServerConfig::forwarding());
    v.server.shutdown();
    v.run(Duration::from_millis(500));
    v.heard.clear();
    v.mesh.with(0, |s, now| s.leave(now));
    v.run(Duration::from_secs(10));
    for (i, c) in &mut v.clients {
        assert!(c.is_done(), "client {i}");
        let events: Vec<_> = std::iter::from_fn(|| c.poll_event()).collect();
        assert!(events.contains(&ClientEvent::Ended("the voice session was lost")), "client {i}: {events:?}");
    }
    let migrated = (1..4).any(|i| {
        v.events(i);
        v.mesh.with(i, |s, _| s.host_dpnid() == s.local_dpnid())
    });
    assert!(migrated, "a member became host");
    assert!(v.heard.is_empty(), "voice after the migration: {:?}", v.heard);
    assert!(v.server_events.iter().all(
        |e| !matches!(e, ServerEvent::ClientGone { reason, .. } if *reason != ClientGone::ServerShutdown)
    ));
}
