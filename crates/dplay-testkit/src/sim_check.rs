//! Sessions on the simulated network (`dplay-sim`): a [`SimNode`] adapter, a [`Mesh`] of
//! sessions with commands by index, and the many-seed name-table property that
//! `cargo xtask sim` runs through [`run`].
//!
//! The property: whatever joins, leaves, kills, host migrations, group operations and
//! information updates a seed draws, under 0%, 5% or 20% loss, every survivor is joined and
//! holds the same name table (groups, memberships and version included) as every other member
//! of its session (a session may split when a host goes, MC-DPL8CS 3.2.5.4; a member the
//! integrity check terminated is out, MC-DPL8CS 3.2.5.3).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_sim::{LinkConfig, Node, NodeId, Sim, Transmit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use dplay_wire::dp8::dpnid::Dpnid;

use dplay_session::{Event, Phase, Session, SessionConfig};

/// The application GUID of the simulated sessions.
pub const SIM_APPLICATION: Uuid = uuid::uuid!("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");

/// A [`Session`] the simulator drives; it keeps every event it reported.
#[derive(Debug)]
pub struct SimNode {
    /// The session.
    pub session: Session,
    /// Every event so far, in order.
    pub events: Vec<Event>,
}

impl SimNode {
    fn drain(&mut self) {
        while let Some(e) = self.session.poll_event() {
            self.events.push(e);
        }
    }
}

impl Node for SimNode {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.session.handle_datagram(now, from, data);
        self.drain();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
        self.drain();
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        self.drain();
        self.session.poll_transmit().map(|t| Transmit { destination: t.destination, contents: t.contents })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.session.poll_timeout()
    }
}

/// The address of node `i`: 10.0.0.(i+1):2302.
pub fn sim_addr(i: usize) -> SocketAddr {
    let host = u8::try_from(i + 1).unwrap_or(u8::MAX);
    SocketAddr::new(Ipv4Addr::new(10, 0, 0, host).into(), 2302)
}

/// N sessions on one simulated network, addressed by index.
pub struct Mesh {
    /// The network.
    pub sim: Sim,
    /// The nodes, by index.
    pub ids: Vec<NodeId>,
}

impl Mesh {
    /// `n` idle sessions named `player<i>`, every link `link`; `tune` adjusts each config.
    pub fn new(seed: u64, n: usize, link: LinkConfig, tune: impl Fn(usize, &mut SessionConfig)) -> Self {
        let mut sim = Sim::new(seed);
        sim.set_default_link(link);
        let ids = (0..n)
            .map(|i| {
                let mut cfg = SessionConfig::new(SIM_APPLICATION, sim_addr(i), &format!("player{i}"));
                cfg.rng_seed = sim.derive_seed(i as u64);
                cfg.session_name = "sim".to_owned();
                tune(i, &mut cfg);
                let session = Session::new(cfg, sim.now());
                sim.add_node(sim_addr(i), SimNode { session, events: Vec::new() })
            })
            .collect();
        Self { sim, ids }
    }

    /// The node `i`.
    pub fn node(&self, i: usize) -> &SimNode {
        self.sim.node::<SimNode>(self.id(i))
    }

    /// The session `i`, to give it a command; `now` is the simulator's.
    pub fn with<T>(&mut self, i: usize, f: impl FnOnce(&mut Session, Instant) -> T) -> T {
        let now = self.sim.now();
        let id = self.id(i);
        f(&mut self.sim.node_mut::<SimNode>(id).session, now)
    }

    fn id(&self, i: usize) -> NodeId {
        self.ids.get(i).copied().expect("a node index of this mesh")
    }

    /// Node `i` hosts.
    pub fn host(&mut self, i: usize) {
        let _ = self.with(i, |s, now| s.host(now));
    }

    /// Node `i` joins the host at node `host` (instance GUID unknown: zeros).
    pub fn join(&mut self, i: usize, host: usize) {
        let _ = self.with(i, |s, now| s.join(now, sim_addr(host), None));
    }

    /// Runs until every node of `which` is joined, at most `limit`.
    pub fn run_until_joined(&mut self, which: &[usize], limit: Duration) -> bool {
        let ids: Vec<NodeId> = which.iter().map(|i| self.id(*i)).collect();
        let deadline = self.sim.now() + limit;
        self.sim
            .run_until_with(deadline, |sim| ids.iter().all(|id| sim.node::<SimNode>(*id).session.is_joined()))
    }

    /// Cuts node `i` off the network: a killed member.
    pub fn kill(&mut self, i: usize) {
        let id = self.id(i);
        self.sim.isolate(id);
    }

    /// The indices of joined sessions not in `dead`.
    pub fn live(&self, dead: &[usize]) -> Vec<usize> {
        (0..self.ids.len()).filter(|i| !dead.contains(i) && self.node(*i).session.is_joined()).collect()
    }

    /// Checks that the sessions `which` hold the same name table, and that each holds exactly
    /// the players of `which`.
    pub fn tables_agree(&self, which: &[usize]) -> Result<(), String> {
        let Some(first) = which.first() else { return Ok(()) };
        let reference = self.node(*first).session.name_table().fingerprint();
        for i in which {
            let s = &self.node(*i).session;
            let mine = s.name_table().fingerprint();
            if mine != reference {
                return Err(format!(
                    "node {i} table {mine:#?} differs from node {first} table {reference:#?}"
                ));
            }
            if s.name_table().len() != which.len() {
                return Err(format!(
                    "node {i} holds {} players, {} are live: {mine:#?}",
                    s.name_table().len(),
                    which.len()
                ));
            }
        }
        Ok(())
    }
}

impl Mesh {
    /// A number drawn from `count` of random group operations and information updates, each
    /// by a random joined member not in `dead` (the host applies its own at once, a member
    /// asks the host, MC-DPL8CS 3.4, 3.5), with up to half a second between them.
    pub fn table_ops(
        &mut self,
        rng: &mut ChaCha8Rng,
        dead: &[usize],
        count: std::ops::RangeInclusive<usize>,
    ) {
        for k in 0..rng.gen_range(count) {
            let live = self.live(dead);
            let Some(&i) = live.get(rng.gen_range(0..live.len().max(1))) else { return };
            let table = self.node(i).session.name_table();
            let groups: Vec<Dpnid> = table.groups().map(|g| g.dpnid).collect();
            let players: Vec<Dpnid> = table.players().map(|p| p.dpnid).collect();
            let group = groups.get(rng.gen_range(0..groups.len().max(1))).copied();
            let player = players.get(rng.gen_range(0..players.len().max(1))).copied();
            let tag = rng.r#gen::<u8>();
            let _ = self.with(i, |s, now| match (rng.gen_range(0..6), group, player) {
                (1, Some(g), _) => s.destroy_group(now, g),
                (2, Some(g), Some(p)) => s.add_to_group(now, g, p),
                (3, Some(g), Some(p)) => {
                    let first = s.name_table().group_members(g).next();
                    match first {
                        Some(m) => s.remove_from_group(now, g, m),
                        None => s.add_to_group(now, g, p),
                    }
                }
                (4, _, _) => {
                    let local = s.local_dpnid();
                    s.set_info(now, local, Some(&format!("p{i}-{k}-{tag}")), Some(&[tag]))
                }
                (5, Some(g), _) => s.set_info(now, g, None, Some(&[tag, tag])),
                _ => s.create_group(now, &format!("g{i}-{k}-{tag}"), &[tag], tag % 2 == 0),
            });
            self.sim.run_for(Duration::from_millis(rng.gen_range(0..500)));
        }
    }
}

/// The losses the property draws from: 0%, 5% and 20%.
pub const LOSSES: [f64; 3] = [0.0, 0.05, 0.2];

/// One run of the name-table property for `seed`: 3 to 8 peers join (some at once), then
/// members leave, are killed or removed by the host, or the host leaves or is killed; all
/// along, members create and destroy groups, add and remove members and change their own or a
/// group's information (MC-DPL8CS 2.2.4, 2.2.5). Afterwards every survivor must be joined, and
/// the survivors that name the same host must hold the same table: players, groups,
/// memberships, information and version.
pub fn name_table_property(seed: u64) -> Result<(), String> {
    property_run(seed).1
}

/// [`name_table_property`], with the mesh it ran on.
pub fn property_run(seed: u64) -> (Mesh, Result<(), String>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xA11C_E5ED);
    let n = rng.gen_range(3..=8);
    let loss = LOSSES.get(rng.gen_range(0..LOSSES.len())).copied().unwrap_or(0.0);
    let link = LinkConfig::clean().with_latency(Duration::from_millis(15)).with_loss(loss);
    let mut mesh = Mesh::new(seed, n, link, |_, _| {});
    mesh.host(0);
    let mut i = 1;
    while i < n {
        let burst = rng.gen_range(1..=3).min(n - i);
        for j in i..i + burst {
            mesh.join(j, 0);
        }
        mesh.table_ops(&mut rng, &[], 0..=2);
        mesh.sim.run_for(Duration::from_millis(rng.gen_range(0..2000)));
        i += burst;
    }
    let all: Vec<usize> = (0..n).collect();
    mesh.run_until_joined(&all, Duration::from_secs(120));
    let (mut dead, mut killed) = (Vec::new(), Vec::new());
    for _ in 0..rng.gen_range(0..=2) {
        mesh.table_ops(&mut rng, &dead, 0..=4);
        let live = mesh.live(&dead);
        let Some(&victim) = live.get(rng.gen_range(0..live.len().max(1))) else { break };
        match rng.gen_range(0..3) {
            0 => mesh.with(victim, |s, now| s.leave(now)),
            1 => {
                mesh.kill(victim);
                killed.push(victim);
            }
            _ => {
                // The host removes the victim (MS-DPDX 3.1.5.5); a host victim leaves instead.
                let dpnid = mesh.node(victim).session.local_dpnid();
                let host = live.iter().copied().find(|i| mesh.node(*i).session.phase() == Phase::Host);
                match host.filter(|h| *h != victim) {
                    Some(h) => drop(mesh.with(h, |s, now| s.remove_player(now, dpnid))),
                    None => mesh.with(victim, |s, now| s.leave(now)),
                }
            }
        }
        dead.push(victim);
        mesh.sim.run_for(Duration::from_millis(rng.gen_range(0..3000)));
    }
    mesh.table_ops(&mut rng, &dead, 0..=4);
    mesh.sim.run_for(Duration::from_secs(240));
    // Out of the session: the killed, and whoever's session ended as a victim, or by the
    // integrity check (a link that 20% loss broke, MC-DPL8CS 3.2.5.3). Anyone else must be in.
    let mut survivors = Vec::new();
    let mut check = Ok(());
    for i in (0..n).filter(|i| !killed.contains(i)) {
        let ended = mesh.node(i).events.iter().find_map(|e| match e {
            Event::SessionEnded { reason } => Some(*reason),
            _ => None,
        });
        match ended {
            None if mesh.node(i).session.is_joined() => survivors.push(i),
            None => check = Err(format!("node {i} is not joined")),
            Some(_) if dead.contains(&i) => {}
            Some(dplay_session::EndReason::Terminated) => {}
            Some(reason) => check = Err(format!("node {i} ended: {reason:?}")),
        }
    }
    // MS-DPDX 2.2.15: every DN_DESTROY_PLAYER says NORMAL or HOSTDESTROYEDPLAYER. A host that
    // destroyed a lost player tells its own application CONNECTIONLOST (issue 25 item 6), so
    // only a node that has been host may report it; any other heard it from the wire.
    use dplay_wire::dp8::session::DestroyReason;
    let allowed = [
        DestroyReason::DPNDESTROYPLAYERREASON_NORMAL,
        DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER,
    ];
    for i in 0..n {
        let me = mesh.node(i).session.local_dpnid();
        let events = &mesh.node(i).events;
        let was_host = events.iter().any(|e| match e {
            Event::Joined { local, host, .. } => local == host,
            Event::HostMigrated { new_host } => *new_host == me,
            _ => false,
        });
        let odd =
            events.iter().find_map(|e| match e {
                Event::PlayerRemoved {
                    reason: DestroyReason::DPNDESTROYPLAYERREASON_CONNECTIONLOST, ..
                } if was_host => None,
                Event::PlayerRemoved { reason, .. } if !allowed.contains(reason) => Some(*reason),
                _ => None,
            });
        if let Some(reason) = odd {
            check = Err(format!("node {i} heard destroy reason {reason:?}"));
        }
    }
    let check = check.and_then(|()| {
        // Lost links while the host goes may split the session, which MC-DPL8CS 3.2.5.4
        // allows ("this can be split out to more than one host"): each part must agree.
        let mut hosts: Vec<_> = survivors.iter().map(|i| mesh.node(*i).session.host_dpnid()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        hosts.iter().try_for_each(|h| {
            let part: Vec<usize> =
                survivors.iter().copied().filter(|i| mesh.node(*i).session.host_dpnid() == *h).collect();
            mesh.tables_agree(&part)
        })
    });
    let check = check.map_err(|e| {
        let states: Vec<String> = (0..n)
            .map(|i| {
                let s = &mesh.node(i).session;
                format!(
                    "node {i}: {:?} local {} host {} v{} {} stats {:?} events {:?}",
                    s.phase(),
                    s.local_dpnid(),
                    s.host_dpnid(),
                    s.name_table().version(),
                    dplay_session::test_hooks::internals(s),
                    s.stats(),
                    mesh.node(i).events
                )
            })
            .collect();
        format!("seed {seed} (n={n}, loss={loss}, dead={dead:?}): {e}\n{}", states.join("\n"))
    });
    (mesh, check)
}

/// The result of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimSummary {
    /// Runs made.
    pub runs: u64,
    /// The seeds whose run failed, with why.
    pub failures: Vec<(u64, String)>,
}

/// Runs [`name_table_property`] once per seed: the entry point of `cargo xtask sim`.
pub fn run(seeds: impl IntoIterator<Item = u64>) -> SimSummary {
    let mut summary = SimSummary::default();
    for seed in seeds {
        summary.runs += 1;
        if let Err(e) = name_table_property(seed) {
            summary.failures.push((seed, e));
        }
    }
    summary
}

/// The phase of node `i`, for tests.
pub fn phase(mesh: &Mesh, i: usize) -> Phase {
    mesh.node(i).session.phase()
}
