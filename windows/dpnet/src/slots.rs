//! The method signatures that `IDirectPlay8Peer`, `IDirectPlay8Client` and `IDirectPlay8Server`
//! share (`dplay8.h`), each named after the first method that has it; one vtable field a use.

use std::ffi::c_void;

use crate::com::{GUID, HRESULT};
use crate::dpn::*;

/// The interface pointer.
pub(crate) type This = *mut c_void;
/// An application context.
pub(crate) type Ctx = *mut c_void;
/// An operation's handle, written back.
pub(crate) type Handle = *mut u32;

/// `initialize`.
pub(crate) type Initialize = unsafe extern "system" fn(This, Ctx, Option<MessageHandler>, u32) -> HRESULT;
/// `enum_service_providers`.
pub(crate) type EnumServiceProviders = unsafe extern "system" fn(
    This,
    *const GUID,
    *const GUID,
    *mut DPN_SERVICE_PROVIDER_INFO,
    *mut u32,
    *mut u32,
    u32,
) -> HRESULT;
/// `cancel_async_operation, return_buffer`.
pub(crate) type CancelAsyncOperation = unsafe extern "system" fn(This, u32, u32) -> HRESULT;
/// `enum_group_members, get_send_queue_info`.
pub(crate) type GetSendQueueInfo = unsafe extern "system" fn(This, u32, *mut u32, *mut u32, u32) -> HRESULT;
/// `host`.
pub(crate) type Host = unsafe extern "system" fn(
    This,
    *const DPN_APPLICATION_DESC,
    *mut This,
    u32,
    *const c_void,
    *const c_void,
    Ctx,
    u32,
) -> HRESULT;
/// `destroy_group`.
pub(crate) type DestroyGroup = unsafe extern "system" fn(This, u32, Ctx, Handle, u32) -> HRESULT;
/// `add_player_to_group`.
pub(crate) type AddPlayerToGroup = unsafe extern "system" fn(This, u32, u32, Ctx, Handle, u32) -> HRESULT;
/// `enum_players_and_groups, get_send_queue_info`.
pub(crate) type EnumPlayersAndGroups = unsafe extern "system" fn(This, *mut u32, *mut u32, u32) -> HRESULT;
/// `get_client_address, get_peer_address`.
pub(crate) type GetPeerAddress = unsafe extern "system" fn(This, u32, *mut This, u32) -> HRESULT;
/// `get_local_host_addresses`.
pub(crate) type GetLocalHostAddresses = unsafe extern "system" fn(This, *mut This, *mut u32, u32) -> HRESULT;
/// `close`.
pub(crate) type Close = unsafe extern "system" fn(This, u32) -> HRESULT;
/// `enum_hosts`.
pub(crate) type EnumHosts = unsafe extern "system" fn(
    This,
    *const DPN_APPLICATION_DESC,
    This,
    This,
    *const c_void,
    u32,
    u32,
    u32,
    u32,
    Ctx,
    Handle,
    u32,
) -> HRESULT;
/// `destroy_client, destroy_peer`.
pub(crate) type DestroyPeer = unsafe extern "system" fn(This, u32, *const c_void, u32, u32) -> HRESULT;
/// `get_group_context, get_player_context`.
pub(crate) type GetPlayerContext = unsafe extern "system" fn(This, u32, *mut Ctx, u32) -> HRESULT;
/// `get_caps`.
pub(crate) type GetCaps = unsafe extern "system" fn(This, *mut DPN_CAPS, u32) -> HRESULT;
/// `set_caps`.
pub(crate) type SetCaps = unsafe extern "system" fn(This, *const DPN_CAPS, u32) -> HRESULT;
/// `set_sp_caps`.
pub(crate) type SetSpCaps = unsafe extern "system" fn(This, *const GUID, *const DPN_SP_CAPS, u32) -> HRESULT;
/// `get_sp_caps`.
pub(crate) type GetSpCaps = unsafe extern "system" fn(This, *const GUID, *mut DPN_SP_CAPS, u32) -> HRESULT;
/// `register_lobby`.
pub(crate) type RegisterLobby = unsafe extern "system" fn(This, u32, This, u32) -> HRESULT;
