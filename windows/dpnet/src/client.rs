//! `IDirectPlay8Client` (`dplay8.h`): its vtable over [`Core`] in the client role. A client
//! sees only the server: no CREATE_PLAYER or DESTROY_PLAYER messages, sends go to the server.

use std::ffi::c_void;

use crate::classes::IID_IDIRECTPLAY8_CLIENT;
use crate::com::{GUID, HRESULT, IUnknownVtbl, Object, guard};
use crate::core::{Core, Role};
use crate::dpn::*;
use crate::methods::{self as m, Dp8};

use crate::slots::{self as s, Ctx, Handle, This};

/// The vtable of `IDirectPlay8Client`.
#[repr(C)]
pub(crate) struct ClientVtbl {
    pub(crate) unknown: IUnknownVtbl,
    pub(crate) initialize: s::Initialize,
    pub(crate) enum_service_providers: s::EnumServiceProviders,
    pub(crate) enum_hosts: s::EnumHosts,
    pub(crate) cancel_async_operation: s::CancelAsyncOperation,
    pub(crate) connect: unsafe extern "system" fn(
        This,
        *const DPN_APPLICATION_DESC,
        This,
        This,
        *const c_void,
        *const c_void,
        *const c_void,
        u32,
        Ctx,
        Handle,
        u32,
    ) -> HRESULT,
    pub(crate) send:
        unsafe extern "system" fn(This, *const DPN_BUFFER_DESC, u32, u32, Ctx, Handle, u32) -> HRESULT,
    pub(crate) get_send_queue_info: s::EnumPlayersAndGroups,
    pub(crate) get_application_desc:
        unsafe extern "system" fn(This, *mut DPN_APPLICATION_DESC, *mut u32, u32) -> HRESULT,
    pub(crate) set_client_info:
        unsafe extern "system" fn(This, *const DPN_PLAYER_INFO, Ctx, Handle, u32) -> HRESULT,
    pub(crate) get_server_info:
        unsafe extern "system" fn(This, *mut DPN_PLAYER_INFO, *mut u32, u32) -> HRESULT,
    pub(crate) get_server_address: unsafe extern "system" fn(This, *mut This, u32) -> HRESULT,
    pub(crate) close: s::Close,
    pub(crate) return_buffer: s::CancelAsyncOperation,
    pub(crate) get_caps: s::GetCaps,
    pub(crate) set_caps: s::SetCaps,
    pub(crate) set_sp_caps: s::SetSpCaps,
    pub(crate) get_sp_caps: s::GetSpCaps,
    pub(crate) get_connection_info: unsafe extern "system" fn(This, *mut DPN_CONNECTION_INFO, u32) -> HRESULT,
    pub(crate) register_lobby: s::RegisterLobby,
}

type Client = Object<ClientVtbl, Dp8>;
type V = ClientVtbl;

static VTBL: ClientVtbl = ClientVtbl {
    unknown: IUnknownVtbl { query_interface, add_ref: Client::add_ref, release: Client::release },
    initialize: m::initialize::<V>,
    enum_service_providers: m::enum_service_providers::<V>,
    enum_hosts: m::enum_hosts::<V>,
    cancel_async_operation: m::cancel_async_operation::<V>,
    connect,
    send,
    get_send_queue_info,
    get_application_desc: m::get_application_desc::<V>,
    set_client_info: m::set_info::<V>,
    get_server_info,
    get_server_address,
    close: m::close::<V>,
    return_buffer: m::return_buffer::<V>,
    get_caps: m::get_caps::<V>,
    set_caps: m::set_caps::<V>,
    set_sp_caps: m::set_sp_caps::<V>,
    get_sp_caps: m::get_sp_caps::<V>,
    get_connection_info,
    register_lobby: m::register_lobby::<V>,
};

unsafe extern "system" fn query_interface(this: This, riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    // SAFETY: `this` is one of our clients; COM's contract covers `riid` and `ppv`.
    guard(DPNERR_GENERIC, || unsafe { Client::query(this, riid, ppv, &[IID_IDIRECTPLAY8_CLIENT]) })
}

/// The server's DPNID (0 before the connect completes).
fn server(this: This) -> u32 {
    // SAFETY: COM calls us with our own object.
    unsafe { m::core::<V>(this) }.host_id()
}

#[allow(clippy::too_many_arguments)]
unsafe extern "system" fn connect(
    this: This,
    desc: *const DPN_APPLICATION_DESC,
    host: This,
    device: This,
    _security: *const c_void,
    _credentials: *const c_void,
    data: *const c_void,
    size: u32,
    context: Ctx,
    handle: Handle,
    flags: u32,
) -> HRESULT {
    guard(DPNERR_GENERIC, || {
        // SAFETY: COM calls us with our own object.
        let c = unsafe { m::core::<V>(this) };
        if let Err(e) = c.check_init() {
            return e;
        }
        m::connect(c, desc, host, device, data, size, std::ptr::null_mut(), context, handle, flags)
    })
}

unsafe extern "system" fn send(
    this: This,
    buffers: *const DPN_BUFFER_DESC,
    count: u32,
    timeout: u32,
    context: Ctx,
    handle: Handle,
    flags: u32,
) -> HRESULT {
    // SAFETY: forwarded; a client sends to the server only.
    unsafe { m::send_to::<V>(this, server(this), buffers, count, timeout, context, handle, flags) }
}

unsafe extern "system" fn get_send_queue_info(
    this: This,
    msgs: *mut u32,
    bytes: *mut u32,
    flags: u32,
) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { m::get_send_queue_info::<V>(this, server(this), msgs, bytes, flags) }
}

unsafe extern "system" fn get_server_info(
    this: This,
    info: *mut DPN_PLAYER_INFO,
    size: *mut u32,
    flags: u32,
) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { m::get_player_info::<V>(this, server(this), info, size, flags) }
}

unsafe extern "system" fn get_server_address(this: This, out: *mut This, flags: u32) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { m::get_player_address::<V>(this, server(this), out, flags) }
}

unsafe extern "system" fn get_connection_info(
    this: This,
    info: *mut DPN_CONNECTION_INFO,
    flags: u32,
) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { m::get_connection_info::<V>(this, server(this), info, flags) }
}

/// `CLSID_DirectPlay8Client`'s constructor.
///
/// # Safety
/// As [`crate::classes::Constructor`].
pub(crate) unsafe fn create(riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    let this = Client::into_raw(&VTBL, Dp8 { core: Core::new(Role::Client) });
    // SAFETY: a fresh object; the caller's pointers.
    unsafe {
        let hr = query_interface(this, riid, ppv);
        Client::release(this);
        hr
    }
}
