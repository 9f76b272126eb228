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
//! - [`peer`], [`client`], [`server`]: `IDirectPlay8Peer`, `IDirectPlay8Client` and
//!   `IDirectPlay8Server`, three vtables over one core (`core`: handler, operations, the
//!   name-table mirror, the runtimes and their dispatcher threads) and the session protocol of
//!   the DLL (`protocol`); `methods` holds the bodies they share.
//! - [`threadpool`]: `IDirectPlay8ThreadPool` (DoWork mode).
//! - [`address`]: `IDirectPlay8Address` and `IDirectPlay8AddressIP`.
//! - [`lobby`]: `IDirectPlay8LobbiedApplication` and `IDirectPlay8LobbyClient`, as where no
//!   lobby runs.
//! - [`log`]: `DPNET_LOG`, `DPNET_LOG_FILE` and `DPNET_PCAP`, the panic hook.
//!
//! The crate builds for the host too: its tests call the vtables the way a game does.
#![allow(clippy::disallowed_methods)] // like the runtime, the DLL reads the clock (Close, SEND_COMPLETE)

pub mod address;
mod addressing;
pub mod classes;
mod client;
mod codes;
pub mod com;
mod core;
mod devices;
pub mod dpn;
pub mod exports;
pub mod lobby;
pub mod log;
mod methods;
mod peer;
mod protocol;
mod sends;
mod server;
mod slots;
#[cfg(test)]
mod tests;
mod threadpool;
