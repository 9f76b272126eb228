//! Reading the strings a game passes and writing results back with the buffer-size protocol
//! the address API shares (`dpaddr.h`; SDK documentation of `GetURLW`, `GetComponentByName`).

use std::ffi::c_void;

use crate::codes::{DPNERR_BUFFERTOOSMALL, DPNERR_INVALIDPOINTER};
use crate::com::{HRESULT, S_OK};

/// The longest string we read from a game before giving up (a URL or a name has no
/// documented limit; this bounds a scan through memory that lacks its NUL).
pub(crate) const MAX_CHARS: usize = 1 << 20;

/// The characters of a NUL-terminated UTF-16 string, without the NUL; `None` when the string
/// is longer than [`MAX_CHARS`].
///
/// # Safety
/// `p` is non-null and points at a NUL-terminated UTF-16 string (any alignment).
pub(crate) unsafe fn wide_until_nul(p: *const u16) -> Option<Vec<u16>> {
    let mut out = Vec::new();
    for i in 0..MAX_CHARS {
        // SAFETY: the caller vouches for a readable string up to its NUL.
        let c = unsafe { p.add(i).read_unaligned() };
        if c == 0 {
            return Some(out);
        }
        out.push(c);
    }
    None
}

/// The bytes of a NUL-terminated 8-bit string, without the NUL, as [`wide_until_nul`].
///
/// # Safety
/// `p` is non-null and points at a NUL-terminated byte string.
pub(crate) unsafe fn bytes_until_nul(p: *const u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for i in 0..MAX_CHARS {
        // SAFETY: the caller vouches for a readable string up to its NUL.
        let c = unsafe { p.add(i).read() };
        if c == 0 {
            return Some(out);
        }
        out.push(c);
    }
    None
}

/// A UTF-16 string as UTF-16 with its NUL, the form the API returns strings in.
pub(crate) fn wide_nul(s: &str) -> Vec<u16> {
    s.encode_utf16().chain([0]).collect()
}

/// Checks an (out buffer, in/out size) pair before any work: the size pointer must be
/// valid, and the buffer may be null only when the size is 0.
///
/// # Safety
/// `size`, when non-null, is readable.
pub(crate) unsafe fn check_out<T>(buf: *mut T, size: *const u32) -> Result<(), HRESULT> {
    // SAFETY: checked non-null first; the caller vouches it is readable.
    if size.is_null() || (buf.is_null() && unsafe { size.read_unaligned() } != 0) {
        return Err(DPNERR_INVALIDPOINTER);
    }
    Ok(())
}

/// Whether `data` fits the buffer of `*size` units; always writes the units needed to `*size`.
/// The address API writes the needed size on failure and the written size on success, which
/// are the same number.
///
/// # Safety
/// `size` is valid for reads and writes (see [`check_out`]).
pub(crate) unsafe fn fits(len: usize, size: *mut u32) -> bool {
    let needed = u32::try_from(len).unwrap_or(u32::MAX);
    // SAFETY: the caller checked `size`.
    let room = unsafe { size.read_unaligned() };
    // SAFETY: as above.
    unsafe { size.write_unaligned(needed) };
    room >= needed
}

/// Copies `data` into `buf` of `*size` elements with the size protocol: DPNERR_BUFFERTOOSMALL
/// and the needed count when it does not fit, else S_OK and the count written.
///
/// # Safety
/// As [`check_out`], and `buf` holds `*size` elements when non-null.
pub(crate) unsafe fn copy_out<T: Copy>(data: &[T], buf: *mut T, size: *mut u32) -> HRESULT {
    // SAFETY: forwarded from the caller.
    if let Err(hr) = unsafe { check_out(buf, size) } {
        return hr;
    }
    // SAFETY: checked above.
    if !unsafe { fits(data.len(), size) } {
        return DPNERR_BUFFERTOOSMALL;
    }
    if data.is_empty() {
        return S_OK;
    }
    // SAFETY: `buf` holds at least `data.len()` elements (it fits), maybe unaligned.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().cast::<u8>(), buf.cast::<u8>(), size_of_val(data)) };
    S_OK
}

/// Writes a value through an out pointer that may be null (DPNERR_INVALIDPOINTER) or unaligned.
///
/// # Safety
/// `p`, when non-null, is writable for a `T`.
pub(crate) unsafe fn put<T>(p: *mut T, value: T) -> HRESULT {
    if p.is_null() {
        return DPNERR_INVALIDPOINTER;
    }
    // SAFETY: checked non-null; the caller vouches it is writable.
    unsafe { p.write_unaligned(value) };
    S_OK
}

/// `len` bytes at `p` as a slice (an empty slice when `len` is 0, whatever `p` is).
///
/// # Safety
/// When `len > 0`, `p` is non-null and readable for `len` bytes.
pub(crate) unsafe fn bytes_at<'a>(p: *const c_void, len: u32) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the caller vouches for `len` readable bytes.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) }
}
