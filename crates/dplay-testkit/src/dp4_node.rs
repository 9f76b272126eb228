//! DirectPlay 4 on the simulated network (`dplay-sim` with its streams): [`Dp4Node`] drives a
//! [`Dp4Session`] as the runtime does, and [`WindowsPeer`] is a scripted peer that writes
//! every message itself, in the layouts of MC-DPL4CS 2.2 ([`windows`] builds them).
//!
//! A node's UDP game socket is its sim address; its TCP listener is added with
//! [`dplay_sim::Sim::listen`] ([`add_dp4`], [`add_windows`]). A `Via::Tcp` transmit goes on
//! the connection the node keeps to that listener, opened on first use (MC-DPL4CS 2.1); the
//! ends of connections reach the session as the runtime reports them (`dplay-runtime`
//! `stream_end`): a connection of ours that is refused, never answered or reset makes its
//! listener unreachable, and one the peer closed or reset is checked at once.

pub mod windows;

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, SocketAddr, SocketAddrV4};
use std::time::Instant;

use dplay_session::dp4::{Dp4Config, Dp4Event, Dp4Session, Dp4Transmit, StreamFramer, Via};
use dplay_sim::{Node, NodeId, Sim, StreamCommand, StreamEnd, StreamEvent, StreamId, Transmit};
use dplay_wire::dp4::header::MAX_MESSAGE_SIZE;

/// A node's TCP connections: ours by the listener they go to, and every one's remote end.
#[derive(Debug, Default)]
pub struct Conns {
    /// Our connections, by the listener they were opened to.
    ours: BTreeMap<SocketAddr, StreamId>,
    /// Every open connection's remote end (for ours, the listener).
    remote: BTreeMap<StreamId, SocketAddr>,
    next: StreamId,
    commands: VecDeque<StreamCommand>,
    datagrams: VecDeque<Transmit>,
}

impl Conns {
    /// Writes `bytes` on our connection to the listener `to`, opened first when there is none.
    pub fn write_to(&mut self, to: SocketAddr, bytes: Vec<u8>) {
        let conn = match self.ours.get(&to) {
            Some(c) => *c,
            None => {
                self.next += 1;
                let conn = self.next;
                self.ours.insert(to, conn);
                self.remote.insert(conn, to);
                self.commands.push_back(StreamCommand::Connect { conn, to });
                conn
            }
        };
        self.write_on(conn, bytes);
    }

    /// Writes `bytes` on connection `conn`.
    pub fn write_on(&mut self, conn: StreamId, data: Vec<u8>) {
        self.commands.push_back(StreamCommand::Write { conn, data });
    }

    /// Sends a datagram from the node's socket.
    pub fn send_datagram(&mut self, destination: SocketAddr, contents: Vec<u8>) {
        self.datagrams.push_back(Transmit { destination, contents });
    }

    /// Closes connection `conn` and forgets it.
    pub fn close(&mut self, conn: StreamId) {
        self.forget(conn);
        self.commands.push_back(StreamCommand::Close { conn });
    }

    /// Forgets connection `conn`; the listener it was opened to, when it was ours.
    pub fn forget(&mut self, conn: StreamId) -> Option<SocketAddr> {
        let remote = self.remote.remove(&conn);
        let ours = remote.filter(|to| self.ours.get(to) == Some(&conn));
        if let Some(to) = ours {
            self.ours.remove(&to);
        }
        ours
    }

    /// Notes an accepted connection.
    pub fn accepted(&mut self, conn: StreamId, peer: SocketAddr) {
        self.remote.insert(conn, peer);
    }

    /// The remote end of connection `conn`.
    pub fn remote(&self, conn: StreamId) -> Option<SocketAddr> {
        self.remote.get(&conn).copied()
    }

    /// Sends a session's transmit: UDP from the game socket, TCP on our connection to `to`.
    pub fn send(&mut self, t: Dp4Transmit) {
        match t.via {
            Via::Udp => self.send_datagram(t.to, t.bytes),
            Via::Tcp => self.write_to(t.to, t.bytes),
        }
    }

    /// The next datagram to send.
    pub fn poll_datagram(&mut self) -> Option<Transmit> {
        self.datagrams.pop_front()
    }

    /// The next stream command.
    pub fn poll_command(&mut self) -> Option<StreamCommand> {
        self.commands.pop_front()
    }
}

/// A [`Dp4Session`] on the sim; it keeps every event it reported.
#[derive(Debug)]
pub struct Dp4Node {
    /// The session.
    pub session: Dp4Session,
    /// Every event so far, in order.
    pub events: Vec<Dp4Event>,
    /// Its connections and what waits to be sent.
    pub conns: Conns,
}

impl Dp4Node {
    /// A node for `session`.
    pub fn new(session: Dp4Session) -> Self {
        Self { session, events: Vec::new(), conns: Conns::default() }
    }

    /// Moves the session's transmits to the sockets and its events to `events`.
    pub fn pump(&mut self) {
        while let Some(t) = self.session.poll_transmit() {
            self.conns.send(t);
        }
        self.pump_events();
    }

    /// Moves the session's events to `events`.
    pub fn pump_events(&mut self) {
        while let Some(e) = self.session.poll_event() {
            self.events.push(e);
        }
    }

    /// The session's part of a stream event (the runtime's `handle_stream*`).
    pub fn stream_event(&mut self, now: Instant, event: StreamEvent) {
        match event {
            StreamEvent::Accepted { conn, peer, .. } => self.conns.accepted(conn, peer),
            StreamEvent::Connected { .. } => {}
            StreamEvent::Data { conn, data } => {
                let Some(peer) = self.conns.remote(conn) else { return };
                if self.session.handle_tcp(now, conn, peer, &data).is_err() {
                    self.conns.close(conn);
                }
            }
            StreamEvent::Ended { conn, how } => {
                let opened_to = self.conns.forget(conn);
                match (opened_to, how) {
                    (Some(to), StreamEnd::Refused | StreamEnd::TimedOut | StreamEnd::Reset) => {
                        self.session.handle_tcp_closed(conn);
                        self.session.handle_unreachable(now, to);
                    }
                    _ => self.session.handle_tcp_lost(now, conn, opened_to),
                }
            }
        }
        self.pump_events();
    }
}

impl Node for Dp4Node {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.session.handle_udp(now, from, data);
        self.pump_events();
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
        self.pump_events();
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        self.pump();
        self.conns.poll_datagram()
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.session.poll_timeout()
    }

    fn handle_stream(&mut self, now: Instant, event: StreamEvent) {
        self.stream_event(now, event);
    }

    fn poll_stream(&mut self, _now: Instant) -> Option<StreamCommand> {
        self.pump();
        self.conns.poll_command()
    }
}

/// `config` at `ip`: its listener and game socket ports, its address 0 as Windows writes it.
pub fn config_at(mut config: Dp4Config, stream_port: u16, datagram_port: u16) -> Dp4Config {
    config.stream_addr = SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, stream_port);
    config.datagram_addr = SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, datagram_port);
    config
}

/// Adds a [`Dp4Node`] for `config` at `ip`: its game socket and its listener on the ports
/// the configuration names.
///
/// # Panics
///
/// If the configuration is refused or the addresses are taken.
#[track_caller]
pub fn add_dp4(sim: &mut Sim, ip: IpAddr, config: Dp4Config) -> NodeId {
    let (stream, datagram) = (config.stream_addr.port(), config.datagram_addr.port());
    let session = Dp4Session::new(config).unwrap_or_else(|e| panic!("node config: {e:?}"));
    let id = sim.add_node(SocketAddr::new(ip, datagram), Dp4Node::new(session));
    sim.listen(id, SocketAddr::new(ip, stream));
    id
}

/// One whole message a [`WindowsPeer`] received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// UDP or TCP.
    pub via: Via,
    /// Where it came from: the datagram's source, or the connection's remote end.
    pub from: SocketAddr,
    /// The message.
    pub bytes: Vec<u8>,
}

/// A scripted DirectPlay 4 peer: the test writes its messages
/// ([`WindowsPeer::send_tcp`], [`WindowsPeer::send_udp`]) and reads what it received, each
/// TCP stream cut into messages (MC-DPL4CS 2.2.6).
#[derive(Debug)]
pub struct WindowsPeer {
    /// Its connections and what waits to be sent.
    pub conns: Conns,
    /// Every message received, in order.
    pub received: Vec<Received>,
    framers: BTreeMap<StreamId, StreamFramer>,
}

impl WindowsPeer {
    /// Writes `bytes` to the listener `to`, on the connection it keeps there.
    pub fn send_tcp(&mut self, to: SocketAddr, bytes: Vec<u8>) {
        self.conns.write_to(to, bytes);
    }

    /// Sends the datagram `bytes` to `to`.
    pub fn send_udp(&mut self, to: SocketAddr, bytes: Vec<u8>) {
        self.conns.send_datagram(to, bytes);
    }

    /// Takes the messages received so far.
    pub fn take(&mut self) -> Vec<Received> {
        std::mem::take(&mut self.received)
    }
}

impl Node for WindowsPeer {
    fn handle_datagram(&mut self, _now: Instant, from: SocketAddr, data: &[u8]) {
        self.received.push(Received { via: Via::Udp, from, bytes: data.to_vec() });
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        self.conns.poll_datagram()
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        None
    }

    fn handle_stream(&mut self, _now: Instant, event: StreamEvent) {
        match event {
            StreamEvent::Accepted { conn, peer, .. } => self.conns.accepted(conn, peer),
            StreamEvent::Data { conn, data } => {
                let from = self.conns.remote(conn).unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
                let framer = self.framers.entry(conn).or_insert_with(|| StreamFramer::new(MAX_MESSAGE_SIZE));
                match framer.push(&data) {
                    Ok(messages) => {
                        let received =
                            messages.into_iter().map(|bytes| Received { via: Via::Tcp, from, bytes });
                        self.received.extend(received);
                    }
                    Err(e) => panic!("the stream from {from} is not DirectPlay 4 messages: {e}"),
                }
            }
            StreamEvent::Ended { conn, .. } => {
                self.conns.forget(conn);
                self.framers.remove(&conn);
            }
            StreamEvent::Connected { .. } => {}
        }
    }

    fn poll_stream(&mut self, _now: Instant) -> Option<StreamCommand> {
        self.conns.poll_command()
    }
}

/// Adds a [`WindowsPeer`] at `ip` with its listener and game socket on `stream_port` and
/// `datagram_port` (Windows picks them in 2300-2349 and 2350-2399).
pub fn add_windows(sim: &mut Sim, ip: IpAddr, stream_port: u16, datagram_port: u16) -> NodeId {
    let peer = WindowsPeer { conns: Conns::default(), received: Vec::new(), framers: BTreeMap::new() };
    let id = sim.add_node(SocketAddr::new(ip, datagram_port), peer);
    sim.listen(id, SocketAddr::new(ip, stream_port));
    id
}
