//! [`Flags::Multishot`](super::Flags::Multishot): one `RecvMsgMulti` per socket, armed once
//! (again only when the kernel ends it), receiving into a ring of provided buffers that all
//! sockets share; each buffer goes back to the ring once its datagram is copied to a send.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

use io_uring::types::{BufRingEntry, RecvMsgOut};
use io_uring::{IoUring, cqueue, opcode, types};

use super::{Sends, push, turn};
use crate::relay::raw::Table;

/// Provided buffers (a power of two, at most 32,768).
const BUFFERS: u16 = 1024;
/// A provided buffer: the `io_uring_recvmsg_out` header, the source address and a datagram
/// of up to about 2 KiB (the bench's are 76 bytes; a longer one is truncated).
const BUFFER: usize = 2048;
const GROUP: u16 = 0;
/// The source address room asked for: either family's.
const NAME: usize = size_of::<libc::sockaddr_in6>();

/// The provided-buffer ring: its entries (page-aligned, registered with the kernel) and the
/// buffers they point at.
struct Buffers {
    entries: *mut BufRingEntry,
    data: Vec<u8>,
    /// Entries handed to the kernel so far (wrapping), published at the ring's tail.
    tail: u16,
}

impl Buffers {
    fn register(ring: &IoUring) -> io::Result<Self> {
        let layout =
            std::alloc::Layout::from_size_align(usize::from(BUFFERS) * size_of::<BufRingEntry>(), 4096)
                .map_err(io::Error::other)?;
        // SAFETY: `layout` has a non-zero size; zeroed entries are valid (plain integers).
        let entries = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<BufRingEntry>();
        if entries.is_null() {
            return Err(io::Error::other("no memory for the buffer ring"));
        }
        let mut buffers = Self { entries, data: vec![0; usize::from(BUFFERS) * BUFFER], tail: 0 };
        // SAFETY: `entries` is page-aligned room for `BUFFERS` entries, never freed (`run`
        // leaves it to the kernel).
        unsafe { ring.submitter().register_buf_ring_with_flags(entries as u64, BUFFERS, GROUP, 0)? };
        for bid in 0..BUFFERS {
            buffers.recycle(bid);
        }
        buffers.publish();
        Ok(buffers)
    }

    /// Buffer `bid` back to the kernel (seen at the next [`Buffers::publish`]).
    fn recycle(&mut self, bid: u16) {
        let at = usize::from(self.tail & (BUFFERS - 1));
        let addr = self.data.as_mut_ptr().wrapping_add(usize::from(bid) * BUFFER) as u64;
        // SAFETY: `at` < `BUFFERS`, inside the entries' allocation; the kernel reads only
        // entries between its head and the published tail, and this one is past the tail.
        let entry = unsafe { &mut *self.entries.add(at) };
        entry.set_addr(addr);
        entry.set_len(u32::try_from(BUFFER).unwrap_or(u32::MAX));
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Publishes the recycled entries: the ring's tail, a release store (the kernel's
    /// acquire load pairs with it).
    fn publish(&self) {
        // SAFETY: `entries` is the ring's first entry, initialised; the tail is a u16 the
        // kernel reads atomically, aligned as its entry is.
        let tail = unsafe { AtomicU16::from_ptr(BufRingEntry::tail(self.entries).cast_mut()) };
        tail.store(self.tail, Ordering::Release);
    }

    fn get(&self, bid: u16, len: usize) -> Option<&[u8]> {
        let start = usize::from(bid) * BUFFER;
        self.data.get(start..start + len.min(BUFFER))
    }
}

pub(super) fn run(
    mut ring: IoUring,
    sockets: &[std::net::UdpSocket],
    table: &Table,
    stop: &AtomicBool,
) -> io::Result<()> {
    let mut buffers = Buffers::register(&ring)?;
    let mut sends = Sends::new();
    // The header every receive was armed with: its name and control lengths say how the
    // kernel lays out each buffer.
    let mut template = Box::new(libc::msghdr {
        msg_name: std::ptr::null_mut(),
        msg_namelen: libc::socklen_t::try_from(NAME).unwrap_or(0),
        msg_iov: std::ptr::null_mut(),
        msg_iovlen: 0,
        msg_control: std::ptr::null_mut(),
        msg_controllen: 0,
        msg_flags: 0,
    });
    let result = forward(&mut ring, sockets, table, stop, &mut buffers, &mut sends, &mut template);
    // As in `super::run`: what the kernel may still point at is left to it.
    std::mem::forget(buffers);
    std::mem::forget(sends);
    std::mem::forget(template);
    result
}

fn forward(
    ring: &mut IoUring,
    sockets: &[std::net::UdpSocket],
    table: &Table,
    stop: &AtomicBool,
    buffers: &mut Buffers,
    sends: &mut Sends,
    template: &mut libc::msghdr,
) -> io::Result<()> {
    let arm = |j: usize, template: &libc::msghdr| {
        let fd = sockets.get(j).map_or(-1, AsRawFd::as_raw_fd);
        opcode::RecvMsgMulti::new(types::Fd(fd), template, GROUP).build().user_data(j as u64)
    };
    for j in 0..sockets.len() {
        push(ring, arm(j, template))?;
    }
    let mut done = Vec::new();
    loop {
        if let Err(stopped) = turn(ring, stop, &mut done) {
            return stopped;
        }
        for &(tag, result, flags) in &done {
            if sends.done(tag) {
                continue;
            }
            let Some(j) = usize::try_from(tag).ok().filter(|j| *j < sockets.len()) else { continue };
            if let Some(bid) = cqueue::buffer_select(flags) {
                let got = usize::try_from(result).ok().and_then(|n| buffers.get(bid, n));
                if let Some(out) = got.and_then(|b| RecvMsgOut::parse(b, template).ok())
                    && let Some(from) = source(out.name_data())
                {
                    sends.forward(ring, sockets, table, j, from, out.payload_data())?;
                }
                buffers.recycle(bid);
            }
            if !cqueue::more(flags) {
                // Ended (out of buffers, or an error): armed again.
                push(ring, arm(j, template))?;
            }
        }
        buffers.publish();
    }
}

/// A `sockaddr_in` or `sockaddr_in6` as the kernel wrote it.
fn source(name: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes(name.get(..2)?.try_into().ok()?));
    let port = u16::from_be_bytes(name.get(2..4)?.try_into().ok()?);
    match family {
        libc::AF_INET => {
            Some(SocketAddr::new(Ipv4Addr::from(<[u8; 4]>::try_from(name.get(4..8)?).ok()?).into(), port))
        }
        libc::AF_INET6 => {
            Some(SocketAddr::new(Ipv6Addr::from(<[u8; 16]>::try_from(name.get(8..24)?).ok()?).into(), port))
        }
        _ => None,
    }
}
