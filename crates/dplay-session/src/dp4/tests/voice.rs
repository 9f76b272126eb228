//! DPSP_MSG_VOICE (MC-DPL4CS 2.2.54, 3.1.5.25; MC-DPLVP 2.1): voice between joined players,
//! guaranteed over TCP or not over UDP, also with MC-DPL4R; bytes handed up as they came; a
//! VOICE from an unknown player, to none of ours, or too short is dropped and counted.

use dplay_wire::Wire;
use dplay_wire::dp4::header::{Command, SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::routing::Voice;
use dplay_wire::dp4::session::SessionFlags;
use dplay_wire::voice::VoiceMessage;

use super::net::{pair, stream};
use crate::dp4::{CommandError, Dp4Event, DropReason, Via};

/// The voice events node `i` reported.
fn voice(events: Vec<Dp4Event>) -> Vec<(u32, u32, Vec<u8>)> {
    events
        .into_iter()
        .filter_map(|e| match e {
            Dp4Event::Voice { from, to, data } => Some((from, to, data)),
            _ => None,
        })
        .collect()
}

/// 2.2.54: the header's Command 0x36, then dwIDFrom, dwIDTo and the voice bytes as given, byte
/// for byte what the wire crate's DPSP_MSG_VOICE encodes; reliable over TCP to the player's
/// instance, speech over UDP; both delivered with the player IDs.
#[test]
fn voice_goes_both_ways_as_dpsp_msg_voice() {
    for flags in [SessionFlags::empty(), SessionFlags::DIRECTPLAY_PROTOCOL] {
        let (mut net, a, b) = pair(flags);
        let connect = VoiceMessage::ConnectRequest(dplay_wire::voice::VoiceVersion::SPEC).to_vec().unwrap();
        let now = net.now;
        net.nodes[1].send_voice(now, b, a, &connect, true).unwrap();
        net.run();
        assert_eq!(voice(net.take(0)), [(b, a, connect.clone())], "{flags:?}");
        if flags.is_empty() {
            let sent = net.log.iter().find(|s| s.name == "DPSP_MSG_VOICE").unwrap();
            assert_eq!(sent.via, Via::Tcp);
            let expected = Dp4Message::new(
                Token::FROM_REMOTE,
                SockAddrIn::new(net.nodes[1].config().stream_addr),
                net.nodes[1].config().version,
                Dp4Body::Voice(Voice {
                    id_from: b,
                    id_to: a,
                    message: VoiceMessage::parse(&connect).unwrap(),
                }),
            );
            assert_eq!(sent.bytes, expected.to_vec().unwrap());
            assert_eq!(sent.bytes[24..26], Command::DPSP_MSG_VOICE.0.to_le_bytes());
        }
        // Speech, not guaranteed; bytes the voice layer will judge (an unknown type) too.
        for data in [vec![0x55, 1, 0, 0x80, 0x80], vec![0xEE, 1, 2, 3]] {
            let now = net.now;
            net.log.clear();
            net.nodes[0].send_voice(now, a, b, &data, false).unwrap();
            net.run();
            assert_eq!(voice(net.take(1)), [(a, b, data)], "{flags:?}");
            if flags.is_empty() {
                assert!(net.log.iter().all(|s| s.via == Via::Udp), "{flags:?}");
            }
        }
    }
}

/// Only from one of our players to a known remote one.
#[test]
fn send_voice_needs_known_players() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    let now = net.now;
    assert_eq!(net.nodes[0].send_voice(now, b, a, &[0x54], true), Err(CommandError::UnknownPlayer(b)));
    assert_eq!(
        net.nodes[0].send_voice(now, a, 0x7777, &[0x54], true),
        Err(CommandError::UnknownPlayer(0x7777))
    );
    assert_eq!(net.nodes[0].send_voice(now, a, a, &[0x54], true), Err(CommandError::UnknownPlayer(a)));
}

/// MC-DPL4CS 3.1.5.25 and MC-DPLVP 5.1: a VOICE naming an unknown sender or none of our
/// players, or too short for its IDs, is dropped and counted; nothing is handed up.
#[test]
fn hostile_voice_is_dropped_and_counted() {
    let (mut net, a, b) = pair(SessionFlags::empty());
    let header = SockAddrIn::new(net.nodes[1].config().stream_addr);
    let raw = |from: u32, to: u32| {
        let body = Dp4Body::Voice(Voice { id_from: from, id_to: to, message: VoiceMessage::Disconnect });
        Dp4Message::new(Token::FROM_REMOTE, header, 14, body).to_vec().unwrap()
    };
    let from = stream(1);
    let now = net.now;
    for bytes in [raw(0x4242, a), raw(b, 0x4242), raw(b, b)] {
        net.nodes[0].handle_tcp(now, 77, from, &bytes).unwrap();
    }
    net.run();
    assert_eq!(net.nodes[0].stats().dropped(DropReason::UnknownPlayer), 3);
    // Too short for dwIDTo: the size field says 28 + 6.
    let mut short = raw(b, a);
    short.truncate(28 + 6);
    short[0] = 28 + 6;
    net.nodes[0].handle_tcp(now, 78, from, &short).unwrap();
    net.run();
    assert_eq!(net.nodes[0].stats().dropped(DropReason::Malformed), 1);
    assert!(voice(net.take(0)).is_empty());
    // 65 targets do not parse as a voice message: handed up as they are, for the voice layer.
    let mut bytes = raw(b, a);
    bytes.truncate(36);
    let mut m = vec![0x63, 0, 0];
    m.extend_from_slice(&65u32.to_le_bytes());
    (1..=65u32).for_each(|t| m.extend_from_slice(&t.to_le_bytes()));
    m.push(0x80);
    bytes.extend_from_slice(&m);
    let len = u32::try_from(bytes.len()).unwrap() | u32::from(Token::FROM_REMOTE.0) << 20;
    bytes[..4].copy_from_slice(&len.to_le_bytes());
    net.nodes[0].handle_tcp(now, 79, from, &bytes).unwrap();
    net.run();
    assert_eq!(voice(net.take(0)), [(b, a, m)]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// Whatever voice bytes a player sends, guaranteed or not (beyond the MTU: fragmented), the
    /// other end hands up exactly those bytes with the two player IDs (2.2.54).
    #[test]
    fn any_voice_bytes_arrive_as_sent(
        data in proptest::collection::vec(proptest::num::u8::ANY, 0..3000),
        reliable in proptest::bool::ANY,
    ) {
        let (mut net, a, b) = pair(SessionFlags::empty());
        let now = net.now;
        net.nodes[1].send_voice(now, b, a, &data, reliable).unwrap();
        net.run();
        proptest::prop_assert_eq!(voice(net.take(0)), [(b, a, data)]);
    }
}
