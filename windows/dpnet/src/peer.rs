//! `IDirectPlay8Peer` (`dplay8.h`): its vtable, in the header's order, over [`Core`].

use std::ffi::c_void;

use crate::classes::IID_IDIRECTPLAY8_PEER;
use crate::com::{GUID, HRESULT, IUnknownVtbl, Object, guard};
use crate::core::{Core, Role};
use crate::dpn::*;
use crate::methods::{self as m, Dp8};

use crate::slots::{self as s, Ctx, Handle, This};

/// The vtable of `IDirectPlay8Peer`.
#[repr(C)]
pub(crate) struct PeerVtbl {
    pub(crate) unknown: IUnknownVtbl,
    pub(crate) initialize: s::Initialize,
    pub(crate) enum_service_providers: s::EnumServiceProviders,
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
        Ctx,
        Handle,
        u32,
    ) -> HRESULT,
    pub(crate) send_to:
        unsafe extern "system" fn(This, u32, *const DPN_BUFFER_DESC, u32, u32, Ctx, Handle, u32) -> HRESULT,
    pub(crate) get_send_queue_info: s::GetSendQueueInfo,
    pub(crate) host: s::Host,
    pub(crate) get_application_desc:
        unsafe extern "system" fn(This, *mut DPN_APPLICATION_DESC, *mut u32, u32) -> HRESULT,
    pub(crate) set_application_desc:
        unsafe extern "system" fn(This, *const DPN_APPLICATION_DESC, u32) -> HRESULT,
    pub(crate) create_group:
        unsafe extern "system" fn(This, *const DPN_GROUP_INFO, Ctx, Ctx, Handle, u32) -> HRESULT,
    pub(crate) destroy_group: s::DestroyGroup,
    pub(crate) add_player_to_group: s::AddPlayerToGroup,
    pub(crate) remove_player_from_group:
        unsafe extern "system" fn(This, u32, u32, Ctx, Handle, u32) -> HRESULT,
    pub(crate) set_group_info:
        unsafe extern "system" fn(This, u32, *const DPN_GROUP_INFO, Ctx, Handle, u32) -> HRESULT,
    pub(crate) get_group_info:
        unsafe extern "system" fn(This, u32, *mut DPN_GROUP_INFO, *mut u32, u32) -> HRESULT,
    pub(crate) enum_players_and_groups: s::EnumPlayersAndGroups,
    pub(crate) enum_group_members: s::GetSendQueueInfo,
    pub(crate) set_peer_info:
        unsafe extern "system" fn(This, *const DPN_PLAYER_INFO, Ctx, Handle, u32) -> HRESULT,
    pub(crate) get_peer_info:
        unsafe extern "system" fn(This, u32, *mut DPN_PLAYER_INFO, *mut u32, u32) -> HRESULT,
    pub(crate) get_peer_address: s::GetPeerAddress,
    pub(crate) get_local_host_addresses: s::GetLocalHostAddresses,
    pub(crate) close: s::Close,
    pub(crate) enum_hosts: s::EnumHosts,
    pub(crate) destroy_peer: s::DestroyPeer,
    pub(crate) return_buffer: s::CancelAsyncOperation,
    pub(crate) get_player_context: s::GetPlayerContext,
    pub(crate) get_group_context: s::GetPlayerContext,
    pub(crate) get_caps: s::GetCaps,
    pub(crate) set_caps: s::SetCaps,
    pub(crate) set_sp_caps: s::SetSpCaps,
    pub(crate) get_sp_caps: s::GetSpCaps,
    pub(crate) get_connection_info:
        unsafe extern "system" fn(This, u32, *mut DPN_CONNECTION_INFO, u32) -> HRESULT,
    pub(crate) register_lobby: s::RegisterLobby,
    pub(crate) terminate_session: unsafe extern "system" fn(This, *const c_void, u32, u32) -> HRESULT,
}

type Peer = Object<PeerVtbl, Dp8>;
type V = PeerVtbl;

static VTBL: PeerVtbl = PeerVtbl {
    unknown: IUnknownVtbl { query_interface, add_ref: Peer::add_ref, release: Peer::release },
    initialize: m::initialize::<V>,
    enum_service_providers: m::enum_service_providers::<V>,
    cancel_async_operation: m::cancel_async_operation::<V>,
    connect,
    send_to: m::send_to::<V>,
    get_send_queue_info: m::get_send_queue_info::<V>,
    host: m::host::<V>,
    get_application_desc: m::get_application_desc::<V>,
    set_application_desc: m::set_application_desc::<V>,
    create_group: m::create_group::<V>,
    destroy_group: m::destroy_group::<V>,
    add_player_to_group: m::add_player_to_group::<V>,
    remove_player_from_group: m::remove_player_from_group::<V>,
    set_group_info: m::set_group_info::<V>,
    get_group_info: m::get_group_info::<V>,
    enum_players_and_groups: m::enum_players_and_groups::<V>,
    enum_group_members: m::enum_group_members::<V>,
    set_peer_info: m::set_info::<V>,
    get_peer_info: m::get_player_info::<V>,
    get_peer_address: m::get_player_address::<V>,
    get_local_host_addresses: m::get_local_host_addresses::<V>,
    close: m::close::<V>,
    enum_hosts: m::enum_hosts::<V>,
    destroy_peer: m::destroy_player::<V>,
    return_buffer: m::return_buffer::<V>,
    get_player_context: m::get_player_context::<V>,
    get_group_context: m::get_group_context::<V>,
    get_caps: m::get_caps::<V>,
    set_caps: m::set_caps::<V>,
    set_sp_caps: m::set_sp_caps::<V>,
    get_sp_caps: m::get_sp_caps::<V>,
    get_connection_info: m::get_connection_info::<V>,
    register_lobby: m::register_lobby::<V>,
    terminate_session: m::terminate_session::<V>,
};

unsafe extern "system" fn query_interface(this: This, riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    // SAFETY: `this` is one of our peers; COM's contract covers `riid` and `ppv`.
    guard(DPNERR_GENERIC, || unsafe { Peer::query(this, riid, ppv, &[IID_IDIRECTPLAY8_PEER]) })
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
    player_context: Ctx,
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
        m::connect(c, desc, host, device, data, size, player_context, context, handle, flags)
    })
}

/// `CLSID_DirectPlay8Peer`'s constructor.
///
/// # Safety
/// As [`crate::classes::Constructor`].
pub(crate) unsafe fn create(riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    let this = Peer::into_raw(&VTBL, Dp8 { core: Core::new(Role::Peer) });
    // SAFETY: a fresh object; the caller's pointers.
    unsafe {
        let hr = query_interface(this, riid, ppv);
        Peer::release(this);
        hr
    }
}
