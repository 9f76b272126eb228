//! Errors the runtime reports, each saying what to do about it.

use std::io;
use std::net::{IpAddr, SocketAddr};

/// Why the runtime could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The address is taken by another socket.
    #[error("{addr} is already in use: stop the program using it or choose another port with --bind")]
    AddrInUse {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address is not one of this machine's.
    #[error("cannot bind {addr}: it is not an address of this machine; use 0.0.0.0 or a local address")]
    AddrNotAvailable {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Every port of a range is taken.
    #[error(
        "no free port in {first}-{last} on {ip}: stop other programs using these ports (other DirectPlay games or hosts)"
    )]
    NoFreePort {
        /// The local address.
        ip: IpAddr,
        /// First port tried.
        first: u16,
        /// Last port tried.
        last: u16,
    },
    /// The protocol refused its configuration.
    #[error("cannot start the protocol: {0}")]
    Protocol(String),
    /// Any other failure to open the socket.
    #[error("cannot open a socket on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: io::Error,
    },
    /// The event loop failed (poll, waker, thread).
    #[error("the network thread failed: {0}")]
    Io(#[from] io::Error),
    /// The runtime has stopped, so it cannot take commands.
    #[error("the runtime has stopped")]
    Stopped,
}

impl RuntimeError {
    pub(crate) fn bind(addr: SocketAddr, source: io::Error) -> Self {
        match source.kind() {
            io::ErrorKind::AddrInUse => Self::AddrInUse { addr },
            io::ErrorKind::AddrNotAvailable => Self::AddrNotAvailable { addr },
            _ => Self::Bind { addr, source },
        }
    }
}
