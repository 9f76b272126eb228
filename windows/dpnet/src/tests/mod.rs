//! The DLL's objects driven through their vtables, the way a game does, on loopback sockets
//! the tests open themselves (port 0: the system picks).

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

mod client_server;
mod devices;
mod game;
mod peer;
mod sends;
mod threadpool;

/// The thread pool is the process's: a test that switches it to DoWork mode runs alone.
static POOL_MODE: RwLock<()> = RwLock::new(());

/// Held by every test that does not touch the thread pool.
fn shared() -> RwLockReadGuard<'static, ()> {
    POOL_MODE.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Held by a test that switches the thread pool's mode.
fn exclusive() -> RwLockWriteGuard<'static, ()> {
    POOL_MODE.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}
