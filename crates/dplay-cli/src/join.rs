//! `dplay join`: joins a DirectPlay 8 session (or, with `--dp4`, a DirectPlay 4 one), prints
//! the name table and every event, and optionally sends a chat message to all.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::Args;
use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol};
use dplay_session::{EndReason, Event, Mode, SessionConfig};
use dplay_wire::dp8::session::ApplicationDescFlags;
use uuid::Uuid;

use crate::events::{JsonEvent, Proto};
use crate::live::{self, NetArgs, Output, SessionArgs, Stop};

/// `dplay join` options.
#[derive(Args)]
pub(crate) struct JoinArgs {
    /// Join a DirectPlay 4 session: ADDR:PORT is the host's TCP listener; a bare ADDR asks
    /// its enumeration port (47624) where that is.
    #[arg(long)]
    pub(crate) dp4: bool,
    /// The host's address (DirectPlay 8: port 6073 when none is given).
    #[arg(value_name = "ADDR[:PORT]", value_parser = live::parse_host)]
    pub(crate) host: SocketAddr,
    /// The local address (default: loopback for a loopback host, else any; DirectPlay 8 port 0,
    /// DirectPlay 4 the first free ports of 2300-2400).
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = live::parse_host)]
    pub(crate) bind: Option<SocketAddr>,
    /// Our player name.
    #[arg(long, default_value = "player")]
    pub(crate) name: String,
    /// Send this text to everyone once joined (DirectPlay 8: as a chat message).
    #[arg(long)]
    pub(crate) send: Option<String>,
    /// Give up joining after this long (seconds, or a unit such as 30s).
    #[arg(long, value_name = "TIME", default_value = "10", value_parser = crate::duration::parse)]
    pub(crate) timeout: Duration,
    #[command(flatten)]
    pub(crate) dp4_args: crate::dp4::Dp4JoinArgs,
    #[command(flatten)]
    pub(crate) session_args: SessionArgs,
    #[command(flatten)]
    pub(crate) net: NetArgs,
}

/// Runs `dplay join`; an error when the join fails.
pub(crate) fn run(mut args: JoinArgs) -> anyhow::Result<bool> {
    if args.dp4 {
        return crate::dp4::join(&args);
    }
    args.host = live::or_port(args.host, crate::live::DPLAY8_PORT);
    #[allow(clippy::disallowed_methods)] // the command's start
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let bind = args.bind.unwrap_or_else(|| live::bind_for(args.host));
    let join_deadline = start + args.timeout.max(live::MIN_TIMEOUT);
    let session = probe(args.host, bind, args.session_args.app_guid, join_deadline);
    if session.is_some_and(|(_, flags)| flags.contains(ApplicationDescFlags::REQUIREPASSWORD))
        && args.session_args.password.is_none()
    {
        anyhow::bail!("the session at {} needs a password: give it with --password", args.host);
    }
    let runtime = live::spawn(bind, args.net.pcap.as_ref(), |local| {
        let mut c = live::session_config(local, &args.name, &args.session_args);
        if session.is_some_and(|(_, flags)| flags.contains(ApplicationDescFlags::CLIENT_SERVER)) {
            c.mode = Mode::ClientServer;
        }
        Dp8Protocol::new(c, start)
    })?;
    let mut out = Output::new(args.net.json, start);
    out.event(
        &JsonEvent::Joining {
            protocol: Proto::Dp8,
            host: args.host.to_string(),
            name: args.name.clone(),
            addr: Some(runtime.local_addr().to_string()),
            role: None,
        },
        format!("joining {} from {} as {}", args.host, runtime.local_addr(), args.name),
    );
    runtime.command(Dp8Command::Join { host: args.host, instance: session.map(|(i, _)| i) })?;

    let mut ended = None;
    let mut joined = false;
    let stop = live::wait(runtime.events(), &interrupt, Some(join_deadline), |e| {
        if let Dp8Event::Session(Event::SessionEnded { reason }) = &e {
            ended = Some(*reason);
        }
        out.dp8(&e);
        joined |= matches!(e, Dp8Event::NameTable(_));
        !joined && ended.is_none()
    });
    if !joined {
        drop(runtime);
        return Err(join_error(args.host, ended, stop, args.timeout));
    }
    if let Some(text) = &args.send {
        runtime.command(Dp8Command::Chat(text.clone()))?;
        let sent = JsonEvent::Sent {
            text: Some(text.clone()),
            len: text.len(),
            digest: crate::dp4_print::digest(text.as_bytes()),
            guaranteed: true,
        };
        out.event(&sent, format!("sent: {text}"));
    }
    let stop = live::wait(runtime.events(), &interrupt, args.net.deadline(start), |e| !out.dp8(&e));
    if stop != Stop::Closed && stop != Stop::Done {
        let _ = runtime.command(Dp8Command::Leave);
    }
    live::finish(runtime);
    out.stopped(stop);
    Ok(true)
}

/// Asks `host` for its session first (from another port), for the instance GUID and whether it
/// is client/server (the joiner must say so in PLAYER_CONNECT_INFO, MC-DPL8CS 2.2.1.2) or needs
/// a password. `None` when nothing answers within two seconds (or by `deadline`, the join's
/// own): the join then tries anyway, within what is left of its `--timeout`.
fn probe(
    host: SocketAddr,
    bind: SocketAddr,
    app: Option<Uuid>,
    deadline: Instant,
) -> Option<(Uuid, ApplicationDescFlags)> {
    #[allow(clippy::disallowed_methods)] // the probe's own clock
    let start = Instant::now();
    let runtime = live::spawn(SocketAddr::new(bind.ip(), 0), None, |local| {
        let mut c = SessionConfig::new(Uuid::nil(), local, "probe");
        c.enum_retry = Duration::from_millis(300);
        Dp8Protocol::new(c, start)
    })
    .ok()?;
    runtime.command(Dp8Command::EnumHosts { target: host, application_guid: app }).ok()?;
    let never = crossbeam_channel::never();
    let mut found = None;
    let until = (start + Duration::from_secs(2)).min(deadline);
    live::wait(runtime.events(), &never, Some(until), |e| match e {
        Dp8Event::Session(Event::HostFound { response, .. }) => {
            found = Some((response.application_instance_guid, response.application_desc_flags));
            false
        }
        _ => true,
    });
    found
}

/// One line saying why the join failed and what to do.
fn join_error(host: SocketAddr, ended: Option<EndReason>, stop: Stop, timeout: Duration) -> anyhow::Error {
    match (ended, stop) {
        (Some(EndReason::Refused(code)), _) => anyhow::anyhow!(
            "{host} refused the join ({}): check --password and --app-guid, or whether the session is full",
            code.name().unwrap_or("unknown result code")
        ),
        (Some(reason), _) => anyhow::anyhow!(
            "could not join {host}: {reason}; check that a host runs there (dplay enum {host})"
        ),
        (None, Stop::Interrupted) => anyhow::anyhow!("interrupted before the join completed"),
        _ => anyhow::anyhow!(
            "no answer from {host} within {}: check that a host runs there and the address and port are right (dplay enum {host})",
            crate::duration::show(timeout)
        ),
    }
}
