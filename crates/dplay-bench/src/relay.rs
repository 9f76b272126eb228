//! The relay under an FS2004 load (issue 23; docs/PERFORMANCE.md): a runtime with
//! [`dplay_runtime::Relayed`] endpoints on loopback relays `PILOTS` members' position
//! datagrams, each member sending one to each of the others `RATE` times a second (32 pilots
//! at 40 per second: 39,680 datagrams/s). Measures the relay thread's CPU and the one-way
//! latency through the relay, next to the same datagrams sent directly (the baseline): the
//! difference is what the relay hop adds.
//!
//! Pinned (as root on two cores or more, unless `DPLAY_BENCH_PIN=0`; [`crate::pin`]): the
//! relay thread alone on [`pin::LOOP_CORE`] and `SCHED_FIFO` while measuring, the load's
//! threads on [`pin::OTHER_CORE`], so that the figures are the relay's and not what else a
//! shared machine runs.
//!
//! On loopback the kernel runs the members' receive path (IP and UDP receive, queueing on the
//! member's socket, waking whoever waits on it) inside the relay's `sendmmsg`, on the relay's
//! core; on a real network it runs on the members' machines. [`Model`] says where it runs
//! here: [`Model::ReceiveElsewhere`] is the real network's share of it (none), the other two
//! what earlier rounds measured. [`Hop::softirq_percent`] is the receive path that still
//! ran on the relay's core.
//!
//! The floor ([`raw`]): the same load, in the same run, through a raw UDP forwarder with the
//! same system calls and no DirectPlay in it, pinned as the relay thread is. What the relay
//! costs above it is our code.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dplay_runtime::{Protocol, Relayed, Runtime, RuntimeConfig, SharedRelay, relay_sockets};
use dplay_wire::Wire;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::path_test::{PathTest, path_test_key};
use uuid::Uuid;

use crate::pin;
use crate::scale::thread_cpu;
use crate::stats::{Percentiles, percentiles};

pub mod raw;

/// Members of the session.
pub const PILOTS: usize = 32;
/// Position datagrams per second each member sends to each other member.
pub const RATE: u32 = 40;
/// The goal: at most this share of a core (issue 23).
pub const CPU_BUDGET_PERCENT: f64 = 25.0;
/// The goal: at most this added to a datagram's p99 by the hop, in microseconds.
pub const HOP_P99_BUDGET_US: f64 = 100.0;
/// A position datagram's size: a DFRAME around FS2004's POSITION_VELOCITY.
const DATAGRAM: usize = 76;
const RELAY_THREAD: &str = "bench-relay";
const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
const APP: Uuid = Uuid::from_u128(0xbe4c);
const INSTANCE: Uuid = Uuid::from_u128(0x1);

/// What one run measured.
#[derive(Debug, Clone)]
pub struct RelayRun {
    /// The load through the runtime's relay.
    pub relay: Hop,
    /// The same load through the raw forwarder ([`raw`]): the floor.
    pub raw: Hop,
    /// One-way latencies of the same load sent directly, in nanoseconds.
    pub direct: Percentiles,
    /// Whether the threads were pinned ([`crate::pin`]), or why not.
    pub pinned: Result<(), String>,
}

/// The load through one forwarding thread (the relay's or the raw forwarder's).
#[derive(Debug, Clone)]
pub struct Hop {
    /// The thread's CPU, in percent of a core.
    pub cpu_percent: f64,
    /// One-way latencies through it, in nanoseconds.
    pub latency: Percentiles,
    /// Datagrams per second offered.
    pub offered: f64,
    /// Share of them delivered.
    pub delivered: f64,
    /// Times a second the thread went to sleep and was woken (its voluntary context
    /// switches, `/proc`).
    pub wakeups: f64,
    /// Softirq time on its core while forwarding, in percent of a core, when pinned: on
    /// the machine's loopback the receive path of the datagrams the relay sent (the members'
    /// side, charged to the relay thread when it runs inside its `sendmmsg`), with
    /// [`Model::ReceiveElsewhere`] handing them to the other core; the members' own sends are
    /// received on the load's core. Tick-sampled (`/proc/stat`), so a few points either way,
    /// and it includes whatever softirq the machine's other work raised on that core.
    pub softirq_percent: Option<f64>,
}

/// Where the members' side of the network runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// One blocking thread per member, on the machine's loopback: each datagram the relay
    /// sends is received, and its member's thread woken, inside the relay's send (the first
    /// rounds' bench).
    ThreadPerMember,
    /// One thread waits on every member's socket with epoll and reads each until it would
    /// block; still received inside the relay's send.
    OneReceiver,
    /// As [`Model::OneReceiver`], in a private network namespace whose loopback receives on
    /// the load's core ([`crate::netns`], root): the relay's send puts a datagram on the
    /// receiving core's queue and the rest happens there, as on another machine. Falls back to
    /// [`Model::OneReceiver`] (and says so in [`RelayRun::pinned`]) when not pinned.
    ReceiveElsewhere,
}

/// A protocol with nothing to do: the relay alone.
struct Idle;

impl Protocol for Idle {
    type Command = ();
    type Event = ();

    fn handle_command(&mut self, _now: Instant, _command: ()) {}
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_event(&mut self) -> Option<()> {
        None
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

/// Runs the load for `duration` through the relay and then directly, on a thread of its own
/// (pinning it leaves the caller's cores as they were, for the next run).
pub fn run(duration: Duration, model: Model) -> io::Result<RelayRun> {
    std::thread::spawn(move || run_here(duration, model))
        .join()
        .map_err(|_| io::Error::other("relay bench panicked"))?
}

fn run_here(duration: Duration, model: Model) -> io::Result<RelayRun> {
    // Threads inherit their creator's cores: the load's and the runtime's start on the other
    // core; the forwarding threads are moved once they run.
    let mut pinned =
        if pin::wanted() { Ok(()) } else { Err("not asked (DPLAY_BENCH_PIN=0 or one core)".into()) };
    if pinned.is_ok() {
        pinned = pin::current_tid()
            .ok_or_else(|| "no thread ID".to_owned())
            .and_then(|t| pin::to_core(t, pin::OTHER_CORE));
    }
    // Entered before any socket opens; left when this thread ends.
    let _namespace = match (model, &pinned) {
        (Model::ReceiveElsewhere, Ok(())) => {
            let ns = crate::netns::Namespace::enter_receiving_on(pin::OTHER_CORE);
            if let Err(why) = &ns {
                pinned = Err(format!("no namespace ({why}): members received on the relay's core"));
            }
            ns.ok()
        }
        _ => None,
    };
    let members: Vec<UdpSocket> =
        (0..PILOTS).map(|_| UdpSocket::bind(LOOPBACK)).collect::<io::Result<_>>()?;
    for m in &members {
        m.set_read_timeout(Some(Duration::from_millis(20)))?;
    }
    let addrs: Vec<SocketAddr> = members.iter().map(UdpSocket::local_addr).collect::<io::Result<_>>()?;
    let relay = through_relay(&members, &addrs, duration, model, &mut pinned)?;
    let raw = {
        let forwarder = raw::Forwarder::spawn(LOOPBACK.ip(), &addrs)?;
        pin_forwarder(raw::THREAD, &mut pinned);
        load(&members, forwarder.endpoints(), duration, pinned.is_ok(), model, Some(raw::THREAD))?
    };
    let direct = load(&members, &addrs, duration, pinned.is_ok(), model, None)?;
    Ok(RelayRun { relay, raw, direct: direct.latency, pinned })
}

/// The load through a runtime relaying for `members` (at `addrs`), latched first.
fn through_relay(
    members: &[UdpSocket],
    addrs: &[SocketAddr],
    duration: Duration,
    model: Model,
    pinned: &mut Result<(), String>,
) -> io::Result<Hop> {
    let mut config = RuntimeConfig::with_sockets(relay_sockets(LOOPBACK, PILOTS));
    config.thread_name = RELAY_THREAD.into();
    let mut shared = None;
    let _runtime = Runtime::try_spawn_with(config, |bound| {
        let relay = SharedRelay::new(bound, LOOPBACK.ip(), |c| {
            c.rate.datagrams = 100_000;
            c.rate.bytes = 100 << 20;
        });
        shared = Some(relay.clone());
        Ok(Relayed::new(Idle, Some(relay)))
    })
    .map_err(io::Error::other)?;
    let relay = shared.ok_or_else(|| io::Error::other("no relay"))?;
    pin_forwarder(RELAY_THREAD, pinned);
    let endpoints: Vec<SocketAddr> = {
        let mut r = relay.lock();
        for (i, a) in addrs.iter().enumerate() {
            r.admit(dpnid(i), *a, APP, INSTANCE);
        }
        r.endpoints().to_vec()
    };
    latch(members, &endpoints)?;
    load(members, &endpoints, duration, pinned.is_ok(), model, Some(RELAY_THREAD))
}

/// Moves the forwarding thread named `name` alone onto [`pin::LOOP_CORE`], `SCHED_FIFO`, if
/// the bench is pinning (`pinned` is `Ok`); says why not in `pinned` when that fails.
fn pin_forwarder(name: &str, pinned: &mut Result<(), String>) {
    if pinned.is_ok() {
        *pinned = tid_of(name).ok_or_else(|| format!("no {name} thread ID")).and_then(|t| {
            pin::to_core(t, pin::LOOP_CORE)?;
            pin::realtime(t, pin::LOOP_PRIORITY)
        });
    }
}

/// How many times the thread named `name` has slept so far (`voluntary_ctxt_switches`,
/// proc(5)).
fn sleeps(name: &str) -> Option<u64> {
    let tid = tid_of(name)?;
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Softirq time so far on `core` (Linux `/proc/stat`, clock ticks of 1/100 s).
fn core_softirq(core: usize) -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.split_whitespace().next() == Some(&format!("cpu{core}")))?;
    // user nice system idle iowait irq softirq (proc(5)).
    let ticks: u64 = line.split_whitespace().nth(7)?.parse().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The ID of this process's thread named `name` (Linux: `/proc/self/task/TID/comm`), waiting
/// up to a second for a thread just spawned to name itself.
fn tid_of(name: &str) -> Option<u32> {
    let find = || {
        std::fs::read_dir("/proc/self/task").ok()?.flatten().find_map(|task| {
            let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
            (comm.trim_end() == name).then(|| task.file_name().to_str()?.parse().ok()).flatten()
        })
    };
    for _ in 0..100 {
        if let Some(tid) = find() {
            return Some(tid);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// A relay with `PILOTS` members latched at every other's endpoint (addresses on loopback,
/// nothing sent), for the in-process cost of forwarding (the `micro` bench).
pub fn latched_relay() -> dplay_relay::Relay {
    let endpoint = |i: usize| SocketAddr::from(([127, 0, 0, 1], 10_000 + u16::try_from(i).unwrap_or(0)));
    let member = member_addr;
    let mut cfg = dplay_relay::RelayConfig::new((0..PILOTS).map(endpoint).collect());
    cfg.rate.datagrams = u32::MAX;
    cfg.rate.bytes = u32::MAX;
    let mut r = dplay_relay::Relay::new(cfg);
    for i in 0..PILOTS {
        r.admit(dpnid(i), member(i), APP, INSTANCE);
    }
    let t = Instant::now();
    for i in 0..PILOTS {
        for j in (0..PILOTS).filter(|j| *j != i) {
            let first = if i > j {
                let key = path_test_key(dpnid(i).0, dpnid(j).0, &APP, &INSTANCE);
                PathTest { msg_id: 1, key }.to_vec().unwrap_or_default()
            } else {
                vec![0x88, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
            };
            r.handle_datagram(t, j, member(i), &first);
        }
    }
    let mut buf = Vec::new();
    while r.poll_forward(&mut buf).is_some() {
        buf.clear();
    }
    r
}

/// The address member `i` of [`latched_relay`] sends from.
pub fn member_addr(i: usize) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 2], 20_000 + u16::try_from(i).unwrap_or(0)))
}

/// A position datagram's size, for the benches.
pub const POSITION_DATAGRAM: usize = DATAGRAM;

fn dpnid(i: usize) -> Dpnid {
    Dpnid(0x100 + u32::try_from(i).unwrap_or(0))
}

/// Every member latches at every other's endpoint, as in a session: the newer one of each pair
/// with its PATH_TEST, the older one with a CONNECT.
fn latch(members: &[UdpSocket], endpoints: &[SocketAddr]) -> io::Result<()> {
    for (i, m) in members.iter().enumerate() {
        for (j, e) in endpoints.iter().enumerate().take(members.len()) {
            let first = if i > j {
                let key = path_test_key(dpnid(i).0, dpnid(j).0, &APP, &INSTANCE);
                PathTest { msg_id: 1, key }.to_vec().map_err(io::Error::other)?
            } else {
                vec![0x88, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
            };
            if i != j {
                m.send_to(&first, e)?;
            }
        }
    }
    // What the latches forwarded: drained before measuring.
    std::thread::sleep(Duration::from_millis(200));
    let mut buf = [0u8; 2048];
    for m in members {
        m.set_nonblocking(true)?;
        while m.recv_from(&mut buf).is_ok() {}
        m.set_nonblocking(false)?;
    }
    Ok(())
}

/// Each member sends a stamped datagram to each other member's `targets` entry `RATE` times a
/// second for `duration`; the receivers of `model` collect the latencies, and `/proc` what the
/// thread named `forwarder` spent (none: the direct baseline). With `realtime`, the load's
/// threads run `SCHED_FIFO` below the relay, the receivers ([`pin::LOAD_PRIORITY`]) above the
/// sender: a receiver woken by the relay or the sender runs at once rather than after whatever
/// else the machine runs on that core.
fn load(
    members: &[UdpSocket],
    targets: &[SocketAddr],
    duration: Duration,
    realtime: bool,
    model: Model,
    forwarder: Option<&str>,
) -> io::Result<Hop> {
    // `realtime` says the relay thread's `chrt` worked: the same call for these does too.
    let fifo = move |priority: u8| {
        if realtime && let Some(tid) = pin::current_tid() {
            let _ = pin::realtime(tid, priority);
        }
    };
    let epoch = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let receive = |sockets: Vec<UdpSocket>| {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || -> io::Result<Vec<u64>> {
            fifo(pin::LOAD_PRIORITY);
            match model {
                Model::ThreadPerMember => receive_blocking(&sockets, &stop, epoch),
                Model::OneReceiver | Model::ReceiveElsewhere => receive_epoll(sockets, &stop, epoch),
            }
        })
    };
    let clones = members.iter().map(UdpSocket::try_clone).collect::<io::Result<Vec<_>>>()?;
    let threads: Vec<_> = match model {
        Model::ThreadPerMember => clones.into_iter().map(|s| receive(vec![s])).collect(),
        Model::OneReceiver | Model::ReceiveElsewhere => vec![receive(clones)],
    };
    let cpu = || forwarder.and_then(thread_cpu);
    let slept = || forwarder.and_then(sleeps);
    let softirq = || realtime.then(|| core_softirq(pin::LOOP_CORE)).flatten();
    let (cpu0, sleeps0, softirq0) = (cpu(), slept(), softirq());
    let sender = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                fifo(pin::LOAD_PRIORITY - 1);
                send(members, targets, duration, epoch)
            })
            .join()
    });
    let (sent, elapsed) = sender.map_err(|_| io::Error::other("sender panicked"))?;
    std::thread::sleep(Duration::from_millis(100));
    let (cpu1, sleeps1, softirq1) = (cpu(), slept(), softirq());
    stop.store(true, Ordering::Release);
    let mut ages = Vec::new();
    for r in threads {
        ages.extend(r.join().map_err(|_| io::Error::other("receiver panicked"))??);
    }
    for m in members {
        m.set_nonblocking(false)?;
    }
    let cpu_percent = match (cpu0, cpu1) {
        (Some(a), Some(b)) => (b - a).as_secs_f64() / elapsed.as_secs_f64() * 100.0,
        _ => 0.0,
    };
    #[allow(clippy::cast_precision_loss)] // counts far below 2^52
    let (offered, delivered) = (sent as f64 / elapsed.as_secs_f64(), ages.len() as f64 / sent.max(1) as f64);
    #[allow(clippy::cast_precision_loss)] // as above
    let wakeups =
        sleeps0.zip(sleeps1).map_or(0.0, |(a, b)| b.saturating_sub(a) as f64 / elapsed.as_secs_f64());
    let softirq_percent = softirq0
        .zip(softirq1)
        .map(|(a, b)| b.saturating_sub(a).as_secs_f64() / elapsed.as_secs_f64() * 100.0);
    Ok(Hop { cpu_percent, wakeups, latency: percentiles(&mut ages), offered, delivered, softirq_percent })
}

/// [`Model::ThreadPerMember`]: blocking sockets (one per thread; their read timeout set, so
/// `stop` is seen).
fn receive_blocking(sockets: &[UdpSocket], stop: &AtomicBool, epoch: Instant) -> io::Result<Vec<u64>> {
    let mut buf = [0u8; 2048];
    let mut ages = Vec::new();
    while !stop.load(Ordering::Acquire) {
        for socket in sockets {
            if let Ok((n, _)) = socket.recv_from(&mut buf) {
                ages.extend(buf.get(..n).and_then(|d| crate::age_ns(d, epoch)));
            }
        }
    }
    Ok(ages)
}

/// [`Model::OneReceiver`]: every member's socket on one epoll (mio, edge-triggered), each read
/// until it would block. The sockets are left non-blocking (they share their file
/// description with the members'; [`load`] sets them back).
fn receive_epoll(sockets: Vec<UdpSocket>, stop: &AtomicBool, epoch: Instant) -> io::Result<Vec<u64>> {
    let mut poll = mio::Poll::new()?;
    let mut sockets: Vec<mio::net::UdpSocket> = sockets
        .into_iter()
        .map(|s| s.set_nonblocking(true).map(|()| mio::net::UdpSocket::from_std(s)))
        .collect::<io::Result<_>>()?;
    for (i, s) in sockets.iter_mut().enumerate() {
        poll.registry().register(s, mio::Token(i), mio::Interest::READABLE)?;
    }
    let mut events = mio::Events::with_capacity(PILOTS);
    let mut buf = [0u8; 2048];
    let mut ages = Vec::new();
    while !stop.load(Ordering::Acquire) {
        poll.poll(&mut events, Some(Duration::from_millis(20)))?;
        for event in &events {
            let Some(socket) = sockets.get(event.token().0) else { continue };
            while let Ok((n, _)) = socket.recv_from(&mut buf) {
                ages.extend(buf.get(..n).and_then(|d| crate::age_ns(d, epoch)));
            }
        }
    }
    Ok(ages)
}

/// The sending side of [`load`]: each member's 31 datagrams in turn, spread over the interval
/// as pilots' clocks are. Returns how many were sent, and in how long.
fn send(
    members: &[UdpSocket],
    targets: &[SocketAddr],
    duration: Duration,
    epoch: Instant,
) -> (u64, Duration) {
    let t0 = Instant::now();
    let slot = Duration::from_secs(1) / RATE / u32::try_from(members.len()).unwrap_or(1);
    let mut sent = 0u64;
    let mut buf = [0u8; DATAGRAM];
    let mut tick = t0;
    while tick < t0 + duration {
        for (i, m) in members.iter().enumerate() {
            for (j, to) in targets.iter().enumerate().take(members.len()) {
                if i != j {
                    crate::stamp(&mut buf, epoch);
                    if m.send_to(&buf, to).is_ok() {
                        sent += 1;
                    }
                }
            }
            tick += slot;
            if let Some(wait) = tick.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
    (sent, t0.elapsed())
}
