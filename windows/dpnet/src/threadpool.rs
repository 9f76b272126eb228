//! `IDirectPlay8ThreadPool` (DirectX 9, `dplay8.h`): one per process. With
//! `SetThreadCount(0)` the DLL calls no handler on its own threads: every callback waits in a
//! queue until the game's thread calls `DoWork`, which runs them there, in order. The network
//! threads keep running (they never call the game), so the protocol's timers hold whatever the
//! game's DoWork rate.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::classes::IID_IDIRECTPLAY8_THREAD_POOL;
use crate::com::{GUID, HRESULT, IUnknownVtbl, Object, guard};
use crate::dpn::*;

/// A callback waiting for DoWork, and who waits for it to have run.
type Job = (Box<dyn FnOnce() + Send>, Sender<()>);

/// What the process's thread pool is.
struct Pool {
    /// An object was initialized (one per process).
    owner: Option<usize>,
    handler: Option<(MessageHandler, usize)>,
    /// The thread count the game set; `None` until it sets one.
    threads: Option<u32>,
    /// A DoWork is running.
    working: bool,
    jobs: VecDeque<Job>,
}

static POOL: Mutex<Pool> =
    Mutex::new(Pool { owner: None, handler: None, threads: None, working: false, jobs: VecDeque::new() });

/// The thread count reported before the game sets one: the processors.
fn default_threads() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
}

fn pool() -> MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// True when callbacks wait for DoWork.
pub(crate) fn do_work_mode() -> bool {
    let p = pool();
    p.owner.is_some() && p.threads == Some(0)
}

/// Runs `job` (a callback) now, or in DoWork mode queues it and waits until a DoWork ran it
/// or `abandoned` says nobody wants it any more (the object closed).
pub(crate) fn deliver(job: impl FnOnce() + Send + 'static, abandoned: impl Fn() -> bool) {
    if !do_work_mode() {
        return job();
    }
    let (tx, rx) = bounded(1);
    pool().jobs.push_back((Box::new(job), tx));
    while rx.recv_timeout(Duration::from_millis(20)).is_err() {
        if abandoned() {
            return;
        }
    }
}

/// Waits for a synchronous operation's result; in DoWork mode the waiting thread runs the
/// callbacks meanwhile (nothing else would).
pub(crate) fn wait(rx: &Receiver<HRESULT>, timeout: Option<Duration>) -> Option<HRESULT> {
    let deadline = timeout.map(|t| Instant::now() + t);
    loop {
        if do_work_mode() {
            run_one();
        }
        if let Ok(r) = rx.recv_timeout(Duration::from_millis(5)) {
            return Some(r);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) || rx.is_empty() && is_disconnected(rx) {
            return None;
        }
    }
}

fn is_disconnected(rx: &Receiver<HRESULT>) -> bool {
    matches!(rx.try_recv(), Err(crossbeam_channel::TryRecvError::Disconnected))
}

/// Runs the oldest queued callback; false when none waits.
fn run_one() -> bool {
    let Some((job, done)) = pool().jobs.pop_front() else { return false };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    let _ = done.send(());
    true
}

/// The vtable of `IDirectPlay8ThreadPool`.
#[repr(C)]
pub(crate) struct ThreadPoolVtbl {
    pub(crate) unknown: IUnknownVtbl,
    pub(crate) initialize:
        unsafe extern "system" fn(*mut c_void, *mut c_void, Option<MessageHandler>, u32) -> HRESULT,
    pub(crate) close: unsafe extern "system" fn(*mut c_void, u32) -> HRESULT,
    pub(crate) get_thread_count: unsafe extern "system" fn(*mut c_void, u32, *mut u32, u32) -> HRESULT,
    pub(crate) set_thread_count: unsafe extern "system" fn(*mut c_void, u32, u32, u32) -> HRESULT,
    pub(crate) do_work: unsafe extern "system" fn(*mut c_void, u32, u32) -> HRESULT,
}

type ThreadPool = Object<ThreadPoolVtbl, ()>;

static VTBL: ThreadPoolVtbl = ThreadPoolVtbl {
    unknown: IUnknownVtbl { query_interface, add_ref: ThreadPool::add_ref, release },
    initialize,
    close,
    get_thread_count,
    set_thread_count,
    do_work,
};

unsafe extern "system" fn query_interface(
    this: *mut c_void,
    riid: *const GUID,
    ppv: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: `this` is one of our pools; COM's contract covers `riid` and `ppv`.
    guard(DPNERR_GENERIC, || unsafe { ThreadPool::query(this, riid, ppv, &[IID_IDIRECTPLAY8_THREAD_POOL]) })
}

/// Release: the last reference of the initialized object gives the pool back.
unsafe extern "system" fn release(this: *mut c_void) -> u32 {
    // SAFETY: forwarded.
    let left = unsafe { ThreadPool::release(this) };
    if left == 0 {
        let mut p = pool();
        if p.owner == Some(this as usize) {
            p.owner = None;
            p.handler = None;
            p.threads = None;
        }
    }
    left
}

unsafe extern "system" fn initialize(
    this: *mut c_void,
    context: *mut c_void,
    handler: Option<MessageHandler>,
    flags: u32,
) -> HRESULT {
    guard(DPNERR_GENERIC, || {
        let Some(handler) = handler else { return DPNERR_INVALIDPARAM };
        if flags & !DPNINITIALIZE_DISABLEPARAMVAL != 0 {
            return DPNERR_INVALIDFLAGS;
        }
        let mut p = pool();
        if p.owner.is_some() {
            return DPNERR_ALREADYINITIALIZED;
        }
        p.owner = Some(this as usize);
        p.handler = Some((handler, context as usize));
        DPN_OK
    })
}

/// Runs `body` on the pool if `this` initialized it.
fn owned(this: *mut c_void, body: impl FnOnce(&mut Pool) -> HRESULT) -> HRESULT {
    guard(DPNERR_GENERIC, || {
        let mut p = pool();
        if p.owner != Some(this as usize) {
            return DPNERR_UNINITIALIZED;
        }
        body(&mut p)
    })
}

unsafe extern "system" fn close(this: *mut c_void, flags: u32) -> HRESULT {
    owned(this, |p| {
        if flags != 0 {
            return DPNERR_INVALIDFLAGS;
        }
        if p.working {
            return DPNERR_NOTALLOWED;
        }
        p.owner = None;
        p.handler = None;
        p.threads = None;
        // Callbacks still queued run on the threads again.
        for (job, done) in p.jobs.drain(..) {
            std::thread::spawn(move || {
                job();
                let _ = done.send(());
            });
        }
        DPN_OK
    })
}

unsafe extern "system" fn get_thread_count(
    this: *mut c_void,
    _processor: u32,
    out: *mut u32,
    flags: u32,
) -> HRESULT {
    owned(this, |p| {
        if flags != 0 {
            return DPNERR_INVALIDFLAGS;
        }
        if out.is_null() {
            return DPNERR_INVALIDPARAM;
        }
        // SAFETY: checked non-null.
        unsafe { *out = p.threads.unwrap_or_else(default_threads) };
        DPN_OK
    })
}

/// SetThreadCount: the count the pool reports; 0 switches to DoWork mode. Our worker threads
/// are one per object and connection rather than a pool, so no CREATE_THREAD/DESTROY_THREAD
/// messages are sent for a count that only changes a number.
unsafe extern "system" fn set_thread_count(
    this: *mut c_void,
    _processor: u32,
    threads: u32,
    flags: u32,
) -> HRESULT {
    owned(this, |p| {
        if flags != 0 {
            return DPNERR_INVALIDFLAGS;
        }
        if p.working {
            return DPNERR_NOTALLOWED;
        }
        p.threads = Some(threads);
        DPN_OK
    })
}

/// DoWork: runs the queued callbacks on the caller's thread for at most `slice` ms (INFINITE:
/// all; 0: one).
unsafe extern "system" fn do_work(this: *mut c_void, slice: u32, flags: u32) -> HRESULT {
    let started = owned(this, |p| {
        if flags != 0 {
            return DPNERR_INVALIDFLAGS;
        }
        if p.threads != Some(0) {
            return DPNERR_NOTREADY;
        }
        if p.working {
            return DPNERR_NOTALLOWED;
        }
        p.working = true;
        DPN_OK
    });
    if started != DPN_OK {
        return started;
    }
    let deadline = (slice != u32::MAX).then(|| Instant::now() + Duration::from_millis(u64::from(slice)));
    let mut result = DPN_OK;
    while run_one() {
        let more = !pool().jobs.is_empty();
        if more && (slice == 0 || deadline.is_some_and(|d| Instant::now() >= d)) {
            result = DPNSUCCESS_PENDING;
            break;
        }
    }
    pool().working = false;
    result
}

/// `CLSID_DirectPlay8ThreadPool`'s constructor.
///
/// # Safety
/// As [`crate::classes::Constructor`].
pub(crate) unsafe fn create(riid: *const GUID, ppv: *mut *mut c_void) -> HRESULT {
    let this = ThreadPool::into_raw(&VTBL, ());
    // SAFETY: a fresh object; the caller's pointers.
    unsafe {
        let hr = query_interface(this, riid, ppv);
        release(this);
        hr
    }
}
