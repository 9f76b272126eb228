//! The DirectPlay 8 API's numbers and structures as `dplay8.h` defines them: result codes,
//! message ids, flags and the `repr(C)` layouts games read and write (sizes checked against
//! the 32-bit ABI where a `dwSize` depends on them).

#![allow(missing_docs, non_camel_case_types, non_snake_case)] // `dplay8.h`'s own names

use std::ffi::c_void;

use crate::com::{GUID, HRESULT};

/// `DPNID`.
pub type DPNID = u32;
/// `DPNHANDLE`.
pub type DPNHANDLE = u32;
/// `PFNDPNMESSAGEHANDLER(pvUserContext, dwMessageType, pMessage)`.
pub type MessageHandler = unsafe extern "system" fn(*mut c_void, u32, *mut c_void) -> HRESULT;

pub(crate) use crate::codes::*;

pub const DPN_OK: HRESULT = 0;
pub const DPNSUCCESS_PENDING: HRESULT = 0x0015_800E;

const MSGID: u32 = 0xFFFF_0000;
pub const DPN_MSGID_ADD_PLAYER_TO_GROUP: u32 = MSGID | 0x01;
pub const DPN_MSGID_ASYNC_OP_COMPLETE: u32 = MSGID | 0x03;
pub const DPN_MSGID_CLIENT_INFO: u32 = MSGID | 0x04;
pub const DPN_MSGID_CONNECT_COMPLETE: u32 = MSGID | 0x05;
pub const DPN_MSGID_CREATE_GROUP: u32 = MSGID | 0x06;
pub const DPN_MSGID_CREATE_PLAYER: u32 = MSGID | 0x07;
pub const DPN_MSGID_DESTROY_GROUP: u32 = MSGID | 0x08;
pub const DPN_MSGID_DESTROY_PLAYER: u32 = MSGID | 0x09;
pub const DPN_MSGID_ENUM_HOSTS_QUERY: u32 = MSGID | 0x0A;
pub const DPN_MSGID_ENUM_HOSTS_RESPONSE: u32 = MSGID | 0x0B;
pub const DPN_MSGID_GROUP_INFO: u32 = MSGID | 0x0C;
pub const DPN_MSGID_HOST_MIGRATE: u32 = MSGID | 0x0D;
pub const DPN_MSGID_INDICATE_CONNECT: u32 = MSGID | 0x0E;
pub const DPN_MSGID_INDICATED_CONNECT_ABORTED: u32 = MSGID | 0x0F;
pub const DPN_MSGID_PEER_INFO: u32 = MSGID | 0x10;
pub const DPN_MSGID_RECEIVE: u32 = MSGID | 0x11;
pub const DPN_MSGID_REMOVE_PLAYER_FROM_GROUP: u32 = MSGID | 0x12;
pub const DPN_MSGID_RETURN_BUFFER: u32 = MSGID | 0x13;
pub const DPN_MSGID_SEND_COMPLETE: u32 = MSGID | 0x14;
pub const DPN_MSGID_SERVER_INFO: u32 = MSGID | 0x15;
pub const DPN_MSGID_TERMINATE_SESSION: u32 = MSGID | 0x16;

pub const DPNID_ALL_PLAYERS_GROUP: DPNID = 0;
pub const DPNDESTROYPLAYERREASON_NORMAL: u32 = 1;
pub const DPNDESTROYPLAYERREASON_CONNECTIONLOST: u32 = 2;
pub const DPNDESTROYPLAYERREASON_SESSIONTERMINATED: u32 = 3;
pub const DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER: u32 = 4;
pub const DPNDESTROYGROUPREASON_NORMAL: u32 = 1;
pub const DPNDESTROYGROUPREASON_SESSIONTERMINATED: u32 = 3;

pub const DPNOP_SYNC: u32 = 0x8000_0000;
pub const DPNLOBBY_REGISTER: u32 = 0x0001;
pub const DPNLOBBY_UNREGISTER: u32 = 0x0002;
pub const DPNCANCEL_CONNECT: u32 = 0x0001;
pub const DPNCANCEL_ENUM: u32 = 0x0002;
pub const DPNCANCEL_SEND: u32 = 0x0004;
pub const DPNCANCEL_ALL_OPERATIONS: u32 = 0x8000;
pub const DPNCANCEL_PLAYER_SENDS: u32 = 0x8000_0000;
pub const DPNCANCEL_PLAYER_SENDS_PRIORITY_HIGH: u32 = DPNCANCEL_PLAYER_SENDS | 0x0001_0000;
pub const DPNCANCEL_PLAYER_SENDS_PRIORITY_NORMAL: u32 = DPNCANCEL_PLAYER_SENDS | 0x0002_0000;
pub const DPNCANCEL_PLAYER_SENDS_PRIORITY_LOW: u32 = DPNCANCEL_PLAYER_SENDS | 0x0004_0000;
pub const DPNENUM_PLAYERS: u32 = 0x0001;
pub const DPNENUM_GROUPS: u32 = 0x0010;
pub const DPNENUMSERVICEPROVIDERS_ALL: u32 = 0x0001;
pub const DPNINITIALIZE_DISABLEPARAMVAL: u32 = 0x0001;
pub const DPNINFO_NAME: u32 = 0x0001;
pub const DPNINFO_DATA: u32 = 0x0002;
pub const DPNPLAYER_LOCAL: u32 = 0x0002;
pub const DPNPLAYER_HOST: u32 = 0x0004;
pub const DPNRECEIVE_GUARANTEED: u32 = 0x0001;
pub const DPNSEND_NOCOMPLETE: u32 = 0x0002;
pub const DPNSEND_COMPLETEONPROCESS: u32 = 0x0004;
pub const DPNSEND_GUARANTEED: u32 = 0x0008;
pub const DPNSEND_NONSEQUENTIAL: u32 = 0x0010;
pub const DPNSEND_NOLOOPBACK: u32 = 0x0020;
pub const DPNSEND_PRIORITY_LOW: u32 = 0x0040;
pub const DPNSEND_PRIORITY_HIGH: u32 = 0x0080;
pub const DPNGETSENDQUEUEINFO_PRIORITY_NORMAL: u32 = 0x0001;
pub const DPNGETSENDQUEUEINFO_PRIORITY_HIGH: u32 = 0x0002;
pub const DPNGETSENDQUEUEINFO_PRIORITY_LOW: u32 = 0x0004;
pub const DPNSENDCOMPLETE_GUARANTEED: u32 = 0x0001;
pub const DPNSESSION_CLIENT_SERVER: u32 = 0x0001;
pub const DPNSESSION_MIGRATE_HOST: u32 = 0x0004;
pub const DPNSESSION_NODPNSVR: u32 = 0x0040;
pub const DPNSESSION_REQUIREPASSWORD: u32 = 0x0080;
pub const DPNSESSION_NOENUMS: u32 = 0x0100;
pub const DPNSESSION_FAST_SIGNED: u32 = 0x0200;
pub const DPNSPCAPS_SUPPORTSDPNSRV: u32 = 0x0001;
pub const DPNSPCAPS_SUPPORTSBROADCAST: u32 = 0x0002;
pub const DPNSPCAPS_SUPPORTSALLADAPTERS: u32 = 0x0004;
pub const DPNSPCAPS_SUPPORTSTHREADPOOL: u32 = 0x0008;

/// `CLSID_DP8SP_TCPIP`: the TCP/IP service provider.
pub const CLSID_DP8SP_TCPIP: GUID = GUID::from_u128(0xEBFE7BA0_628D_11D2_AE0F_006097B01411);

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DPN_APPLICATION_DESC {
    pub dwSize: u32,
    pub dwFlags: u32,
    pub guidInstance: GUID,
    pub guidApplication: GUID,
    pub dwMaxPlayers: u32,
    pub dwCurrentPlayers: u32,
    pub pwszSessionName: *mut u16,
    pub pwszPassword: *mut u16,
    pub pvReservedData: *mut c_void,
    pub dwReservedDataSize: u32,
    pub pvApplicationReservedData: *mut c_void,
    pub dwApplicationReservedDataSize: u32,
}

#[repr(C)]
pub struct DPN_BUFFER_DESC {
    pub dwBufferSize: u32,
    pub pBufferData: *mut u8,
}

#[repr(C)]
pub struct DPN_CAPS {
    pub dwSize: u32,
    pub dwFlags: u32,
    pub dwConnectTimeout: u32,
    pub dwConnectRetries: u32,
    pub dwTimeoutUntilKeepAlive: u32,
}

#[repr(C)]
pub struct DPN_PLAYER_INFO {
    pub dwSize: u32,
    pub dwInfoFlags: u32,
    pub pwszName: *mut u16,
    pub pvData: *mut c_void,
    pub dwDataSize: u32,
    pub dwPlayerFlags: u32,
}

/// `DPN_GROUP_INFO` has the layout of [`DPN_PLAYER_INFO`] (`dwGroupFlags` last).
pub type DPN_GROUP_INFO = DPN_PLAYER_INFO;

#[repr(C)]
pub struct DPN_SERVICE_PROVIDER_INFO {
    pub dwFlags: u32,
    pub guid: GUID,
    pub pwszName: *mut u16,
    pub pvReserved: *mut c_void,
    pub dwReserved: u32,
}

#[repr(C)]
pub struct DPN_SP_CAPS {
    pub dwSize: u32,
    pub dwFlags: u32,
    pub dwNumThreads: u32,
    pub dwDefaultEnumCount: u32,
    pub dwDefaultEnumRetryInterval: u32,
    pub dwDefaultEnumTimeout: u32,
    pub dwMaxEnumPayloadSize: u32,
    pub dwBuffersPerThread: u32,
    pub dwSystemBufferSize: u32,
}

#[repr(C)]
#[derive(Default)]
pub struct DPN_CONNECTION_INFO {
    pub dwSize: u32,
    pub dwRoundTripLatencyMS: u32,
    pub dwThroughputBPS: u32,
    pub dwPeakThroughputBPS: u32,
    pub dwBytesSentGuaranteed: u32,
    pub dwPacketsSentGuaranteed: u32,
    pub dwBytesSentNonGuaranteed: u32,
    pub dwPacketsSentNonGuaranteed: u32,
    pub dwBytesRetried: u32,
    pub dwPacketsRetried: u32,
    pub dwBytesDropped: u32,
    pub dwPacketsDropped: u32,
    pub dwMessagesTransmittedHighPriority: u32,
    pub dwMessagesTimedOutHighPriority: u32,
    pub dwMessagesTransmittedNormalPriority: u32,
    pub dwMessagesTimedOutNormalPriority: u32,
    pub dwMessagesTransmittedLowPriority: u32,
    pub dwMessagesTimedOutLowPriority: u32,
    pub dwBytesReceivedGuaranteed: u32,
    pub dwPacketsReceivedGuaranteed: u32,
    pub dwBytesReceivedNonGuaranteed: u32,
    pub dwPacketsReceivedNonGuaranteed: u32,
    pub dwMessagesReceived: u32,
}

#[repr(C)]
pub struct DPNMSG_ASYNC_OP_COMPLETE {
    pub dwSize: u32,
    pub hAsyncOp: DPNHANDLE,
    pub pvUserContext: *mut c_void,
    pub hResultCode: HRESULT,
}

#[repr(C)]
pub struct DPNMSG_CONNECT_COMPLETE {
    pub dwSize: u32,
    pub hAsyncOp: DPNHANDLE,
    pub pvUserContext: *mut c_void,
    pub hResultCode: HRESULT,
    pub pvApplicationReplyData: *mut c_void,
    pub dwApplicationReplyDataSize: u32,
    pub dpnidLocal: DPNID,
}

#[repr(C)]
pub struct DPNMSG_CREATE_PLAYER {
    pub dwSize: u32,
    pub dpnidPlayer: DPNID,
    pub pvPlayerContext: *mut c_void,
}

#[repr(C)]
pub struct DPNMSG_DESTROY_PLAYER {
    pub dwSize: u32,
    pub dpnidPlayer: DPNID,
    pub pvPlayerContext: *mut c_void,
    pub dwReason: u32,
}

#[repr(C)]
pub struct DPNMSG_CREATE_GROUP {
    pub dwSize: u32,
    pub dpnidGroup: DPNID,
    pub dpnidOwner: DPNID,
    pub pvGroupContext: *mut c_void,
    pub pvOwnerContext: *mut c_void,
}

#[repr(C)]
pub struct DPNMSG_DESTROY_GROUP {
    pub dwSize: u32,
    pub dpnidGroup: DPNID,
    pub pvGroupContext: *mut c_void,
    pub dwReason: u32,
}

/// `DPNMSG_ADD_PLAYER_TO_GROUP` and `DPNMSG_REMOVE_PLAYER_FROM_GROUP` share this layout.
#[repr(C)]
pub struct DPNMSG_GROUP_MEMBER {
    pub dwSize: u32,
    pub dpnidGroup: DPNID,
    pub pvGroupContext: *mut c_void,
    pub dpnidPlayer: DPNID,
    pub pvPlayerContext: *mut c_void,
}

/// `DPNMSG_PEER_INFO`, `DPNMSG_HOST_MIGRATE`, `DPNMSG_GROUP_INFO`, `DPNMSG_CLIENT_INFO` and
/// `DPNMSG_SERVER_INFO` share this layout.
#[repr(C)]
pub struct DPNMSG_ID_CONTEXT {
    pub dwSize: u32,
    pub dpnid: DPNID,
    pub pvContext: *mut c_void,
}

#[repr(C)]
pub struct DPNMSG_ENUM_HOSTS_QUERY {
    pub dwSize: u32,
    pub pAddressSender: *mut c_void,
    pub pAddressDevice: *mut c_void,
    pub pvReceivedData: *mut c_void,
    pub dwReceivedDataSize: u32,
    pub dwMaxResponseDataSize: u32,
    pub pvResponseData: *mut c_void,
    pub dwResponseDataSize: u32,
    pub pvResponseContext: *mut c_void,
}

#[repr(C)]
pub struct DPNMSG_ENUM_HOSTS_RESPONSE {
    pub dwSize: u32,
    pub pAddressSender: *mut c_void,
    pub pAddressDevice: *mut c_void,
    pub pApplicationDescription: *const DPN_APPLICATION_DESC,
    pub pvResponseData: *mut c_void,
    pub dwResponseDataSize: u32,
    pub pvUserContext: *mut c_void,
    pub dwRoundTripLatencyMS: u32,
}

#[repr(C)]
pub struct DPNMSG_INDICATE_CONNECT {
    pub dwSize: u32,
    pub pvUserConnectData: *mut c_void,
    pub dwUserConnectDataSize: u32,
    pub pvReplyData: *mut c_void,
    pub dwReplyDataSize: u32,
    pub pvReplyContext: *mut c_void,
    pub pvPlayerContext: *mut c_void,
    pub pAddressPlayer: *mut c_void,
    pub pAddressDevice: *mut c_void,
}

#[repr(C)]
pub struct DPNMSG_RETURN_BUFFER {
    pub dwSize: u32,
    pub hResultCode: HRESULT,
    pub pvBuffer: *mut c_void,
    pub pvUserContext: *mut c_void,
}

#[repr(C)]
pub struct DPNMSG_INDICATED_CONNECT_ABORTED {
    pub dwSize: u32,
    pub pvPlayerContext: *mut c_void,
}

#[repr(C)]
pub struct DPNMSG_RECEIVE {
    pub dwSize: u32,
    pub dpnidSender: DPNID,
    pub pvPlayerContext: *mut c_void,
    pub pReceiveData: *mut u8,
    pub dwReceiveDataSize: u32,
    pub hBufferHandle: DPNHANDLE,
    pub dwReceiveFlags: u32,
}

#[repr(C)]
pub struct DPNMSG_SEND_COMPLETE {
    pub dwSize: u32,
    pub hAsyncOp: DPNHANDLE,
    pub pvUserContext: *mut c_void,
    pub hResultCode: HRESULT,
    pub dwSendTime: u32,
    pub dwFirstFrameRTT: u32,
    pub dwFirstFrameRetryCount: u32,
    pub dwSendCompleteFlags: u32,
    pub pBuffers: *mut DPN_BUFFER_DESC,
    pub dwNumBuffers: u32,
}

#[repr(C)]
pub struct DPNMSG_TERMINATE_SESSION {
    pub dwSize: u32,
    pub hResultCode: HRESULT,
    pub pvTerminateData: *mut c_void,
    pub dwTerminateDataSize: u32,
}

/// Sizes on the 32-bit target the DLL ships for (`dwSize` checks and what games pass).
const _: () = assert!(DPNERR_HOSTREJECTEDCONNECTION == 0x8015_8260_u32 as i32);
#[cfg(target_pointer_width = "32")]
const _: () = {
    assert!(size_of::<DPN_APPLICATION_DESC>() == 72);
    assert!(size_of::<DPN_PLAYER_INFO>() == 24);
    assert!(size_of::<DPN_SP_CAPS>() == 36);
    assert!(size_of::<DPN_CONNECTION_INFO>() == 92);
    assert!(size_of::<DPNMSG_RECEIVE>() == 28);
    assert!(size_of::<DPNMSG_SEND_COMPLETE>() == 40);
    assert!(size_of::<DPNMSG_CONNECT_COMPLETE>() == 28);
};

/// `s` as a NUL-terminated UTF-16 string.
pub fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// The NUL-terminated UTF-16 string at `p` (`None` for null), read at most 64 Ki units.
///
/// # Safety
/// `p` is null or points to a NUL-terminated UTF-16 string.
pub unsafe fn read_wide(p: *const u16) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut len = 0;
    // SAFETY: the caller vouches for a terminated string; we stop at its NUL.
    while len < 65_536 && unsafe { *p.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: `len` units were just read.
    Some(String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(p, len) }))
}

/// A buffer as a message hands it to the game: null when empty.
pub fn buffer_or_null(b: &mut [u8]) -> *mut c_void {
    if b.is_empty() { std::ptr::null_mut() } else { b.as_mut_ptr().cast() }
}

/// The `len` bytes at `p` (empty for null or 0).
///
/// # Safety
/// `p` is null or points to `len` readable bytes.
pub unsafe fn read_bytes(p: *const c_void, len: u32) -> Vec<u8> {
    if p.is_null() || len == 0 {
        return Vec::new();
    }
    // SAFETY: as the caller vouches.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len as usize) }.to_vec()
}
