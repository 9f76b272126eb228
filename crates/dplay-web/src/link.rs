//! The link between the protocol loop and the web server: a snapshot cell and an event
//! broadcast the loop writes without ever waiting, and a bounded admin channel it drains with
//! `try_recv` (docs/decisions.md, "Web dashboard").

use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use tokio::sync::broadcast;

use crate::snapshot::{Snapshot, WebEvent};

/// Admin commands queued at most (the server answers 503 beyond).
pub const ADMIN_QUEUE: usize = 16;
/// Events kept for a slow event-stream client before it is told it lagged.
pub const EVENT_BUFFER: usize = 256;

/// What an operator asks of the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminCommand {
    /// Remove the player with this DPNID (DP8: DESTROY_PLAYER, HOSTDESTROYEDPLAYER).
    Kick(u32),
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
}

/// A new link: one end for the protocol loop, one for the server.
pub fn link() -> (LoopSide, ServerSide) {
    let cell = Arc::new(Mutex::new(Arc::new(Snapshot::default())));
    let (events, _) = broadcast::channel(EVENT_BUFFER);
    let (admin_tx, admin_rx) = crossbeam_channel::bounded(ADMIN_QUEUE);
    (
        LoopSide { cell: cell.clone(), events: events.clone(), admin: admin_rx },
        ServerSide { cell, events, admin: admin_tx },
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

    /// Queues an admin command; false when the queue is full (or the loop is gone).
    pub fn admin(&self, command: AdminCommand) -> bool {
        match self.admin.try_send(command) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        }
    }
}
