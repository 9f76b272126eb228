//! DirectPlay 4 large-message fragmentation and reassembly: DPSP_MSG_PACKET (0x15),
//! DPSP_MSG_PACKET2_DATA (0x30) and DPSP_MSG_PACKET2_ACK (0x31) (MC-DPL4CS 2.2.39-2.2.41,
//! 3.1.4.18, 3.1.5.27-3.1.5.29, 3.1.2.4, 3.1.6.1; INDEX E.5).
//!
//! A [`Dpsp`] endpoint serves every peer of one local socket. Sending, it cuts a message larger
//! than the transport's MTU into fragments: all at once as PACKET without reliability, or one
//! PACKET2_DATA at a time, each resent by the Packetize timer until acknowledged. Receiving, it
//! gathers fragments by sender and `GuidMessage` in any order, drops and counts inconsistent or
//! hostile ones, acknowledges PACKET2_DATA, and delivers the reassembled message for the
//! receive path to parse again as a freshly received DirectPlay 4 message.
//!
//! The [`reliable`] module is the DirectPlay 4 reliable protocol, MC-DPL4R: per-peer links
//! with messageids, frame sequences, ACK/NACK, retries and reassembly, for sessions created
//! with DPSESSION_DIRECTPLAYPROTOCOL.
//!
//! The crate is sans-IO: no sockets, no clocks, no threads. Time is the `now` argument; GUIDs
//! come from a random source seeded from the operating system by default, or from
//! [`Config::with_seed`] so that a run replays exactly.
//!
//! # Driving an endpoint: the handle/poll contract
//!
//! Feed inputs with [`Dpsp::handle_message`] (or [`Dpsp::handle_datagram`] for raw bytes) and
//! [`Dpsp::handle_timeout`]; give it work with [`Dpsp::send`]. After any of those, drain
//! [`Dpsp::poll_transmit`] (datagrams to send) and [`Dpsp::poll_event`] (deliveries and
//! reports) until they return `None`, then sleep until [`Dpsp::poll_timeout`]. `now` must never
//! go backwards.
//!
//! # Lifecycle of a message
//!
//! A reliable [`Dpsp::send`] ends in exactly one of [`Event::SendComplete`] or
//! [`Event::SendAborted`] (after 16 sends of one fragment and 60 s, or [`Dpsp::forget_peer`]);
//! keep driving the endpoint until then. An unreliable one is queued whole and reports nothing.
//! A received message ends in [`Event::Delivered`], or [`Event::ReassemblyAbandoned`] when its
//! fragments stop coming or a limit evicts it. When a peer leaves, [`Dpsp::forget_peer`] frees
//! everything held for it.
//!
//! # Errors and what to do
//!
//! - [`ConfigError`] from [`Dpsp::new`]: the [`Config`] cannot work (an MTU with no room for
//!   data, a zero limit, budgets smaller than the largest message); fix the values it names.
//! - [`SendError`] from [`Dpsp::send`]: the message is empty or above
//!   [`Limits::max_message_size`]; nothing was queued.
//! - [`Event::SendAborted`]: the peer did not acknowledge; treat it as unreachable.
//!   [`Event::LimitExceeded`]: a peer sends more than the [`Limits`] allow; its excess was
//!   dropped. Bad datagrams are never errors: they are dropped and counted in [`Dpsp::stats`].
//!
//! ```
//! use dplay_dpsp::{Config, Dpsp, Event, Reliability};
//! # #[allow(clippy::disallowed_methods)]
//! let now = std::time::Instant::now(); // a runtime's clock; this crate never reads one
//! let (a_addr, b_addr) = ("10.0.0.1:2300".parse().unwrap(), "10.0.0.2:2300".parse().unwrap());
//! let mut a = Dpsp::new(Config::default()).unwrap();
//! let mut b = Dpsp::new(Config::default()).unwrap();
//! let message = vec![7; 5000];
//! a.send(now, b_addr, &message, Reliability::Reliable).unwrap();
//! // Carry datagrams both ways until nothing is left to send.
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
//! assert!(matches!(b.poll_event(), Some(Event::Delivered { message: m, .. }) if m == message));
//! assert!(matches!(a.poll_event(), Some(Event::SendComplete { .. })));
//! ```
#![deny(missing_docs)]

mod config;
mod event;
mod message;
mod reassembly;
pub mod reliable;
mod send;
mod timer;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp4::header::{HEADER_LEN, Header};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use uuid::Uuid;

pub use config::{Config, ConfigError, FRAGMENT_OVERHEAD, Limits};
pub use event::{AbandonReason, AbortReason, DropReason, Event, Limit, Stats};
pub use message::{DpspMessage, Reliability, Transmit, parse_datagram};
pub use reassembly::PIECE_OVERHEAD;
pub use send::{SendError, split_message};

use reassembly::Reassembler;
use send::Sender;
use timer::{Timer, TimerTable};

/// What [`Dpsp::handle_datagram`] did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datagram {
    /// A PACKET, PACKET2_DATA or PACKET2_ACK, handled (or, if malformed, dropped and counted).
    Consumed,
    /// Not a message of this layer (another Command, or no DP4 header): for the caller.
    NotDpsp,
}

/// The outputs shared by the sending and receiving halves.
#[derive(Debug, Default)]
pub(crate) struct Io {
    pub(crate) timers: TimerTable,
    pub(crate) transmits: VecDeque<Transmit>,
    pub(crate) events: VecDeque<Event>,
    pub(crate) stats: Stats,
}

impl Io {
    /// Queues `message` for `to` with this endpoint's header (MC-DPL4CS 2.2.6).
    pub(crate) fn transmit(&mut self, config: &Config, to: SocketAddr, message: DpspMessage) {
        let header = Header {
            token: config.token,
            sock_addr: config.sock_addr,
            command: message.command(),
            version: config.version,
        };
        self.transmits.push_back(Transmit { to, header, message });
    }
}

/// A fragmentation endpoint: the sender and the reassembler of one local socket.
#[derive(Debug)]
pub struct Dpsp {
    config: Config,
    rng: ChaCha8Rng,
    io: Io,
    sender: Sender,
    reassembler: Reassembler,
}

impl Dpsp {
    /// An endpoint with `config`, which must pass [`Config::validate`].
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            config,
            io: Io::default(),
            sender: Sender::default(),
            reassembler: Reassembler::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Sends a message too large for one datagram to `to`, under a new `GuidMessage`, which is
    /// returned (MC-DPL4CS 3.1.4.18). Without reliability every DPSP_MSG_PACKET is queued at
    /// once; with it, the first DPSP_MSG_PACKET2_DATA is queued and the rest follow the ACKs,
    /// ending in [`Event::SendComplete`] or [`Event::SendAborted`].
    ///
    /// A message that fits one datagram (at most `mtu - FRAGMENT_OVERHEAD` bytes) is better sent
    /// as it is; given here, it goes out as a single fragment.
    pub fn send(
        &mut self,
        now: Instant,
        to: SocketAddr,
        message: &[u8],
        reliability: Reliability,
    ) -> Result<Uuid, SendError> {
        let mut random = [0; 16];
        self.rng.fill_bytes(&mut random);
        let guid = uuid::Builder::from_random_bytes(random).into_uuid();
        let key = timer::MessageKey { peer: to, guid };
        self.sender.send(&mut self.io, &self.config, now, key, message, reliability)?;
        Ok(guid)
    }

    /// Handles one message of this layer from `from`.
    pub fn handle_message(&mut self, now: Instant, from: SocketAddr, message: &DpspMessage) {
        match message {
            DpspMessage::Packet(f) => {
                self.reassembler.handle_fragment(
                    &mut self.io,
                    &self.config,
                    now,
                    from,
                    Reliability::Unreliable,
                    f,
                );
            }
            DpspMessage::Packet2Data(f) => {
                self.reassembler.handle_fragment(
                    &mut self.io,
                    &self.config,
                    now,
                    from,
                    Reliability::Reliable,
                    f,
                );
            }
            DpspMessage::Packet2Ack(ack) => {
                self.sender.handle_ack(&mut self.io, &self.config, now, from, ack);
            }
        }
    }

    /// Handles a received datagram if it is a PACKET, PACKET2_DATA or PACKET2_ACK. One that
    /// carries such a Command but does not parse is dropped as [`DropReason::Malformed`].
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, datagram: &[u8]) -> Datagram {
        let Ok((header, len)) = Header::parse(datagram) else { return Datagram::NotDpsp };
        let body = datagram.get(HEADER_LEN..len).unwrap_or_default();
        match DpspMessage::parse(header.command, body) {
            None => return Datagram::NotDpsp,
            Some(Ok(message)) => self.handle_message(now, from, &message),
            Some(Err(_)) => self.io.stats.drop(DropReason::Malformed),
        }
        Datagram::Consumed
    }

    /// Runs every timer due at `now`: Packetize resends and give-ups (MC-DPL4CS 3.1.6.1) and
    /// idle discards of partial messages (MC-DPL4CS 2.2.41).
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some((timer, key)) = self.io.timers.pop_due(now) {
            match timer {
                Timer::Packetize => self.sender.handle_timer(&mut self.io, &self.config, now, key),
                Timer::Discard => self.reassembler.handle_timer(&mut self.io, &self.config, now, key),
            }
        }
    }

    /// Abandons everything in progress with `peer`, both ways (for when it leaves the session).
    pub fn forget_peer(&mut self, now: Instant, peer: SocketAddr) {
        self.sender.forget_peer(&mut self.io, peer);
        self.reassembler.forget_peer(&mut self.io, &self.config, now, peer);
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.io.transmits.pop_front()
    }

    /// When [`Dpsp::handle_timeout`] must next be called, if any timer is armed. It may come
    /// early (a discard deadline moved by a later fragment); calling then is harmless.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.io.timers.next()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.io.events.pop_front()
    }

    /// Counters, with drops by reason.
    pub fn stats(&self) -> &Stats {
        &self.io.stats
    }

    /// Partial messages under reassembly.
    pub fn partial_messages(&self) -> usize {
        self.reassembler.len()
    }

    /// Charges the partial messages to `budget` (shared with the rest of the host,
    /// docs/limits.md) besides the limits: past it the oldest partial messages are abandoned
    /// ([`Limit::MemoryBudget`]), and a fragment that still does not fit is dropped
    /// (`over_limit`). The reliable messages being sent are charged too, as held (never
    /// refused; each is kept until acknowledged or given up, MC-DPL4CS 3.1.6.1). Without it
    /// the budget is unlimited.
    pub fn set_memory_budget(&mut self, budget: &dplay_wire::budget::MemoryBudget) {
        self.reassembler.set_charge(budget.account());
        self.sender.set_charge(budget.account());
    }

    /// Bytes held for partial messages, charged as the limits count them.
    pub fn bytes_held(&self) -> usize {
        self.reassembler.bytes_held()
    }

    /// Bytes of the reliable messages still being sent (charged to the memory budget).
    pub fn send_bytes_held(&self) -> usize {
        self.sender.bytes_held()
    }

    /// Reliable messages still being sent.
    pub fn sends_in_flight(&self) -> usize {
        self.sender.len()
    }
}

#[cfg(test)]
mod tests;
