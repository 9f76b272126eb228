//! `dplay decode` tells DirectPlay 4 from DirectPlay 8 by flow and content (issue 15, defects 2,
//! 3 and 8): DP4 player messages over TCP and UDP, DP8 on any port once a flow proves it, TCP
//! retransmissions, and captures cut short.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use common::{dplay, hex, json_lines, stderr, stdout, temp};
use dplay_tests::pcap::{Packet, write_pcap};
use dplay_wire::Blob;
use dplay_wire::dp4::player_message::{DatagramPlayerMessage, PlayerIds, PlayerMessage};
use serde_json::Value;

/// MC-DPL8R 4.1: the CONNECT of the handshake example.
const CONNECT: &str = "88 01 00 00 06 00 01 00 C6 AE C9 79 9D 36 67 23";
/// MC-DPL8R 4.2: the SACK example.
const SACK: &str = "80 06 01 00 03 06 00 00 07 5D 11 00";

/// MC-DPL4CS 2.2.49: DPSP_MSG_REQUESTPLAYERID, a system message with 'play' at offset 20.
fn request_player_id() -> Vec<u8> {
    hex("20 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 79 05 00 0E 00 08 00 00 00")
}

const IDS: PlayerIds = PlayerIds { id_from: 0x0003_84CB, id_to: 0x0003_84C9 };

/// MC-DPL4CS 2.2.45, stream form, `len` bytes of payload. With 9 bytes the size is 0x25: an odd
/// lead byte, which on its own reads as a DirectPlay 8 DFRAME.
fn stream_player_message(len: usize) -> Vec<u8> {
    PlayerMessage::new(Some(IDS), Blob::new(&vec![0x5A; len])).to_vec().unwrap()
}

fn summary(lines: &[Value]) -> Vec<(String, String, String)> {
    lines
        .iter()
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap_or("-").to_owned();
            (s("transport"), s("family_short"), s("message"))
        })
        .collect()
}

fn decode_json(name: &str, packets: &[Packet], extra: &[&str]) -> (Vec<Value>, String) {
    let path = temp(name);
    write_pcap(&path, packets);
    let mut args = vec!["decode", "--json", "--reemit"];
    args.extend_from_slice(extra);
    args.push(path.to_str().unwrap());
    let out = dplay(&args);
    (json_lines(&out), stderr(&out))
}

fn triple(t: &str, f: &str, m: &str) -> (String, String, String) {
    (t.into(), f.into(), m.into())
}

/// Defect 2: DP4 player messages over TCP have no 'play'; they are player messages, never
/// DirectPlay 8 (which has no TCP transport), and re-emit byte for byte.
#[test]
fn dp4_player_messages_over_tcp() {
    let first = request_player_id();
    let odd = stream_player_message(9);
    let even = stream_player_message(8);
    assert_eq!(odd[0] & 1, 1, "the point of the test: a lead byte that reads as a DFRAME");
    let both = [odd.clone(), even.clone()].concat();
    let packets = [
        Packet::tcp("10.0.0.1:1033", "10.0.0.2:2300", 1, &first),
        Packet::tcp("10.0.0.1:1033", "10.0.0.2:2300", 33, &both[..20]),
        Packet::tcp("10.0.0.1:1033", "10.0.0.2:2300", 53, &both[20..]),
    ];
    let (lines, err) = decode_json("dp4_tcp.pcap", &packets, &[]);
    assert!(err.contains("0 malformed"), "{err}");
    assert_eq!(
        summary(&lines),
        [
            triple("tcp", "dp4", "DPSP_MSG_REQUESTPLAYERID"),
            triple("tcp", "dp4", "DPSP_MSG_PLAYERMESSAGE"),
            triple("tcp", "dp4", "DPSP_MSG_PLAYERMESSAGE"),
        ]
    );
    assert_eq!(lines[1]["fields"]["form"], "stream");
    assert_eq!(lines[1]["fields"]["ids"]["id_from"], IDS.id_from);
    for l in &lines {
        assert_eq!(l["bytes"], l["reemitted"], "{l}");
    }
}

/// A TCP stream whose first segment is a player message is followed too, and a retransmitted
/// segment is read once.
#[test]
fn tcp_stream_from_a_player_message_with_a_retransmission() {
    let msg = stream_player_message(12);
    let packets = [
        Packet::tcp("10.0.0.1:1033", "10.0.0.2:2300", 100, &msg),
        Packet::tcp("10.0.0.1:1033", "10.0.0.2:2300", 100, &msg),
        Packet::tcp("10.0.0.1:1033", "10.0.0.2:2300", 100 + u32::try_from(msg.len()).unwrap(), &msg),
    ];
    let (lines, err) = decode_json("dp4_retransmit.pcap", &packets, &[]);
    assert!(err.contains("0 malformed"), "{err}");
    assert_eq!(summary(&lines), vec![triple("tcp", "dp4", "DPSP_MSG_PLAYERMESSAGE"); 2]);
    assert_eq!(lines[1]["frame"], 3);
}

/// Defect 2: UDP between two DirectPlay 4 hosts, on the service provider's ports, carries player
/// messages in their datagram form, even where DirectPlay 8's default ports overlap.
#[test]
fn dp4_player_messages_over_udp() {
    let datagram = DatagramPlayerMessage::new(Some(IDS), Blob::new(b"\x19\x10\x00\x00")).to_vec().unwrap();
    assert_eq!(datagram[0] & 1, 1, "reads as a DFRAME on its own");
    let packets = [
        Packet::tcp("10.0.0.1:1033", "10.0.0.2:2300", 1, &request_player_id()),
        Packet::udp("10.0.0.1:2350", "10.0.0.2:2350", &datagram),
        Packet::udp("10.0.0.2:2350", "10.0.0.1:2350", &datagram),
    ];
    let (lines, err) = decode_json("dp4_udp.pcap", &packets, &[]);
    assert!(err.contains("0 malformed"), "{err}");
    assert_eq!(lines[1]["fields"]["form"], "datagram");
    assert_eq!(
        summary(&lines)[1..],
        [triple("udp", "dp4", "DPSP_MSG_PLAYERMESSAGE"), triple("udp", "dp4", "DPSP_MSG_PLAYERMESSAGE")]
    );
}

/// Defect 3: a flow that proves itself DirectPlay 8 (a CONNECT) is decoded on any port, every
/// datagram of it; lead bytes alone on other ports are not (no false positives).
#[test]
fn dp8_on_a_non_default_port() {
    let keepalive = hex("3F 02 00 00 C6 AE C9 79");
    let packets = [
        Packet::udp("127.0.0.1:40000", "127.0.0.1:47101", &hex(CONNECT)),
        Packet::udp("127.0.0.1:47101", "127.0.0.1:40000", &hex(SACK)),
        Packet::udp("127.0.0.1:40000", "127.0.0.1:47101", &keepalive),
        Packet::udp("127.0.0.1:5000", "127.0.0.1:5001", &keepalive),
    ];
    let (lines, err) = decode_json("dp8_port.pcap", &packets, &[]);
    assert_eq!(
        summary(&lines),
        [triple("udp", "dp8", "CONNECT"), triple("udp", "dp8", "SACK"), triple("udp", "dp8", "KEEPALIVE")]
    );
    assert!(err.contains("4 frames, 3 DirectPlay messages, 1 other frames skipped, 0 malformed"), "{err}");

    // --port narrows to one port; --any-port takes lead bytes everywhere.
    let (lines, _) = decode_json("dp8_port.pcap", &packets, &["--port", "5001"]);
    assert!(lines.is_empty(), "{lines:?}");
    let (lines, _) = decode_json("dp8_port.pcap", &packets, &["--port", "5001", "--any-port"]);
    assert_eq!(summary(&lines), [triple("udp", "dp8", "KEEPALIVE")]);
}

/// Defect 8: a capture cut short decodes every frame before the cut, with a warning.
#[test]
fn truncated_capture() {
    let path = temp("truncated.pcap");
    let packets = [
        Packet::udp("10.0.0.1:2302", "10.0.0.2:6073", &hex(CONNECT)),
        Packet::udp("10.0.0.2:6073", "10.0.0.1:2302", &hex(SACK)),
        Packet::udp("10.0.0.1:2302", "10.0.0.2:6073", &hex(SACK)),
    ];
    write_pcap(&path, &packets);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
    let out = dplay(&["decode", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("warning:") && err.contains("ends early"), "{err}");
    assert!(err.contains("decoding the 2 frames before"), "{err}");
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().nth(1).unwrap().contains("dp8 SACK"), "{text}");

    // The same with pcapng, cut inside the last block.
    let path = temp("truncated.pcapng");
    dplay_tests::pcap::write_pcapng(&path, &packets);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
    let out = dplay(&["decode", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stderr(&out).contains("decoding the 2 frames before"), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 2);
}

/// A lone message given as hex: the stream form of a player message is recognised by its bytes
/// alone; bytes after its dwSize are kept apart; `--dp4` reads the datagram form.
#[test]
fn hex_player_messages() {
    let msg = stream_player_message(9);
    let text = dplay_wire::hexdump::hex(&msg);
    let lines = json_lines(&dplay(&["decode", "--json", "--hex", &text]));
    assert_eq!(lines[0]["message"], "DPSP_MSG_PLAYERMESSAGE");
    assert_eq!(lines[0]["family_short"], "dp4");

    let padded = format!("{text} 00 00 00");
    let lines = json_lines(&dplay(&["decode", "--json", "--reemit", "--hex", &padded]));
    assert_eq!(lines[0]["message"], "DPSP_MSG_PLAYERMESSAGE");
    assert_eq!(lines[0]["trailing"], "00 00 00");
    assert_eq!(lines[0]["reemitted"], text);

    let datagram = "CB 84 03 00 C9 84 03 00 41 42";
    let lines = json_lines(&dplay(&["decode", "--json", "--dp4", "--hex", datagram]));
    assert_eq!(lines[0]["message"], "DPSP_MSG_PLAYERMESSAGE");
    assert_eq!(lines[0]["fields"]["form"], "datagram");
    assert_eq!(lines[0]["fields"]["ids"]["id_to"], IDS.id_to);
}

/// DPSP_MSG_ENUMSESSIONSREPLY (MC-DPL4CS 2.2.30) of a session with `flags`.
fn session_reply(flags: dplay_wire::dp4::session::SessionFlags) -> Vec<u8> {
    use dplay_wire::Wire;
    use dplay_wire::dp4::enumeration::EnumSessionsReply;
    use dplay_wire::dp4::header::{SockAddrIn, Token};
    use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
    use dplay_wire::dp4::session::SessionDesc2;

    let desc = SessionDesc2 {
        size: 80,
        flags,
        instance_guid: dplay_wire::Uuid::from_u128(1),
        application_guid: dplay_wire::Uuid::from_u128(2),
        max_players: 0,
        current_player_count: 1,
        session_name: 0,
        password: 0,
        reserved1: 0,
        reserved2: 0,
        application_defined: [0; 4],
    };
    let body = Dp4Body::EnumSessionsReply(EnumSessionsReply { session_desc: desc, session_name: None });
    Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, body).to_vec().unwrap()
}

/// A session description with DPSESSION_NOMESSAGEID (MC-DPL4CS 2.2.5) in the capture: its
/// player messages carry no idFrom/idTo, so all of their bytes are payload.
#[test]
fn no_message_id_sessions() {
    let reply = session_reply(dplay_wire::dp4::session::SessionFlags::NO_MESSAGE_ID);
    let nm = PlayerMessage::new(None, Blob::new(b"0123456789")).to_vec().unwrap();
    let packets = [
        Packet::tcp("10.0.0.2:2300", "10.0.0.1:1033", 1, &reply),
        Packet::tcp("10.0.0.1:1034", "10.0.0.2:2300", 1, &nm),
    ];
    let (lines, err) = decode_json("dp4_nm.pcap", &packets, &[]);
    assert!(err.contains("0 malformed"), "{err}");
    assert_eq!(lines[1]["message"], "DPSP_MSG_PLAYERMESSAGE");
    assert_eq!(lines[1]["fields"]["ids"], Value::Null);
    assert_eq!(lines[1]["fields"]["payload"], "30 31 32 33 34 35 36 37 38 39");

    let lines = json_lines(&dplay(&["decode", "--json", "--dp4", "--no-message-ids", "--hex", "41 42 43"]));
    assert_eq!(lines[0]["fields"]["ids"], Value::Null);
    assert_eq!(lines[0]["fields"]["payload"], "41 42 43");
}

/// DPSESSION_DIRECTPLAYPROTOCOL (MC-DPL4CS 3.1.4.16): UDP between the instances carries
/// MC-DPL4R frames (MC-DPL4R 2.2), whose whole player messages are looked into for add-on
/// packets.
#[test]
fn reliable_protocol_sessions() {
    use dplay_wire::Wire;
    use dplay_wire::dp4::reliable::{AckFrame, DataFrame, FrameBody, ReliableFlags, ReliableFrame};

    let reply = session_reply(dplay_wire::dp4::session::SessionFlags::DIRECTPLAY_PROTOCOL);
    // CHAT_TEXT "hi" (FS-MULTIPLAYER.md 1.3) after idFrom and idTo.
    let message = [&[1, 0, 0, 0, 2, 0, 0, 0][..], &hex("20 10 00 00 03 00 00 00 68 69 00")].concat();
    let flags = ReliableFlags::CMD | ReliableFlags::STA | ReliableFlags::EOM | ReliableFlags::RLY;
    let data =
        DataFrame { flags, message_id: 1, sequence: 1, serial: 0, nack: None, data: Blob::new(&message) };
    let data = ReliableFrame { id_from: 2, id_to: 0, body: FrameBody::Data(data) }.to_vec().unwrap();
    let ack = AckFrame {
        flags: ReliableFlags::ACK,
        message_id: 1,
        sequence: 1,
        serial: 0,
        bytes_received: 31,
        local_tick_count: 5,
    };
    let ack = ReliableFrame { id_from: 0, id_to: 2, body: FrameBody::Ack(ack) }.to_vec().unwrap();
    let packets = [
        Packet::tcp("10.0.0.2:2300", "10.0.0.1:1033", 1, &reply),
        Packet::udp("10.0.0.1:2301", "10.0.0.2:2300", &data),
        Packet::udp("10.0.0.2:2300", "10.0.0.1:2301", &ack),
    ];
    let (lines, err) = decode_json("dp4_rp.pcap", &packets, &[]);
    assert!(err.contains("0 malformed"), "{err}");
    assert_eq!(summary(&lines)[1..], [triple("udp", "dp4", "Data Frame"), triple("udp", "dp4", "ACK Frame")]);
    assert_eq!(lines[1]["addon"][0]["packet"], "CHAT_TEXT");
    assert_eq!(lines[1]["addon"][0]["text"], "hi");
    for l in &lines {
        assert_eq!(l["bytes"], l["reemitted"], "{l}");
    }
}
