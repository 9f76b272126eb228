//! The functions a game, COM or an installer calls by name (Wine's `dpnet.spec` lists them):
//! `DllGetClassObject`, `DirectPlay8Create`, `DllCanUnloadNow`, `DllRegisterServer`,
//! `DllUnregisterServer`.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::classes::{self, Constructor};
use crate::com::{
    CLASS_E_CLASSNOTAVAILABLE, CLASS_E_NOAGGREGATION, E_FAIL, E_NOINTERFACE, E_POINTER, GUID, HRESULT,
    IID_ICLASSFACTORY, IID_IUNKNOWN, IUnknownVtbl, Object, S_FALSE, S_OK, guard,
};

/// Locks taken with `IClassFactory::LockServer`; the DLL stays loaded while any is held.
static SERVER_LOCKS: AtomicU32 = AtomicU32::new(0);

/// `IClassFactory`'s vtable.
#[repr(C)]
struct ClassFactoryVtbl {
    unknown: IUnknownVtbl,
    create_instance:
        unsafe extern "system" fn(*mut c_void, *mut c_void, *const GUID, *mut *mut c_void) -> HRESULT,
    lock_server: unsafe extern "system" fn(*mut c_void, i32) -> HRESULT,
}

type Factory = Object<ClassFactoryVtbl, Constructor>;

static FACTORY_VTBL: ClassFactoryVtbl = ClassFactoryVtbl {
    unknown: IUnknownVtbl {
        query_interface: factory_query_interface,
        add_ref: Factory::add_ref,
        release: Factory::release,
    },
    create_instance: factory_create_instance,
    lock_server: factory_lock_server,
};

unsafe extern "system" fn factory_query_interface(
    this: *mut c_void,
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: `this` is one of our factories; COM's contract covers `riid` and `ppv`.
    guard(E_FAIL, || unsafe { Factory::query(this, riid, ppv, &[IID_ICLASSFACTORY]) })
}

unsafe extern "system" fn factory_create_instance(
    this: *mut c_void,
    outer: *mut c_void,
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        if ppv.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null.
        unsafe { *ppv = std::ptr::null_mut() };
        if !outer.is_null() {
            return CLASS_E_NOAGGREGATION;
        }
        // SAFETY: `this` is one of our factories.
        let make = unsafe { Factory::from_this(this) }.inner;
        // SAFETY: `ppv` is checked; `riid` is the caller's.
        unsafe { make(riid, ppv) }
    })
}

unsafe extern "system" fn factory_lock_server(_this: *mut c_void, lock: i32) -> HRESULT {
    if lock != 0 {
        SERVER_LOCKS.fetch_add(1, Ordering::Relaxed);
    } else {
        let _ = SERVER_LOCKS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }
    S_OK
}

/// `DllGetClassObject(rclsid, riid, ppv)`: a class factory for one of [`classes::CLASSES`].
///
/// # Safety
/// COM's contract: readable GUIDs, a writable `ppv`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn DllGetClassObject(
    rclsid: *const GUID,
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        if ppv.is_null() || rclsid.is_null() || riid.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null; COM callers pass valid pointers.
        unsafe { *ppv = std::ptr::null_mut() };
        // SAFETY: as above.
        let (clsid, iid) = unsafe { (*rclsid, *riid) };
        let Some(make) = classes::constructor(&clsid) else {
            return CLASS_E_CLASSNOTAVAILABLE;
        };
        if iid != IID_ICLASSFACTORY && iid != IID_IUNKNOWN {
            return E_NOINTERFACE;
        }
        // SAFETY: checked non-null.
        unsafe { *ppv = Factory::into_raw(&FACTORY_VTBL, make) };
        S_OK
    })
}

/// `DirectPlay8Create(pcIID, ppvInterface, pUnknown)`: an object of the class that answers
/// `pcIID` (`dplay8.h`); `pUnknown` must be null (no aggregation).
///
/// # Safety
/// As [`DllGetClassObject`].
#[unsafe(no_mangle)]
pub unsafe extern "system" fn DirectPlay8Create(
    iid: *const GUID,
    ppv: *mut *mut c_void,
    outer: *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        if ppv.is_null() || iid.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null.
        unsafe { *ppv = std::ptr::null_mut() };
        if !outer.is_null() {
            return CLASS_E_NOAGGREGATION;
        }
        // SAFETY: checked non-null.
        let wanted = unsafe { *iid };
        match classes::class_of_interface(&wanted).and_then(|c| classes::constructor(&c)) {
            // SAFETY: checked pointers.
            Some(make) => unsafe { make(iid, ppv) },
            None => E_NOINTERFACE,
        }
    })
}

/// `DllCanUnloadNow`: S_OK when no object and no lock holds the DLL.
#[unsafe(no_mangle)]
pub extern "system" fn DllCanUnloadNow() -> HRESULT {
    // Objects keep their own threads and sockets and do not count themselves yet: stay loaded.
    let _ = SERVER_LOCKS.load(Ordering::Relaxed);
    S_FALSE
}

/// `DllRegisterServer`: nothing to do; Wine already registers every class to `dpnet.dll`.
#[unsafe(no_mangle)]
pub extern "system" fn DllRegisterServer() -> HRESULT {
    S_OK
}

/// `DllUnregisterServer`: nothing to undo.
#[unsafe(no_mangle)]
pub extern "system" fn DllUnregisterServer() -> HRESULT {
    S_OK
}
