//! `CLSID_DirectPlay8LobbiedApplication` and `CLSID_DirectPlay8LobbyClient` (`dplobby8.h`):
//! present, answering as a machine where no lobby runs.
//!
//! No lobby client launches a game through this DLL, so a game is never lobby-launched:
//! `IDirectPlay8LobbiedApplication::Initialize` succeeds and sets the connection handle to 0,
//! which the SDK documentation gives as the sign of a game started by its user; no
//! `DPL_MSGID_*` message ever arrives, and every method that names a lobby connection answers
//! DPNERR_INVALIDHANDLE, as it does for a handle that does not exist. The lobby client lists no
//! program (we keep no registry of lobbyable programs) and cannot launch or reach one. The
//! answers are recorded in decisions.md, "dpnet.dll: the lobby objects".

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::classes::{IID_IDIRECTPLAY8_LOBBIED_APPLICATION, IID_IDIRECTPLAY8_LOBBY_CLIENT};
use crate::codes::{
    DPNERR_ALREADYINITIALIZED, DPNERR_CANTLAUNCHAPPLICATION, DPNERR_GENERIC, DPNERR_INVALIDFLAGS,
    DPNERR_INVALIDHANDLE, DPNERR_INVALIDPARAM, DPNERR_INVALIDPOINTER, DPNERR_NOCONNECTION,
    DPNERR_UNINITIALIZED,
};
use crate::com::{GUID, HRESULT, IUnknownVtbl, Object, S_OK, guard};

/// `DPLINITIALIZE_DISABLEPARAMVAL`, the one flag `Initialize` takes.
const DPLINITIALIZE_DISABLEPARAMVAL: u32 = 0x0001;
/// `DPLAVAILABLE_ALLOWMULTIPLECONNECT`, the one flag `SetAppAvailable` takes.
const DPLAVAILABLE_ALLOWMULTIPLECONNECT: u32 = 0x0001;
/// `DPLCONNECT_LAUNCHNEW`: `ConnectApplication` may start the program.
const DPLCONNECT_LAUNCHNEW: u32 = 0x0001;
/// `DPLCONNECT_LAUNCHNOTFOUND`: `ConnectApplication` starts it when none is running.
const DPLCONNECT_LAUNCHNOTFOUND: u32 = 0x0002;

type This = *mut c_void;
/// A `DPNHANDLE`.
type Handle = u32;
/// `PFNDPNMESSAGEHANDLER`: `HRESULT (WINAPI *)(PVOID context, DWORD id, PVOID message)`.
type MessageHandler = Option<unsafe extern "system" fn(*mut c_void, u32, *mut c_void) -> HRESULT>;

/// The state both lobby objects keep: whether `Initialize` ran (and `Close` did not).
#[derive(Default)]
pub(crate) struct Lobby {
    initialized: AtomicBool,
}

impl Lobby {
    /// `Initialize`'s checks and state change.
    fn initialize(&self, handler: MessageHandler, flags: u32) -> HRESULT {
        if flags & !DPLINITIALIZE_DISABLEPARAMVAL != 0 {
            return DPNERR_INVALIDFLAGS;
        }
        if handler.is_none() {
            return DPNERR_INVALIDPARAM;
        }
        if self.initialized.swap(true, Ordering::AcqRel) {
            return DPNERR_ALREADYINITIALIZED;
        }
        S_OK
    }

    /// `ok` when initialized, else DPNERR_UNINITIALIZED.
    fn when_initialized(&self, ok: HRESULT) -> HRESULT {
        if self.initialized.load(Ordering::Acquire) { ok } else { DPNERR_UNINITIALIZED }
    }

    /// `Close`: back to the state before `Initialize`.
    fn close(&self) -> HRESULT {
        if self.initialized.swap(false, Ordering::AcqRel) { S_OK } else { DPNERR_UNINITIALIZED }
    }
}

type LobbyObject<V> = Object<V, Lobby>;

/// Runs a method body on a lobby object's state, with the panic guard.
///
/// # Safety
/// `this` is one of this module's objects with vtable `V`.
unsafe fn with<V: 'static>(this: This, body: impl FnOnce(&Lobby) -> HRESULT) -> HRESULT {
    // SAFETY: forwarded from the caller.
    guard(DPNERR_GENERIC, || body(&unsafe { LobbyObject::<V>::from_this(this) }.inner))
}

/// Makes a lobby object and answers `riid` on it (the [`Constructor`](crate::classes::Constructor)
/// shape).
///
/// # Safety
/// `ppv` is writable; `riid` readable or null.
unsafe fn construct<V: 'static>(
    vtbl: &'static V,
    iid: GUID,
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    crate::log::init_once();
    let obj = LobbyObject::into_raw(vtbl, Lobby::default());
    // SAFETY: `obj` is new; `query` checks `riid` and `ppv`.
    unsafe {
        let hr = LobbyObject::<V>::query(obj, riid, ppv, &[iid]);
        LobbyObject::<V>::release(obj);
        hr
    }
}

/// `IDirectPlay8LobbiedApplication`'s vtable, in `dplobby8.h`'s order.
#[repr(C)]
pub struct LobbiedApplicationVtbl {
    /// `QueryInterface`, `AddRef`, `Release`.
    pub unknown: IUnknownVtbl,
    /// `Initialize(pvUserContext, pfn, pdpnhConnection, dwFlags)`.
    pub initialize: unsafe extern "system" fn(This, *mut c_void, MessageHandler, *mut Handle, u32) -> HRESULT,
    /// `RegisterProgram(pdplProgramDesc, dwFlags)`.
    pub register_program: unsafe extern "system" fn(This, *const c_void, u32) -> HRESULT,
    /// `UnRegisterProgram(pguidApplication, dwFlags)`.
    pub unregister_program: unsafe extern "system" fn(This, *const GUID, u32) -> HRESULT,
    /// `Send(hConnection, pBuffer, pBufferSize, dwFlags)`.
    pub send: unsafe extern "system" fn(This, Handle, *const u8, u32, u32) -> HRESULT,
    /// `SetAppAvailable(fAvailable, dwFlags)`.
    pub set_app_available: unsafe extern "system" fn(This, i32, u32) -> HRESULT,
    /// `UpdateStatus(hConnection, dwStatus, dwFlags)`.
    pub update_status: unsafe extern "system" fn(This, Handle, u32, u32) -> HRESULT,
    /// `Close(dwFlags)`.
    pub close: unsafe extern "system" fn(This, u32) -> HRESULT,
    /// `GetConnectionSettings(hConnection, pdplSessionInfo, pdwInfoSize, dwFlags)`.
    pub get_connection_settings:
        unsafe extern "system" fn(This, Handle, *mut c_void, *mut u32, u32) -> HRESULT,
    /// `SetConnectionSettings(hConnection, pdplSessionInfo, dwFlags)`.
    pub set_connection_settings: unsafe extern "system" fn(This, Handle, *const c_void, u32) -> HRESULT,
}

type App = LobbyObject<LobbiedApplicationVtbl>;

static APP_VTBL: LobbiedApplicationVtbl = LobbiedApplicationVtbl {
    unknown: IUnknownVtbl {
        query_interface: app_query_interface,
        add_ref: App::add_ref,
        release: App::release,
    },
    initialize: app_initialize,
    register_program,
    unregister_program,
    send: app_send,
    set_app_available,
    update_status,
    close: app_close,
    get_connection_settings: app_get_connection_settings,
    set_connection_settings: app_set_connection_settings,
};

/// The [`Constructor`](crate::classes::Constructor) of `CLSID_DirectPlay8LobbiedApplication`.
///
/// # Safety
/// `ppv` is writable; `riid` readable or null.
pub(crate) unsafe fn construct_lobbied_application(riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { construct(&APP_VTBL, IID_IDIRECTPLAY8_LOBBIED_APPLICATION, riid, ppv) }
}

unsafe extern "system" fn app_query_interface(this: This, riid: *const GUID, ppv: *mut This) -> HRESULT {
    // SAFETY: `this` is ours; `query` checks `riid` and `ppv`.
    guard(DPNERR_GENERIC, || unsafe { App::query(this, riid, ppv, &[IID_IDIRECTPLAY8_LOBBIED_APPLICATION]) })
}

unsafe extern "system" fn app_initialize(
    this: This,
    _context: *mut c_void,
    handler: MessageHandler,
    connection: *mut Handle,
    flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours; `connection` is checked before it is written.
    unsafe {
        with::<LobbiedApplicationVtbl>(this, |lobby| {
            let hr = lobby.initialize(handler, flags);
            if hr == S_OK && !connection.is_null() {
                // Not lobby-launched: no connection to the lobby client.
                connection.write_unaligned(0);
            }
            hr
        })
    }
}

unsafe extern "system" fn register_program(this: This, desc: *const c_void, flags: u32) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe {
        with::<LobbiedApplicationVtbl>(this, |lobby| match (desc.is_null(), flags) {
            (true, _) => DPNERR_INVALIDPOINTER,
            (_, 0) => lobby.when_initialized(S_OK),
            _ => DPNERR_INVALIDFLAGS,
        })
    }
}

unsafe extern "system" fn unregister_program(this: This, app: *const GUID, flags: u32) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe {
        with::<LobbiedApplicationVtbl>(this, |lobby| match (app.is_null(), flags) {
            (true, _) => DPNERR_INVALIDPOINTER,
            (_, 0) => lobby.when_initialized(S_OK),
            _ => DPNERR_INVALIDFLAGS,
        })
    }
}

unsafe extern "system" fn app_send(
    this: This,
    _h: Handle,
    _buf: *const u8,
    _size: u32,
    _flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbiedApplicationVtbl>(this, |lobby| lobby.when_initialized(DPNERR_INVALIDHANDLE)) }
}

unsafe extern "system" fn set_app_available(this: This, _available: i32, flags: u32) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe {
        with::<LobbiedApplicationVtbl>(this, |lobby| {
            if flags & !DPLAVAILABLE_ALLOWMULTIPLECONNECT != 0 {
                return DPNERR_INVALIDFLAGS;
            }
            // Available to lobby clients: none will come.
            lobby.when_initialized(S_OK)
        })
    }
}

unsafe extern "system" fn update_status(this: This, _h: Handle, _status: u32, _flags: u32) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbiedApplicationVtbl>(this, |lobby| lobby.when_initialized(DPNERR_INVALIDHANDLE)) }
}

unsafe extern "system" fn app_close(this: This, _flags: u32) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbiedApplicationVtbl>(this, Lobby::close) }
}

unsafe extern "system" fn app_get_connection_settings(
    this: This,
    _h: Handle,
    _buf: *mut c_void,
    _size: *mut u32,
    _flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbiedApplicationVtbl>(this, |lobby| lobby.when_initialized(DPNERR_INVALIDHANDLE)) }
}

unsafe extern "system" fn app_set_connection_settings(
    this: This,
    _h: Handle,
    _settings: *const c_void,
    _flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbiedApplicationVtbl>(this, |lobby| lobby.when_initialized(DPNERR_INVALIDHANDLE)) }
}

/// `IDirectPlay8LobbyClient`'s vtable, in `dplobby8.h`'s order.
#[repr(C)]
pub struct LobbyClientVtbl {
    /// `QueryInterface`, `AddRef`, `Release`.
    pub unknown: IUnknownVtbl,
    /// `Initialize(pvUserContext, pfn, dwFlags)`.
    pub initialize: unsafe extern "system" fn(This, *mut c_void, MessageHandler, u32) -> HRESULT,
    /// `EnumLocalPrograms(pGuidApplication, pEnumData, pdwEnumData, pdwItems, dwFlags)`.
    pub enum_local_programs:
        unsafe extern "system" fn(This, *const GUID, *mut u8, *mut u32, *mut u32, u32) -> HRESULT,
    /// `ConnectApplication(pdplConnectionInfo, pvConnectionContext, hApplication, dwTimeOut,
    /// dwFlags)`.
    pub connect_application:
        unsafe extern "system" fn(This, *const c_void, *mut c_void, *mut Handle, u32, u32) -> HRESULT,
    /// `Send(hConnection, pBuffer, pBufferSize, dwFlags)`.
    pub send: unsafe extern "system" fn(This, Handle, *const u8, u32, u32) -> HRESULT,
    /// `ReleaseApplication(hConnection, dwFlags)`.
    pub release_application: unsafe extern "system" fn(This, Handle, u32) -> HRESULT,
    /// `Close(dwFlags)`.
    pub close: unsafe extern "system" fn(This, u32) -> HRESULT,
    /// `GetConnectionSettings(hConnection, pdplSessionInfo, pdwInfoSize, dwFlags)`.
    pub get_connection_settings:
        unsafe extern "system" fn(This, Handle, *mut c_void, *mut u32, u32) -> HRESULT,
    /// `SetConnectionSettings(hConnection, pdplSessionInfo, dwFlags)`.
    pub set_connection_settings: unsafe extern "system" fn(This, Handle, *const c_void, u32) -> HRESULT,
}

type Client = LobbyObject<LobbyClientVtbl>;

static CLIENT_VTBL: LobbyClientVtbl = LobbyClientVtbl {
    unknown: IUnknownVtbl {
        query_interface: client_query_interface,
        add_ref: Client::add_ref,
        release: Client::release,
    },
    initialize: client_initialize,
    enum_local_programs,
    connect_application,
    send: client_send,
    release_application,
    close: client_close,
    get_connection_settings: client_get_connection_settings,
    set_connection_settings: client_set_connection_settings,
};

/// The [`Constructor`](crate::classes::Constructor) of `CLSID_DirectPlay8LobbyClient`.
///
/// # Safety
/// `ppv` is writable; `riid` readable or null.
pub(crate) unsafe fn construct_lobby_client(riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { construct(&CLIENT_VTBL, IID_IDIRECTPLAY8_LOBBY_CLIENT, riid, ppv) }
}

unsafe extern "system" fn client_query_interface(this: This, riid: *const GUID, ppv: *mut This) -> HRESULT {
    // SAFETY: `this` is ours; `query` checks `riid` and `ppv`.
    guard(DPNERR_GENERIC, || unsafe { Client::query(this, riid, ppv, &[IID_IDIRECTPLAY8_LOBBY_CLIENT]) })
}

unsafe extern "system" fn client_initialize(
    this: This,
    _context: *mut c_void,
    handler: MessageHandler,
    flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbyClientVtbl>(this, |lobby| lobby.initialize(handler, flags)) }
}

unsafe extern "system" fn enum_local_programs(
    this: This,
    _app: *const GUID,
    buf: *mut u8,
    size: *mut u32,
    items: *mut u32,
    flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours; the out pointers are checked before they are written.
    unsafe {
        with::<LobbyClientVtbl>(this, |lobby| {
            if flags != 0 {
                return DPNERR_INVALIDFLAGS;
            }
            if items.is_null() || crate::address::text::check_out(buf, size).is_err() {
                return DPNERR_INVALIDPOINTER;
            }
            let hr = lobby.when_initialized(S_OK);
            if hr == S_OK {
                // No lobbyable program is known: nothing to list.
                size.write_unaligned(0);
                items.write_unaligned(0);
            }
            hr
        })
    }
}

unsafe extern "system" fn connect_application(
    this: This,
    info: *const c_void,
    _context: *mut c_void,
    app: *mut Handle,
    _timeout: u32,
    flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe {
        with::<LobbyClientVtbl>(this, |lobby| {
            if info.is_null() || app.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            if flags != 0 {
                return DPNERR_INVALIDFLAGS;
            }
            // DPL_CONNECT_INFO: dwSize, then dwFlags. This DLL launches no program, and no
            // running one made itself available (there is no lobby channel between processes).
            let launch = DPLCONNECT_LAUNCHNEW | DPLCONNECT_LAUNCHNOTFOUND;
            let info_flags = info.cast::<u32>().add(1).read_unaligned();
            let refusal =
                if info_flags & launch != 0 { DPNERR_CANTLAUNCHAPPLICATION } else { DPNERR_NOCONNECTION };
            lobby.when_initialized(refusal)
        })
    }
}

unsafe extern "system" fn client_send(
    this: This,
    _h: Handle,
    _buf: *const u8,
    _size: u32,
    _flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbyClientVtbl>(this, |lobby| lobby.when_initialized(DPNERR_INVALIDHANDLE)) }
}

unsafe extern "system" fn release_application(this: This, _h: Handle, _flags: u32) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbyClientVtbl>(this, |lobby| lobby.when_initialized(DPNERR_INVALIDHANDLE)) }
}

unsafe extern "system" fn client_close(this: This, _flags: u32) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbyClientVtbl>(this, Lobby::close) }
}

unsafe extern "system" fn client_get_connection_settings(
    this: This,
    _h: Handle,
    _buf: *mut c_void,
    _size: *mut u32,
    _flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbyClientVtbl>(this, |lobby| lobby.when_initialized(DPNERR_INVALIDHANDLE)) }
}

unsafe extern "system" fn client_set_connection_settings(
    this: This,
    _h: Handle,
    _settings: *const c_void,
    _flags: u32,
) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe { with::<LobbyClientVtbl>(this, |lobby| lobby.when_initialized(DPNERR_INVALIDHANDLE)) }
}

#[cfg(test)]
mod tests {
    use std::ptr::{null, null_mut};

    use super::*;
    use crate::classes::{CLSID_DIRECTPLAY8_LOBBIED_APPLICATION, CLSID_DIRECTPLAY8_LOBBY_CLIENT};
    use crate::com::E_NOINTERFACE;
    use crate::exports::DirectPlay8Create;

    unsafe extern "system" fn handler(_: *mut c_void, _: u32, _: *mut c_void) -> HRESULT {
        S_OK
    }

    /// An object of the class that answers `iid`, made as `DirectPlay8Create` makes it.
    fn create<V>(iid: GUID) -> (This, &'static V) {
        let mut p = null_mut();
        // SAFETY: the export's contract.
        assert_eq!(unsafe { DirectPlay8Create(&iid, &mut p, null_mut()) }, S_OK);
        // SAFETY: a live interface pointer points at its vtable pointer.
        (p, unsafe { &**p.cast::<*const V>() })
    }

    #[test]
    fn both_classes_are_served() {
        for clsid in [CLSID_DIRECTPLAY8_LOBBIED_APPLICATION, CLSID_DIRECTPLAY8_LOBBY_CLIENT] {
            assert!(crate::classes::constructor(&clsid).is_some());
        }
    }

    /// A game started by its user: Initialize gives it no lobby connection; nothing else
    /// reaches a lobby.
    #[test]
    fn lobbied_application_was_not_lobby_launched() {
        let (p, vt) = create::<LobbiedApplicationVtbl>(IID_IDIRECTPLAY8_LOBBIED_APPLICATION);
        let mut h: Handle = 0xDEAD;
        // SAFETY (whole block): the game's side of the contract, or null on purpose.
        unsafe {
            assert_eq!((vt.send)(p, 1, b"x".as_ptr(), 1, 0), DPNERR_UNINITIALIZED);
            assert_eq!((vt.initialize)(p, null_mut(), None, &mut h, 0), DPNERR_INVALIDPARAM);
            assert_eq!((vt.initialize)(p, null_mut(), Some(handler), &mut h, 2), DPNERR_INVALIDFLAGS);
            assert_eq!((vt.initialize)(p, null_mut(), Some(handler), &mut h, 0), S_OK);
            assert_eq!(h, 0, "no lobby connection");
            assert_eq!((vt.initialize)(p, null_mut(), Some(handler), &mut h, 0), DPNERR_ALREADYINITIALIZED);
            assert_eq!((vt.set_app_available)(p, 1, 0), S_OK);
            assert_eq!((vt.set_app_available)(p, 1, 4), DPNERR_INVALIDFLAGS);
            assert_eq!((vt.register_program)(p, null(), 0), DPNERR_INVALIDPOINTER);
            assert_eq!((vt.unregister_program)(p, &GUID::default(), 0), S_OK);
            assert_eq!((vt.send)(p, 1, b"x".as_ptr(), 1, 0), DPNERR_INVALIDHANDLE);
            assert_eq!((vt.update_status)(p, 1, 1, 0), DPNERR_INVALIDHANDLE);
            let mut size = 0u32;
            assert_eq!((vt.get_connection_settings)(p, 1, null_mut(), &mut size, 0), DPNERR_INVALIDHANDLE);
            assert_eq!((vt.set_connection_settings)(p, 1, null(), 0), DPNERR_INVALIDHANDLE);
            assert_eq!((vt.close)(p, 0), S_OK);
            assert_eq!((vt.close)(p, 0), DPNERR_UNINITIALIZED);
            let mut other = null_mut();
            assert_eq!(
                (vt.unknown.query_interface)(p, &IID_IDIRECTPLAY8_LOBBY_CLIENT, &mut other),
                E_NOINTERFACE
            );
            assert_eq!((vt.unknown.release)(p), 0);
        }
    }

    #[test]
    fn lobby_client_finds_and_reaches_no_program() {
        let (p, vt) = create::<LobbyClientVtbl>(IID_IDIRECTPLAY8_LOBBY_CLIENT);
        let (mut size, mut items, mut h) = (0u32, 7u32, 0 as Handle);
        // SAFETY (whole block): the game's side of the contract, or null on purpose.
        unsafe {
            assert_eq!(
                (vt.enum_local_programs)(p, null(), null_mut(), &mut size, &mut items, 0),
                DPNERR_UNINITIALIZED
            );
            assert_eq!((vt.initialize)(p, null_mut(), Some(handler), 0), S_OK);
            assert_eq!((vt.enum_local_programs)(p, null(), null_mut(), &mut size, &mut items, 0), S_OK);
            assert_eq!((size, items), (0, 0));
            assert_eq!(
                (vt.enum_local_programs)(p, null(), null_mut(), &mut size, null_mut(), 0),
                DPNERR_INVALIDPOINTER
            );
            let mut info = [0u32; 12];
            info[0] = 44;
            let at = info.as_ptr().cast();
            assert_eq!((vt.connect_application)(p, at, null_mut(), &mut h, 1000, 0), DPNERR_NOCONNECTION);
            assert_eq!((vt.connect_application)(p, at, null_mut(), &mut h, 1000, 1), DPNERR_INVALIDFLAGS);
            info[1] = DPLCONNECT_LAUNCHNEW;
            let at = info.as_ptr().cast();
            assert_eq!(
                (vt.connect_application)(p, at, null_mut(), &mut h, 1000, 0),
                DPNERR_CANTLAUNCHAPPLICATION
            );
            assert_eq!(
                (vt.connect_application)(p, null(), null_mut(), &mut h, 1000, 0),
                DPNERR_INVALIDPOINTER
            );
            assert_eq!((vt.send)(p, 1, b"x".as_ptr(), 1, 0), DPNERR_INVALIDHANDLE);
            assert_eq!((vt.release_application)(p, 1, 0), DPNERR_INVALIDHANDLE);
            assert_eq!((vt.close)(p, 0), S_OK);
            assert_eq!((vt.unknown.release)(p), 0);
        }
    }
}
