//! Opening sockets with the options a busy session needs.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Socket, Type};

/// Kernel buffer asked for on each UDP socket. The default (about 200 KiB on Linux) overflows
/// when thousands of connections send at once; the kernel caps the request at its own limit
/// (`net.core.rmem_max`), so asking for more is harmless.
pub(crate) const UDP_BUFFER: usize = 4 << 20;

/// Binds a non-blocking UDP socket on `addr` with [`UDP_BUFFER`]-sized kernel buffers.
pub(crate) fn bind_udp(addr: SocketAddr) -> io::Result<mio::net::UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(socket2::Protocol::UDP))?;
    // A smaller buffer than asked for still works, only with more drops under load.
    if let Err(e) = socket.set_recv_buffer_size(UDP_BUFFER) {
        tracing::debug!("cannot enlarge the receive buffer of {addr}: {e}");
    }
    if let Err(e) = socket.set_send_buffer_size(UDP_BUFFER) {
        tracing::debug!("cannot enlarge the send buffer of {addr}: {e}");
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    Ok(mio::net::UdpSocket::from_std(socket.into()))
}
