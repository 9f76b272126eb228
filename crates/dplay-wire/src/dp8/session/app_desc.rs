//! The application description flags: `dwFlags` of DN_SEND_CONNECT_INFO (MC-DPL8CS 2.2.1.4;
//! MS-DPDX 2.2.33) and `ApplicationDescFlags` of EnumResponse (MC-DPLHP 2.2.2; MS-DPDX 2.2.5).
//!
//! Both messages carry the same DPN_APPLICATION_DESC bytes, so the enumeration codec uses
//! this type too.

use bitflags::bitflags;

bitflags! {
    /// Session flags (MC-DPL8CS 2.2.1.4; MC-DPLHP 2.2.2; INDEX B.9). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct ApplicationDescFlags: u32 {
        /// `DPNSESSION_CLIENT_SERVER`: a client/server session; clear means peer-to-peer.
        const CLIENT_SERVER = 0x0000_0001;
        /// `DPNSESSION_MIGRATE_HOST`: host migration is allowed (the only flag DXDiag uses).
        const MIGRATE_HOST = 0x0000_0004;
        /// `DPNSESSION_NODPNSVR`: the enumeration server (port 6073) is not running.
        const NODPNSVR = 0x0000_0040;
        /// `DPNSESSION_REQUIREPASSWORD`: joining needs the password.
        const REQUIREPASSWORD = 0x0000_0080;
        /// `DPNSESSION_NOENUMS`: the session answers no enumeration (DirectPlay 9).
        const NOENUMS = 0x0000_0100;
        /// `DPNSESSION_FAST_SIGNED`: fast signing; excludes FULL_SIGNED (DirectPlay 9).
        const FAST_SIGNED = 0x0000_0200;
        /// `DPNSESSION_FULL_SIGNED`: full signing; excludes FAST_SIGNED (DirectPlay 9).
        const FULL_SIGNED = 0x0000_0400;
    }
}
