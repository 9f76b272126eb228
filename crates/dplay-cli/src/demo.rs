//! `dplay demo`: in one process, on loopback, with no setup. A host, an existing client and a
//! new client join one DirectPlay 8 session over real sockets (the three parties of seed 003);
//! then an add-on session: an observer and a player who flies for a few seconds. Prints the
//! timeline of every datagram (the time it was received, from, to, the spec's message name),
//! in an order where every message follows what caused it, and a summary of the
//! checks; exits 0 only when every one passed.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use clap::Args;
use crossbeam_channel::{Receiver, Sender};
use dplay_addon::{ClientConfig, Dialect, HostConfig, HostPolicy, Role};
use dplay_runtime::{
    AddonCommand, AddonEvent, AddonProtocol, AddonRole, Direction, Dp8Command, Dp8Event, Dp8Protocol,
    Protocol, Runtime, RuntimeConfig, Tap,
};
use dplay_session::Event;
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

use crate::live;
use crate::message::Carrier;

/// `dplay demo` options.
#[derive(Args)]
pub(crate) struct DemoArgs {
    /// How long the add-on player flies (seconds, or a unit such as 5s; 0.5 s to 60 s).
    #[arg(long, value_name = "TIME", default_value = "3", value_parser = parse_fly)]
    fly: Duration,
}

/// The shortest and longest flights `--fly` takes: others are refused, not clamped (issue 25
/// item 18).
const FLIGHT: std::ops::RangeInclusive<Duration> = Duration::from_millis(500)..=Duration::from_secs(60);

fn parse_fly(text: &str) -> Result<Duration, String> {
    let d = crate::duration::parse(text)?;
    if !FLIGHT.contains(&d) {
        return Err(format!("`{}` is outside 0.5s to 60s, the flights the demo takes", text.trim()));
    }
    Ok(d)
}

/// One datagram as one runtime's tap saw it.
struct Seen {
    at: Instant,
    direction: Direction,
    local: SocketAddr,
    remote: SocketAddr,
    bytes: Vec<u8>,
}

/// One datagram of the timeline: when it was sent and, when it arrived, when it was received.
struct Datagram {
    sent: Instant,
    received: Option<Instant>,
    from: SocketAddr,
    to: SocketAddr,
    bytes: Vec<u8>,
}

impl Datagram {
    /// Where it goes in the timeline: when it was received (else sent). A reply is sent after
    /// its request was received, so it is received after it too: every message comes after
    /// what caused it, which send times alone do not give (the threads' sends interleave).
    fn order(&self) -> Instant {
        self.received.unwrap_or(self.sent)
    }
}

/// Pairs each datagram received with its send (first unpaired send with the same sender,
/// receiver and bytes), and orders them by [`Datagram::order`].
fn timeline(seen: Vec<Seen>) -> Vec<Datagram> {
    let (sent, received): (Vec<Seen>, Vec<Seen>) =
        seen.into_iter().partition(|s| s.direction == Direction::Sent);
    let mut datagrams: Vec<Datagram> = Vec::with_capacity(sent.len());
    let mut unpaired: HashMap<(SocketAddr, SocketAddr, Vec<u8>), VecDeque<usize>> = HashMap::new();
    let mut sent = sent;
    sent.sort_by_key(|s| s.at);
    for s in sent {
        unpaired.entry((s.local, s.remote, s.bytes.clone())).or_default().push_back(datagrams.len());
        datagrams.push(Datagram { sent: s.at, received: None, from: s.local, to: s.remote, bytes: s.bytes });
    }
    let mut received = received;
    received.sort_by_key(|r| r.at);
    for r in received {
        let index = unpaired.get_mut(&(r.remote, r.local, r.bytes)).and_then(VecDeque::pop_front);
        if let Some(d) = index.and_then(|i| datagrams.get_mut(i)) {
            d.received = Some(r.at);
        }
    }
    datagrams.sort_by_key(Datagram::order);
    datagrams
}

/// Records every datagram a runtime sends and receives, with the instant its tap saw it.
struct TimelineTap(Sender<Seen>);

impl Tap for TimelineTap {
    fn datagram(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        #[allow(clippy::disallowed_methods)] // the timeline's clock
        let at = Instant::now();
        let _ = self.0.send(Seen { at, direction, local, remote, bytes: data.to_vec() });
    }
}

struct Demo {
    start: Instant,
    tap: Sender<Seen>,
    names: BTreeMap<SocketAddr, &'static str>,
    /// When the new client started (seed 003's step 1); earlier datagrams have no step.
    new_from: Option<Instant>,
    checks: Vec<(&'static str, bool)>,
}

impl Demo {
    fn spawn<P: Protocol>(
        &mut self,
        name: &'static str,
        make: impl FnOnce(SocketAddr) -> P,
    ) -> anyhow::Result<Runtime<P>> {
        let mut config = RuntimeConfig::new(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
        config.tap = Some(Box::new(TimelineTap(self.tap.clone())));
        let runtime = Runtime::spawn_with(config, make)?;
        self.names.insert(runtime.local_addr(), name);
        Ok(runtime)
    }

    fn dp8(&mut self, name: &'static str) -> anyhow::Result<Runtime<Dp8Protocol>> {
        let start = self.start;
        self.spawn(name, |local| {
            let mut c = live::session_config(local, name, &live::SessionArgs::default());
            c.session_name = "dplay demo".into();
            c.application_guid = DXDIAG_APPLICATION_GUID;
            Dp8Protocol::new(c, start)
        })
    }

    fn addon(&mut self, name: &'static str, role: AddonRole) -> anyhow::Result<Runtime<AddonProtocol>> {
        let start = self.start;
        self.spawn(name, |local| {
            let mut c = live::session_config(local, name, &live::SessionArgs::default());
            c.session_name = "dplay demo add-on".into();
            AddonProtocol::new(c, role, start)
        })
    }

    fn check(&mut self, what: &'static str, ok: bool) {
        self.checks.push((what, ok));
    }
}

/// Waits up to five seconds for an event `f` accepts.
fn saw<E>(events: &Receiver<E>, mut f: impl FnMut(&E) -> bool) -> bool {
    let timeout = crossbeam_channel::after(Duration::from_secs(5));
    loop {
        crossbeam_channel::select! {
            recv(events) -> e => match e {
                Ok(e) if f(&e) => return true,
                Ok(_) => {}
                Err(_) => return false,
            },
            recv(timeout) -> _ => return false,
        }
    }
}

/// The instance GUID of the first EnumResponse, within five seconds.
fn wait_for_instance(events: &Receiver<Dp8Event>) -> Option<uuid::Uuid> {
    let mut found = None;
    saw(events, |e| match e {
        Dp8Event::Session(Event::HostFound { response, .. }) => {
            found = Some(response.application_instance_guid);
            true
        }
        _ => false,
    });
    found
}

/// Seed 003's step (4.3, "New Client Joins a Game Session with an Existing Client") that a
/// datagram from `from` to `to` named `message` is part of, if any.
fn seed_003_step(from: &str, to: &str, message: &str) -> Option<u8> {
    let has = |part: &str| message.contains(part);
    Some(match (from, to) {
        ("new", "host") if has("EnumQuery") => 1,
        ("host", "new") if has("EnumResponse") => 2,
        ("new", "host") if message == "CONNECT" => 3,
        ("host", "new") if message == "CONNECTED" => 4,
        ("new", "host") if message == "CONNECTED" => 5,
        ("new", "host") | ("host", "new") if has("KEEPALIVE") => 6,
        ("new", "host") if has("PLAYER_CONNECT_INFO") => 7,
        ("host", "new") if has("SEND_CONNECT_INFO") => 8,
        ("host", "existing") if has("ADD_PLAYER") => 8,
        ("new", "existing") if has("PATH_TEST") => 9,
        ("new", "host") if has("ACK_CONNECT_INFO") => 10,
        ("host", "existing") if has("INSTRUCT_CONNECT") => 11,
        ("host", "new") if has("INSTRUCT_CONNECT") => 12,
        ("existing", "new") if message == "CONNECT" => 13,
        ("new", "existing") if message == "CONNECTED" => 14,
        ("existing", "new") if message == "CONNECTED" => 15,
        ("existing", "new") | ("new", "existing") if has("KEEPALIVE") => 16,
        ("existing", "new") if has("SEND_PLAYER_D") => 17,
        ("host" | "new" | "existing", "host" | "new" | "existing") if message == "SACK" => 18,
        _ => return None,
    })
}

fn added(name: &'static str) -> impl FnMut(&Dp8Event) -> bool {
    move |e| matches!(e, Dp8Event::Session(Event::PlayerAdded { name: n, .. }) if n == name)
}

/// Runs the demo; true when every check passed.
pub(crate) fn run(args: DemoArgs) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the demo's start
    let start = Instant::now();
    let (tap, tapped) = crossbeam_channel::unbounded();
    let mut d = Demo { start, tap, names: BTreeMap::new(), new_from: None, checks: Vec::new() };

    // Seed 003's parties: a host, a client already in the session, a new client.
    let host = d.dp8("host")?;
    host.command(Dp8Command::Host)?;
    let ok = saw(host.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })));
    d.check("the host created the session", ok);
    let existing = d.dp8("existing")?;
    existing.command(Dp8Command::Join { host: host.local_addr(), instance: None })?;
    let ok = saw(existing.events(), |e| matches!(e, Dp8Event::NameTable(_)));
    d.check("the existing client joined", ok);
    let ok = saw(host.events(), added("existing"));
    d.check("the host added the existing client", ok);
    let new = d.dp8("new")?;
    #[allow(clippy::disallowed_methods)] // where seed 003 starts
    let new_from = Instant::now();
    d.new_from = Some(new_from);
    new.command(Dp8Command::EnumHosts { target: host.local_addr(), application_guid: None })?;
    let instance = wait_for_instance(new.events());
    d.check("the new client found the session (EnumQuery, EnumResponse)", instance.is_some());
    new.command(Dp8Command::Join { host: host.local_addr(), instance })?;
    let ok = saw(new.events(), |e| matches!(e, Dp8Event::NameTable(t) if t.len() == 3));
    d.check("the new client joined with all three in its name table", ok);
    let ok = saw(host.events(), added("new"));
    d.check("the host added the new client", ok);
    let ok = saw(existing.events(), added("new"));
    d.check("the existing client learnt of the new one", ok);
    new.command(Dp8Command::Chat("hello from the new client".into()))?;
    let ok = saw(existing.events(), |e| matches!(e, Dp8Event::Session(Event::Chat { .. })));
    d.check("the existing client got the new client's chat", ok);

    // The add-on: a host, an observer, and a player flying the circuit.
    let policy = HostPolicy::default();
    let fs_host = d.addon(
        "fs-host",
        AddonRole::Host(HostConfig::new(dplay_addon::Dialect::Fs98, Role::Observer, policy)),
    )?;
    fs_host.command(AddonCommand::Session(Dp8Command::Host))?;
    let observer = d.addon("observer", AddonRole::Client(ClientConfig::new(Role::Observer)))?;
    observer
        .command(AddonCommand::Session(Dp8Command::Join { host: fs_host.local_addr(), instance: None }))?;
    let ok = saw(observer.events(), |e| matches!(e, AddonEvent::Addon(dplay_addon::Event::Joined { .. })));
    d.check("the observer was accepted", ok);
    let player = d.addon("player", AddonRole::Client(ClientConfig::new(Role::Player)))?;
    let (p, v) = crate::fs::circuit(Duration::ZERO);
    player.command(AddonCommand::SetPosition(p, Some(v)))?;
    player.command(AddonCommand::Session(Dp8Command::Join { host: fs_host.local_addr(), instance: None }))?;
    let ok = saw(player.events(), |e| matches!(e, AddonEvent::Addon(dplay_addon::Event::Joined { .. })));
    d.check("the player was accepted", ok);
    #[allow(clippy::disallowed_methods)] // the flight's clock
    let took_off = Instant::now();
    let fly = args.fly;
    // Said before the flight, so that a long one is not a silent one (issue 25 item 16).
    let flight = crate::duration::show(fly);
    writeln!(std::io::stdout(), "the player flies the circuit for {flight}; the timeline follows")?;
    let mut positions = 0;
    let ticks = crossbeam_channel::tick(Duration::from_millis(250));
    let landing = crossbeam_channel::after(fly);
    loop {
        crossbeam_channel::select! {
            recv(ticks) -> now => if let Ok(now) = now {
                let (p, v) = crate::fs::circuit(now.saturating_duration_since(took_off));
                player.command(AddonCommand::SetPosition(p, Some(v)))?;
            },
            recv(observer.events()) -> e => if let Ok(AddonEvent::Position { .. }) = e { positions += 1 },
            recv(landing) -> _ => break,
        }
    }
    d.check("the observer saw the player's positions, about four a second", positions >= 2 * fly.as_secs());

    for r in [&player, &observer] {
        r.command(AddonCommand::Session(Dp8Command::Leave))?;
    }
    for r in [&new, &existing] {
        r.command(Dp8Command::Leave)?;
    }
    // The goodbyes (END_OF_STREAM and its acknowledgements) take a few round trips on loopback:
    // wait until the wire is quiet, no longer.
    let mut seen = Vec::new();
    let give_up = crossbeam_channel::after(GOODBYE_LIMIT);
    loop {
        crossbeam_channel::select! {
            recv(tapped) -> s => match s {
                Ok(s) => seen.push(s),
                Err(_) => break,
            },
            recv(give_up) -> _ => break,
            default(QUIET) => break,
        }
    }
    drop((player, observer, fs_host, new, existing, host));
    seen.extend(tapped.try_iter());
    print(&d, seen, positions)
}

/// The wire is quiet once no datagram went for this long.
const QUIET: Duration = Duration::from_millis(50);
/// At most this long is spent waiting for the goodbyes.
const GOODBYE_LIMIT: Duration = Duration::from_millis(500);

/// Prints the timeline and the summary.
fn print(d: &Demo, seen: Vec<Seen>, positions: u64) -> anyhow::Result<bool> {
    let mut out = std::io::stdout().lock();
    let name = |a: &SocketAddr| d.names.get(a).copied().unwrap_or("?");
    let datagrams = timeline(seen);
    let mut steps = std::collections::BTreeSet::new();
    writeln!(out, "    time  from      -> to        message (seed 003 step)")?;
    for s in &datagrams {
        let record = crate::decode::decode_bytes(s.bytes.clone(), Carrier::Datagram, Dialect::Fs98, true);
        let message = match &record.result {
            Ok(m) => match crate::render::addon_summary(&record) {
                Some(addon) => format!("{} {addon}", m.name()),
                None => m.name().to_owned(),
            },
            Err(e) => format!("(undecoded: {e})"),
        };
        let (from, to) = (name(&s.from), name(&s.to));
        let step = d.new_from.filter(|f| s.sent >= *f).and_then(|_| seed_003_step(from, to, &message));
        let step = step.map(|n| {
            steps.insert(n);
            format!("  [step {n}]")
        });
        let lost = if s.received.is_none() { "  (not received)" } else { "" };
        let t = s.order().saturating_duration_since(d.start).as_secs_f64();
        writeln!(out, "{t:8.4}s  {from:<9} -> {to:<9} {message}{}{lost}", step.unwrap_or_default())?;
    }
    let missing: Vec<u8> = (1..=18).filter(|n| !steps.contains(n)).collect();
    writeln!(out, "\n{} datagrams; {positions} positions seen by the observer", datagrams.len())?;
    let mut checks = d.checks.clone();
    checks.push(("every step of seed 003 (1-18) was seen on the wire", missing.is_empty()));
    if !missing.is_empty() {
        let missing: Vec<String> = missing.iter().map(u8::to_string).collect();
        writeln!(out, "seed 003 steps not seen: {}", missing.join(", "))?;
    }
    let mut all = true;
    for (what, ok) in &checks {
        all &= ok;
        writeln!(out, "  [{}] {what}", if *ok { "ok" } else { "FAILED" })?;
    }
    writeln!(out, "{}", if all { "demo: every step happened" } else { "demo: some steps did not happen" })?;
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(at: Instant, direction: Direction, local: &str, remote: &str, bytes: &[u8]) -> Seen {
        let (local, remote) = (local.parse().expect("addr"), remote.parse().expect("addr"));
        Seen { at, direction, local, remote, bytes: bytes.to_vec() }
    }

    /// The reply's send was stamped before the request's (the sending thread was slow to
    /// stamp), but it was received after: the timeline puts the request first, and pairs
    /// identical datagrams in order.
    #[test]
    fn a_reply_follows_its_request() {
        #[allow(clippy::disallowed_methods)] // any instant will do as the origin
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let (a, b) = ("127.0.0.1:1000", "127.0.0.1:2000");
        let taps = vec![
            seen(ms(5), Direction::Sent, a, b, b"request"),
            seen(ms(3), Direction::Received, b, a, b"request"),
            seen(ms(4), Direction::Sent, b, a, b"reply"),
            seen(ms(6), Direction::Received, a, b, b"reply"),
            seen(ms(7), Direction::Sent, a, b, b"same"),
            seen(ms(8), Direction::Sent, a, b, b"same"),
            seen(ms(9), Direction::Received, b, a, b"same"),
        ];
        let datagrams = timeline(taps);
        let lines: Vec<(&[u8], Option<Instant>)> =
            datagrams.iter().map(|d| (d.bytes.as_slice(), d.received)).collect();
        // The 3 ms receive is paired with the request sent "at 5 ms": its tap stamped late. The
        // first "same" received pairs with the first sent; the second is not received.
        assert_eq!(
            lines,
            [
                (b"request".as_slice(), Some(ms(3))),
                (b"reply", Some(ms(6))),
                (b"same", None),
                (b"same", Some(ms(9))),
            ]
        );
    }
}
