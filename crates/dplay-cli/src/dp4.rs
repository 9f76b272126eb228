//! `dplay host --dp4`, `dplay enum --dp4` and `dplay join --dp4`: DirectPlay 4 sessions over
//! the sockets of MC-DPL4CS 2.1 (UDP 47624 for enumeration, TCP and UDP game ports from 2300).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use dplay_runtime::{
    Dp4Binding, Dp4Command, Dp4Event, Dp4Protocol, Protocol, Relayed, Runtime, RuntimeError, SharedDp4Relay,
    Tap, VoiceEvent, VoiceRole,
};
use dplay_session::dp4::config::ENUM_PORT;
use dplay_session::dp4::{
    DPID_ALLPLAYERS, Dp4Config, Dp4Event as SessionEvent, EnumRequest, FoundSession, HostConfig,
};
use dplay_wire::dp4::enumeration::EnumSessionsFlags;
use dplay_wire::dp4::session::SessionFlags;
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

use crate::address;
use crate::dp4_print::{Dp4Output, digest, join_error, unsupported_kind};
use crate::enumerate::EnumArgs;
use crate::events::{JsonEvent, Proto, flag_names, flags_text};
use crate::host::HostArgs;
use crate::join::JoinArgs;
use crate::join_opts::check_player_data;
use crate::live::{self, Output, Stop};
use crate::other_protocol::{OTHER_GRACE, OtherProbe};

/// `dplay host --dp4` options.
#[derive(Args, Clone)]
pub(crate) struct Dp4HostArgs {
    /// DirectPlay 4: the UDP enumeration port (47624 in the spec; another lets several hosts
    /// share a machine).
    #[arg(long, value_name = "PORT", default_value_t = ENUM_PORT)]
    pub(crate) enum_port: u16,
    /// Send every application message back to its sender only, guaranteed (`tcp`, the
    /// default; DirectPlay 4 over TCP) or not (`udp`; DirectPlay 4 over UDP, fragmented beyond
    /// the MTU). A DirectPlay 8 chat line (DXDiag's, MS-DPDX) is the exception: it goes back to
    /// every player, as a chat line, since chat has no single receiver.
    #[arg(long, value_enum, value_name = "HOW", num_args = 0..=1, default_missing_value = "tcp")]
    pub(crate) echo: Option<Echo>,
    /// DirectPlay 4: host a session with the DirectPlay reliable protocol
    /// (DPSESSION_DIRECTPLAYPROTOCOL): once joined, every player message, guaranteed or not,
    /// goes over MC-DPL4R on the UDP game sockets.
    #[arg(long)]
    pub(crate) reliable_protocol: bool,
    /// DirectPlay 4, with --reliable-protocol: hand guaranteed messages up as soon as they are
    /// whole, not in the order they were sent (DPSESSION_NOPRESERVEORDER).
    #[arg(long, requires = "reliable_protocol")]
    pub(crate) no_preserve_order: bool,
    /// DirectPlay 4: tell peers this UDP address as our game socket (a relay or NAT in front
    /// of it forwards there).
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) advertise_udp: Option<SocketAddrV4>,
    /// DirectPlay 4: host migration (DPSESSION_MIGRATEHOST): when this host goes, the member
    /// with the lowest system player ID takes over (MC-DPL4CS 3.1.7.1).
    #[arg(long)]
    pub(crate) migrate_host: bool,
    #[command(flatten)]
    pub(crate) limits: Dp4LimitArgs,
}

/// What a DirectPlay 4 endpoint holds and answers for others (docs/limits.md has each default
/// and why).
#[derive(Args, Clone)]
pub(crate) struct Dp4LimitArgs {
    /// DirectPlay 4: answer the IP address a message header names instead of the sender's
    /// (only for relays or multi-homed peers that need it: a forged header can then aim this
    /// host at a third party).
    #[arg(long)]
    pub(crate) follow_header_addresses: bool,
    /// DirectPlay 4: how long an accepted TCP connection has for its first whole message
    /// (default 10s).
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    pub(crate) tcp_first_message: Option<Duration>,
    /// DirectPlay 4: how long a TCP connection of no known player may stay without a whole
    /// message (default 30s).
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    pub(crate) tcp_idle: Option<Duration>,
    /// DirectPlay 4: how long any TCP message may take to arrive whole (default 60s).
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    pub(crate) tcp_partial: Option<Duration>,
    /// DirectPlay 4: most TCP connections accepted from one IP address (default 16).
    #[arg(long, value_name = "N")]
    pub(crate) tcp_per_source: Option<usize>,
    /// DirectPlay 4: how long a TCP connection this endpoint opened may stay without a read or
    /// a write (default 2m); the next message opens a new one.
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    pub(crate) tcp_idle_opened: Option<Duration>,
}

impl Dp4LimitArgs {
    /// Sets the session's limits and the binding's TCP limits that were given.
    pub(crate) fn apply(&self, config: &mut Dp4Config, binding: &mut Dp4Binding) {
        config.limits.follow_header_addresses = self.follow_header_addresses;
        let t = &mut binding.stream_limits;
        for (arg, field) in [
            (self.tcp_first_message, &mut t.first_message),
            (self.tcp_idle, &mut t.idle_unknown),
            (self.tcp_partial, &mut t.partial_message),
            (self.tcp_idle_opened, &mut t.idle_opened),
        ] {
            if let Some(d) = arg {
                *field = d.max(Duration::from_millis(10));
            }
        }
        if let Some(n) = self.tcp_per_source {
            t.max_per_source = n.max(1);
        }
    }
}

/// How `--echo` sends back (in a --reliable-protocol session both go over MC-DPL4R).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Echo {
    /// Guaranteed, over TCP.
    #[value(alias = "guaranteed")]
    Tcp,
    /// Not guaranteed, over UDP.
    #[value(alias = "non-guaranteed")]
    Udp,
}

/// `dplay join --dp4` options.
#[derive(Args, Clone)]
pub(crate) struct Dp4JoinArgs {
    /// DirectPlay 4: once joined, send a message of this many bytes (a-z repeated) to everyone.
    #[arg(long, value_name = "BYTES")]
    pub(crate) send_size: Option<usize>,
    /// DirectPlay 4: send over UDP without guarantee, fragmented beyond the MTU, instead of
    /// over TCP.
    #[arg(long)]
    pub(crate) non_guaranteed: bool,
    /// DirectPlay 4: the host's enumeration port, asked when ADDR has no port.
    #[arg(long = "host-enum-port", value_name = "PORT", default_value_t = ENUM_PORT)]
    pub(crate) enum_port: u16,
    /// DirectPlay 4: the UDP port we answer enumeration on once we become the host by
    /// migration (MC-DPL4CS 3.2.3); until then it stays free.
    #[arg(long = "enum-port", value_name = "PORT", default_value_t = ENUM_PORT)]
    pub(crate) answer_enum_port: u16,
    /// DirectPlay 4: tell peers this UDP address as our game socket (a relay or NAT in front
    /// of it forwards there).
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) advertise_udp: Option<SocketAddrV4>,
    #[command(flatten)]
    pub(crate) limits: Dp4LimitArgs,
    #[command(flatten)]
    pub(crate) names: crate::limits::NameLimitArgs,
}

fn ipv4(addr: IpAddr) -> anyhow::Result<Ipv4Addr> {
    match addr {
        IpAddr::V4(ip) => Ok(ip),
        IpAddr::V6(ip) => {
            bail!("DirectPlay 4 runs over IPv4 only: {ip} cannot be used; give an IPv4 address")
        }
    }
}

/// The defaults (a seed from the operating system); `--keepalive` sets the Ping timer period
/// (MC-DPL4CS 3.1.2.5, 35 s by default).
fn config(keepalive: Option<Duration>) -> Dp4Config {
    let mut c = Dp4Config::default();
    if let Some(period) = keepalive {
        c.set_ping_interval(period.max(live::MIN_KEEPALIVE));
    }
    c
}

/// Starts a DirectPlay 4 runtime, with the errors a user can act on.
fn spawn_wrapped<W: Protocol>(
    binding: &Dp4Binding,
    config: Dp4Config,
    pcap: Option<&std::path::PathBuf>,
    wrap: impl FnOnce(Dp4Protocol) -> W,
) -> anyhow::Result<Runtime<W>> {
    Dp4Protocol::spawn_wrapped(binding, config, tap(pcap)?, wrap).map_err(|e| spawn_error(binding, e))
}

/// A host's runtime, relaying when `binding.relay_endpoints` asks (docs/relay.md), with the
/// endpoint inside the protocol `wrap` makes of it.
fn spawn_host<W: Protocol>(
    binding: &Dp4Binding,
    config: Dp4Config,
    pcap: Option<&std::path::PathBuf>,
    wrap: impl FnOnce(Relayed<Dp4Protocol, SharedDp4Relay>) -> W,
) -> anyhow::Result<(Runtime<W>, Option<SharedDp4Relay>)> {
    Dp4Protocol::spawn_relayed(binding, config, tap(pcap)?, crate::relay::public_ip, wrap)
        .map_err(|e| spawn_error(binding, e))
}

/// The capture `--pcap` asks for.
fn tap(pcap: Option<&std::path::PathBuf>) -> anyhow::Result<Option<Box<dyn Tap>>> {
    Ok(match pcap {
        Some(path) => Some(Box::new(crate::live::pcap_tap(path)?) as Box<dyn Tap>),
        None => None,
    })
}

/// A runtime's error as a user can act on it.
fn spawn_error(binding: &Dp4Binding, e: RuntimeError) -> anyhow::Error {
    match e {
        RuntimeError::AddrInUse { addr } if Some(addr.port()) == binding.enum_port => anyhow::anyhow!(
            "UDP port {} (DirectPlay 4 enumeration) is in use: another DirectPlay 4 host or DPNSVR-like service is using it; stop it, or give another port with --enum-port",
            addr.port()
        ),
        e => e.into(),
    }
}

/// Runs `dplay host --dp4` until the duration passes or Ctrl-C.
pub(crate) fn host(args: &HostArgs) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the command's start, for event times
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let bind = args.bind.map_or(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)), |b| b.or_port(0));
    let port = (bind.port() != 0).then_some(bind.port());
    let mut binding = Dp4Binding::host(ipv4(bind.ip())?);
    binding.stream_port = port;
    binding.datagram_port = port;
    binding.enum_port = Some(args.dp4_args.enum_port);
    binding.advertised_datagram = args.dp4_args.advertise_udp;
    binding.relay_endpoints = args.relay.endpoints(args.max_players).unwrap_or(0);
    if args.relay.relay && args.dp4_args.reliable_protocol {
        // MC-DPL4R has nothing a receiver sends first, and the relay never sends first
        // (docs/decisions.md, "Relay").
        bail!(
            "--relay cannot relay --reliable-protocol sessions: their messages between members go by UDP, and a member behind NAT sends nothing to a new member that the relay could answer on (docs/relay.md); leave out one of the two"
        );
    }
    let keepalive = args.session_args.keepalive;
    let mut session =
        HostConfig::new(&args.session, args.session_args.app_guid.unwrap_or(DXDIAG_APPLICATION_GUID));
    session.max_players = args.max_players;
    session.password.clone_from(&args.session_args.password);
    if session.password.is_some() {
        session.flags |= SessionFlags::PASSWORD_REQUIRED;
    }
    for (on, flag) in [
        (keepalive.is_some(), SessionFlags::KEEP_ALIVE),
        (args.dp4_args.reliable_protocol, SessionFlags::DIRECTPLAY_PROTOCOL),
        (args.dp4_args.migrate_host, SessionFlags::MIGRATE_HOST),
        (args.dp4_args.no_preserve_order, SessionFlags::NO_PRESERVE_ORDER),
        (args.client_server, SessionFlags::CLIENT_SERVER),
    ] {
        session.flags.set(flag, on);
    }
    let mut dp4_config = config(keepalive);
    args.dp4_args.limits.apply(&mut dp4_config, &mut binding);
    args.limits.apply_dp4(&mut dp4_config);
    let bans = crate::web::bans(&args.web)?;
    let internet = crate::internet::Internet::new(&args.internet, args.net.json);
    // `--voice`: the session's voice server too (`--voice` offers only types that are served).
    let voiced = |mut p: Relayed<Dp4Protocol, SharedDp4Relay>| {
        if let Some(role) = args.voice.role() {
            p.inner_mut().set_voice(role);
        }
        p
    };
    let pcap = args.net.pcap.as_ref();
    let Some(at) = args.web.web else {
        let (runtime, relay) = spawn_host(&binding, dp4_config, pcap, voiced)?;
        let ports = crate::internet::dp4_ports(&runtime);
        return internet.around(start, ports, None, || {
            serve(args, runtime, session, bans, start, &interrupt, None, relay.as_ref())
        });
    };
    let (loop_side, server_side) = dplay_web::link();
    let (runtime, relay) =
        spawn_host(&binding, dp4_config, pcap, |p| dplay_web::Observed::new(voiced(p), loop_side, start))?;
    let ports = crate::internet::dp4_ports(&runtime);
    internet.around(start, ports, Some(server_side.clone()), || {
        serve(args, runtime, session, bans, start, &interrupt, Some((at, server_side)), relay.as_ref())
    })
}

/// Hosts on `runtime` until the duration passes or Ctrl-C, with the dashboard when asked;
/// the relay's line at the end when it relays.
#[allow(clippy::too_many_arguments)] // the host's parts, each used once
fn serve<P: Protocol<Command = Dp4Command, Event = Dp4Event>>(
    args: &HostArgs,
    runtime: Runtime<P>,
    session: HostConfig,
    bans: dplay_web::BanFile,
    start: Instant,
    interrupt: &crossbeam_channel::Receiver<()>,
    web: Option<(SocketAddr, dplay_web::ServerSide)>,
    relay: Option<&SharedDp4Relay>,
) -> anyhow::Result<bool> {
    let addr = |id| runtime.socket_addr(id).map(|a| a.to_string());
    let mut out = Dp4Output::new(Output::new(args.net.json, start));
    let (tcp, udp) = (addr(Dp4Binding::LISTENER), addr(Dp4Binding::GAME_SOCKET));
    let addrs = runtime.socket_addr(Dp4Binding::LISTENER).map(address::joinable).unwrap_or_default();
    let flags = flag_names(&session.flags);
    let text = format!(
        "hosting \"{}\" (DirectPlay 4): TCP {}, UDP {}, enumeration UDP {}, flags {}: players can join at {}",
        args.session,
        tcp.clone().unwrap_or_default(),
        udp.clone().unwrap_or_default(),
        addr(Dp4Binding::ENUM_SOCKET).unwrap_or_default(),
        flags_text(&flags),
        address::list(&addrs),
    );
    let hosting = JsonEvent::Hosting {
        protocol: Proto::Dp4,
        session: args.session.clone(),
        addrs: addrs.iter().map(ToString::to_string).collect(),
        addr: None,
        mode: args.client_server.then_some("client-server"),
        tcp,
        udp,
        enumeration: addr(Dp4Binding::ENUM_SOCKET),
        flags,
    };
    out.out.event(&hosting, text);
    crate::voice::announce(&out.out, &args.voice);
    runtime.command(Dp4Command::Host(session))?;
    runtime.command(Dp4Command::SetBans(bans.bans().clone()))?;
    runtime.command(Dp4Command::CreatePlayer(args.name.clone()))?;
    let _server = match web {
        Some((at, link)) => {
            link.set_ban_file(bans);
            Some(crate::web::start(at, &args.web, link, &out.out)?)
        }
        None => None,
    };
    let echo = args.dp4_args.echo;
    let mut failed = None;
    let end = args.net.deadline(start);
    // SIGUSR1 or --stats-every: the drops-and-refusals summary and what is held, now.
    let stats = || Ok(runtime.command(Dp4Command::Stats)?);
    let handle = |e| {
        if let Dp4Event::CommandFailed { command: "host", error } = &e {
            failed = Some(error.clone());
            return false;
        }
        if let (Some(how), Dp4Event::Session(SessionEvent::Message { from: Some(from), data, .. })) =
            (echo, &e)
        {
            let guaranteed = how == Echo::Tcp;
            let back = Dp4Command::Send { from: None, to: *from, data: data.clone(), guaranteed };
            let _ = runtime.command(back);
        }
        !out.event(&e)
    };
    let stop = live::serve(runtime.events(), interrupt, end, args.limits.stats_period(), handle, stats)?;
    if let Some(error) = failed {
        bail!("cannot host: {error}");
    }
    if stop != Stop::Closed {
        let _ = runtime.command(Dp4Command::Leave);
    }
    finish(runtime, &mut out);
    if let Some(r) = relay {
        crate::relay::report(&out.out, r);
    }
    out.out.stopped(stop);
    Ok(true)
}

/// Like [`live::finish`], printing the events of the leave (the MC-DPL4R counters among them).
fn finish<P: Protocol<Event = Dp4Event>>(runtime: Runtime<P>, out: &mut Dp4Output) {
    live::finish_with(runtime, |e| {
        out.event(&e);
    });
}

/// The request `dplay enum --dp4` and the join probe send: every session, passworded or not.
fn request(app: Option<uuid::Uuid>, password: Option<String>) -> EnumRequest {
    EnumRequest {
        application_guid: app.unwrap_or(uuid::Uuid::nil()),
        password,
        flags: EnumSessionsFlags::ALL | EnumSessionsFlags::PASSWORD_REQUIRED,
    }
}

/// Runs `dplay enum --dp4`; true when at least one session answered.
pub(crate) fn enumerate(args: &EnumArgs) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the command's start
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let target = args.target.map(|t| live::or_port(t, ENUM_PORT));
    let ip = match (args.bind, target) {
        (Some(b), _) => b.ip(),
        (None, Some(t)) => live::bind_for(t).ip(),
        (None, None) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    };
    let runtime = spawn_wrapped(&Dp4Binding::client(ipv4(ip)?), config(None), args.pcap.as_ref(), |p| p)?;
    // Without a target, each interface's broadcast address (the limited broadcast only when
    // no interface has one): a LAN without a default route is found too (issue 25 item 9).
    let targets: Vec<Option<SocketAddr>> = match target {
        Some(t) => vec![Some(t)],
        None => match address::broadcasts(ipv4(ip)?) {
            all if all.is_empty() => vec![None],
            all => all.into_iter().map(|b| Some(SocketAddr::from((b, ENUM_PORT)))).collect(),
        },
    };
    for target in targets {
        runtime.command(Dp4Command::EnumSessions { target, request: request(args.app_guid, None) })?;
    }
    let other = target.map_or(OtherProbe::None, OtherProbe::dp8_at);
    let out = Output::new(args.json, start);
    let mut seen = Vec::new();
    let deadline = start + args.timeout.max(live::MIN_TIMEOUT);
    live::wait(runtime.events(), &interrupt, Some(deadline), |e| {
        if let Dp4Event::Session(SessionEvent::SessionFound(f)) = e
            && !seen.contains(&(f.host, f.desc.instance_guid))
        {
            seen.push((f.host, f.desc.instance_guid));
            print_session(&out, &f);
        }
        true
    });
    drop(runtime);
    if seen.is_empty() {
        if let Some(hint) = other.hint(OTHER_GRACE) {
            bail!("no DirectPlay 4 session answered; {hint}");
        }
        let at = target.map_or_else(|| format!("broadcast to port {ENUM_PORT}"), |t| t.to_string());
        bail!(
            "no DirectPlay 4 session answered ({at}): check that a host runs there and that UDP {ENUM_PORT} and TCP 2300-2400 are not blocked"
        );
    }
    Ok(true)
}

fn print_session(out: &Output, f: &FoundSession) {
    let d = &f.desc;
    let name = f.name.clone().unwrap_or_default();
    let max = if d.max_players == 0 { "unlimited".to_owned() } else { d.max_players.to_string() };
    let flags = flag_names(&d.flags);
    let text = format!(
        "{}: \"{name}\"  players {}/{max}  flags {}",
        f.host,
        d.current_player_count,
        flags_text(&flags)
    );
    let guids = [format!("instance {}  application {}", d.instance_guid, d.application_guid)];
    out.event_rows(
        &JsonEvent::Session {
            host: f.host.to_string(),
            name,
            instance: d.instance_guid.to_string(),
            application: d.application_guid.to_string(),
            players: d.current_player_count,
            max_players: d.max_players,
            flags,
            application_data: None,
        },
        text,
        &guids,
    );
}

/// Runs `dplay join --dp4`; an error when the join fails.
pub(crate) fn join(args: &JoinArgs) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the command's start
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let bind = args.bind.unwrap_or_else(|| live::bind_for(args.host));
    let port = (bind.port() != 0).then_some(bind.port());
    let mut binding = Dp4Binding::client(ipv4(bind.ip())?);
    binding.stream_port = port;
    binding.datagram_port = port;
    binding.advertised_datagram = args.dp4_args.advertise_udp;
    // A joiner that becomes host by migration answers enumeration (MC-DPL4CS 3.2.3).
    binding.enum_port = Some(args.dp4_args.answer_enum_port);
    binding.enum_when_host = true;
    // With no host there, our listener must not take the port we join (issue 27 item 16).
    binding.avoid_port = (args.host.port() != 0).then_some(args.host.port());
    if port.is_some()
        && port == binding.avoid_port
        && (bind.ip().is_unspecified() || bind.ip() == args.host.ip())
    {
        bail!(
            "--bind {bind} would listen on the port of the host to join ({}): give another port",
            args.host
        );
    }
    let mut dp4_config = config(args.session_args.keepalive);
    args.dp4_args.limits.apply(&mut dp4_config, &mut binding);
    args.dp4_args.names.apply_dp4(&mut dp4_config.limits);
    args.budget.apply_dp4(&mut dp4_config.limits);
    let player_data = args.player_data.clone().map(|d| d.0).unwrap_or_default();
    check_player_data(&player_data, dp4_config.limits.max_player_data, "DPERR_INVALIDPARAMS")?;
    // Refused here, before the host adds our instance (issue 27 item 16).
    let len = args.name.encode_utf16().count();
    let max = dp4_config.limits.max_player_name;
    if len > max {
        let e = dplay_session::dp4::CommandError::TooLong { what: "the player name", len, max };
        bail!("cannot join: {e}; shorten --name (or raise --max-name if the host allows more)");
    }
    // `--voice-test`: the test client starts once our player exists (docs/decisions.md,
    // "DirectPlay Voice").
    let runtime = spawn_wrapped(&binding, dp4_config, args.net.pcap.as_ref(), |mut p| {
        if let Some(frames) = args.voice_test {
            p.set_voice(VoiceRole::Test { frames });
        }
        p
    })?;
    let mut out = Dp4Output::new(Output::new(args.net.json, start));
    let join_deadline = start + args.timeout.max(live::MIN_TIMEOUT);
    // The enumeration's flags say whether the session is client/server (MC-DPL4CS 2.2.5 CS):
    // we then join as a client; a direct TCP port learns it from the name table.
    let (host, client_server) = match args.host.port() {
        0 => probe(&runtime, args, &interrupt, join_deadline)?,
        _ => (args.host, false),
    };
    let as_client = if client_server { " (client/server: as a client)" } else { "" };
    out.out.event(
        &JsonEvent::Joining {
            protocol: Proto::Dp4,
            host: host.to_string(),
            name: args.name.clone(),
            addr: None,
            role: client_server.then_some("client"),
        },
        format!("joining {host} as {}{as_client}", args.name),
    );
    runtime.command(Dp4Command::Join { host, password: args.session_args.password.clone() })?;
    let mut failure = None;
    let mut me = None;
    let mut joined = false;
    let stop = live::wait(runtime.events(), &interrupt, Some(join_deadline), |e| {
        match &e {
            Dp4Event::Session(SessionEvent::Joined { .. }) => {
                joined = true;
                let create =
                    Dp4Command::CreatePlayerWithData { name: args.name.clone(), data: player_data.clone() };
                let _ = runtime.command(create);
            }
            Dp4Event::Session(SessionEvent::PlayerCreated { id }) => me = Some(*id),
            Dp4Event::Session(SessionEvent::JoinFailed(e) | SessionEvent::PlayerCreateFailed(e)) => {
                failure = Some(join_error(*e));
            }
            Dp4Event::CommandFailed { command, error } => failure = Some(format!("{command}: {error}")),
            _ => {}
        }
        let ended = out.event(&e);
        me.is_none() && failure.is_none() && !ended
    });
    if me.is_none() {
        // In the session without a player: leave, so the host keeps nothing of us.
        if joined {
            let _ = runtime.command(Dp4Command::Leave);
            finish(runtime, &mut out);
        } else {
            drop(runtime);
        }
        match (failure, stop) {
            (Some(why), _) => bail!("could not join {host}: {why}"),
            (None, Stop::Interrupted) => bail!("interrupted before the join completed"),
            _ => bail!(
                "no answer from {host} within {}: check that a DirectPlay 4 host runs there (dplay enum --dp4 {})",
                crate::duration::show(args.timeout),
                host.ip()
            ),
        }
    }
    send_all(&runtime, &out, args)?;
    let mut voice_result = None;
    let stop = live::wait(runtime.events(), &interrupt, args.net.deadline(start), |e| {
        match &e {
            Dp4Event::Voice(VoiceEvent::TestDone(r)) => voice_result = Some(r.received > 0),
            Dp4Event::Voice(VoiceEvent::TestFailed(_)) => voice_result = Some(false),
            _ => {}
        }
        !out.event(&e) && voice_result.is_none()
    });
    if stop != Stop::Closed && stop != Stop::Done || voice_result.is_some() {
        let _ = runtime.command(Dp4Command::Leave);
    }
    finish(runtime, &mut out);
    out.out.stopped(stop);
    if voice_result == Some(false) {
        bail!("the voice test failed: no frame came back");
    }
    Ok(true)
}

/// The messages `--send` and `--send-size` ask for, to everyone.
fn send_all(runtime: &Runtime<Dp4Protocol>, out: &Dp4Output, args: &JoinArgs) -> anyhow::Result<()> {
    let guaranteed = !args.dp4_args.non_guaranteed;
    let sized = args
        .dp4_args
        .send_size
        .map(|n| (0..n).map(|i| b'a' + u8::try_from(i % 26).unwrap_or(0)).collect::<Vec<u8>>());
    let texts = args.send.iter().map(|t| t.as_bytes().to_vec());
    for data in texts.chain(sized) {
        let text = std::str::from_utf8(&data).ok().filter(|_| data.len() <= 256).map(str::to_owned);
        out.out.event(
            &JsonEvent::Sent { text, len: data.len(), digest: digest(&data), guaranteed },
            format!(
                "sent {}{}",
                crate::events::bytes(data.len()),
                if guaranteed { "" } else { " (not guaranteed)" }
            ),
        );
        runtime.command(Dp4Command::Send { from: None, to: DPID_ALLPLAYERS, data, guaranteed })?;
    }
    Ok(())
}

/// Asks the enumeration port of `args.host` where its session's TCP listener is, and whether
/// the session is client/server, again every [`PROBE_RETRY`] until it answers: a host answers
/// one address a few times a second at most (docs/limits.md), so a quick retry of a join gets in
/// on a later ask (issue 25 item 19). Stops at once at a kind of session we do not join.
fn probe(
    runtime: &Runtime<Dp4Protocol>,
    args: &JoinArgs,
    interrupt: &crossbeam_channel::Receiver<()>,
    deadline: Instant,
) -> anyhow::Result<(SocketAddr, bool)> {
    let target = SocketAddr::new(args.host.ip(), args.dp4_args.enum_port);
    let request = request(args.session_args.app_guid, args.session_args.password.clone());
    let other = OtherProbe::dp8_at(target);
    let mut found = None;
    loop {
        let ask = Dp4Command::EnumSessions { target: Some(target), request: request.clone() };
        runtime.command(ask)?;
        #[allow(clippy::disallowed_methods)] // the command's own clock
        let until = (Instant::now() + PROBE_RETRY).min(deadline);
        let stop = live::wait(runtime.events(), interrupt, Some(until), |e| match e {
            Dp4Event::Session(SessionEvent::SessionFound(f)) => {
                found = Some(f);
                false
            }
            _ => true,
        });
        if found.is_some() || stop != Stop::Deadline || until >= deadline {
            break;
        }
    }
    if found.is_none()
        && let Some(hint) = other.hint(OTHER_GRACE)
    {
        bail!("no DirectPlay 4 session answered at {target}; {hint}");
    }
    let f = found.with_context(|| {
        format!("no DirectPlay 4 session answered at {target}: check that a host runs there, or give its TCP port (such as {}:2300)", args.host.ip())
    })?;
    let refused = f.desc.flags & dplay_session::dp4::UNSUPPORTED_SESSION_FLAGS;
    if !refused.is_empty() {
        bail!(
            "the session at {} is a {} session, which dplay does not join yet (only peer-to-peer and client/server DirectPlay 4 sessions)",
            f.host,
            unsupported_kind(refused)
        );
    }
    if f.desc.flags.contains(SessionFlags::PASSWORD_REQUIRED) && args.session_args.password.is_none() {
        bail!("the session at {} needs a password: give it with --password", f.host);
    }
    Ok((f.host, f.desc.flags.contains(SessionFlags::CLIENT_SERVER)))
}

/// How long the join's probe waits for an ENUMSESSIONSREPLY before asking again: the window
/// of a host's per-address reply limit (`Dp4Limits::reply_interval`).
const PROBE_RETRY: Duration = Duration::from_secs(1);
