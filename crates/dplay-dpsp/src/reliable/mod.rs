//! The DirectPlay 4 reliable protocol, MC-DPL4R, as a sans-IO state machine.
//!
//! A [`Reliable`] endpoint serves the links of one local UDP socket. A link joins our player
//! index to one peer's (MC-DPL4R 2.2.1); the layer above opens it once the DirectPlay 4 join
//! has completed (MC-DPL4R 1.3: the protocol "becomes active when the normal DirectPlay 4
//! connection process has completed") and closes it when the peer leaves.
//!
//! Sending, a message is cut into data frames of at most the MTU, numbered by a messageid
//! per message and a sequence per frame, both from 1 (MC-DPL4R 2.2.2, 3.1.3). At most 24
//! messageids and `Config::window` frames are outstanding. Frames carry STA, EOM, RLY, CMD
//! and SAK as MC-DPL4R 6 <8> describes, and a serial that counts sends. ACKs acknowledge a
//! sequence and everything before it and carry the bytes received and a tick count, from which
//! the round trip and the peer's receive rate are measured (MC-DPL4R 2.2.4, 3.1.2, 3.1.5.3).
//! Unacknowledged frames are resent on the retry timer (average round trip + 3 deviations, 1 s
//! at first) and on a NACK from a peer that sends them (2.2.3); a link whose oldest frame stays
//! unacknowledged too long gives up ([`Event::LinkFailed`]).
//!
//! Receiving, the first frame sets the numbering (3.1.5.2), frames are held in a window after
//! the last in-order sequence, messages are put together from STA to EOM and handed up
//! ([`Event::Delivered`]): reliable ones in messageid order unless the link is unordered,
//! others as soon as they are whole. The answer is always an ACK of the in-order point, never
//! a NACK (Windows has none, MC-DPL4R 6 <2>). A Windows sender never resends unreliable
//! frames, so a hole that can only belong to messages 24 or more messageids older than the
//! newest one seen is passed over (3.1.5.2 "+24"). Duplicates are answered with an ACK;
//! anything hostile is dropped and counted in [`Stats`].
//!
//! # Driving an endpoint
//!
//! Feed [`Reliable::handle_datagram`] (or [`Reliable::handle_frame`]) and
//! [`Reliable::handle_timeout`]; give work with [`Reliable::send`]. After each, drain
//! [`Reliable::poll_transmit`] and [`Reliable::poll_event`] until `None`, then sleep until
//! [`Reliable::poll_timeout`].
//!
//! ```
//! use dplay_dpsp::reliable::{Config, Event, Reliable};
//! # #[allow(clippy::disallowed_methods)]
//! let now = std::time::Instant::now(); // a runtime's clock; this crate never reads one
//! let (a_addr, b_addr) = ("10.0.0.1:2350".parse().unwrap(), "10.0.0.2:2350".parse().unwrap());
//! let mut a = Reliable::new(Config::default()).unwrap();
//! let mut b = Reliable::new(Config::default()).unwrap();
//! a.open_link(b_addr, 1, 2).unwrap(); // our player index 1, the peer's 2
//! b.open_link(a_addr, 2, 1).unwrap();
//! a.send(now, b_addr, &[7; 5000], true).unwrap();
//! loop {
//!     let mut idle = true;
//!     while let Some(t) = a.poll_transmit() {
//!         b.handle_datagram(now, a_addr, &t.to_vec().unwrap());
//!         idle = false;
//!     }
//!     while let Some(t) = b.poll_transmit() {
//!         a.handle_datagram(now, b_addr, &t.to_vec().unwrap());
//!         idle = false;
//!     }
//!     if idle {
//!         break;
//!     }
//! }
//! assert!(matches!(b.poll_event(), Some(Event::Delivered { data, .. }) if data == [7; 5000]));
//! assert_eq!(a.link_info(b_addr).unwrap().in_flight, 0);
//! ```

mod config;
mod event;
mod link;
mod receive;
mod rtt;
mod send;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::budget::MemoryBudget;
use dplay_wire::dp4::reliable::{FrameBody, ReliableFrame, player_index_len};
use dplay_wire::{Wire, WireError};

pub use config::{
    Config, ConfigError, FRAME_OVERHEAD, Limits, MAX_OUTSTANDING_MESSAGES, RECEIVE_WINDOW, player_index,
};
pub use event::{DropReason, Event, LinkInfo, Stats};

use link::Link;

/// A frame to send to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The peer's UDP address.
    pub to: SocketAddr,
    /// The frame.
    pub frame: ReliableFrame,
}

impl Transmit {
    /// The datagram's bytes.
    pub fn to_vec(&self) -> Result<Vec<u8>, WireError> {
        self.frame.to_vec()
    }
}

/// Why [`Reliable::send`] refused a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// No link is open to that peer.
    #[error("no link is open to {0}")]
    NoLink(SocketAddr),
    /// The message is above `Limits::max_message_size`.
    #[error("the message is {size} bytes, above the {max}-byte limit")]
    TooLarge {
        /// The message's length.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The link's queue would pass `Limits::max_queued_bytes`, or the peer is a window or
    /// more behind while the memory budget is full (docs/limits.md).
    #[error("the send queue is full")]
    QueueFull,
}

/// Why [`Reliable::open_link`] refused a link.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// `Limits::max_links` links are open.
    #[error("{0} links are open already")]
    TooMany(usize),
}

/// The outputs shared by every link.
#[derive(Debug, Default)]
pub(crate) struct Io {
    pub(crate) transmits: VecDeque<Transmit>,
    pub(crate) events: VecDeque<Event>,
    pub(crate) stats: Stats,
}

/// A reliable-protocol endpoint: every link of one local socket.
#[derive(Debug)]
pub struct Reliable {
    config: Config,
    links: BTreeMap<SocketAddr, Link>,
    epoch: Option<Instant>,
    io: Io,
    budget: MemoryBudget,
    /// Our players' indexes besides each link's own (MC-DPL4R 3.1.5.1).
    local_players: BTreeSet<u16>,
}

impl Reliable {
    /// An endpoint with `config`, which must pass [`Config::validate`].
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            config,
            links: BTreeMap::new(),
            epoch: None,
            io: Io::default(),
            budget: MemoryBudget::unlimited(),
            local_players: BTreeSet::new(),
        })
    }

    /// Charges what each link's receiver holds (frames ahead of the in-order point, the
    /// message being assembled) to `budget`, shared with the rest of the host
    /// (docs/limits.md): a data frame that does not fit is dropped unacknowledged
    /// ([`DropReason::OverBudget`]), so its sender sends it again. Links opened from now on
    /// draw on it; without it the budget is unlimited.
    pub fn set_memory_budget(&mut self, budget: &MemoryBudget) {
        self.budget = budget.clone();
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Opens the link to `peer`, our player index `local` to its `remote` (MC-DPL4R 2.2.1).
    /// Opening an open link with the same indexes keeps it; with other ones starts afresh.
    pub fn open_link(&mut self, peer: SocketAddr, local: u16, remote: u16) -> Result<(), LinkError> {
        if self.links.get(&peer).is_some_and(|l| l.local == local && l.remote == remote) {
            return Ok(());
        }
        if !self.links.contains_key(&peer) && self.links.len() >= self.config.limits.max_links {
            return Err(LinkError::TooMany(self.links.len()));
        }
        self.links.insert(peer, Link::new(peer, local, remote, self.budget.account()));
        Ok(())
    }

    /// The indexes of every player of ours (MC-DPL4R 3.1.5.1: a frame's IdTo must be a valid
    /// player of the session): a frame may be addressed to any of them, not only to the
    /// link's own index.
    pub fn set_local_players(&mut self, indexes: impl IntoIterator<Item = u16>) {
        self.local_players = indexes.into_iter().collect();
    }

    /// The indexes of every player of the instance at `peer` (3.1.5.1): a frame may come
    /// from any of them, not only from the link's own remote index.
    pub fn set_link_players(&mut self, peer: SocketAddr, indexes: impl IntoIterator<Item = u16>) {
        if let Some(link) = self.links.get_mut(&peer) {
            link.remote_players = indexes.into_iter().collect();
        }
    }

    /// Closes the link to `peer`, forgetting what it had queued, in flight and half received.
    /// Returns whether one was open.
    pub fn close_link(&mut self, peer: SocketAddr) -> bool {
        self.links.remove(&peer).is_some()
    }

    /// Hands reliable messages up in messageid order or not, on every link from now on
    /// (DPSESSION_NOPRESERVEORDER turns it off; see [`Config::ordered`]).
    pub fn set_ordered(&mut self, ordered: bool) {
        self.config.ordered = ordered;
    }

    /// The peers of the open links.
    pub fn peers(&self) -> impl Iterator<Item = SocketAddr> + '_ {
        self.links.keys().copied()
    }

    /// Whether a link to `peer` is open.
    pub fn has_link(&self, peer: SocketAddr) -> bool {
        self.links.contains_key(&peer)
    }

    /// Queues `data` for `peer`, with RLY when `reliable`, and sends what the windows allow.
    pub fn send(
        &mut self,
        now: Instant,
        peer: SocketAddr,
        data: &[u8],
        reliable: bool,
    ) -> Result<(), SendError> {
        let max = self.config.limits.max_message_size;
        if data.len() > max {
            return Err(SendError::TooLarge { size: data.len(), max });
        }
        self.epoch.get_or_insert(now);
        let link = self.links.get_mut(&peer).ok_or(SendError::NoLink(peer))?;
        if link.sender.queued_bytes.saturating_add(data.len()) > self.config.limits.max_queued_bytes {
            return Err(SendError::QueueFull);
        }
        // A peer a window or more behind holds what we send it; when the memory budget is
        // full it is sent no more until it catches up (docs/limits.md).
        let window = usize::from(self.config.window).saturating_mul(self.config.frame_data_len());
        if link.sender.held_bytes() >= window && !link.charge.budget().fits(data.len()) {
            return Err(SendError::QueueFull);
        }
        self.io.stats.messages_sent += 1;
        link.sender.enqueue(data.to_vec(), reliable);
        link.pump(&self.config, &mut self.io, now);
        link.sync_send_charge();
        Ok(())
    }

    /// A datagram from `from` that is an MC-DPL4R frame; one that does not parse is dropped
    /// as [`DropReason::Malformed`].
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, datagram: &[u8]) {
        if datagram.len() > self.config.mtu {
            self.io.stats.frames_received += 1;
            return self.io.stats.drop(DropReason::Malformed);
        }
        match ReliableFrame::parse(datagram) {
            Ok(frame) => self.handle_frame(now, from, &frame),
            Err(_) => {
                self.io.stats.frames_received += 1;
                self.io.stats.drop(DropReason::Malformed);
            }
        }
    }

    /// A parsed frame from `from` (MC-DPL4R 3.1.5).
    pub fn handle_frame(&mut self, now: Instant, from: SocketAddr, frame: &ReliableFrame) {
        self.io.stats.frames_received += 1;
        let tick = self.tick(now);
        let Some(link) = self.links.get_mut(&from) else {
            return self.io.stats.drop(DropReason::UnknownPeer);
        };
        // 3.1.5.1: IdFrom must be a player of the link's instance, IdTo one of ours.
        let from_ok = frame.id_from == link.remote || link.remote_players.contains(&frame.id_from);
        let to_ok = frame.id_to == link.local || self.local_players.contains(&frame.id_to);
        if !(from_ok && to_ok) {
            return self.io.stats.drop(DropReason::WrongPlayer);
        }
        let len = frame
            .encoded_len()
            .saturating_sub(player_index_len(frame.id_from) + player_index_len(frame.id_to));
        if let FrameBody::Data(d) = &frame.body
            && !link.charge.budget().fits(d.data.len())
        {
            return self.io.stats.drop(DropReason::OverBudget);
        }
        link.handle(&self.config, &mut self.io, now, tick, &frame.body, len);
        link.charge.set_held(link.bytes_held());
        link.sync_send_charge();
        if link.failed {
            self.links.remove(&from);
        }
    }

    /// Runs every timer due at `now`: delayed ACKs, resends and give-ups (MC-DPL4R 3.1.2,
    /// 3.1.3).
    pub fn handle_timeout(&mut self, now: Instant) {
        let tick = self.tick(now);
        for link in self.links.values_mut() {
            link.handle_timeout(&self.config, &mut self.io, now, tick);
            link.sync_send_charge();
        }
        self.links.retain(|_, l| !l.failed);
    }

    /// The next frame to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.io.transmits.pop_front()
    }

    /// When [`Reliable::handle_timeout`] must next be called. It may come early; calling
    /// then is harmless.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.links.values().filter_map(|l| l.deadline(&self.config)).min()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.io.events.pop_front()
    }

    /// Counters, with drops by reason.
    pub fn stats(&self) -> &Stats {
        &self.io.stats
    }

    /// What the link to `peer` knows: round trip, bytes received both ways, peer rate.
    pub fn link_info(&self, peer: SocketAddr) -> Option<LinkInfo> {
        self.links.get(&peer).map(|l| l.info(&self.config))
    }

    /// Bytes held for received frames and messages being assembled, over every link.
    pub fn bytes_held(&self) -> usize {
        self.links.values().map(Link::bytes_held).sum()
    }

    /// The `local tick count` for `now`: milliseconds since the first call that gave a time
    /// (MC-DPL4R 3.1.3: "can start at any value but MUST increase at the specified rate").
    fn tick(&mut self, now: Instant) -> u32 {
        let epoch = *self.epoch.get_or_insert(now);
        let ms = now.saturating_duration_since(epoch).as_millis();
        u32::try_from(ms % (u128::from(u32::MAX) + 1)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
