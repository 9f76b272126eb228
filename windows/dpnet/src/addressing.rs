//! The DLL's side of IDirectPlay8Address (`dpaddr.h`): reading the URL of an address a game
//! passes in, making address objects for the callbacks, and turning a TCP/IP URL into a socket
//! address.

use std::ffi::c_void;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

use dplay_wire::dp8::url::DirectPlayUrl;

use crate::com::HRESULT;
use crate::dpn;

/// The DirectPlay 8 default port (MS-DPDX 2.1): where a host listens, and where EnumQuery goes
/// when the host address names no port.
pub(crate) const DEFAULT_PORT: u16 = 6073;

/// The URL of any IDirectPlay8Address, read through its vtable.
///
/// # Safety
/// `addr` is null or a live IDirectPlay8Address.
pub(crate) unsafe fn url_of(addr: *mut c_void) -> Result<DirectPlayUrl, HRESULT> {
    if addr.is_null() {
        return Err(dpn::DPNERR_INVALIDPOINTER);
    }
    // SAFETY: forwarded from the caller.
    unsafe { crate::address::address_url(addr) }
}

/// A new IDirectPlay8Address holding `url`, with one reference.
pub(crate) fn new_address(url: &DirectPlayUrl) -> *mut c_void {
    crate::address::create_address(url)
}

/// The IPv4 socket address a TCP/IP URL names: its `hostname` (a name is resolved), or
/// `default_ip` without one; its `port`, or `default_port` without one.
pub(crate) fn socket_of(url: &DirectPlayUrl, default_ip: IpAddr, default_port: u16) -> Option<SocketAddr> {
    let port = url.port().unwrap_or(default_port);
    match url.hostname() {
        None => Some(SocketAddr::new(default_ip, port)),
        Some(h) => match h.parse::<IpAddr>() {
            Ok(ip) => Some(SocketAddr::new(ip, port)),
            Err(_) => (h, port).to_socket_addrs().ok()?.find(SocketAddr::is_ipv4),
        },
    }
}

/// The URL of a TCP/IP address as Windows writes it.
pub(crate) fn url_for(addr: SocketAddr) -> DirectPlayUrl {
    DirectPlayUrl::ip(&addr.ip().to_string(), addr.port())
}

/// The local address to bind for a device address: its port (0: any), on the interface its
/// `hostname` names when that is an IP address (the adapter the game chose), else on every one.
pub(crate) fn bind_for(device: Option<&DirectPlayUrl>) -> SocketAddr {
    let port = device.and_then(DirectPlayUrl::port).unwrap_or(0);
    let ip = device.and_then(DirectPlayUrl::hostname).and_then(|h| h.parse().ok());
    SocketAddr::new(ip.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)), port)
}
