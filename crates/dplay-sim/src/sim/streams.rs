//! The stream model's half of the [`Sim`]: listeners, connects through the NATs, segments,
//! retransmission delay, stalls and resets (see [`crate::stream`]).

use std::net::SocketAddr;
use std::time::Duration;

use rand::Rng;

use super::{Event, NodeId, Sim, chance, uniform};
use crate::stream::{
    ACCEPTED_BASE, Conn, Ends, Segment, StreamCommand, StreamConfig, StreamEnd, StreamEvent, StreamId,
    StreamStats,
};

/// First local port of the connections nodes open, per IP.
const EPHEMERAL_FIRST: u16 = 49152;

/// At most this many retransmissions of one segment are drawn (its delay is then already
/// far past any stall bound).
const MAX_RETRANSMITS: u32 = 16;

/// One step of a connection, queued like a datagram.
pub(super) enum StreamStep {
    /// The SYN reaches the listener.
    Syn,
    /// The SYN-ACK reaches the connector.
    SynAck,
    /// An RST answered the SYN.
    Refuse,
    /// Nobody answered.
    ConnectTimeout,
    /// A segment of direction `dir` arrives.
    Segment { dir: usize, seg: Segment },
    /// Direction `dir`, stalled, tries again.
    Retry { dir: usize },
    /// Keepalive looks whether the connection is still cut ([`StreamConfig::keepalive`]).
    Keepalive,
}

/// How a connect ends up, decided when it is made.
enum Answer {
    Listener(NodeId),
    Refused(NodeId),
    Nobody,
}

impl Sim {
    /// Node `node` listens for streams at `addr` (any address: its own IP or another it
    /// answers for, such as a relay endpoint's). Behind a NAT, only nodes behind the same NAT
    /// reach it.
    ///
    /// # Panics
    ///
    /// If another listener already has `addr`.
    #[track_caller]
    pub fn listen(&mut self, node: NodeId, addr: SocketAddr) {
        assert!(self.listeners.insert(addr, node).is_none(), "two listeners at {addr}");
    }

    /// Sets how streams behave from now on.
    pub fn set_stream_config(&mut self, config: StreamConfig) {
        self.stream_config = config;
    }

    /// What the streams did so far.
    pub fn stream_stats(&self) -> StreamStats {
        self.stream_stats
    }

    /// Node `node`'s process died: its listeners are gone (connects there are refused) and
    /// each of its open connections is reset (the peer hears [`StreamEnd::Reset`] one
    /// latency later, unless a partition holds it).
    pub fn kill_streams(&mut self, node: NodeId) {
        self.listeners.retain(|_, n| *n != node);
        for c in 0..self.conns.len() {
            for end in 0..2 {
                let Some(conn) = self.conns.get_mut(c) else { continue };
                if conn.nodes.at(end) == node && conn.open.at(end) {
                    *conn.open.at_mut(end) = false;
                    conn.early.clear();
                    if conn.established && conn.open.at(1 - end) {
                        self.send_segment(c, end, Segment::Rst);
                    }
                }
            }
        }
    }

    #[track_caller]
    fn conn(&self, c: usize) -> &Conn {
        self.conns.get(c).unwrap_or_else(|| panic!("no stream {c} in this sim"))
    }

    #[track_caller]
    fn conn_mut(&mut self, c: usize) -> &mut Conn {
        self.conns.get_mut(c).unwrap_or_else(|| panic!("no stream {c} in this sim"))
    }

    /// A node's stream command.
    pub(super) fn stream_command(&mut self, from: NodeId, command: StreamCommand) {
        match command {
            StreamCommand::Connect { conn, to } => self.connect(from, conn, to),
            StreamCommand::Write { conn, data } => {
                let Some((c, end)) = self.end_of(from, conn) else { return };
                if end == 0 && !self.conn(c).established {
                    self.conn_mut(c).early.push(Segment::Data(data));
                    return;
                }
                self.write(c, end, &data);
            }
            StreamCommand::Close { conn } => {
                let Some((c, end)) = self.end_of(from, conn) else { return };
                *self.conn_mut(c).open.at_mut(end) = false;
                if end == 0 && !self.conn(c).established {
                    self.conn_mut(c).early.push(Segment::Fin);
                } else {
                    self.send_segment(c, end, Segment::Fin);
                }
            }
        }
    }

    /// Sends `data` from end `end` of `c`, cut into segments of sizes the seed draws.
    fn write(&mut self, c: usize, end: usize, data: &[u8]) {
        let mss = self.stream_config.mss.max(1);
        let mut rest = data;
        while !rest.is_empty() {
            let size = self.rng.gen_range(1..=rest.len().min(mss));
            let (seg, tail) = rest.split_at(size);
            self.send_segment(c, end, Segment::Data(seg.to_vec()));
            rest = tail;
        }
    }

    /// The open connection `id` of `node`, and which end it is.
    fn end_of(&self, node: NodeId, id: StreamId) -> Option<(usize, usize)> {
        let c = *self.stream_ends.get(&(node, id))?;
        let conn = self.conns.get(c)?;
        let end = usize::from(id >= ACCEPTED_BASE);
        conn.open.at(end).then_some((c, end))
    }

    fn connect(&mut self, from: NodeId, id: StreamId, to: SocketAddr) {
        assert!(id < ACCEPTED_BASE, "stream ids from {ACCEPTED_BASE} are the sim's");
        assert!(self.end_of(from, id).is_none(), "node {} reused open stream id {id}", from.0);
        self.stream_stats.connects += 1;
        let ip = self.addr(from).ip();
        let port = self.ephemeral.entry(ip).or_insert(EPHEMERAL_FIRST);
        let inside = SocketAddr::new(ip, *port);
        *port = port.checked_add(1).unwrap_or(EPHEMERAL_FIRST);
        let src = match self.behind.get(&from).map(|n| n.0) {
            Some(n) => self.tcp_nats.get_mut(n).map_or(inside, |nat| nat.outbound(inside, to)),
            None => inside,
        };
        let answer = self.answer(from, to);
        let c = self.conns.len();
        let acceptor = match answer {
            Answer::Listener(n) | Answer::Refused(n) => n,
            Answer::Nobody => from,
        };
        self.conns.push(Conn {
            nodes: Ends(from, acceptor),
            ids: Ends(id, ACCEPTED_BASE + c as u64),
            addrs: Ends(src, to),
            established: false,
            open: Ends(true, false),
            early: Vec::new(),
            dirs: Ends::default(),
        });
        self.stream_ends.insert((from, id), c);
        let timeout = self.now + self.stream_config.connect_timeout;
        // Each lost SYN is sent again after a timeout that doubles.
        let mut at = self.now;
        if !matches!(answer, Answer::Nobody) {
            let loss = self.link(from, acceptor).loss;
            let mut rto = self.stream_config.syn_rto;
            while chance(&mut self.rng, loss) && at < timeout {
                self.stream_stats.retransmits += 1;
                at += rto;
                rto = rto.saturating_mul(2);
            }
        }
        self.trace_stream(c, 0, "syn");
        match answer {
            _ if at >= timeout || self.is_partitioned(from, acceptor) => {
                self.enqueue_step(timeout, c, StreamStep::ConnectTimeout);
            }
            Answer::Listener(n) => {
                let arrival = at + self.delay(from, n);
                self.enqueue_step(arrival, c, StreamStep::Syn);
            }
            Answer::Refused(n) => {
                let back = at + self.delay(from, n) + self.delay(n, from);
                self.enqueue_step(back, c, StreamStep::Refuse);
            }
            Answer::Nobody => self.enqueue_step(timeout, c, StreamStep::ConnectTimeout),
        }
    }

    /// Who answers a connect from `from` to `to`: a listener there that `from` can reach, else
    /// a reachable node at that IP (which refuses), else nobody.
    fn answer(&mut self, from: NodeId, to: SocketAddr) -> Answer {
        if let Some(n) = self.tcp_nats.iter().position(|n| n.config.public_ip == to.ip()) {
            // A NAT forwards no inbound connect (its mappings are for the flows it saw).
            if let Some(nat) = self.tcp_nats.get_mut(n) {
                nat.filtered += 1;
            }
            self.stream_stats.nat_dropped += 1;
            return Answer::Nobody;
        }
        let reachable = |sim: &Self, n: NodeId| {
            let inside = sim.behind.get(&n);
            inside.is_none() || inside == sim.behind.get(&from)
        };
        if let Some(&n) = self.listeners.get(&to) {
            return if reachable(self, n) { Answer::Listener(n) } else { Answer::Nobody };
        }
        let at_ip = |a: &SocketAddr| a.ip() == to.ip();
        let host = self
            .slots
            .iter()
            .position(|s| at_ip(&s.addr))
            .map(NodeId)
            .or_else(|| self.listeners.iter().find(|(a, _)| at_ip(a)).map(|(_, n)| *n));
        match host {
            Some(n) if reachable(self, n) => Answer::Refused(n),
            _ => Answer::Nobody,
        }
    }

    /// The one-way delay of `from` -> `to` now: latency plus jitter.
    fn delay(&mut self, from: NodeId, to: NodeId) -> Duration {
        let config = self.link(from, to);
        let (latency, jitter) = (config.latency, config.jitter);
        latency + uniform(&mut self.rng, jitter)
    }

    fn enqueue_step(&mut self, at: std::time::Instant, conn: usize, step: StreamStep) {
        self.enqueue(at, Event::Stream { conn, step });
    }

    /// Sends `seg` on direction `dir` of connection `c`: after what is held, or held itself
    /// while the two are partitioned; each loss on the link adds a retransmission timeout.
    fn send_segment(&mut self, c: usize, dir: usize, seg: Segment) {
        let conn = self.conn(c);
        let (from, to) = (conn.nodes.at(dir), conn.nodes.at(1 - dir));
        if !conn.dirs.at_ref(dir).held.is_empty() || self.is_partitioned(from, to) {
            self.hold(c, dir, seg, false);
            return;
        }
        let loss = self.link(from, to).loss;
        let mut extra = Duration::ZERO;
        let mut rto = self.stream_config.rto;
        for _ in 0..MAX_RETRANSMITS {
            if !chance(&mut self.rng, loss) {
                break;
            }
            self.stream_stats.retransmits += 1;
            extra += rto;
            rto = rto.saturating_mul(2);
        }
        let arrival = self.now + self.delay(from, to) + extra;
        let d = self.conn_mut(c).dirs.at_mut(dir);
        let arrival = d.last_arrival.map_or(arrival, |last| arrival.max(last));
        d.last_arrival = Some(arrival);
        self.enqueue_step(arrival, c, StreamStep::Segment { dir, seg });
    }

    /// Holds `seg` until the partition heals: in order, a segment that was already in flight
    /// (`returned`) before those sent after it.
    fn hold(&mut self, c: usize, dir: usize, seg: Segment, returned: bool) {
        let now = self.now;
        let rto = self.stream_config.rto;
        let d = self.conn_mut(c).dirs.at_mut(dir);
        if returned {
            let at = d.returned.min(d.held.len());
            d.held.insert(at, seg);
            d.returned += 1;
        } else {
            d.held.push_back(seg);
        }
        if d.stalled_since.is_none() {
            d.stalled_since = Some(now);
            d.backoff = rto;
            self.trace_stream(c, dir, "stalled");
            self.enqueue_step(now + rto, c, StreamStep::Retry { dir });
        }
    }

    /// Tells the node at end `end` of `c` about `event`.
    fn tell(&mut self, c: usize, end: usize, event: StreamEvent) {
        let node = self.conn(c).nodes.at(end);
        let now = self.now;
        self.slot_mut(node).node.handle_stream(now, event);
    }

    /// Ends `c` for end `end` with `how`, if it is open there.
    fn end_stream(&mut self, c: usize, end: usize, how: StreamEnd) {
        if !std::mem::replace(self.conn_mut(c).open.at_mut(end), false) {
            return;
        }
        let conn = self.conn(c).ids.at(end);
        self.tell(c, end, StreamEvent::Ended { conn, how });
    }

    pub(super) fn handle_stream_step(&mut self, c: usize, step: StreamStep) {
        match step {
            StreamStep::Syn => {
                let Ends(a, b) = self.conn(c).nodes;
                if self.is_partitioned(a, b) {
                    let timeout = self.now + self.stream_config.connect_timeout;
                    return self.enqueue_step(timeout, c, StreamStep::ConnectTimeout);
                }
                self.stream_stats.accepted += 1;
                self.conn_mut(c).open.1 = true;
                let accepted = self.conn(c).ids.1;
                self.stream_ends.insert((b, accepted), c);
                self.trace_stream(c, 0, "accepted");
                let Conn { ids, addrs, .. } = self.conn(c);
                let event = StreamEvent::Accepted { conn: ids.1, listener: addrs.1, peer: addrs.0 };
                self.tell(c, 1, event);
                let back = self.now + self.delay(b, a);
                self.enqueue_step(back, c, StreamStep::SynAck);
            }
            StreamStep::SynAck => {
                self.conn_mut(c).established = true;
                if self.conn(c).open.0 {
                    let conn = self.conn(c).ids.0;
                    self.tell(c, 0, StreamEvent::Connected { conn });
                }
                for seg in std::mem::take(&mut self.conn_mut(c).early) {
                    match seg {
                        Segment::Data(data) => self.write(c, 0, &data),
                        seg => self.send_segment(c, 0, seg),
                    }
                }
            }
            StreamStep::Refuse => {
                self.stream_stats.refused += 1;
                self.trace_stream(c, 0, "refused");
                self.end_stream(c, 0, StreamEnd::Refused);
            }
            StreamStep::ConnectTimeout => {
                if !self.conn(c).established {
                    self.stream_stats.timed_out += 1;
                    self.trace_stream(c, 0, "timed-out");
                    self.end_stream(c, 0, StreamEnd::TimedOut);
                }
            }
            StreamStep::Segment { dir, seg } => self.arrive(c, dir, seg),
            StreamStep::Retry { dir } => self.retry(c, dir),
            StreamStep::Keepalive => {
                let Ends(a, b) = self.conn(c).nodes;
                if self.is_partitioned(a, b) && (self.conn(c).open.0 || self.conn(c).open.1) {
                    self.stream_stats.resets += 1;
                    self.trace_stream(c, 0, "reset(keepalive)");
                    self.end_stream(c, 0, StreamEnd::Reset);
                    self.end_stream(c, 1, StreamEnd::Reset);
                }
            }
        }
    }

    /// `a` and `b` were cut apart: with keepalive, each established connection between them is
    /// checked [`StreamConfig::keepalive`] later.
    pub(super) fn streams_cut(&mut self, a: NodeId, b: NodeId) {
        let Some(after) = self.stream_config.keepalive else { return };
        let at = self.now + after;
        for c in 0..self.conns.len() {
            let Conn { nodes: Ends(x, y), established, .. } = *self.conn(c);
            if established && ((x, y) == (a, b) || (x, y) == (b, a)) {
                self.enqueue_step(at, c, StreamStep::Keepalive);
            }
        }
    }

    fn arrive(&mut self, c: usize, dir: usize, seg: Segment) {
        let conn = self.conn(c);
        let (from, to) = (conn.nodes.at(dir), conn.nodes.at(1 - dir));
        if !conn.dirs.at_ref(dir).held.is_empty() || self.is_partitioned(from, to) {
            return self.hold(c, dir, seg, true);
        }
        let end = 1 - dir;
        if !self.conn(c).open.at(end) {
            // Bytes for an end that is gone are answered with an RST.
            if matches!(seg, Segment::Data(_)) && self.conn(c).open.at(dir) {
                self.trace_stream(c, dir, "rst");
                self.send_segment(c, end, Segment::Rst);
            }
            return;
        }
        let conn = self.conn(c).ids.at(end);
        match seg {
            Segment::Data(data) => {
                self.stream_stats.segments += 1;
                self.stream_stats.bytes += data.len() as u64;
                self.trace_stream(c, dir, &format!("len={}", data.len()));
                self.tell(c, end, StreamEvent::Data { conn, data });
            }
            Segment::Fin => {
                self.trace_stream(c, dir, "fin");
                self.end_stream(c, end, StreamEnd::Closed);
            }
            Segment::Rst => {
                self.stream_stats.resets += 1;
                self.trace_stream(c, dir, "rst");
                self.end_stream(c, end, StreamEnd::Reset);
            }
        }
    }

    fn retry(&mut self, c: usize, dir: usize) {
        let conn = self.conn(c);
        let (from, to) = (conn.nodes.at(dir), conn.nodes.at(1 - dir));
        let Some(since) = conn.dirs.at_ref(dir).stalled_since else { return };
        if !self.is_partitioned(from, to) {
            let d = self.conn_mut(c).dirs.at_mut(dir);
            let held = std::mem::take(&mut d.held);
            (d.stalled_since, d.returned) = (None, 0);
            self.trace_stream(c, dir, "resumed");
            for seg in held {
                self.send_segment(c, dir, seg);
            }
        } else if self.now - since >= self.stream_config.stall_reset {
            let d = self.conn_mut(c).dirs.at_mut(dir);
            (d.held, d.stalled_since, d.returned) = (Default::default(), None, 0);
            self.stream_stats.resets += 1;
            self.trace_stream(c, dir, "reset(stalled)");
            self.end_stream(c, dir, StreamEnd::Reset);
        } else {
            let now = self.now;
            let d = self.conn_mut(c).dirs.at_mut(dir);
            d.backoff = d.backoff.saturating_mul(2);
            let at = now + d.backoff;
            self.enqueue_step(at, c, StreamStep::Retry { dir });
        }
    }

    /// `t=... tcp SRC -> DST what` for direction `dir` of `c`.
    fn trace_stream(&mut self, c: usize, dir: usize, what: &str) {
        if self.trace.is_none() {
            return;
        }
        let Ends(a, b) = self.conn(c).addrs;
        let (src, dst) = if dir == 0 { (a, b) } else { (b, a) };
        let t = self.elapsed();
        if let Some(trace) = &mut self.trace {
            trace.event(t, &format!("tcp {src} -> {dst} {what}"));
        }
    }

    /// Datagrams NAT `nat`'s TCP table refused from outside (inbound connects).
    pub fn nat_refused_connects(&self, nat: crate::NatId) -> u64 {
        self.tcp_nats.get(nat.0).map_or(0, |n| n.filtered)
    }
}
