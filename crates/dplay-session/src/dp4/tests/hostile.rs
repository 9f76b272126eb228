//! A hostile network (issue 14; docs/limits.md): replies go to the sender's IP address, not
//! the one a header names; replies to unknown sources are rate limited; a connection of no
//! known instance carries only small system messages; names and data over the limits are
//! refused and counted.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

use dplay_wire::dp4::enumeration::{EnumSessions, EnumSessionsFlags};
use dplay_wire::dp4::header::{SockAddrIn, Token};
use dplay_wire::dp4::join::{RequestPlayerFlags, RequestPlayerId};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::player_message::{PlayerIds, PlayerMessage};
use dplay_wire::{Blob, WideString, Wire};

use super::net::{APP, Net, config, session, session_of, stream};
use crate::dp4::{CommandError, DPERR_INVALIDPARAMS, Dp4Session, DropReason, StreamError, TcpStatus, Via};

/// A system message from whoever, its header naming `header` as the sender's listener.
fn message(header: SocketAddrV4, body: Dp4Body) -> Vec<u8> {
    Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::new(header), 14, body).to_vec().unwrap()
}

fn request_player_id(header: SocketAddrV4) -> Vec<u8> {
    message(header, Dp4Body::RequestPlayerId(RequestPlayerId { flags: RequestPlayerFlags::SYSTEM_PLAYER }))
}

fn enum_sessions(header: SocketAddrV4) -> Vec<u8> {
    let body = EnumSessions { application_guid: APP, flags: EnumSessionsFlags::ALL, password: None };
    message(header, Dp4Body::EnumSessions(body))
}

fn v4(a: &str) -> SocketAddrV4 {
    a.parse().unwrap()
}

/// The TCP destinations of everything `node` queued.
fn tcp_destinations(node: &mut Dp4Session) -> Vec<SocketAddr> {
    std::iter::from_fn(|| node.poll_transmit()).filter(|t| t.via == Via::Tcp).map(|t| t.to).collect()
}

/// MC-DPL4CS 2.2.6, 3.2.5.4 (issue 14): a REQUESTPLAYERID from 10.0.0.2 whose header names
/// 10.0.0.9 is answered at 10.0.0.2, on the header's port; a zero address means the sender's,
/// as Windows sends it. Only `follow_header_addresses` makes the host go to 10.0.0.9.
#[test]
fn replies_go_to_the_sender_not_the_header() {
    let mut net = Net::new(1);
    net.host(session("S"));
    let now = net.now;
    let from: SocketAddr = "10.0.0.2:40001".parse().unwrap();
    net.nodes[0].handle_tcp(now, 1, from, &request_player_id(v4("10.0.0.9:2345"))).unwrap();
    assert_eq!(tcp_destinations(&mut net.nodes[0]), ["10.0.0.2:2345".parse::<SocketAddr>().unwrap()]);
    net.nodes[0].handle_tcp(now, 2, from, &request_player_id(v4("0.0.0.0:2300"))).unwrap();
    assert_eq!(tcp_destinations(&mut net.nodes[0]), ["10.0.0.2:2300".parse::<SocketAddr>().unwrap()]);

    let mut follow = config(0);
    follow.limits.follow_header_addresses = true;
    let mut host = Dp4Session::new(follow).unwrap();
    host.host(now, session("S")).unwrap();
    host.handle_tcp(now, 1, from, &request_player_id(v4("10.0.0.9:2345"))).unwrap();
    assert_eq!(tcp_destinations(&mut host), ["10.0.0.9:2345".parse::<SocketAddr>().unwrap()]);
}

/// Issue 14: forged ENUMSESSIONS (UDP sources prove nothing) get at most
/// `replies_per_source` TCP replies per source and `replies_per_interval` in all per
/// interval; the rest are counted as rate limited. The next interval answers again.
#[test]
fn enumsessions_flood_is_rate_limited() {
    let mut net = Net::new(1);
    net.host(session("S"));
    let now = net.now;
    let limits = net.nodes[0].config.limits.clone();
    let one: SocketAddr = "10.0.0.7:2350".parse().unwrap();
    for _ in 0..100 {
        net.nodes[0].handle_udp(now, one, &enum_sessions(v4("10.0.0.7:2300")));
    }
    assert_eq!(tcp_destinations(&mut net.nodes[0]).len(), limits.replies_per_source as usize);
    for i in 0..500u32 {
        let from = SocketAddr::from((Ipv4Addr::from(0x0B00_0000 + i), 2350));
        net.nodes[0].handle_udp(now, from, &enum_sessions(v4("0.0.0.0:2300")));
    }
    let replies = tcp_destinations(&mut net.nodes[0]).len() + limits.replies_per_source as usize;
    assert_eq!(replies, limits.replies_per_interval as usize);
    assert_eq!(net.nodes[0].stats().dropped(DropReason::RateLimited), 600 - replies as u64);
    let later = now + limits.reply_interval;
    net.nodes[0].handle_udp(later, one, &enum_sessions(v4("10.0.0.7:2300")));
    assert_eq!(tcp_destinations(&mut net.nodes[0]).len(), 1);
}

/// Issue 14: on a connection of no known instance, a message without 'play' (a player
/// message) or larger than `max_unjoined_message` closes it; once a join's ADDFORWARDREQUEST
/// makes the sender known, its connection says so.
#[test]
fn unknown_connections_carry_small_system_messages_only() {
    let mut net = Net::new(2);
    net.host(session("S"));
    let now = net.now;
    let stranger: SocketAddr = "10.0.0.8:40000".parse().unwrap();
    let mut player = PlayerMessage::new(Some(PlayerIds { id_from: 1, id_to: 0 }), Blob::new(b"hi"));
    player.sock_addr = SockAddrIn::new(v4("10.0.0.8:2300"));
    let bytes = player.to_vec().unwrap();
    assert_eq!(net.nodes[0].handle_tcp(now, 5, stranger, &bytes), Err(StreamError::NoSignature));
    let max = net.nodes[0].config.limits.max_unjoined_message;
    let big = (u32::try_from(max + 1).unwrap() | 0xFAB << 20).to_le_bytes();
    assert!(matches!(net.nodes[0].handle_tcp(now, 6, stranger, &big), Err(StreamError::BadSize { .. })));
    assert_eq!(net.nodes[0].stats().streams_rejected, 2);

    net.nodes[1].join(now, stream(0), None).unwrap();
    let joiner: SocketAddr = "10.0.0.2:40001".parse().unwrap();
    let request = net.nodes[1].poll_transmit().unwrap();
    let status = net.nodes[0].handle_tcp(now, 7, joiner, &request.bytes).unwrap();
    assert_eq!(status, TcpStatus { messages: 1, buffered: 0, known: false });
    let reply = net.nodes[0].poll_transmit().unwrap();
    let status = net.nodes[1].handle_tcp(now, 1, "10.0.0.1:40000".parse().unwrap(), &reply.bytes).unwrap();
    assert!(status.known, "the host we are joining is known");
    let add_forward = net.nodes[1].poll_transmit().unwrap();
    let (head, tail) = add_forward.bytes.split_at(30);
    let status = net.nodes[0].handle_tcp(now, 7, joiner, head).unwrap();
    assert_eq!(status, TcpStatus { messages: 0, buffered: 30, known: false });
    let status = net.nodes[0].handle_tcp(now, 7, joiner, tail).unwrap();
    assert_eq!(status, TcpStatus { messages: 1, buffered: 0, known: true });
}

/// Issue 14: names and data over the limits: refused locally with TooLong
/// (DPERR_INVALIDPARAMS); a joiner's ADDFORWARDREQUEST with an oversize name gets
/// ADDFORWARDREPLY DPERR_INVALIDPARAMS and no place in the session; a CREATEPLAYER with one
/// is dropped and counted.
#[test]
fn oversize_names_and_data_are_refused() {
    let long = "n".repeat(300);
    let mut net = session_of(2, |_| {});
    let now = net.now;
    assert!(matches!(net.nodes[0].create_player(now, &long), Err(CommandError::TooLong { len: 300, .. })));
    let mut fresh = Dp4Session::new(config(5)).unwrap();
    assert!(matches!(fresh.host(now, session(&long)), Err(CommandError::TooLong { .. })));

    // A member whose own limits allow long names: the host drops its CREATEPLAYER.
    net.nodes[1].config.limits.max_player_name = 100_000;
    net.nodes[1].create_player(now, &long).unwrap();
    net.run();
    assert_eq!(net.nodes[0].stats().dropped(DropReason::TooLong), 1);
    assert!(
        !net.nodes[0]
            .players()
            .values()
            .any(|p| p.short_name.as_ref().is_some_and(|n| n.units().len() == 300))
    );

    // A joiner's system player with an oversize name.
    let mut net = Net::new(2);
    net.host(session("S"));
    let now = net.now;
    net.nodes[1].join(now, stream(0), None).unwrap();
    let joiner: SocketAddr = "10.0.0.2:40001".parse().unwrap();
    let request = net.nodes[1].poll_transmit().unwrap();
    net.nodes[0].handle_tcp(now, 7, joiner, &request.bytes).unwrap();
    let reply = net.nodes[0].poll_transmit().unwrap();
    net.nodes[1].handle_tcp(now, 1, "10.0.0.1:40000".parse().unwrap(), &reply.bytes).unwrap();
    let add_forward = net.nodes[1].poll_transmit().unwrap();
    let mut m = Dp4Message::parse(&add_forward.bytes).unwrap();
    let Dp4Body::AddForwardRequest(ref mut r) = m.body else { panic!("{m:?}") };
    r.player_info.short_name = Some(WideString::new(&long));
    net.nodes[0].handle_tcp(now, 7, joiner, &m.to_vec().unwrap()).unwrap();
    let t = net.nodes[0].poll_transmit().unwrap();
    let Dp4Body::AddForwardReply(code) = Dp4Message::parse(&t.bytes).unwrap().body else { panic!() };
    assert_eq!((t.to, code.0), ("10.0.0.2:2300".parse().unwrap(), DPERR_INVALIDPARAMS));
    assert_eq!(net.nodes[0].players().len(), 1, "the host's system player only");
    assert_eq!(net.nodes[0].stats().dropped(DropReason::TooLong), 1);
    net.advance(Duration::from_secs(1));
}

/// Issue 14: groups are held to the player limits: a group name over them is refused locally,
/// and a GROUPNAMECHANGED or GROUPDATACHANGED over them from a member is dropped and counted.
#[test]
fn oversize_group_names_and_data_are_refused() {
    let long = "g".repeat(300);
    let mut net = session_of(2, |_| {});
    let now = net.now;
    assert!(matches!(net.nodes[0].create_group(now, &long), Err(CommandError::TooLong { .. })));
    net.nodes[1].create_group(now, "ok").unwrap();
    net.run();
    let group = *net.nodes[0].groups().keys().next().expect("the member's group");
    net.nodes[1].config.limits.max_player_name = 100_000;
    net.nodes[1].config.limits.max_player_data = 1 << 20;
    net.nodes[1].set_group_name(group, Some(&long), None).unwrap();
    net.nodes[1].set_group_data(group, &[7; 20_000]).unwrap();
    net.run();
    assert_eq!(net.nodes[0].stats().dropped(DropReason::TooLong), 2);
    let g = &net.nodes[0].groups()[&group];
    assert_eq!(
        (g.short_name.as_ref().map(|n| n.to_string_lossy()), g.group_data.len()),
        (Some("ok".into()), 0)
    );
}

/// docs/limits.md: a host's partial TCP messages and its Player List are charged to one memory
/// budget and released when freed; a connection whose partial message does not fit is closed
/// (`over-budget`), and a joiner whose entry does not fit gets DPERR_NONEWPLAYERS.
#[test]
fn memory_budget_charges_streams_and_players_and_refuses_at_the_cap() {
    let mut net = Net::new(3);
    net.host(session("S"));
    let now = net.now;
    let budget = net.nodes[0].memory_budget().clone();
    let alone = budget.held();
    assert!(alone >= crate::ENTRY_OVERHEAD, "the host's own system player is counted: {alone}");
    net.join(1, None);
    assert_eq!(net.nodes[1].role(), crate::dp4::Role::Member);
    let two = budget.held();
    assert!(two >= alone + crate::ENTRY_OVERHEAD, "the joiner's entry is counted: {two}");
    assert_eq!(net.nodes[0].stats().bytes_held, two);

    // 1,000 bytes of an announced 4,000-byte message are held, and released when it closes.
    let stranger: SocketAddr = "10.0.0.8:40000".parse().unwrap();
    let head = (4000u32 | 0xFAB << 20).to_le_bytes();
    let mut part = head.to_vec();
    part.resize(1000, 0);
    assert_eq!(net.nodes[0].handle_tcp(now, 9, stranger, &part).unwrap().buffered, 1000);
    assert_eq!(budget.held(), two + 1000);
    net.nodes[0].handle_tcp_closed(9);
    assert_eq!(budget.held(), two);

    budget.set_limit(two + 500);
    assert_eq!(net.nodes[0].handle_tcp(now, 10, stranger, &part), Err(StreamError::OverBudget));
    assert_eq!(budget.held(), two, "nothing of it stays charged");
    assert_eq!(net.nodes[0].stats().dropped(DropReason::OverBudget), 1);

    budget.set_limit(two + 100);
    net.join(2, None);
    let refused = net.take(2).into_iter().find(|e| matches!(e, crate::dp4::Dp4Event::JoinFailed(_)));
    assert_eq!(
        refused,
        Some(crate::dp4::Dp4Event::JoinFailed(crate::dp4::JoinError::Refused(
            dplay_wire::dp4::join::DPERR_NONEWPLAYERS
        )))
    );
    assert_eq!(net.nodes[0].stats().dropped(DropReason::OverBudget), 2);
    assert!(budget.held() <= two + 100);
}

/// Issue 14: a joiner holds the host's SUPERENUMPLAYERSREPLY to its own limits: a player whose
/// name is over them is left out of its Player List (counted TooLong); the join goes on.
#[test]
fn joiner_checks_the_name_table_against_its_limits() {
    let mut net = Net::new(2);
    net.nodes[0].config.limits.max_player_name = 100_000;
    net.host(session("S"));
    let long = "x".repeat(300);
    let id = super::net::created(&mut net, 0, &long);
    net.join(1, None);
    assert_eq!(net.nodes[1].role(), crate::dp4::Role::Member);
    assert!(!net.nodes[1].players().contains_key(&id), "the oversize player was kept");
    assert!(net.nodes[1].players().len() >= 2, "the host and ourselves are in");
    assert!(net.nodes[1].stats().dropped(DropReason::TooLong) >= 1);
}
