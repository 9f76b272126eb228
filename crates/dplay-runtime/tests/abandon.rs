//! [`Protocol::poll_abandon`]: the connection we opened to an address the protocol gave up on
//! (a DirectPlay 4 peer that went silent) is closed at once, reported as
//! [`CloseReason::Abandoned`], and the next message to that address opens a new one. On
//! loopback ports the test opened.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use dplay_runtime::{
    CloseReason, Path, Protocol, Runtime, RuntimeConfig, SocketSpec, StreamClosed, StreamId, Transmit,
};

/// What the test asks of [`Toy`].
enum Command {
    /// One byte to this address over TCP.
    Send(SocketAddr),
    /// Give up on this address.
    Abandon(SocketAddr),
}

#[derive(Default)]
struct Toy {
    sends: Vec<SocketAddr>,
    abandons: Vec<SocketAddr>,
    closed: Vec<(StreamId, StreamClosed)>,
}

impl Protocol for Toy {
    type Command = Command;
    type Event = StreamClosed;

    fn handle_stream_closed(&mut self, _: Instant, s: StreamId, closed: &StreamClosed) {
        self.closed.push((s, closed.clone()));
    }

    fn handle_command(&mut self, _: Instant, command: Command) {
        match command {
            Command::Send(to) => self.sends.push(to),
            Command::Abandon(to) => self.abandons.push(to),
        }
    }

    fn poll_send(&mut self, _: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let to = self.sends.pop()?;
        buf.push(b'x');
        Some(Transmit { to, path: Path::Tcp })
    }

    fn poll_abandon(&mut self) -> Option<SocketAddr> {
        self.abandons.pop()
    }

    fn handle_timeout(&mut self, _: Instant) {}

    fn poll_event(&mut self) -> Option<StreamClosed> {
        (!self.closed.is_empty()).then(|| self.closed.remove(0).1)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

#[test]
fn an_abandoned_address_gets_a_new_connection() {
    let peer = TcpListener::bind("127.0.0.1:0").unwrap();
    let to = peer.local_addr().unwrap();
    let rt = Runtime::spawn(
        RuntimeConfig::with_sockets(vec![SocketSpec::udp(([127, 0, 0, 1], 0).into())]),
        Toy::default(),
    )
    .unwrap();
    rt.command(Command::Send(to)).unwrap();
    let (mut first, _) = peer.accept().unwrap();
    first.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut byte = [0u8; 1];
    first.read_exact(&mut byte).unwrap();
    rt.command(Command::Abandon(to)).unwrap();
    let closed = rt.events().recv_timeout(Duration::from_secs(5)).expect("no close reported");
    assert_eq!((closed.reason, closed.opened_to), (CloseReason::Abandoned, Some(to)));
    // The peer sees the end of it.
    assert_eq!(first.read(&mut byte).unwrap_or(0), 0);
    rt.command(Command::Send(to)).unwrap();
    let (mut second, _) = peer.accept().unwrap();
    second.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    second.read_exact(&mut byte).unwrap();
    assert_eq!(byte, [b'x']);
}
