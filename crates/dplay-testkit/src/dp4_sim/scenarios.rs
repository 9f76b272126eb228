//! Whole DirectPlay 4 sessions on a [`Dp4Net`], covering every message our session logic
//! sends: enumeration (MC-DPL4CS 3.1.4.1, 3.2.5.3), joins (4.3, 3.2.5.4-3.2.5.6), player
//! messages small, large and wrapped (3.1.4.16, 3.1.4.18), name-table changes (3.1.5.12-
//! 3.1.5.22), ping (3.1.6.2, 3.2.6.2), leave and host migration (3.1.4.5, 3.1.7.1),
//! refusals, a session over the reliable protocol (MC-DPL4R) and a client/server session. Each returns an error naming
//! what did not happen as expected.

use std::time::{Duration, Instant};

use dplay_wire::dp4::enumeration::EnumSessionsFlags;
use dplay_wire::dp4::join::DPERR_NONEWPLAYERS;
use dplay_wire::dp4::session::SessionFlags;
use uuid::Uuid;

use super::Dp4Net;
use dplay_session::dp4::{
    DPERR_INVALIDPASSWORD, DPID_ALLPLAYERS, DPID_SERVERPLAYER, Dp4Event, EndReason, EnumRequest, HostConfig,
    JoinError, Role,
};

mod groups;
pub use groups::groups;

/// The application GUID the scenarios host.
pub const APP: Uuid = uuid::uuid!("5bfdb060-06a4-11d0-9c4f-00a0c905425e");

/// A scenario: drives a fresh network and checks the outcome.
pub type Scenario = fn(Instant) -> Result<Dp4Net, String>;

/// Every scenario, by name.
pub const ALL: &[(&str, Scenario)] = &[
    ("enumeration", enumeration),
    ("join_and_messages", join_and_messages),
    ("no_message_id", no_message_id),
    ("keep_alive", keep_alive),
    ("host_migration", host_migration),
    ("refusals", refusals),
    ("dead_member", dead_member),
    ("explicit_addresses", explicit_addresses),
    ("reliable_protocol", reliable_protocol),
    ("groups", groups),
    ("client_server", client_server),
];

fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what.to_owned()) }
}

fn request(flags: EnumSessionsFlags, application_guid: Uuid, password: Option<&str>) -> EnumRequest {
    EnumRequest { application_guid, password: password.map(str::to_owned), flags }
}

fn found(net: &Dp4Net, i: usize) -> usize {
    net.events.get(i).map_or(0, |e| e.iter().filter(|e| matches!(e, Dp4Event::SessionFound(_))).count())
}

fn joined(net: &Dp4Net, i: usize) -> bool {
    net.nodes.get(i).is_some_and(|n| matches!(n.role(), Role::Member | Role::Host))
}

fn player(net: &mut Dp4Net, i: usize, name: &str) -> Result<u32, String> {
    net.create_player(i, name)?.ok_or_else(|| format!("node {i} could not create {name}"))
}

/// MC-DPL4CS 3.1.4.1, 3.2.5.3: broadcast and unicast ENUMSESSIONS with and without passwords
/// and application GUIDs, against an open session and a password-protected one; each host
/// answers only what it should with ENUMSESSIONSREPLY.
pub fn enumeration(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(3, start)?;
    net.host(
        0,
        host_config("Open", APP, |c| {
            c.max_players = 4;
            c.application_defined = [1, 2, 3, 4];
        }),
    )?;
    let other = Uuid::from_u128(0x1234);
    net.host(
        1,
        host_config("Protected", other, |c| {
            c.password = Some("sesame".into());
            c.flags = SessionFlags::PASSWORD_REQUIRED;
        }),
    )?;
    let avail = EnumSessionsFlags::AVAILABLE;
    let all = EnumSessionsFlags::ALL;
    net.enumerate(2, None, &request(avail, APP, None))?;
    check(found(&net, 2) == 1, "broadcast for APP finds one session")?;
    net.enumerate(2, None, &request(all, Uuid::nil(), None))?;
    check(found(&net, 2) == 2, "GUID_NULL without password finds only the open session")?;
    let pr = all | EnumSessionsFlags::PASSWORD_REQUIRED;
    net.enumerate(2, None, &request(pr, Uuid::nil(), None))?;
    check(found(&net, 2) == 4, "PR finds both sessions")?;
    net.enumerate(2, Some(1), &request(all, other, Some("sesame")))?;
    check(found(&net, 2) == 5, "the right password finds the protected session")?;
    net.enumerate(2, Some(1), &request(all, other, Some("wrong")))?;
    check(found(&net, 2) == 5, "a wrong password finds nothing")?;
    net.enumerate(2, Some(0), &request(avail, other, None))?;
    check(found(&net, 2) == 5, "another application's GUID finds nothing")?;
    net.advance(Duration::from_secs(6))?;
    check(net.saw(2, |e| *e == Dp4Event::EnumDone), "enumeration ends")?;
    Ok(net)
}

/// MC-DPL4CS 4.3, 3.2.5.4-3.2.5.6, 3.1.4.16, 3.1.4.18, 3.1.5.12, 3.1.5.18-3.1.5.22, 3.1.5.26,
/// 3.1.4.5: a host and three members join (ADDFORWARD/ACK to the established ones), create
/// players (CREATEPLAYER, CREATEPLAYERVERIFY), exchange small and large messages over UDP
/// (fragmented beyond the MTU) and TCP, to one player and to all; change player data and names, chat, change the session description, and
/// one member leaves.
pub fn join_and_messages(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(4, start)?;
    net.host(0, host_config("Friday flight", APP, |c| c.max_players = 8))?;
    for i in 1..4 {
        net.join(i, 0, None)?;
        check(joined(&net, i), "every member joins")?;
    }
    let ids: Vec<u32> = ["host pilot", "alice", "bob", "carol"]
        .iter()
        .enumerate()
        .map(|(i, n)| player(&mut net, i, n))
        .collect::<Result<_, _>>()?;
    let (h, a, b, c) = match ids.as_slice() {
        [h, a, b, c] => (*h, *a, *b, *c),
        _ => return Err("four players".into()),
    };
    net.send(1, a, b, b"small over udp", false)?;
    net.send(2, b, a, b"small over tcp", true)?;
    let large: Vec<u8> = (0..6000u32).map(|i| (i % 251) as u8).collect();
    net.send(0, h, c, &large, false)?;
    net.send(3, c, h, &large, true)?;
    net.send(3, c, DPID_ALLPLAYERS, b"to everyone", true)?;
    net.send(1, a, DPID_ALLPLAYERS, b"to everyone, unguaranteed", false)?;
    check(
        net.saw(3, |e| matches!(e, Dp4Event::Message { data, .. } if *data == large)),
        "large message arrives",
    )?;
    let n1 = net.nodes.get_mut(1).ok_or("node 1")?;
    n1.set_player_data(a, &[1, 2, 3, 4]).map_err(|e| e.to_string())?;
    n1.set_player_name(a, Some("Al"), Some("Alice Long")).map_err(|e| e.to_string())?;
    n1.send_chat(a, b, "cleared to land").map_err(|e| e.to_string())?;
    net.run()?;
    let host = net.nodes.first_mut().ok_or("node 0")?;
    host.set_session(6, SessionFlags::empty()).map_err(|e| e.to_string())?;
    net.run()?;
    check(net.saw(2, |e| matches!(e, Dp4Event::Chat { .. })), "chat arrives")?;
    check(net.saw(3, |e| matches!(e, Dp4Event::SessionDescChanged(_))), "description change arrives")?;
    net.leave(2)?;
    check(net.saw(1, |e| *e == Dp4Event::PlayerLeft { id: b }), "the leaver's player is gone")?;
    Ok(net)
}

/// MC-DPL4CS 1.3 (NM), 2.2.45, 2.2.47: without message IDs, datagram and stream player
/// messages carry only the data; data that would put 'play' at offset 20 travels in
/// PLAYERWRAPPER.
pub fn no_message_id(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(2, start)?;
    net.host(0, host_config("NM", APP, |c| c.flags = SessionFlags::NO_MESSAGE_ID))?;
    net.join(1, 0, None)?;
    let a = player(&mut net, 0, "a")?;
    let b = player(&mut net, 1, "b")?;
    net.send(0, a, b, b"no ids", false)?;
    net.send(1, b, a, b"no ids, guaranteed", true)?;
    // 'play' where a system message has its signature: wrapped in PLAYERWRAPPER (3.1.4.16.2).
    net.send(0, a, b, b"twenty bytes of textplay, over UDP", false)?;
    net.send(1, b, a, b"play, over TCP", true)?;
    let wrapped =
        |e: &Dp4Event| matches!(e, Dp4Event::Message { from: None, data, .. } if data.starts_with(b"play"));
    check(net.saw(0, wrapped), "a wrapped message arrives")?;
    Ok(net)
}

/// MC-DPL4CS 3.1.2.5, 3.2.5.10, 3.1.5.31: with KA, PINGs every 35 s are answered.
pub fn keep_alive(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(3, start)?;
    net.host(0, host_config("KA", APP, |c| c.flags = SessionFlags::KEEP_ALIVE))?;
    net.join(1, 0, None)?;
    net.join(2, 0, None)?;
    net.advance(Duration::from_secs(80))?;
    check((0..3).all(|i| net.nodes.get(i).is_some_and(|n| n.players().len() == 3)), "everyone stays")?;
    Ok(net)
}

/// MC-DPL4CS 3.1.7.1, 2.2.33: with MH, the host leaves; the lowest system player sends
/// IAMNAMESERVER and then hands out IDs.
pub fn host_migration(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(3, start)?;
    net.host(0, host_config("MH", APP, |c| c.flags = SessionFlags::MIGRATE_HOST))?;
    net.join(1, 0, None)?;
    net.join(2, 0, None)?;
    player(&mut net, 0, "host pilot")?;
    net.leave(0)?;
    let hosts: Vec<usize> =
        (1..3).filter(|&i| net.nodes.get(i).is_some_and(|n| n.role() == Role::Host)).collect();
    let [new_host] = hosts.as_slice() else { return Err(format!("one new host, got {hosts:?}")) };
    let other = 3 - new_host;
    check(net.saw(other, |e| matches!(e, Dp4Event::HostMigrated { local: false, .. })), "migration seen")?;
    player(&mut net, other, "late")?;
    Ok(net)
}

/// MC-DPL4CS 3.2.5.4, 3.1.5.8: refused joins and players: a full session and join-disabled
/// (REQUESTPLAYERREPLY with DPERR_NONEWPLAYERS), a wrong password (ADDFORWARDREPLY), new
/// players disabled (a member's REQUESTPLAYERID refused).
pub fn refusals(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(2, start)?;
    let full = host_config("Full", APP, |c| {
        c.max_players = 1;
        c.password = Some("sesame".into());
    });
    net.host(0, full)?;
    player(&mut net, 0, "host pilot")?;
    net.join(1, 0, Some("sesame"))?;
    let refused = Dp4Event::JoinFailed(JoinError::Refused(DPERR_NONEWPLAYERS));
    check(net.saw(1, |e| *e == refused), "full session refuses")?;
    host_session(&mut net, 8, SessionFlags::JOIN_DISABLED)?;
    net.join(1, 0, Some("sesame"))?;
    let refusals = net.events.get(1).map_or(0, |e| e.iter().filter(|e| **e == refused).count());
    check(refusals == 2, "join disabled refuses")?;
    host_session(&mut net, 8, SessionFlags::empty())?;
    net.join(1, 0, Some("open"))?;
    let bad = Dp4Event::JoinFailed(JoinError::Refused(DPERR_INVALIDPASSWORD));
    check(net.saw(1, |e| *e == bad), "wrong password refused")?;
    host_session(&mut net, 8, SessionFlags::NEW_PLAYERS_DISABLED)?;
    net.join(1, 0, Some("sesame"))?;
    check(joined(&net, 1), "instances still join with NP")?;
    check(net.create_player(1, "p")?.is_none(), "NP refuses a member's player")?;
    Ok(net)
}

/// MC-DPL4CS 1.3, 2.2.5 (CS), 2.2.28 note: a client/server session. Clients get
/// ENUMPLAYERSREPLY with the system players and the server player (DPID_SERVERPLAYER, 1);
/// a client's message to the server player, to everyone and to the other client's player goes
/// to the server, which relays what is not for it; the server leaves and the session ends
/// for its clients (no migration).
pub fn client_server(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(3, start)?;
    net.host(0, host_config("CS", APP, |c| c.flags = SessionFlags::CLIENT_SERVER))?;
    check(player(&mut net, 0, "server")? == DPID_SERVERPLAYER, "the server player is 1")?;
    net.join(1, 0, None)?;
    net.join(2, 0, None)?;
    let a = player(&mut net, 1, "alice")?;
    let b = player(&mut net, 2, "bob")?;
    let knows =
        |net: &Dp4Net, i: usize, id: u32| net.nodes.get(i).is_some_and(|n| n.players().contains_key(&id));
    check(knows(&net, 1, DPID_SERVERPLAYER) && !knows(&net, 1, b), "alice sees the server player only")?;
    net.send(1, a, DPID_SERVERPLAYER, b"to the server", true)?;
    net.send(2, b, DPID_ALLPLAYERS, b"to everyone", false)?;
    net.send(1, a, b, b"to bob, through the server", true)?;
    net.send(0, DPID_SERVERPLAYER, a, b"from the server", false)?;
    let got = |net: &Dp4Net, i: usize, text: &[u8]| {
        net.saw(i, |e| matches!(e, Dp4Event::Message { data, .. } if data == text))
    };
    check(got(&net, 0, b"to the server") && got(&net, 1, b"to everyone"), "messages arrive")?;
    check(got(&net, 2, b"to bob, through the server"), "relayed message arrives")?;
    net.leave(0)?;
    check(net.saw(1, |e| *e == Dp4Event::Ended(EndReason::HostLost)), "no migration")?;
    Ok(net)
}

fn host_session(net: &mut Dp4Net, max: u32, flags: SessionFlags) -> Result<(), String> {
    net.nodes.first_mut().ok_or("node 0")?.set_session(max, flags).map_err(|e| e.to_string())?;
    net.run()
}

/// MC-DPL4CS 3.2.6.2, 3.2.5.10, 3.1.5.32: a member whose replies are lost is dropped by the
/// host after 8 unanswered PINGs; when it pings the host again it is told YOUAREDEAD.
pub fn dead_member(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(3, start)?;
    net.host(0, host_config("KA", APP, |c| c.flags = SessionFlags::KEEP_ALIVE))?;
    net.join(1, 0, None)?;
    net.join(2, 0, None)?;
    net.cut.insert((1, 0));
    net.advance(Duration::from_secs(35 * 10))?;
    net.cut.clear();
    net.advance(Duration::from_secs(35 * 3))?;
    check(
        net.saw(1, |e| *e == Dp4Event::Ended(EndReason::YouAreDead)),
        "the dropped member is told it is dead",
    )?;
    Ok(net)
}

/// MC-DPL4CS 2.1, 2.2.6, 2.2.2: endpoints that write their own addresses (not 0.0.0.0) and
/// other game ports into the header SockAddr and SPData; peers answer there.
pub fn explicit_addresses(start: Instant) -> Result<Dp4Net, String> {
    let nodes = (0..3u16)
        .map(|i| {
            let ip = super::lan_ip(usize::from(i));
            let mut config = super::lan_config(usize::from(i));
            config.stream_addr = std::net::SocketAddrV4::new(ip, 2301 + i);
            config.datagram_addr = std::net::SocketAddrV4::new(ip, 2399 - i);
            (ip, config)
        })
        .collect();
    let mut net = Dp4Net::new(nodes, start)?;
    net.host(0, host_config("Addressed", APP, |c| c.flags = SessionFlags::KEEP_ALIVE))?;
    net.enumerate(1, Some(0), &request(EnumSessionsFlags::AVAILABLE, APP, None))?;
    check(found(&net, 1) == 1, "unicast enumeration finds the host")?;
    net.join(1, 0, None)?;
    net.join(2, 0, None)?;
    let a = player(&mut net, 1, "a")?;
    let b = player(&mut net, 2, "b")?;
    net.send(1, a, b, b"datagram", false)?;
    net.send(2, b, a, b"stream", true)?;
    net.advance(Duration::from_secs(40))?;
    check(
        net.saw(1, |e| matches!(e, Dp4Event::Message { data, .. } if data == b"stream")),
        "messages arrive",
    )?;
    Ok(net)
}

/// MC-DPL4CS 3.1.4.16, MC-DPL4R 1.3, 2.2, 3.1.4, 3.1.5: a session with
/// DPSESSION_DIRECTPLAYPROTOCOL and KA. The joins and name-table messages go over TCP as ever
/// (MC-DPL4R 1.3); then player messages (small and large, split into several frames,
/// guaranteed and not, to one player and to all, one starting with 'play' in a short-form
/// PLAYERWRAPPER) and PINGs travel as MC-DPL4R frames between the game sockets, acknowledged;
/// a frame lost in the middle of a message is resent (never NACKed: MC-DPL4R 6 <2>); one
/// member leaves.
pub fn reliable_protocol(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(3, start)?;
    let flags = SessionFlags::DIRECTPLAY_PROTOCOL | SessionFlags::KEEP_ALIVE;
    net.host(0, host_config("Reliable", APP, |c| c.flags = flags))?;
    net.join(1, 0, None)?;
    net.join(2, 0, None)?;
    let h = player(&mut net, 0, "host pilot")?;
    let a = player(&mut net, 1, "alice")?;
    let b = player(&mut net, 2, "bob")?;
    net.send(1, a, b, b"small, guaranteed", true)?;
    net.send(2, b, a, b"small, not guaranteed", false)?;
    let large: Vec<u8> = (0..6000u32).map(|i| (i % 251) as u8).collect();
    net.send(0, h, DPID_ALLPLAYERS, &large, true)?;
    // The second frame of this one is lost: the sender resends it, unasked (MC-DPL4R 3.1.5.3;
    // like Windows, we send no NACK: 6 <2>).
    net.lose.insert(net.captures.len() + 1);
    net.send(2, b, h, &large, false)?;
    net.send(1, a, h, b"play, wrapped inside a frame", true)?;
    net.advance(Duration::from_secs(40))?;
    let got = |net: &Dp4Net, i: usize, want: &[u8]| {
        net.saw(i, |e| matches!(e, Dp4Event::Message { data, .. } if data == want))
    };
    check(got(&net, 2, b"small, guaranteed") && got(&net, 1, b"small, not guaranteed"), "small messages")?;
    check(got(&net, 1, &large) && got(&net, 2, &large), "the large message reaches everyone")?;
    check(got(&net, 0, &large), "the large message repaired after a loss reaches the host")?;
    check(got(&net, 0, b"play, wrapped inside a frame"), "the wrapped message arrives")?;
    let stats: Vec<_> = net.nodes.iter().map(|n| n.reliable_stats().clone()).collect();
    check(stats.iter().all(|s| s.frames_sent > 0 && s.acks_sent > 0), "every node sends frames and ACKs")?;
    check(stats.iter().all(|s| s.nacks_sent == 0), "no NACK")?;
    check(stats.iter().any(|s| s.frames_resent > 0), "a resend")?;
    net.leave(2)?;
    net.advance(Duration::from_secs(1))?;
    check(net.saw(1, |e| *e == Dp4Event::PlayerLeft { id: b }), "the leaver's player is gone")?;
    Ok(net)
}

/// `HostConfig::new(name, application_guid)` changed by `edit`.
fn host_config(name: &str, application_guid: Uuid, edit: impl FnOnce(&mut HostConfig)) -> HostConfig {
    let mut config = HostConfig::new(name, application_guid);
    edit(&mut config);
    config
}
