//! `CLSID_DirectPlay8Address`: the `IDirectPlay8Address` and `IDirectPlay8AddressIP`
//! interfaces (`dpaddr.h`) over one [`DirectPlayUrl`].
//!
//! An address object *is* a DN_ADDRESSING_URL (MC-DPL8CS 2.2.8): its components are the URL's
//! typed key/value pairs, its user data the bytes after `#`. dplay-wire parses and writes the
//! text; this module only maps the API's calls, buffers and result codes onto it. Behaviour
//! follows the SDK documentation of each method; where it is silent, the answers Windows gives
//! as Wine's `dlls/dpnet/tests/address.c` records them (decisions.md, "dpnet.dll: address").
//!
//! The Peer, Client and Server objects use [`create_address`] to hand an address to the game
//! and [`address_url`] to read one the game passes, whoever implemented it.

mod dp4;
mod ip;
#[cfg(test)]
mod tests;
pub(crate) mod text;

use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use dplay_wire::dp8::url::{DirectPlayUrl, KEY_DEVICE, KEY_PROVIDER, UrlValue, key_kind};

pub use self::ip::AddressIpVtbl;
use self::ip::IP_VTBL;
use self::text::{bytes_at, bytes_until_nul, check_out, copy_out, fits, put, wide_nul, wide_until_nul};
use crate::classes::{IID_IDIRECTPLAY8_ADDRESS, IID_IDIRECTPLAY8_ADDRESS_IP};
use crate::codes::{
    DPNERR_BUFFERTOOSMALL, DPNERR_DOESNOTEXIST, DPNERR_GENERIC, DPNERR_INVALIDADDRESSFORMAT,
    DPNERR_INVALIDPARAM, DPNERR_INVALIDPOINTER, DPNERR_INVALIDURL, DPNSUCCESS_EQUAL, DPNSUCCESS_NOTEQUAL,
};
use crate::com::{E_NOINTERFACE, GUID, HRESULT, IID_IUNKNOWN, IUnknownVtbl, Object, S_OK, guard};

/// `DPNA_DATATYPE_STRING`: a NUL-terminated UTF-16 string.
pub const DPNA_DATATYPE_STRING: u32 = 1;
/// `DPNA_DATATYPE_DWORD`.
pub const DPNA_DATATYPE_DWORD: u32 = 2;
/// `DPNA_DATATYPE_GUID`.
pub const DPNA_DATATYPE_GUID: u32 = 3;
/// `DPNA_DATATYPE_BINARY`.
pub const DPNA_DATATYPE_BINARY: u32 = 4;
/// `DPNA_DATATYPE_STRING_ANSI`: a NUL-terminated 8-bit string (read as Latin-1; stored and
/// returned as a `DPNA_DATATYPE_STRING`).
pub const DPNA_DATATYPE_STRING_ANSI: u32 = 5;

type This = *mut c_void;

/// `IDirectPlay8Address`'s vtable, in `dpaddr.h`'s order.
#[repr(C)]
pub struct AddressVtbl {
    /// `QueryInterface`, `AddRef`, `Release`.
    pub unknown: IUnknownVtbl,
    /// `BuildFromURLW(pwszSourceURL)`.
    pub build_from_url_w: unsafe extern "system" fn(This, *const u16) -> HRESULT,
    /// `BuildFromURLA(pszSourceURL)`.
    pub build_from_url_a: unsafe extern "system" fn(This, *const u8) -> HRESULT,
    /// `Duplicate(ppdpaNewAddress)`.
    pub duplicate: unsafe extern "system" fn(This, *mut This) -> HRESULT,
    /// `SetEqual(pdpaAddress)`.
    pub set_equal: unsafe extern "system" fn(This, This) -> HRESULT,
    /// `IsEqual(pdpaAddress)`.
    pub is_equal: unsafe extern "system" fn(This, This) -> HRESULT,
    /// `Clear()`.
    pub clear: unsafe extern "system" fn(This) -> HRESULT,
    /// `GetURLW(pwszURL, pdwNumChars)`.
    pub get_url_w: unsafe extern "system" fn(This, *mut u16, *mut u32) -> HRESULT,
    /// `GetURLA(pszURL, pdwNumChars)`.
    pub get_url_a: unsafe extern "system" fn(This, *mut u8, *mut u32) -> HRESULT,
    /// `GetSP(pguidSP)`.
    pub get_sp: unsafe extern "system" fn(This, *mut GUID) -> HRESULT,
    /// `GetUserData(pvUserData, pdwBufferSize)`.
    pub get_user_data: unsafe extern "system" fn(This, *mut c_void, *mut u32) -> HRESULT,
    /// `SetSP(pguidSP)`.
    pub set_sp: unsafe extern "system" fn(This, *const GUID) -> HRESULT,
    /// `SetUserData(pvUserData, dwDataSize)`.
    pub set_user_data: unsafe extern "system" fn(This, *const c_void, u32) -> HRESULT,
    /// `GetNumComponents(pdwNumComponents)`.
    pub get_num_components: unsafe extern "system" fn(This, *mut u32) -> HRESULT,
    /// `GetComponentByName(pwszName, pvBuffer, pdwBufferSize, pdwDataType)`.
    pub get_component_by_name:
        unsafe extern "system" fn(This, *const u16, *mut c_void, *mut u32, *mut u32) -> HRESULT,
    /// `GetComponentByIndex(dwComponentID, pwszName, pdwNameLen, pvBuffer, pdwBufferSize,
    /// pdwDataType)`.
    pub get_component_by_index:
        unsafe extern "system" fn(This, u32, *mut u16, *mut u32, *mut c_void, *mut u32, *mut u32) -> HRESULT,
    /// `AddComponent(pwszName, lpvData, dwDataSize, dwDataType)`.
    pub add_component: unsafe extern "system" fn(This, *const u16, *const c_void, u32, u32) -> HRESULT,
    /// `GetDevice(pDevGuid)`.
    pub get_device: unsafe extern "system" fn(This, *mut GUID) -> HRESULT,
    /// `SetDevice(devGuid)`.
    pub set_device: unsafe extern "system" fn(This, *const GUID) -> HRESULT,
    /// `BuildFromDirectPlay4Address(pvAddress, dwDataSize)`.
    pub build_from_dp4_address: unsafe extern "system" fn(This, *mut c_void, u32) -> HRESULT,
}

/// The object's state. Its first field is the `IDirectPlay8AddressIP` interface pointer's
/// target: that interface's `this` is the address of `ip`.
#[repr(C)]
pub(crate) struct State {
    ip: &'static AddressIpVtbl,
    url: Mutex<DirectPlayUrl>,
}

type Address = Object<AddressVtbl, State>;

static VTBL: AddressVtbl = AddressVtbl {
    unknown: IUnknownVtbl { query_interface, add_ref: Address::add_ref, release: Address::release },
    build_from_url_w,
    build_from_url_a,
    duplicate,
    set_equal,
    is_equal,
    clear,
    get_url_w,
    get_url_a,
    get_sp,
    get_user_data,
    set_sp,
    set_user_data,
    get_num_components,
    get_component_by_name,
    get_component_by_index,
    add_component,
    get_device,
    set_device,
    build_from_dp4_address,
};

/// A new `IDirectPlay8Address` holding `url`, with one reference (the caller's).
pub fn create_address(url: &DirectPlayUrl) -> *mut c_void {
    Address::into_raw(&VTBL, State { ip: &IP_VTBL, url: Mutex::new(url.clone()) })
}

/// The class's [`Constructor`](crate::classes::Constructor): a new empty address answering
/// `riid`.
///
/// # Safety
/// `ppv` is writable; `riid` readable or null.
pub(crate) unsafe fn construct(riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    crate::log::init_once();
    let obj = create_address(&DirectPlayUrl::default());
    // SAFETY: `obj` is a new address; `query_interface` checks `riid` and `ppv`.
    unsafe {
        let hr = query_interface(obj, riid, ppv);
        Address::release(obj);
        hr
    }
}

/// The URL of any `IDirectPlay8Address` (ours or another implementation's), read through its
/// vtable with `GetURLW`. The object keeps its reference.
///
/// # Safety
/// `addr` is null or a live `IDirectPlay8Address` pointer.
pub unsafe fn address_url(addr: *mut c_void) -> Result<DirectPlayUrl, HRESULT> {
    if addr.is_null() {
        return Err(DPNERR_INVALIDPOINTER);
    }
    // SAFETY: a COM interface pointer points at its vtable pointer.
    let vtbl = unsafe { &**addr.cast::<*const AddressVtbl>() };
    let mut chars = 0u32;
    // SAFETY: the size protocol: a null buffer with size 0 asks for the size.
    let hr = unsafe { (vtbl.get_url_w)(addr, std::ptr::null_mut(), &mut chars) };
    if hr != DPNERR_BUFFERTOOSMALL {
        return Err(if hr < 0 { hr } else { DPNERR_GENERIC });
    }
    if chars as usize > text::MAX_CHARS {
        return Err(DPNERR_INVALIDURL);
    }
    let mut buf = vec![0u16; chars as usize];
    // SAFETY: `buf` holds `chars` characters.
    let hr = unsafe { (vtbl.get_url_w)(addr, buf.as_mut_ptr(), &mut chars) };
    if hr < 0 {
        return Err(hr);
    }
    let text = buf.iter().position(|&c| c == 0).map_or(&buf[..], |n| &buf[..n]);
    let text = String::from_utf16(text).map_err(|_| DPNERR_INVALIDURL)?;
    DirectPlayUrl::parse(&text).map_err(|_| DPNERR_INVALIDURL)
}

/// The state behind our `IDirectPlay8Address` pointer.
///
/// # Safety
/// `this` is an address object this module made, still referenced.
unsafe fn state<'a>(this: This) -> &'a State {
    // SAFETY: forwarded from the caller.
    &unsafe { Address::from_this(this) }.inner
}

impl State {
    fn url(&self) -> MutexGuard<'_, DirectPlayUrl> {
        // A panic while holding the lock cannot leave the URL half-written: every change is
        // one assignment. Keep serving it.
        self.url.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Runs a method body on the object's state, with the panic guard.
///
/// # Safety
/// As [`state`].
unsafe fn with_state(this: This, body: impl FnOnce(&State) -> HRESULT) -> HRESULT {
    // SAFETY: forwarded from the caller.
    guard(DPNERR_GENERIC, || body(unsafe { state(this) }))
}

unsafe extern "system" fn query_interface(this: This, riid: *const GUID, ppv: *mut This) -> HRESULT {
    guard(DPNERR_GENERIC, || {
        if ppv.is_null() || riid.is_null() {
            return DPNERR_INVALIDPOINTER;
        }
        // SAFETY: checked non-null; COM callers pass a readable IID.
        let iid = unsafe { riid.read_unaligned() };
        let target = if iid == IID_IUNKNOWN || iid == IID_IDIRECTPLAY8_ADDRESS {
            this
        } else if iid == IID_IDIRECTPLAY8_ADDRESS_IP {
            // SAFETY: `this` is ours; the IP interface pointer is the address of `ip`.
            std::ptr::from_ref(unsafe { &state(this).ip }).cast_mut().cast()
        } else {
            // SAFETY: checked non-null.
            unsafe { ppv.write_unaligned(std::ptr::null_mut()) };
            return E_NOINTERFACE;
        };
        // SAFETY: `this` is ours; the caller gets a new reference.
        unsafe {
            Address::add_ref(this);
            ppv.write_unaligned(target);
        }
        S_OK
    })
}

/// Replaces the object's URL by `text` parsed, or answers DPNERR_INVALIDURL and keeps it.
fn build_from_text(st: &State, text: Option<String>) -> HRESULT {
    match text.as_deref().map(DirectPlayUrl::parse) {
        Some(Ok(url)) => {
            *st.url() = url;
            S_OK
        }
        _ => DPNERR_INVALIDURL,
    }
}

unsafe extern "system" fn build_from_url_w(this: This, url: *const u16) -> HRESULT {
    // SAFETY: `this` is ours; `url` is checked before it is read.
    unsafe {
        with_state(this, |st| {
            if url.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            build_from_text(st, wide_until_nul(url).and_then(|w| String::from_utf16(&w).ok()))
        })
    }
}

unsafe extern "system" fn build_from_url_a(this: This, url: *const u8) -> HRESULT {
    // SAFETY: `this` is ours; `url` is checked before it is read.
    unsafe {
        with_state(this, |st| {
            if url.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            build_from_text(st, bytes_until_nul(url).map(|b| latin1(&b)))
        })
    }
}

unsafe extern "system" fn duplicate(this: This, out: *mut This) -> HRESULT {
    // SAFETY: `this` is ours; `put` checks `out`.
    unsafe {
        with_state(this, |st| {
            if out.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            put(out, create_address(&st.url()))
        })
    }
}

unsafe extern "system" fn set_equal(this: This, other: This) -> HRESULT {
    // SAFETY: `this` is ours; `other` is the game's address object. It is read before our lock
    // is taken, so `SetEqual(self)` cannot deadlock.
    unsafe {
        with_state(this, |st| match address_url(other) {
            Ok(url) => {
                *st.url() = url;
                S_OK
            }
            Err(DPNERR_INVALIDPOINTER) => DPNERR_INVALIDPOINTER,
            Err(_) => DPNERR_INVALIDADDRESSFORMAT,
        })
    }
}

unsafe extern "system" fn is_equal(this: This, other: This) -> HRESULT {
    // SAFETY: as `set_equal`.
    unsafe {
        with_state(this, |st| match address_url(other) {
            // Two addresses are equal when they write the same URL.
            Ok(url) if url.to_string() == st.url().to_string() => DPNSUCCESS_EQUAL,
            Ok(_) => DPNSUCCESS_NOTEQUAL,
            Err(hr) => hr,
        })
    }
}

unsafe extern "system" fn clear(this: This) -> HRESULT {
    // SAFETY: `this` is ours.
    unsafe {
        with_state(this, |st| {
            *st.url() = DirectPlayUrl::default();
            S_OK
        })
    }
}

unsafe extern "system" fn get_url_w(this: This, buf: *mut u16, chars: *mut u32) -> HRESULT {
    // SAFETY: `this` is ours; `copy_out` checks the buffer and its size.
    unsafe { with_state(this, |st| copy_out(&wide_nul(&st.url().to_string()), buf, chars)) }
}

unsafe extern "system" fn get_url_a(this: This, buf: *mut u8, chars: *mut u32) -> HRESULT {
    // SAFETY: as `get_url_w`. The URL text is ASCII: everything else is percent-encoded.
    unsafe {
        with_state(this, |st| {
            let mut text = st.url().to_string().into_bytes();
            text.push(0);
            copy_out(&text, buf, chars)
        })
    }
}

/// The GUID component `key`: DPNERR_DOESNOTEXIST when absent, DPNERR_INVALIDADDRESSFORMAT when
/// a URL gave it a value that is not a GUID.
unsafe fn get_guid(this: This, key: &str, out: *mut GUID) -> HRESULT {
    // SAFETY: `this` is ours; `put` checks `out`.
    unsafe {
        with_state(this, |st| {
            if out.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            match st.url().value(key) {
                Some(UrlValue::Guid(g)) => put(out, GUID::from_uuid(*g)),
                Some(_) => DPNERR_INVALIDADDRESSFORMAT,
                None => DPNERR_DOESNOTEXIST,
            }
        })
    }
}

/// Sets the GUID component `key` (`SetSP`, `SetDevice`).
unsafe fn set_guid(this: This, key: &str, guid: *const GUID) -> HRESULT {
    // SAFETY: `this` is ours; `guid` is checked before it is read.
    unsafe {
        with_state(this, |st| {
            if guid.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            st.url().set(key, UrlValue::Guid(guid.read_unaligned().to_uuid()));
            S_OK
        })
    }
}

unsafe extern "system" fn get_sp(this: This, out: *mut GUID) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { get_guid(this, KEY_PROVIDER, out) }
}

unsafe extern "system" fn set_sp(this: This, guid: *const GUID) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { set_guid(this, KEY_PROVIDER, guid) }
}

unsafe extern "system" fn get_device(this: This, out: *mut GUID) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { get_guid(this, KEY_DEVICE, out) }
}

unsafe extern "system" fn set_device(this: This, guid: *const GUID) -> HRESULT {
    // SAFETY: forwarded.
    unsafe { set_guid(this, KEY_DEVICE, guid) }
}

unsafe extern "system" fn get_user_data(this: This, buf: *mut c_void, size: *mut u32) -> HRESULT {
    // SAFETY: `this` is ours; `copy_out` checks the buffer and its size.
    unsafe {
        with_state(this, |st| match &st.url().user_data {
            Some(data) => copy_out(data, buf.cast::<u8>(), size),
            None => DPNERR_DOESNOTEXIST,
        })
    }
}

unsafe extern "system" fn set_user_data(this: This, data: *const c_void, size: u32) -> HRESULT {
    // SAFETY: `this` is ours; the game vouches for `size` bytes at a non-null `data`.
    unsafe {
        with_state(this, |st| {
            if data.is_null() && size != 0 {
                return DPNERR_INVALIDPOINTER;
            }
            // Setting no data removes it.
            st.url().user_data = (size != 0).then(|| bytes_at(data, size).to_vec());
            S_OK
        })
    }
}

unsafe extern "system" fn get_num_components(this: This, out: *mut u32) -> HRESULT {
    // SAFETY: `this` is ours; `put` checks `out`.
    unsafe { with_state(this, |st| put(out, u32::try_from(st.url().pairs.len()).unwrap_or(u32::MAX))) }
}

/// A value in the API's native form: its `DPNA_DATATYPE_*` and bytes.
fn native(value: &UrlValue) -> (u32, Vec<u8>) {
    match value {
        UrlValue::String(s) => {
            (DPNA_DATATYPE_STRING, wide_nul(s).iter().flat_map(|c| c.to_le_bytes()).collect())
        }
        UrlValue::Dword(n) => (DPNA_DATATYPE_DWORD, n.to_le_bytes().to_vec()),
        UrlValue::Guid(g) => {
            let g = GUID::from_uuid(*g);
            let mut bytes = Vec::with_capacity(16);
            bytes.extend_from_slice(&g.data1.to_le_bytes());
            bytes.extend_from_slice(&g.data2.to_le_bytes());
            bytes.extend_from_slice(&g.data3.to_le_bytes());
            bytes.extend_from_slice(&g.data4);
            (DPNA_DATATYPE_GUID, bytes)
        }
        UrlValue::Binary(b) => (DPNA_DATATYPE_BINARY, b.clone()),
    }
}

unsafe extern "system" fn get_component_by_name(
    this: This,
    name: *const u16,
    buf: *mut c_void,
    size: *mut u32,
    kind: *mut u32,
) -> HRESULT {
    // SAFETY: `this` is ours; every pointer is checked before use.
    unsafe {
        with_state(this, |st| {
            if name.is_null() || kind.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            if let Err(hr) = check_out(buf, size) {
                return hr;
            }
            let Some(key) = wide_until_nul(name).and_then(|w| String::from_utf16(&w).ok()) else {
                return DPNERR_DOESNOTEXIST;
            };
            let url = st.url();
            let Some(value) = url.value(&key) else { return DPNERR_DOESNOTEXIST };
            let (datatype, bytes) = native(value);
            kind.write_unaligned(datatype);
            copy_out(&bytes, buf.cast::<u8>(), size)
        })
    }
}

unsafe extern "system" fn get_component_by_index(
    this: This,
    index: u32,
    name: *mut u16,
    name_len: *mut u32,
    buf: *mut c_void,
    size: *mut u32,
    kind: *mut u32,
) -> HRESULT {
    // SAFETY: `this` is ours; every pointer is checked before use.
    unsafe {
        with_state(this, |st| {
            if kind.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            if let Err(hr) = check_out(name, name_len).and_then(|()| check_out(buf, size)) {
                return hr;
            }
            let url = st.url();
            let Some((key, value)) = url.pairs.get(index as usize) else { return DPNERR_DOESNOTEXIST };
            let key = wide_nul(key);
            let (datatype, bytes) = native(value);
            kind.write_unaligned(datatype);
            // Both sizes are reported, whichever buffer is short.
            let (name_fits, value_fits) = (fits(key.len(), name_len), fits(bytes.len(), size));
            if !(name_fits && value_fits) {
                return DPNERR_BUFFERTOOSMALL;
            }
            std::ptr::copy_nonoverlapping(key.as_ptr().cast::<u8>(), name.cast::<u8>(), key.len() * 2);
            if !bytes.is_empty() {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), bytes.len());
            }
            S_OK
        })
    }
}

/// A value the game passes to `AddComponent`, checked against the SDK documentation's size
/// rules: a DWORD is 4 bytes, a GUID 16, a string exactly its characters and one NUL.
///
/// # Safety
/// `data` is non-null and readable for `size` bytes, or up to its NUL for a string.
unsafe fn value_from_game(data: *const c_void, size: u32, datatype: u32) -> Option<UrlValue> {
    let len = size as usize;
    match datatype {
        DPNA_DATATYPE_DWORD if len == 4 => {
            // SAFETY: 4 readable bytes.
            Some(UrlValue::Dword(unsafe { data.cast::<u32>().read_unaligned() }))
        }
        DPNA_DATATYPE_GUID if len == 16 => {
            // SAFETY: 16 readable bytes.
            Some(UrlValue::Guid(unsafe { data.cast::<GUID>().read_unaligned() }.to_uuid()))
        }
        DPNA_DATATYPE_STRING if len.is_multiple_of(2) => {
            // Read up to the NUL, never past `size`: the NUL must be the last character.
            let p = data.cast::<u16>();
            // SAFETY: characters before the first NUL, all within `size`.
            let chars: Vec<u16> =
                (0..len / 2).map(|i| unsafe { p.add(i).read_unaligned() }).take_while(|&c| c != 0).collect();
            (chars.len() + 1 == len / 2)
                .then(|| String::from_utf16(&chars).ok())
                .flatten()
                .map(UrlValue::String)
        }
        DPNA_DATATYPE_STRING_ANSI => {
            let p = data.cast::<u8>();
            // SAFETY: bytes before the first NUL, all within `size`.
            let bytes: Vec<u8> =
                (0..len).map(|i| unsafe { p.add(i).read() }).take_while(|&c| c != 0).collect();
            (bytes.len() + 1 == len).then(|| UrlValue::String(latin1(&bytes)))
        }
        // SAFETY: `size` readable bytes.
        DPNA_DATATYPE_BINARY => Some(UrlValue::Binary(unsafe { bytes_at(data, size) }.to_vec())),
        _ => None,
    }
}

unsafe extern "system" fn add_component(
    this: This,
    name: *const u16,
    data: *const c_void,
    size: u32,
    datatype: u32,
) -> HRESULT {
    // SAFETY: `this` is ours; `name` and `data` are checked before they are read.
    unsafe {
        with_state(this, |st| {
            if name.is_null() || data.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            let key =
                wide_until_nul(name).and_then(|w| String::from_utf16(&w).ok()).filter(|k| !k.is_empty());
            let Some(key) = key else { return DPNERR_INVALIDPARAM };
            let Some(value) = value_from_game(data, size, datatype) else { return DPNERR_INVALIDPARAM };
            // "This method validates that the predefined component types are the right format."
            if key_kind(&key).is_some_and(|kind| kind != value.kind()) {
                return DPNERR_INVALIDPARAM;
            }
            st.url().set(&key, value);
            S_OK
        })
    }
}

unsafe extern "system" fn build_from_dp4_address(this: This, data: *mut c_void, size: u32) -> HRESULT {
    // SAFETY: `this` is ours; the game vouches for `size` bytes at a non-null `data`.
    unsafe {
        with_state(this, |st| {
            if data.is_null() {
                return DPNERR_INVALIDPOINTER;
            }
            match dp4::url_of(bytes_at(data, size)) {
                Ok(url) => {
                    *st.url() = url;
                    S_OK
                }
                Err(hr) => hr,
            }
        })
    }
}

/// 8-bit text as Latin-1: each byte is the character of that code point (the ANSI forms'
/// code page is unknown to us; URLs and keys are ASCII in practice).
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}
