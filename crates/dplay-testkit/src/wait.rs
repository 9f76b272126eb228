//! Waiting for a runtime's events in tests over real sockets (`dplay-runtime`, `dplay-web`):
//! the first event a test looks for, or a failed test after [`TIMEOUT`].

use std::time::Duration;

use crossbeam_channel::{Receiver, select};

/// How long a test waits for an event before it fails.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The first value `f` returns for the events from `events`, skipping those it returns `None`
/// for. Panics (the test fails) after [`TIMEOUT`] or when the channel closes first.
#[track_caller]
pub fn wait_for<E, T>(events: &Receiver<E>, mut f: impl FnMut(&E) -> Option<T>) -> T {
    let deadline = crossbeam_channel::after(TIMEOUT);
    loop {
        select! {
            recv(events) -> event => match event {
                Ok(event) => if let Some(t) = f(&event) { return t },
                Err(_) => panic!("the event channel closed before the awaited event came"),
            },
            recv(deadline) -> _ => panic!("the awaited event never came"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_event_accepted() {
        let (tx, rx) = crossbeam_channel::unbounded();
        for n in 1..5 {
            tx.send(n).unwrap();
        }
        assert_eq!(wait_for(&rx, |n| (*n > 2).then_some(n * 10)), 30);
        assert_eq!(rx.try_recv(), Ok(4), "later events stay queued");
    }

    #[test]
    #[should_panic(expected = "closed")]
    fn a_closed_channel_fails_at_once() {
        let (tx, rx) = crossbeam_channel::unbounded::<u8>();
        drop(tx);
        wait_for(&rx, |_| Some(()));
    }
}
