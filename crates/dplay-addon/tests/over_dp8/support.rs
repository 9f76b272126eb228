//! A simulated network of [`AddonOverDp8`] nodes, addressed by index, with the checks the
//! scenarios share.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_addon::{
    AddonOverDp8, Client, ClientConfig, Event, HostConfig, OverDp8Event, PlayerId, Role, Tracker,
};
use dplay_session::{Session, SessionConfig};

use crate::common::{self, Accepted};
pub(crate) use crate::common::{Kind, track};
use dplay_sim::{LinkConfig, Node, NodeId, Sim, Transmit};

/// The application GUID of the simulated sessions.
const APPLICATION: uuid::Uuid = uuid::uuid!("5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");

/// One add-on over DP8 the simulator drives: it keeps every event, moves along its track while
/// it flies, and checks the `packet_index` rule on every accepted position.
pub(crate) struct AddonNode {
    pub(crate) bridge: AddonOverDp8,
    pub(crate) events: Vec<OverDp8Event>,
    index: usize,
    origin: Instant,
    /// Moves along [`track`] (players only).
    pub(crate) flying: bool,
    /// The positions accepted, per sender.
    pub(crate) accepted: Accepted,
}

impl AddonNode {
    fn step(&mut self, now: Instant) {
        if self.flying {
            let p = track(self.index, now.duration_since(self.origin));
            let _ = self.bridge.with_client(now, |c, now| {
                c.set_position(now, p, None);
                Ok(())
            });
        }
    }

    /// Takes the bridge's events; records accepted positions once per sender and call.
    fn drain(&mut self) {
        let mut updated = Vec::new();
        while let Some(e) = self.bridge.poll_event() {
            if let OverDp8Event::Addon(Event::PositionUpdated { id }) = &e {
                updated.push(*id);
            }
            self.events.push(e);
        }
        self.accepted.record(&updated, self.bridge.tracker());
    }

    /// The add-on's tracker.
    pub(crate) fn tracker(&self) -> &Tracker {
        self.bridge.tracker().expect("the add-on has started")
    }

    /// Our add-on player id.
    pub(crate) fn id(&self) -> PlayerId {
        PlayerId(self.bridge.session().local_dpnid().0)
    }

    /// True once the add-on event `e` was reported.
    pub(crate) fn saw(&self, e: &Event) -> bool {
        self.events.iter().any(|x| x == &OverDp8Event::Addon(e.clone()))
    }
}

impl Node for AddonNode {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.bridge.handle_datagram(now, from, data);
        self.drain();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.step(now);
        self.bridge.handle_timeout(now);
        self.drain();
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        self.drain();
        self.bridge.poll_transmit().map(|t| Transmit { destination: t.destination, contents: t.contents })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.bridge.poll_timeout()
    }
}

/// The address of node `i`: 10.0.0.(i+1):2302.
pub(crate) fn addr(i: usize) -> SocketAddr {
    SocketAddr::new(Ipv4Addr::new(10, 0, 0, u8::try_from(i + 1).expect("few nodes")).into(), 2302)
}

/// The nodes of one scenario on one network: node 0 hosts.
pub(crate) struct Net {
    pub(crate) sim: Sim,
    ids: Vec<NodeId>,
}

/// A link with 15 ms latency, 10 ms jitter, `loss`, and 2% of datagrams held back up to
/// 600 ms: long enough for the next positions (250 ms apart) to overtake them.
pub(crate) fn link(loss: f64) -> LinkConfig {
    LinkConfig {
        reorder_delay: Duration::from_millis(600),
        ..LinkConfig::clean()
            .with_latency(Duration::from_millis(15))
            .with_jitter(Duration::from_millis(10))
            .with_loss(loss)
            .with_reorder(0.02)
    }
}

impl Net {
    /// One node per `kinds` entry; node 0 must be the host.
    pub(crate) fn new(seed: u64, link: LinkConfig, kinds: &[Kind]) -> Self {
        let mut sim = Sim::new(seed);
        sim.set_default_link(link);
        let origin = sim.now();
        let ids = kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let mut cfg = SessionConfig::new(APPLICATION, addr(i), &format!("node{i}"));
                cfg.rng_seed = sim.derive_seed(i as u64);
                let session = Session::new(cfg, sim.now());
                let (bridge, flying) = match kind {
                    Kind::Host(own_role, policy) => (
                        AddonOverDp8::host(
                            session,
                            HostConfig::new(dplay_addon::Dialect::Fs98, *own_role, *policy),
                        ),
                        false,
                    ),
                    Kind::Client(role) => {
                        let client = Client::new(ClientConfig::new(*role));
                        (AddonOverDp8::client(session, client), *role == Role::Player)
                    }
                };
                let node = AddonNode {
                    bridge,
                    events: Vec::new(),
                    index: i,
                    origin,
                    flying,
                    accepted: Accepted::default(),
                };
                sim.add_node(addr(i), node)
            })
            .collect();
        Self { sim, ids }
    }

    /// The node `i`.
    pub(crate) fn node(&self, i: usize) -> &AddonNode {
        self.sim.node::<AddonNode>(self.id(i))
    }

    /// Runs `f` on node `i` at the simulator's now.
    pub(crate) fn with<T>(&mut self, i: usize, f: impl FnOnce(&mut AddonNode, Instant) -> T) -> T {
        let now = self.sim.now();
        let id = self.id(i);
        let node = self.sim.node_mut::<AddonNode>(id);
        let r = f(node, now);
        node.drain();
        r
    }

    fn id(&self, i: usize) -> NodeId {
        self.ids.get(i).copied().expect("a node of this net")
    }

    /// Cuts the link between nodes `a` and `b`.
    pub(crate) fn partition(&mut self, a: usize, b: usize) {
        let (a, b) = (self.id(a), self.id(b));
        self.sim.partition(a, b);
    }

    /// Node 0 hosts; every other node joins it.
    pub(crate) fn start(&mut self) {
        self.with(0, |n, now| n.bridge.host_session(now)).expect("host");
        for i in 1..self.ids.len() {
            self.with(i, |n, now| n.bridge.join(now, addr(0), None)).expect("join");
        }
    }

    /// Runs until every node of `which` reported the add-on event `Joined`, at most `limit`.
    pub(crate) fn run_until_addon_joined(&mut self, which: &[usize], limit: Duration) -> bool {
        let ids: Vec<NodeId> = which.iter().map(|i| self.id(*i)).collect();
        let deadline = self.sim.now() + limit;
        self.sim.run_until_with(deadline, |sim| {
            ids.iter().all(|id| {
                sim.node::<AddonNode>(*id)
                    .events
                    .iter()
                    .any(|e| matches!(e, OverDp8Event::Addon(Event::Joined { .. })))
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
    common::assert_tracks(
        at,
        node.tracker(),
        of,
        net.node(of).id(),
        net.node(of).origin,
        net.sim.now(),
        || {
            format!(
                "its events: {:#?}\nbridge {:?} add-on {:?} session {:?}",
                node.events,
                node.bridge.stats(),
                node.bridge.addon_stats(),
                node.bridge.session().stats(),
            )
        },
    );
}

/// Checks that node `at` knows node `of` as an observer without any position.
#[track_caller]
pub(crate) fn assert_silent_observer(net: &Net, at: usize, of: usize) {
    let node = net.node(at);
    common::assert_silent_observer(at, node.tracker(), of, net.node(of).id(), &node.accepted);
}
