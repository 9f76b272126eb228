//! A DirectPlay 8 host's relay for members behind NAT, sans-IO (issue 23; docs/relay.md).
//!
//! A peer-to-peer session is a full mesh (MC-DPL8CS 3.1.5.2): every member connects to every
//! other member, which NATs on both sides refuse. The relay gives each member `M` an endpoint
//! `R(M)` on the host: the host's session hands out `R(M)` as `M`'s address in the name table
//! (through [`dplay_session::AddressMap`], which [`Relay`] implements), so every other member
//! sends to `R(M)` what it means for `M`. A datagram from member `S` at `R(M)` goes to `M`
//! from `R(S)`, where `M` knows `S`, unchanged: the transport (MC-DPL8R) stays end to end.
//!
//! The NAT rules (docs/relay.md):
//! - An endpoint never sends first. It sends to member `M` only at the address and port `M`
//!   itself sent from to that endpoint ("latched"): behind a symmetric NAT each endpoint sees
//!   its own port, and a port-restricted cone NAT passes only replies.
//! - A member's first datagram at an endpoint tells who it is: a joiner's PATH_TEST carries a
//!   key whose inputs (both DPNIDs, the application and instance GUIDs, MC-DPLNAT 3.1.3) the
//!   host knows; an older member's CONNECT (MC-DPL8R 2.2.1.1) answers the host's
//!   INSTRUCT_CONNECT, and comes from the member's public address (a cone NAT keeps the port)
//!   or at least its IP.
//! - Only members, only toward members: anything else is dropped and counted.

pub mod dp4;
mod latch;
mod outbox;
mod rate;
mod stats;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_session::AddressMap;
use dplay_wire::budget::MemoryBudget;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::log_limit::LogLimit;
use uuid::Uuid;

use outbox::{Outbox, Sender};
pub use rate::RateLimit;
pub use stats::{MemberStats, RelayStats};

/// How often one source's dropped datagrams are logged at most.
const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The relay's maps, hashed with foldhash: every datagram looks up its source and the
/// members (SipHash was a third of the relay's own time per datagram). Only members' addresses
/// and DPNIDs are keys, so nobody outside the session chooses what is hashed.
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// How a [`Relay`] is set up.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The address members reach each relay endpoint at (the host's public address and the
    /// endpoint's port), by endpoint index. A member takes a free one when admitted.
    pub endpoints: Vec<SocketAddr>,
    /// Each member's rate cap.
    pub rate: RateLimit,
    /// At most this many datagrams waiting to be sent.
    pub max_queue: usize,
    /// The host's memory budget, which the waiting datagrams are charged to (docs/limits.md).
    pub budget: MemoryBudget,
}

impl RelayConfig {
    /// Endpoints at `endpoints`, default caps, no memory budget of its own.
    pub fn new(endpoints: Vec<SocketAddr>) -> Self {
        Self { endpoints, rate: RateLimit::default(), max_queue: 4096, budget: MemoryBudget::unlimited() }
    }
}

/// One datagram to send: from endpoint `endpoint` to `to` (its bytes in the caller's buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forward {
    /// The index of the endpoint it leaves from.
    pub endpoint: usize,
    /// The member's latched address at that endpoint.
    pub to: SocketAddr,
}

/// A member of the session, as the relay knows it.
#[derive(Debug)]
struct Member {
    /// Where the host sees it.
    addr: SocketAddr,
    /// Its endpoint's index.
    endpoint: usize,
    /// Admission order: older members connect to newer ones (MS-DPDX 4.3 step 11).
    order: u64,
    sender: Sender,
}

/// A relay endpoint: its owner, and who latched where.
#[derive(Debug, Default)]
struct Endpoint {
    owner: Option<Dpnid>,
    /// When it was last freed, in frees so far (0: never held): the endpoint freed longest
    /// ago is taken first, so members that still hold a connection to the address of one that
    /// left (a DirectPlay transport lingers after a disconnect) do not meet a new member there
    /// soon after.
    freed: u64,
    by_source: Map<SocketAddr, Dpnid>,
    by_member: Map<Dpnid, SocketAddr>,
}

/// The relay: endpoints, members, and the datagrams waiting to go.
#[derive(Debug)]
pub struct Relay {
    cfg: RelayConfig,
    endpoints: Vec<Endpoint>,
    members: Map<Dpnid, Member>,
    next_order: u64,
    frees: u64,
    /// The session's application and instance GUIDs (PATH_TEST keys).
    application: Uuid,
    instance: Uuid,
    outbox: Outbox<Forward>,
    stats: RelayStats,
    log: LogLimit,
}

impl Relay {
    /// A relay with every endpoint free.
    pub fn new(cfg: RelayConfig) -> Self {
        let endpoints = cfg.endpoints.iter().map(|_| Endpoint::default()).collect();
        let outbox = Outbox::new(&cfg.budget, cfg.max_queue, cfg.rate);
        Self {
            cfg,
            endpoints,
            members: Map::default(),
            next_order: 0,
            frees: 0,
            application: Uuid::nil(),
            instance: Uuid::nil(),
            outbox,
            stats: RelayStats::default(),
            log: LogLimit::default(),
        }
    }

    /// Charges the datagrams waiting from now on to `budget` (the host's, once its session
    /// exists); those already waiting stay charged where they were.
    pub fn set_budget(&mut self, budget: &MemoryBudget) {
        self.outbox.set_budget(budget);
    }

    /// The endpoints' public addresses, by index.
    pub fn endpoints(&self) -> &[SocketAddr] {
        &self.cfg.endpoints
    }

    /// `player`, seen at `from`, joins: it takes the free endpoint freed longest ago (or never
    /// held), whose address is returned;
    /// `None` when every endpoint is taken (the others then get `from` itself).
    pub fn admit(
        &mut self,
        player: Dpnid,
        from: SocketAddr,
        application: Uuid,
        instance: Uuid,
    ) -> Option<SocketAddr> {
        self.remove(player);
        let (index, _) = self
            .endpoints
            .iter()
            .enumerate()
            .filter(|(_, e)| e.owner.is_none())
            .min_by_key(|(_, e)| e.freed)?;
        let endpoint = *self.cfg.endpoints.get(index)?;
        self.endpoints.get_mut(index)?.owner = Some(player);
        (self.application, self.instance) = (application, instance);
        let stats = MemberStats {
            dpnid: player,
            addr: from,
            endpoint,
            datagrams_from: 0,
            bytes_from: 0,
            datagrams_to: 0,
            bytes_to: 0,
            rate_limited: 0,
        };
        let order = self.next_order;
        self.next_order += 1;
        let member = Member {
            addr: from,
            endpoint: index,
            order,
            sender: Sender { bucket: rate::Bucket::new(), stats },
        };
        self.members.insert(player, member);
        tracing::debug!(%player, %from, %endpoint, "relay endpoint taken");
        Some(endpoint)
    }

    /// `player` left: its endpoint is free again and its latches everywhere are forgotten.
    pub fn remove(&mut self, player: Dpnid) {
        let Some(member) = self.members.remove(&player) else { return };
        self.frees += 1;
        if let Some(e) = self.endpoints.get_mut(member.endpoint) {
            *e = Endpoint { freed: self.frees, ..Endpoint::default() };
        }
        for e in &mut self.endpoints {
            if let Some(addr) = e.by_member.remove(&player) {
                e.by_source.remove(&addr);
            }
        }
        tracing::debug!(%player, "relay endpoint freed");
    }

    /// A datagram arrived at endpoint `endpoint` from `from`: forwarded to the endpoint's
    /// owner when it comes from another member, else dropped and counted.
    pub fn handle_datagram(&mut self, now: Instant, endpoint: usize, from: SocketAddr, data: &[u8]) {
        let Some(e) = self.endpoints.get(endpoint) else { return };
        let Some(owner) = e.owner else {
            return self.stranger(now, from, "an endpoint no member holds");
        };
        let sender = match e.by_source.get(&from).copied() {
            Some(s) => s,
            None => match self.identify(endpoint, owner, from, data) {
                Some(s) => {
                    self.latch(endpoint, s, from);
                    s
                }
                None => return self.stranger(now, from, "not a member"),
            },
        };
        let Some(via) = self.members.get(&sender).map(|m| m.endpoint) else { return };
        let Some(to) = self.endpoints.get(via).and_then(|e| e.by_member.get(&owner)).copied() else {
            self.stats.unlatched += 1;
            return;
        };
        if sender == owner {
            return;
        }
        let [Some(s), o] = self.members.get_disjoint_mut([&sender, &owner]) else { return };
        let receiver = o.map(|o| &mut o.sender.stats);
        self.outbox.offer(now, &mut s.sender, receiver, &mut self.stats, Forward { endpoint: via, to }, data);
    }

    /// The next datagram to send: its bytes into `buf` (cleared by the caller; an empty `buf`
    /// is swapped with the datagram's own buffer rather than copied into).
    pub fn poll_forward(&mut self, buf: &mut Vec<u8>) -> Option<Forward> {
        self.outbox.pop(buf)
    }

    /// Advertises endpoint `index` at `public` from now on (the host's router mapped its port
    /// there, `--upnp`): members admitted from now on are given it; those admitted before keep
    /// the address they were given (docs/decisions.md, "Relay").
    pub fn advertise(&mut self, index: usize, public: SocketAddr) {
        if let Some(a) = self.cfg.endpoints.get_mut(index) {
            *a = public;
        }
    }

    /// What the relay did so far, members by DPNID.
    pub fn stats(&self) -> RelayStats {
        let mut members: Vec<MemberStats> = self.members.values().map(|m| m.sender.stats).collect();
        members.sort_by_key(|m| m.dpnid);
        RelayStats {
            endpoints: self.endpoints.len(),
            endpoints_held: self.members.len(),
            members,
            ..self.stats.clone()
        }
    }

    fn latch(&mut self, endpoint: usize, member: Dpnid, from: SocketAddr) {
        if let Some(e) = self.endpoints.get_mut(endpoint) {
            e.by_source.insert(from, member);
            e.by_member.insert(member, from);
            self.stats.latched += 1;
        }
    }

    fn stranger(&mut self, now: Instant, from: SocketAddr, why: &str) {
        self.stats.strangers += 1;
        if self.log.may_log(now, from.ip(), LOG_INTERVAL) {
            tracing::info!(%from, why, "relay: datagram dropped (logged once per source per 10 s)");
        }
    }
}

impl AddressMap for Relay {
    fn admitted(
        &mut self,
        player: Dpnid,
        from: SocketAddr,
        application: Uuid,
        instance: Uuid,
    ) -> Option<SocketAddr> {
        self.admit(player, from, application, instance)
    }

    fn removed(&mut self, player: Dpnid) {
        self.remove(player);
    }
}

#[cfg(test)]
mod tests;
