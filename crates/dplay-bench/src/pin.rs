//! Where the dashboard bench's threads run, so that its figure does not depend on what else a
//! shared machine runs (docs/PERFORMANCE.md, "The dashboard under 1,000 clients"): the host's
//! protocol thread alone on [`LOOP_CORE`], everything else of the bench (the load, the web
//! server, the HTTP and event-stream clients) on [`OTHER_CORE`]; while measuring, the protocol
//! thread and the load thread run `SCHED_FIFO`, ahead of any ordinary process. Done with
//! util-linux's `taskset` and `chrt` on a thread ID (the workspace forbids `unsafe`, and no
//! dependency is needed for it); needs Linux, two cores and root (`CAP_SYS_NICE`).
//! `DPLAY_BENCH_PIN=0` turns it off.

use std::process::Command;

/// The core of the host's protocol thread.
pub const LOOP_CORE: usize = 0;
/// The core of the bench's other threads.
pub const OTHER_CORE: usize = 1;
/// The real-time priority of the protocol thread while measuring.
pub const LOOP_PRIORITY: u8 = 50;
/// The real-time priority of the load thread while measuring (below the loop's).
pub const LOAD_PRIORITY: u8 = 40;

/// True unless `DPLAY_BENCH_PIN` is `0`, and the machine has two cores or more.
pub fn wanted() -> bool {
    let off = std::env::var_os("DPLAY_BENCH_PIN").is_some_and(|v| v == "0");
    !off && std::thread::available_parallelism().is_ok_and(|n| n.get() > OTHER_CORE)
}

/// The calling thread's ID (Linux: from `/proc/thread-self`, `PID/task/TID`).
pub fn current_tid() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// Keeps thread `tid` on `core`.
pub fn to_core(tid: u32, core: usize) -> Result<(), String> {
    run(Command::new("taskset").args(["-p", "-c", &core.to_string(), &tid.to_string()]))
}

/// Runs thread `tid` `SCHED_FIFO` at `priority` (1 to 99).
pub fn realtime(tid: u32, priority: u8) -> Result<(), String> {
    run(Command::new("chrt").args(["-f", "-p", &priority.to_string(), &tid.to_string()]))
}

pub(crate) fn run(cmd: &mut Command) -> Result<(), String> {
    let what = format!("{cmd:?}");
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!("{what}: {}", String::from_utf8_lossy(&out.stderr).trim())),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_thread_has_an_id() {
        let main = current_tid().unwrap();
        let other = std::thread::spawn(current_tid).join().unwrap().unwrap();
        assert_ne!(main, other);
    }
}
