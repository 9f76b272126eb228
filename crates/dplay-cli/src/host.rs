//! `dplay host`: hosts a DirectPlay 8 session (or, with `--dp4`, a DirectPlay 4 one) and logs
//! who joins and leaves and every application message.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use clap::Args;
use crossbeam_channel::Receiver;
use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Protocol, Relayed, Runtime, SharedRelay};
use dplay_session::{Event, Mode, SendFlags};
use dplay_web::{Observed, ServerSide};
use dplay_wire::dp8::session::ApplicationDescFlags;

use crate::address;
use crate::dp4::Echo;
use crate::events::{JsonEvent, Proto, flag_names, flags_text};
use crate::live::{self, DPLAY8_PORT, NetArgs, Output, SessionArgs, Stop};
use crate::relay;

/// `dplay host` options.
#[derive(Args)]
pub(crate) struct HostArgs {
    /// Read options from this TOML file (keys are the long options, such as `session` or
    /// `max_players`); the command line wins over it (docs/host-config.md).
    #[arg(long, value_name = "FILE")]
    #[allow(dead_code)] // read through the ArgMatches, before the parse (config::expand)
    config: Option<std::path::PathBuf>,
    /// Host a DirectPlay 4 session (UDP 47624 for enumeration, TCP and UDP game ports from
    /// 2300) instead of DirectPlay 8.
    #[arg(long)]
    pub(crate) dp4: bool,
    /// The address to listen on (default 0.0.0.0:6073, `:0` any free port; DirectPlay 4:
    /// 0.0.0.0 with the first free TCP and UDP ports of 2300-2400, a port given fixes both).
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = crate::address::parse_bind)]
    pub(crate) bind: Option<crate::address::Bind>,
    /// The session name.
    #[arg(long, default_value = "dplay")]
    pub(crate) session: String,
    /// The host's player name.
    #[arg(long, default_value = "host")]
    pub(crate) name: String,
    /// At most this many players in the session, counted as DirectPlay counts them and
    /// enumeration shows them: the host's own player and observers included (0: no limit).
    /// A join beyond it is refused by DirectPlay (DPNERR_SESSIONFULL, DPERR_NONEWPLAYERS).
    #[arg(long, default_value_t = 0)]
    pub(crate) max_players: u32,
    /// Client/server instead of peer-to-peer (DirectPlay 8: DPNSESSION_CLIENT_SERVER; with
    /// --dp4: DPSESSION_CLIENTSERVER, clients see only the server player and reach each other
    /// through this host).
    #[arg(long)]
    pub(crate) client_server: bool,
    /// DirectPlay 8: no host migration. Leaving (the duration's end, Ctrl-C, SIGTERM) then
    /// ends the session for everyone with TERMINATE_SESSION; with migration (the default) the
    /// host leaves and the oldest member becomes host.
    #[arg(long, conflicts_with = "dp4")]
    no_migration: bool,
    /// Require packet signing of every connection (DirectPlay 8; DPNSESSION_FAST_SIGNED in
    /// the session's flags and EnumResponse, MC-DPL8R 3.1.4.4).
    #[arg(long, value_enum, default_value_t, conflicts_with = "dp4")]
    signing: live::SigningArg,
    #[command(flatten)]
    pub(crate) relay: crate::relay::RelayArgs,
    #[command(flatten)]
    pub(crate) voice: crate::voice::VoiceArgs,
    #[command(flatten)]
    pub(crate) limits: crate::limits::LimitArgs,
    #[command(flatten)]
    pub(crate) dp4_args: crate::dp4::Dp4HostArgs,
    #[command(flatten)]
    pub(crate) session_args: SessionArgs,
    #[command(flatten)]
    pub(crate) net: NetArgs,
    #[command(flatten)]
    pub(crate) web: crate::web::WebArgs,
    #[command(flatten)]
    pub(crate) internet: crate::internet::InternetArgs,
}

/// Runs `dplay host` until the duration passes or Ctrl-C.
pub(crate) fn run(args: HostArgs) -> anyhow::Result<bool> {
    if args.dp4 {
        return crate::dp4::host(&args);
    }
    args.limits.check_names(&[("session name", &args.session), ("player name", &args.name)])?;
    if args.relay.relay && args.client_server {
        anyhow::bail!("--relay relays a peer-to-peer session: a client/server session has no mesh");
    }
    let any = crate::address::Bind { ip: Ipv4Addr::UNSPECIFIED.into(), port: None };
    let bind = args.bind.unwrap_or(any).or_port(DPLAY8_PORT);
    #[allow(clippy::disallowed_methods)] // the command's start, for event times
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let signing = args.signing.signing()?;
    let mut flags = ApplicationDescFlags::empty();
    let mut make = |local, relay: Option<SharedRelay>| {
        let mut c = live::session_config(local, &args.name, &args.session_args);
        c.transport.signing = signing;
        flags.set(ApplicationDescFlags::FAST_SIGNED, signing == dplay_dframe::Signing::Fast);
        c.session_name = args.session.clone();
        c.max_players = args.max_players;
        c.mode = if args.client_server { Mode::ClientServer } else { Mode::PeerToPeer };
        args.limits.apply(&mut c);
        // A relayed session cannot outlive its relay (docs/decisions.md, "Relay").
        c.migrate_host &= !args.no_migration && !args.client_server && relay.is_none();
        c.address_map = relay.as_ref().map(SharedRelay::address_map);
        flags.set(ApplicationDescFlags::CLIENT_SERVER, args.client_server);
        flags.set(ApplicationDescFlags::MIGRATE_HOST, c.migrate_host);
        flags.set(ApplicationDescFlags::REQUIREPASSWORD, c.password.is_some());
        let mut p = Dp8Protocol::new(c, start);
        // `--voice` offers only the types that are served.
        if let Some(role) = args.voice.role() {
            p.set_voice(role);
        }
        if let Some(r) = &relay {
            r.charge_to(p.session().memory_budget());
        }
        Relayed::new(p, relay)
    };
    let bans = crate::web::bans(&args.web)?;
    let mut internet = crate::internet::Internet::new(&args.internet, args.net.json);
    let (pcap, endpoints) = (args.net.pcap.as_ref(), args.relay.endpoints(args.max_players));
    let Some(web) = args.web.web else {
        let (runtime, relay) =
            relay::spawn(bind, pcap, endpoints, |local, r| internet.wrap(make(local, r), start))?;
        let ports = crate::internet::dp8_ports(runtime.local_addrs());
        return internet.relaying(relay.as_ref()).around(start, ports, None, || {
            serve(&args, runtime, flags, bans, start, &interrupt, None, relay)
        });
    };
    let (loop_side, server_side) = dplay_web::link();
    let (runtime, relay) = relay::spawn(bind, pcap, endpoints, |local, r| {
        internet.wrap(Observed::new(make(local, r), loop_side, start), start)
    })?;
    let ports = crate::internet::dp8_ports(runtime.local_addrs());
    internet.relaying(relay.as_ref()).around(start, ports, Some(server_side.clone()), || {
        serve(&args, runtime, flags, bans, start, &interrupt, Some((web, server_side)), relay)
    })
}

/// Hosts on `runtime` until the duration passes or Ctrl-C, with the dashboard when asked.
#[allow(clippy::too_many_arguments)] // each is one of the command's parts
fn serve<P: Protocol<Command = Dp8Command, Event = Dp8Event>>(
    args: &HostArgs,
    runtime: Runtime<P>,
    flags: ApplicationDescFlags,
    bans: dplay_web::BanFile,
    start: Instant,
    interrupt: &Receiver<()>,
    web: Option<(SocketAddr, ServerSide)>,
    relay: Option<SharedRelay>,
) -> anyhow::Result<bool> {
    let mut out = Output::new(args.net.json, start);
    let addr = runtime.local_addr();
    let addrs = address::joinable(addr);
    let mode = if args.client_server { "client-server" } else { "peer-to-peer" };
    let migrate = flags.contains(ApplicationDescFlags::MIGRATE_HOST);
    let flags = flag_names(&flags);
    out.event(
        &JsonEvent::Hosting {
            protocol: Proto::Dp8,
            session: args.session.clone(),
            addrs: addrs.iter().map(ToString::to_string).collect(),
            addr: Some(addr.to_string()),
            mode: Some(mode),
            tcp: None,
            udp: None,
            enumeration: None,
            flags: flags.clone(),
        },
        format!(
            "hosting \"{}\" ({mode}, {}) on {addr}: players can join at {}",
            args.session,
            flags_text(&flags),
            address::list(&addrs)
        ),
    );
    crate::voice::announce(&out, &args.voice);
    runtime.command(Dp8Command::Host)?;
    runtime.command(Dp8Command::SetBans(bans.bans().clone()))?;
    let _server = match web {
        Some((at, link)) => {
            link.set_ban_file(bans);
            Some(crate::web::start(at, &args.web, link, &out)?)
        }
        None => None,
    };
    let echo = args.dp4_args.echo;
    let end = args.net.deadline(start);
    let handle = |e| {
        if let Some(how) = echo {
            echo_back(&runtime, how, &e);
        }
        let go_on = !out.dp8(&e);
        relay::after_refusals(&out, relay.as_ref(), matches!(e, Dp8Event::Refusals(_)));
        go_on
    };
    // The drops-and-refusals line every --stats-every seconds and on SIGUSR1, until the end.
    let stats = || Ok(runtime.command(Dp8Command::Refusals)?);
    let stop = live::serve(runtime.events(), interrupt, end, args.limits.stats_period(), handle, stats)?;
    // The drops-and-refusals line at exit.
    if stop != Stop::Closed && runtime.command(Dp8Command::Refusals).is_ok() {
        #[allow(clippy::disallowed_methods)]
        let until = Instant::now() + std::time::Duration::from_secs(1);
        live::wait(runtime.events(), &crossbeam_channel::never(), Some(until), |e| {
            let last = matches!(e, Dp8Event::Refusals(_));
            out.dp8(&e);
            !last
        });
    }
    if stop != Stop::Closed {
        // Migration as configured: the host's leave hands the session on; without migration
        // the members are told the session is over (MC-DPL8CS 2.2.2.1 TERMINATE_SESSION).
        let end = if migrate { Dp8Command::Leave } else { Dp8Command::Terminate };
        let _ = runtime.command(end);
    }
    live::finish(runtime);
    if let Some(r) = &relay {
        relay::report(&out, r);
    }
    out.stopped(stop);
    Ok(true)
}

/// `--echo`: sends application data back to its sender, guaranteed (`tcp`, the default) or
/// not (`udp`); a DXDiag chat line goes back to everyone as a chat line (MS-DPDX 3.1.5.7: chat
/// has no single receiver).
fn echo_back<P: Protocol<Command = Dp8Command>>(runtime: &Runtime<P>, how: Echo, e: &Dp8Event) {
    let command = match e {
        Dp8Event::Session(Event::Message { from, data, .. }) => {
            let flags = if how == Echo::Tcp { SendFlags::RELIABLE_SEQUENTIAL } else { SendFlags::DATAGRAM };
            Dp8Command::SendTo { to: *from, data: data.clone(), flags }
        }
        Dp8Event::Session(Event::Chat { text, .. }) => Dp8Command::Chat(text.clone()),
        _ => return,
    };
    let _ = runtime.command(command);
}
