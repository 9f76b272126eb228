//! Joining: REQUESTPLAYERID -> REQUESTPLAYERREPLY -> ADDFORWARDREQUEST -> (ADDFORWARD /
//! ADDFORWARDACK) -> SUPERENUMPLAYERSREPLY (MC-DPL4CS 4.3, 3.1.4.2, 3.1.5.1, 3.1.5.7,
//! 3.2.5.4-3.2.5.6; INDEX E.6).

use std::time::Duration;

use dplay_wire::dp4::join::DPERR_NONEWPLAYERS;
use dplay_wire::dp4::session::{PlayerFlags, SessionFlags};

use super::net::{Net, created, session, session_in, session_of, stream};
use dplay_wire::Wire;
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};

use crate::dp4::{CommandError, DPERR_INVALIDPASSWORD, Dp4Event, HostConfig, JoinError, Role};

#[track_caller]
fn join_result(net: &mut Net, i: usize) -> Dp4Event {
    net.take(i)
        .into_iter()
        .find(|e| matches!(e, Dp4Event::Joined { .. } | Dp4Event::JoinFailed(_)))
        .expect("no join result")
}

/// MC-DPL4CS 4.3, 3.2.5.4, 3.2.5.6: the two-instance join in order; both sides end with the
/// same Player List, the host's system player flagged as name server.
#[test]
fn join_accepted() {
    let mut net = Net::new(2);
    net.host(session("S"));
    net.join(1, None);
    assert_eq!(
        net.trace(),
        [
            "1->0 Tcp DPSP_MSG_REQUESTPLAYERID",
            "0->1 Tcp DPSP_MSG_REQUESTPLAYERREPLY",
            "1->0 Tcp DPSP_MSG_ADDFORWARDREQUEST",
            "0->1 Tcp DPSP_MSG_SUPERENUMPLAYERSREPLY",
        ]
    );
    let me = net.nodes[1].system_player().unwrap();
    assert_eq!(join_result(&mut net, 1), Dp4Event::Joined { system_player: me });
    assert_eq!(net.take(0), [Dp4Event::PlayerJoined { id: me, name: None, system: true }]);
    assert_eq!(net.nodes[1].role(), Role::Member);
    let host = net.nodes[0].system_player().unwrap();
    assert_eq!(net.nodes[1].host_player(), Some(host));
    let host_entry = &net.nodes[1].players()[&host];
    assert!(host_entry.flags.contains(PlayerFlags::NAME_SERVER | PlayerFlags::SYSTEM_PLAYER));
    assert_eq!(host_entry.addrs.unwrap().0, stream(0), "0.0.0.0 in SPData becomes the host's IP");
    let keys = |i: usize| net.nodes[i].players().keys().copied().collect::<Vec<_>>();
    assert_eq!(keys(0), keys(1));
}

/// MC-DPL4CS 3.2.5.4: a full session refuses the join with DPERR_NONEWPLAYERS.
#[test]
fn full_session_refuses_with_dperr_nonewplayers() {
    let mut net = Net::new(2);
    net.host(HostConfig { max_players: 1, ..session("S") });
    created(&mut net, 0, "host pilot");
    net.join(1, None);
    assert_eq!(join_result(&mut net, 1), Dp4Event::JoinFailed(JoinError::Refused(DPERR_NONEWPLAYERS)));
    assert_eq!(net.nodes[1].role(), Role::Idle);
}

/// MC-DPL4CS 3.2.5.4 (JD): join disabled refuses nascent instances.
#[test]
fn join_disabled_refuses() {
    let mut net = Net::new(2);
    net.host(HostConfig { flags: SessionFlags::JOIN_DISABLED, ..session("S") });
    net.join(1, None);
    assert_eq!(join_result(&mut net, 1), Dp4Event::JoinFailed(JoinError::Refused(DPERR_NONEWPLAYERS)));
}

/// MC-DPL4CS 3.2.5.4 (NP): new players disabled refuses a member's REQUESTPLAYERID without SP,
/// yet still lets instances join.
#[test]
fn new_players_disabled_refuses_players_not_instances() {
    let mut net = session_of(2, |c| c.flags = SessionFlags::NEW_PLAYERS_DISABLED);
    assert_eq!(net.nodes[1].role(), Role::Member);
    let now = net.now;
    net.nodes[1].create_player(now, "p").unwrap();
    net.run();
    assert!(net.take(1).contains(&Dp4Event::PlayerCreateFailed(JoinError::Refused(DPERR_NONEWPLAYERS))));
}

/// MC-DPL4CS 3.1.5.8, 2.2.10: a wrong password gets ADDFORWARDREPLY with an error.
#[test]
fn wrong_password_fails_the_join() {
    let mut net = Net::new(2);
    net.host(HostConfig { password: Some("sesame".into()), ..session("S") });
    net.join(1, Some("open"));
    assert_eq!(join_result(&mut net, 1), Dp4Event::JoinFailed(JoinError::Refused(DPERR_INVALIDPASSWORD)));
    assert_eq!(net.names().last(), Some(&"DPSP_MSG_ADDFORWARDREPLY"));
    net.join(1, Some("sesame"));
    assert!(matches!(join_result(&mut net, 1), Dp4Event::Joined { .. }));
}

/// MC-DPL4CS 3.1.2.2, 3.1.4.2: no REQUESTPLAYERREPLY within 5 s fails the join.
#[test]
fn join_times_out_after_the_reliable_api_timer() {
    let mut net = Net::new(2);
    net.host(session("S"));
    net.cut.insert((0, 1));
    net.join(1, None);
    net.advance(Duration::from_secs(4));
    assert!(net.take(1).is_empty());
    net.advance(Duration::from_secs(1));
    assert_eq!(net.take(1), [Dp4Event::JoinFailed(JoinError::Timeout)]);
}

/// MC-DPL4CS 4.3, 3.2.5.5, 3.2.5.6: a third instance is ADDFORWARDed to the established one,
/// whose ADDFORWARDACK lets the host send SUPERENUMPLAYERSREPLY; a player created later is
/// announced with CREATEPLAYER to everyone (3.1.5.1, 3.1.5.12).
#[test]
fn third_instance_and_its_player_are_announced() {
    let mut net = session_in(3, 2, |_| {});
    net.log.clear();
    net.take(0);
    net.take(1);
    net.join(2, None);
    insta::assert_snapshot!("third_instance_join", net.trace().join("\n"));
    let c = net.nodes[2].system_player().unwrap();
    for i in [0, 1] {
        assert_eq!(net.take(i), [Dp4Event::PlayerJoined { id: c, name: None, system: true }]);
    }
    net.log.clear();
    let carol = created(&mut net, 2, "carol");
    let trace = net.trace();
    assert_eq!(trace[..2], ["2->0 Tcp DPSP_MSG_REQUESTPLAYERID", "0->2 Tcp DPSP_MSG_REQUESTPLAYERREPLY"]);
    let mut creates = trace[2..].to_vec();
    creates.sort();
    assert_eq!(creates, ["2->0 Tcp DPSP_MSG_CREATEPLAYER", "2->1 Tcp DPSP_MSG_CREATEPLAYER"]);
    for i in [0, 1] {
        assert_eq!(
            net.take(i),
            [Dp4Event::PlayerJoined { id: carol, name: Some("carol".into()), system: false }]
        );
    }
    assert_eq!(net.nodes[0].session_desc().map(|d| d.current_player_count), Some(0));
}

/// MC-DPL4CS 3.2.2.1, 3.2.6.1: without the ADDFORWARDACK the host still completes the join
/// when the 15 s Name Table Population timer expires.
#[test]
fn name_table_timer_completes_a_join_without_acks() {
    let mut net = session_in(3, 2, |_| {});
    net.cut.insert((1, 0));
    net.join(2, None);
    assert!(net.take(2).iter().all(|e| !matches!(e, Dp4Event::Joined { .. })));
    net.advance(Duration::from_secs(14));
    assert!(net.take(2).is_empty());
    net.advance(Duration::from_secs(1));
    assert!(matches!(net.take(2).as_slice(), [Dp4Event::Joined { .. }, ..]));
}

/// MC-DPL4CS 3.2.5.4 note: every ID is (counter << 16 | index) XOR Reserved1.
#[test]
fn ids_follow_the_reserved1_rule() {
    let net = session_of(3, |_| {});
    let key = net.nodes[0].session_desc().unwrap().reserved1;
    let mut indexes: Vec<u32> = net.nodes[0].players().keys().map(|id| (id ^ key) & 0xFFFF).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, [0, 1, 2]);
}

/// MC-DPL4CS 2.2.22, 3.1.5.13: a member that sees a CREATEPLAYER (dialect 13+) for a new
/// player answers with CREATEPLAYERVERIFY for its own players of the last 40 s; the host does
/// not, and a verified player already known is not reported twice.
#[test]
fn create_player_verify_within_40_seconds() {
    let mut net = session_of(3, |_| {});
    let bob = created(&mut net, 1, "bob");
    net.take(0);
    net.take(2);
    net.log.clear();
    created(&mut net, 2, "carol");
    let verifies: Vec<String> =
        net.trace().into_iter().filter(|l| l.ends_with("DPSP_MSG_CREATEPLAYERVERIFY")).collect();
    assert_eq!(verifies, ["1->2 Tcp DPSP_MSG_CREATEPLAYERVERIFY"]);
    assert!(net.nodes[2].players().contains_key(&bob));
    assert!(net.take(2).is_empty(), "bob was already known");
    net.advance(std::time::Duration::from_secs(41));
    net.log.clear();
    created(&mut net, 2, "dave");
    assert!(net.trace().iter().all(|l| !l.ends_with("DPSP_MSG_CREATEPLAYERVERIFY")));
}

/// MC-DPL4CS 1.3 (SS, MS): options we do not implement are refused when hosting, and a
/// joiner that finds them in SUPERENUMPLAYERSREPLY leaves again with DELETEPLAYER. (RP is
/// implemented: tests/reliable.rs.)
#[test]
fn unsupported_session_options_are_refused() {
    use crate::dp4::CommandError;
    let mut net = Net::new(2);
    let ms = HostConfig { flags: SessionFlags::MULTICAST_SERVER, ..session("S") };
    let now = net.now;
    assert_eq!(net.nodes[0].host(now, ms), Err(CommandError::Unsupported(SessionFlags::MULTICAST_SERVER)));
    net.host(session("S"));
    // A Windows host could run such a session: rewrite the flags its reply would carry.
    let now = net.now;
    net.nodes[1].join(now, stream(0), None).unwrap();
    let (to_host, to_client) = ("10.0.0.2:40001".parse().unwrap(), "10.0.0.1:40000".parse().unwrap());
    let mut sent_last = None;
    while let Some(t) = net.nodes[1].poll_transmit() {
        net.nodes[0].handle_tcp(now, 1, to_host, &t.bytes).unwrap();
        sent_last = Some(t.bytes);
        while let Some(r) = net.nodes[0].poll_transmit() {
            let mut msg = Dp4Message::parse(&r.bytes).unwrap();
            if let Dp4Body::SuperEnumPlayersReply(m) = &mut msg.body {
                m.session_desc.flags = SessionFlags::MULTICAST_SERVER;
            }
            net.nodes[1].handle_tcp(now, 2, to_client, &msg.to_vec().unwrap()).unwrap();
        }
    }
    while let Some(e) = net.nodes[1].poll_event() {
        net.events[1].push(e);
    }
    assert_eq!(
        join_result(&mut net, 1),
        Dp4Event::JoinFailed(JoinError::Unsupported(SessionFlags::MULTICAST_SERVER))
    );
    assert_eq!(Dp4Message::parse(&sent_last.unwrap()).unwrap().name(), "DPSP_MSG_DELETEPLAYER");
    assert_eq!(net.nodes[0].players().len(), 1);
}

/// MC-DPL4CS 4.3: the bytes of a two-instance join with fixed seeds, for review: each message
/// as a spec-style hex dump and its decoded form.
#[test]
fn join_bytes_snapshot() {
    let mut net = Net::new(2);
    net.host(HostConfig { max_players: 8, ..session("Friday flight") });
    net.join(1, None);
    let text: Vec<String> = net
        .log
        .iter()
        .map(|s| {
            let decoded = Dp4Message::parse(&s.bytes).map(|m| format!("{:#?}", m.body)).unwrap_or_default();
            format!(
                "{}->{} {:?} {}\n{}\n{}",
                s.from,
                s.to,
                s.via,
                s.name,
                dplay_wire::hexdump::dump(&s.bytes),
                decoded
            )
        })
        .collect();
    insta::assert_snapshot!("join_bytes", text.join("\n\n"));
}

/// MC-DPL4CS 2.2.21, 2.2.2: a member's player data travels in its CREATEPLAYER (as
/// DPLAYI_PACKEDPLAYER's PlayerData), and the host keeps it; data over
/// `Dp4Limits::max_player_data` is refused locally (DPERR_INVALIDPARAMS).
#[test]
fn player_data_travels_in_createplayer() {
    let mut net = session_of(2, |_| {});
    let now = net.now;
    net.nodes[1].config.limits.max_player_data = 4;
    let over = net.nodes[1].create_player_with_data(now, "p", &[0; 5]);
    assert!(matches!(over, Err(CommandError::TooLong { len: 5, .. })), "{over:?}");
    net.nodes[1].create_player_with_data(now, "p", &[1, 2, 3, 4]).unwrap();
    net.run();
    let id = net
        .take(1)
        .iter()
        .find_map(|e| match e {
            Dp4Event::PlayerCreated { id } => Some(*id),
            _ => None,
        })
        .unwrap();
    assert!(net.names().contains(&"DPSP_MSG_CREATEPLAYER"));
    for node in 0..2 {
        let player = net.nodes[node].players().get(&id).map(|p| p.player_data.to_vec());
        assert_eq!(player, Some(vec![1, 2, 3, 4]), "node {node}");
    }
}
