//! The bodies of the methods Peer, Client and Server share, as `extern "system"` functions
//! generic over the vtable type (the object layout does not depend on it). Each only checks
//! and converts its arguments and calls [`Core`]; each runs inside [`guard`].

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

use dplay_wire::dp8::dpnid::Dpnid;

use crate::addressing;
use crate::com::{GUID, HRESULT, Object, guard};
use crate::core::{AppDesc, Core};
use crate::dpn::{self, *};
use crate::protocol::Command;

/// What every DirectPlay 8 object of the DLL holds: its [`Core`]. Releasing the last reference
/// closes it (threads and sockets end).
pub(crate) struct Dp8 {
    pub(crate) core: Arc<Core>,
}

impl Drop for Dp8 {
    fn drop(&mut self) {
        let _ = guard(DPNERR_GENERIC, || self.core.close(true));
    }
}

/// The core of the object behind `this`.
///
/// # Safety
/// `this` is an object of ours with a [`Dp8`] state.
pub(crate) unsafe fn core<'a, V: 'static>(this: *mut c_void) -> &'a Arc<Core> {
    // SAFETY: forwarded from the caller.
    &unsafe { Object::<V, Dp8>::from_this(this) }.inner.core
}

/// Runs `body` with the object's core, answering DPNERR_UNINITIALIZED before Initialize.
fn initialized<V: 'static>(this: *mut c_void, body: impl FnOnce(&Arc<Core>) -> HRESULT) -> HRESULT {
    guard(DPNERR_GENERIC, || {
        // SAFETY: COM calls us with our own object.
        let core = unsafe { core::<V>(this) };
        match core.check_init() {
            Ok(()) => body(core),
            Err(e) => e,
        }
    })
}

/// An asynchronous operation's answer: DPNSUCCESS_PENDING with `*handle` set, or DPN_OK for a
/// synchronous one.
fn pending(result: Result<u32, HRESULT>, out: *mut u32, sync: bool) -> HRESULT {
    match result {
        Ok(_) if sync => DPN_OK,
        Ok(h) => {
            if !out.is_null() {
                // SAFETY: the game's out pointer.
                unsafe { *out = h };
            }
            DPNSUCCESS_PENDING
        }
        Err(e) => e,
    }
}

/// Copies `items` to the game's array `buf` of `*count` places; DPNERR_BUFFERTOOSMALL with the
/// count needed when it is too short.
fn write_array<T: Copy>(buf: *mut T, count: *mut u32, items: &[T]) -> HRESULT {
    if count.is_null() {
        return DPNERR_INVALIDPOINTER;
    }
    let n = items.len() as u32;
    // SAFETY: the game's pointers.
    unsafe {
        if buf.is_null() || *count < n {
            *count = n;
            return DPNERR_BUFFERTOOSMALL;
        }
        std::ptr::copy_nonoverlapping(items.as_ptr(), buf, items.len());
        *count = n;
    }
    DPN_OK
}

/// Writes a `DPN_PLAYER_INFO` (or `DPN_GROUP_INFO`) with its name and data after it in the
/// game's buffer of `*size` bytes.
pub(crate) fn write_info(
    info: *mut DPN_PLAYER_INFO,
    size: *mut u32,
    name: &str,
    data: &[u8],
    flags: u32,
) -> HRESULT {
    if size.is_null() {
        return DPNERR_INVALIDPOINTER;
    }
    let wide = dpn::wide(name);
    let head = size_of::<DPN_PLAYER_INFO>();
    let need = head + wide.len() * 2 + data.len();
    // SAFETY: the game's pointers; we write within the `*size` bytes it gave.
    unsafe {
        if info.is_null() || (*size as usize) < need {
            *size = need as u32;
            return DPNERR_BUFFERTOOSMALL;
        }
        if (*info).dwSize != head as u32 {
            return DPNERR_INVALIDPARAM;
        }
        let base = info.cast::<u8>();
        let name_at = base.add(head).cast::<u16>();
        std::ptr::copy_nonoverlapping(wide.as_ptr(), name_at, wide.len());
        let data_at = base.add(head + wide.len() * 2);
        std::ptr::copy_nonoverlapping(data.as_ptr(), data_at, data.len());
        (*info).dwInfoFlags = DPNINFO_NAME | DPNINFO_DATA;
        (*info).pwszName = name_at;
        (*info).pvData = if data.is_empty() { std::ptr::null_mut() } else { data_at.cast() };
        (*info).dwDataSize = data.len() as u32;
        (*info).dwPlayerFlags = flags;
        *size = need as u32;
    }
    DPN_OK
}

/// Reads a `DPN_PLAYER_INFO` (or `DPN_GROUP_INFO`): the name and data its flags name.
fn read_info(info: *const DPN_PLAYER_INFO) -> Result<(Option<String>, Option<Vec<u8>>), HRESULT> {
    if info.is_null() {
        return Err(DPNERR_INVALIDPOINTER);
    }
    // SAFETY: the game's structure, checked by its `dwSize`.
    unsafe {
        if (*info).dwSize != size_of::<DPN_PLAYER_INFO>() as u32 {
            return Err(DPNERR_INVALIDPARAM);
        }
        let flags = (*info).dwInfoFlags;
        let name = (flags & DPNINFO_NAME != 0).then(|| dpn::read_wide((*info).pwszName).unwrap_or_default());
        let data = (flags & DPNINFO_DATA != 0).then(|| dpn::read_bytes((*info).pvData, (*info).dwDataSize));
        Ok((name, data))
    }
}

/// Reads a `DPN_APPLICATION_DESC` the game passes (Host, Connect, EnumHosts).
pub(crate) fn read_desc(desc: *const DPN_APPLICATION_DESC) -> Result<AppDesc, HRESULT> {
    if desc.is_null() {
        return Err(DPNERR_INVALIDPOINTER);
    }
    // SAFETY: the game's structure, checked by its `dwSize`.
    unsafe {
        let d = &*desc;
        if d.dwSize != size_of::<DPN_APPLICATION_DESC>() as u32 {
            return Err(DPNERR_INVALIDPARAM);
        }
        Ok(AppDesc {
            flags: d.dwFlags,
            instance: d.guidInstance.to_uuid(),
            application: d.guidApplication.to_uuid(),
            max_players: d.dwMaxPlayers,
            session_name: dpn::read_wide(d.pwszSessionName).unwrap_or_default(),
            password: dpn::read_wide(d.pwszPassword),
            app_reserved: dpn::read_bytes(d.pvApplicationReservedData, d.dwApplicationReservedDataSize),
        })
    }
}

/// The bytes of the game's buffer descriptions, in order.
fn gather(buffers: *const DPN_BUFFER_DESC, count: u32) -> Result<Vec<u8>, HRESULT> {
    if buffers.is_null() || count == 0 {
        return Err(DPNERR_INVALIDPARAM);
    }
    let mut data = Vec::new();
    for i in 0..count as usize {
        // SAFETY: the game passes `count` descriptions.
        let b = unsafe { &*buffers.add(i) };
        // SAFETY: each describes `dwBufferSize` readable bytes.
        data.extend_from_slice(&unsafe { dpn::read_bytes(b.pBufferData.cast(), b.dwBufferSize) });
    }
    Ok(data)
}

pub(crate) unsafe extern "system" fn initialize<V: 'static>(
    this: *mut c_void,
    context: *mut c_void,
    handler: Option<MessageHandler>,
    _flags: u32,
) -> HRESULT {
    guard(DPNERR_GENERIC, || {
        // SAFETY: COM calls us with our own object.
        unsafe { core::<V>(this) }.initialize(handler, context as usize)
    })
}

/// EnumServiceProviders: the TCP/IP provider (the only one we have); its devices are not
/// listed one by one (one "all adapters" entry answers for them).
pub(crate) unsafe extern "system" fn enum_service_providers<V: 'static>(
    this: *mut c_void,
    sp: *const GUID,
    _application: *const GUID,
    buf: *mut DPN_SERVICE_PROVIDER_INFO,
    size: *mut u32,
    count: *mut u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |_| {
        if size.is_null() || count.is_null() {
            return DPNERR_INVALIDPOINTER;
        }
        // SAFETY: checked non-null.
        let (name, guid) = match unsafe { sp.as_ref() } {
            None => ("DirectPlay8 TCP/IP Service Provider", CLSID_DP8SP_TCPIP),
            Some(g) if *g == CLSID_DP8SP_TCPIP => ("All adapters", GUID::from_u128(0)),
            Some(_) => return DPNERR_DOESNOTEXIST,
        };
        let wide = dpn::wide(name);
        let head = size_of::<DPN_SERVICE_PROVIDER_INFO>();
        let need = head + wide.len() * 2;
        // SAFETY: the game's pointers, within the `*size` bytes it gave.
        unsafe {
            if buf.is_null() || (*size as usize) < need {
                *size = need as u32;
                *count = 0;
                return DPNERR_BUFFERTOOSMALL;
            }
            let name_at = buf.cast::<u8>().add(head).cast::<u16>();
            std::ptr::copy_nonoverlapping(wide.as_ptr(), name_at, wide.len());
            *buf = DPN_SERVICE_PROVIDER_INFO {
                dwFlags: 0,
                guid,
                pwszName: name_at,
                pvReserved: std::ptr::null_mut(),
                dwReserved: 0,
            };
            *size = need as u32;
            *count = 1;
        }
        DPN_OK
    })
}

pub(crate) unsafe extern "system" fn cancel_async_operation<V: 'static>(
    this: *mut c_void,
    handle: u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| c.cancel(handle, flags))
}

pub(crate) unsafe extern "system" fn send_to<V: 'static>(
    this: *mut c_void,
    dpnid: u32,
    buffers: *const DPN_BUFFER_DESC,
    count: u32,
    timeout: u32,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        let sync = flags & DPNOP_SYNC != 0;
        if !sync && handle.is_null() && flags & DPNSEND_NOCOMPLETE == 0 {
            return DPNERR_INVALIDPARAM;
        }
        let data = match gather(buffers, count) {
            Ok(d) => d,
            Err(e) => return e,
        };
        pending(c.send(dpnid, data, flags, timeout, context as usize, sync), handle, sync)
    })
}

/// GetSendQueueInfo: the application messages queued for the player and not yet sent, and
/// their bytes, of the priorities `flags` names (none: all), from the transport's queue.
/// Nothing is ever queued to the local player.
pub(crate) unsafe extern "system" fn get_send_queue_info<V: 'static>(
    this: *mut c_void,
    dpnid: u32,
    msgs: *mut u32,
    bytes: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        let (n, b) = match c.player_info(dpnid) {
            None => return DPNERR_INVALIDPLAYER,
            Some((_, _, f)) if f & DPNPLAYER_LOCAL != 0 => (0, 0),
            Some(_) => match c.link(dpnid).and_then(|link| crate::sends::queued(&link, flags)) {
                Ok(q) => q,
                Err(e) => return e,
            },
        };
        // SAFETY: the game's out pointers, each optional.
        unsafe {
            if !msgs.is_null() {
                *msgs = n;
            }
            if !bytes.is_null() {
                *bytes = b;
            }
        }
        DPN_OK
    })
}

/// The most device addresses Host takes (a machine's adapters and ports; the cap keeps a
/// wrong count from reading far past the game's array).
const MAX_DEVICES: u32 = 64;

pub(crate) unsafe extern "system" fn host<V: 'static>(
    this: *mut c_void,
    desc: *const DPN_APPLICATION_DESC,
    devices: *mut *mut c_void,
    device_count: u32,
    _security: *const c_void,
    _credentials: *const c_void,
    player_context: *mut c_void,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        let desc = match read_desc(desc) {
            Ok(d) => d,
            Err(e) => return e,
        };
        if devices.is_null() || device_count == 0 || device_count > MAX_DEVICES {
            return DPNERR_INVALIDPARAM;
        }
        // SAFETY: the game passes `device_count` addresses; the session listens on each.
        let urls: Result<Vec<_>, _> =
            (0..device_count as usize).map(|i| unsafe { addressing::url_of(*devices.add(i)) }).collect();
        match urls {
            Ok(urls) => c.host(desc, &urls, player_context as usize),
            Err(_) => DPNERR_INVALIDDEVICEADDRESS,
        }
    })
}

pub(crate) unsafe extern "system" fn get_application_desc<V: 'static>(
    this: *mut c_void,
    buf: *mut DPN_APPLICATION_DESC,
    size: *mut u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        let Some((d, current)) = c.app_desc() else { return DPNERR_NOCONNECTION };
        if size.is_null() {
            return DPNERR_INVALIDPOINTER;
        }
        let name = dpn::wide(&d.session_name);
        let password = d.password.as_deref().map(dpn::wide).unwrap_or_default();
        let head = size_of::<DPN_APPLICATION_DESC>();
        let strings = (name.len() + password.len()) * 2;
        let need = head + strings + d.app_reserved.len();
        // SAFETY: the game's pointers, within the `*size` bytes it gave.
        unsafe {
            if buf.is_null() || (*size as usize) < need {
                *size = need as u32;
                return DPNERR_BUFFERTOOSMALL;
            }
            if (*buf).dwSize != head as u32 {
                return DPNERR_INVALIDPARAM;
            }
            let name_at = buf.cast::<u8>().add(head).cast::<u16>();
            std::ptr::copy_nonoverlapping(name.as_ptr(), name_at, name.len());
            let password_at = name_at.add(name.len());
            std::ptr::copy_nonoverlapping(password.as_ptr(), password_at, password.len());
            let reserved_at = buf.cast::<u8>().add(head + strings);
            std::ptr::copy_nonoverlapping(d.app_reserved.as_ptr(), reserved_at, d.app_reserved.len());
            *buf = DPN_APPLICATION_DESC {
                dwSize: head as u32,
                dwFlags: d.flags,
                guidInstance: GUID::from_uuid(d.instance),
                guidApplication: GUID::from_uuid(d.application),
                dwMaxPlayers: d.max_players,
                dwCurrentPlayers: current,
                pwszSessionName: name_at,
                pwszPassword: if password.is_empty() { std::ptr::null_mut() } else { password_at },
                pvReservedData: std::ptr::null_mut(),
                dwReservedDataSize: 0,
                pvApplicationReservedData: if d.app_reserved.is_empty() {
                    std::ptr::null_mut()
                } else {
                    reserved_at.cast()
                },
                dwApplicationReservedDataSize: d.app_reserved.len() as u32,
            };
            *size = need as u32;
        }
        DPN_OK
    })
}

pub(crate) unsafe extern "system" fn set_application_desc<V: 'static>(
    this: *mut c_void,
    desc: *const DPN_APPLICATION_DESC,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| match read_desc(desc) {
        Ok(d) => {
            let password = d.password.filter(|_| d.flags & DPNSESSION_REQUIREPASSWORD != 0);
            c.set_app_desc(d.max_players, password, d.app_reserved)
        }
        Err(e) => e,
    })
}

pub(crate) unsafe extern "system" fn create_group<V: 'static>(
    this: *mut c_void,
    info: *const DPN_GROUP_INFO,
    group_context: *mut c_void,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        let (name, data) = match read_info(info) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let name = name.unwrap_or_default();
        let group = Some((name.clone(), group_context as usize));
        let sync = flags & DPNOP_SYNC != 0;
        let data = data.unwrap_or_default();
        let r =
            c.request(|handle| Command::CreateGroup { handle, name, data }, context as usize, sync, group);
        pending(r, handle, sync)
    })
}

pub(crate) unsafe extern "system" fn destroy_group<V: 'static>(
    this: *mut c_void,
    group: u32,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if c.group_info(group).is_none() {
            return DPNERR_INVALIDGROUP;
        }
        let sync = flags & DPNOP_SYNC != 0;
        let r = c.request(
            |handle| Command::DestroyGroup { handle, group: Dpnid(group) },
            context as usize,
            sync,
            None,
        );
        pending(r, handle, sync)
    })
}

pub(crate) unsafe extern "system" fn add_player_to_group<V: 'static>(
    this: *mut c_void,
    group: u32,
    player: u32,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| membership(c, true, group, player, context, handle, flags))
}

pub(crate) unsafe extern "system" fn remove_player_from_group<V: 'static>(
    this: *mut c_void,
    group: u32,
    player: u32,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| membership(c, false, group, player, context, handle, flags))
}

fn membership(
    c: &Core,
    add: bool,
    group: u32,
    player: u32,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    if c.group_info(group).is_none() {
        return DPNERR_INVALIDGROUP;
    }
    if !c.is_player(player) {
        return DPNERR_INVALIDPLAYER;
    }
    let sync = flags & DPNOP_SYNC != 0;
    let (group, player) = (Dpnid(group), Dpnid(player));
    let r = c.request(
        |handle| {
            if add {
                Command::AddToGroup { handle, group, player }
            } else {
                Command::RemoveFromGroup { handle, group, player }
            }
        },
        context as usize,
        sync,
        None,
    );
    pending(r, handle, sync)
}

pub(crate) unsafe extern "system" fn set_group_info<V: 'static>(
    this: *mut c_void,
    group: u32,
    info: *const DPN_GROUP_INFO,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if c.group_info(group).is_none() {
            return DPNERR_INVALIDGROUP;
        }
        let (name, data) = match read_info(info) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let sync = flags & DPNOP_SYNC != 0;
        let r = c.request(
            |handle| Command::SetGroupInfo { handle, group: Dpnid(group), name, data },
            context as usize,
            sync,
            None,
        );
        pending(r, handle, sync)
    })
}

pub(crate) unsafe extern "system" fn get_group_info<V: 'static>(
    this: *mut c_void,
    group: u32,
    info: *mut DPN_GROUP_INFO,
    size: *mut u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| match c.group_info(group) {
        Some((name, data)) => write_info(info, size, &name, &data, 0),
        None => DPNERR_INVALIDGROUP,
    })
}

pub(crate) unsafe extern "system" fn enum_players_and_groups<V: 'static>(
    this: *mut c_void,
    ids: *mut u32,
    count: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if flags & !(DPNENUM_PLAYERS | DPNENUM_GROUPS) != 0 || flags == 0 {
            return DPNERR_INVALIDFLAGS;
        }
        let all = c.ids(flags & DPNENUM_PLAYERS != 0, flags & DPNENUM_GROUPS != 0);
        write_array(ids, count, &all)
    })
}

pub(crate) unsafe extern "system" fn enum_group_members<V: 'static>(
    this: *mut c_void,
    group: u32,
    ids: *mut u32,
    count: *mut u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| match c.members(group) {
        Some(m) => write_array(ids, count, &m),
        None => DPNERR_INVALIDGROUP,
    })
}

/// SetPeerInfo, SetClientInfo and SetServerInfo.
pub(crate) unsafe extern "system" fn set_info<V: 'static>(
    this: *mut c_void,
    info: *const DPN_PLAYER_INFO,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        let (name, data) = match read_info(info) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let sync = flags & DPNOP_SYNC != 0;
        match c.set_info(name, data, context as usize, sync) {
            Ok(0) => DPN_OK,
            r => pending(r, handle, sync),
        }
    })
}

/// GetPeerInfo, GetClientInfo (by DPNID).
pub(crate) unsafe extern "system" fn get_player_info<V: 'static>(
    this: *mut c_void,
    dpnid: u32,
    info: *mut DPN_PLAYER_INFO,
    size: *mut u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| match c.player_info(dpnid) {
        Some((name, data, flags)) => write_info(info, size, &name, &data, flags),
        None => DPNERR_INVALIDPLAYER,
    })
}

/// GetPeerAddress, GetClientAddress.
pub(crate) unsafe extern "system" fn get_player_address<V: 'static>(
    this: *mut c_void,
    dpnid: u32,
    out: *mut *mut c_void,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if out.is_null() {
            return DPNERR_INVALIDPOINTER;
        }
        match c.player_addr(dpnid) {
            Some(a) => {
                // SAFETY: checked non-null.
                unsafe { *out = addressing::new_address(&addressing::url_for(a)) };
                DPN_OK
            }
            None => DPNERR_INVALIDPLAYER,
        }
    })
}

/// GetLocalHostAddresses: each device address the host listens on ([`crate::core::Core`]'s
/// `local_host_addresses`).
pub(crate) unsafe extern "system" fn get_local_host_addresses<V: 'static>(
    this: *mut c_void,
    out: *mut *mut c_void,
    count: *mut u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        let Some(addrs) = c.local_host_addresses() else { return DPNERR_NOTHOST };
        if count.is_null() {
            return DPNERR_INVALIDPOINTER;
        }
        // SAFETY: the game's pointers.
        unsafe {
            if out.is_null() || (*count as usize) < addrs.len() {
                *count = addrs.len() as u32;
                return DPNERR_BUFFERTOOSMALL;
            }
            for (i, addr) in addrs.iter().enumerate() {
                *out.add(i) = addressing::new_address(&addressing::url_for(*addr));
            }
            *count = addrs.len() as u32;
        }
        DPN_OK
    })
}

pub(crate) unsafe extern "system" fn close<V: 'static>(this: *mut c_void, _flags: u32) -> HRESULT {
    initialized::<V>(this, |c| c.close(true))
}

/// The defaults Windows' TCP/IP provider reports (`DPN_SP_CAPS`).
const ENUM_COUNT: u32 = 5;
const ENUM_RETRY_MS: u32 = 1500;
const ENUM_TIMEOUT_MS: u32 = 1500;
const MAX_ENUM_PAYLOAD: u32 = 983;

pub(crate) unsafe extern "system" fn enum_hosts<V: 'static>(
    this: *mut c_void,
    desc: *const DPN_APPLICATION_DESC,
    host: *mut c_void,
    device: *mut c_void,
    data: *const c_void,
    data_size: u32,
    count: u32,
    retry: u32,
    _timeout: u32,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        let sync = flags & DPNOP_SYNC != 0;
        if !sync && handle.is_null() {
            return DPNERR_INVALIDPARAM;
        }
        if data_size > MAX_ENUM_PAYLOAD {
            return DPNERR_INVALIDPARAM;
        }
        let application = match read_desc(desc) {
            Ok(d) => (!d.application.is_nil()).then_some(d.application),
            Err(e) => return e,
        };
        // SAFETY: the game's address objects, either may be null.
        let device = unsafe { addressing::url_of(device) }.ok();
        // No host address, or one without a hostname: the broadcast address (MC-DPLHP 3.1).
        // SAFETY: as above.
        let host_url = unsafe { addressing::url_of(host) }.unwrap_or_default();
        let broadcast = std::net::IpAddr::from([255, 255, 255, 255]);
        let Some(target) = addressing::socket_of(&host_url, broadcast, addressing::DEFAULT_PORT) else {
            return DPNERR_INVALIDHOSTADDRESS;
        };
        let count = if count == 0 { ENUM_COUNT } else { count };
        let retry = Duration::from_millis(u64::from(if retry == 0 { ENUM_RETRY_MS } else { retry }));
        // SAFETY: the game's `data_size` bytes.
        let payload = unsafe { dpn::read_bytes(data, data_size) };
        let search = crate::core::Search { application, target, device, count, retry, payload };
        pending(c.enum_hosts(search, context as usize, sync), handle, sync)
    })
}

pub(crate) unsafe extern "system" fn return_buffer<V: 'static>(
    this: *mut c_void,
    handle: u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| if c.take_buffer(handle) { DPN_OK } else { DPNERR_INVALIDHANDLE })
}

/// Writes a player's or group's context to `out`; `missing` when the id names none.
fn write_context(out: *mut *mut c_void, context: Option<usize>, missing: HRESULT) -> HRESULT {
    if out.is_null() {
        return DPNERR_INVALIDPOINTER;
    }
    match context {
        // SAFETY: checked non-null; the caller's out pointer.
        Some(ctx) => unsafe {
            *out = ctx as *mut c_void;
            DPN_OK
        },
        None => missing,
    }
}

pub(crate) unsafe extern "system" fn get_player_context<V: 'static>(
    this: *mut c_void,
    dpnid: u32,
    out: *mut *mut c_void,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| write_context(out, c.player_context(dpnid), DPNERR_INVALIDPLAYER))
}

pub(crate) unsafe extern "system" fn get_group_context<V: 'static>(
    this: *mut c_void,
    dpnid: u32,
    out: *mut *mut c_void,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| write_context(out, c.group_context(dpnid), DPNERR_INVALIDGROUP))
}

/// `DPN_CAPS` is 20 bytes, `DPN_CAPS_EX` (DirectX 9) 48: both are accepted.
fn caps_size_ok(size: u32) -> bool {
    size == size_of::<DPN_CAPS>() as u32 || size == 48
}

pub(crate) unsafe extern "system" fn get_caps<V: 'static>(
    this: *mut c_void,
    caps: *mut DPN_CAPS,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if caps.is_null() {
            return DPNERR_INVALIDPOINTER;
        }
        // SAFETY: the game's structure, checked by its `dwSize`.
        unsafe {
            if !caps_size_ok((*caps).dwSize) {
                return DPNERR_INVALIDPARAM;
            }
            let v = c.caps();
            (*caps).dwFlags = 0;
            (*caps).dwConnectTimeout = v.connect_timeout;
            (*caps).dwConnectRetries = v.connect_retries;
            (*caps).dwTimeoutUntilKeepAlive = v.keep_alive;
        }
        DPN_OK
    })
}

pub(crate) unsafe extern "system" fn set_caps<V: 'static>(
    this: *mut c_void,
    caps: *const DPN_CAPS,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if caps.is_null() {
            return DPNERR_INVALIDPOINTER;
        }
        // SAFETY: the game's structure, checked by its `dwSize`.
        let caps = unsafe { &*caps };
        if !caps_size_ok(caps.dwSize) {
            return DPNERR_INVALIDPARAM;
        }
        c.set_caps(|v| {
            v.connect_timeout = caps.dwConnectTimeout;
            v.connect_retries = caps.dwConnectRetries;
            v.keep_alive = caps.dwTimeoutUntilKeepAlive;
        });
        DPN_OK
    })
}

fn sp_ok(sp: *const GUID) -> Result<(), HRESULT> {
    // SAFETY: the game's GUID, if any.
    match unsafe { sp.as_ref() } {
        None => Err(DPNERR_INVALIDPOINTER),
        Some(g) if *g == CLSID_DP8SP_TCPIP => Ok(()),
        Some(_) => Err(DPNERR_DOESNOTEXIST),
    }
}

pub(crate) unsafe extern "system" fn set_sp_caps<V: 'static>(
    this: *mut c_void,
    sp: *const GUID,
    caps: *const DPN_SP_CAPS,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if let Err(e) = sp_ok(sp) {
            return e;
        }
        // SAFETY: the game's structure, checked by its `dwSize`.
        let Some(caps) = (unsafe { caps.as_ref() }) else { return DPNERR_INVALIDPOINTER };
        if caps.dwSize != size_of::<DPN_SP_CAPS>() as u32 {
            return DPNERR_INVALIDPARAM;
        }
        c.set_caps(|v| {
            v.buffers_per_thread = caps.dwBuffersPerThread;
            v.system_buffer_size = caps.dwSystemBufferSize;
        });
        DPN_OK
    })
}

pub(crate) unsafe extern "system" fn get_sp_caps<V: 'static>(
    this: *mut c_void,
    sp: *const GUID,
    caps: *mut DPN_SP_CAPS,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if let Err(e) = sp_ok(sp) {
            return e;
        }
        // SAFETY: the game's structure, checked by its `dwSize`.
        let Some(caps) = (unsafe { caps.as_mut() }) else { return DPNERR_INVALIDPOINTER };
        if caps.dwSize != size_of::<DPN_SP_CAPS>() as u32 {
            return DPNERR_INVALIDPARAM;
        }
        let v = c.caps();
        *caps = DPN_SP_CAPS {
            dwSize: caps.dwSize,
            dwFlags: DPNSPCAPS_SUPPORTSDPNSRV
                | DPNSPCAPS_SUPPORTSBROADCAST
                | DPNSPCAPS_SUPPORTSALLADAPTERS
                | DPNSPCAPS_SUPPORTSTHREADPOOL,
            dwNumThreads: 3,
            dwDefaultEnumCount: ENUM_COUNT,
            dwDefaultEnumRetryInterval: ENUM_RETRY_MS,
            dwDefaultEnumTimeout: ENUM_TIMEOUT_MS,
            dwMaxEnumPayloadSize: MAX_ENUM_PAYLOAD,
            dwBuffersPerThread: v.buffers_per_thread,
            dwSystemBufferSize: v.system_buffer_size,
        };
        DPN_OK
    })
}

/// GetConnectionInfo: the transport's counters of the link with the player
/// ([`crate::sends::connection_info`]); `dwSize` must be the header's (92 bytes).
pub(crate) unsafe extern "system" fn get_connection_info<V: 'static>(
    this: *mut c_void,
    dpnid: u32,
    info: *mut DPN_CONNECTION_INFO,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        // SAFETY: the game's structure, checked by its `dwSize`.
        let Some(info) = (unsafe { info.as_mut() }) else { return DPNERR_INVALIDPOINTER };
        if info.dwSize != size_of::<DPN_CONNECTION_INFO>() as u32 {
            return DPNERR_INVALIDPARAM;
        }
        match c.player_info(dpnid) {
            Some((_, _, flags)) if flags & DPNPLAYER_LOCAL == 0 => match c.link(dpnid) {
                Ok(link) => {
                    *info = crate::sends::connection_info(&link);
                    DPN_OK
                }
                Err(e) => e,
            },
            _ => DPNERR_INVALIDPLAYER,
        }
    })
}

/// RegisterLobby: `handle` must be the connection a lobby client opened with the game
/// (DirectPlay 8 documentation: "the connection handle used when calling
/// IDirectPlay8LobbiedApplication::UpdateStatus"). No lobby runs here, so our lobbied
/// application never has one (its Initialize gives 0) and no handle names a connection: both
/// DPNLOBBY_REGISTER and DPNLOBBY_UNREGISTER answer DPNERR_INVALIDPARAM, the one error the
/// documentation gives; other flags DPNERR_INVALIDFLAGS.
pub(crate) unsafe extern "system" fn register_lobby<V: 'static>(
    this: *mut c_void,
    _handle: u32,
    _lobbied: *mut c_void,
    flags: u32,
) -> HRESULT {
    initialized::<V>(this, |_| match flags {
        DPNLOBBY_REGISTER | DPNLOBBY_UNREGISTER => DPNERR_INVALIDPARAM,
        _ => DPNERR_INVALIDFLAGS,
    })
}

/// DestroyPeer / DestroyClient: the host removes a player, who gets TERMINATE_SESSION with
/// `data` (DN_TERMINATE_SESSION's TerminateData, MC-DPL8CS 2.2.2.1).
pub(crate) unsafe extern "system" fn destroy_player<V: 'static>(
    this: *mut c_void,
    dpnid: u32,
    data: *const c_void,
    size: u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if !c.is_host() {
            return DPNERR_NOTHOST;
        }
        match c.player_info(dpnid) {
            Some((_, _, f)) if f & DPNPLAYER_LOCAL == 0 => {
                // SAFETY: the game's `size` bytes.
                c.plain_command(Command::RemovePlayer(Dpnid(dpnid), unsafe { dpn::read_bytes(data, size) }))
            }
            _ => DPNERR_INVALIDPLAYER,
        }
    })
}

pub(crate) unsafe extern "system" fn terminate_session<V: 'static>(
    this: *mut c_void,
    data: *const c_void,
    size: u32,
    _flags: u32,
) -> HRESULT {
    initialized::<V>(this, |c| {
        if !c.is_host() {
            return DPNERR_NOTHOST;
        }
        // SAFETY: the game's `size` bytes.
        c.plain_command(Command::Terminate(unsafe { dpn::read_bytes(data, size) }))
    })
}

/// Connect of Peer (with a player context) and Client (without).
#[allow(clippy::too_many_arguments)]
pub(crate) fn connect(
    c: &Arc<Core>,
    desc: *const DPN_APPLICATION_DESC,
    host: *mut c_void,
    device: *mut c_void,
    data: *const c_void,
    size: u32,
    player_context: *mut c_void,
    context: *mut c_void,
    handle: *mut u32,
    flags: u32,
) -> HRESULT {
    let sync = flags & DPNOP_SYNC != 0;
    if !sync && handle.is_null() {
        return DPNERR_INVALIDPARAM;
    }
    let desc = match read_desc(desc) {
        Ok(d) => d,
        Err(e) => return e,
    };
    // SAFETY: the game's address objects.
    let Ok(host_url) = (unsafe { addressing::url_of(host) }) else { return DPNERR_INVALIDHOSTADDRESS };
    let Some(target) =
        addressing::socket_of(&host_url, std::net::IpAddr::from([127, 0, 0, 1]), addressing::DEFAULT_PORT)
    else {
        return DPNERR_INVALIDHOSTADDRESS;
    };
    // SAFETY: as above.
    let device = unsafe { addressing::url_of(device) }.ok();
    // SAFETY: the game's `size` bytes.
    let data = unsafe { dpn::read_bytes(data, size) };
    let r = c.connect(desc, target, device, data, player_context as usize, context as usize, sync);
    pending(r, handle, sync)
}
