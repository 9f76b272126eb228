//! `dplay host`: hosts a DirectPlay 8 session and logs who joins and leaves and every
//! application message.

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
    /// The address to listen on.
    #[arg(long, value_name = "ADDR:PORT", value_parser = live::parse_addr,
          default_value_t = SocketAddr::from((Ipv4Addr::UNSPECIFIED, DPLAY8_PORT)))]
    bind: SocketAddr,
    /// The session name.
    #[arg(long, default_value = "dplay")]
    session: String,
    /// The host's player name.
    #[arg(long, default_value = "host")]
    name: String,
    /// At most this many players (0: no limit).
    #[arg(long, default_value_t = 0)]
    max_players: u32,
    /// Client/server instead of peer-to-peer.
    #[arg(long)]
    client_server: bool,
    #[command(flatten)]
    session_args: SessionArgs,
    #[command(flatten)]
    net: NetArgs,
}

/// Runs `dplay host` until the duration passes or Ctrl-C.
pub(crate) fn run(args: HostArgs) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the command's start, for event times
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let runtime = live::spawn(args.bind, args.net.pcap.as_ref(), |local| {
        let mut c = live::session_config(local, &args.name, &args.session_args);
        c.session_name = args.session.clone();
        c.max_players = args.max_players;
        c.mode = if args.client_server { Mode::ClientServer } else { Mode::PeerToPeer };
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
    let stop = live::wait(runtime.events(), &interrupt, args.net.deadline(start), |e| !out.dp8(&e));
    if stop != Stop::Closed {
        let _ = runtime.command(Dp8Command::Leave);
    }
    live::finish(runtime);
    out.emit("stopped", json!({"why": format!("{stop:?}").to_lowercase()}), "stopped");
    Ok(true)
}
