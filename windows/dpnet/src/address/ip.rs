//! `IDirectPlay8AddressIP` (`dpaddr.h`, DirectX 8): IP addresses as `SOCKADDR`s and as
//! (host, port) pairs, on the same object as `IDirectPlay8Address`.
//!
//! Its `this` is the address of the object's second interface pointer ([`State`]'s `ip`), so
//! every method first finds the object it belongs to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use dplay_wire::dp8::url::{CLSID_DP8SP_TCPIP, DirectPlayUrl, KEY_DEVICE, KEY_PORT, UrlValue};

use super::text::{check_out, copy_out, put, wide_nul, wide_until_nul};
use super::{Address, State, This, with_state};
use crate::codes::{
    DPNERR_INCOMPLETEADDRESS, DPNERR_INVALIDHOSTADDRESS, DPNERR_INVALIDPARAM, DPNERR_INVALIDPOINTER,
};
use crate::com::{GUID, HRESULT, IUnknownVtbl, S_OK};

/// `AF_INET` in a Windows `SOCKADDR`.
const AF_INET: u16 = 2;
/// `AF_INET6` in a Windows `SOCKADDR` (23; Linux's is 10).
const AF_INET6: u16 = 23;
/// `sizeof(SOCKADDR_IN)`.
const SOCKADDR_IN_LEN: usize = 16;
/// `sizeof(SOCKADDR_IN6)`.
const SOCKADDR_IN6_LEN: usize = 28;

/// `IDirectPlay8AddressIP`'s vtable, in `dpaddr.h`'s order.
#[repr(C)]
pub struct AddressIpVtbl {
    /// `QueryInterface`, `AddRef`, `Release` (the object's).
    pub unknown: IUnknownVtbl,
    /// `BuildFromSockAddr(pSockAddr)`.
    pub build_from_sock_addr: unsafe extern "system" fn(This, *const u8) -> HRESULT,
    /// `BuildAddress(wszAddress, usPort)`.
    pub build_address: unsafe extern "system" fn(This, *const u16, u16) -> HRESULT,
    /// `BuildLocalAddress(pguidAdapter, usPort)`.
    pub build_local_address: unsafe extern "system" fn(This, *const GUID, u16) -> HRESULT,
    /// `GetSockAddress(pSockAddr, pdwSockAddrBufferSize)`.
    pub get_sock_address: unsafe extern "system" fn(This, *mut u8, *mut u32) -> HRESULT,
    /// `GetLocalAddress(pguidAdapter, pusPort)`.
    pub get_local_address: unsafe extern "system" fn(This, *mut GUID, *mut u16) -> HRESULT,
    /// `GetAddress(wszAddress, pdwAddressLength, psPort)`.
    pub get_address: unsafe extern "system" fn(This, *mut u16, *mut u32, *mut u16) -> HRESULT,
}

pub(super) static IP_VTBL: AddressIpVtbl = AddressIpVtbl {
    unknown: IUnknownVtbl { query_interface, add_ref, release },
    build_from_sock_addr,
    build_address,
    build_local_address,
    get_sock_address,
    get_local_address,
    get_address,
};

/// The object's `IDirectPlay8Address` pointer from its `IDirectPlay8AddressIP` pointer.
fn main_of(this: This) -> This {
    // `ip` is the first field of `State`, which is the object's `inner`.
    this.cast::<u8>().wrapping_sub(std::mem::offset_of!(Address, inner)).cast()
}

unsafe extern "system" fn query_interface(this: This, riid: *const GUID, ppv: *mut This) -> HRESULT {
    // SAFETY: `this` is our IP interface pointer.
    unsafe { super::query_interface(main_of(this), riid, ppv) }
}

unsafe extern "system" fn add_ref(this: This) -> u32 {
    // SAFETY: as `query_interface`.
    unsafe { Address::add_ref(main_of(this)) }
}

unsafe extern "system" fn release(this: This) -> u32 {
    // SAFETY: as `query_interface`; the caller gives up its reference.
    unsafe { Address::release(main_of(this)) }
}

/// Runs an IP method body on the object's state.
///
/// # Safety
/// `this` is our IP interface pointer.
unsafe fn with_ip(this: This, body: impl FnOnce(&State) -> HRESULT) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { with_state(main_of(this), body) }
}

/// The `SOCKADDR_IN` or `SOCKADDR_IN6` at `p`, as Windows lays them out.
///
/// # Safety
/// `p` is non-null and holds a whole `SOCKADDR` of the family its first two bytes name.
unsafe fn read_sockaddr(p: *const u8) -> Option<SocketAddr> {
    // SAFETY: the family is always there.
    let family = u16::from_le_bytes(unsafe { [p.read(), p.add(1).read()] });
    let len = match family {
        AF_INET => SOCKADDR_IN_LEN,
        AF_INET6 => SOCKADDR_IN6_LEN,
        _ => return None,
    };
    // SAFETY: a SOCKADDR of that family has `len` bytes.
    let b = unsafe { std::slice::from_raw_parts(p, len) };
    let port = u16::from_be_bytes([b[2], b[3]]);
    let ip = match family {
        AF_INET => IpAddr::V4(Ipv4Addr::new(b[4], b[5], b[6], b[7])),
        _ => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(&b[8..24]).ok()?)),
    };
    Some(SocketAddr::new(ip, port))
}

/// `addr` as a Windows `SOCKADDR_IN` or `SOCKADDR_IN6`.
fn sockaddr_bytes(addr: SocketAddr) -> Vec<u8> {
    let mut b = Vec::with_capacity(SOCKADDR_IN6_LEN);
    match addr {
        SocketAddr::V4(a) => {
            b.extend_from_slice(&AF_INET.to_le_bytes());
            b.extend_from_slice(&a.port().to_be_bytes());
            b.extend_from_slice(&a.ip().octets());
            b.resize(SOCKADDR_IN_LEN, 0);
        }
        SocketAddr::V6(a) => {
            b.extend_from_slice(&AF_INET6.to_le_bytes());
            b.extend_from_slice(&a.port().to_be_bytes());
            b.extend_from_slice(&a.flowinfo().to_be_bytes());
            b.extend_from_slice(&a.ip().octets());
            b.extend_from_slice(&a.scope_id().to_le_bytes());
        }
    }
    b
}

unsafe extern "system" fn build_from_sock_addr(this: This, sockaddr: *const u8) -> HRESULT {
    // SAFETY: `this` is ours; the game vouches for the SOCKADDR.
    unsafe {
        with_ip(this, |st| {
            if sockaddr.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            let Some(addr) = read_sockaddr(sockaddr) else { return DPNERR_INVALIDPARAM };
            *st.url() = DirectPlayUrl::ip(&addr.ip().to_string(), addr.port());
            S_OK
        })
    }
}

unsafe extern "system" fn build_address(this: This, host: *const u16, port: u16) -> HRESULT {
    // SAFETY: `this` is ours; `host` is checked before it is read.
    unsafe {
        with_ip(this, |st| {
            if host.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            let host =
                wide_until_nul(host).and_then(|w| String::from_utf16(&w).ok()).filter(|h| !h.is_empty());
            let Some(host) = host else { return DPNERR_INVALIDPARAM };
            *st.url() = DirectPlayUrl::ip(&host, port);
            S_OK
        })
    }
}

unsafe extern "system" fn build_local_address(this: This, adapter: *const GUID, port: u16) -> HRESULT {
    // SAFETY: `this` is ours; `adapter` is checked before it is read.
    unsafe {
        with_ip(this, |st| {
            if adapter.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            *st.url() = DirectPlayUrl::new(CLSID_DP8SP_TCPIP)
                .with_value(KEY_DEVICE, UrlValue::Guid(adapter.read_unaligned().to_uuid()))
                .with_value(KEY_PORT, UrlValue::Dword(port.into()));
            S_OK
        })
    }
}

unsafe extern "system" fn get_sock_address(this: This, buf: *mut u8, size: *mut u32) -> HRESULT {
    // SAFETY: `this` is ours; `copy_out` checks the buffer and its size.
    unsafe {
        with_ip(this, |st| {
            if let Err(hr) = check_out(buf, size) {
                return hr;
            }
            let (host, port) = {
                let url = st.url();
                (url.hostname().map(str::to_owned), url.port().unwrap_or(0))
            };
            let Some(host) = host else { return DPNERR_INCOMPLETEADDRESS };
            // A literal needs no lookup; a name is resolved as Windows does, without our lock.
            let addr = match host.parse::<IpAddr>() {
                Ok(ip) => Some(SocketAddr::new(ip, port)),
                Err(_) => {
                    (host.as_str(), port).to_socket_addrs().ok().and_then(|mut a| a.find(SocketAddr::is_ipv4))
                }
            };
            match addr {
                Some(addr) => copy_out(&sockaddr_bytes(addr), buf, size),
                None => DPNERR_INVALIDHOSTADDRESS,
            }
        })
    }
}

unsafe extern "system" fn get_local_address(this: This, adapter: *mut GUID, port: *mut u16) -> HRESULT {
    // SAFETY: `this` is ours; `put` checks the pointers.
    unsafe {
        with_ip(this, |st| {
            if adapter.is_null() || port.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            let url = st.url();
            let Some(device) = url.device() else { return DPNERR_INCOMPLETEADDRESS };
            put(adapter, GUID::from_uuid(device));
            put(port, url.port().unwrap_or(0))
        })
    }
}

unsafe extern "system" fn get_address(this: This, buf: *mut u16, chars: *mut u32, port: *mut u16) -> HRESULT {
    // SAFETY: `this` is ours; the pointers are checked before use.
    unsafe {
        with_ip(this, |st| {
            if port.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            if let Err(hr) = check_out(buf, chars) {
                return hr;
            }
            let url = st.url();
            let Some(host) = url.hostname() else { return DPNERR_INCOMPLETEADDRESS };
            let hr = copy_out(&wide_nul(host), buf, chars);
            if hr == S_OK {
                put(port, url.port().unwrap_or(0));
            }
            hr
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddrs_round_trip_in_the_windows_layout() {
        let v4: SocketAddr = "192.0.2.7:2302".parse().unwrap();
        let b = sockaddr_bytes(v4);
        assert_eq!(b, [2, 0, 0x08, 0xFE, 192, 0, 2, 7, 0, 0, 0, 0, 0, 0, 0, 0]);
        // SAFETY: a whole SOCKADDR_IN.
        assert_eq!(unsafe { read_sockaddr(b.as_ptr()) }, Some(v4));
        let v6: SocketAddr = "[2001:db8::1]:6073".parse().unwrap();
        let b = sockaddr_bytes(v6);
        assert_eq!((b.len(), &b[..4]), (28, &[23, 0, 0x17, 0xB9][..]));
        // SAFETY: a whole SOCKADDR_IN6.
        assert_eq!(unsafe { read_sockaddr(b.as_ptr()) }, Some(v6));
        // SAFETY: two readable bytes naming an unknown family.
        assert_eq!(unsafe { read_sockaddr([9u8, 0].as_ptr()) }, None);
    }
}
