//! The floor under the relay bench (issue 23; docs/PERFORMANCE.md, "The floor"): a raw UDP
//! forwarder with no DirectPlay in it, to run the same load through on the same machine in
//! the same run. What it costs is what this machine charges for moving the datagrams through
//! one thread; what the runtime's relay costs above it is our code.
//!
//! It does what [`dplay_runtime`]'s event loop does with a relay's sockets, with the same
//! system calls through the same safe wrappers, and nothing else: one thread, one mio `Poll`
//! (edge-triggered, each socket registered once), one `recvmmsg` (nix) per ready socket per
//! batch of 32 (a short batch emptied the queue, so the read that could only say
//! WouldBlock is saved, as the runtime saves it), and after the whole turn one `sendmmsg`
//! (rustix) per run of datagrams from one socket. Its forwarding table is fixed at start:
//! endpoint `j` belongs to member `j`, and a datagram from member `i` at endpoint `j` leaves
//! from endpoint `i` to member `j`. No parsing, no latching, no rate caps; a datagram from
//! anyone else, or one its socket refuses (WouldBlock), is dropped.

use std::collections::HashMap;
use std::io::{self, IoSlice, IoSliceMut};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token, Waker};
use nix::sys::socket::{MsgFlags, MultiHeaders, SockaddrStorage, recvmmsg};
use rustix::net::{MMsgHdr, SendAncillaryBuffer, SendFlags, SocketAddrAny, sendmmsg};

/// The forwarder thread's name (at most 15 bytes: Linux's `comm`).
pub(super) const THREAD: &str = "bench-raw-relay";
/// Datagrams one system call reads or writes at most: the runtime's batch on Linux.
const BATCH: usize = 32;
/// A receive slot: the largest UDP payload, as the runtime's.
const MAX_DATAGRAM: usize = 65_535;
/// Kernel buffer sizes: the runtime's.
const UDP_BUFFER: usize = 4 << 20;
const WAKER: Token = Token(usize::MAX);

/// A running forwarder; dropping it stops its thread.
#[derive(Debug)]
pub struct Forwarder {
    endpoints: Vec<SocketAddr>,
    stop: Arc<AtomicBool>,
    waker: Waker,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Forwarder {
    /// One endpoint socket per member on `ip`, endpoint `j` member `j`'s, forwarding on a
    /// thread named `bench-raw-relay`.
    pub fn spawn(ip: IpAddr, members: &[SocketAddr]) -> io::Result<Self> {
        let poll = Poll::new()?;
        let mut sockets = Vec::with_capacity(members.len());
        for j in 0..members.len() {
            let mut socket = bind(SocketAddr::new(ip, 0))?;
            poll.registry().register(&mut socket, Token(j), Interest::READABLE)?;
            sockets.push(socket);
        }
        let waker = Waker::new(poll.registry(), WAKER)?;
        let endpoints = sockets.iter().map(UdpSocket::local_addr).collect::<io::Result<_>>()?;
        let table = Table {
            member: members.iter().enumerate().map(|(i, a)| (*a, i)).collect(),
            to: members.to_vec(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(THREAD.into())
            .spawn(move || run(poll, &sockets, &table, &flag))?;
        Ok(Self { endpoints, stop, waker, thread: Some(thread) })
    }

    /// The endpoints' addresses, by member.
    pub fn endpoints(&self) -> &[SocketAddr] {
        &self.endpoints
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.waker.wake();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where datagrams go: member `i` sends from `to[i]`, which `member` maps back to `i`.
struct Table {
    member: HashMap<SocketAddr, usize>,
    to: Vec<SocketAddr>,
}

/// One datagram to forward after the turn.
struct Forward {
    /// The endpoint socket it leaves from.
    from: usize,
    to: SocketAddr,
    data: Vec<u8>,
}

fn run(mut poll: Poll, sockets: &[UdpSocket], table: &Table, stop: &AtomicBool) -> io::Result<()> {
    let mut events = Events::with_capacity(256);
    let mut slots = vec![0u8; BATCH * MAX_DATAGRAM];
    let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(BATCH, None);
    // `queue[..queued]` is this turn's; the buffers stay for the next turns.
    let mut queue: Vec<Forward> = Vec::new();
    while !stop.load(Ordering::Acquire) {
        match poll.poll(&mut events, None) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => other?,
        }
        let mut queued = 0;
        for event in &events {
            let endpoint = event.token().0;
            let Some(socket) = sockets.get(endpoint) else { continue };
            loop {
                let mut take = |from: SocketAddr, data: &[u8]| {
                    let Some(&i) = table.member.get(&from) else { return };
                    let Some(&to) = table.to.get(endpoint).filter(|_| i != endpoint) else { return };
                    if queue.len() == queued {
                        queue.push(Forward { from: i, to, data: Vec::new() });
                    }
                    if let Some(f) = queue.get_mut(queued) {
                        (f.from, f.to) = (i, to);
                        f.data.clear();
                        f.data.extend_from_slice(data);
                        queued += 1;
                    }
                };
                match read(socket, &mut slots, &mut headers, &mut take) {
                    Ok(n) if n < BATCH => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        send_all(sockets, queue.get(..queued).unwrap_or_default());
    }
    Ok(())
}

/// One `recvmmsg` of at most [`BATCH`] datagrams from `socket`, each handed to `each`;
/// returns how many were read.
fn read(
    socket: &UdpSocket,
    slots: &mut [u8],
    headers: &mut MultiHeaders<SockaddrStorage>,
    each: &mut impl FnMut(SocketAddr, &[u8]),
) -> io::Result<usize> {
    let mut chunks = slots.chunks_mut(MAX_DATAGRAM);
    let mut iovs: [[IoSliceMut<'_>; 1]; BATCH] =
        std::array::from_fn(|_| [IoSliceMut::new(chunks.next().unwrap_or_default())]);
    let got = recvmmsg(socket.as_raw_fd(), headers, iovs.iter_mut(), MsgFlags::empty(), None)
        .map_err(io::Error::from)?;
    let mut n = 0;
    for msg in got {
        n += 1;
        let from = msg.address.as_ref().and_then(|a| match (a.as_sockaddr_in(), a.as_sockaddr_in6()) {
            (Some(v4), _) => Some(SocketAddr::V4((*v4).into())),
            (_, Some(v6)) => Some(SocketAddr::V6((*v6).into())),
            _ => None,
        });
        if let Some(from) = from {
            each(from, msg.iovs().next().unwrap_or_default());
        }
    }
    Ok(n)
}

/// Sends `queue` in order: each run from one socket in batches of [`BATCH`], one `sendmmsg`
/// each (a lone datagram with `send_to`, as the runtime does). A refused datagram is dropped.
fn send_all(sockets: &[UdpSocket], queue: &[Forward]) {
    let mut at = 0;
    while let Some(first) = queue.get(at) {
        let rest = queue.get(at..).unwrap_or_default();
        let run = rest.iter().take(BATCH).take_while(|f| f.from == first.from).count();
        let batch = rest.get(..run).unwrap_or_default();
        at += match sockets.get(first.from).map(|s| send_batch(s, batch)) {
            Some(Ok(n)) => n.clamp(1, run),
            Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => 0,
            // Refused (WouldBlock among the errors) or no such socket: the first is lost.
            _ => 1,
        };
    }
}

fn send_batch(socket: &UdpSocket, batch: &[Forward]) -> io::Result<usize> {
    if let [one] = batch {
        return socket.send_to(&one.data, one.to).map(|_| 1);
    }
    let to: Vec<SocketAddrAny> = batch.iter().map(|f| f.to.into()).collect();
    let data: Vec<[IoSlice<'_>; 1]> = batch.iter().map(|f| [IoSlice::new(&f.data)]).collect();
    let mut anc: Vec<SendAncillaryBuffer<'_, '_, '_>> =
        std::iter::repeat_with(Default::default).take(batch.len()).collect();
    let mut msgs: Vec<MMsgHdr<'_>> =
        to.iter().zip(&data).zip(anc.iter_mut()).map(|((a, d), c)| MMsgHdr::new_with_addr(a, d, c)).collect();
    Ok(sendmmsg(socket, &mut msgs, SendFlags::empty())?)
}

/// A non-blocking UDP socket on `addr` with the runtime's buffer sizes.
fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
    let socket = std::net::UdpSocket::bind(addr)?;
    // A smaller buffer than asked for still works, as in the runtime.
    let _ = rustix::net::sockopt::set_socket_recv_buffer_size(&socket, UDP_BUFFER);
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(&socket, UDP_BUFFER);
    socket.set_nonblocking(true)?;
    Ok(UdpSocket::from_std(socket))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Duration;

    /// A member's datagram at another member's endpoint reaches that member from the sender's
    /// own endpoint; a stranger's, and a member's at its own endpoint, go nowhere.
    #[test]
    fn forwards_by_the_fixed_table_only() {
        let local = SocketAddr::from(([127, 0, 0, 1], 0));
        let bind = || {
            let s = std::net::UdpSocket::bind(local).expect("bind");
            s.set_read_timeout(Some(Duration::from_millis(300))).expect("timeout");
            s
        };
        let members = [bind(), bind(), bind()];
        let addrs: Vec<SocketAddr> = members.iter().map(|m| m.local_addr().expect("addr")).collect();
        let forwarder = Forwarder::spawn(local.ip(), &addrs).expect("spawn");
        let ends = forwarder.endpoints().to_vec();
        let stranger = bind();
        stranger.send_to(b"nobody", ends[2]).expect("send");
        members[1].send_to(b"self", ends[1]).expect("send");
        members[0].send_to(b"zero to two", ends[2]).expect("send");
        let mut buf = [0u8; 64];
        let (n, from) = members[2].recv_from(&mut buf).expect("forwarded");
        assert_eq!((&buf[..n], from), (&b"zero to two"[..], ends[0]));
        for m in &members {
            assert!(m.recv_from(&mut buf).is_err(), "nothing else is forwarded");
        }
    }
}
