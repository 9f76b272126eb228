//! What sockets a runtime opens ([`SocketSpec`]) and opening them: one address, or the first
//! free port of a range (MC-DPL4CS 2.1: game ports "in the range from 2300 to 2400").

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::ops::RangeInclusive;

use mio::net::{TcpListener, TcpStream, UdpSocket};
use socket2::{Domain, Socket, Type};

use crate::RuntimeError;

/// UDP or a TCP listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SocketKind {
    /// A UDP socket; `broadcast` sets SO_BROADCAST, so it may send to 255.255.255.255.
    Udp {
        /// Allow sending broadcasts.
        broadcast: bool,
    },
    /// A TCP listener; connections it accepts are handed to [`crate::Protocol::handle_stream`].
    TcpListener,
}

/// One socket to open: its kind, address and the ports to try in order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SocketSpec {
    /// UDP or TCP listener.
    pub kind: SocketKind,
    /// The local address (unspecified: all addresses).
    pub ip: IpAddr,
    /// Ports tried in order; the first free one is taken. `0..=0`: any free port.
    pub ports: RangeInclusive<u16>,
    /// Left closed at start: opened when the protocol asks ([`crate::Protocol::poll_open`]).
    pub on_demand: bool,
}

impl SocketSpec {
    /// A UDP socket on `addr` (port 0: any free port).
    pub fn udp(addr: SocketAddr) -> Self {
        let ports = addr.port()..=addr.port();
        Self { kind: SocketKind::Udp { broadcast: false }, ip: addr.ip(), ports, on_demand: false }
    }

    /// A TCP listener on `addr` (port 0: any free port).
    pub fn tcp_listener(addr: SocketAddr) -> Self {
        Self {
            kind: SocketKind::TcpListener,
            ip: addr.ip(),
            ports: addr.port()..=addr.port(),
            on_demand: false,
        }
    }

    /// The same socket on the first free port of `ports`.
    #[must_use]
    pub fn first_free(mut self, ports: RangeInclusive<u16>) -> Self {
        self.ports = ports;
        self
    }

    /// The same socket, left closed until the protocol asks for it
    /// ([`crate::Protocol::poll_open`]); [`crate::Runtime::socket_addr`] gives the address asked
    /// for (its first port), and [`crate::Protocol::handle_opened`] the one bound.
    #[must_use]
    pub fn on_demand(mut self) -> Self {
        self.on_demand = true;
        self
    }

    /// The same socket with SO_BROADCAST set when it is UDP.
    #[must_use]
    pub fn broadcast(mut self) -> Self {
        if let SocketKind::Udp { broadcast } = &mut self.kind {
            *broadcast = true;
        }
        self
    }
}

/// An open socket.
pub(crate) enum Bound {
    Udp(UdpSocket),
    Listener(TcpListener),
    /// An [`SocketSpec::on_demand`] socket not opened yet.
    Closed(SocketSpec),
}

impl Bound {
    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Self::Udp(s) => s.local_addr(),
            Self::Listener(l) => l.local_addr(),
            Self::Closed(spec) => Ok(SocketAddr::new(spec.ip, *spec.ports.start())),
        }
    }
}

/// Opens `spec` on the first port of its range that is free.
pub(crate) fn open(spec: &SocketSpec) -> Result<Bound, RuntimeError> {
    let (first, last) = (*spec.ports.start(), *spec.ports.end());
    for port in spec.ports.clone() {
        let addr = SocketAddr::new(spec.ip, port);
        let opened = match spec.kind {
            SocketKind::Udp { broadcast } => crate::socket::bind_udp(addr).and_then(|s| {
                s.set_broadcast(broadcast)?;
                Ok(Bound::Udp(s))
            }),
            SocketKind::TcpListener => listen(addr).map(Bound::Listener),
        };
        match opened {
            Ok(bound) => return Ok(bound),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && first != last => {}
            Err(e) => return Err(RuntimeError::bind(addr, e)),
        }
    }
    Err(RuntimeError::NoFreePort { ip: spec.ip, first, last })
}

/// Starts a non-blocking TCP connection to `to`, from `from` (any port) when given. A peer
/// answers at the address a connection comes from with the port our headers name
/// (MC-DPL4CS 2.2.1, 3.2.5.3; docs/decisions.md), so an endpoint bound to one address must
/// connect from it too, not from whatever address the route picks.
pub(crate) fn connect(from: Option<IpAddr>, to: SocketAddr) -> io::Result<TcpStream> {
    let Some(ip) = from else { return TcpStream::connect(to) };
    let socket = Socket::new(Domain::for_address(to), Type::STREAM, Some(socket2::Protocol::TCP))?;
    socket.set_nonblocking(true)?;
    socket.bind(&SocketAddr::new(ip, 0).into())?;
    match socket.connect(&to.into()) {
        Err(e) if !in_progress(&e) => return Err(e),
        _ => {}
    }
    Ok(TcpStream::from_std(socket.into()))
}

/// Whether a non-blocking connect's error only says it goes on in the background.
fn in_progress(e: &io::Error) -> bool {
    #[cfg(unix)]
    if e.raw_os_error() == Some(nix::errno::Errno::EINPROGRESS as i32) {
        return true;
    }
    e.kind() == io::ErrorKind::WouldBlock
}

/// A non-blocking TCP listener on `addr`. SO_REUSEADDR lets a restarted host take its port
/// back while old connections linger in TIME_WAIT.
fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(socket2::Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(128)?;
    Ok(TcpListener::from_std(socket.into()))
}
