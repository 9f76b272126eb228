//! [`NatResolverProtocol`]: a NAT resolver server (MC-DPLNAT 3.2) on one UDP socket, for
//! `dplay nat-resolver`.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_session::nat_resolver::{ResolverLimits, ResolverServer, ResolverStats, UserString};

use crate::protocol::Protocol;

/// What the application asks of a resolver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NatResolverCommand {
    /// Report what it did so far ([`NatResolverEvent::Stats`]).
    Stats,
}

/// What a resolver reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NatResolverEvent {
    /// Its counts, asked by [`NatResolverCommand::Stats`].
    Stats(ResolverStats),
}

/// A [`ResolverServer`] driven by the runtime.
#[derive(Debug)]
pub struct NatResolverProtocol {
    server: ResolverServer,
    stats_asked: bool,
}

impl NatResolverProtocol {
    /// A resolver answering queries that carry `user_string` (any when `None`), within `limits`.
    pub fn new(user_string: Option<UserString>, limits: ResolverLimits, now: Instant) -> Self {
        Self { server: ResolverServer::new(user_string, limits, now), stats_asked: false }
    }
}

impl Protocol for NatResolverProtocol {
    type Command = NatResolverCommand;
    type Event = NatResolverEvent;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.server.handle_datagram(now, from, data);
    }

    fn handle_command(&mut self, _now: Instant, command: NatResolverCommand) {
        match command {
            NatResolverCommand::Stats => self.stats_asked = true,
        }
    }

    /// MC-DPLNAT 3.2.2: the server has no timers.
    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        self.server.poll_transmit(buf)
    }

    fn poll_event(&mut self) -> Option<NatResolverEvent> {
        std::mem::take(&mut self.stats_asked).then(|| NatResolverEvent::Stats(self.server.stats()))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}
