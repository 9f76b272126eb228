//! UDP datagrams in batches: on Linux one `recvmmsg` system call reads up to [`BATCH`]
//! datagrams and one `sendmmsg` writes up to [`BATCH`] (through the safe wrappers of nix and
//! rustix, as this crate forbids unsafe code); elsewhere one `recv_from` or `send_to` per
//! datagram.

use std::io;
use std::net::SocketAddr;

use mio::net::UdpSocket;

use crate::SocketId;

/// The largest UDP payload.
pub(crate) const MAX_DATAGRAM: usize = 65_535;
/// Datagrams read or written by one system call at most.
#[cfg(target_os = "linux")]
pub(crate) const BATCH: usize = 32;
#[cfg(not(target_os = "linux"))]
pub(crate) const BATCH: usize = 1;

/// The buffers one event-loop thread reads into, reused for every read. They live on the
/// thread (the system call's headers hold pointers, so they are not `Send`).
pub(crate) struct RecvBuffers {
    /// [`BATCH`] slots of [`MAX_DATAGRAM`] bytes: a datagram is never truncated. Zeroed pages
    /// the kernel has not written to take no memory.
    data: Vec<u8>,
    #[cfg(target_os = "linux")]
    headers: nix::sys::socket::MultiHeaders<nix::sys::socket::SockaddrStorage>,
}

impl RecvBuffers {
    pub(crate) fn new() -> Self {
        Self {
            data: vec![0; BATCH * MAX_DATAGRAM],
            #[cfg(target_os = "linux")]
            headers: nix::sys::socket::MultiHeaders::preallocate(BATCH, None),
        }
    }

    /// One slot, as scratch space for TCP reads.
    pub(crate) fn scratch(&mut self) -> &mut [u8] {
        self.data.get_mut(..MAX_DATAGRAM).unwrap_or_default()
    }

    /// Reads the datagrams waiting on `socket`, at most [`BATCH`], handing each to `each`;
    /// returns how many were read. WouldBlock when none is waiting.
    #[cfg(target_os = "linux")]
    pub(crate) fn recv(
        &mut self,
        socket: &UdpSocket,
        mut each: impl FnMut(SocketAddr, &[u8]),
    ) -> io::Result<usize> {
        use std::io::IoSliceMut;
        use std::os::fd::AsRawFd;

        use nix::sys::socket::{MsgFlags, recvmmsg};

        let mut slots = self.data.chunks_mut(MAX_DATAGRAM);
        let mut iovs: [[IoSliceMut<'_>; 1]; BATCH] =
            std::array::from_fn(|_| [IoSliceMut::new(slots.next().unwrap_or_default())]);
        let received =
            recvmmsg(socket.as_raw_fd(), &mut self.headers, iovs.iter_mut(), MsgFlags::empty(), None)
                .map_err(io::Error::from)?;
        let mut count = 0;
        for msg in received {
            count += 1;
            let from = msg.address.and_then(|a| {
                a.as_sockaddr_in()
                    .map(|v4| SocketAddr::from(*v4))
                    .or_else(|| a.as_sockaddr_in6().map(|v6| SocketAddr::from(*v6)))
            });
            // A datagram with no IP source cannot be answered; UDP sockets always give one.
            let Some(from) = from else { continue };
            each(from, msg.iovs().next().unwrap_or_default());
        }
        Ok(count)
    }

    /// Reads the datagram waiting on `socket`, handing it to `each`; returns 1.
    /// WouldBlock when none is waiting.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn recv(
        &mut self,
        socket: &UdpSocket,
        mut each: impl FnMut(SocketAddr, &[u8]),
    ) -> io::Result<usize> {
        let (len, from) = socket.recv_from(&mut self.data)?;
        each(from, self.data.get(..len).unwrap_or_default());
        Ok(1)
    }
}

/// One datagram taken from the protocol and not yet sent.
pub(crate) struct Outgoing {
    pub(crate) socket: SocketId,
    pub(crate) to: SocketAddr,
    pub(crate) data: Vec<u8>,
}

/// Datagrams taken from the protocol and not yet sent, in order, at most [`BATCH`]. Their
/// buffers are kept and reused, so queueing allocates nothing once each slot has held a
/// datagram.
pub(crate) struct Outbox {
    slots: Vec<Outgoing>,
    /// `slots[..len]` hold datagrams.
    len: usize,
    /// `slots[..sent]` were sent (or dropped).
    sent: usize,
}

impl Outbox {
    /// [`BATCH`] free slots (their buffers allocated on first use).
    pub(crate) fn new() -> Self {
        let to = SocketAddr::from(([0; 4], 0));
        let slots = (0..BATCH).map(|_| Outgoing { socket: SocketId::MAIN, to, data: Vec::new() }).collect();
        Self { slots, len: 0, sent: 0 }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.sent == self.len
    }

    /// The next free slot's buffer, for the protocol to write a datagram into (it counts once
    /// [`Outbox::push`] names its socket and destination); `None` when full.
    pub(crate) fn slot(&mut self) -> Option<&mut Vec<u8>> {
        self.slots.get_mut(self.len).map(|slot| &mut slot.data)
    }

    /// Queues what [`Outbox::slot`] holds, from `socket` to `to`.
    pub(crate) fn push(&mut self, socket: SocketId, to: SocketAddr) {
        if let Some(slot) = self.slots.get_mut(self.len) {
            slot.socket = socket;
            slot.to = to;
            self.len += 1;
        }
    }

    /// The unsent datagrams from the first one's socket up to the first from another socket.
    pub(crate) fn next_run(&self) -> Option<(SocketId, &[Outgoing])> {
        let rest = self.slots.get(self.sent..self.len)?;
        let socket = rest.first()?.socket;
        let run = rest.iter().position(|d| d.socket != socket).unwrap_or(rest.len());
        Some((socket, rest.get(..run).unwrap_or_default()))
    }

    /// The first unsent datagram's socket.
    pub(crate) fn blocked_socket(&self) -> Option<SocketId> {
        self.slots.get(self.sent..self.len)?.first().map(|d| d.socket)
    }

    /// `n` more datagrams were sent (or dropped); once all are, the slots are free again.
    pub(crate) fn advance(&mut self, n: usize) {
        self.sent = (self.sent + n).min(self.len);
        if self.sent == self.len {
            (self.sent, self.len) = (0, 0);
        }
    }
}

/// Sends the datagrams of `run` (all from `socket`) in order, at most [`BATCH`]; returns how
/// many were sent, at least one. An error (WouldBlock among them) concerns the first.
#[cfg(target_os = "linux")]
pub(crate) fn send(socket: &UdpSocket, run: &[Outgoing]) -> io::Result<usize> {
    use std::io::IoSlice;

    use rustix::net::{MMsgHdr, SendAncillaryBuffer, SendFlags, SocketAddrAny, sendmmsg};

    if let [one] = run {
        return socket.send_to(&one.data, one.to).map(|_| 1);
    }
    let run = run.get(..BATCH).unwrap_or(run);
    let addrs: Vec<SocketAddrAny> = run.iter().map(|d| SocketAddrAny::from(d.to)).collect();
    let iovs: Vec<[IoSlice<'_>; 1]> = run.iter().map(|d| [IoSlice::new(&d.data)]).collect();
    let mut controls: Vec<SendAncillaryBuffer<'_, '_, '_>> = run.iter().map(|_| Default::default()).collect();
    let mut msgs: Vec<MMsgHdr<'_>> = addrs
        .iter()
        .zip(&iovs)
        .zip(&mut controls)
        .map(|((addr, iov), control)| MMsgHdr::new_with_addr(addr, iov, control))
        .collect();
    Ok(sendmmsg(socket, &mut msgs, SendFlags::empty())?)
}

/// Sends the first datagram of `run`; returns 1. An error (WouldBlock among them) concerns it.
#[cfg(not(target_os = "linux"))]
pub(crate) fn send(socket: &UdpSocket, run: &[Outgoing]) -> io::Result<usize> {
    let Some(first) = run.first() else { return Ok(0) };
    socket.send_to(&first.data, first.to).map(|_| 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every datagram waiting is read, in order, with its sender, across more than one batch;
    /// then WouldBlock.
    #[test]
    fn reads_every_waiting_datagram_in_batches() {
        let local = SocketAddr::from(([127, 0, 0, 1], 0));
        let receiver = crate::socket::bind_udp(local).expect("bind");
        let sender = std::net::UdpSocket::bind(local).expect("bind");
        let to = receiver.local_addr().expect("addr");
        let total = BATCH * 2 + 3;
        for i in 0..total {
            let len = 1 + i * 37 % 1400;
            sender.send_to(&vec![u8::try_from(i).expect("small"); len], to).expect("send");
        }
        let mut bufs = RecvBuffers::new();
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while got.len() < total && std::time::Instant::now() < deadline {
            match bufs.recv(&receiver, |from, data| got.push((from, data.to_vec()))) {
                Ok(n) => assert!((1..=BATCH).contains(&n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("recv: {e}"),
            }
        }
        assert_eq!(got.len(), total);
        let from = sender.local_addr().expect("addr");
        for (i, (who, data)) in got.iter().enumerate() {
            assert_eq!(*who, from);
            assert_eq!(data.len(), 1 + i * 37 % 1400);
            assert!(data.iter().all(|&b| usize::from(b) == i));
        }
        let empty = bufs.recv(&receiver, |_, _| panic!("nothing is waiting"));
        assert_eq!(empty.map_err(|e| e.kind()), Err(io::ErrorKind::WouldBlock));
    }

    fn queue(outbox: &mut Outbox, socket: usize, to: SocketAddr, data: &[u8]) {
        let slot = outbox.slot().expect("room");
        slot.clear();
        slot.extend_from_slice(data);
        outbox.push(SocketId(socket), to);
    }

    /// Runs end where the socket changes; a full outbox takes no more; once every datagram is
    /// sent the slots are free again, their buffers kept.
    #[test]
    fn outbox_runs_are_split_by_socket() {
        let to = SocketAddr::from(([127, 0, 0, 1], 9));
        let mut outbox = Outbox::new();
        for socket in [0, 0, 1, 1, 0] {
            queue(&mut outbox, socket, to, &[1; 100]);
        }
        let run = |o: &Outbox| o.next_run().map(|(id, run)| (id.0, run.len()));
        assert_eq!(run(&outbox), Some((0, 2)));
        outbox.advance(1);
        assert_eq!((run(&outbox), outbox.blocked_socket()), (Some((0, 1)), Some(SocketId(0))));
        outbox.advance(1);
        assert_eq!(run(&outbox), Some((1, 2)));
        outbox.advance(2);
        assert_eq!(run(&outbox), Some((0, 1)));
        outbox.advance(1);
        assert!(outbox.is_empty());
        assert_eq!((run(&outbox), outbox.blocked_socket()), (None, None));
        assert!(outbox.slot().expect("free again").capacity() >= 100);
        for _ in 0..BATCH {
            queue(&mut outbox, 0, to, &[2]);
        }
        assert!(outbox.slot().is_none());
        assert_eq!(run(&outbox), Some((0, BATCH)));
    }

    /// One run to two destinations: each gets its datagrams, in order.
    #[test]
    fn sends_a_run_in_order_to_several_destinations() {
        let local = SocketAddr::from(([127, 0, 0, 1], 0));
        let receivers =
            [crate::socket::bind_udp(local).expect("bind"), crate::socket::bind_udp(local).expect("bind")];
        let addrs = receivers.each_ref().map(|r| r.local_addr().expect("addr"));
        let sender = crate::socket::bind_udp(local).expect("bind");
        let mut outbox = Outbox::new();
        for i in 0..6u8 {
            queue(&mut outbox, 0, addrs[usize::from(i % 2)], &[i; 50]);
        }
        while let Some((_, run)) = outbox.next_run() {
            match send(&sender, run) {
                Ok(n) => outbox.advance(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("send: {e}"),
            }
        }
        let from = sender.local_addr().expect("addr");
        let mut bufs = RecvBuffers::new();
        for (r, receiver) in receivers.iter().enumerate() {
            let mut got = Vec::new();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while got.len() < 3 && std::time::Instant::now() < deadline {
                let _ = bufs.recv(receiver, |who, data| {
                    assert_eq!(who, from);
                    got.push(data.to_vec());
                });
            }
            let want: Vec<Vec<u8>> =
                (0..6u8).filter(|i| usize::from(i % 2) == r).map(|i| vec![i; 50]).collect();
            assert_eq!(got, want);
        }
    }
}
