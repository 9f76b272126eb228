//! Placeholder until branch dll-address lands IDirectPlay8Address here: the two functions of
//! the agreed contract, the first through the public vtable (`dpaddr.h`), the second making no
//! object yet (callbacks get a null address).

use std::ffi::c_void;

use dplay_wire::dp8::url::DirectPlayUrl;

use crate::com::HRESULT;
use crate::dpn;

type GetUrlA = unsafe extern "system" fn(*mut c_void, *mut u8, *mut u32) -> HRESULT;

/// A new IDirectPlay8Address with one reference (none yet: null).
pub fn create_address(_url: &DirectPlayUrl) -> *mut c_void {
    std::ptr::null_mut()
}

/// The URL of any IDirectPlay8Address, read with `GetURLA` (slot 10 of its vtable).
///
/// # Safety
/// `addr` is a live IDirectPlay8Address.
pub unsafe fn address_url(addr: *mut c_void) -> Result<DirectPlayUrl, HRESULT> {
    // SAFETY: a COM object starts with its vtable pointer; GetURLA is its 11th entry.
    let get: GetUrlA = unsafe { *(*addr.cast::<*const GetUrlA>()).add(10) };
    let mut len = 0u32;
    // SAFETY: asking for the size with a null buffer, as the API allows.
    unsafe { get(addr, std::ptr::null_mut(), &mut len) };
    let mut buf = vec![0u8; len.clamp(1, 65_536) as usize];
    // SAFETY: `buf` holds `len` bytes.
    let hr = unsafe { get(addr, buf.as_mut_ptr(), &mut len) };
    if hr < 0 {
        return Err(hr);
    }
    let text = buf.split(|&b| b == 0).next().unwrap_or_default();
    let text = std::str::from_utf8(text).map_err(|_| dpn::DPNERR_INVALIDPARAM)?;
    DirectPlayUrl::parse(text).map_err(|_| dpn::DPNERR_INVALIDPARAM)
}
