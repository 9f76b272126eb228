//! `dplay host`: hosts a DirectPlay 8 session (or, with `--dp4`, a DirectPlay 4 one) and logs
//! who joins and leaves and every application message.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use clap::Args;
use dplay_runtime::{Dp8Command, Dp8Protocol};
use dplay_session::Mode;
use serde_json::json;

use crate::live::{self, DPLAY8_PORT, NetArgs, Output, SessionArgs, Stop};

/// `dplay host` options.
#[derive(Args)]
pub(crate) struct HostArgs {
    /// Host a DirectPlay 4 session (UDP 47624 for enumeration, TCP and UDP game ports from
    /// 2300) instead of DirectPlay 8.
    #[arg(long)]
    pub(crate) dp4: bool,
    /// The address to listen on (default 0.0.0.0:6073; DirectPlay 4: 0.0.0.0 with the first
    /// free TCP and UDP ports of 2300-2400, a port given fixes both).
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = live::parse_host)]
    pub(crate) bind: Option<SocketAddr>,
    /// The session name.
    #[arg(long, default_value = "dplay")]
    pub(crate) session: String,
    /// The host's player name.
    #[arg(long, default_value = "host")]
    pub(crate) name: String,
    /// At most this many players (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub(crate) max_players: u32,
    /// Client/server instead of peer-to-peer (DirectPlay 8).
    #[arg(long, conflicts_with = "dp4")]
    client_server: bool,
    #[command(flatten)]
    pub(crate) limits: crate::limits::LimitArgs,
    #[command(flatten)]
    pub(crate) dp4_args: crate::dp4::Dp4HostArgs,
    #[command(flatten)]
    pub(crate) session_args: SessionArgs,
    #[command(flatten)]
    pub(crate) net: NetArgs,
}

/// Runs `dplay host` until the duration passes or Ctrl-C.
pub(crate) fn run(args: HostArgs) -> anyhow::Result<bool> {
    if args.dp4 {
        return crate::dp4::host(&args);
    }
    args.limits.check_names(&[("session name", &args.session), ("player name", &args.name)])?;
    let bind = live::or_port(args.bind.unwrap_or(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0))), DPLAY8_PORT);
    #[allow(clippy::disallowed_methods)] // the command's start, for event times
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let runtime = live::spawn(bind, args.net.pcap.as_ref(), |local| {
        let mut c = live::session_config(local, &args.name, &args.session_args);
        c.session_name = args.session.clone();
        c.max_players = args.max_players;
        c.mode = if args.client_server { Mode::ClientServer } else { Mode::PeerToPeer };
        args.limits.apply(&mut c);
        Dp8Protocol::new(c, start)
    })?;
    let mut out = Output::new(args.net.json, start);
    let addr = runtime.local_addr();
    let mode = if args.client_server { "client-server" } else { "peer-to-peer" };
    out.emit(
        "hosting",
        json!({"addr": addr.to_string(), "session": args.session, "mode": mode}),
        format!("hosting \"{}\" ({mode}) on {addr}", args.session),
    );
    runtime.command(Dp8Command::Host)?;
    let end = args.net.deadline(start);
    let stop = loop {
        // The drops-and-refusals line every --stats-every seconds, until the end.
        #[allow(clippy::disallowed_methods)] // the command's own clock
        let tick = args.limits.stats_period().map(|p| Instant::now() + p);
        let until = match (tick, end) {
            (Some(t), Some(e)) => Some(t.min(e)),
            (t, e) => t.or(e),
        };
        let stop = live::wait(runtime.events(), &interrupt, until, |e| !out.dp8(&e));
        if stop == Stop::Deadline && until != end {
            runtime.command(Dp8Command::Refusals)?;
            continue;
        }
        break stop;
    };
    // The drops-and-refusals line at exit.
    if stop != Stop::Closed && runtime.command(Dp8Command::Refusals).is_ok() {
        #[allow(clippy::disallowed_methods)]
        let until = Instant::now() + std::time::Duration::from_secs(1);
        live::wait(runtime.events(), &crossbeam_channel::never(), Some(until), |e| {
            let last = matches!(e, dplay_runtime::Dp8Event::Refusals(_));
            out.dp8(&e);
            !last
        });
    }
    if stop != Stop::Closed {
        let _ = runtime.command(Dp8Command::Leave);
    }
    live::finish(runtime);
    out.emit("stopped", json!({"why": format!("{stop:?}").to_lowercase()}), "stopped");
    Ok(true)
}
