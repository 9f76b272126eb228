//! A scripted Windows-shaped DirectPlay 8 peer on dplay-sim: our transport underneath, but
//! every session message it sends is laid out by hand, field by field, as MC-DPL8CS 2.2 draws
//! it (or taken from the MC-DPL8CS 4 example bytes), never by our encoder. The test drives it
//! step by step and reads what it received.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_dframe::{Endpoint, MessageKind};
use dplay_sim::{Node, NodeId, Sim, Transmit};

use dplay_session::{Session, SessionConfig};
use dplay_testkit::sim_check::{SIM_APPLICATION, SimNode, sim_addr};
use dplay_wire::dp8::dpnid::Dpnid;

/// The peer: a transport endpoint and everything it received.
pub(crate) struct WindowsPeer {
    ep: Endpoint,
    /// Session (USER_1) messages received, in order, with their sender.
    pub(crate) got: Vec<(SocketAddr, Vec<u8>)>,
    /// Application messages received: sender, bytes, reliable, sequential.
    pub(crate) app: Vec<(SocketAddr, Vec<u8>, bool, bool)>,
    /// Transport connections that came up.
    pub(crate) connected: Vec<SocketAddr>,
}

impl WindowsPeer {
    fn drain(&mut self) {
        while let Some(e) = self.ep.poll_event() {
            match e {
                dplay_dframe::Event::Message { peer, data, user_1: true, .. } => self.got.push((peer, data)),
                dplay_dframe::Event::Message { peer, data, reliable, sequential, .. } => {
                    self.app.push((peer, data, reliable, sequential))
                }
                dplay_dframe::Event::Connected { peer, .. } => self.connected.push(peer),
                _ => {}
            }
        }
    }

    /// Sends a session message: reliable, sequential, USER_1 (MC-DPL8CS 2.1.1, 3.3.5.1).
    pub(crate) fn send(&mut self, now: Instant, to: SocketAddr, bytes: &[u8]) {
        let kind = MessageKind { user_1: true, ..MessageKind::RELIABLE_SEQUENTIAL };
        self.ep.send(now, to, bytes, kind).expect("the peer's connection");
    }

    /// The session messages of type `ty` received so far.
    pub(crate) fn of_type(&self, ty: u8) -> Vec<Vec<u8>> {
        self.got.iter().filter(|(_, b)| b.first() == Some(&ty)).map(|(_, b)| b.clone()).collect()
    }
}

impl Node for WindowsPeer {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.ep.handle_datagram(now, from, data);
        self.drain();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.ep.handle_timeout(now);
        self.drain();
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        self.ep.poll_transmit().map(|t| Transmit { destination: t.destination, contents: t.contents })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.ep.poll_timeout()
    }
}

/// A network of the Windows peer at node index `windows` and our sessions at the other
/// indices below `n`, every link clean with 10 ms of latency; `tune` adjusts our configs.
pub(crate) struct Net {
    pub(crate) sim: Sim,
    pub(crate) ids: Vec<NodeId>,
    pub(crate) windows: usize,
}

impl Net {
    pub(crate) fn new(n: usize, windows: usize, tune: impl Fn(usize, &mut SessionConfig)) -> Self {
        let mut sim = Sim::new(7);
        sim.set_default_link(dplay_sim::LinkConfig::clean().with_latency(Duration::from_millis(10)));
        let ids = (0..n)
            .map(|i| {
                if i == windows {
                    let mut cfg = dplay_dframe::Config::default().with_seed(99);
                    cfg.accept_incoming = true;
                    let ep = Endpoint::new(cfg, sim.now());
                    let peer = WindowsPeer { ep, got: Vec::new(), app: Vec::new(), connected: Vec::new() };
                    return sim.add_node(sim_addr(i), peer);
                }
                let mut cfg = SessionConfig::new(SIM_APPLICATION, sim_addr(i), &format!("player{i}"));
                cfg.rng_seed = sim.derive_seed(i as u64);
                cfg.session_name = "windows".to_owned();
                tune(i, &mut cfg);
                let session = Session::new(cfg, sim.now());
                sim.add_node(sim_addr(i), SimNode { session, events: Vec::new() })
            })
            .collect();
        Self { sim, ids, windows }
    }

    fn id(&self, i: usize) -> NodeId {
        *self.ids.get(i).expect("a node of the net")
    }

    /// Our session at index `i`.
    pub(crate) fn ours(&self, i: usize) -> &SimNode {
        self.sim.node::<SimNode>(self.id(i))
    }

    /// A command to our session `i`.
    pub(crate) fn with<T>(&mut self, i: usize, f: impl FnOnce(&mut Session, Instant) -> T) -> T {
        let now = self.sim.now();
        let id = self.id(i);
        f(&mut self.sim.node_mut::<SimNode>(id).session, now)
    }

    /// The Windows peer.
    pub(crate) fn peer(&self) -> &WindowsPeer {
        self.sim.node::<WindowsPeer>(self.id(self.windows))
    }

    /// A command to the Windows peer.
    pub(crate) fn peer_do<T>(&mut self, f: impl FnOnce(&mut WindowsPeer, Instant) -> T) -> T {
        let now = self.sim.now();
        let id = self.id(self.windows);
        f(self.sim.node_mut::<WindowsPeer>(id), now)
    }

    /// The Windows peer sends `bytes` to node `to`, and the network settles a little.
    pub(crate) fn peer_send(&mut self, to: usize, bytes: &[u8]) {
        self.peer_do(|p, now| p.send(now, sim_addr(to), bytes));
        self.sim.run_for(Duration::from_millis(200));
    }

    /// The Windows peer opens a transport connection to node `to`.
    pub(crate) fn peer_connect(&mut self, to: usize) {
        self.peer_do(|p, now| p.ep.connect(now, sim_addr(to))).expect("connect");
        self.sim.run_for(Duration::from_millis(500));
    }
}

/// A session message laid out by hand: `dwPacketType`, then DWORDs and bytes in the order the
/// spec's diagram draws them. Offsets in the messages count from the end of `dwPacketType`
/// (MC-DPL8CS 2.2; INDEX §0).
pub(crate) struct Msg(pub(crate) Vec<u8>);

impl Msg {
    pub(crate) fn new(packet_type: u32) -> Self {
        Self(packet_type.to_le_bytes().to_vec())
    }

    pub(crate) fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn bytes(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
}

/// DN_CREATE_GROUP (MC-DPL8CS 2.2.4.2) after `first` (its dwPacketType, or a DWORD the caller
/// drops where the body stands alone in DN_ACK_NAMETABLE_OP): the printed dpnidRequesting and
/// dwPacketContext, then the group's DN_NAMETABLE_ENTRY_INFO (INDEX F-15: dpnid, dpnidOwner
/// `requesting`, dwFlags GROUP, dwVersion, dwVersionNotUsed, dwDNETVersion, name, data and URL
/// pairs) and the UTF-16 `name` at offset 56.
pub(crate) fn create_group(
    first: u32,
    requesting: Dpnid,
    context: u32,
    group: Dpnid,
    version: u32,
    name: &[u8],
) -> Msg {
    Msg::new(first)
        .u32(requesting.0)
        .u32(context)
        .u32(group.0)
        .u32(requesting.0)
        .u32(0x10)
        .u32(version)
        .u32(0)
        .u32(0)
        .u32(56)
        .u32(len32(name))
        .u32(0)
        .u32(0)
        .u32(0)
        .u32(0)
        .bytes(name)
}

/// DN_UPDATE_INFO (MC-DPL8CS 2.2.5.2) after `first` (its dwPacketType, or a DWORD the caller
/// drops): dwPacketContext, dpnid, dwVersion, dwVersionNotUsed, dwInfoFlags (NAME, DATA), the
/// name and data offset/size pairs, dpnidRequesting, then the name and the data from offset 40.
pub(crate) fn update_info(
    first: u32,
    context: u32,
    dpnid: Dpnid,
    version: u32,
    name: Option<&[u8]>,
    data: Option<&[u8]>,
    requesting: Dpnid,
) -> Msg {
    let flags = u32::from(name.is_some()) | u32::from(data.is_some()) << 1;
    let (name, data) = (name.unwrap_or_default(), data.unwrap_or_default());
    let at = |offset: u32, field: &[u8]| if field.is_empty() { 0 } else { offset };
    Msg::new(first)
        .u32(context)
        .u32(dpnid.0)
        .u32(version)
        .u32(0)
        .u32(flags)
        .u32(at(40, name))
        .u32(len32(name))
        .u32(at(40 + len32(name), data))
        .u32(len32(data))
        .u32(requesting.0)
        .bytes(name)
        .bytes(data)
}

/// UTF-16LE with its NUL, as every name travels (MC-DPL8CS 2.2).
pub(crate) fn wide(s: &str) -> Vec<u8> {
    s.encode_utf16().chain([0]).flat_map(u16::to_le_bytes).collect()
}

/// A field's size as its DWORD.
pub(crate) fn len32(b: &[u8]) -> u32 {
    u32::try_from(b.len()).expect("a small field")
}

/// Bytes from spaced hex.
pub(crate) fn hex(s: &str) -> Vec<u8> {
    dplay_wire::hexdump::parse_hex(s).expect("hex")
}
