//! What the runtime drives: a sans-IO protocol with the handle/poll shape of STYLE.md §2.

use std::net::SocketAddr;
use std::time::Instant;

/// A sans-IO protocol endpoint bound to one socket.
///
/// The runtime calls, in this order on every turn of its loop: `handle_datagram` for each
/// datagram read, `handle_command` for each command received, `handle_timeout` once the
/// deadline from `poll_timeout` has passed, then `poll_transmit` until it returns `None` and
/// `poll_event` until it returns `None`, and finally `poll_timeout` for the next wake-up.
pub trait Protocol: Send + 'static {
    /// What the application asks of the protocol.
    type Command: Send + 'static;
    /// What the protocol tells the application.
    type Event: Send + 'static;

    /// A datagram arrived from `from`.
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]);
    /// The application sent a command.
    fn handle_command(&mut self, now: Instant, command: Self::Command);
    /// The deadline given by `poll_timeout` has passed.
    fn handle_timeout(&mut self, now: Instant);
    /// The next datagram to send: writes it into `buf` (cleared by the caller) and returns its
    /// destination, or `None` when nothing is queued.
    fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr>;
    /// The next event for the application.
    fn poll_event(&mut self) -> Option<Self::Event>;
    /// When `handle_timeout` must next be called.
    fn poll_timeout(&self) -> Option<Instant>;
    /// True once the protocol has nothing left to do and the loop may end by itself.
    fn is_finished(&self) -> bool {
        false
    }
}

/// Which way a datagram went, for a [`Tap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Read from the socket.
    Received,
    /// Written to the socket.
    Sent,
}

/// Sees every datagram the runtime reads or writes (for `--pcap` recording and tracing).
pub trait Tap: Send + 'static {
    /// One datagram between `local` and `remote`.
    fn datagram(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]);
}
