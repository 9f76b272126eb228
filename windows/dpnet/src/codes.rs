//! The `DPNERR_*` result codes the COM methods answer with (`dplay8.h`), as HRESULTs. The values
//! come from dplay-wire's [`ResultCode`], which names every `DPNERR_*`.

use dplay_wire::dp8::session::ResultCode;

use crate::com::HRESULT;

const fn hr(code: ResultCode) -> HRESULT {
    code.0 as HRESULT
}

/// `DPNSUCCESS_EQUAL`: `MAKE_HRESULT(0, 0x15, 0x8005)` (`dplay8.h`).
pub(crate) const DPNSUCCESS_EQUAL: HRESULT = 0x0015_8005;
/// `DPNSUCCESS_NOTEQUAL`: `MAKE_HRESULT(0, 0x15, 0x800A)` (`dplay8.h`).
pub(crate) const DPNSUCCESS_NOTEQUAL: HRESULT = 0x0015_800A;
pub(crate) const DPNERR_ALREADYINITIALIZED: HRESULT = hr(ResultCode::DPNERR_ALREADYINITIALIZED);
pub(crate) const DPNERR_BUFFERTOOSMALL: HRESULT = hr(ResultCode::DPNERR_BUFFERTOOSMALL);
pub(crate) const DPNERR_CANTLAUNCHAPPLICATION: HRESULT = hr(ResultCode::DPNERR_CANTLAUNCHAPPLICATION);
pub(crate) const DPNERR_DOESNOTEXIST: HRESULT = hr(ResultCode::DPNERR_DOESNOTEXIST);
pub(crate) const DPNERR_GENERIC: HRESULT = hr(ResultCode::DPNERR_GENERIC);
pub(crate) const DPNERR_INCOMPLETEADDRESS: HRESULT = hr(ResultCode::DPNERR_INCOMPLETEADDRESS);
pub(crate) const DPNERR_INVALIDADDRESSFORMAT: HRESULT = hr(ResultCode::DPNERR_INVALIDADDRESSFORMAT);
pub(crate) const DPNERR_INVALIDFLAGS: HRESULT = hr(ResultCode::DPNERR_INVALIDFLAGS);
pub(crate) const DPNERR_INVALIDHANDLE: HRESULT = hr(ResultCode::DPNERR_INVALIDHANDLE);
pub(crate) const DPNERR_INVALIDHOSTADDRESS: HRESULT = hr(ResultCode::DPNERR_INVALIDHOSTADDRESS);
pub(crate) const DPNERR_INVALIDPARAM: HRESULT = hr(ResultCode::DPNERR_INVALIDPARAM);
pub(crate) const DPNERR_INVALIDPOINTER: HRESULT = hr(ResultCode::DPNERR_INVALIDPOINTER);
pub(crate) const DPNERR_INVALIDURL: HRESULT = hr(ResultCode::DPNERR_INVALIDURL);
pub(crate) const DPNERR_NOCONNECTION: HRESULT = hr(ResultCode::DPNERR_NOCONNECTION);
pub(crate) const DPNERR_UNINITIALIZED: HRESULT = hr(ResultCode::DPNERR_UNINITIALIZED);
