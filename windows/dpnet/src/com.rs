//! COM plumbing shared by every object of the DLL: GUIDs, HRESULTs, `IUnknown` and the guard
//! that keeps a Rust panic from unwinding into the game.
//!
//! An object is an [`Object<V, T>`]: a pointer to its vtable `V` (whose first three entries are
//! [`IUnknownVtbl`]'s), a reference count and the Rust state `T`. The interface pointer a game
//! holds is the object's address, so a method recovers its state with [`Object::from_this`].

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU32, Ordering};

/// A COM result code (`HRESULT`): negative is failure.
pub type HRESULT = i32;

/// Success.
pub const S_OK: HRESULT = 0;
/// Success, "false".
pub const S_FALSE: HRESULT = 1;
/// The object has no such interface.
pub const E_NOINTERFACE: HRESULT = 0x8000_4002_u32 as i32;
/// A required pointer was null.
pub const E_POINTER: HRESULT = 0x8000_4003_u32 as i32;
/// Unspecified failure.
pub const E_FAIL: HRESULT = 0x8000_4005_u32 as i32;
/// Out of memory.
pub const E_OUTOFMEMORY: HRESULT = 0x8007_000E_u32 as i32;
/// The class does not support aggregation.
pub const CLASS_E_NOAGGREGATION: HRESULT = 0x8004_0110_u32 as i32;
/// The DLL does not serve this class.
pub const CLASS_E_CLASSNOTAVAILABLE: HRESULT = 0x8004_0111_u32 as i32;

/// A GUID as Windows lays it out in memory (`GUID` of `guiddef.h`, 16 bytes).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct GUID {
    /// `Data1`.
    pub data1: u32,
    /// `Data2`.
    pub data2: u16,
    /// `Data3`.
    pub data3: u16,
    /// `Data4`.
    pub data4: [u8; 8],
}
const _: () = assert!(size_of::<GUID>() == 16);

impl GUID {
    /// The GUID written `{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}` as one number.
    pub const fn from_u128(v: u128) -> Self {
        let b = v.to_be_bytes();
        Self {
            data1: (v >> 96) as u32,
            data2: (v >> 80) as u16,
            data3: (v >> 64) as u16,
            data4: [b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]],
        }
    }

    /// The same GUID as a `uuid::Uuid`.
    pub fn to_uuid(self) -> uuid::Uuid {
        uuid::Uuid::from_fields(self.data1, self.data2, self.data3, &self.data4)
    }

    /// A `uuid::Uuid` as a GUID.
    pub fn from_uuid(u: uuid::Uuid) -> Self {
        let (data1, data2, data3, data4) = u.as_fields();
        Self { data1, data2, data3, data4: *data4 }
    }
}

/// `IID_IUnknown`.
pub const IID_IUNKNOWN: GUID = GUID::from_u128(0x00000000_0000_0000_C000_000000000046);
/// `IID_IClassFactory`.
pub const IID_ICLASSFACTORY: GUID = GUID::from_u128(0x00000001_0000_0000_C000_000000000046);

/// The three methods every COM vtable starts with.
#[repr(C)]
pub struct IUnknownVtbl {
    /// `QueryInterface(this, riid, ppv)`.
    pub query_interface: unsafe extern "system" fn(*mut c_void, *const GUID, *mut *mut c_void) -> HRESULT,
    /// `AddRef(this)`.
    pub add_ref: unsafe extern "system" fn(*mut c_void) -> u32,
    /// `Release(this)`.
    pub release: unsafe extern "system" fn(*mut c_void) -> u32,
}

/// A COM object: the vtable pointer first, as the ABI wants, then the count and the state.
#[repr(C)]
pub struct Object<V: 'static, T> {
    vtbl: &'static V,
    refs: AtomicU32,
    /// The object's Rust state.
    pub inner: T,
}

impl<V: 'static, T> Object<V, T> {
    /// A new object with one reference, as an interface pointer.
    pub fn into_raw(vtbl: &'static V, inner: T) -> *mut c_void {
        Box::into_raw(Box::new(Self { vtbl, refs: AtomicU32::new(1), inner })).cast()
    }

    /// The object behind an interface pointer that [`Object::into_raw`] made with this `V` and `T`.
    ///
    /// # Safety
    /// `this` must be such a pointer, still referenced.
    pub unsafe fn from_this<'a>(this: *mut c_void) -> &'a Self {
        // SAFETY: the caller vouches that `this` came from `into_raw` and is alive.
        unsafe { &*this.cast::<Self>() }
    }

    /// `IUnknown::AddRef`.
    ///
    /// # Safety
    /// As [`Object::from_this`].
    pub unsafe extern "system" fn add_ref(this: *mut c_void) -> u32 {
        // SAFETY: forwarded from the caller.
        let obj = unsafe { Self::from_this(this) };
        obj.refs.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// `IUnknown::Release`: frees the object when the count reaches zero.
    ///
    /// # Safety
    /// As [`Object::from_this`]; the caller gives up its reference.
    pub unsafe extern "system" fn release(this: *mut c_void) -> u32 {
        // SAFETY: forwarded from the caller.
        let left = unsafe { Self::from_this(this) }.refs.fetch_sub(1, Ordering::AcqRel) - 1;
        if left == 0 {
            // SAFETY: the last reference is gone; `this` came from `Box::into_raw`.
            drop(unsafe { Box::from_raw(this.cast::<Self>()) });
        }
        left
    }

    /// `QueryInterface` for an object whose interfaces all share its one vtable: answers
    /// `IUnknown` and every IID in `iids` with `this`, anything else with E_NOINTERFACE.
    ///
    /// # Safety
    /// As [`Object::from_this`]; `riid` and `ppv` as COM's contract says.
    pub unsafe fn query(
        this: *mut c_void,
        riid: *const GUID,
        ppv: *mut *mut c_void,
        iids: &[GUID],
    ) -> HRESULT {
        if ppv.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null; COM callers pass a writable out pointer.
        unsafe { *ppv = std::ptr::null_mut() };
        if riid.is_null() {
            return E_POINTER;
        }
        // SAFETY: COM callers pass a readable IID.
        let iid = unsafe { *riid };
        if iid == IID_IUNKNOWN || iids.contains(&iid) {
            // SAFETY: forwarded from the caller.
            unsafe {
                Self::add_ref(this);
                *ppv = this;
            }
            S_OK
        } else {
            E_NOINTERFACE
        }
    }
}

/// Runs a COM method's body; a panic is caught here, logged, and answered with `on_panic`
/// (the closest DPNERR of the method) instead of unwinding into the game.
pub fn guard(on_panic: HRESULT, body: impl FnOnce() -> HRESULT) -> HRESULT {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(on_panic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_matches_the_text_form() {
        let g = GUID::from_u128(0x4F9A2E7D_4F1D_4C08_A5C6_5B3E1A2D9C71);
        assert_eq!((g.data1, g.data2, g.data3), (0x4F9A2E7D, 0x4F1D, 0x4C08));
        assert_eq!(g.data4, [0xA5, 0xC6, 0x5B, 0x3E, 0x1A, 0x2D, 0x9C, 0x71]);
        assert_eq!(GUID::from_uuid(g.to_uuid()), g);
        assert_eq!(g.to_uuid().to_string(), "4f9a2e7d-4f1d-4c08-a5c6-5b3e1a2d9c71");
    }

    #[test]
    fn a_panic_becomes_the_given_code() {
        assert_eq!(guard(E_FAIL, || panic!("boom")), E_FAIL);
        assert_eq!(guard(E_FAIL, || S_OK), S_OK);
    }
}
