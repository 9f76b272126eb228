//! The debugging aid for people who keep old games alive (issue 26 item 4): our log and a pcap
//! of the session, each written to a file when an environment variable asks for it.
//!
//! | Variable | Effect |
//! |---|---|
//! | `DPNET_LOG` | Writes our log, filtered by `RUST_LOG`-style directives (`debug`, `info,dplay_session=trace`). |
//! | `DPNET_LOG_FILE` | The log's path (appended to). Alone, it means `DPNET_LOG=info`. |
//! | `DPNET_PCAP` | Writes every datagram of the session to this pcap file (truncated first). |
//!
//! With none of them set the DLL writes nothing anywhere, and it never writes to a console:
//! a game has none, or its own. `DPNET_LOG` without `DPNET_LOG_FILE` logs to `dpnet.log` in
//! the temporary folder (`%TEMP%`). The first line of every log names the DLL, its version and
//! the file it was loaded from, so a user can tell ours is the one running.
//!
//! The API the COM objects call:
//! - [`init_once`] at every object's creation and at `Initialize`: reads the environment the
//!   first time, installs the log and the panic hook, writes the load line. Later calls return
//!   at once.
//! - [`pcap_tap`] when a runtime starts: the tap to put in its `RuntimeConfig`, or `None`. All
//!   the runtimes of a process write into the one capture.
//!
//! The panic hook logs the panic (message and place) and never captures a backtrace: Wine's
//! `dbghelp` crashes on Rust's DWARF. The COM edge ([`crate::com::guard`]) then answers the
//! method's error code.

use std::fs::OpenOptions;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Once, OnceLock};

use dplay_runtime::pcap::PcapTap;
use dplay_runtime::{Direction, Tap};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;

/// `DPNET_LOG`: the filter directives.
const LOG_VAR: &str = "DPNET_LOG";
/// `DPNET_LOG_FILE`: where the log goes.
const LOG_FILE_VAR: &str = "DPNET_LOG_FILE";
/// `DPNET_PCAP`: where the capture goes.
const PCAP_VAR: &str = "DPNET_PCAP";

/// What the environment asks of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LogSettings {
    /// The filter directives as given.
    filter: String,
    /// The file to append to.
    path: PathBuf,
}

impl LogSettings {
    /// The settings `get` (an environment lookup) gives, or `None` for no log.
    fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let nonempty = |name| get(name).filter(|v| !v.trim().is_empty());
        let (filter, path) = (nonempty(LOG_VAR), nonempty(LOG_FILE_VAR));
        if filter.is_none() && path.is_none() {
            return None;
        }
        Some(Self {
            filter: filter.unwrap_or_else(|| "info".to_owned()),
            path: path.map_or_else(|| std::env::temp_dir().join("dpnet.log"), PathBuf::from),
        })
    }
}

/// The filter of `directives`; a malformed one falls back to `info`, and says so.
fn parse_filter(directives: &str) -> (Targets, Option<String>) {
    match directives.parse::<Targets>() {
        Ok(targets) => (targets, None),
        Err(e) => (
            Targets::new().with_default(tracing::Level::INFO),
            Some(format!("{LOG_VAR}={directives:?}: {e}")),
        ),
    }
}

/// Reads the environment and sets the log up, once per process. Cheap after the first call.
pub fn init_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Tests keep the harness's hook so that their failures print.
        if !cfg!(test) {
            std::panic::set_hook(Box::new(log_panic));
        }
        let Some(settings) = LogSettings::from_env(|name| std::env::var(name).ok()) else { return };
        let (filter, bad_filter) = parse_filter(&settings.filter);
        let Ok(file) = OpenOptions::new().create(true).append(true).open(&settings.path) else {
            // Nowhere to write: stay silent, as without a log.
            return;
        };
        let subscriber = tracing_subscriber::registry().with(filter).with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_thread_ids(true)
                .with_writer(Mutex::new(file)),
        );
        if tracing::subscriber::set_global_default(subscriber).is_err() {
            return;
        }
        tracing::info!(
            "dpnet.dll {} (dplay, issue 26) loaded from {} into {}",
            env!("CARGO_PKG_VERSION"),
            module_path_text(),
            std::env::current_exe()
                .map_or_else(|_| "an unknown program".to_owned(), |p| p.display().to_string()),
        );
        if let Some(problem) = bad_filter {
            tracing::warn!("{problem}; logging at info instead");
        }
    });
}

/// The panic hook: one log line with the message and the place, no backtrace, no console.
fn log_panic(info: &std::panic::PanicHookInfo<'_>) {
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    let place = info.location().map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
    tracing::error!("panic{place}: {message}; the call answers an error code to the game");
}

/// The tap for a new runtime when `DPNET_PCAP` names a file: every runtime of the process
/// writes into the same capture, opened (and truncated) the first time.
pub fn pcap_tap() -> Option<Box<dyn Tap>> {
    static CAPTURE: OnceLock<Option<Arc<Mutex<PcapTap>>>> = OnceLock::new();
    let capture = CAPTURE.get_or_init(|| {
        let path = std::env::var_os(PCAP_VAR).filter(|p| !p.is_empty())?;
        match PcapTap::create(path.as_ref()) {
            Ok(tap) => {
                tracing::info!("writing the session's datagrams to {}", PathBuf::from(&path).display());
                Some(Arc::new(Mutex::new(tap)))
            }
            Err(e) => {
                tracing::warn!("{PCAP_VAR}: cannot create {}: {e}", PathBuf::from(&path).display());
                None
            }
        }
    });
    capture.clone().map(|shared| Box::new(SharedTap(shared)) as Box<dyn Tap>)
}

/// One runtime's handle on the process's capture.
struct SharedTap(Arc<Mutex<PcapTap>>);

impl SharedTap {
    fn with(&self, write: impl FnOnce(&mut PcapTap)) {
        // A panic while writing leaves at worst a torn frame: keep capturing.
        write(&mut self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
    }
}

impl Tap for SharedTap {
    fn datagram(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        self.with(|tap| tap.datagram(direction, local, remote, data));
    }

    fn stream(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        self.with(|tap| tap.stream(direction, local, remote, data));
    }
}

/// The path of this DLL (Windows), or of the program that holds this code (elsewhere, where
/// the crate runs only as tests).
fn module_path_text() -> String {
    module_path().map_or_else(|| "an unknown file".to_owned(), |p| p.display().to_string())
}

#[cfg(windows)]
fn module_path() -> Option<PathBuf> {
    use std::ffi::c_void;
    use std::os::windows::ffi::OsStringExt;

    /// `GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT`.
    const FROM_ADDRESS_UNCHANGED_REFCOUNT: u32 = 0x4 | 0x2;
    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetModuleHandleExW(flags: u32, name: *const c_void, module: *mut *mut c_void) -> i32;
        fn GetModuleFileNameW(module: *mut c_void, name: *mut u16, size: u32) -> u32;
    }
    let mut module = std::ptr::null_mut();
    let inside = module_path as *const c_void;
    // SAFETY: documented use: an address inside this DLL, a writable out pointer.
    if unsafe { GetModuleHandleExW(FROM_ADDRESS_UNCHANGED_REFCOUNT, inside, &mut module) } == 0 {
        return None;
    }
    let mut name = vec![0u16; 32 * 1024];
    let size = u32::try_from(name.len()).ok()?;
    // SAFETY: `name` holds `size` characters.
    let len = unsafe { GetModuleFileNameW(module, name.as_mut_ptr(), size) } as usize;
    (len > 0 && len < name.len()).then(|| std::ffi::OsString::from_wide(&name[..len]).into())
}

#[cfg(not(windows))]
fn module_path() -> Option<PathBuf> {
    std::env::current_exe().ok()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Option<LogSettings> {
        let vars: HashMap<String, String> =
            vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        LogSettings::from_env(|name| vars.get(name).cloned())
    }

    #[test]
    fn no_variable_no_log() {
        assert_eq!(settings(&[]), None);
        assert_eq!(settings(&[(LOG_VAR, " ")]), None);
    }

    #[test]
    fn either_variable_turns_the_log_on() {
        let only_filter = settings(&[(LOG_VAR, "debug")]).unwrap();
        assert_eq!(only_filter.filter, "debug");
        assert_eq!(only_filter.path, std::env::temp_dir().join("dpnet.log"));
        let only_file = settings(&[(LOG_FILE_VAR, "/x/y.log")]).unwrap();
        assert_eq!((only_file.filter.as_str(), only_file.path), ("info", PathBuf::from("/x/y.log")));
    }

    #[test]
    fn filters_take_rust_log_directives() {
        let (targets, problem) = parse_filter("info,dplay_session=trace");
        assert!(problem.is_none());
        assert!(targets.would_enable("dplay_session::peer", &tracing::Level::TRACE));
        assert!(!targets.would_enable("dpnet", &tracing::Level::DEBUG));
        let (targets, problem) = parse_filter("dplay=loud");
        assert!(problem.is_some_and(|p| p.contains("DPNET_LOG")));
        assert!(targets.would_enable("dpnet", &tracing::Level::INFO));
    }

    #[test]
    fn the_module_path_is_known() {
        assert!(module_path().is_some());
        init_once();
        init_once();
    }

    /// Two runtimes' taps write into one capture.
    #[test]
    fn shared_taps_write_one_capture() {
        let path = std::env::temp_dir().join(format!("dpnet-log-test-{}.pcap", std::process::id()));
        let shared = Arc::new(Mutex::new(PcapTap::create(&path).unwrap()));
        let (mut a, mut b) = (SharedTap(shared.clone()), SharedTap(shared));
        let (local, remote) = ("127.0.0.1:1".parse().unwrap(), "127.0.0.1:2".parse().unwrap());
        a.datagram(Direction::Sent, local, remote, b"one");
        b.datagram(Direction::Received, local, remote, b"two");
        drop((a, b));
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        // The pcap header (24 bytes), then two records of 16 + 42 + 3 bytes.
        assert_eq!(bytes.len(), 24 + 2 * (16 + 42 + 3));
        assert!(bytes.ends_with(b"two"));
    }
}
