//! `dplay join`: joins a DirectPlay 8 session (or, with `--dp4`, a DirectPlay 4 one), prints
//! the name table and every event, and optionally sends a chat message to all.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::Args;
use dplay_dframe::{Signing, SigningMode};
use dplay_runtime::pcap::SharedTap;
use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, GroupCommand, SocketSpec, VoiceEvent, VoiceRole};
use dplay_session::{DPNERR_SESSIONFULL, EndReason, Event, Mode, SessionConfig, TableChange};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{ApplicationDescFlags, ResultCode};
use uuid::Uuid;

use crate::events::{JsonEvent, Proto};
use crate::join_opts::{JoinBudgetArgs, PlayerData, check_player_data};
use crate::live::{self, NetArgs, Output, SessionArgs, Stop};
use crate::other_protocol::OtherProbe;

/// `dplay join` options.
#[derive(Args)]
pub(crate) struct JoinArgs {
    /// Join a DirectPlay 4 session: ADDR:PORT is the host's TCP listener; a bare ADDR asks
    /// its enumeration port (47624) where that is.
    #[arg(long)]
    pub(crate) dp4: bool,
    /// The host's address (DirectPlay 8: port 6073 when none is given).
    #[arg(value_name = "ADDR[:PORT]", value_parser = crate::address::parse_target)]
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
    /// Once joined, rename our player (DirectPlay 8: DN_REQ_UPDATE_INFO to the host).
    #[arg(long, value_name = "NAME")]
    pub(crate) set_name: Option<String>,
    /// Once joined, create a group of this name and join it (DirectPlay 8: DN_REQ_CREATE_GROUP,
    /// then DN_REQ_ADD_PLAYER_TO_GROUP).
    #[arg(long, value_name = "NAME")]
    pub(crate) create_group: Option<String>,
    /// Once joined, join the existing group of this name (DirectPlay 8:
    /// DN_REQ_ADD_PLAYER_TO_GROUP).
    #[arg(long, value_name = "NAME")]
    pub(crate) join_group: Option<String>,
    /// Give up joining after this long (seconds, or a unit such as 30s). The default outlasts
    /// the time a host takes to remove a player that crashed (docs/limits.md), whom a joiner
    /// may be waiting for.
    #[arg(long, value_name = "TIME", default_value = crate::live::JOIN_TIMEOUT, value_parser = crate::duration::parse)]
    pub(crate) timeout: Duration,
    /// Join as a client of a client/server session, whatever its EnumResponse says (a server
    /// whose reply lacks DPNSESSION_CLIENT_SERVER).
    #[arg(long, conflicts_with_all = ["peer", "dp4"])]
    pub(crate) client_server: bool,
    /// Join as a peer of a peer-to-peer session, whatever its EnumResponse says.
    #[arg(long, conflicts_with = "dp4")]
    pub(crate) peer: bool,
    /// Packet signing (DirectPlay 8). By default that of the session's EnumResponse
    /// (DPNSESSION_FAST_SIGNED), else none.
    #[arg(long, value_enum)]
    pub(crate) signing: Option<live::SigningArg>,
    /// Our player data, as hex bytes (01 ab ...) or @FILE (DirectPlay 8: in
    /// PLAYER_CONNECT_INFO; DirectPlay 4: in CREATEPLAYER), at most --max-player-data bytes.
    #[arg(long, value_name = "HEX|@FILE", value_parser = crate::join_opts::parse_player_data)]
    pub(crate) player_data: Option<PlayerData>,
    /// Check the host's DirectPlay Voice server: connect as a voice client, send this many
    /// frames (DPVCTGUID_NONE PCM when the server announces it, else frames of its codec's
    /// size) to ourselves, measure their round trip, disconnect and leave.
    #[arg(long, value_name = "FRAMES", num_args = 0..=1, default_missing_value = "40")]
    pub(crate) voice_test: Option<u32>,
    #[command(flatten)]
    pub(crate) budget: JoinBudgetArgs,
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
        if args.create_group.is_some() || args.join_group.is_some() {
            anyhow::bail!("--create-group and --join-group are for DirectPlay 8 sessions (not --dp4)");
        }
        return crate::dp4::join(&args);
    }
    args.host = live::or_port(args.host, crate::live::DPLAY8_PORT);
    let player_data = args.player_data.clone().map(|d| d.0).unwrap_or_default();
    let max = args.dp4_args.names.max_player_data.unwrap_or(dplay_session::Limits::default().max_player_data);
    check_player_data(&player_data, max, "DPNERR_INVALIDPARAM")?;
    #[allow(clippy::disallowed_methods)] // the command's start
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let bind = live::bind_towards(args.bind, args.host)?;
    let join_deadline = start + args.timeout.max(live::MIN_TIMEOUT);
    // One capture for the probe and the session (issue 25 item 11).
    let tap = args.net.pcap.as_deref().map(|p| crate::live::pcap_tap(p).map(SharedTap::new)).transpose()?;
    let boxed = |t: &Option<SharedTap>| t.clone().map(|t| Box::new(t) as Box<dyn dplay_runtime::Tap>);
    let other = OtherProbe::dp4_at(args.host);
    let probing = JsonEvent::Probing { host: args.host.to_string() };
    Output::new(args.net.json, start).event(&probing, format!("asking {} for its session", args.host));
    let session = probe(args.host, bind, args.session_args.app_guid, join_deadline, boxed(&tap), &interrupt)?;
    // Silent in DirectPlay 8 but answered in DirectPlay 4: no use waiting out --timeout.
    if session.is_none()
        && let Some(hint) = other.hint(Duration::ZERO)
    {
        let error = anyhow::anyhow!("no DirectPlay 8 answer from {}; {hint}", args.host);
        return Err(Output::new(args.net.json, start).join_failed(error));
    }
    // The probe waited out the whole --timeout: no join to start ("joining" would be news).
    #[allow(clippy::disallowed_methods)] // the join's own deadline
    if session.is_none() && Instant::now() >= join_deadline {
        let failure = JoinFailure {
            host: args.host,
            enumerated: false,
            ended: None,
            pending: None,
            stop: Stop::Deadline,
        };
        let error = failure.error(args.timeout, |d| d.to_string());
        return Err(Output::new(args.net.json, start).join_failed(error));
    }
    let flags = session.map(|(_, flags)| flags);
    if flags.is_some_and(|f| f.contains(ApplicationDescFlags::REQUIREPASSWORD))
        && args.session_args.password.is_none()
    {
        anyhow::bail!("the session at {} needs a password: give it with --password", args.host);
    }
    let signing = match args.signing {
        Some(arg) => arg.signing()?,
        None if flags.is_some_and(|f| f.contains(ApplicationDescFlags::FULL_SIGNED)) => {
            return Err(
                live::full_signing_error().context(format!("the session at {} requires it", args.host))
            );
        }
        None if flags.is_some_and(|f| f.contains(ApplicationDescFlags::FAST_SIGNED)) => Signing::Fast,
        None => Signing::Off,
    };
    let runtime = live::spawn_tapped(SocketSpec::udp(bind), boxed(&tap), |local| {
        let mut c = live::session_config(local, &args.name, &args.session_args);
        // A client must say so in PLAYER_CONNECT_INFO (MC-DPL8CS 2.2.1.2), as the
        // EnumResponse's DPNSESSION_CLIENT_SERVER tells.
        // --client-server and --peer force the kind (issue 25 item 7).
        let server = flags.is_some_and(|f| f.contains(ApplicationDescFlags::CLIENT_SERVER));
        if args.client_server || (server && !args.peer) {
            c.mode = Mode::ClientServer;
        }
        c.transport.signing = signing;
        args.dp4_args.names.apply_dp8(&mut c.limits);
        args.budget.apply_dp8(&mut c.limits);
        // MC-DPL8CS 2.2.1.2: PLAYER_CONNECT_INFO's player data.
        c.player_data = player_data;
        let mut p = Dp8Protocol::new(c, start);
        if let Some(frames) = args.voice_test {
            p.set_voice(VoiceRole::Test { frames });
        }
        p
    })?;
    let mut out = Output::new(args.net.json, start).joining();
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
    let mut pending = None;
    let mut joined = false;
    let mut local = None;
    let stop = live::wait(runtime.events(), &interrupt, Some(join_deadline), |e| {
        match &e {
            Dp8Event::Session(Event::SessionEnded { reason }) => ended = Some(*reason),
            Dp8Event::Session(Event::Joined { local: me, .. }) => local = Some(*me),
            Dp8Event::Session(Event::JoinPending { local, awaiting_instruction, awaiting_peers, .. }) => {
                let peers: Vec<String> =
                    awaiting_peers.iter().map(|d| format!("{} ({d})", out.name(*d))).collect();
                pending = Some((*local, *awaiting_instruction, peers));
            }
            _ => {}
        }
        out.dp8(&e);
        joined |= matches!(e, Dp8Event::NameTable(_));
        !joined && ended.is_none()
    });
    if !joined {
        let failure = JoinFailure { host: args.host, enumerated: session.is_some(), ended, pending, stop };
        // A goodbye, so that the host frees our place at once rather than after a timeout.
        if ended.is_none() {
            let _ = runtime.command(Dp8Command::Leave);
            live::finish(runtime);
        }
        let error = match other.hint(Duration::ZERO).filter(|_| session.is_none()) {
            Some(hint) => anyhow::anyhow!("no DirectPlay 8 answer from {}; {hint}", args.host),
            None => failure.error(args.timeout, |d| out.name(d)),
        };
        return Err(out.join_failed(error));
    }
    if let Some(name) = &args.set_name {
        runtime.command(Dp8Command::SetInfo { name: Some(name.clone()), data: None })?;
    }
    if let Some(name) = &args.create_group {
        let create = GroupCommand::Create { name: name.clone(), data: Vec::new() };
        runtime.command(Dp8Command::Group(create))?;
    }
    if let Some(name) = &args.join_group {
        runtime.command(Dp8Command::Group(GroupCommand::JoinNamed(name.clone())))?;
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
    let mut voice_result = None;
    // A command of ours that failed (--join-group of an unknown group: DPNERR_INVALIDGROUP, a
    // refused --set-name) makes the exit status 1 (issue 25 item 13).
    let mut failed = false;
    let stop = live::wait(runtime.events(), &interrupt, args.net.deadline(start), |e| {
        failed |= matches!(
            e,
            Dp8Event::CommandFailed { .. } | Dp8Event::Session(Event::Completed { result: Err(_), .. })
        );
        // The group we asked for exists: join it (the host answers the creation first).
        if let Dp8Event::Session(Event::NameTable(TableChange::GroupCreated { group, name, requested_by })) =
            &e
            && args.create_group.as_ref() == Some(name)
            && let Some(me) = local.filter(|me| me == requested_by)
        {
            let _ = runtime.command(Dp8Command::Group(GroupCommand::Add { group: *group, player: me }));
        }
        match &e {
            Dp8Event::Voice(VoiceEvent::TestDone(r)) => voice_result = Some(r.received > 0),
            Dp8Event::Voice(VoiceEvent::TestFailed(_)) => voice_result = Some(false),
            _ => {}
        }
        !out.dp8(&e) && voice_result.is_none()
    });
    if stop != Stop::Closed && stop != Stop::Done || voice_result.is_some() {
        let _ = runtime.command(Dp8Command::Leave);
    }
    live::finish(runtime);
    out.stopped(stop);
    if voice_result == Some(false) {
        anyhow::bail!("the voice test failed: no frame came back");
    }
    Ok(!failed)
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
    tap: Option<Box<dyn dplay_runtime::Tap>>,
    interrupt: &crossbeam_channel::Receiver<()>,
) -> anyhow::Result<Option<(Uuid, ApplicationDescFlags)>> {
    #[allow(clippy::disallowed_methods)] // the probe's own clock
    let start = Instant::now();
    let runtime = live::spawn_tapped(SocketSpec::udp(SocketAddr::new(bind.ip(), 0)), tap, |local| {
        let mut c = SessionConfig::new(Uuid::nil(), local, "probe");
        c.set_enum_retry(Duration::from_millis(300));
        Dp8Protocol::new(c, start)
    })
    .ok();
    let Some(runtime) = runtime else { return Ok(None) };
    if runtime.command(Dp8Command::EnumHosts { target: host, application_guid: app }).is_err() {
        return Ok(None);
    }
    let mut found = None;
    let until = (start + Duration::from_secs(2)).min(deadline);
    // Ctrl-C ends the probe too (issue 25 item 16).
    let stop = live::wait(runtime.events(), interrupt, Some(until), |e| match e {
        Dp8Event::Session(Event::HostFound { response, .. }) => {
            found = Some((response.application_instance_guid, response.application_desc_flags));
            false
        }
        _ => true,
    });
    if stop == Stop::Interrupted {
        anyhow::bail!("interrupted before the join completed");
    }
    Ok(found)
}

/// The line for a join the host answered that still waits after `timeout`: for the host's
/// DN_INSTRUCT_CONNECT (`instruction`) and for `peers` (named) to connect to us. A peer that
/// does not come is one the host is checking (MC-DPL8CS 3.2.5.3: a crashed player is removed
/// and the join goes on), so the network is blamed only when no peer is awaited (issue 25
/// item 4; `dplay join` and `dplay fs join`).
pub(crate) fn pending_error(
    host: SocketAddr,
    local: Dpnid,
    instruction: bool,
    peers: &[String],
    timeout: impl std::fmt::Display,
) -> anyhow::Error {
    let mut waits = Vec::new();
    if instruction {
        waits.push("the host's DN_INSTRUCT_CONNECT".to_owned());
    }
    if !peers.is_empty() {
        waits.push(format!(
            "{} to connect to us, which the host is checking (a player that crashed is removed within seconds: try again, or give a longer --timeout)",
            peers.join(", ")
        ));
        return anyhow::anyhow!(
            "{host} answered (we are {local}), but after {timeout} we still wait for {}",
            waits.join(" and ")
        );
    }
    anyhow::anyhow!(
        "{host} answered (we are {local}), but after {timeout} we still wait for {}: check that UDP from the other players reaches this machine",
        waits.join(" and ")
    )
}

/// What is known when a join fails.
struct JoinFailure {
    host: SocketAddr,
    /// The host answered our EnumQuery.
    enumerated: bool,
    /// Why the session ended, if it did.
    ended: Option<EndReason>,
    /// The last [`Event::JoinPending`]: our DPNID, whether the host's instruction is awaited,
    /// and the peers (named) that have not connected.
    pending: Option<(Dpnid, bool, Vec<String>)>,
    stop: Stop,
}

impl JoinFailure {
    /// One line saying what happened and what to do. "Check that a host runs there" only
    /// when nothing answered at all.
    fn error(self, timeout: Duration, name: impl Fn(Dpnid) -> String) -> anyhow::Error {
        let timeout = crate::duration::show(timeout);
        let host = self.host;
        match (self.ended, self.pending, self.stop) {
            (Some(EndReason::Refused(code)), ..) => {
                anyhow::anyhow!("{host} refused the join with {code}: {}", refusal_hint(code))
            }
            (Some(EndReason::SigningRequired(SigningMode::Fast)), ..) => anyhow::anyhow!(
                "{host} requires fast signing (DPNSESSION_FAST_SIGNED): join with --signing fast"
            ),
            (Some(EndReason::SigningRequired(SigningMode::Full)), ..) => {
                live::full_signing_error().context(format!("{host} requires full signing"))
            }
            (Some(EndReason::ConnectAttemptFailed { peer }), ..) => anyhow::anyhow!(
                "{host} answered, but peer {} ({peer}) never connected to us: check that UDP from the other players reaches this machine",
                name(peer)
            ),
            (Some(EndReason::NoAnswer), ..) if self.enumerated => anyhow::anyhow!(
                "{host} answered the enumeration but not the connection attempt: check that the port is not filtered"
            ),
            (Some(EndReason::NoAnswer), ..) => anyhow::anyhow!(
                "no answer from {host}: check that a host runs there and the address and port are right (dplay enum {host})"
            ),
            (Some(reason), ..) => anyhow::anyhow!("could not join {host}: {reason}"),
            (None, _, Stop::Interrupted) => anyhow::anyhow!("interrupted before the join completed"),
            (None, Some((local, instruction, peers)), _) => {
                pending_error(host, local, instruction, &peers, timeout)
            }
            (None, None, _) if self.enumerated => anyhow::anyhow!(
                "{host} answered the enumeration, but the join did not complete within {timeout}"
            ),
            (None, None, _) => anyhow::anyhow!(
                "no answer from {host} within {timeout}: check that a host runs there and the address and port are right (dplay enum {host})"
            ),
        }
    }
}

/// What to do about a DN_CONNECT_FAILED code (MC-DPL8CS 2.2.1.3).
pub(crate) fn refusal_hint(code: ResultCode) -> &'static str {
    match code {
        ResultCode::DPNERR_INVALIDPASSWORD => "check --password",
        DPNERR_SESSIONFULL => "the session is full",
        ResultCode::DPNERR_INVALIDAPPLICATION => "check --app-guid",
        ResultCode::DPNERR_INVALIDINSTANCE => "the session was restarted: try again",
        ResultCode::DPNERR_INVALIDINTERFACE => {
            "a client joins a server and a peer a host: the session kind differs"
        }
        ResultCode::DPNERR_ALREADYCLOSING => "the host is closing or migrating: try again",
        ResultCode::DPNERR_INVALIDPARAM => "a name or data is over the host's limit (docs/limits.md)",
        _ => "the host declined",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(
        ended: Option<EndReason>,
        pending: Option<(Dpnid, bool, Vec<String>)>,
        enumerated: bool,
    ) -> String {
        let host = SocketAddr::from(([192, 0, 2, 1], 6073));
        let failure = JoinFailure { host, enumerated, ended, pending, stop: Stop::Deadline };
        format!("{:#}", failure.error(Duration::from_secs(10), |d| format!("player{}", d.0)))
    }

    /// Issue 13 item 8: each failure says what happened; "check that a host runs there" only
    /// when nothing answered.
    #[test]
    fn join_errors_say_what_happened() {
        let answered = [
            (Some(EndReason::Refused(DPNERR_SESSIONFULL)), None, "refused the join with DPNERR_SESSIONFULL"),
            (
                Some(EndReason::Refused(ResultCode::DPNERR_INVALIDPASSWORD)),
                None,
                "DPNERR_INVALIDPASSWORD: check --password",
            ),
            (Some(EndReason::SigningRequired(SigningMode::Fast)), None, "requires fast signing"),
            (Some(EndReason::SigningRequired(SigningMode::Full)), None, "full signing"),
            (
                Some(EndReason::ConnectAttemptFailed { peer: Dpnid(7) }),
                None,
                "answered, but peer player7 (0x00000007) never connected to us",
            ),
            (
                None,
                Some((Dpnid(9), false, vec!["alice (0x00000003)".to_owned()])),
                "answered (we are 0x00000009), but after 10s we still wait for alice (0x00000003) to connect to us",
            ),
        ];
        for (ended, pending, expected) in answered {
            let text = message(ended, pending, true);
            assert!(text.contains(expected), "{text}");
            assert!(!text.contains("check that a host runs there"), "{text}");
        }
        assert!(message(None, None, true).contains("answered the enumeration"));
        for ended in [None, Some(EndReason::NoAnswer)] {
            assert!(message(ended, None, false).contains("check that a host runs there"));
        }
    }
}
