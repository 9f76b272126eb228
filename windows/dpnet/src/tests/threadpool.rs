//! IDirectPlay8ThreadPool: with SetThreadCount(0) callbacks run only inside DoWork, on the
//! game's thread.

use std::time::Duration;

use super::game::{Game, Heard, handler};
use super::peer::Peer;
use crate::classes::IID_IDIRECTPLAY8_THREAD_POOL;
use crate::dpn::*;
use crate::exports::DirectPlay8Create;
use crate::threadpool::ThreadPoolVtbl;

#[test]
fn do_work_mode_runs_callbacks_on_the_callers_thread() {
    let _pool = super::exclusive();
    let mut tp = std::ptr::null_mut();
    assert_eq!(
        unsafe { DirectPlay8Create(&IID_IDIRECTPLAY8_THREAD_POOL, &mut tp, std::ptr::null_mut()) },
        DPN_OK
    );
    let v = unsafe { &**tp.cast::<*const ThreadPoolVtbl>() };
    let pool_game = Game::new(0);
    unsafe {
        assert_eq!((v.do_work)(tp, 0, 0), DPNERR_UNINITIALIZED);
        assert_eq!((v.initialize)(tp, pool_game.context(), Some(handler), 0), DPN_OK);
        let mut n = 0;
        assert_eq!((v.get_thread_count)(tp, u32::MAX, &mut n, 0), DPN_OK);
        assert!(n > 0);
        assert_eq!((v.do_work)(tp, 0, 0), DPNERR_NOTREADY);
        assert_eq!((v.set_thread_count)(tp, u32::MAX, 0, 0), DPN_OK);
        assert_eq!((v.do_work)(tp, u32::MAX, 0), DPN_OK);
    }
    let (host_game, join_game) = (Game::new(0x1000), Game::new(0x2000));
    let host = Peer::new();
    host.init(&host_game);
    // Host runs the callbacks it waits for itself.
    let port = host.host(0);
    assert!(matches!(host_game.heard()[..], [Heard::CreatePlayer { .. }]));
    let joiner = Peer::new();
    joiner.init(&join_game);
    let (hr, _) = joiner.connect(port, 1, false);
    assert_eq!(hr, DPNSUCCESS_PENDING);
    std::thread::sleep(Duration::from_millis(300));
    assert!(join_game.heard().is_empty(), "no callback outside DoWork: {:?}", join_game.heard());
    let caller = std::thread::current().id();
    for _ in 0..200 {
        unsafe { (v.do_work)(tp, 100, 0) };
        if join_game.heard().iter().any(|h| matches!(h, Heard::ConnectComplete { .. })) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(matches!(join_game.heard()[0], Heard::ConnectComplete { result: DPN_OK, .. }));
    assert_eq!(std::thread::current().id(), caller);
    // Close delivers what it owes on this thread, then the pool goes back to threads.
    assert_eq!(joiner.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
    unsafe {
        assert_eq!((v.close)(tp, 0), DPN_OK);
        ((*tp.cast::<*const crate::com::IUnknownVtbl>()).as_ref().unwrap().release)(tp);
    }
}
