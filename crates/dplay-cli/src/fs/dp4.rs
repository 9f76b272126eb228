//! `dplay fs host --dp4` and `dplay fs join --dp4`: the FS98 dialect of the add-on over
//! DirectPlay 4 ([`AddonDp4Protocol`] on the sockets of a [`Dp4Binding`]; FS-MULTIPLAYER.md 1.5,
//! 2; MC-DPL4CS 2.1), with the options and the printing of the DirectPlay 8 variant.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::bail;
use dplay_addon::over_dp4::fs98_host_config;
use dplay_addon::{ClientConfig, Event, HostConfig, HostPolicy, Role};
use dplay_runtime::{
    AddonDp4Command, AddonDp4Event, AddonDp4Protocol, AddonDp4Role, Dp4Binding, Dp4Event, Protocol, Relayed,
    Runtime, RuntimeError, SharedDp4Relay, Tap,
};
use dplay_session::dp4::{Dp4Config, Dp4Event as SessionEvent, EndReason};
use dplay_wire::dp4::session::SessionFlags;
use uuid::Uuid;

use super::traffic::{self, LiveTable};
use super::{Commands, FsHostArgs, FsJoinArgs, Join, drive, emit_addon, emit_position, role_name, stopped};
use crate::address;
use crate::dp4_print::{Dp4Output, id, join_error};
use crate::events::{JsonEvent, Proto};
use crate::live::{self, Output, Stop};

fn ipv4(addr: IpAddr) -> anyhow::Result<Ipv4Addr> {
    match addr {
        IpAddr::V4(ip) => Ok(ip),
        IpAddr::V6(ip) => {
            bail!("DirectPlay 4 runs over IPv4 only: {ip} cannot be used; give an IPv4 address")
        }
    }
}

/// Starts the add-on over DirectPlay 4 (a host relaying when `binding.relay_endpoints` asks;
/// docs/relay.md), inside the protocol `wrap` makes of it (the dashboard's), with the errors a
/// user can act on.
fn spawn<W: Protocol>(
    binding: &Dp4Binding,
    role: AddonDp4Role,
    name: &str,
    keepalive: Option<Duration>,
    pcap: Option<&PathBuf>,
    mut config: Dp4Config,
    wrap: impl FnOnce(Relayed<AddonDp4Protocol, SharedDp4Relay>) -> W,
) -> anyhow::Result<(Runtime<W>, Option<SharedDp4Relay>)> {
    let tap = match pcap {
        Some(path) => Some(Box::new(crate::live::pcap_tap(path)?) as Box<dyn Tap>),
        None => None,
    };
    // `--keepalive` sets the Ping timer period, as for `dplay host --dp4` (MC-DPL4CS 3.1.2.5).
    if let Some(period) = keepalive {
        config.set_ping_interval(period.max(live::MIN_KEEPALIVE));
    }
    AddonDp4Protocol::spawn_relayed(binding, config, role, name, tap, crate::relay::public_ip, wrap).map_err(
        |e| match e {
            RuntimeError::AddrInUse { addr } if Some(addr.port()) == binding.enum_port => anyhow::anyhow!(
                "UDP port {} (DirectPlay 4 enumeration) is in use: another DirectPlay 4 host is using it; stop it, or give another port with --enum-port",
                addr.port()
            ),
            e => e.into(),
        },
    )
}

fn joined(e: &AddonDp4Event) -> bool {
    matches!(e, AddonDp4Event::Addon(Event::Joined { .. }))
}

fn commands() -> Commands<AddonDp4Command> {
    Commands {
        fly: |p, v| AddonDp4Command::SetPosition(p, Some(v)),
        traffic: || AddonDp4Command::Traffic,
        leave: || AddonDp4Command::Leave,
        stats: || AddonDp4Command::Stats,
        stats_every: None,
        // The session's end gives it (DropSummary, MemoryHeld).
        summary: None,
    }
}

/// Prints one event (with `view`, positions go to the traffic table instead); true when the run
/// is over: the session ended, or hosting or joining failed (`failed` then says why).
fn print(
    out: &mut Dp4Output,
    view: Option<&mut LiveTable>,
    failed: &mut Option<String>,
    event: &AddonDp4Event,
) -> bool {
    match event {
        AddonDp4Event::Dp4(e) => {
            match e {
                Dp4Event::CommandFailed { command: command @ ("host" | "join"), error } => {
                    *failed = Some(format!("{command}: {error}"));
                }
                Dp4Event::Session(SessionEvent::JoinFailed(e) | SessionEvent::PlayerCreateFailed(e)) => {
                    *failed = Some(join_error(*e));
                }
                _ => {}
            }
            return out.event(e) || failed.is_some();
        }
        AddonDp4Event::Traffic(snapshot) => {
            if let Some(view) = view {
                view.draw(snapshot);
            }
        }
        AddonDp4Event::Position { .. } if view.is_some() => {}
        AddonDp4Event::Position { id: who, name, position, .. } => {
            let name = name.clone().unwrap_or_else(|| out.name(who.0));
            emit_position(&out.out, &id(who.0), &name, position);
        }
        AddonDp4Event::Addon(e) => emit_addon(&out.out, e, |p| out.name(p.0)),
        // An event a later runtime adds: not printed until this printer knows it.
        _ => {}
    }
    false
}

/// Runs `dplay fs host --sim fs98` (or `--sim other --dp4`): a DirectPlay 4 session under
/// `guid`. With `--web`, the dashboard shows the session and its aircraft.
pub(super) fn host(a: &FsHostArgs, guid: Uuid) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the command's start
    let start = Instant::now();
    let mut binding = Dp4Binding::host(ipv4(a.bind_ip())?);
    binding.enum_port = Some(a.enum_port);
    binding.relay_endpoints = a.relay_endpoints().unwrap_or(0);
    // `--max-players` is DirectPlay's MaxPlayers, advertised and enforced by the session
    // (issue 25 item 15), not an add-on limit on aircraft alone.
    let mut policy = HostPolicy::default();
    policy.allow_observers = true;
    let role = AddonDp4Role::Host(HostConfig::new(dplay_addon::Dialect::Fs98, Role::Observer, policy));
    let keepalive = a.session_args.keepalive;
    // The same limits as `dplay host --dp4` (docs/limits.md).
    let mut config = Dp4Config::default();
    a.dp4_limits.apply(&mut config, &mut binding);
    a.limits.apply_dp4(&mut config);
    let bans = crate::web::bans(&a.web)?;
    let pcap = a.net.pcap.as_ref();
    let internet = crate::internet::Internet::new(&a.internet, a.net.json);
    // `--voice`: the session's voice server too (`--voice` offers only types that are served).
    let voiced = |mut p: Relayed<AddonDp4Protocol, SharedDp4Relay>| {
        if let Some(role) = a.voice.role() {
            p.inner_mut().set_voice(role);
        }
        p
    };
    let Some(at) = a.web.web else {
        let (runtime, relay) = spawn(&binding, role, &a.name, keepalive, pcap, config, voiced)?;
        let ports = crate::internet::dp4_ports(&runtime);
        return internet.around(start, ports, None, || serve(a, guid, runtime, start, bans, None, relay));
    };
    let (loop_side, server_side) = dplay_web::link();
    let (runtime, relay) = spawn(&binding, role, &a.name, keepalive, pcap, config, |p| {
        dplay_web::Observed::new(voiced(p), loop_side, start)
    })?;
    let ports = crate::internet::dp4_ports(&runtime);
    internet.around(start, ports, Some(server_side.clone()), || {
        serve(a, guid, runtime, start, bans, Some((at, server_side)), relay)
    })
}

/// Hosts the FS98 session on `runtime` until the duration passes or Ctrl-C, with the
/// dashboard when asked; the relay's line at the end when it relays.
fn serve<P: Protocol<Command = AddonDp4Command, Event = AddonDp4Event>>(
    a: &FsHostArgs,
    guid: Uuid,
    runtime: Runtime<P>,
    start: Instant,
    bans: dplay_web::BanFile,
    web: Option<(SocketAddr, dplay_web::ServerSide)>,
    relay: Option<SharedDp4Relay>,
) -> anyhow::Result<bool> {
    let keepalive = a.session_args.keepalive;
    let mut out = Dp4Output::new(Output::new(a.net.json, start));
    let addr = |id| runtime.socket_addr(id).map(|a| a.to_string()).unwrap_or_default();
    let (tcp, udp, enumeration) =
        (addr(Dp4Binding::LISTENER), addr(Dp4Binding::GAME_SOCKET), addr(Dp4Binding::ENUM_SOCKET));
    let addrs = runtime.socket_addr(Dp4Binding::LISTENER).map(address::joinable).unwrap_or_default();
    let text = format!(
        "hosting add-on session \"{}\" (DirectPlay 4, FS98): TCP {tcp}, UDP {udp}, enumeration UDP {enumeration}: players can join at {}",
        a.session,
        address::list(&addrs)
    );
    let hosting = JsonEvent::Hosting {
        protocol: Proto::Dp4,
        session: a.session.clone(),
        addrs: addrs.iter().map(ToString::to_string).collect(),
        addr: None,
        mode: None,
        tcp: Some(tcp),
        udp: Some(udp),
        enumeration: Some(enumeration),
        flags: Vec::new(),
    };
    out.out.event(&hosting, text);
    crate::voice::announce(&out.out, &a.voice);
    let mut session = fs98_host_config(&a.session);
    session.application_guid = guid;
    session.max_players = a.max_players;
    session.password.clone_from(&a.session_args.password);
    if session.password.is_some() {
        session.flags |= SessionFlags::PASSWORD_REQUIRED;
    }
    if keepalive.is_some() {
        session.flags |= SessionFlags::KEEP_ALIVE;
    }
    runtime.command(AddonDp4Command::Host(session))?;
    runtime.command(AddonDp4Command::SetBans(bans.bans().clone()))?;
    let _server = match web {
        Some((at, link)) => {
            link.set_ban_file(bans);
            Some(crate::web::start(at, &a.web, link, &out.out)?)
        }
        None => None,
    };
    let mut failed = None;
    let joinable = format!("players can join at {}", address::list(&addrs));
    let mut view = traffic::wanted(a.net.json).then(|| LiveTable::with_header(joinable));
    let commands = Commands { stats_every: a.limits.stats_period(), ..commands() };
    let (stop, _) = drive(runtime, start, &a.net, None, None, commands, |e| {
        print(&mut out, view.as_mut(), &mut failed, e)
    })?;
    drop(view);
    if let Some(why) = failed {
        bail!("cannot host: {why}");
    }
    if let Some(r) = &relay {
        crate::relay::report(&out.out, r);
    }
    stopped(&out.out, stop)
}

/// Runs `dplay fs join --sim fs98` as the client `config`: to the host's TCP listener when ADDR
/// has a port, else through enumeration of FS98 sessions at ADDR's enumeration port.
pub(super) fn join(a: &FsJoinArgs, config: ClientConfig) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the command's start
    let start = Instant::now();
    let role = config.role;
    let bind = a.bind.unwrap_or_else(|| live::bind_for(a.host));
    let port = (bind.port() != 0).then_some(bind.port());
    let mut binding = Dp4Binding::client(ipv4(bind.ip())?);
    binding.stream_port = port;
    binding.datagram_port = port;
    let role_config = AddonDp4Role::Client(config);
    let keepalive = a.session_args.keepalive;
    let mut dp4_config = Dp4Config::default();
    a.budget.apply_dp4(&mut dp4_config.limits);
    let (runtime, _) =
        spawn(&binding, role_config, &a.name, keepalive, a.net.pcap.as_ref(), dp4_config, |p| p)?;
    let mut out = Dp4Output::new(Output::new(a.net.json, start));
    let password = a.session_args.password.clone();
    let (command, target) = match a.host.port() {
        0 => {
            let target = SocketAddr::new(a.host.ip(), a.host_enum_port);
            (AddonDp4Command::FindAndJoin { target: Some(target), password }, target)
        }
        _ => (AddonDp4Command::Join { host: a.host, password }, a.host),
    };
    out.out.event(
        &JsonEvent::Joining {
            protocol: Proto::Dp4,
            host: target.to_string(),
            name: a.name.clone(),
            addr: None,
            role: Some(role_name(role)),
        },
        format!("joining {target} as {} ({}, DirectPlay 4)", a.name, role_name(role)),
    );
    runtime.command(command)?;
    let flying = (role == Role::Player).then_some(start);
    let mut failed = None;
    let join = Join { by: start + a.timeout.max(live::MIN_TIMEOUT), done: joined };
    let mut session = false;
    let mut in_addon = false;
    let mut view = traffic::wanted(a.net.json).then(LiveTable::default);
    let (stop, joined) = drive(runtime, start, &a.net, flying, Some(join), commands(), |e| {
        session |= matches!(
            e,
            AddonDp4Event::Dp4(Dp4Event::Session(
                SessionEvent::Joined { .. } | SessionEvent::PlayerCreated { .. }
            ))
        );
        // A name ban acts on CREATEPLAYER: the host removes our instance before the add-on
        // takes us in (docs/decisions.md, "Names in DirectPlay 4").
        in_addon |= joined(e);
        if !in_addon
            && matches!(e, AddonDp4Event::Dp4(Dp4Event::Session(SessionEvent::Ended(EndReason::Removed))))
        {
            failed = Some(
                "the host removed us (DELETEPLAYER) before the add-on took us in: it may have banned our name"
                    .into(),
            );
        }
        if let AddonDp4Event::Addon(Event::Refused { role }) = e {
            failed = Some(format!(
                "the add-on host refused us as {}: it may be full or take no {}s",
                role_name(*role),
                role_name(*role)
            ));
        }
        print(&mut out, view.as_mut(), &mut failed, e) || failed.is_some()
    })?;
    drop(view);
    if let Some(why) = failed {
        bail!("could not join {target}: {why}");
    }
    if !joined {
        let within = crate::duration::show(a.join_wait());
        match stop {
            Stop::Interrupted => bail!("interrupted before the join completed"),
            _ if session => bail!(
                "joined the DirectPlay 4 session at {target}, but no FS98 add-on answered within {within}: is it an add-on host (dplay fs host --dp4)?"
            ),
            _ => bail!(
                "no answer from {target} within {within}: check that an add-on host runs there (dplay fs host --dp4) and the address and port are right"
            ),
        }
    }
    stopped(&out.out, stop)
}
