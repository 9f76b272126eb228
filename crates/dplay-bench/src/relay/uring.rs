//! An EXPERIMENT (issue 23; docs/PERFORMANCE.md, "io_uring under the floor?"): the raw
//! forwarder ([`super::raw`]) on io_uring instead of epoll + `recvmmsg` + `sendmmsg`, to see
//! whether another system-call interface gets under the floor on this machine.
//!
//! Same forwarding table ([`raw::Table`]), same 32 endpoint sockets with the same buffers, one
//! thread pinned as the others. One ring; one `RecvMsg` armed per socket, re-armed when it
//! completes; each received datagram becomes one `SendMsg` from the right endpoint's socket,
//! its buffer, iovec, address and header kept (in a boxed slot) until its completion. A turn
//! is one `io_uring_enter`: `submit_and_wait(1)` submits the sends and re-arms the last turn
//! queued and waits for one completion; then the completion queue is drained. No SQPOLL (a
//! kernel thread polling would spend a core outside this thread's accounting).
//!
//! The sockets stay blocking: io_uring then arms its own poll for a receive with nothing
//! queued (an `O_NONBLOCK` socket would complete it at once with EAGAIN).

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use io_uring::{IoUring, opcode, squeue, types};
use nix::sys::socket::{SockaddrLike, SockaddrStorage};

use super::raw::{self, MAX_DATAGRAM, Table};

mod multishot;

/// Which ring setup flags to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flags {
    /// None: completions run as task work when the kernel interrupts the thread.
    Plain,
    /// `IORING_SETUP_COOP_TASKRUN | SINGLE_ISSUER | DEFER_TASKRUN`: completions' task work
    /// deferred to this thread's next `io_uring_enter`, no interrupt to run it.
    Deferred,
    /// As [`Flags::Deferred`], with one multishot `RecvMsgMulti` per socket (armed once)
    /// into a ring of provided buffers shared by all sockets.
    Multishot,
}

impl Flags {
    /// The forwarder thread's name (at most 15 bytes: Linux's `comm`).
    pub const fn thread(self) -> &'static str {
        match self {
            Self::Plain => "bench-uring-rly",
            Self::Deferred => "bench-uring-dfr",
            Self::Multishot => "bench-uring-mul",
        }
    }
}

/// Submission queue entries: 32 re-arms and a turn's sends fit many times over.
const ENTRIES: u32 = 1024;
/// Sends in flight at most; a datagram beyond them is dropped.
const SEND_SLOTS: usize = 512;
/// `user_data` of a send's completion: this bit and its slot; a receive's is its endpoint.
const SEND: u64 = 1 << 32;

/// A running forwarder; dropping it stops its thread.
#[derive(Debug)]
pub struct Forwarder {
    endpoints: Vec<SocketAddr>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Forwarder {
    /// One endpoint socket per member on `ip`, endpoint `j` member `j`'s, forwarding on a
    /// thread named by [`Flags::thread`].
    pub fn spawn(ip: IpAddr, members: &[SocketAddr], flags: Flags) -> io::Result<Self> {
        let sockets: Vec<UdpSocket> = (0..members.len())
            .map(|_| raw::bind_blocking(SocketAddr::new(ip, 0)))
            .collect::<io::Result<_>>()?;
        let endpoints = sockets.iter().map(UdpSocket::local_addr).collect::<io::Result<_>>()?;
        let table = Table::new(members);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let (started, ok) = std::sync::mpsc::sync_channel(1);
        // The ring is made on its thread: SINGLE_ISSUER binds it to its maker.
        let thread = std::thread::Builder::new().name(flags.thread().into()).spawn(move || {
            let ring = ring(flags);
            let _ =
                started.send(ring.as_ref().map(|_| ()).map_err(|e| io::Error::new(e.kind(), e.to_string())));
            if flags == Flags::Multishot {
                multishot::run(ring?, &sockets, &table, &flag)
            } else {
                run(ring?, &sockets, &table, &flag)
            }
        })?;
        ok.recv().map_err(|_| io::Error::other("uring forwarder gone"))??;
        Ok(Self { endpoints, stop, thread: Some(thread) })
    }

    /// The endpoints' addresses, by member.
    pub fn endpoints(&self) -> &[SocketAddr] {
        &self.endpoints
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // A stranger's datagram completes a receive: the thread sees `stop`.
        if let Some(to) = self.endpoints.first()
            && let Ok(s) = UdpSocket::bind(SocketAddr::new(to.ip(), 0))
        {
            let _ = s.send_to(b"stop", to);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn ring(flags: Flags) -> io::Result<IoUring> {
    let mut builder = IoUring::builder();
    if flags != Flags::Plain {
        builder.setup_coop_taskrun().setup_single_issuer().setup_defer_taskrun();
    }
    builder.build(ENTRIES)
}

/// A message header with its iovec, address and buffer, boxed so that the pointers the
/// kernel holds stay put until the completion.
struct Slot {
    hdr: libc::msghdr,
    iov: libc::iovec,
    /// Large enough for either family; the kernel writes a receive's source here.
    name: libc::sockaddr_in6,
    data: Vec<u8>,
}

impl Slot {
    fn new(capacity: usize) -> Box<Self> {
        let mut slot = Box::new(Self {
            hdr: libc::msghdr {
                msg_name: std::ptr::null_mut(),
                msg_namelen: 0,
                msg_iov: std::ptr::null_mut(),
                msg_iovlen: 1,
                msg_control: std::ptr::null_mut(),
                msg_controllen: 0,
                msg_flags: 0,
            },
            iov: libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 },
            name: libc::sockaddr_in6 {
                sin6_family: 0,
                sin6_port: 0,
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr { s6_addr: [0; 16] },
                sin6_scope_id: 0,
            },
            data: vec![0; capacity],
        });
        slot.hdr.msg_iov = &raw mut slot.iov;
        slot.hdr.msg_name = (&raw mut slot.name).cast();
        slot
    }

    /// Ready to receive into the whole buffer.
    fn arm_receive(&mut self) -> *mut libc::msghdr {
        self.iov = libc::iovec { iov_base: self.data.as_mut_ptr().cast(), iov_len: self.data.len() };
        self.hdr.msg_namelen = socklen(size_of::<libc::sockaddr_in6>());
        &raw mut self.hdr
    }

    /// Ready to send `data` to `to`.
    fn arm_send(&mut self, data: &[u8], to: SocketAddr) -> *const libc::msghdr {
        self.data.clear();
        self.data.extend_from_slice(data);
        self.iov = libc::iovec { iov_base: self.data.as_mut_ptr().cast(), iov_len: self.data.len() };
        let to = SockaddrStorage::from(to);
        let len = (to.len() as usize).min(size_of::<libc::sockaddr_in6>());
        // SAFETY: `to.as_ptr()` points at `to.len()` valid bytes (nix); `len` fits `name`.
        unsafe {
            std::ptr::copy_nonoverlapping(to.as_ptr().cast::<u8>(), (&raw mut self.name).cast::<u8>(), len)
        };
        self.hdr.msg_namelen = socklen(len);
        &raw const self.hdr
    }

    /// The source of the datagram just received. An IPv4 `sockaddr_in` overlays the IPv6
    /// one: family and port at the same offsets, the address where `sin6_flowinfo` is.
    fn source(&self) -> Option<SocketAddr> {
        let port = u16::from_be(self.name.sin6_port);
        match i32::from(self.name.sin6_family) {
            libc::AF_INET => {
                Some(SocketAddr::new(Ipv4Addr::from(self.name.sin6_flowinfo.to_ne_bytes()).into(), port))
            }
            libc::AF_INET6 => {
                let ip = Ipv6Addr::from(self.name.sin6_addr.s6_addr);
                Some(SocketAddrV6::new(ip, port, self.name.sin6_flowinfo, self.name.sin6_scope_id).into())
            }
            _ => None,
        }
    }
}

fn socklen(n: usize) -> libc::socklen_t {
    libc::socklen_t::try_from(n).unwrap_or(0)
}

fn run(mut ring: IoUring, sockets: &[UdpSocket], table: &Table, stop: &AtomicBool) -> io::Result<()> {
    let mut receives: Vec<Box<Slot>> = sockets.iter().map(|_| Slot::new(MAX_DATAGRAM)).collect();
    let mut sends = Sends::new();
    let result = forward(&mut ring, sockets, table, stop, &mut receives, &mut sends);
    // Receives are still armed, and the kernel holds their slots' addresses until the ring is
    // torn down, which it may finish after this thread: the slots are left to it (a few MiB
    // per forwarder, once per phase of the bench).
    std::mem::forget(receives);
    std::mem::forget(sends);
    result
}

fn forward(
    ring: &mut IoUring,
    sockets: &[UdpSocket],
    table: &Table,
    stop: &AtomicBool,
    receives: &mut [Box<Slot>],
    sends: &mut Sends,
) -> io::Result<()> {
    // Completions drained in a turn, handled after (the queue borrows the ring).
    let mut done = Vec::new();
    for (j, slot) in receives.iter_mut().enumerate() {
        push(ring, receive(sockets, j, slot))?;
    }
    loop {
        if let Err(stopped) = turn(ring, stop, &mut done) {
            return stopped;
        }
        for &(tag, result, _) in &done {
            if sends.done(tag) {
                continue;
            }
            let Some(j) = usize::try_from(tag).ok().filter(|j| *j < sockets.len()) else { continue };
            let Some(slot) = receives.get_mut(j) else { continue };
            let got = usize::try_from(result).ok().and_then(|n| slot.data.get(..n));
            if let Some((data, from)) = got.zip(slot.source()) {
                sends.forward(ring, sockets, table, j, from, data)?;
            }
            push(ring, receive(sockets, j, slot))?;
        }
    }
}

/// One turn: one `io_uring_enter` submitting what is queued and waiting for a completion,
/// then the completion queue drained into `done` (`user_data`, result, flags). `Err(Ok)`
/// when told to stop.
pub(super) fn turn(
    ring: &mut IoUring,
    stop: &AtomicBool,
    done: &mut Vec<(u64, i32, u32)>,
) -> Result<(), io::Result<()>> {
    loop {
        if stop.load(Ordering::Acquire) {
            return Err(Ok(()));
        }
        match ring.submit_and_wait(1) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Err(e)),
            Ok(_) => break,
        }
    }
    done.clear();
    done.extend(ring.completion().map(|c| (c.user_data(), c.result(), c.flags())));
    Ok(())
}

/// The sends in flight, each in a slot of its own until its completion.
pub(super) struct Sends {
    #[allow(clippy::vec_box)] // a slot's header points into itself: it must not move
    slots: Vec<Box<Slot>>,
    free: Vec<usize>,
}

impl Sends {
    pub(super) fn new() -> Self {
        Self {
            slots: (0..SEND_SLOTS).map(|_| Slot::new(2048)).collect(),
            free: (0..SEND_SLOTS).rev().collect(),
        }
    }

    /// Queues `data`, received from `from` at endpoint `at`, where the table says; dropped
    /// when the table says nowhere or every slot is in flight.
    pub(super) fn forward(
        &mut self,
        ring: &mut IoUring,
        sockets: &[UdpSocket],
        table: &Table,
        at: usize,
        from: SocketAddr,
        data: &[u8],
    ) -> io::Result<()> {
        let Some((i, to)) = table.route(at, from) else { return Ok(()) };
        let Some(k) = self.free.pop() else { return Ok(()) };
        let (Some(send), Some(socket)) = (self.slots.get_mut(k), sockets.get(i)) else { return Ok(()) };
        let entry = opcode::SendMsg::new(types::Fd(socket.as_raw_fd()), send.arm_send(data, to))
            .build()
            .user_data(SEND | k as u64);
        push(ring, entry)
    }

    /// Whether `tag` is a send's completion; its slot is free again (sent or refused: a
    /// refused datagram is lost).
    pub(super) fn done(&mut self, tag: u64) -> bool {
        if tag & SEND == 0 {
            return false;
        }
        self.free.extend(usize::try_from(tag & !SEND).ok());
        true
    }
}

/// The receive on endpoint `j` into `slot`.
fn receive(sockets: &[UdpSocket], j: usize, slot: &mut Slot) -> squeue::Entry {
    let fd = sockets.get(j).map_or(-1, AsRawFd::as_raw_fd);
    opcode::RecvMsg::new(types::Fd(fd), slot.arm_receive()).build().user_data(j as u64)
}

/// Queues `entry`, submitting what is queued first if the queue is full.
pub(super) fn push(ring: &mut IoUring, entry: squeue::Entry) -> io::Result<()> {
    for _ in 0..2 {
        // SAFETY: every entry's message header, iovec, address and buffer are in a boxed
        // `Slot` that is neither moved, re-armed nor freed until the entry's completion
        // (receives: one armed per endpoint at a time; sends: the slot leaves `free` until
        // its completion), and all of them outlive the ring (`run` forgets them).
        if unsafe { ring.submission().push(&entry) }.is_ok() {
            return Ok(());
        }
        ring.submit()?;
    }
    Err(io::Error::other("submission queue full"))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Duration;

    /// As the raw forwarder's: forwarded by the fixed table only, with either flag set.
    #[test]
    fn forwards_by_the_fixed_table_only() {
        for flags in [Flags::Plain, Flags::Deferred, Flags::Multishot] {
            let local = SocketAddr::from(([127, 0, 0, 1], 0));
            let bind = || {
                let s = UdpSocket::bind(local).expect("bind");
                s.set_read_timeout(Some(Duration::from_millis(300))).expect("timeout");
                s
            };
            let members = [bind(), bind(), bind()];
            let addrs: Vec<SocketAddr> = members.iter().map(|m| m.local_addr().expect("addr")).collect();
            let forwarder = Forwarder::spawn(local.ip(), &addrs, flags).expect("spawn");
            let ends = forwarder.endpoints().to_vec();
            let stranger = bind();
            stranger.send_to(b"nobody", ends[2]).expect("send");
            members[1].send_to(b"self", ends[1]).expect("send");
            members[0].send_to(b"zero to two", ends[2]).expect("send");
            members[2].send_to(b"two to one", ends[1]).expect("send");
            let mut buf = [0u8; 64];
            let (n, from) = members[2].recv_from(&mut buf).expect("forwarded");
            assert_eq!((&buf[..n], from), (&b"zero to two"[..], ends[0]));
            let (n, from) = members[1].recv_from(&mut buf).expect("forwarded");
            assert_eq!((&buf[..n], from), (&b"two to one"[..], ends[2]));
            for m in &members {
                assert!(m.recv_from(&mut buf).is_err(), "nothing else is forwarded");
            }
        }
    }
}
