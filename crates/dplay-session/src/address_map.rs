//! The host's hook on the addresses it hands out: the URL of a joiner's name-table entry,
//! which SEND_CONNECT_INFO and ADD_PLAYER carry to every other member (MC-DPL8CS 2.2.1.4,
//! 2.2.2.3) and from which older members connect to the joiner after INSTRUCT_CONNECT
//! (MS-DPDX 4.3 steps 11-13). A relay (`dplay-relay`) answers with the address of the relay
//! endpoint it gives the joiner, so members reach each other through the host; the session
//! holds no relay state of its own (docs/relay.md).

use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use dplay_wire::dp8::dpnid::Dpnid;
use uuid::Uuid;

/// What a host's session tells the address map, and what the map answers.
pub trait AddressMap: Send + fmt::Debug {
    /// Host: `player` was admitted from `from` into the session `instance` of `application`
    /// (the inputs of every PATH_TEST key, MC-DPLNAT 3.1.3). Returns the address the other
    /// members are given for it; `None` gives them `from` itself.
    fn admitted(
        &mut self,
        player: Dpnid,
        from: SocketAddr,
        application: Uuid,
        instance: Uuid,
    ) -> Option<SocketAddr>;
    /// Host: `player` left the name table; what was held for it can go.
    fn removed(&mut self, player: Dpnid);
}

/// A shared [`AddressMap`] in a [`crate::SessionConfig`] (or a
/// [`crate::dp4::Dp4AddressMap`] in a [`crate::dp4::Dp4Config`]): the relay keeps a clone to
/// forward with what the session told it. Two handles are equal when they share one map.
pub struct AddressMapHandle<M: ?Sized = dyn AddressMap>(Arc<Mutex<M>>);

impl<M: ?Sized> Clone for AddressMapHandle<M> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<M: ?Sized> AddressMapHandle<M> {
    /// Shares `map`.
    pub fn new(map: Arc<Mutex<M>>) -> Self {
        Self(map)
    }

    /// Runs `f` on the map (a poisoned lock is taken over: the map holds no invariant a
    /// panic elsewhere could break halfway).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut M) -> R) -> R {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut *map)
    }
}

impl<M: ?Sized> fmt::Debug for AddressMapHandle<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AddressMapHandle")
    }
}

impl<M: ?Sized> PartialEq for AddressMapHandle<M> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<M: ?Sized> Eq for AddressMapHandle<M> {}
