//! Player messages: PLAYERMESSAGE with and without IDs, PLAYERWRAPPER, and fragmentation of
//! large non-guaranteed messages (MC-DPL4CS 2.2.45, 2.2.47, 3.1.4.16, 3.1.4.18).

use dplay_wire::dp4::session::SessionFlags;

use super::net::{Net, created, pair, send};
use crate::dp4::{CommandError, Dp4Event, Via};

/// MC-DPL4CS 3.1.4.16, 2.2.45: a guaranteed message goes over TCP, another over UDP; both
/// arrive with idFrom and idTo.
#[test]
fn guaranteed_over_tcp_and_unguaranteed_over_udp() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    send(&mut net, 0, a, b, b"over tcp", true);
    send(&mut net, 1, b, a, b"over udp", false);
    assert_eq!(net.trace(), ["0->1 Tcp PLAYERMESSAGE", "1->0 Udp PLAYERMESSAGE"]);
    assert_eq!(net.take(1), [Dp4Event::Message { from: Some(a), to: Some(b), data: b"over tcp".to_vec() }]);
    assert_eq!(net.take(0), [Dp4Event::Message { from: Some(b), to: Some(a), data: b"over udp".to_vec() }]);
}

/// MC-DPL4CS 3.1.4.18, 2.2.39: a non-guaranteed message beyond the MTU travels as
/// DPSP_MSG_PACKET fragments and arrives whole.
#[test]
fn large_message_is_fragmented_and_reassembled() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    send(&mut net, 0, a, b, &data, false);
    let names = net.names();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.iter().all(|n| *n == "DPSP_MSG_PACKET"));
    assert_eq!(net.take(1), [Dp4Event::Message { from: Some(a), to: Some(b), data }]);
}

/// MC-DPL4CS 1.3 (NM), 2.2.45, 3.1.4.16.2: without message IDs the payload follows the
/// SockAddr; one with 'play' at offset 20 is wrapped in DPSP_MSG_PLAYERWRAPPER.
#[test]
fn no_message_id_and_player_wrapper() {
    let (mut net, a, b) = pair(SessionFlags::NO_MESSAGE_ID);
    send(&mut net, 0, a, b, b"hello", false);
    send(&mut net, 0, a, b, b"play like a system message", true);
    assert_eq!(net.names(), ["PLAYERMESSAGE", "DPSP_MSG_PLAYERWRAPPER"]);
    assert_eq!(
        net.take(1),
        [
            Dp4Event::Message { from: None, to: None, data: b"hello".to_vec() },
            Dp4Event::Message { from: None, to: None, data: b"play like a system message".to_vec() },
        ]
    );
}

/// MC-DPL4CS 3.1.4.16: sending needs a joined session, one of our players and a known target.
#[test]
fn send_checks_players() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    let now = net.now;
    assert_eq!(net.nodes[0].send(now, b, a, b"x", true), Err(CommandError::UnknownPlayer(b)));
    assert_eq!(net.nodes[0].send(now, a, 0xDEAD, b"x", true), Err(CommandError::UnknownPlayer(0xDEAD)));
    let mut idle = Net::new(1);
    assert_eq!(idle.nodes[0].send(now, a, b, b"x", true), Err(CommandError::WrongState));
    assert!(net.nodes[0].poll_transmit().is_none());
    assert_eq!(net.log.iter().filter(|s| s.via == Via::Tcp).count(), 0);
    idle.run();
}

/// MC-DPL4CS 3.1.4.10, 3.1.4.11, 3.1.5.18, 3.1.5.19: data and name changes reach the others.
#[test]
fn player_data_and_name_changes() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    net.nodes[0].set_player_data(a, &[1, 2, 3]).unwrap();
    net.nodes[0].set_player_name(a, Some("Al"), Some("Alice Long")).unwrap();
    net.run();
    assert_eq!(net.names(), ["DPSP_MSG_PLAYERDATACHANGED", "DPSP_MSG_PLAYERNAMECHANGED"]);
    assert_eq!(
        net.take(1),
        [
            Dp4Event::PlayerDataChanged { id: a, data: vec![1, 2, 3] },
            Dp4Event::PlayerNameChanged {
                id: a,
                short_name: Some("Al".into()),
                long_name: Some("Alice Long".into())
            },
        ]
    );
    assert_eq!(net.nodes[1].players()[&a].player_data.0, [1, 2, 3]);
    assert_eq!(net.nodes[0].set_player_data(b, &[0]), Err(CommandError::UnknownPlayer(b)));
}

/// MC-DPL4CS 1.3 (ND): with no data messages, data changes stay local.
#[test]
fn no_data_messages_keeps_data_local() {
    let (mut net, a, _) = pair(SessionFlags::NO_DATA_MESSAGES);
    net.nodes[0].set_player_data(a, &[9]).unwrap();
    net.run();
    assert!(net.names().is_empty());
}

/// MC-DPL4CS 3.1.4.17, 3.1.5.26: a chat line goes to its player's instance over TCP.
#[test]
fn chat_reaches_the_player() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    net.nodes[1].send_chat(b, a, "cleared to land").unwrap();
    net.run();
    assert_eq!(net.trace(), ["1->0 Tcp DPSP_MSG_CHAT"]);
    assert_eq!(net.take(0), [Dp4Event::Chat { from: b, to: a, text: Some("cleared to land".into()) }]);
}

/// MC-DPL4CS 2.2.45 (idTo), 3.1.4.16: DPID_ALLPLAYERS sends one copy to every other instance,
/// each delivered with idTo 0; a message to a group we learned of by CREATEGROUP (3.1.5.11), with
/// one of our players in it, is delivered with the group as idTo.
#[test]
fn all_players_and_known_groups() {
    use dplay_wire::dp4::header::{SockAddrIn, Token};
    use dplay_wire::dp4::join::PlayerInfoMessage;
    use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
    use dplay_wire::dp4::player::PackedPlayer;
    use dplay_wire::dp4::session::PlayerFlags;
    use dplay_wire::{Blob, Wire};

    let mut net = super::net::session_of(3, |_| {});
    let a = created(&mut net, 0, "a");
    let c = created(&mut net, 2, "c");
    (0..3).for_each(|i| drop(net.take(i)));
    net.log.clear();
    send(&mut net, 2, c, crate::dp4::DPID_ALLPLAYERS, b"all", true);
    assert_eq!(net.log.len(), 2);
    for i in [0, 1] {
        assert_eq!(net.take(i), [Dp4Event::Message { from: Some(c), to: Some(0), data: b"all".to_vec() }]);
    }
    let group = 0x0BAD_F00D;
    let info = PackedPlayer {
        flags: PlayerFlags::empty(),
        player_id: group,
        system_player_id: net.nodes[2].system_player().unwrap(),
        player_version: 14,
        parent_id: 0,
        short_name: None,
        long_name: None,
        sp_data: Blob::default(),
        player_data: Blob::default(),
        player_ids: vec![a],
        size_counts_player_ids: false,
    };
    let body = Dp4Body::CreateGroup(PlayerInfoMessage {
        id_to: 0,
        player_id: group,
        group_id: 0,
        password_offset: 0,
        player_info: info,
        reserved: None,
    });
    let bytes = Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, body).to_vec().unwrap();
    let now = net.now;
    net.nodes[0].handle_tcp(now, 50, "10.0.0.3:40002".parse().unwrap(), &bytes).unwrap();
    let mut to_group = c.to_le_bytes().to_vec();
    to_group.extend_from_slice(&group.to_le_bytes());
    to_group.extend_from_slice(b"grp");
    net.nodes[0].handle_udp(now, "10.0.0.3:2350".parse().unwrap(), &to_group);
    assert_eq!(net.nodes[0].stats().dropped, Default::default());
    net.run();
    assert_eq!(
        net.take(0),
        [
            Dp4Event::Group(crate::dp4::GroupEvent::Created { id: group, name: None, local: false }),
            Dp4Event::Message { from: Some(c), to: Some(group), data: b"grp".to_vec() }
        ]
    );
}
