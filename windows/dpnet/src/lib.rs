//! `dpnet.dll`: the DirectPlay 8 COM API (`dplay8.h`, `dpaddr.h`) mapped onto the dplay crates.
//!
//! Every COM method only translates: arguments into commands of our runtime and session,
//! their events into `DPN_MSGID_*` callbacks. No protocol logic lives here
//! (docs/ARCHITECTURE.md, "The Windows DLLs").
//!
//! - [`com`]: the COM plumbing every object shares (GUIDs, HRESULTs, reference counts, the
//!   panic guard at the edge).
//! - [`classes`]: the class table `DllGetClassObject` and `DirectPlay8Create` serve.
//! - [`exports`]: the functions the DLL exports by name.
//! - [`address`]: `IDirectPlay8Address` and `IDirectPlay8AddressIP`.
//! - [`lobby`]: `IDirectPlay8LobbiedApplication` and `IDirectPlay8LobbyClient`, as where no
//!   lobby runs.
//! - [`log`]: `DPNET_LOG`, `DPNET_LOG_FILE` and `DPNET_PCAP`, the panic hook.
//!
//! The crate builds for the host too: its tests call the vtables the way a game does.

pub mod address;
pub mod classes;
mod codes;
pub mod com;
pub mod exports;
pub mod lobby;
pub mod log;
