//! `dplay fs host` and `dplay fs join`: the Flight Simulator add-on protocol (seed 004) in
//! sessions each simulator finds (`--sim`, FS-MULTIPLAYER.md 2): FS2004's packets over
//! DirectPlay 8 under FS2004's GUID and port, or FS98's over DirectPlay 4 ([`dp4`]). A player
//! flies a scripted circuit, its position sent four times a second; an observer (and the host)
//! show every aircraft, as a live table on a terminal ([`traffic`]) or one line per event.

mod dp4;
mod traffic;

use std::f64::consts::TAU;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use crossbeam_channel::select;
use dplay_addon::over_dp4::GUID_FS6;
use dplay_addon::packet::{ChangePlayerPlane, EngineType, PlayerInfo, PlayerInfoFlags, ZString};
use dplay_addon::units::Attitude;
use dplay_addon::{
    ClientConfig, Dialect, DisconnectReason, Event, FS2004_PORT, GUID_FS2004, HostConfig, HostPolicy,
    PlayerId, Position, Role, Velocity,
};
use dplay_runtime::{
    AddonCommand, AddonEvent, AddonProtocol, AddonRole, Dp8Command, Dp8Event, Protocol, Relayed, Runtime,
    SharedRelay,
};
use dplay_session::dp4::config::ENUM_PORT;
use dplay_session::{EndReason, Event as SessionEvent};
use dplay_web::{Observed, ServerSide};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::ResultCode;

use crate::address;
use crate::events::{AddonJsonEvent, JsonEvent, Proto};
use crate::live::{self, DPLAY8_PORT, NetArgs, Output, SessionArgs, Stop};
use traffic::LiveTable;

/// `dplay fs` subcommands.
#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per run: boxing buys nothing
pub(crate) enum FsCommand {
    /// Host an add-on session (as an observer that accepts every player and observer), one that
    /// the chosen simulator finds.
    Host(FsHostArgs),
    /// Join an add-on session as a player or an observer.
    Join(FsJoinArgs),
}

/// Which simulator's sessions to host or join (FS-MULTIPLAYER.md 2).
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Sim {
    /// FS2004: DirectPlay 8 peer-to-peer, application {0808CAA5-E62C-4691-8957-5D4524B922DA},
    /// UDP 23456.
    Fs2004,
    /// FS98: DirectPlay 4, application GUID_FS6, UDP 47624 and TCP/UDP 2300-2400.
    Fs98,
    /// Another simulator (FS2002 ...): DirectPlay 8 with the FS2004 packets under --app-guid
    /// (`dplay enum --any-app` shows a host's), or DirectPlay 4 with the FS98 packets with --dp4.
    Other,
}

/// The simulator chosen by `--sim` and `--dp4`: FS2004 unless either says otherwise.
fn sim(sim: Option<Sim>, dp4: bool) -> anyhow::Result<Sim> {
    Ok(match (sim, dp4) {
        (None, false) => Sim::Fs2004,
        (None, true) | (Some(Sim::Fs98), _) => Sim::Fs98,
        (Some(Sim::Fs2004), true) => {
            anyhow::bail!("FS2004 speaks DirectPlay 8: drop --dp4, or give --sim fs98")
        }
        (Some(s), _) => s,
    })
}

/// The application GUID for `sim`: FS2004's unless --app-guid says otherwise; another
/// simulator's must be given.
fn dp8_guid(sim: Sim, args: &SessionArgs) -> anyhow::Result<uuid::Uuid> {
    match (sim, args.app_guid) {
        (_, Some(guid)) => Ok(guid),
        (Sim::Other, None) => anyhow::bail!(
            "--sim other needs --app-guid: `dplay enum --any-app ADDR` shows the GUID of the host at ADDR"
        ),
        _ => Ok(GUID_FS2004),
    }
}

/// The DirectPlay 8 port of `sim`'s hosts: FS2004's 23456 (MS KB 823630), else 6073.
fn dp8_port(sim: Sim) -> u16 {
    if sim == Sim::Fs2004 { FS2004_PORT } else { DPLAY8_PORT }
}

/// `dplay fs host` options.
#[derive(Args)]
pub(crate) struct FsHostArgs {
    /// Read options from this TOML file (keys are the long options, such as `session` or
    /// `max_players`); the command line wins over it (docs/host-config.md).
    #[arg(long, value_name = "FILE")]
    #[allow(dead_code)] // read through the ArgMatches, before the parse (config::expand)
    config: Option<std::path::PathBuf>,
    /// The simulator that is to find the session [default: fs2004].
    #[arg(long, value_enum)]
    sim: Option<Sim>,
    /// DirectPlay 4: FS98 (as --sim fs98), or with --sim other another DirectPlay 4 simulator.
    /// TCP and UDP game ports are the first free ones of 2300-2400 on the --bind address (its
    /// port is not used), enumeration on UDP --enum-port.
    #[arg(long)]
    dp4: bool,
    /// DirectPlay 4: the UDP enumeration port (47624 in the spec; another lets several hosts
    /// share a machine).
    #[arg(long, value_name = "PORT", default_value_t = ENUM_PORT)]
    enum_port: u16,
    /// The address to listen on [default: 0.0.0.0, port 23456 for FS2004, 6073 for another
    /// DirectPlay 8 simulator; `:0` any free port; DirectPlay 4: the port is not used].
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = crate::address::parse_bind)]
    bind: Option<crate::address::Bind>,
    /// The session name.
    #[arg(long, default_value = "dplay fs")]
    session: String,
    /// The host's player name.
    #[arg(long, default_value = "fs-host")]
    name: String,
    /// At most this many players in the session, counted as DirectPlay counts them and
    /// enumeration shows them: the host's own player and observers included (0: no limit).
    /// A join beyond it is refused by DirectPlay (DPNERR_SESSIONFULL, DPERR_NONEWPLAYERS).
    #[arg(long, default_value_t = 0)]
    max_players: u32,
    #[command(flatten)]
    relay: crate::relay::RelayArgs,
    #[command(flatten)]
    voice: crate::voice::VoiceArgs,
    #[command(flatten)]
    limits: crate::limits::LimitArgs,
    #[command(flatten)]
    dp4_limits: crate::dp4::Dp4LimitArgs,
    #[command(flatten)]
    session_args: SessionArgs,
    #[command(flatten)]
    net: NetArgs,
    #[command(flatten)]
    web: crate::web::WebArgs,
    #[command(flatten)]
    internet: crate::internet::InternetArgs,
}

impl FsHostArgs {
    /// The IP address to listen on.
    fn bind_ip(&self) -> std::net::IpAddr {
        self.bind.map_or(Ipv4Addr::UNSPECIFIED.into(), |b| b.ip)
    }

    /// The relay endpoints `--relay` asks for (`None`: no relay).
    fn relay_endpoints(&self) -> Option<usize> {
        self.relay.endpoints(self.max_players)
    }
}

/// `dplay fs join` options.
#[derive(Args)]
#[command(group = clap::ArgGroup::new("role").required(true).args(["player", "observer"]))]
pub(crate) struct FsJoinArgs {
    /// The simulator whose session it is [default: fs2004].
    #[arg(long, value_enum)]
    sim: Option<Sim>,
    /// DirectPlay 4 (as --sim fs98, or with --sim other): ADDR:PORT is the host's TCP listener;
    /// a bare ADDR asks its enumeration port (--host-enum-port) for sessions and joins the first.
    #[arg(long)]
    dp4: bool,
    /// DirectPlay 4: the host's enumeration port, asked when ADDR has no port.
    #[arg(long, value_name = "PORT", default_value_t = ENUM_PORT)]
    host_enum_port: u16,
    /// The host's address (DirectPlay 8: port 23456 for FS2004, else 6073, when none is given).
    #[arg(value_name = "ADDR[:PORT]", value_parser = crate::address::parse_target)]
    host: SocketAddr,
    /// Join as a player flying a scripted circuit.
    #[arg(long)]
    player: bool,
    /// Join as an observer showing every aircraft.
    #[arg(long)]
    observer: bool,
    /// Our player name.
    #[arg(long, default_value = "pilot")]
    name: String,
    /// A player's aircraft title, announced with CHANGE_PLAYER_PLANE (and, in FS2004, in the
    /// player data).
    #[arg(long, default_value = "Cessna Skyhawk 172SP")]
    aircraft: String,
    /// The local address (default: loopback for a loopback host, else any, port 0).
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = live::parse_host)]
    bind: Option<SocketAddr>,
    /// Give up (exit 1) when the add-on has not taken us in within this long (seconds, or a
    /// unit such as 30s). The default outlasts a host's removal of a crashed player.
    #[arg(long, value_name = "TIME", default_value = crate::live::JOIN_TIMEOUT, value_parser = crate::duration::parse)]
    timeout: Duration,
    #[command(flatten)]
    budget: crate::join_opts::JoinBudgetArgs,
    #[command(flatten)]
    session_args: SessionArgs,
    #[command(flatten)]
    net: NetArgs,
}

impl FsJoinArgs {
    /// How long the join was given: `--timeout`, or a shorter `--duration` (issue 25 item 16:
    /// a failure says the time it waited).
    fn join_wait(&self) -> Duration {
        self.net.duration.map_or(self.timeout, |d| d.min(self.timeout))
    }

    /// The add-on client for `dialect`: a player flies `--aircraft` (a piston, as the default
    /// Cessna), sending POSITION_VELOCITY; FS2004 positions go guaranteed, as swift sends them
    /// (FS-MULTIPLAYER.md 3.1; docs/decisions.md issue 16).
    fn client(&self, dialect: Dialect) -> ClientConfig {
        let role = if self.player { Role::Player } else { Role::Observer };
        let plane = ChangePlayerPlane {
            engine_type: EngineType::ENGINE_TYPE_PISTON,
            aircraft_name: ZString::from_text(&self.aircraft),
        };
        let mut config = ClientConfig::new(role);
        config.dialect = dialect;
        config.plane = (role == Role::Player).then_some(plane);
        config.positions_guaranteed = dialect == Dialect::Fs2004;
        config
    }
}

/// Runs `dplay fs ...`.
pub(crate) fn run(command: FsCommand) -> anyhow::Result<bool> {
    match command {
        FsCommand::Host(a) => match sim(a.sim, a.dp4)? {
            Sim::Fs98 => dp4::host(&a, GUID_FS6),
            Sim::Other if a.dp4 => dp4::host(&a, dp8_guid(Sim::Other, &a.session_args)?),
            s => host(&a, s),
        },
        // A DirectPlay 4 join finds sessions under GUID_FS6; with another simulator give the
        // host's listener (ADDR:PORT).
        FsCommand::Join(a) => match sim(a.sim, a.dp4)? {
            Sim::Fs98 => dp4::join(&a, a.client(Dialect::Fs98)),
            Sim::Other if a.dp4 => dp4::join(&a, a.client(Dialect::Fs98)),
            s => join(a, s),
        },
    }
}

/// `dplay fs host` over DirectPlay 8: FS2004's packets, our player an observer whose player
/// data says so (FS-MULTIPLAYER.md 3.6). With `--web`, the dashboard shows the session and its
/// aircraft.
fn host(a: &FsHostArgs, sim: Sim) -> anyhow::Result<bool> {
    let guid = dp8_guid(sim, &a.session_args)?;
    let bind = SocketAddr::new(a.bind_ip(), a.bind.and_then(|b| b.port).unwrap_or(dp8_port(sim)));
    // `--max-players` is the DP8 session's limit (issue 25 item 15): FS2004 has no add-on
    // refusal.
    let role = AddonRole::Host(HostConfig::new(Dialect::Fs2004, Role::Observer, HostPolicy::default()));
    let info = PlayerInfo { flags: PlayerInfoFlags::OBSERVER, aircraft: ZString::default() };
    let setup = Setup { bind, name: &a.name, session_args: &a.session_args, net: &a.net };
    let tune = |c: &mut dplay_session::SessionConfig| {
        c.session_name = a.session.clone();
        c.application_guid = guid;
        c.player_data = info.to_bytes().to_vec();
        c.max_players = a.max_players;
        a.limits.apply(c);
    };
    // `--voice`: the session's voice server too (`--voice` offers only types that are served).
    let voiced = |mut p: Relayed<AddonProtocol>| {
        if let Some(role) = a.voice.role() {
            p.inner_mut().set_voice(role);
        }
        p
    };
    let endpoints = a.relay_endpoints();
    let mut internet = crate::internet::Internet::new(&a.internet, a.net.json);
    let Some(web) = a.web.web else {
        let (runtime, relay, out, start) =
            setup.spawn_host(role, tune, endpoints, |p, start| internet.wrap(voiced(p), start))?;
        let ports = crate::internet::dp8_ports(runtime.local_addrs());
        return internet
            .relaying(relay.as_ref())
            .around(start, ports, None, || serve(a, guid, runtime, out, start, None, relay));
    };
    let (loop_side, server_side) = dplay_web::link();
    let (runtime, relay, out, start) = setup.spawn_host(role, tune, endpoints, |p, start| {
        internet.wrap(Observed::new(voiced(p), loop_side, start), start)
    })?;
    let ports = crate::internet::dp8_ports(runtime.local_addrs());
    internet.relaying(relay.as_ref()).around(start, ports, Some(server_side.clone()), || {
        serve(a, guid, runtime, out, start, Some((web, server_side)), relay)
    })
}

/// Hosts the add-on session on `runtime` until the duration passes or Ctrl-C, with the
/// dashboard when asked.
fn serve<P: Protocol<Command = AddonCommand, Event = AddonEvent>>(
    a: &FsHostArgs,
    guid: uuid::Uuid,
    runtime: Runtime<P>,
    mut out: Output,
    start: Instant,
    web: Option<(SocketAddr, ServerSide)>,
    relay: Option<SharedRelay>,
) -> anyhow::Result<bool> {
    let addr = runtime.local_addr();
    let addrs = address::joinable(addr);
    let hosting = JsonEvent::Hosting {
        protocol: Proto::Dp8,
        session: a.session.clone(),
        addrs: addrs.iter().map(ToString::to_string).collect(),
        addr: Some(addr.to_string()),
        mode: Some("peer-to-peer"),
        tcp: None,
        udp: None,
        enumeration: None,
        flags: Vec::new(),
    };
    let text = format!(
        "hosting add-on session \"{}\" on {addr} (application {guid}): players can join at {}",
        a.session,
        address::list(&addrs)
    );
    out.event(&hosting, text);
    crate::voice::announce(&out, &a.voice);
    runtime.command(AddonCommand::Session(Dp8Command::Host))?;
    let bans = crate::web::bans(&a.web)?;
    runtime.command(AddonCommand::Session(Dp8Command::SetBans(bans.bans().clone())))?;
    let _server = match web {
        Some((at, link)) => {
            link.set_ban_file(bans);
            Some(crate::web::start(at, &a.web, link, &out)?)
        }
        None => None,
    };
    let joinable = format!("players can join at {}", address::list(&addrs));
    let mut view = traffic::wanted(a.net.json).then(|| LiveTable::with_header(joinable));
    let mut commands = Commands { stats_every: a.limits.stats_period(), ..dp8_commands() };
    if relay.is_some() {
        // A relayed session ends with its host (docs/decisions.md, "Relay").
        commands.leave = || AddonCommand::Session(Dp8Command::Terminate);
    }
    let (stop, _) = drive(runtime, start, &a.net, None, None, commands, |e| {
        let done = print(&mut out, view.as_mut(), e);
        let refusals = matches!(e, AddonEvent::Session(Dp8Event::Refusals(_)));
        crate::relay::after_refusals(&out, relay.as_ref(), refusals);
        done
    })?;
    drop(view);
    if let Some(r) = &relay {
        crate::relay::report(&out, r);
    }
    stopped(&out, stop)
}

/// `dplay fs join` over DirectPlay 8.
fn join(mut a: FsJoinArgs, sim: Sim) -> anyhow::Result<bool> {
    let guid = dp8_guid(sim, &a.session_args)?;
    a.host = live::or_port(a.host, dp8_port(sim));
    let config = a.client(Dialect::Fs2004);
    let role = config.role;
    let info = config.player_info();
    let bind = live::bind_towards(a.bind, a.host)?;
    let setup = Setup { bind, name: &a.name, session_args: &a.session_args, net: &a.net };
    let tune = |c: &mut dplay_session::SessionConfig| {
        c.application_guid = guid;
        c.player_data = info.to_bytes().to_vec();
        a.budget.apply_dp8(&mut c.limits);
    };
    let (runtime, mut out, start) = setup.spawn(AddonRole::Client(config), tune, |p, _| p)?;
    out.event(
        &JsonEvent::Joining {
            protocol: Proto::Dp8,
            host: a.host.to_string(),
            name: a.name.clone(),
            addr: None,
            role: Some(role_name(role)),
        },
        format!("joining {} as {} ({})", a.host, a.name, role_name(role)),
    );
    runtime.command(AddonCommand::Session(Dp8Command::Join { host: a.host, instance: None }))?;
    let flying = (role == Role::Player).then_some(start);
    let join = Join { by: start + a.timeout.max(live::MIN_TIMEOUT), done: dp8_joined };
    let mut watch = JoinWatch::default();
    let mut view = traffic::wanted(a.net.json).then(LiveTable::default);
    let (stop, joined) = drive(runtime, start, &a.net, flying, Some(join), dp8_commands(), |e| {
        watch.see(e, &out);
        print(&mut out, view.as_mut(), e) || watch.refused.is_some()
    })?;
    drop(view);
    if !joined {
        return Err(out.join_failed(watch.error(a.host, stop, a.join_wait())));
    }
    stopped(&out, stop)
}

struct Setup<'a> {
    bind: SocketAddr,
    name: &'a str,
    session_args: &'a SessionArgs,
    net: &'a NetArgs,
}

impl Setup<'_> {
    /// The add-on in a runtime: its session configured by `tune`, the protocol the runtime
    /// drives made by `wrap` (given the command's start).
    fn spawn<P: Protocol>(
        self,
        role: AddonRole,
        tune: impl FnOnce(&mut dplay_session::SessionConfig),
        wrap: impl FnOnce(AddonProtocol, Instant) -> P,
    ) -> anyhow::Result<(Runtime<P>, Output, Instant)> {
        #[allow(clippy::disallowed_methods)] // the command's start
        let start = Instant::now();
        let runtime = live::spawn(self.bind, self.net.pcap.as_ref(), |local| {
            let mut c = live::session_config(local, self.name, self.session_args);
            tune(&mut c);
            wrap(AddonProtocol::new(c, role, start), start)
        })?;
        Ok((runtime, Output::new(self.net.json, start).joining(), start))
    }
}

impl Setup<'_> {
    /// The add-on host in a runtime, relaying when `endpoints` says how many relay endpoints
    /// to open (docs/relay.md): its session configured by `tune`, the protocol the runtime
    /// drives made by `wrap` (given the command's start).
    fn spawn_host<P: Protocol>(
        self,
        role: AddonRole,
        tune: impl FnOnce(&mut dplay_session::SessionConfig),
        endpoints: Option<usize>,
        wrap: impl FnOnce(Relayed<AddonProtocol>, Instant) -> P,
    ) -> anyhow::Result<(Runtime<P>, Option<SharedRelay>, Output, Instant)> {
        #[allow(clippy::disallowed_methods)] // the command's start
        let start = Instant::now();
        let (runtime, relay) =
            crate::relay::spawn(self.bind, self.net.pcap.as_ref(), endpoints, |local, relay| {
                let mut c = live::session_config(local, self.name, self.session_args);
                tune(&mut c);
                c.migrate_host &= relay.is_none();
                c.address_map = relay.as_ref().map(SharedRelay::address_map);
                let p = AddonProtocol::new(c, role, start);
                if let Some(r) = &relay {
                    r.charge_to(p.bridge().session().memory_budget());
                }
                wrap(Relayed::new(p, relay), start)
            })?;
        Ok((runtime, relay, Output::new(self.net.json, start), start))
    }
}

/// How [`drive`] asks a runtime to fly, to report its traffic and to leave.
struct Commands<C> {
    /// The command setting the position (and velocities) from now on.
    fly: fn(Position, Velocity) -> C,
    /// The command asking for a traffic snapshot.
    traffic: fn() -> C,
    /// The command leaving the session.
    leave: fn() -> C,
    /// The command asking for the drops-and-refusals line (SIGUSR1, at a host).
    stats: fn() -> C,
    /// Ask for that line this often too (`--stats-every`).
    stats_every: Option<Duration>,
    /// The command asking for a host's end-of-run summary, when leaving does not give it.
    summary: Option<fn() -> C>,
}

fn dp8_commands() -> Commands<AddonCommand> {
    Commands {
        fly: |p, v| AddonCommand::SetPosition(p, Some(v)),
        traffic: || AddonCommand::Traffic,
        leave: || AddonCommand::Session(Dp8Command::Leave),
        stats: || AddonCommand::Session(Dp8Command::Refusals),
        stats_every: None,
        summary: Some(|| AddonCommand::Session(Dp8Command::Refusals)),
    }
}

/// How often the traffic table is redrawn.
const TABLE_REFRESH: Duration = Duration::from_millis(500);

/// A join [`drive`] waits for: `done` says which event completes it, `by` when to give up.
struct Join<E> {
    by: Instant,
    done: fn(&E) -> bool,
}

fn dp8_joined(e: &AddonEvent) -> bool {
    matches!(e, AddonEvent::Addon(Event::Joined { .. }))
}

/// What a DirectPlay 8 `fs join` saw before the add-on took it in, to say why it did not.
#[derive(Default)]
struct JoinWatch {
    /// In the DirectPlay 8 session (the add-on may still not answer).
    session: bool,
    refused: Option<Role>,
    ended: Option<EndReason>,
    /// The last [`SessionEvent::JoinPending`]: our DPNID, whether the host's instruction is
    /// awaited, and the peers (named by `out`) that have not connected.
    pending: Option<(Dpnid, bool, Vec<String>)>,
}

impl JoinWatch {
    fn see(&mut self, e: &AddonEvent, out: &Output) {
        match e {
            AddonEvent::Session(Dp8Event::Session(SessionEvent::Joined { .. })) => self.session = true,
            AddonEvent::Session(Dp8Event::Session(SessionEvent::JoinPending {
                local,
                awaiting_instruction,
                awaiting_peers,
                ..
            })) => {
                let peers = awaiting_peers.iter().map(|d| format!("{} ({d})", out.name(*d))).collect();
                self.pending = Some((*local, *awaiting_instruction, peers));
            }
            AddonEvent::Session(Dp8Event::Session(SessionEvent::SessionEnded { reason })) => {
                self.ended = Some(*reason);
            }
            AddonEvent::Addon(Event::Refused { role }) => self.refused = Some(*role),
            _ => {}
        }
    }

    /// One line saying why the add-on join failed and what to do.
    fn error(&self, host: SocketAddr, stop: Stop, timeout: Duration) -> anyhow::Error {
        let within = crate::duration::show(timeout);
        match (self.refused, &self.ended, self.session, stop) {
            (Some(role), ..) => anyhow::anyhow!(
                "the add-on host at {host} refused us as {}: it may be full or take no {}s",
                role_name(role),
                role_name(role)
            ),
            // The host runs another application than the simulator asked for (--sim).
            (None, Some(EndReason::Refused(ResultCode::DPNERR_INVALIDAPPLICATION)), ..) => anyhow::anyhow!(
                "could not join {host}: join refused: DPNERR_INVALIDAPPLICATION: it hosts another application; `dplay enum --any-app {host}` shows its GUID, then join with --sim other --app-guid GUID"
            ),
            // A refusal by a host that answered: its code says why, not "is a host there?".
            (None, Some(EndReason::Refused(code)), ..) => anyhow::anyhow!(
                "could not join {host}: it refused the join with {code}: {}",
                crate::join::refusal_hint(*code)
            ),
            (None, Some(why), false, _) => {
                anyhow::anyhow!(
                    "could not join {host}: {why}; check that a host runs there (dplay enum {host})"
                )
            }
            (None, Some(why), true, _) => {
                anyhow::anyhow!("the session at {host} ended before the add-on took us in: {why}")
            }
            (None, None, _, Stop::Interrupted) => anyhow::anyhow!("interrupted before the join completed"),
            (None, None, true, _) => anyhow::anyhow!(
                "joined the DirectPlay 8 session at {host}, but no Flight Simulator add-on answered within {within}: is it an add-on host (dplay fs host)?"
            ),
            // The host answered but the DirectPlay 8 join waits (issue 25 item 4).
            (None, None, false, _) if let Some((local, instruction, peers)) = &self.pending => {
                crate::join::pending_error(host, *local, *instruction, peers, within)
            }
            (None, None, false, _) => anyhow::anyhow!(
                "no answer from {host} within {within}: check that an add-on host runs there (dplay fs host) and the address and port are right"
            ),
        }
    }
}

/// A role as the output spells it.
pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Player => "player",
        Role::Observer => "observer",
    }
}

/// Prints events (with `print`, which says when to stop) until the duration passes, Ctrl-C or
/// the session ends; a player's position is updated four times a second from `flying` (the
/// circuit's start), and a traffic snapshot is asked for every [`TABLE_REFRESH`] (`print` draws
/// it when the table is shown, and ignores it otherwise). With `join`, also stops when it is not
/// done by its deadline. Returns why it stopped and whether the join (if any) was done.
fn drive<P: Protocol>(
    runtime: Runtime<P>,
    start: Instant,
    net: &NetArgs,
    flying: Option<Instant>,
    join: Option<Join<P::Event>>,
    commands: Commands<P::Command>,
    mut print: impl FnMut(&P::Event) -> bool,
) -> anyhow::Result<(Stop, bool)> {
    let interrupt = live::ctrl_c()?;
    let tick = crossbeam_channel::tick(Duration::from_millis(250));
    let refresh = crossbeam_channel::tick(TABLE_REFRESH);
    let mut joined = join.is_none();
    let never = crossbeam_channel::never();
    let stats = crate::stats_signal::requests();
    let stats_tick = commands.stats_every.map_or_else(crossbeam_channel::never, crossbeam_channel::tick);
    if let Some(t0) = flying {
        let (p, v) = circuit(Duration::ZERO);
        // A runtime already stopped (a join removed at once) still has its events to read: the
        // loop reads them and ends.
        stopped_runtime(runtime.command((commands.fly)(p, v)))?;
        tracing::debug!("circuit starts at {t0:?}");
    }
    let stop = loop {
        let join_by = join.as_ref().filter(|_| !joined).map(|j| j.by);
        let deadline = match (net.deadline(start), join_by) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        #[allow(clippy::disallowed_methods)] // the command's run time
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            break Stop::Deadline;
        }
        let timeout = crossbeam_channel::after(left.unwrap_or(Duration::from_secs(3600)));
        let ticks = if flying.is_some() { &tick } else { &never };
        select! {
            recv(runtime.events()) -> e => match e {
                Ok(e) => {
                    joined |= join.as_ref().is_some_and(|j| (j.done)(&e));
                    if print(&e) { break Stop::Done }
                }
                Err(_) => break Stop::Closed,
            },
            recv(ticks) -> now => if let (Ok(now), Some(t0)) = (now, flying) {
                let (p, v) = circuit(now.saturating_duration_since(t0));
                if stopped_runtime(runtime.command((commands.fly)(p, v)))? { break Stop::Closed }
            },
            recv(refresh) -> _ => {
                if stopped_runtime(runtime.command((commands.traffic)()))? { break Stop::Closed }
            }
            recv(interrupt) -> _ => break Stop::Interrupted,
            recv(stats) -> _ => {
                if stopped_runtime(runtime.command((commands.stats)()))? { break Stop::Closed }
            }
            recv(stats_tick) -> _ => {
                if stopped_runtime(runtime.command((commands.stats)()))? { break Stop::Closed }
            }
            recv(timeout) -> _ => {}
        }
    };
    // The runtime stopped before its last events were read (a refused join, say): they say why.
    if stop == Stop::Closed {
        for e in runtime.events().try_iter() {
            joined |= join.as_ref().is_some_and(|j| (j.done)(&e));
            if print(&e) {
                break;
            }
        }
    }
    // A host's end-of-run summary, where leaving does not give it (issue 25 item 14).
    if let (None, Some(summary), false) = (&join, commands.summary, stop == Stop::Closed) {
        let _ = runtime.command(summary());
    }
    if stop != Stop::Closed && (stop != Stop::Done || !joined) {
        let _ = runtime.command((commands.leave)());
    }
    // A host prints the leave's events (its summary); a joiner's failure is told already.
    let host = join.is_none();
    live::finish_with(runtime, |e| {
        if host {
            print(&e);
        }
    });
    Ok((stop, joined))
}

/// True when a command found the runtime stopped (its session ended between two events); any
/// other failure is an error.
fn stopped_runtime(sent: Result<(), dplay_runtime::RuntimeError>) -> anyhow::Result<bool> {
    match sent {
        Ok(()) => Ok(false),
        Err(dplay_runtime::RuntimeError::Stopped) => Ok(true),
        Err(e) => Err(e.into()),
    }
}

/// The last line of every `dplay fs` run: why it stopped.
fn stopped(out: &Output, stop: Stop) -> anyhow::Result<bool> {
    out.stopped(stop);
    Ok(true)
}

/// The scripted circuit: a 2 km circle north of Seattle–Tacoma at 1000 m, one lap in two
/// minutes, flown clockwise.
pub(crate) fn circuit(t: Duration) -> (Position, Velocity) {
    const CENTRE: (f64, f64) = (47.449, -122.309);
    const RADIUS_M: f64 = 2000.0;
    const LAP_S: f64 = 120.0;
    const M_PER_DEG: f64 = 111_120.0;
    const FT_PER_M: f64 = 3.280_84;
    let angle = TAU * t.as_secs_f64() / LAP_S;
    let (sin, cos) = angle.sin_cos();
    let lat_scale = CENTRE.0.to_radians().cos();
    let position = Position {
        latitude_deg: CENTRE.0 + RADIUS_M * cos / M_PER_DEG,
        longitude_deg: CENTRE.1 + RADIUS_M * sin / (M_PER_DEG * lat_scale),
        altitude_m: 1000.0,
        attitude: Attitude {
            pitch_deg: 0.0,
            bank_deg: 15.0,
            heading_deg: (angle.to_degrees() + 90.0) % 360.0,
        },
        on_ground: false,
    };
    let speed = TAU * RADIUS_M / LAP_S;
    let velocity = Velocity {
        north_ft_s: -speed * sin * FT_PER_M,
        east_ft_s: speed * cos * FT_PER_M,
        up_ft_s: 0.0,
        ground_ft_s: speed * FT_PER_M,
    };
    (position, velocity)
}

/// Prints one event, or with `view` draws the traffic table (positions are then in the table,
/// not printed); true when the session ended.
fn print(out: &mut Output, view: Option<&mut LiveTable>, event: &AddonEvent) -> bool {
    match (event, view) {
        (AddonEvent::Session(e), _) => return out.dp8(e),
        (AddonEvent::Traffic(snapshot), Some(view)) => view.draw(snapshot),
        (AddonEvent::Position { .. }, Some(_)) | (AddonEvent::Traffic(_), None) => {}
        (AddonEvent::Position { id, position, .. }, None) => {
            emit_position(out, &Dpnid(id.0).to_string(), &out.name(Dpnid(id.0)), position);
        }
        (AddonEvent::Addon(e), _) => emit_addon(out, e, |id| out.name(Dpnid(id.0))),
        // An event a later runtime adds: not printed until this printer knows it.
        _ => {}
    }
    false
}

/// Prints a position of the player `id` called `who`.
fn emit_position(out: &Output, id: &str, who: &str, p: &Position) {
    out.event(
        &JsonEvent::Position {
            id: id.to_owned(),
            name: who.to_owned(),
            lat: p.latitude_deg,
            lon: p.longitude_deg,
            alt_m: p.altitude_m,
            heading: p.attitude.heading_deg,
            pitch: p.attitude.pitch_deg,
            bank: p.attitude.bank_deg,
        },
        position_line(who, p),
    );
}

/// A position's text line: altitude in feet, as the simulators and their pilots give it (and
/// as the traffic table and `decode` do; `--json` keeps `alt_m`). Issue 25 item 18.
fn position_line(who: &str, p: &Position) -> String {
    let alt_ft = p.altitude_m / dplay_addon::units::METRES_PER_FOOT;
    format!(
        "position {who}: {:.5} {:.5} {alt_ft:.0} ft heading {:.0}",
        p.latitude_deg, p.longitude_deg, p.attitude.heading_deg
    )
}

/// Prints an add-on event, naming players with `name`.
fn emit_addon(out: &Output, e: &Event, name: impl Fn(PlayerId) -> String) {
    use AddonJsonEvent as J;
    let (event, text) = match e {
        Event::Joined { role } => {
            let role = role_name(*role);
            (J::AddonJoined { role }, format!("the add-on took us in as {role}"))
        }
        Event::Refused { role } => {
            let role = role_name(*role);
            (J::AddonRefused { role }, format!("the add-on host refused us as {role}"))
        }
        Event::PlayerType { id, role } => {
            let (who, role) = (name(*id), role_name(*role));
            let article = if role.starts_with('o') { "an" } else { "a" };
            (J::PlayerType { name: who.clone(), role }, format!("{who} is {article} {role}"))
        }
        Event::Accepted { id, role } => {
            let (who, role) = (name(*id), role_name(*role));
            (J::Accepted { name: who.clone(), role }, format!("accepted {who} as {role}"))
        }
        Event::Denied { id, role } => {
            let (who, role) = (name(*id), role_name(*role));
            (J::Denied { name: who.clone(), role }, format!("denied {who} as {role}"))
        }
        Event::Chat { from, text } => {
            let (who, text) = (name(*from), text.to_text());
            let line = format!("chat from {who}: {text}");
            (J::Chat { name: who, text, chat: true }, line)
        }
        Event::PlaneChanged { id, engine_type, aircraft_name } => {
            let (who, plane) = (name(*id), aircraft_name.to_text());
            let line = format!("{who} now flies {plane} ({engine_type})");
            (J::PlaneChanged { name: who, aircraft: plane, engine: engine_type.to_string() }, line)
        }
        Event::Crash { from } => {
            let who = name(*from);
            let line = format!("{who} collided with us");
            (J::Crash { name: who }, line)
        }
        Event::BecameObserver => (J::BecameObserver, "we are an observer now".to_owned()),
        Event::BecameHost => (J::AddonHost, "the add-on host's duties are ours now".to_owned()),
        Event::Remove { id } => {
            let who = name(*id);
            let line = format!("removing {who}");
            (J::Removing { name: who }, line)
        }
        Event::ObserverChangeRefused => (J::ObserverChangeRefused, "the host keeps us a player".to_owned()),
        Event::Disconnect(why) => {
            let reason = match why {
                DisconnectReason::Refused => "refused",
                DisconnectReason::RemovedByHost => "removed by the host",
                DisconnectReason::Left => "left",
                DisconnectReason::SessionEnded => "the host ended the session",
                _ => "disconnected",
            };
            (J::AddonDisconnect { reason }, format!("leaving the add-on session: {reason}"))
        }
        // The session layer already reported these.
        Event::PlayerLeft { .. } | Event::PositionUpdated { .. } => return,
        // An event a later add-on adds: not printed until this printer knows it.
        _ => return,
    };
    out.event(&event, text);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25 item 18: the text line gives feet, as the traffic table does.
    #[test]
    fn position_line_gives_feet() {
        let (p, _) = circuit(Duration::ZERO);
        assert_eq!(position_line("pilot", &p), "position pilot: 47.46700 -122.30900 3281 ft heading 90");
    }
}
