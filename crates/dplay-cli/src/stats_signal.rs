//! `kill -USR1 PID`: a host prints its drops-and-refusals line on demand (docs/limits.md).
//!
//! SIGUSR1 is blocked in the main thread before any other thread starts (threads inherit the
//! mask), and one thread takes it with `sigwait`: no signal handler, so no unsafe code, and
//! the signal never ends the process (its default action) whatever thread it is sent to.

use std::sync::OnceLock;

use crossbeam_channel::Receiver;

/// Blocks SIGUSR1; call first thing in `main`.
pub(crate) fn block() {
    #[cfg(unix)]
    if let Err(e) = usr1().thread_block() {
        tracing::debug!("cannot block SIGUSR1: {e}");
    }
}

/// A channel that receives once per SIGUSR1 (a burst of them may count once). Never
/// receives where there is no SIGUSR1.
pub(crate) fn requests() -> Receiver<()> {
    static REQUESTS: OnceLock<Receiver<()>> = OnceLock::new();
    REQUESTS.get_or_init(start).clone()
}

#[cfg(unix)]
fn usr1() -> nix::sys::signal::SigSet {
    let mut set = nix::sys::signal::SigSet::empty();
    set.add(nix::sys::signal::Signal::SIGUSR1);
    set
}

#[cfg(unix)]
fn start() -> Receiver<()> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let spawned = std::thread::Builder::new().name("sigusr1".into()).spawn(move || {
        let set = usr1();
        while set.wait().is_ok() {
            let _ = tx.try_send(());
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("no stats on SIGUSR1: {e}");
    }
    rx
}

#[cfg(not(unix))]
fn start() -> Receiver<()> {
    crossbeam_channel::never()
}
