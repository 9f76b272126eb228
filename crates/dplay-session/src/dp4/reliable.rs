//! Sessions with DPSESSION_DIRECTPLAYPROTOCOL: player traffic between joined instances goes
//! through the DirectPlay 4 reliable protocol, MC-DPL4R, over the UDP game sockets
//! (MC-DPL4CS 3.1.4.16; MC-DPL4R 1.3; docs/decisions.md).
//!
//! One MC-DPL4R link per other instance, between the two system players' indexes, opened once
//! the instance is in our Player List (the join itself keeps to MC-DPL4CS: "All messages sent
//! to the host during the connection process do not use the reliable transport", MC-DPL4R
//! 1.3) and closed when it leaves. A data frame carries either a short-form system message
//! ('play' first: PING, PINGREPLY, PLAYERWRAPPER; INDEX D.15) or a datagram-form player
//! message.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_dpsp::reliable::{Event as ReliableEvent, player_index};
use dplay_wire::Wire;
use dplay_wire::dp4::header::{Header, SIGNATURE, SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message, ShortMessage};
use dplay_wire::dp4::player_message::{DatagramPlayerMessage, has_signature};
use dplay_wire::dp4::routing::PlayerWrapper;
use dplay_wire::dp4::session::SessionFlags;

use crate::dp4::event::{CommandError, Dp4Transmit, DropReason, Via};
use crate::dp4::session::{Dp4Session, Role};

impl Dp4Session {
    /// Whether the session runs MC-DPL4R (the RP flag, DPSESSION_DIRECTPLAYPROTOCOL).
    pub(crate) fn uses_reliable_protocol(&self) -> bool {
        matches!(self.role, Role::Member | Role::Host)
            && self.desc.is_some_and(|d| d.flags.contains(SessionFlags::DIRECTPLAY_PROTOCOL))
    }

    /// Opens a link to every other instance's game socket and closes the others' (called
    /// after every input and command: the Player List may have changed).
    pub(crate) fn sync_links(&mut self) {
        self.sync_memory();
        let mut want = BTreeMap::new();
        if let (true, Some(me), Some(desc)) = (self.uses_reliable_protocol(), self.me, self.desc) {
            self.reliable.set_ordered(!desc.flags.contains(SessionFlags::NO_PRESERVE_ORDER));
            let local = player_index(me, desc.reserved1);
            for p in self.players.values().filter(|p| p.is_system() && !p.local) {
                if let Some((_, datagram)) = p.addrs {
                    want.insert(datagram, (local, player_index(p.id, desc.reserved1)));
                }
            }
        }
        let stale: Vec<SocketAddr> = self.reliable.peers().filter(|p| !want.contains_key(p)).collect();
        for peer in stale {
            self.reliable.close_link(peer);
        }
        for (peer, (local, remote)) in want {
            if self.reliable.open_link(peer, local, remote).is_err() {
                tracing::warn!(%peer, "MC-DPL4R link limit reached");
            }
        }
        self.sync_link_players();
    }

    /// MC-DPL4R 3.1.5.1: a frame may come from any player of the link's instance and go to
    /// any of ours, not only between the two system players (a Windows peer addresses frames
    /// between application players).
    fn sync_link_players(&mut self) {
        let Some(desc) = self.desc.filter(|_| self.uses_reliable_protocol()) else { return };
        let index = |id: u32| player_index(id, desc.reserved1);
        let ours: Vec<u16> = self.players.values().filter(|p| p.local).map(|p| index(p.id)).collect();
        self.reliable.set_local_players(ours);
        let peers: Vec<SocketAddr> = self.reliable.peers().collect();
        for peer in peers {
            let Some((system, _)) = self.instance_by_datagram(peer) else { continue };
            let theirs: Vec<u16> =
                self.players.values().filter(|p| p.system_player_id == system).map(|p| index(p.id)).collect();
            self.reliable.set_link_players(peer, theirs);
        }
    }

    /// A datagram on the game socket from an instance we have a link to: a system message
    /// if it parses as one with 'play' at offset 20, else an MC-DPL4R frame (decisions).
    /// Returns false when it is for the ordinary path.
    pub(crate) fn handle_reliable_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) -> bool {
        if !self.uses_reliable_protocol() || !self.reliable.has_link(from) {
            return false;
        }
        if has_signature(bytes) && Dp4Message::parse(bytes).is_ok() {
            return false;
        }
        self.reliable.handle_datagram(now, from, bytes);
        self.pump_reliable(now);
        true
    }

    /// Sends what MC-DPL4R queued and handles what it delivered or gave up on.
    pub(crate) fn pump_reliable(&mut self, now: Instant) {
        while let Some(t) = self.reliable.poll_transmit() {
            match t.to_vec() {
                Ok(bytes) => self.transmits.push_back(Dp4Transmit { via: Via::Udp, to: t.to, bytes }),
                Err(e) => tracing::warn!(error = %e, "MC-DPL4R frame not encodable"),
            }
        }
        while let Some(ev) = self.reliable.poll_event() {
            match ev {
                ReliableEvent::Delivered { from, data, reliable, .. } => {
                    self.on_reliable_message(now, from, reliable, &data)
                }
                ReliableEvent::LinkFailed { peer, .. } => {
                    let stream = self.instance_by_datagram(peer).and_then(|(_, s)| s);
                    tracing::info!(%peer, "MC-DPL4R link gave up");
                    if let Some(stream) = stream {
                        self.handle_unreachable(now, stream);
                    }
                }
            }
        }
    }

    /// The system player whose game socket is `datagram`, and its TCP listener.
    fn instance_by_datagram(&self, datagram: SocketAddr) -> Option<(u32, Option<SocketAddr>)> {
        self.players
            .values()
            .find(|p| p.is_system() && p.addrs.is_some_and(|(_, d)| d == datagram))
            .map(|p| (p.id, p.addrs.map(|(s, _)| s)))
    }

    /// One message out of MC-DPL4R: a short-form system message ('play' first), a system
    /// message with its full header ('play' at offset 20: MC-DPL4R 1.3, the protocol "wraps
    /// both operating system messages and user messages", and a Windows peer sends CREATEPLAYER,
    /// DELETEPLAYER, SESSIONDESCCHANGED and the group messages so), or a player message in the
    /// datagram form (also what has 'play' at offset 20 but does not parse as a system
    /// message: an older sender's unwrapped player message).
    fn on_reliable_message(&mut self, now: Instant, from: SocketAddr, reliable: bool, data: &[u8]) {
        self.stats.received += 1;
        if self.take_voice(data) {
            return;
        }
        if has_signature(data)
            && let Ok(msg) = Dp4Message::parse(data)
        {
            return self.dispatch(now, from, msg, Via::Udp);
        }
        if data.get(..4) == Some(&SIGNATURE[..]) {
            let short = match ShortMessage::parse(data) {
                Ok(m) => m,
                Err(e) => return self.drop_msg(DropReason::Malformed, &e.to_string()),
            };
            let stream = self.instance_by_datagram(from).and_then(|(_, s)| s);
            let sock_addr = match stream {
                Some(SocketAddr::V4(v4)) => SockAddrIn::new(v4),
                _ => SockAddrIn::unspecified(),
            };
            let header = Header {
                token: Token::FROM_REMOTE,
                sock_addr,
                command: short.header.command,
                version: short.header.version,
            };
            return match short.body {
                Dp4Body::PlayerWrapper(w) => match w.inner_datagram(self.ids_present()) {
                    Ok(pm) => self.on_routed_player_message(now, from, reliable, pm),
                    Err(e) => self.drop_msg(DropReason::Malformed, &e.to_string()),
                },
                body => self.dispatch(now, from, Dp4Message { header, body }, Via::Udp),
            };
        }
        match DatagramPlayerMessage::parse_wrapped(data, self.ids_present()) {
            Ok(pm) => self.on_routed_player_message(now, from, reliable, pm),
            Err(e) => self.drop_msg(DropReason::Malformed, &e.to_string()),
        }
    }

    /// A player message to the instance at `datagram` over MC-DPL4R, with RLY when
    /// `guaranteed`; in a short-form PLAYERWRAPPER when it would start with 'play' or have it
    /// at offset 20 (either would read as a system message).
    pub(crate) fn send_reliable_player(
        &mut self,
        now: Instant,
        datagram: SocketAddr,
        pm: &DatagramPlayerMessage,
        guaranteed: bool,
    ) -> Result<(), CommandError> {
        let mut bytes = pm.to_wrapped_vec().map_err(|_| CommandError::Unencodable)?;
        if bytes.get(..4) == Some(&SIGNATURE[..]) || has_signature(&bytes) {
            let w = PlayerWrapper::wrap_datagram(pm).map_err(|_| CommandError::Unencodable)?;
            let short = ShortMessage::new(self.config.version, Dp4Body::PlayerWrapper(w));
            bytes = short.to_vec().map_err(|_| CommandError::Unencodable)?;
        }
        self.reliable.send(now, datagram, &bytes, guaranteed).map_err(|_| CommandError::Unencodable)?;
        self.pump_reliable(now);
        Ok(())
    }

    /// A system message for an instance's game socket: short-form over MC-DPL4R when a link
    /// is open (INDEX D.15: PING and PINGREPLY), else a UDP datagram with the full header.
    pub(crate) fn send_datagram_body(&mut self, now: Instant, to: SocketAddr, body: Dp4Body) {
        if !(self.uses_reliable_protocol() && self.reliable.has_link(to)) {
            return self.send_body(Via::Udp, to, body);
        }
        let sent = ShortMessage::new(self.config.version, body)
            .to_vec()
            .ok()
            .is_some_and(|bytes| self.reliable.send(now, to, &bytes, false).is_ok());
        if !sent {
            tracing::warn!(%to, "short-form message not sent over MC-DPL4R");
        }
        self.pump_reliable(now);
    }
}
