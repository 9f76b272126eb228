//! [`AddonOverDp4`] nodes on the [`Wires`] of `net.rs`, addressed by index, with the checks the
//! scenarios share.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use dplay_addon::over_dp4::fs98_host_config;
use dplay_addon::{
    AddonOverDp4, Client, ClientConfig, Event, HostConfig, OverDp4Event, PlayerId, Role, Tracker,
};
use dplay_session::dp4::{Dp4Event, Dp4Session, HostConfig as SessionHostConfig};

use crate::common::{self, Accepted};
pub(crate) use crate::common::{Kind, track};

use crate::net::{Delivery, Links, Wires, dp4_config, listener};

/// The DirectPlay player name of node `i`.
pub(crate) fn name(i: usize) -> String {
    format!("pilot{i}")
}

/// One add-on over DP4: it keeps every event, moves along its track while it flies, and
/// records the `packet_index` of every accepted position.
pub(crate) struct AddonNode {
    pub(crate) bridge: AddonOverDp4,
    pub(crate) events: Vec<OverDp4Event>,
    index: usize,
    /// Moves along [`track`] (players only).
    pub(crate) flying: bool,
    /// The positions accepted, per sender.
    pub(crate) accepted: Accepted,
}

impl AddonNode {
    /// Sets the position `t` into the run while flying: the client sends it from its
    /// confirmation on, at 4 Hz (seed 004, first paragraph).
    fn fly(&mut self, t: Duration, now: Instant) {
        if self.flying {
            let p = track(self.index, t);
            let _ = self.bridge.with_client(now, |c, now| {
                c.set_position(now, p, None);
                Ok(())
            });
        }
    }

    /// Takes the bridge's events; records accepted positions once per sender and input.
    fn drain(&mut self) {
        let mut updated = Vec::new();
        while let Some(e) = self.bridge.poll_event() {
            if let OverDp4Event::Addon(Event::PositionUpdated { id }) = &e {
                updated.push(*id);
            }
            self.events.push(e);
        }
        self.accepted.record(&updated, self.bridge.tracker());
    }

    /// The add-on's tracker.
    #[track_caller]
    pub(crate) fn tracker(&self) -> &Tracker {
        self.bridge.tracker().expect("the add-on has started")
    }

    /// Our add-on player id (our DirectPlay player's DPID).
    #[track_caller]
    pub(crate) fn id(&self) -> PlayerId {
        self.bridge.own_player().expect("our player exists")
    }

    /// True once the add-on event `e` was reported.
    pub(crate) fn saw(&self, e: &Event) -> bool {
        self.events.iter().any(|x| x == &OverDp4Event::Addon(e.clone()))
    }

    /// True once the session event `e` was reported.
    pub(crate) fn saw_session(&self, e: &Dp4Event) -> bool {
        self.events.iter().any(|x| x == &OverDp4Event::Session(e.clone()))
    }
}

/// The nodes of one scenario, node 0 hosting, on one set of wires.
pub(crate) struct Net {
    pub(crate) nodes: Vec<AddonNode>,
    pub(crate) wires: Wires,
    pub(crate) now: Instant,
    origin: Instant,
}

#[allow(clippy::disallowed_methods)] // one real starting instant; time then advances by hand
fn start_instant() -> Instant {
    Instant::now()
}

impl Net {
    /// One node per `kinds` entry; node 0 must be the host.
    pub(crate) fn new(seed: u64, links: Links, kinds: &[Kind]) -> Self {
        let nodes = kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let session = Dp4Session::new(dp4_config(i, seed)).expect("a valid MTU");
                let (bridge, flying) = match kind {
                    Kind::Host(own_role, policy) => {
                        let config = HostConfig::new(dplay_addon::Dialect::Fs98, *own_role, *policy);
                        (AddonOverDp4::host(session, config, &name(i)), false)
                    }
                    Kind::Client(role) => {
                        let client = Client::new(ClientConfig::new(*role));
                        (AddonOverDp4::client(session, client, &name(i)), *role == Role::Player)
                    }
                };
                AddonNode { bridge, events: Vec::new(), index: i, flying, accepted: Accepted::default() }
            })
            .collect();
        let now = start_instant();
        Self { nodes, wires: Wires::new(kinds.len(), links, seed), now, origin: now }
    }

    /// The node `i`.
    #[track_caller]
    pub(crate) fn node(&self, i: usize) -> &AddonNode {
        self.nodes.get(i).expect("a node of this net")
    }

    /// Runs `f` on node `i` now, then collects what it sent and reported.
    pub(crate) fn with<T>(&mut self, i: usize, f: impl FnOnce(&mut AddonNode, Instant) -> T) -> T {
        let now = self.now;
        let r = f(self.nodes.get_mut(i).expect("a node of this net"), now);
        self.flush(i);
        r
    }

    /// Node 0 hosts FS98's session; node `i` joins it `i` seconds later.
    pub(crate) fn start(&mut self) {
        self.start_with(fs98_host_config("FS98 test"), self.nodes.len() - 1);
    }

    /// Node 0 hosts `session`; nodes 1 to `joiners` join it a second apart.
    pub(crate) fn start_with(&mut self, session: SessionHostConfig, joiners: usize) {
        self.with(0, |n, now| n.bridge.host_session(now, session)).expect("host");
        for i in 1..=joiners {
            self.run_for(Duration::from_secs(1));
            self.join(i, 0);
        }
    }

    /// Node `i` joins the session whose host is node `host`.
    pub(crate) fn join(&mut self, i: usize, host: usize) {
        let t = self.now.duration_since(self.origin);
        self.with(i, |n, now| {
            n.fly(t, now);
            n.bridge.join(now, listener(host), None)
        })
        .expect("join");
    }

    /// Puts node `i`'s transmits on the wires and takes its events.
    fn flush(&mut self, i: usize) {
        let now = self.now;
        let Some(node) = self.nodes.get_mut(i) else { return };
        while let Some(t) = node.bridge.poll_transmit() {
            self.wires.send(now, i, t);
        }
        node.drain();
    }

    /// Runs the network until `limit` from now, or until `done` holds after a step.
    pub(crate) fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Net) -> bool) -> bool {
        let end = self.now + limit;
        for _ in 0..10_000_000 {
            if done(self) {
                return true;
            }
            let timers = self.nodes.iter().filter_map(|n| n.bridge.poll_timeout());
            let Some(next) = timers.chain(self.wires.next_arrival()).min().filter(|t| *t <= end) else {
                self.now = self.now.max(end);
                return done(self);
            };
            self.now = self.now.max(next);
            self.step();
        }
        panic!("the network never settled");
    }

    /// Runs the network for `d`.
    pub(crate) fn run_for(&mut self, d: Duration) {
        self.run_until(d, |_| false);
    }

    /// Delivers what is due and runs the timers that are due, at `self.now`.
    fn step(&mut self) {
        let now = self.now;
        while let Some(d) = self.wires.pop_due(now) {
            let to = d.to();
            let node = self.nodes.get_mut(to).expect("a node of this net");
            match &d {
                Delivery::Udp { bytes, .. } => node.bridge.handle_udp(now, d.source(), bytes),
                Delivery::Tcp { bytes, .. } => {
                    node.bridge.handle_tcp(now, d.conn(), d.source(), bytes).expect("a valid stream");
                }
            }
            self.flush(to);
        }
        for i in 0..self.nodes.len() {
            let Some(node) = self.nodes.get_mut(i) else { continue };
            if node.bridge.poll_timeout().is_some_and(|t| t <= now) {
                node.fly(now.duration_since(self.origin), now);
                node.bridge.handle_timeout(now);
                self.flush(i);
            }
        }
    }

    /// Runs until every node of `which` reported the add-on event `Joined`, at most `limit`.
    pub(crate) fn run_until_addon_joined(&mut self, which: &[usize], limit: Duration) -> bool {
        self.run_until(limit, |net| {
            which.iter().all(|i| {
                net.node(*i).events.iter().any(|e| matches!(e, OverDp4Event::Addon(Event::Joined { .. })))
            })
        })
    }
}

/// Checks the `packet_index` rule at node `at` ([`common::assert_increasing`]).
#[track_caller]
pub(crate) fn assert_increasing(net: &Net, at: usize) -> BTreeMap<PlayerId, usize> {
    common::assert_increasing(at, &net.node(at).accepted)
}

/// Checks that node `at` tracks node `of` as a player with a recent fix close to where `of`
/// was ([`common::assert_tracks`]).
#[track_caller]
pub(crate) fn assert_tracks(net: &Net, at: usize, of: usize) {
    let node = net.node(at);
    common::assert_tracks(at, node.tracker(), of, net.node(of).id(), net.origin, net.now, || {
        format!(
            "its events: {:#?}\nbridge {:?} add-on {:?} session {:?}",
            node.events,
            node.bridge.stats(),
            node.bridge.addon_stats(),
            node.bridge.session().stats(),
        )
    });
}

/// Checks that node `at` knows node `of` as an observer without any position.
#[track_caller]
pub(crate) fn assert_silent_observer(net: &Net, at: usize, of: usize) {
    let node = net.node(at);
    common::assert_silent_observer(at, node.tracker(), of, net.node(of).id(), &node.accepted);
}
