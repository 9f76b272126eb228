//! The classes the DLL serves, by CLSID (`dplay8.h`, `dpaddr.h`, `dplobby8.h`), and the
//! interface ids each class answers.
//!
//! Wine registers all seven DirectPlay 8 classes to `dpnet.dll`, so `DllGetClassObject` must
//! serve each of them. A class module exposes one constructor of the [`Constructor`] shape;
//! adding a class is one row of [`CLASSES`].

use std::ffi::c_void;

use crate::com::{GUID, HRESULT};

/// Creates an object of one class and answers `riid` on it: `S_OK` with `*ppv` set, or an
/// error with `*ppv` null. The caller has checked `ppv` is not null.
pub type Constructor = unsafe fn(riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT;

/// `CLSID_DirectPlay8Peer`.
pub const CLSID_DIRECTPLAY8_PEER: GUID = GUID::from_u128(0x286F484D_375E_4458_A272_B138E2F80A6A);
/// `CLSID_DirectPlay8Client`.
pub const CLSID_DIRECTPLAY8_CLIENT: GUID = GUID::from_u128(0x743F1DC6_5ABA_429F_8BDF_C54D03253DC2);
/// `CLSID_DirectPlay8Server`.
pub const CLSID_DIRECTPLAY8_SERVER: GUID = GUID::from_u128(0xDA825E1B_6830_43D7_835D_0B5AD82956A2);
/// `CLSID_DirectPlay8ThreadPool` (DirectX 9).
pub const CLSID_DIRECTPLAY8_THREAD_POOL: GUID = GUID::from_u128(0xFC47060E_6153_4B34_B975_8E4121EB7F3C);
/// `CLSID_DirectPlay8Address` (`dpaddr.h`).
pub const CLSID_DIRECTPLAY8_ADDRESS: GUID = GUID::from_u128(0x934A9523_A3CA_4BC5_ADA0_D6D95D979421);
/// `CLSID_DirectPlay8LobbiedApplication` (`dplobby8.h`).
pub const CLSID_DIRECTPLAY8_LOBBIED_APPLICATION: GUID =
    GUID::from_u128(0x667955AD_6B3B_43CA_B949_BC69B5BAFF7F);
/// `CLSID_DirectPlay8LobbyClient` (`dplobby8.h`).
pub const CLSID_DIRECTPLAY8_LOBBY_CLIENT: GUID = GUID::from_u128(0x3B2B6775_70B6_45AF_8DEA_A209C69559F3);

/// `IID_IDirectPlay8Peer`.
pub const IID_IDIRECTPLAY8_PEER: GUID = GUID::from_u128(0x5102DACF_241B_11D3_AEA7_006097B01411);
/// `IID_IDirectPlay8Client`.
pub const IID_IDIRECTPLAY8_CLIENT: GUID = GUID::from_u128(0x5102DACD_241B_11D3_AEA7_006097B01411);
/// `IID_IDirectPlay8Server`.
pub const IID_IDIRECTPLAY8_SERVER: GUID = GUID::from_u128(0x5102DACE_241B_11D3_AEA7_006097B01411);
/// `IID_IDirectPlay8ThreadPool`.
pub const IID_IDIRECTPLAY8_THREAD_POOL: GUID = GUID::from_u128(0x0D22EE73_4A46_4A0D_89B2_045B4D666425);
/// `IID_IDirectPlay8Address`.
pub const IID_IDIRECTPLAY8_ADDRESS: GUID = GUID::from_u128(0x83783300_4063_4C8A_9DB3_82830A7FEB31);
/// `IID_IDirectPlay8AddressIP`.
pub const IID_IDIRECTPLAY8_ADDRESS_IP: GUID = GUID::from_u128(0xE5A0E990_2BAD_430B_87DA_A142CF75DE58);
/// `IID_IDirectPlay8LobbiedApplication`.
pub const IID_IDIRECTPLAY8_LOBBIED_APPLICATION: GUID =
    GUID::from_u128(0x819074A3_016C_11D3_AE14_006097B01411);
/// `IID_IDirectPlay8LobbyClient`.
pub const IID_IDIRECTPLAY8_LOBBY_CLIENT: GUID = GUID::from_u128(0x819074A2_016C_11D3_AE14_006097B01411);

/// Every class the DLL serves and how to make one. A class not yet implemented is absent, so
/// `DllGetClassObject` answers CLASS_E_CLASSNOTAVAILABLE for it.
pub static CLASSES: &[(GUID, Constructor)] = &[
    (CLSID_DIRECTPLAY8_PEER, crate::peer::create),
    (CLSID_DIRECTPLAY8_CLIENT, crate::client::create),
    (CLSID_DIRECTPLAY8_SERVER, crate::server::create),
    (CLSID_DIRECTPLAY8_THREAD_POOL, crate::threadpool::create),
    (CLSID_DIRECTPLAY8_ADDRESS, crate::address::construct),
    (CLSID_DIRECTPLAY8_LOBBIED_APPLICATION, crate::lobby::construct_lobbied_application),
    (CLSID_DIRECTPLAY8_LOBBY_CLIENT, crate::lobby::construct_lobby_client),
];

/// The constructor of `clsid`, if the DLL serves it.
pub fn constructor(clsid: &GUID) -> Option<Constructor> {
    CLASSES.iter().find(|(id, _)| id == clsid).map(|&(_, make)| make)
}

/// The class `DirectPlay8Create` makes for an interface id (`dplay8.h`: the function takes the
/// IID of the interface wanted, not a CLSID).
pub fn class_of_interface(iid: &GUID) -> Option<GUID> {
    [
        (IID_IDIRECTPLAY8_PEER, CLSID_DIRECTPLAY8_PEER),
        (IID_IDIRECTPLAY8_CLIENT, CLSID_DIRECTPLAY8_CLIENT),
        (IID_IDIRECTPLAY8_SERVER, CLSID_DIRECTPLAY8_SERVER),
        (IID_IDIRECTPLAY8_THREAD_POOL, CLSID_DIRECTPLAY8_THREAD_POOL),
        (IID_IDIRECTPLAY8_ADDRESS, CLSID_DIRECTPLAY8_ADDRESS),
        (IID_IDIRECTPLAY8_ADDRESS_IP, CLSID_DIRECTPLAY8_ADDRESS),
        (IID_IDIRECTPLAY8_LOBBIED_APPLICATION, CLSID_DIRECTPLAY8_LOBBIED_APPLICATION),
        (IID_IDIRECTPLAY8_LOBBY_CLIENT, CLSID_DIRECTPLAY8_LOBBY_CLIENT),
    ]
    .into_iter()
    .find(|(i, _)| i == iid)
    .map(|(_, c)| c)
}
