//! The connections the host session's listener accepts: who opened each (a joiner or a
//! member), and, for a member the session knows at another port than its header names, that
//! port in every message the session reads from it (docs/relay.md, "Members behind one NAT on
//! one port"; MC-DPL4CS 2.2.6, 3.1.4.2).

use std::net::{IpAddr, SocketAddr};

use super::sender::{self, HINT_LEN};
use super::{ConnId, Dp4Relay, Dp4StreamError, Dp4StreamRead, Mode};

impl Dp4Relay {
    /// A read on a connection the session's listener accepted ([`Self::handle_stream`]).
    pub(super) fn session_read(
        &mut self,
        conn: ConnId,
        peer: SocketAddr,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Dp4StreamRead, Dp4StreamError> {
        out.clear();
        let Some(c) = self.conns.get_mut(&conn) else { return Ok(Dp4StreamRead::Session) };
        let head = match &mut c.mode {
            Mode::AsRead => return Ok(Dp4StreamRead::Session),
            Mode::Ports(port) => {
                let port = *port;
                return self.set_session_ports(conn, port, data, out);
            }
            Mode::Undecided(head) => head,
        };
        // The first message's start: its size, header, and the IDs that say who sent it.
        let mut rest = data;
        loop {
            let need = match sender::stream_size(head) {
                Some(size) => size.min(HINT_LEN),
                None => 4,
            };
            if head.len() >= need {
                break;
            }
            let Some((take, more)) = rest.split_at_checked((need - head.len()).min(rest.len())) else {
                break;
            };
            if take.is_empty() {
                return Ok(Dp4StreamRead::SessionRewritten { held: true });
            }
            head.extend_from_slice(take);
            rest = more;
        }
        let mut bytes = std::mem::take(head);
        bytes.extend_from_slice(rest);
        let mode = self.decide(conn, peer, &bytes);
        let port = match mode {
            Mode::Ports(port) => Some(port),
            _ => None,
        };
        if let Some(c) = self.conns.get_mut(&conn) {
            c.mode = mode;
        }
        match port {
            Some(port) => self.set_session_ports(conn, port, &bytes, out),
            None => {
                *out = bytes;
                Ok(Dp4StreamRead::SessionRewritten { held: false })
            }
        }
    }

    /// Who opened session connection `conn` from `peer`, by its first message's start `m`:
    /// a joiner (REQUESTPLAYERID for a system player, MC-DPL4CS 3.1.4.2) is known at its IP
    /// and header port, or, while an open connection of another instance holds that, at
    /// another port; a member, as the session knows it. An ambiguous one is left as read.
    pub(super) fn decide(&mut self, conn: ConnId, peer: SocketAddr, m: &[u8]) -> Mode {
        let Some(header_port) = sender::header_port(m) else { return Mode::AsRead };
        let ip = peer.ip();
        let seen = SocketAddr::new(ip, header_port);
        let listener = if sender::is_join(m) {
            let held = self.back.get(&seen).is_some_and(|(c, _)| *c != conn);
            if held { SocketAddr::new(ip, self.free_port(ip, peer.port())) } else { seen }
        } else {
            match self.identify_stream(ip, header_port, None, m) {
                Some(id) => self.members.get(&id).map_or(seen, |x| x.stream),
                None if self.at(ip, header_port, None).nth(1).is_some() => return Mode::AsRead,
                None => seen,
            }
        };
        self.claim(conn, peer, listener, header_port);
        if listener.port() == header_port { Mode::AsRead } else { Mode::Ports(listener.port()) }
    }

    /// A port at `ip` no member or open connection is known at, from `start` on (the
    /// public port of the joiner's connection: free at its NAT while that is open).
    pub(super) fn free_port(&self, ip: IpAddr, start: u16) -> u16 {
        let taken = |p: u16| {
            p == 0
                || self.back.contains_key(&SocketAddr::new(ip, p))
                || self
                    .members
                    .values()
                    .any(|m| m.stream.ip() == ip && (m.stream.port() == p || m.header_port == p))
        };
        let mut p = start;
        while taken(p) {
            p = p.wrapping_add(1);
        }
        p
    }

    /// Connection `conn` from `peer` belongs to the instance the session knows at `listener`,
    /// whose headers name `header_port`. A connection to the session's listener is a new
    /// instance there (a join, a rejoin): the host answers it on that one. One to an endpoint
    /// is answered on only once the one in use closes: moving to a newer one would let
    /// messages overtake those still queued on the older (docs/decisions.md, "DP4 relay: one
    /// return connection per member").
    pub(super) fn claim(&mut self, conn: ConnId, peer: SocketAddr, listener: SocketAddr, header_port: u16) {
        if let Some(c) = self.conns.get_mut(&conn) {
            (c.sender, c.peer, c.header_port) = (Some(listener), Some(peer), header_port);
            if c.endpoint.is_none() {
                self.back.insert(listener, (conn, peer));
            } else {
                self.back.entry(listener).or_insert((conn, peer));
            }
        }
    }

    /// Frames `data` of session connection `conn` into `out`, each message with `port` as
    /// its sender's ([`sender::set_ports`]).
    pub(super) fn set_session_ports(
        &mut self,
        conn: ConnId,
        port: u16,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Dp4StreamRead, Dp4StreamError> {
        let Some(c) = self.conns.get_mut(&conn) else { return Ok(Dp4StreamRead::Session) };
        let messages = c.framer.push(data).map_err(|_| Dp4StreamError::Framing)?;
        if !c.charge.set(c.framer.buffered()) {
            self.stats.over_budget += 1;
            return Err(Dp4StreamError::OverBudget);
        }
        let held = c.framer.buffered() > 0;
        let sender = c.sender.and_then(|l| self.member_at(l));
        for mut m in messages {
            sender::set_ports(&mut m, port);
            self.learn(sender, &m);
            out.extend_from_slice(&m);
        }
        Ok(Dp4StreamRead::SessionRewritten { held })
    }
}
