//! The link between the protocol loop and the web server: a snapshot cell and an event
//! broadcast the loop writes without ever waiting, and a bounded admin channel it drains with
//! `try_recv` (docs/decisions.md, "Web dashboard").

use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use tokio::sync::broadcast;

use dplay_session::Bans;

use crate::ban_file::BanFile;
use crate::public_address::PublicAddress;
use crate::snapshot::{Snapshot, WebEvent};

/// Admin commands queued at most (the server answers 503 beyond).
pub const ADMIN_QUEUE: usize = 16;
/// Events kept for a slow event-stream client before it is told it lagged.
pub const EVENT_BUFFER: usize = 256;

/// What an operator asks of the host (docs/web-api.md).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdminCommand {
    /// Remove the player with this ID (DP8: DESTROY_PLAYER, HOSTDESTROYEDPLAYER; DP4:
    /// DELETEPLAYER of its instance).
    Kick(u32),
    /// The ban list from now on; players in the session that it bans are removed.
    SetBans(Bans),
    /// A chat line to everyone (DP8: the DXDiag chat message, MS-DPDX 3.1.5.7; DP4:
    /// DPSP_MSG_CHAT; add-on sessions: CHAT_TEXT).
    Chat(String),
    /// A new player limit (0: none).
    MaxPlayers(u32),
    /// A new session password (`None`: none).
    Password(Option<String>),
}

/// The loop's end: publishes, never waits.
#[derive(Debug)]
pub struct LoopSide {
    cell: Arc<Mutex<Arc<Snapshot>>>,
    events: broadcast::Sender<WebEvent>,
    admin: Receiver<AdminCommand>,
}

/// The server's end: reads the latest snapshot, subscribes to events, queues admin commands.
#[derive(Debug, Clone)]
pub struct ServerSide {
    cell: Arc<Mutex<Arc<Snapshot>>>,
    events: broadcast::Sender<WebEvent>,
    admin: Sender<AdminCommand>,
    /// The ban list the operator edits, and its file.
    bans: Arc<Mutex<BanFile>>,
    /// Where players outside the host's network join, once the command learnt it.
    public: Arc<Mutex<Option<PublicAddress>>>,
}

/// A new link: one end for the protocol loop, one for the server.
pub fn link() -> (LoopSide, ServerSide) {
    let cell = Arc::new(Mutex::new(Arc::new(Snapshot::default())));
    let (events, _) = broadcast::channel(EVENT_BUFFER);
    let (admin_tx, admin_rx) = crossbeam_channel::bounded(ADMIN_QUEUE);
    (
        LoopSide { cell: cell.clone(), events: events.clone(), admin: admin_rx },
        ServerSide { cell, events, admin: admin_tx, bans: Arc::default(), public: Arc::default() },
    )
}

impl LoopSide {
    /// Replaces the published snapshot unless the server holds the cell at this instant (it
    /// only clones a pointer under the lock); returns whether it was published, so the caller
    /// tries again later rather than wait.
    pub fn publish(&self, snapshot: Snapshot) -> bool {
        match self.cell.try_lock() {
            Ok(mut cell) => {
                *cell = Arc::new(snapshot);
                true
            }
            Err(std::sync::TryLockError::Poisoned(p)) => {
                *p.into_inner() = Arc::new(snapshot);
                true
            }
            Err(std::sync::TryLockError::WouldBlock) => false,
        }
    }

    /// Sends an event to every stream client; never blocks (a lagging client loses the oldest).
    pub fn event(&self, event: WebEvent) {
        let _ = self.events.send(event);
    }

    /// The next queued admin command, if any.
    pub fn admin(&self) -> Option<AdminCommand> {
        self.admin.try_recv().ok()
    }
}

impl ServerSide {
    /// The latest published snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        match self.cell.lock() {
            Ok(cell) => cell.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// A receiver of the events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<WebEvent> {
        self.events.subscribe()
    }

    /// Uses `file` as the ban list the operator edits (`dplay host --bans FILE`).
    pub fn set_ban_file(&self, file: BanFile) {
        *self.ban_file() = file;
    }

    /// Shows `public` as the address players outside the host's network join at.
    pub fn set_public_address(&self, public: Option<PublicAddress>) {
        *self.public.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = public;
    }

    /// The address players outside the host's network join at, when known.
    pub fn public_address(&self) -> Option<PublicAddress> {
        self.public.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The ban list and its file (a poisoned lock is taken over: the list is always whole).
    pub(crate) fn ban_file(&self) -> std::sync::MutexGuard<'_, BanFile> {
        self.bans.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues an admin command; false when the queue is full (or the loop is gone).
    pub fn admin(&self, command: AdminCommand) -> bool {
        match self.admin.try_send(command) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join(n: usize) -> WebEvent {
        WebEvent::Join { dpnid: format!("0x{n:08X}"), name: format!("p{n}"), at_s: 0 }
    }

    #[test]
    fn publish_skips_a_cell_the_server_holds() {
        let (loop_side, server_side) = link();
        let held = server_side.cell.lock().unwrap();
        assert!(!loop_side.publish(Snapshot::default()), "the loop must not wait for the server");
        drop(held);
        let mut next = Snapshot::default();
        next.session.name = "published".into();
        assert!(loop_side.publish(next));
        assert_eq!(server_side.snapshot().session.name, "published");
    }

    #[test]
    fn a_full_admin_queue_refuses_and_drains_in_order() {
        let (loop_side, server_side) = link();
        for id in 0..ADMIN_QUEUE {
            assert!(server_side.admin(AdminCommand::Kick(u32::try_from(id).unwrap())));
        }
        assert!(!server_side.admin(AdminCommand::Kick(99)));
        assert_eq!(loop_side.admin(), Some(AdminCommand::Kick(0)));
        while loop_side.admin().is_some() {}
        assert_eq!(loop_side.admin(), None);
    }

    #[test]
    fn a_slow_event_client_lags_instead_of_holding_the_loop() {
        let (loop_side, server_side) = link();
        loop_side.event(join(0)); // no client: dropped, no error
        let mut slow = server_side.subscribe();
        for n in 0..EVENT_BUFFER + 10 {
            loop_side.event(join(n));
        }
        assert!(matches!(slow.try_recv(), Err(broadcast::error::TryRecvError::Lagged(10))));
        assert_eq!(slow.try_recv().unwrap(), join(10));
    }
}
