//! `dplay fs host` and `dplay fs join`: the Flight Simulator add-on protocol (seed 004) over
//! DirectPlay 8, or with `--dp4` its FS98 dialect over DirectPlay 4 ([`dp4`]). A player flies a
//! scripted circuit, its position sent four times a second; an observer (and the host) print
//! every aircraft's position as it arrives.

mod dp4;

use std::f64::consts::TAU;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use crossbeam_channel::select;
use dplay_addon::units::Attitude;
use dplay_addon::{
    ClientConfig, DisconnectReason, Event, HostConfig, HostPolicy, PlayerId, Position, Role, Velocity,
};
use dplay_runtime::{
    AddonCommand, AddonEvent, AddonProtocol, AddonRole, Dp8Command, Dp8Event, Protocol, Runtime,
};
use dplay_session::Event as SessionEvent;
use dplay_session::dp4::config::ENUM_PORT;
use dplay_wire::dp8::dpnid::Dpnid;
use serde_json::json;

use crate::address;
use crate::events::{JsonEvent, Proto};
use crate::live::{self, DPLAY8_PORT, NetArgs, Output, SessionArgs, Stop};

/// `dplay fs` subcommands.
#[derive(Subcommand)]
pub(crate) enum FsCommand {
    /// Host an add-on session (as an observer that accepts every player and observer).
    Host(FsHostArgs),
    /// Join an add-on session as a player or an observer.
    Join(FsJoinArgs),
}

/// `dplay fs host` options.
#[derive(Args)]
pub(crate) struct FsHostArgs {
    /// Host a Flight Simulator 98 session over DirectPlay 4 (application GUID_FS6 unless
    /// --app-guid): TCP and UDP game ports are the first free ones of 2300-2400 on the --bind
    /// address (its port is not used), enumeration on UDP --enum-port.
    #[arg(long)]
    dp4: bool,
    /// DirectPlay 4: the UDP enumeration port (47624 in the spec; another lets several hosts
    /// share a machine).
    #[arg(long, value_name = "PORT", default_value_t = ENUM_PORT)]
    enum_port: u16,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR:PORT", value_parser = live::parse_addr,
          default_value_t = SocketAddr::from((Ipv4Addr::UNSPECIFIED, DPLAY8_PORT)))]
    bind: SocketAddr,
    /// The session name.
    #[arg(long, default_value = "dplay fs")]
    session: String,
    /// The host's player name.
    #[arg(long, default_value = "fs-host")]
    name: String,
    /// At most this many players besides the host (no limit when absent).
    #[arg(long)]
    max_players: Option<usize>,
    #[command(flatten)]
    session_args: SessionArgs,
    #[command(flatten)]
    net: NetArgs,
}

/// `dplay fs join` options.
#[derive(Args)]
#[command(group = clap::ArgGroup::new("role").required(true).args(["player", "observer"]))]
pub(crate) struct FsJoinArgs {
    /// Join a Flight Simulator 98 session over DirectPlay 4: ADDR:PORT is the host's TCP
    /// listener; a bare ADDR asks its enumeration port (--host-enum-port) for FS98 sessions and
    /// joins the first.
    #[arg(long)]
    dp4: bool,
    /// DirectPlay 4: the host's enumeration port, asked when ADDR has no port.
    #[arg(long, value_name = "PORT", default_value_t = ENUM_PORT)]
    host_enum_port: u16,
    /// The host's address (DirectPlay 8: port 6073 when none is given).
    #[arg(value_name = "ADDR[:PORT]", value_parser = live::parse_host)]
    host: SocketAddr,
    /// Join as a player flying a scripted circuit.
    #[arg(long)]
    player: bool,
    /// Join as an observer printing every aircraft's position.
    #[arg(long)]
    observer: bool,
    /// Our player name.
    #[arg(long, default_value = "pilot")]
    name: String,
    /// The local address (default: loopback for a loopback host, else any, port 0).
    #[arg(long, value_name = "ADDR:PORT", value_parser = live::parse_addr)]
    bind: Option<SocketAddr>,
    /// Give up (exit 1) when the add-on has not taken us in within this long (seconds, or a
    /// unit such as 30s).
    #[arg(long, value_name = "TIME", default_value = "10", value_parser = crate::duration::parse)]
    timeout: Duration,
    #[command(flatten)]
    session_args: SessionArgs,
    #[command(flatten)]
    net: NetArgs,
}

/// Runs `dplay fs ...`.
pub(crate) fn run(command: FsCommand) -> anyhow::Result<bool> {
    match command {
        FsCommand::Host(a) if a.dp4 => dp4::host(&a),
        FsCommand::Join(a) if a.dp4 => dp4::join(&a),
        FsCommand::Host(a) => {
            let policy = HostPolicy { max_players: a.max_players, allow_observers: true };
            let role = AddonRole::Host(HostConfig { own_role: Role::Observer, policy });
            let setup = Setup { bind: a.bind, name: &a.name, session_args: &a.session_args, net: &a.net };
            let (runtime, mut out, start) = setup.spawn(role, |c| c.session_name = a.session.clone())?;
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
                "hosting add-on session \"{}\" on {addr}: players can join at {}",
                a.session,
                address::list(&addrs)
            );
            out.event(&hosting, text);
            runtime.command(AddonCommand::Session(Dp8Command::Host))?;
            let (stop, _) =
                drive(runtime, start, &a.net, None, None, dp8_commands(), |e| print(&mut out, e))?;
            stopped(&out, stop)
        }
        FsCommand::Join(mut a) => {
            a.host = live::or_port(a.host, DPLAY8_PORT);
            let role = if a.player { Role::Player } else { Role::Observer };
            let bind = a.bind.unwrap_or_else(|| live::bind_for(a.host));
            let setup = Setup { bind, name: &a.name, session_args: &a.session_args, net: &a.net };
            let (runtime, mut out, start) =
                setup.spawn(AddonRole::Client(ClientConfig::new(role)), |_| {})?;
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
            let (stop, joined) = drive(runtime, start, &a.net, flying, Some(join), dp8_commands(), |e| {
                watch.see(e);
                print(&mut out, e) || watch.refused.is_some()
            })?;
            if !joined {
                return Err(watch.error(a.host, stop, a.timeout));
            }
            stopped(&out, stop)
        }
    }
}

struct Setup<'a> {
    bind: SocketAddr,
    name: &'a str,
    session_args: &'a SessionArgs,
    net: &'a NetArgs,
}

impl Setup<'_> {
    fn spawn(
        self,
        role: AddonRole,
        tune: impl FnOnce(&mut dplay_session::SessionConfig),
    ) -> anyhow::Result<(Runtime<AddonProtocol>, Output, Instant)> {
        #[allow(clippy::disallowed_methods)] // the command's start
        let start = Instant::now();
        let runtime = live::spawn(self.bind, self.net.pcap.as_ref(), |local| {
            let mut c = live::session_config(local, self.name, self.session_args);
            tune(&mut c);
            AddonProtocol::new(c, role, start)
        })?;
        Ok((runtime, Output::new(self.net.json, start), start))
    }
}

/// How [`drive`] asks a runtime to fly and to leave.
struct Commands<C> {
    /// The command setting the position (and velocities) from now on.
    fly: fn(Position, Velocity) -> C,
    /// The command leaving the session.
    leave: fn() -> C,
}

fn dp8_commands() -> Commands<AddonCommand> {
    Commands {
        fly: |p, v| AddonCommand::SetPosition(p, Some(v)),
        leave: || AddonCommand::Session(Dp8Command::Leave),
    }
}

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
    ended: Option<String>,
}

impl JoinWatch {
    fn see(&mut self, e: &AddonEvent) {
        match e {
            AddonEvent::Session(Dp8Event::Session(SessionEvent::Joined { .. })) => self.session = true,
            AddonEvent::Session(Dp8Event::Session(SessionEvent::SessionEnded { reason })) => {
                self.ended = Some(reason.to_string());
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
/// circuit's start). With `join`, also stops when it is not done by its deadline. Returns why
/// it stopped and whether the join (if any) was done.
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
    let mut joined = join.is_none();
    let never = crossbeam_channel::never();
    if let Some(t0) = flying {
        let (p, v) = circuit(Duration::ZERO);
        runtime.command((commands.fly)(p, v))?;
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
                runtime.command((commands.fly)(p, v))?;
            },
            recv(interrupt) -> _ => break Stop::Interrupted,
            recv(timeout) -> _ => {}
        }
    };
    if stop != Stop::Closed && (stop != Stop::Done || !joined) {
        let _ = runtime.command((commands.leave)());
    }
    live::finish(runtime);
    Ok((stop, joined))
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

/// Prints one event; true when the session ended.
fn print(out: &mut Output, event: &AddonEvent) -> bool {
    match event {
        AddonEvent::Session(e) => return out.dp8(e),
        AddonEvent::Position { id, position, .. } => {
            emit_position(out, &Dpnid(id.0).to_string(), &out.name(Dpnid(id.0)), position);
        }
        AddonEvent::Addon(e) => emit_addon(out, e, |id| out.name(Dpnid(id.0))),
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
        format!(
            "position {who}: {:.5} {:.5} {:.0} m heading {:.0}",
            p.latitude_deg, p.longitude_deg, p.altitude_m, p.attitude.heading_deg
        ),
    );
}

/// Prints an add-on event, naming players with `name`.
fn emit_addon(out: &Output, e: &Event, name: impl Fn(PlayerId) -> String) {
    let (kind, fields, text) = match e {
        Event::Joined { role } => {
            let role = role_name(*role);
            ("addon_joined", json!({"role": role}), format!("the add-on took us in as {role}"))
        }
        Event::Refused { role } => {
            let role = role_name(*role);
            ("addon_refused", json!({"role": role}), format!("the add-on host refused us as {role}"))
        }
        Event::PlayerType { id, role } => {
            let (who, role) = (name(*id), role_name(*role));
            ("player_type", json!({"name": who, "role": role}), format!("{who} is a {role}"))
        }
        Event::Accepted { id, role } => {
            let (who, role) = (name(*id), role_name(*role));
            ("accepted", json!({"name": who, "role": role}), format!("accepted {who} as {role}"))
        }
        Event::Denied { id, role } => {
            let (who, role) = (name(*id), role_name(*role));
            ("denied", json!({"name": who, "role": role}), format!("denied {who} as {role}"))
        }
        Event::Chat { from, text } => {
            let who = name(*from);
            let text = text.to_string_lossy();
            ("message", json!({"name": who, "text": text, "chat": true}), format!("chat from {who}: {text}"))
        }
        Event::PlaneChanged { id, engine_type, aircraft_name } => {
            let (who, plane) = (name(*id), aircraft_name.to_string_lossy());
            (
                "plane_changed",
                json!({"name": who, "aircraft": plane, "engine": engine_type.to_string()}),
                format!("{who} now flies {plane} ({engine_type})"),
            )
        }
        Event::Crash { from } => {
            let who = name(*from);
            ("crash", json!({"name": who}), format!("{who} collided with us"))
        }
        Event::BecameObserver => ("became_observer", json!({}), "we are an observer now".to_owned()),
        Event::ObserverChangeRefused => {
            ("observer_change_refused", json!({}), "the host keeps us a player".to_owned())
        }
        Event::Disconnect(why) => {
            let why = match why {
                DisconnectReason::Refused => "refused",
                DisconnectReason::RemovedByHost => "removed by the host",
                DisconnectReason::Left => "left",
                DisconnectReason::SessionEnded => "the host ended the session",
                _ => "disconnected",
            };
            ("addon_disconnect", json!({"reason": why}), format!("leaving the add-on session: {why}"))
        }
        // The session layer already reported these.
        Event::PlayerLeft { .. } | Event::PositionUpdated { .. } => return,
        // An event a later add-on adds: not printed until this printer knows it.
        _ => return,
    };
    out.emit(kind, fields, text);
}
