//! The loop's batched UDP path end to end: every datagram read and sent reaches the protocol,
//! the peer and the tap, in order.

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;

/// Sends every datagram back to its sender.
struct Echo(VecDeque<(SocketAddr, Vec<u8>)>);

impl Protocol for Echo {
    type Command = ();
    type Event = ();

    fn handle_datagram(&mut self, _now: Instant, from: SocketAddr, data: &[u8]) {
        self.0.push_back((from, data.to_vec()));
    }
    fn handle_command(&mut self, _now: Instant, _command: ()) {}
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let (to, data) = self.0.pop_front()?;
        buf.extend_from_slice(&data);
        Some(to)
    }
    fn poll_event(&mut self) -> Option<()> {
        None
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

type Seen = Arc<Mutex<Vec<(Direction, SocketAddr, Vec<u8>)>>>;

/// Records every datagram it sees.
struct Record(Seen);

impl Tap for Record {
    fn datagram(&mut self, direction: Direction, _local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        self.0.lock().expect("lock").push((direction, remote, data.to_vec()));
    }
}

/// Several batches' worth of datagrams of different sizes, sent at once: each comes back once,
/// in order, and the tap saw each read and each sent, in order.
#[test]
fn every_datagram_is_echoed_and_tapped_in_order() {
    let local = SocketAddr::from(([127, 0, 0, 1], 0));
    let seen = Seen::default();
    let mut config = RuntimeConfig::new(local);
    config.tap = Some(Box::new(Record(Arc::clone(&seen))));
    let runtime = Runtime::spawn(config, Echo(VecDeque::new())).expect("spawn");
    // A large receive buffer, so no echo is dropped before the test reads it.
    let peer = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).expect("socket");
    peer.set_recv_buffer_size(crate::socket::UDP_BUFFER).expect("buffer");
    peer.bind(&local.into()).expect("bind");
    let peer = UdpSocket::from(peer);
    peer.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    let me = peer.local_addr().expect("addr");
    let datagrams: Vec<Vec<u8>> = (0..100u8).map(|i| vec![i; 1 + usize::from(i) * 13]).collect();
    for d in &datagrams {
        peer.send_to(d, runtime.local_addr()).expect("send");
    }
    let mut buf = [0; 2048];
    for d in &datagrams {
        let (len, from) = peer.recv_from(&mut buf).expect("echo");
        assert_eq!((from, buf.get(..len)), (runtime.local_addr(), Some(d.as_slice())));
    }
    runtime.shutdown().expect("shutdown");
    let seen = seen.lock().expect("lock");
    for direction in [Direction::Received, Direction::Sent] {
        let tapped: Vec<&Vec<u8>> = seen
            .iter()
            .filter(|(dir, from, _)| *dir == direction && *from == me)
            .map(|(_, _, d)| d)
            .collect();
        assert_eq!(tapped, datagrams.iter().collect::<Vec<_>>(), "{direction:?}");
    }
}

/// A NUL in the configured thread name is dropped instead of panicking in `Builder::spawn`.
#[test]
fn thread_name_with_nul_spawns() {
    let mut config = RuntimeConfig::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    config.thread_name = "dplay\0net".into();
    let runtime = Runtime::spawn(config, Echo(VecDeque::new())).expect("spawn");
    assert!(runtime.is_running());
    runtime.shutdown().expect("stopped");
}
