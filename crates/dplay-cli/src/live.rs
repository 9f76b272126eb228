//! What `dplay host`, `join`, `enum` and `fs` share: address parsing, starting a runtime
//! (with `--pcap`), Ctrl-C, logging, and printing events as text or JSON lines.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use crossbeam_channel::{Receiver, select};
use dplay_runtime::{Dp8Event, Player, Protocol, Runtime, RuntimeConfig, SocketSpec};
use dplay_session::{Event, Mode, SessionConfig, TableChange};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;
use dplay_wire::dp8::session::{ApplicationDescFlags, DestroyReason};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::escape::escaped;
use crate::events::{GroupChange, JsonEvent, Row, flag_names};

/// The DirectPlay 8 port (MS-DPDX 2.1: hosts listen on UDP 6073).
pub(crate) const DPLAY8_PORT: u16 = 6073;

/// Options every networked subcommand takes.
#[derive(Args, Clone)]
pub(crate) struct NetArgs {
    /// Print events as JSON lines (each has an "event" field) instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Record every datagram (and DirectPlay 4 TCP message) sent and received in this pcap
    /// file.
    #[arg(long, value_name = "FILE")]
    pub(crate) pcap: Option<PathBuf>,
    /// Stop after this long: seconds or a unit, such as 30s or 2m (default: run until Ctrl-C).
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    pub(crate) duration: Option<Duration>,
}

impl NetArgs {
    /// The instant to stop at, if any.
    pub(crate) fn deadline(&self, start: Instant) -> Option<Instant> {
        self.duration.map(|d| start + d)
    }
}

/// Session options shared by `host`, `join` and `fs`.
#[derive(Args, Clone, Default)]
pub(crate) struct SessionArgs {
    /// The application GUID. Default: `host` and `join`, DXDiag's
    /// (61EF80DA-691B-4247-9ADD-1C7BED2BC13E); `fs`, FS2004's
    /// (0808CAA5-E62C-4691-8957-5D4524B922DA). `fs --sim fs98` always uses FS98's GUID_FS6;
    /// `fs --sim other` needs one.
    #[arg(long, value_name = "GUID", value_parser = parse_guid)]
    pub(crate) app_guid: Option<Uuid>,
    /// The password (required to join when the host sets one).
    #[arg(long)]
    pub(crate) password: Option<String>,
    /// The silence before a KeepAlive is sent, which DirectPlay sends between once and twice
    /// that (MC-DPL8R 3.1.2.6 recommends 25 s; DPN_CAPS dwTimeoutUntilKeepAlive). Lower
    /// finds a silent dead player sooner. DirectPlay 4: the PING period (spec 35), and a host
    /// sets KEEP_ALIVE.
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse_period)]
    pub(crate) keepalive: Option<Duration>,
    /// Retries of a reliable frame before its peer is declared lost (MC-DPL8R 3.1.2.5
    /// recommends 10; DPN_CAPS_EX dwNumSendRetries). Fewer finds a dead player sooner, and
    /// gives up sooner on a lossy link.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) send_retries: Option<u32>,
    /// The longest wait between two retries (MC-DPL8R 3.1.2.5 recommends 5 s; DPN_CAPS_EX
    /// dwMaxSendRetryInterval).
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    pub(crate) max_retry_interval: Option<Duration>,
}

/// `--signing`: the transport's packet signing (MC-DPL8R 3.1.4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum SigningArg {
    /// No signing.
    #[default]
    Off,
    /// Fast signing (DPNSESSION_FAST_SIGNED): every frame carries its sender's secret.
    Fast,
    /// Full signing (DPNSESSION_FULL_SIGNED): refused, MC-DPL8R does not specify it fully.
    Full,
}

impl SigningArg {
    /// The transport's signing, or why not.
    pub(crate) fn signing(self) -> anyhow::Result<dplay_dframe::Signing> {
        match self {
            Self::Off => Ok(dplay_dframe::Signing::Off),
            Self::Fast => Ok(dplay_dframe::Signing::Fast),
            Self::Full => Err(full_signing_error()),
        }
    }
}

/// Why full signing is refused (docs/decisions.md).
pub(crate) fn full_signing_error() -> anyhow::Error {
    anyhow::anyhow!(
        "full signing (DPNSESSION_FULL_SIGNED) is not implemented: MC-DPL8R 3.1.4.4 never says how its secret modifier is derived; use --signing fast"
    )
}

pub(crate) use crate::address::parse_host;

/// `addr`, with `port` when it has none (port 0).
pub(crate) fn or_port(addr: SocketAddr, port: u16) -> SocketAddr {
    if addr.port() == 0 { SocketAddr::new(addr.ip(), port) } else { addr }
}

fn parse_guid(text: &str) -> Result<Uuid, String> {
    Uuid::parse_str(text.trim_matches(['{', '}']))
        .map_err(|_| format!("`{text}` is not a GUID: give one such as {DXDIAG_APPLICATION_GUID}"))
}

/// The address to bind when joining `target`: loopback for a loopback target, else any, of
/// the target's family (issue 25 item 8: an IPv6 target needs an IPv6 socket).
pub(crate) fn bind_for(target: SocketAddr) -> SocketAddr {
    let ip = match (target.ip().is_loopback(), target.is_ipv6()) {
        (true, false) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        (false, false) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        (true, true) => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        (false, true) => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
    };
    SocketAddr::new(ip, 0)
}

/// `--bind` when given, else [`bind_for`]: the address a joiner or enumerator binds to reach
/// `target`. One of the other family can reach nothing (issue 25 item 8): an error.
pub(crate) fn bind_towards(bind: Option<SocketAddr>, target: SocketAddr) -> anyhow::Result<SocketAddr> {
    match bind {
        Some(b) if b.is_ipv4() != target.is_ipv4() => anyhow::bail!(
            "--bind {} cannot reach {target}: give a --bind address of the target's family (IPv4 or IPv6), or none",
            b.ip()
        ),
        Some(b) => Ok(b),
        None => Ok(bind_for(target)),
    }
}

/// The default join `--timeout` of `join` and `fs join`: 20 s. A joiner instructed to
/// connect to a peer that crashed waits for it `peer_connect_timeout` (6 s), asks the host to
/// check it (MC-DPL8CS 3.2.5.3) and the host removes it `integrity_timeout` (5 s) later, or
/// sooner when its own link gives up: about 11 s (issue 25 item 4), well within.
pub(crate) const JOIN_TIMEOUT: &str = "20";

/// The shortest join or enumeration `--timeout` taken (shorter ones are raised to it).
pub(crate) const MIN_TIMEOUT: Duration = Duration::from_millis(100);

/// The shortest `--keepalive` period taken (shorter ones are raised to it).
pub(crate) const MIN_KEEPALIVE: Duration = Duration::from_millis(100);

/// A session configuration for `name` at `local` from the shared options.
pub(crate) fn session_config(local: SocketAddr, name: &str, args: &SessionArgs) -> SessionConfig {
    let mut c = SessionConfig::new(args.app_guid.unwrap_or(DXDIAG_APPLICATION_GUID), local, name);
    if local.ip().is_unspecified() {
        // Offered as DN_ALTERNATE_ADDRESS instead of 0.0.0.0 (MC-DPL8CS 2.2.9).
        c.interface_addrs = dplay_runtime::interface_addrs(local.ip());
    }
    c.password = args.password.clone();
    c.mode = Mode::PeerToPeer;
    let t = &mut c.transport;
    if let Some(idle) = args.keepalive {
        t.keepalive_idle = idle.max(MIN_KEEPALIVE);
        // The timer checks the silence once per granularity: at most the idle time, so a
        // KeepAlive goes between once and twice the idle time, as DPN_CAPS documents.
        let tick = t.keepalive_granularity().min(t.keepalive_idle);
        t.set_keepalive_granularity(tick);
    }
    if let Some(n) = args.send_retries {
        t.max_retries = n.max(1);
    }
    if let Some(interval) = args.max_retry_interval {
        t.retry_max_interval = interval.max(Duration::from_millis(10));
    }
    c
}

/// Binds `bind` (with a pcap tap when asked) and starts the protocol `make` builds.
pub(crate) fn spawn<P: Protocol>(
    bind: SocketAddr,
    pcap: Option<&PathBuf>,
    make: impl FnOnce(SocketAddr) -> P,
) -> anyhow::Result<Runtime<P>> {
    spawn_on(SocketSpec::udp(bind), pcap, make)
}

/// Like [`spawn`], on a socket with SO_BROADCAST set, so EnumQuery may go to a broadcast
/// address (MS-DPDX 3.3.4: a client enumerates at a known address or the broadcast address).
pub(crate) fn spawn_broadcast<P: Protocol>(
    bind: SocketAddr,
    pcap: Option<&PathBuf>,
    make: impl FnOnce(SocketAddr) -> P,
) -> anyhow::Result<Runtime<P>> {
    spawn_on(SocketSpec::udp(bind).broadcast(), pcap, make)
}

/// The `--pcap` capture at `path`; an existing file is replaced, and said so on stderr (issue
/// 25 item 11). `-` (standard output, where the events go) is refused.
pub(crate) fn pcap_tap(path: &std::path::Path) -> anyhow::Result<dplay_runtime::pcap::PcapTap> {
    if path.as_os_str() == "-" {
        anyhow::bail!("--pcap -: standard output carries the events; give a file name");
    }
    if path.exists() {
        let _ = writeln!(std::io::stderr(), "dplay: --pcap: replacing {}", path.display());
    }
    dplay_runtime::pcap::PcapTap::create(path)
        .with_context(|| format!("cannot create {}: choose a writable --pcap path", path.display()))
}

fn spawn_on<P: Protocol>(
    socket: SocketSpec,
    pcap: Option<&PathBuf>,
    make: impl FnOnce(SocketAddr) -> P,
) -> anyhow::Result<Runtime<P>> {
    let tap = pcap.map(|path| pcap_tap(path)).transpose()?;
    spawn_tapped(socket, tap.map(|t| Box::new(t) as Box<dyn dplay_runtime::Tap>), make)
}

/// Like [`spawn`], recording into `tap` (one capture shared by several runtimes).
pub(crate) fn spawn_tapped<P: Protocol>(
    socket: SocketSpec,
    tap: Option<Box<dyn dplay_runtime::Tap>>,
    make: impl FnOnce(SocketAddr) -> P,
) -> anyhow::Result<Runtime<P>> {
    let mut config = RuntimeConfig::with_sockets(vec![socket]);
    config.tap = tap;
    Ok(Runtime::spawn_with(config, make)?)
}

/// A runtime on `sockets`, with a pcap tap when asked.
pub(crate) fn runtime_config(
    sockets: Vec<SocketSpec>,
    pcap: Option<&PathBuf>,
) -> anyhow::Result<RuntimeConfig> {
    let mut config = RuntimeConfig::with_sockets(sockets);
    if let Some(path) = pcap {
        config.tap = Some(Box::new(pcap_tap(path)?));
    }
    Ok(config)
}

/// Logs to stderr through `tracing`, filtered by RUST_LOG (default: warnings).
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .fmt_fields(crate::escape::log_fields())
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .try_init();
}

/// A channel that receives once per Ctrl-C (SIGINT or SIGTERM).
pub(crate) fn ctrl_c() -> anyhow::Result<Receiver<()>> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    ctrlc::set_handler(move || {
        let _ = tx.try_send(());
    })
    .context("cannot install the Ctrl-C handler")?;
    Ok(rx)
}

/// Why [`wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The deadline passed.
    Deadline,
    /// Ctrl-C.
    Interrupted,
    /// The handler asked to stop.
    Done,
    /// The runtime stopped by itself.
    Closed,
    /// SIGUSR1 asked for the stats line ([`wait_or_stats`] only); the caller goes on.
    Stats,
}

impl Stop {
    /// As the `stopped` event says it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Deadline => "deadline",
            Self::Interrupted => "interrupted",
            Self::Done => "done",
            Self::Closed => "closed",
            Self::Stats => "stats",
        }
    }
}

/// Hands events to `handle` until it returns false, the deadline passes, Ctrl-C, or the
/// runtime's event channel closes.
pub(crate) fn wait<E>(
    events: &Receiver<E>,
    interrupt: &Receiver<()>,
    deadline: Option<Instant>,
    handle: impl FnMut(E) -> bool,
) -> Stop {
    wait_on(events, interrupt, &crossbeam_channel::never(), deadline, handle)
}

/// [`wait`], returning [`Stop::Stats`] too when SIGUSR1 asks for the stats line.
pub(crate) fn wait_or_stats<E>(
    events: &Receiver<E>,
    interrupt: &Receiver<()>,
    deadline: Option<Instant>,
    handle: impl FnMut(E) -> bool,
) -> Stop {
    wait_on(events, interrupt, &crate::stats_signal::requests(), deadline, handle)
}

/// A host's main loop: hands events to `handle` as [`wait`] does, until the end, Ctrl-C, or
/// the runtime's event channel closes; every `stats_every` and on SIGUSR1, calls `stats` (which
/// asks the runtime for the drops-and-refusals summary) and goes on.
pub(crate) fn serve<E>(
    events: &Receiver<E>,
    interrupt: &Receiver<()>,
    end: Option<Instant>,
    stats_every: Option<Duration>,
    mut handle: impl FnMut(E) -> bool,
    mut stats: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Stop> {
    loop {
        #[allow(clippy::disallowed_methods)] // the command's own clock
        let tick = stats_every.map(|p| Instant::now() + p);
        let until = match (tick, end) {
            (Some(t), Some(e)) => Some(t.min(e)),
            (t, e) => t.or(e),
        };
        let stop = wait_or_stats(events, interrupt, until, &mut handle);
        if stop != Stop::Stats && (stop != Stop::Deadline || until == end) {
            return Ok(stop);
        }
        stats()?;
    }
}

fn wait_on<E>(
    events: &Receiver<E>,
    interrupt: &Receiver<()>,
    stats: &Receiver<()>,
    deadline: Option<Instant>,
    mut handle: impl FnMut(E) -> bool,
) -> Stop {
    loop {
        #[allow(clippy::disallowed_methods)] // the command's own run time
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return Stop::Deadline;
        }
        let timeout = crossbeam_channel::after(left.unwrap_or(Duration::from_secs(3600)));
        select! {
            recv(events) -> e => match e {
                Ok(e) => if !handle(e) { return Stop::Done },
                Err(_) => return Stop::Closed,
            },
            recv(interrupt) -> _ => return Stop::Interrupted,
            recv(stats) -> _ => return Stop::Stats,
            recv(timeout) -> _ => {}
        }
    }
}

/// Waits up to one second for a leaving runtime to close its connections, then stops it.
pub(crate) fn finish<P: Protocol>(runtime: Runtime<P>) {
    finish_with(runtime, drop);
}

/// [`finish`], handing the leave's events (a host's end-of-run summary among them) to `print`.
pub(crate) fn finish_with<P: Protocol>(runtime: Runtime<P>, mut print: impl FnMut(P::Event)) {
    #[allow(clippy::disallowed_methods)] // a grace period for the goodbyes
    let until = Instant::now() + Duration::from_secs(1);
    #[allow(clippy::disallowed_methods)]
    while runtime.is_running() && Instant::now() < until {
        runtime.events().try_iter().for_each(&mut print);
        std::thread::sleep(Duration::from_millis(20));
    }
    runtime.events().try_iter().for_each(&mut print);
    if let Err(e) = runtime.shutdown() {
        tracing::warn!("{e}");
    }
}

/// Prints events, with the time since the command started.
pub(crate) struct Output {
    json: bool,
    start: Instant,
    /// Names of the players seen, for messages that carry only a DPNID.
    pub(crate) names: BTreeMap<Dpnid, String>,
    /// Our requests under way by context ([`Dp8Event::Started`]), to name them when they
    /// complete; as many as the session lets be under way.
    operations: BTreeMap<u32, &'static str>,
    /// A join under way ([`Output::joining`]), so that its text says each thing once (issue 25
    /// item 18).
    join: Option<JoinSaid>,
}

/// What a join's text said while it was not in yet: the players the host's name table brought
/// are listed by the name table printed once we are in, not also a `player joined` line each;
/// a session that ends first is said by the join's error line, not also a `session ended` line;
/// what we wait for is said by the first [`Event::JoinPending`] only. `--json` keeps every event.
#[derive(Default)]
struct JoinSaid {
    /// The host's answer (the first JoinPending) was printed.
    answered: bool,
}

impl Output {
    /// Text or JSON lines, timed from `start`.
    pub(crate) fn new(json: bool, start: Instant) -> Self {
        Self { json, start, names: BTreeMap::new(), operations: BTreeMap::new(), join: None }
    }

    /// The output of a joiner (`dplay join`, `fs join`) until its [`Event::Joined`]: see
    /// [`JoinSaid`].
    pub(crate) fn joining(mut self) -> Self {
        self.join = Some(JoinSaid::default());
        self
    }

    /// [`Output::event`] for `--json` only: the text said it already.
    fn json_only(&self, event: &impl serde::Serialize) {
        if self.json {
            self.event(event, "");
        }
    }

    /// Prints one event: `fields` as a JSON line (with `"event"` and `"t"` added), or `text`
    /// and its indented continuation `rows`, each escaped (crate::escape).
    fn emit(&self, event: &str, fields: Value, text: impl std::fmt::Display, rows: &[String]) {
        #[allow(clippy::disallowed_methods)] // the event's time, for the reader
        let t = Instant::now().saturating_duration_since(self.start).as_secs_f64();
        let mut out = std::io::stdout().lock();
        let _ = if self.json {
            let mut object = serde_json::Map::new();
            object.insert("event".into(), json!(event));
            object.insert("t".into(), json!((t * 1000.0).round() / 1000.0));
            if let Value::Object(map) = fields {
                object.extend(map);
            }
            writeln!(out, "{}", Value::Object(object))
        } else {
            let mut text = format!("[{t:8.3}s] {}", escaped(&text.to_string()));
            for row in rows {
                text.push_str("\n    ");
                text.push_str(&escaped(row));
            }
            writeln!(out, "{text}")
        };
        let _ = out.flush();
    }

    /// The name of `dpnid`, or its number.
    pub(crate) fn name(&self, dpnid: Dpnid) -> String {
        self.names.get(&dpnid).cloned().unwrap_or_else(|| dpnid.to_string())
    }

    /// Prints one typed event (docs/json-events.md) as a JSON line, or `text`.
    pub(crate) fn event(&self, event: &impl serde::Serialize, text: impl std::fmt::Display) {
        self.event_rows(event, text, &[]);
    }

    /// [`Output::event`] whose text goes on over indented `rows` (a table's players, ...).
    pub(crate) fn event_rows(
        &self,
        event: &impl serde::Serialize,
        text: impl std::fmt::Display,
        rows: &[String],
    ) {
        let Ok(Value::Object(mut fields)) = serde_json::to_value(event) else { return };
        let name = match fields.shift_remove("event") {
            Some(Value::String(name)) => name,
            _ => return,
        };
        self.emit(&name, Value::Object(fields), text, rows);
    }

    /// `--json`: a join that failed ends with `join_failed` and its `error`, so that a tool
    /// reading only stdout learns the end (issue 25 item 14); the text is the error line
    /// `main` prints.
    pub(crate) fn join_failed(&self, error: anyhow::Error) -> anyhow::Error {
        if self.json {
            let error_text = format!("{error:#}");
            self.event(&crate::events::Dp4JsonEvent::JoinFailed { error: error_text }, "");
        }
        error
    }

    /// Prints the last line of a run: why it stopped.
    pub(crate) fn stopped(&self, stop: Stop) {
        self.event(&JsonEvent::Stopped { why: stop.name() }, "stopped");
    }

    /// Prints a DirectPlay 8 event (and remembers names). Returns whether the session ended.
    pub(crate) fn dp8(&mut self, event: &Dp8Event) -> bool {
        match event {
            Dp8Event::Session(e) => return self.session(e),
            Dp8Event::NameTable(players) => self.name_table(players),
            Dp8Event::Refusals(r) => self.refusals(r),
            Dp8Event::Voice(v) => crate::voice::print(self, v),
            Dp8Event::Started { command, context } => {
                self.operations.insert(*context, command);
            }
            Dp8Event::CommandFailed { command, error } => self.event(
                &JsonEvent::CommandFailed { command: (*command).to_owned(), error: error.clone() },
                format!("{command} failed: {error}"),
            ),
            // An event a later runtime adds: not printed until this printer knows it.
            _ => {}
        }
        false
    }

    fn name_table(&mut self, players: &[Player]) {
        for p in players {
            self.names.insert(p.dpnid, p.name.clone());
        }
        let rows = players
            .iter()
            .map(|p| Row {
                id: p.dpnid.to_string(),
                name: Some(p.name.clone()),
                host: p.is_host,
                local: p.is_local,
                system: None,
            })
            .collect();
        let text: Vec<String> = players
            .iter()
            .map(|p| {
                let mut tags = Vec::new();
                if p.is_host {
                    tags.push("host");
                }
                if p.is_local {
                    tags.push("me");
                }
                let tags = if tags.is_empty() { String::new() } else { format!(" ({})", tags.join(", ")) };
                format!("{} {}{tags}", p.dpnid, p.name)
            })
            .collect();
        self.event_rows(&JsonEvent::NameTable { players: rows }, "name table:", &text);
    }

    fn session(&mut self, event: &Event) -> bool {
        match event {
            Event::HostFound { from, .. } => {
                self.event(
                    &JsonEvent::HostFound { host: from.to_string() },
                    format!("a session answered at {from}"),
                );
            }
            Event::Joined { local, host, flags } => {
                self.join = None;
                let (kind, role) = session_kind(*flags);
                let signing =
                    if flags.contains(ApplicationDescFlags::FAST_SIGNED) { ", fast-signed" } else { "" };
                self.event(
                    &JsonEvent::Joined {
                        id: local.to_string(),
                        host: Some(host.to_string()),
                        mode: Some(kind),
                        flags: Some(flag_names(flags)),
                    },
                    format!("in the {kind}{signing} session as {local}, {role} {host}"),
                );
            }
            Event::JoinPending { local, awaiting_instruction, awaiting_peers, .. } => {
                let event = JsonEvent::JoinPending {
                    id: local.to_string(),
                    awaiting_instruction: *awaiting_instruction,
                    awaiting_peers: awaiting_peers.iter().map(ToString::to_string).collect(),
                };
                // The first says what we wait for; later ones only take waits away (the host's
                // INSTRUCT_CONNECT came, a peer connected to us), which `in the session` ends.
                if self.join.as_ref().is_some_and(|j| j.answered) {
                    self.json_only(&event);
                    return false;
                }
                if let Some(join) = &mut self.join {
                    join.answered = true;
                }
                let mut waits = Vec::new();
                if *awaiting_instruction {
                    waits.push("the host's DN_INSTRUCT_CONNECT".to_owned());
                }
                if !awaiting_peers.is_empty() {
                    let peers: Vec<String> =
                        awaiting_peers.iter().map(|d| format!("{} ({d})", self.name(*d))).collect();
                    waits.push(format!("{} to connect to us", peers.join(", ")));
                }
                let text = format!("the host answered (we are {local}); waiting for {}", waits.join(" and "));
                self.event(&event, text);
            }
            Event::PlayerAdded { dpnid, name } => {
                self.names.insert(*dpnid, name.clone());
                let event =
                    JsonEvent::PlayerJoined { id: dpnid.to_string(), name: Some(name.clone()), system: None };
                if self.join.is_some() {
                    // In the name table printed once we are in.
                    self.json_only(&event);
                } else {
                    self.event(&event, format!("player joined: {name} ({dpnid})"));
                }
            }
            Event::PlayerRemoved { dpnid, reason } => {
                let name = self.name(*dpnid);
                let why = destroy_reason(*reason);
                self.event(
                    &JsonEvent::PlayerLeft {
                        id: dpnid.to_string(),
                        name: Some(name.clone()),
                        reason: Some(why.clone()),
                    },
                    format!("player left: {name} ({dpnid}), {why}"),
                );
            }
            Event::JoinRefused { from, name, code } => {
                let who = name.as_deref().map(|n| format!("{n} ")).unwrap_or_default();
                self.event(
                    &JsonEvent::JoinRefused {
                        from: from.to_string(),
                        name: name.clone(),
                        code: code.to_string(),
                    },
                    format!("join refused: {who}from {from}, {code}"),
                );
            }
            Event::HostMigrated { new_host } => {
                let name = self.name(*new_host);
                self.event(
                    &JsonEvent::HostMigrated {
                        new_host: new_host.to_string(),
                        name: name.clone(),
                        local: None,
                    },
                    format!("host migrated to {name} ({new_host})"),
                );
            }
            Event::Message { from, data, reliable, .. } => {
                let name = self.name(*from);
                let mut e = JsonEvent::message(Some(from.to_string()), Some(name.clone()), data);
                if let JsonEvent::Message { reliable: r, .. } = &mut e {
                    *r = Some(*reliable);
                }
                let (_, value) = printable(data);
                self.event(&e, format!("message from {name}: {value}"));
            }
            Event::Chat { from, text } => {
                let name = self.name(*from);
                let mut e = JsonEvent::message(Some(from.to_string()), Some(name.clone()), text.as_bytes());
                if let JsonEvent::Message { chat, .. } = &mut e {
                    *chat = true;
                }
                self.event(&e, format!("chat from {name}: {text}"));
            }
            Event::NameTable(change) => self.table_change(change),
            Event::Completed { context, result } => {
                let command = self.operations.remove(context);
                let what = command.map_or_else(|| format!("operation {context}"), str::to_owned);
                let error = result.as_ref().err().map(ToString::to_string);
                let text = match &error {
                    None => format!("{what} done"),
                    Some(e) => format!("{what} failed: {e}"),
                };
                self.event(&JsonEvent::Completed { command, context: *context, error }, text);
            }
            Event::SessionEnded { reason } => {
                let event = JsonEvent::SessionEnded { reason: reason.to_string() };
                if self.join.is_some() {
                    // A join that ends before we are in: its error line says why.
                    self.json_only(&event);
                } else {
                    self.event(&event, format!("session ended: {reason}"));
                }
                return true;
            }
            // An event a later session adds: not printed until this printer knows it.
            _ => {}
        }
        false
    }
}

impl Output {
    /// A group or information change (MC-DPL8CS 2.2.4, 2.2.5), with DirectPlay 4's keys
    /// (docs/json-events.md): `group` (`created`, `deleted`, `player_added`, `player_removed`,
    /// `renamed`, `data`), `player_renamed` and `player_data`.
    fn table_change(&mut self, change: &TableChange) {
        match change {
            TableChange::GroupCreated { group, name, requested_by } => {
                self.names.insert(*group, name.clone());
                let by = self.name(*requested_by);
                self.event(
                    &JsonEvent::Group(GroupChange::Created {
                        id: group.to_string(),
                        name: Some(name.clone()),
                        local: None,
                    }),
                    format!("group created: {name} ({group}), asked by {by}"),
                );
            }
            TableChange::GroupDestroyed { group } => {
                let name = self.name(*group);
                self.event(
                    &JsonEvent::Group(GroupChange::Deleted { id: group.to_string() }),
                    format!("group deleted: {name} ({group})"),
                );
            }
            TableChange::MemberAdded { group, player } | TableChange::MemberRemoved { group, player } => {
                let added = matches!(change, TableChange::MemberAdded { .. });
                let (g, p) = (self.name(*group), self.name(*player));
                let (id, player) = (group.to_string(), player.to_string());
                let change = if added {
                    GroupChange::PlayerAdded { id, player }
                } else {
                    GroupChange::PlayerRemoved { id, player }
                };
                self.event(
                    &JsonEvent::Group(change),
                    format!("{p} {} group {g}", if added { "added to" } else { "removed from" }),
                );
            }
            TableChange::InfoUpdated { dpnid, group: is_group, name, data } => {
                let is_group = *is_group;
                let old = self.name(*dpnid);
                if let Some(n) = name {
                    self.names.insert(*dpnid, n.clone());
                    let (id, name) = (dpnid.to_string(), Some(n.clone()));
                    let event = if is_group {
                        JsonEvent::Group(GroupChange::Renamed { id, name })
                    } else {
                        JsonEvent::PlayerRenamed { id, name }
                    };
                    self.event(&event, format!("{old} ({dpnid}) is now {n}"));
                }
                if let Some(d) = data {
                    let (id, len) = (dpnid.to_string(), d.len());
                    let (event, what) = if is_group {
                        (JsonEvent::Group(GroupChange::Data { id, len }), "group data")
                    } else {
                        (JsonEvent::PlayerData { id, len }, "player data")
                    };
                    self.event(
                        &event,
                        format!("{what} of {old} ({dpnid}): {len} byte{}", if len == 1 { "" } else { "s" }),
                    );
                }
            }
            // A change this build does not know is not printed (TableChange is non_exhaustive).
            _ => {}
        }
    }
}

/// `("peer-to-peer", "host")` or `("client-server", "server")` from a session's `dwFlags`
/// (MC-DPL8CS 2.2.1.4 `DPNSESSION_CLIENT_SERVER`).
pub(crate) fn session_kind(flags: ApplicationDescFlags) -> (&'static str, &'static str) {
    if flags.contains(ApplicationDescFlags::CLIENT_SERVER) {
        ("client-server", "server")
    } else {
        ("peer-to-peer", "host")
    }
}

/// DESTROY_PLAYER's reason in words (MC-DPL8CS 2.2.3.3; `DPNDESTROYPLAYERREASON_*`).
fn destroy_reason(reason: DestroyReason) -> String {
    match reason {
        DestroyReason::DPNDESTROYPLAYERREASON_NORMAL => "left".to_owned(),
        DestroyReason::DPNDESTROYPLAYERREASON_CONNECTIONLOST => "connection lost".to_owned(),
        DestroyReason::DPNDESTROYPLAYERREASON_SESSIONTERMINATED => "session terminated".to_owned(),
        DestroyReason::DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER => "removed by the host".to_owned(),
        other => other.to_string(),
    }
}

/// `("addon", ...)` for a Flight Simulator add-on packet (FS98 numbering, in human units),
/// `("text", ...)` when the bytes are printable UTF-8 (a trailing NUL dropped), else `("hex", ...)`.
pub(crate) fn printable(data: &[u8]) -> (&'static str, String) {
    if let Some(packet) = crate::addon_view::find(data, dplay_addon::Dialect::Fs98) {
        return ("addon", packet.to_string());
    }
    let trimmed = data.strip_suffix(&[0]).unwrap_or(data);
    match std::str::from_utf8(trimmed) {
        Ok(s) if !s.is_empty() && s.chars().all(|c| !c.is_control() || c == '\n' || c == '\t') => {
            ("text", s.to_owned())
        }
        _ => ("hex", dplay_wire::hexdump::hex(data)),
    }
}
