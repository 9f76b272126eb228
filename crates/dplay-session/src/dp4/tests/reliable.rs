//! Sessions with DPSESSION_DIRECTPLAYPROTOCOL: player traffic over MC-DPL4R on the UDP game
//! sockets (MC-DPL4CS 3.1.4.16; MC-DPL4R 1.3, 2.2, 3.1.5; INDEX D.15).

use std::time::Duration;

use dplay_dpsp::reliable::player_index;
use dplay_wire::Wire;
use dplay_wire::dp4::reliable::{FrameBody, ReliableFlags, ReliableFrame};
use dplay_wire::dp4::session::SessionFlags;

use super::net::{Net, Sent, created, send, session_of};
use crate::dp4::{CommandError, Dp4Event, HostConfig, Via};

const RP: SessionFlags = SessionFlags::DIRECTPLAY_PROTOCOL;

/// [`super::net::pair`] in an RP session.
fn pair(flags: SessionFlags) -> (Net, u32, u32) {
    super::net::pair(RP | flags)
}

/// Every MC-DPL4R frame in the log, with its sender and receiver node.
fn frames(net: &Net) -> Vec<(usize, usize, ReliableFrame)> {
    net.log
        .iter()
        .filter(|s: &&Sent| s.via == Via::Udp && s.bytes.get(20..24) != Some(b"play"))
        .filter_map(|s| ReliableFrame::parse(&s.bytes).ok().map(|f| (s.from, s.to, f)))
        .collect()
}

fn data_frames(net: &Net) -> Vec<(usize, ReliableFlags, Vec<u8>)> {
    frames(net)
        .into_iter()
        .filter_map(|(from, _, f)| match f.body {
            FrameBody::Data(d) => Some((from, d.flags, d.data.0)),
            _ => None,
        })
        .collect()
}

fn messages(net: &mut Net, i: usize) -> Vec<Vec<u8>> {
    net.take(i)
        .into_iter()
        .filter_map(|e| match e {
            Dp4Event::Message { data, .. } => Some(data),
            _ => None,
        })
        .collect()
}

/// MC-DPL4CS 1.3, 3.1.4.16: a session with the RP flag is hosted and joined (the join keeps to
/// MC-DPL4CS over TCP, MC-DPL4R 1.3), and the other flags this stack lacks are refused with
/// the flags named.
#[test]
fn rp_session_is_hosted_and_joined() {
    let mut net = session_of(2, |c| c.flags = RP | SessionFlags::MIGRATE_HOST);
    assert!(net.take(1).iter().any(|e| matches!(e, Dp4Event::Joined { .. })));
    assert!(frames(&net).is_empty(), "no MC-DPL4R during the join");
    let mut other = Net::new(1);
    let now = other.now;
    let mut cfg = HostConfig::new("secure", super::net::APP);
    cfg.flags =
        RP | SessionFlags::SECURE_SERVER | SessionFlags::MULTICAST_SERVER | SessionFlags::CLIENT_SERVER;
    let refused = SessionFlags::SECURE_SERVER | SessionFlags::MULTICAST_SERVER;
    assert_eq!(other.nodes[0].host(now, cfg), Err(CommandError::Unsupported(refused)));
}

/// MC-DPL4CS 3.1.4.16: "MUST transmit the message using" MC-DPL4R: guaranteed and not, both
/// go to the game socket as data frames (RLY when guaranteed) between the two system players'
/// indexes (MC-DPL4R 2.2.1), carrying the datagram form, and are acknowledged.
#[test]
fn player_messages_go_through_mc_dpl4r() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    send(&mut net, 0, a, b, b"guaranteed", true);
    send(&mut net, 1, b, a, b"not guaranteed", false);
    assert_eq!(messages(&mut net, 1), [b"guaranteed".to_vec()]);
    assert_eq!(messages(&mut net, 0), [b"not guaranteed".to_vec()]);
    assert!(
        net.log.iter().all(|s| s.via == Via::Udp && s.bytes.get(20..24) != Some(b"play")),
        "no TCP, no full headers"
    );
    let data = data_frames(&net);
    assert_eq!(data.len(), 2);
    assert!(data[0].1.contains(ReliableFlags::RLY | ReliableFlags::STA | ReliableFlags::EOM));
    assert!(!data[1].1.contains(ReliableFlags::RLY));
    assert_eq!(&data[0].2[..4], &a.to_le_bytes(), "idFrom first: the datagram form");
    assert_eq!(&data[0].2[8..], b"guaranteed");
    let desc = *net.nodes[0].session_desc().unwrap();
    let (host_sys, member_sys) =
        (net.nodes[0].system_player().unwrap(), net.nodes[1].system_player().unwrap());
    let all = frames(&net);
    let (_, _, first) = &all[0];
    assert_eq!(first.id_from, player_index(host_sys, desc.reserved1));
    assert_eq!(first.id_to, player_index(member_sys, desc.reserved1));
    assert!(all.iter().any(|(from, _, f)| *from == 1 && matches!(f.body, FrameBody::Ack(_))));
}

/// MC-DPL4R 2.2.2, 3.1.5.2: a message beyond one frame spans several, STA to EOM, instead of
/// DPSP_MSG_PACKET fragments, and arrives whole.
#[test]
fn large_message_spans_frames() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    send(&mut net, 0, a, b, &big, true);
    let data = data_frames(&net);
    assert_eq!(data.len(), 4);
    assert!(data[0].1.contains(ReliableFlags::STA) && data[3].1.contains(ReliableFlags::EOM));
    assert!(net.names().iter().all(|n| *n != "DPSP_MSG_PACKET"));
    assert_eq!(messages(&mut net, 1), [big]);
}

/// MC-DPL4R 3.1.2, 3.1.5.3: frames lost on the way are resent by the retry timer and the
/// message arrives exactly once.
#[test]
fn lost_frames_are_resent() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    net.cut.insert((0, 1));
    send(&mut net, 0, a, b, b"through the storm", true);
    assert!(messages(&mut net, 1).is_empty());
    net.cut.clear();
    net.advance(Duration::from_secs(3));
    assert_eq!(messages(&mut net, 1), [b"through the storm".to_vec()]);
    net.advance(Duration::from_secs(10));
    assert!(messages(&mut net, 1).is_empty(), "exactly once");
    let resent = data_frames(&net).into_iter().filter(|(_, f, _)| f.contains(ReliableFlags::SAK)).count();
    assert!(resent >= 2, "first send and at least one retry");
}

/// MC-DPL4CS 2.2.47, INDEX D.15: inside a frame a message that starts with 'play' would read
/// as a short-form system message, and one with 'play' at offset 20 as a system message with
/// its full header (MC-DPL4R 1.3; issue 27 item 5), so both travel in a short-form
/// PLAYERWRAPPER (NM session: the data itself comes first).
#[test]
fn player_wrapper_inside_frames() {
    let (mut net, a, b) = pair(SessionFlags::NO_MESSAGE_ID);
    send(&mut net, 0, a, b, b"play on words", true);
    let mut at20 = vec![0u8; 20];
    at20.extend_from_slice(b"play");
    send(&mut net, 0, a, b, &at20, true);
    assert_eq!(messages(&mut net, 1), [b"play on words".to_vec(), at20]);
    let data = data_frames(&net);
    assert_eq!(&data[0].2[..6], b"play\x19\x00", "PLAYERWRAPPER, short header");
    assert_eq!(&data[1].2[..6], b"play\x19\x00", "PLAYERWRAPPER too");
}

/// INDEX D.15 (MC-DPL4CS 2.2.6): with MC-DPL4R in use PING and PINGREPLY use the short header
/// and ride the link; the keep-alive still works.
#[test]
fn ping_uses_the_short_form_over_mc_dpl4r() {
    let (mut net, _, _) = pair(SessionFlags::KEEP_ALIVE);
    net.advance(Duration::from_secs(36));
    let data = data_frames(&net);
    let commands: Vec<(usize, u8)> =
        data.iter().filter(|(_, _, d)| d.starts_with(b"play")).map(|(from, _, d)| (*from, d[4])).collect();
    assert!(commands.contains(&(0, 0x16)) && commands.contains(&(1, 0x17)), "{commands:?}");
    assert!(!net.names().contains(&"DPSP_MSG_PING"));
    assert_eq!(net.nodes[0].players().len(), 4, "nobody dropped");
}

/// MC-DPL4R give-up (decisions: MC-DPL4CS 3.1.6.1's values): an instance that stops answering
/// is dropped by the host, which tells the others (DELETEPLAYER).
#[test]
fn link_give_up_drops_the_instance() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    let member_sys = net.nodes[1].system_player().unwrap();
    net.cut.insert((0, 1));
    net.cut.insert((1, 0));
    send(&mut net, 0, a, b, b"anyone there?", true);
    net.advance(Duration::from_secs(90));
    let left = net.take(0);
    assert!(left.contains(&Dp4Event::PlayerLeft { id: member_sys }), "{left:?}");
    assert!(!net.nodes[0].players().contains_key(&member_sys));
}

/// MC-DPL4CS 3.1.4.16 with three instances: a message to DPID_ALLPLAYERS reaches every other
/// instance over its own link.
#[test]
fn three_instances_each_their_link() {
    let mut net = session_of(3, |c| c.flags = RP);
    let c = created(&mut net, 2, "carol");
    for i in 0..3 {
        net.take(i);
    }
    net.log.clear();
    send(&mut net, 2, c, crate::dp4::DPID_ALLPLAYERS, b"hello all", true);
    assert_eq!(messages(&mut net, 0), [b"hello all".to_vec()]);
    assert_eq!(messages(&mut net, 1), [b"hello all".to_vec()]);
}

/// MC-DPL4R 3.1.1 (Reliable Receive Queue) and DPSESSION_NOPRESERVEORDER (MC-DPL4CS 1.3):
/// guaranteed messages keep their order unless the session has NO; with it, a message goes
/// up as soon as it is whole.
#[test]
fn order_is_kept_unless_the_session_says_no() {
    for (flags, want) in [
        (SessionFlags::empty(), [b"first".to_vec(), b"second".to_vec()]),
        (SessionFlags::NO_PRESERVE_ORDER, [b"second".to_vec(), b"first".to_vec()]),
    ] {
        let (mut net, a, b) = pair(flags);
        net.cut.insert((0, 1));
        send(&mut net, 0, a, b, b"first", true);
        net.cut.clear();
        send(&mut net, 0, a, b, b"second", true);
        net.advance(Duration::from_secs(3));
        assert_eq!(messages(&mut net, 1), want, "{flags:?}");
    }
}
