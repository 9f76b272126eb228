//! `hResultCode`: the DirectPlay 8 HRESULTs (`DPNERR_*`), as CONNECT_FAILED carries them
//! (MC-DPL8CS 2.2.1.3; MS-DPDX 2.2.13; INDEX B.11).
//!
//! The specs list the nine codes a host refuses a join with (marked "CONNECT_FAILED" below).
//! Every other `DPNERR_*` value is named too, from the public DirectPlay 8 SDK header numbering
//! (`MAKE_DPNHRESULT(code)` = 0x80158000 + code), so that whatever code a peer sends, the user
//! reads its name (decisions.md, 2026-11-24).

use crate::open_enum;

open_enum! {
    /// A DirectPlay 8 result code (an HRESULT; MC-DPL8CS 2.2.1.3 `hResultCode`).
    pub struct ResultCode(u32) {
        /// `DPNERR_ABORTED` (SDK header, code 0x030).
        DPNERR_ABORTED = 0x8015_8030,
        /// `DPNERR_ADDRESSING` (SDK header, code 0x040).
        DPNERR_ADDRESSING = 0x8015_8040,
        /// `DPNERR_ALREADYCLOSING` (CONNECT_FAILED): the host is closing or migrating.
        DPNERR_ALREADYCLOSING = 0x8015_8050,
        /// `DPNERR_ALREADYCONNECTED` (SDK header, code 0x060).
        DPNERR_ALREADYCONNECTED = 0x8015_8060,
        /// `DPNERR_ALREADYDISCONNECTING` (SDK header, code 0x070).
        DPNERR_ALREADYDISCONNECTING = 0x8015_8070,
        /// `DPNERR_ALREADYINITIALIZED` (SDK header, code 0x080).
        DPNERR_ALREADYINITIALIZED = 0x8015_8080,
        /// `DPNERR_ALREADYREGISTERED` (SDK header, code 0x090).
        DPNERR_ALREADYREGISTERED = 0x8015_8090,
        /// `DPNERR_BUFFERTOOSMALL` (SDK header, code 0x100).
        DPNERR_BUFFERTOOSMALL = 0x8015_8100,
        /// `DPNERR_CANNOTCANCEL` (SDK header, code 0x110).
        DPNERR_CANNOTCANCEL = 0x8015_8110,
        /// `DPNERR_CANTCREATEGROUP` (SDK header, code 0x120).
        DPNERR_CANTCREATEGROUP = 0x8015_8120,
        /// `DPNERR_CANTCREATEPLAYER` (SDK header, code 0x130).
        DPNERR_CANTCREATEPLAYER = 0x8015_8130,
        /// `DPNERR_CANTLAUNCHAPPLICATION` (SDK header, code 0x140).
        DPNERR_CANTLAUNCHAPPLICATION = 0x8015_8140,
        /// `DPNERR_CONNECTING` (SDK header, code 0x150).
        DPNERR_CONNECTING = 0x8015_8150,
        /// `DPNERR_CONNECTIONLOST` (SDK header, code 0x160).
        DPNERR_CONNECTIONLOST = 0x8015_8160,
        /// `DPNERR_CONVERSION` (SDK header, code 0x170).
        DPNERR_CONVERSION = 0x8015_8170,
        /// `DPNERR_DATATOOLARGE` (SDK header, code 0x175).
        DPNERR_DATATOOLARGE = 0x8015_8175,
        /// `DPNERR_DOESNOTEXIST` (SDK header, code 0x180).
        DPNERR_DOESNOTEXIST = 0x8015_8180,
        /// `DPNERR_DPNSVRNOTAVAILABLE` (SDK header, code 0x185).
        DPNERR_DPNSVRNOTAVAILABLE = 0x8015_8185,
        /// `DPNERR_DUPLICATECOMMAND` (SDK header, code 0x190).
        DPNERR_DUPLICATECOMMAND = 0x8015_8190,
        /// `DPNERR_ENDPOINTNOTRECEIVING` (SDK header, code 0x200).
        DPNERR_ENDPOINTNOTRECEIVING = 0x8015_8200,
        /// `DPNERR_ENUMQUERYTOOLARGE` (SDK header, code 0x210).
        DPNERR_ENUMQUERYTOOLARGE = 0x8015_8210,
        /// `DPNERR_ENUMRESPONSETOOLARGE` (SDK header, code 0x220).
        DPNERR_ENUMRESPONSETOOLARGE = 0x8015_8220,
        /// `DPNERR_EXCEPTION` (SDK header, code 0x230).
        DPNERR_EXCEPTION = 0x8015_8230,
        /// `DPNERR_GROUPNOTEMPTY` (SDK header, code 0x240).
        DPNERR_GROUPNOTEMPTY = 0x8015_8240,
        /// `DPNERR_HOSTING` (SDK header, code 0x250).
        DPNERR_HOSTING = 0x8015_8250,
        /// `DPNERR_HOSTREJECTEDCONNECTION` (CONNECT_FAILED): the application declined; the only code with reply data.
        DPNERR_HOSTREJECTEDCONNECTION = 0x8015_8260,
        /// `DPNERR_HOSTTERMINATEDSESSION` (SDK header, code 0x270).
        DPNERR_HOSTTERMINATEDSESSION = 0x8015_8270,
        /// `DPNERR_INCOMPLETEADDRESS` (SDK header, code 0x280).
        DPNERR_INCOMPLETEADDRESS = 0x8015_8280,
        /// `DPNERR_INVALIDADDRESSFORMAT` (SDK header, code 0x290).
        DPNERR_INVALIDADDRESSFORMAT = 0x8015_8290,
        /// `DPNERR_INVALIDAPPLICATION` (CONNECT_FAILED): the application GUID is not this application's.
        DPNERR_INVALIDAPPLICATION = 0x8015_8300,
        /// `DPNERR_INVALIDCOMMAND` (SDK header, code 0x310).
        DPNERR_INVALIDCOMMAND = 0x8015_8310,
        /// `DPNERR_INVALIDDEVICEADDRESS` (SDK header, code 0x320).
        DPNERR_INVALIDDEVICEADDRESS = 0x8015_8320,
        /// `DPNERR_INVALIDENDPOINT` (SDK header, code 0x330).
        DPNERR_INVALIDENDPOINT = 0x8015_8330,
        /// `DPNERR_INVALIDFLAGS` (SDK header, code 0x340).
        DPNERR_INVALIDFLAGS = 0x8015_8340,
        /// `DPNERR_INVALIDGROUP` (SDK header, code 0x350).
        DPNERR_INVALIDGROUP = 0x8015_8350,
        /// `DPNERR_INVALIDHANDLE` (SDK header, code 0x360).
        DPNERR_INVALIDHANDLE = 0x8015_8360,
        /// `DPNERR_INVALIDHOSTADDRESS` (SDK header, code 0x370).
        DPNERR_INVALIDHOSTADDRESS = 0x8015_8370,
        /// `DPNERR_INVALIDINSTANCE` (CONNECT_FAILED): the instance GUID is not this session's.
        DPNERR_INVALIDINSTANCE = 0x8015_8380,
        /// `DPNERR_INVALIDINTERFACE` (CONNECT_FAILED): a non-client joining a server, or a non-peer a host.
        DPNERR_INVALIDINTERFACE = 0x8015_8390,
        /// `DPNERR_INVALIDOBJECT` (SDK header, code 0x400).
        DPNERR_INVALIDOBJECT = 0x8015_8400,
        /// `DPNERR_INVALIDPASSWORD` (CONNECT_FAILED): the password does not match.
        DPNERR_INVALIDPASSWORD = 0x8015_8410,
        /// `DPNERR_INVALIDPLAYER` (SDK header, code 0x420).
        DPNERR_INVALIDPLAYER = 0x8015_8420,
        /// `DPNERR_INVALIDPRIORITY` (SDK header, code 0x430).
        DPNERR_INVALIDPRIORITY = 0x8015_8430,
        /// `DPNERR_INVALIDSTRING` (SDK header, code 0x440).
        DPNERR_INVALIDSTRING = 0x8015_8440,
        /// `DPNERR_INVALIDURL` (SDK header, code 0x450).
        DPNERR_INVALIDURL = 0x8015_8450,
        /// `DPNERR_INVALIDVERSION` (CONNECT_FAILED): not a valid DirectPlay version.
        DPNERR_INVALIDVERSION = 0x8015_8460,
        /// `DPNERR_NOCAPS` (SDK header, code 0x470).
        DPNERR_NOCAPS = 0x8015_8470,
        /// `DPNERR_NOCONNECTION` (SDK header, code 0x480).
        DPNERR_NOCONNECTION = 0x8015_8480,
        /// `DPNERR_NOHOSTPLAYER` (SDK header, code 0x490).
        DPNERR_NOHOSTPLAYER = 0x8015_8490,
        /// `DPNERR_NOMOREADDRESSCOMPONENTS` (SDK header, code 0x500).
        DPNERR_NOMOREADDRESSCOMPONENTS = 0x8015_8500,
        /// `DPNERR_NORESPONSE` (SDK header, code 0x510).
        DPNERR_NORESPONSE = 0x8015_8510,
        /// `DPNERR_NOTALLOWED` (SDK header, code 0x520).
        DPNERR_NOTALLOWED = 0x8015_8520,
        /// `DPNERR_NOTHOST` (CONNECT_FAILED): the target is not the host.
        DPNERR_NOTHOST = 0x8015_8530,
        /// `DPNERR_NOTREADY` (SDK header, code 0x540).
        DPNERR_NOTREADY = 0x8015_8540,
        /// `DPNERR_NOTREGISTERED` (SDK header, code 0x550).
        DPNERR_NOTREGISTERED = 0x8015_8550,
        /// `DPNERR_PLAYERALREADYINGROUP` (SDK header, code 0x560).
        DPNERR_PLAYERALREADYINGROUP = 0x8015_8560,
        /// `DPNERR_PLAYERLOST` (SDK header, code 0x570).
        DPNERR_PLAYERLOST = 0x8015_8570,
        /// `DPNERR_PLAYERNOTINGROUP` (SDK header, code 0x580).
        DPNERR_PLAYERNOTINGROUP = 0x8015_8580,
        /// `DPNERR_PLAYERNOTREACHABLE` (SDK header, code 0x590).
        DPNERR_PLAYERNOTREACHABLE = 0x8015_8590,
        /// `DPNERR_SENDTOOLARGE` (SDK header, code 0x600).
        DPNERR_SENDTOOLARGE = 0x8015_8600,
        /// `DPNERR_SESSIONFULL` (SDK header, code 0x610).
        DPNERR_SESSIONFULL = 0x8015_8610,
        /// `DPNERR_TABLEFULL` (SDK header, code 0x620).
        DPNERR_TABLEFULL = 0x8015_8620,
        /// `DPNERR_TIMEDOUT` (SDK header, code 0x630).
        DPNERR_TIMEDOUT = 0x8015_8630,
        /// `DPNERR_UNINITIALIZED` (SDK header, code 0x640).
        DPNERR_UNINITIALIZED = 0x8015_8640,
        /// `DPNERR_USERCANCEL` (SDK header, code 0x650).
        DPNERR_USERCANCEL = 0x8015_8650,
        /// `DPNERR_GENERIC` (CONNECT_FAILED; `E_FAIL`): any other failure.
        DPNERR_GENERIC = 0x8000_4005,
        /// `DPNERR_UNSUPPORTED` (`E_NOTIMPL`).
        DPNERR_UNSUPPORTED = 0x8000_4001,
        /// `DPNERR_NOINTERFACE` (`E_NOINTERFACE`).
        DPNERR_NOINTERFACE = 0x8000_4002,
        /// `DPNERR_INVALIDPOINTER` (`E_POINTER`).
        DPNERR_INVALIDPOINTER = 0x8000_4003,
        /// `DPNERR_OUTOFMEMORY` (`E_OUTOFMEMORY`).
        DPNERR_OUTOFMEMORY = 0x8007_000E,
        /// `DPNERR_INVALIDPARAM` (`E_INVALIDARG`).
        DPNERR_INVALIDPARAM = 0x8007_0057,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SDK numbering: `MAKE_DPNHRESULT(0x610)` is DPNERR_SESSIONFULL; an unknown code shows
    /// its number.
    #[test]
    fn names() {
        assert_eq!(ResultCode(0x8015_8610).to_string(), "DPNERR_SESSIONFULL");
        assert_eq!(ResultCode(0x8015_8410).to_string(), "DPNERR_INVALIDPASSWORD");
        assert_eq!(ResultCode(0x8000_4005).to_string(), "DPNERR_GENERIC");
        assert_eq!(ResultCode(0x8015_8999).to_string(), "ResultCode(0x80158999)");
        assert_eq!(ResultCode::ALL.len(), 71);
    }
}
