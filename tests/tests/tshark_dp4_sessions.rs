//! All the traffic our DirectPlay 4 session logic produces, in whole sessions
//! (`dplay_testkit::dp4_sim::scenarios`), read by Wireshark's `dplay` dissector: every system
//! message is dissected as the command we sent, with our header fields, and no frame is
//! malformed or draws an expert warning, but for the tshark quirks docs/decisions.md lists
//! under "Tools". In sessions with DPSESSION_DIRECTPLAYPROTOCOL, the MC-DPL4R frames between
//! game sockets carry no 'play' signature: tshark must leave them undecoded, and clean.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::time::Instant;

use dplay_session::dp4::Via;
use dplay_testkit::dp4_sim::{Capture, Dp4Net, scenarios};
use dplay_tests::dp4_capture::{CapturedPacket, packets, packets_mss};
use dplay_tests::tshark::{self, Frame};
use dplay_wire::dp4::header::{Command, SIGNATURE, SIGNATURE_OFFSET};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::dp4::reliable::{FrameBody, ReliableFrame};
use dplay_wire::dp4::session::SessionFlags;
use dplay_wire::{Wire, WireError};

#[allow(clippy::disallowed_methods)] // one real starting instant; the network's time is virtual
fn start() -> Instant {
    Instant::now()
}

#[track_caller]
fn run(name: &str, scenario: scenarios::Scenario) -> Dp4Net {
    scenario(start()).unwrap_or_else(|e| panic!("scenario {name}: {e}"))
}

/// What we sent: a system message (MC-DPL4CS 2.2.6), or a player message, which has no
/// signature (2.2.45).
fn ours(c: &Capture) -> Result<Option<Dp4Message>, WireError> {
    if c.bytes.get(SIGNATURE_OFFSET..SIGNATURE_OFFSET + 4) == Some(&SIGNATURE[..]) {
        Dp4Message::parse(&c.bytes).map(Some)
    } else {
        Ok(None)
    }
}

/// Whether the scenario's session runs MC-DPL4R (DPSESSION_DIRECTPLAYPROTOCOL): then every
/// datagram that is not a system message is an MC-DPL4R frame (MC-DPL4CS 3.1.4.16).
fn reliable_session(net: &Dp4Net) -> bool {
    net.nodes
        .iter()
        .any(|n| n.session_desc().is_some_and(|d| d.flags.contains(SessionFlags::DIRECTPLAY_PROTOCOL)))
}

/// MC-DPL4R 2.2: an MC-DPL4R frame between two game sockets; its kind.
#[track_caller]
fn reliable_frame(what: &str, c: &Capture, net: &Dp4Net) -> &'static str {
    let frame =
        ReliableFrame::parse(&c.bytes).unwrap_or_else(|e| panic!("{what}: not an MC-DPL4R frame: {e}"));
    let games: Vec<_> = (0..net.nodes.len()).filter_map(|i| net.datagram_addr(i)).collect();
    assert!(games.contains(&c.dst), "{what}: MC-DPL4R frame to {}, not a game socket", c.dst);
    match frame.body {
        FrameBody::Data(_) => "data",
        FrameBody::Ack(_) => "ACK",
        FrameBody::Nack(_) => "NACK",
    }
}

/// tshark's malformed marks and expert warnings or errors.
fn problems(f: &Frame) -> Vec<String> {
    let mut out: Vec<String> =
        f.fields.iter().filter(|(k, _)| k == "_ws.malformed").map(|(_, v)| v.clone()).collect();
    let severities = f.all("_ws.expert.severity");
    let messages = f.all("_ws.expert.message");
    for (s, m) in severities.iter().zip(messages) {
        if s.parse::<u64>().is_ok_and(|s| s >= 0x0060_0000) {
            out.push(m.to_owned());
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// tshark 4.0 throws on a message with no body after its header, though YOUAREDEAD has none
/// (MC-DPL4CS 2.2.55; docs/decisions.md, Tools).
fn tolerated(m: &Dp4Message, problems: &[String]) -> bool {
    m.header.command == Command::DPSP_MSG_YOUAREDEAD
        && m.encoded_len() == 28
        && problems.iter().all(|p| p.starts_with("Malformed Packet"))
}

#[track_caller]
fn check_system(f: &Frame, c: &Capture, m: &Dp4Message, net: &Dp4Net) {
    let what = format!("{} from node {} ({:?})", m.name(), c.from, c.via);
    let problems = problems(f);
    assert!(
        problems.is_empty() || tolerated(m, &problems),
        "{what}: tshark reports {problems:?}\n{:#?}",
        f.fields
    );
    assert_eq!(f.num("dplay.command"), u64::from(m.header.command.0), "{what}: command");
    assert_eq!(f.num("dplay.size"), c.bytes.len() as u64, "{what}: size");
    assert_eq!(f.num("dplay.token"), u64::from(m.header.token.0), "{what}: token");
    assert_eq!(f.num("dplay.dialect.version"), u64::from(m.header.version), "{what}: version");
    // The SockAddr names the sender's TCP listener: its port, and its address or 0.0.0.0
    // for "the address this came from" (MC-DPL4CS 2.2.6).
    let listener = net.stream_addr(c.from).unwrap();
    assert_eq!(f.num("dplay.saddr.port"), u64::from(listener.port()), "{what}: SockAddr port");
    let ip: Ipv4Addr = f.str("dplay.saddr.ip").parse().unwrap();
    assert!(ip == *listener.ip() || ip.is_unspecified(), "{what}: SockAddr address {ip}");
    assert_eq!(*m.header.sock_addr.addr.ip(), ip, "{what}: tshark reads our SockAddr address");
    if let Dp4Body::Packet(frag) = &m.body {
        assert_eq!(f.str("dplay.message.guid"), tshark::guid(&frag.guid_message), "{what}: GUID");
        assert_eq!(f.num("dplay.type_15.packet_idx"), u64::from(frag.packet_index), "{what}: index");
        assert_eq!(f.num("dplay.type_15.total_packets"), u64::from(frag.total_packets), "{what}: total");
        assert_eq!(f.num("dplay.type_15.message.size"), u64::from(frag.message_size), "{what}: size");
        assert_eq!(f.num("dplay.type_15.offset"), u64::from(frag.offset), "{what}: offset");
        assert_eq!(f.num("dplay.type_15.data_size"), frag.data.len() as u64, "{what}: data size");
    }
}

/// Checks every frame of one scenario; returns the commands it carried and the kinds of
/// MC-DPL4R frame.
#[track_caller]
fn check_scenario(
    name: &str,
    net: &Dp4Net,
    pk: &[CapturedPacket],
    frames: &[Frame],
) -> (BTreeSet<u16>, BTreeSet<&'static str>) {
    let mut commands = BTreeSet::new();
    let mut reliable = BTreeSet::new();
    let rp = reliable_session(net);
    for (i, (p, f)) in pk.iter().zip(frames).enumerate() {
        let Some(index) = p.capture else {
            f.assert_clean(&format!("{name}: TCP handshake frame {}", i + 1));
            continue;
        };
        let c = &net.captures[index];
        match ours(c).unwrap_or_else(|e| panic!("{name}: frame {} does not parse: {e}", i + 1)) {
            Some(m) => {
                check_system(f, c, &m, net);
                commands.insert(m.header.command.0);
            }
            None => {
                // No signature, so the heuristic dissector leaves it alone (docs/decisions.md).
                let what = match (rp, c.via) {
                    (true, Via::Udp) => {
                        let what = format!("{name}: MC-DPL4R frame {}", i + 1);
                        reliable.insert(reliable_frame(&what, c, net));
                        what
                    }
                    _ => format!("{name}: player message, frame {}", i + 1),
                };
                f.assert_clean(&what);
                assert!(!f.has("dplay.command"), "{what}: tshark claims it");
                assert!(f.str("frame.protocols").ends_with(":udp:data") || c.via == Via::Tcp, "{what}");
            }
        }
    }
    (commands, reliable)
}

/// The SPData a joining instance sends for its system player names its own TCP listener and
/// UDP socket: the ports the capture shows it using (MC-DPL4CS 2.2.2, 2.2.11).
#[track_caller]
fn check_sp_data(net: &Dp4Net, c: &Capture, m: &Dp4Message) {
    let Dp4Body::AddForwardRequest(req) = &m.body else { return };
    let sp = &req.player_info.sp_data.0;
    assert_eq!(sp.len(), 32, "SPData is two SOCKADDR_INs");
    let port = |at: usize| u16::from_be_bytes([sp[at + 2], sp[at + 3]]);
    assert_eq!(port(0), net.stream_addr(c.from).unwrap().port(), "SPData TCP port");
    assert_eq!(port(16), net.datagram_addr(c.from).unwrap().port(), "SPData UDP port");
}

/// Every scenario completes as it should, and every message it sent parses with our own
/// decoder, a player message as a datagram or stream carries it (MC-DPL4CS 2.2.45); the
/// SPData of each join names the ports the capture shows.
#[test]
fn scenarios_complete_and_decode() {
    for (name, scenario) in scenarios::ALL {
        let net = run(name, *scenario);
        assert!(!net.captures.is_empty(), "{name} sent nothing");
        for c in &net.captures {
            if c.via == Via::Udp {
                assert_eq!(
                    Some(c.src),
                    net.datagram_addr(c.from),
                    "{name}: datagrams leave from the game socket"
                );
            }
            if let Some(m) = ours(c).unwrap_or_else(|e| panic!("{name}: {e}")) {
                check_sp_data(&net, c, &m);
            }
        }
        for (i, node) in net.nodes.iter().enumerate() {
            assert_eq!(
                node.stats().dropped_total(),
                0,
                "{name}: node {i} dropped {:?}",
                node.stats().dropped
            );
        }
    }
}

/// MC-DPL4CS 2.1, 2.2: tshark dissects all of it, frame by frame, as what we sent, with one
/// TCP segment per write and again with writes cut at a 1460-byte MSS (tshark reassembles
/// them); and the scenarios together send every command our session logic knows how to send.
#[test]
fn session_traffic_matches_tshark() {
    if !tshark::available("session_traffic_matches_tshark") {
        return;
    }
    let mut commands = BTreeSet::new();
    let mut reliable = BTreeSet::new();
    for (name, scenario) in scenarios::ALL {
        let net = run(name, *scenario);
        for (cut, pk) in [("", packets(&net.captures)), ("_mss", packets_mss(&net.captures, 1460))] {
            let list: Vec<_> = pk.iter().map(|p| p.packet.clone()).collect();
            let frames = tshark::dissect(&format!("dp4_session_{name}{cut}"), &list);
            let (c, r) = check_scenario(&format!("{name}{cut}"), &net, &pk, &frames);
            commands.extend(c);
            reliable.extend(r);
        }
    }
    // Never a NACK: like Windows, we answer a gap with an ACK (MC-DPL4R 6 <2>).
    assert_eq!(reliable, BTreeSet::from(["ACK", "data"]), "MC-DPL4R frames seen");
    let sent: Vec<&str> = commands.iter().map(|c| Command(*c).name().unwrap_or("?")).collect();
    assert_eq!(
        sent,
        [
            "DPSP_MSG_ENUMSESSIONSREPLY",
            "DPSP_MSG_ENUMSESSIONS",
            "DPSP_MSG_ENUMPLAYERSREPLY",
            "DPSP_MSG_REQUESTPLAYERID",
            "DPSP_MSG_REQUESTGROUPID",
            "DPSP_MSG_REQUESTPLAYERREPLY",
            "DPSP_MSG_CREATEPLAYER",
            "DPSP_MSG_CREATEGROUP",
            "DPSP_MSG_DELETEPLAYER",
            "DPSP_MSG_DELETEGROUP",
            "DPSP_MSG_ADDPLAYERTOGROUP",
            "DPSP_MSG_DELETEPLAYERFROMGROUP",
            "DPSP_MSG_PLAYERDATACHANGED",
            "DPSP_MSG_PLAYERNAMECHANGED",
            "DPSP_MSG_GROUPDATACHANGED",
            "DPSP_MSG_GROUPNAMECHANGED",
            "DPSP_MSG_ADDFORWARDREQUEST",
            "DPSP_MSG_PACKET",
            "DPSP_MSG_PING",
            "DPSP_MSG_PINGREPLY",
            "DPSP_MSG_YOUAREDEAD",
            "DPSP_MSG_PLAYERWRAPPER",
            "DPSP_MSG_SESSIONDESCCHANGED",
            "DPSP_MSG_ADDFORWARDREPLY",
            "DPSP_MSG_SUPERENUMPLAYERSREPLY",
            "DPSP_MSG_CHAT",
            "DPSP_MSG_ADDFORWARD",
            "DPSP_MSG_ADDFORWARDACK",
            "DPSP_MSG_IAMNAMESERVER",
            "DPSP_MSG_CREATEPLAYERVERIFY",
        ]
    );
}
