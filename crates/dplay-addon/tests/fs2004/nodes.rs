//! The FS2004 session on one simulated network: our nodes ([`Ours`], an [`AddonOverDp8`] in the
//! FS2004 dialect, host or client) and swift-shaped peers ([`SwiftPeer`]), addressed by index.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_addon::packet::{ChangePlayerPlane, EngineType, PlayerInfo, PlayerInfoFlags, ZString};
use dplay_addon::{
    AddonOverDp8, Client, ClientConfig, Dialect, Event, GUID_FS2004, HostConfig, HostPolicy, OverDp8Event,
    PlayerId, PositionFormat, Role, Tracker, Velocity,
};
use dplay_session::{Session, SessionConfig};
use dplay_sim::{LinkConfig, Node, NodeId, Sim, Transmit};

use crate::common::{Accepted, DEG_PER_S, track};
use crate::swift::{SwiftPeer, player_info};

/// Our player's aircraft.
pub(crate) const OUR_TITLE: &str = "Cessna Skyhawk 172SP";

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Our FS2004 host, an observer.
    Host,
    /// Our FS2004 client in this role.
    Ours(Role),
    /// A swift-shaped peer.
    Swift,
}

/// One of our add-ons; a player flies its track and sends POSITION_VELOCITY guaranteed.
pub(crate) struct Ours {
    pub(crate) bridge: AddonOverDp8,
    pub(crate) events: Vec<OverDp8Event>,
    index: usize,
    pub(crate) origin: Instant,
    pub(crate) flying: bool,
    pub(crate) accepted: Accepted,
}

impl Ours {
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

    pub(crate) fn tracker(&self) -> &Tracker {
        self.bridge.tracker().expect("the add-on has started")
    }

    pub(crate) fn saw(&self, e: &Event) -> bool {
        self.events.iter().any(|x| x == &OverDp8Event::Addon(e.clone()))
    }
}

impl Node for Ours {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.bridge.handle_datagram(now, from, data);
        self.drain();
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.flying {
            let p = track(self.index, now.duration_since(self.origin));
            let _ = self.bridge.with_client(now, |c, now| {
                c.set_position(now, p, Some(velocity()));
                Ok(())
            });
        }
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

/// The velocity along [`track`]: north at [`DEG_PER_S`], in feet per second.
fn velocity() -> Velocity {
    let ft_s = DEG_PER_S * 10_001_750.0 / 90.0 / 0.3048;
    Velocity { north_ft_s: ft_s, ground_ft_s: ft_s, ..Velocity::default() }
}

/// The address of node `i`: 10.0.0.(i+1):23456 (FS2004's port).
pub(crate) fn addr(i: usize) -> SocketAddr {
    SocketAddr::new(
        Ipv4Addr::new(10, 0, 0, u8::try_from(i + 1).expect("few nodes")).into(),
        dplay_addon::FS2004_PORT,
    )
}

/// A link with 15 ms latency, 10 ms jitter and `loss`.
pub(crate) fn link(loss: f64) -> LinkConfig {
    LinkConfig::clean()
        .with_latency(Duration::from_millis(15))
        .with_jitter(Duration::from_millis(10))
        .with_loss(loss)
}

/// The nodes of one scenario; node 0 hosts.
pub(crate) struct Net {
    pub(crate) sim: Sim,
    ids: Vec<(NodeId, Kind)>,
    pub(crate) origin: Instant,
}

impl Net {
    pub(crate) fn new(seed: u64, link: LinkConfig) -> Self {
        let mut sim = Sim::new(seed);
        sim.set_default_link(link);
        let origin = sim.now();
        Self { sim, ids: Vec::new(), origin }
    }

    /// Adds node `kinds.len()` of `kind` (not started).
    pub(crate) fn add(&mut self, kind: Kind) -> usize {
        let i = self.ids.len();
        let mut cfg = SessionConfig::new(GUID_FS2004, addr(i), &format!("node{i}"));
        cfg.rng_seed = self.sim.derive_seed(i as u64);
        let id = match kind {
            Kind::Swift => {
                cfg.player_data = player_info();
                let peer = SwiftPeer::new(Session::new(cfg, self.sim.now()), i, self.origin);
                self.sim.add_node(addr(i), peer)
            }
            Kind::Host => {
                let info = PlayerInfo { flags: PlayerInfoFlags::OBSERVER, aircraft: ZString::default() };
                cfg.player_data = info.to_bytes().to_vec();
                let config = HostConfig::new(Dialect::Fs2004, Role::Observer, HostPolicy::default());
                self.ours(i, AddonOverDp8::host(Session::new(cfg, self.sim.now()), config), false)
            }
            Kind::Ours(role) => {
                let plane = ChangePlayerPlane {
                    engine_type: EngineType::ENGINE_TYPE_PISTON,
                    aircraft_name: ZString::from_text(OUR_TITLE),
                };
                let mut config = ClientConfig::new(role);
                config.dialect = Dialect::Fs2004;
                config.plane = (role == Role::Player).then_some(plane);
                config.position_format = PositionFormat::Velocity;
                config.positions_guaranteed = true;
                cfg.player_data = config.player_info().to_bytes().to_vec();
                let mut client = Client::new(config);
                // Known before joining, so that positions go out as soon as it is in.
                client.set_position(self.sim.now(), track(i, Duration::ZERO), Some(velocity()));
                let bridge = AddonOverDp8::client(Session::new(cfg, self.sim.now()), client);
                self.ours(i, bridge, role == Role::Player)
            }
        };
        self.ids.push((id, kind));
        i
    }

    fn ours(&mut self, i: usize, bridge: AddonOverDp8, flying: bool) -> NodeId {
        let node = Ours {
            bridge,
            events: Vec::new(),
            index: i,
            origin: self.origin,
            flying,
            accepted: Accepted::default(),
        };
        self.sim.add_node(addr(i), node)
    }

    fn id(&self, i: usize) -> (NodeId, Kind) {
        self.ids.get(i).copied().expect("a node of this net")
    }

    pub(crate) fn ours_node(&self, i: usize) -> &Ours {
        self.sim.node::<Ours>(self.id(i).0)
    }

    pub(crate) fn swift(&self, i: usize) -> &SwiftPeer {
        self.sim.node::<SwiftPeer>(self.id(i).0)
    }

    pub(crate) fn swift_mut(&mut self, i: usize) -> &mut SwiftPeer {
        let id = self.id(i).0;
        self.sim.node_mut::<SwiftPeer>(id)
    }

    /// The session of node `i`, whatever it is.
    pub(crate) fn session(&self, i: usize) -> &Session {
        match self.id(i).1 {
            Kind::Swift => &self.swift(i).session,
            _ => self.ours_node(i).bridge.session(),
        }
    }

    /// Node `i`'s DirectPlay id as an add-on player id.
    pub(crate) fn player_id(&self, i: usize) -> PlayerId {
        PlayerId(self.session(i).local_dpnid().0)
    }

    /// Runs `f` on our node `i` at the simulator's now.
    pub(crate) fn with<T>(&mut self, i: usize, f: impl FnOnce(&mut Ours, Instant) -> T) -> T {
        let now = self.sim.now();
        let node = self.sim.node_mut::<Ours>(self.id(i).0);
        let r = f(node, now);
        node.drain();
        r
    }

    /// Node `i` hosts (node 0) or joins the session hosted at `host`.
    pub(crate) fn start(&mut self, i: usize, host: usize) {
        let now = self.sim.now();
        let (id, kind) = self.id(i);
        match kind {
            Kind::Swift => {
                self.sim.node_mut::<SwiftPeer>(id).session.join(now, addr(host), None).expect("join")
            }
            Kind::Host => self.with(i, |n, now| n.bridge.host_session(now)).expect("host"),
            Kind::Ours(_) => self.with(i, |n, now| n.bridge.join(now, addr(host), None)).expect("join"),
        }
    }

    /// Runs until every node of `which` is in the session, at most `limit`.
    pub(crate) fn run_until_joined(&mut self, which: &[usize], limit: Duration) -> bool {
        let ids: Vec<(NodeId, Kind)> = which.iter().map(|i| self.id(*i)).collect();
        let deadline = self.sim.now() + limit;
        self.sim.run_until_with(deadline, |sim| {
            ids.iter().all(|(id, kind)| match kind {
                Kind::Swift => sim.node::<SwiftPeer>(*id).session.is_joined(),
                _ => sim.node::<Ours>(*id).bridge.session().is_joined(),
            })
        })
    }
}
