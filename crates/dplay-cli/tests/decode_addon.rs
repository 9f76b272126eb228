//! `dplay decode` shows Flight Simulator add-on packets by name in human units, for the FS98
//! dialect over DirectPlay 8 and 4 and for FS2004 (issue 15, item 9), and prints captures one
//! line per message with a filter, from a file or standard input (item 10).
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use common::{dplay, dplay_stdin, hex, json_lines, stderr, stdout, temp};
use dplay_addon::packet::{PositionVelocity, ReducedLlapbh};
use dplay_addon::units::{Attitude, Velocity16};
use dplay_addon::{Dialect, Packet};
use dplay_tests::pcap::{Packet as Frame, write_pcap};
use dplay_wire::Blob;
use dplay_wire::dp4::player_message::{DatagramPlayerMessage, PlayerIds};
use dplay_wire::dp8::enumeration::{EnumMessage, EnumQuery};
use dplay_wire::{Uuid, Wire};

/// MC-DPL8R 4.1: the CONNECT of the handshake example.
const CONNECT: &str = "88 01 00 00 06 00 01 00 C6 AE C9 79 9D 36 67 23";
/// MC-DPL4CS 2.2.49: DPSP_MSG_REQUESTPLAYERID.
const REQUEST_PLAYER_ID: &str =
    "20 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 79 05 00 0E 00 08 00 00 00";
/// FS2004's application GUID (FS-MULTIPLAYER.md 2).
const GUID_FS9: Uuid = dplay_wire::Uuid::from_u128(0x0808_CAA5_E62C_4691_8957_5D45_24B9_22DA);

/// POSITION_VELOCITY over Seattle: 1000 m, heading 270, 100 kt over the ground, climbing at
/// 600 ft/min (seed 004; FS-MULTIPLAYER.md 1.3).
fn position(dialect: Dialect) -> Vec<u8> {
    let attitude = Attitude { pitch_deg: 2.0, bank_deg: -5.0, heading_deg: 270.0 };
    Packet::PositionVelocity(PositionVelocity {
        packet_index: 7,
        application_time: 0,
        lat_velocity: Velocity16::from_ft_per_s(0.0),
        lon_velocity: Velocity16::from_ft_per_s(-168.781),
        alt_velocity: Velocity16::from_ft_per_s(10.0),
        ground_velocity: Velocity16::unsigned_from_ft_per_s(168.781),
        reserved: 0,
        reduced_llapbh: ReducedLlapbh::from_degrees(47.467, -122.309, 1000.0, attitude, false),
        padding: Blob::default(),
    })
    .to_vec(dialect)
    .unwrap()
}

/// A DFRAME carrying one whole application message (MC-DPL8R 2.2.2: DATA, RELIABLE,
/// SEQUENTIAL, NEW_MSG, END_MSG; no USER_1, so not a session message).
fn dframe(seq: u8, payload: &[u8]) -> Vec<u8> {
    [&[0x37, 0x00, seq, 0x00][..], payload].concat()
}

/// An FS98 flight over DirectPlay 8 on a non-default port, then an FS98 position over
/// DirectPlay 4 UDP.
fn flight() -> Vec<Frame> {
    let chat = Packet::ChatText(dplay_addon::packet::ChatText {
        chat_data: dplay_addon::packet::ZString::from_ascii_lossy("hello tower"),
    })
    .to_vec(Dialect::Fs98)
    .unwrap();
    let ids = Some(PlayerIds { id_from: 0x25C3_67F3, id_to: 0 });
    let dp4 = DatagramPlayerMessage::new(ids, Blob::new(&position(Dialect::Fs98))).to_vec().unwrap();
    vec![
        Frame::udp("127.0.0.1:40000", "127.0.0.1:47101", &hex(CONNECT)),
        Frame::udp("127.0.0.1:40000", "127.0.0.1:47101", &dframe(1, &hex("01 10 00 00 00 00 00 00"))),
        Frame::udp("127.0.0.1:40000", "127.0.0.1:47101", &dframe(2, &position(Dialect::Fs98))),
        Frame::udp("127.0.0.1:40000", "127.0.0.1:47101", &dframe(3, &chat)),
        Frame::tcp("10.0.0.1:1033", "10.0.0.2:2300", 1, &hex(REQUEST_PLAYER_ID)),
        Frame::udp("10.0.0.1:2301", "10.0.0.2:2300", &dp4),
    ]
}

fn flight_pcap(name: &str) -> std::path::PathBuf {
    let path = temp(name);
    write_pcap(&path, &flight());
    path
}

/// Item 10: one line per message by default: time, addresses, transport, family, message and
/// its key fields, add-on packets by name in human units.
#[test]
fn one_line_per_message() {
    let path = flight_pcap("flight_lines.pcap");
    let out = dplay(&["decode", path.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    insta::assert_snapshot!(stdout(&out), @r#"
       0.000000  127.0.0.1:40000 -> 127.0.0.1:47101  udp  dp8 CONNECT  msg_id=0 rsp_id=0 protocol_version=0x10006 sess_id=0x79C9AEC6
       0.001000  127.0.0.1:40000 -> 127.0.0.1:47101  udp  dp8 DFRAME  ADD_PLAYER_REQUEST
       0.002000  127.0.0.1:40000 -> 127.0.0.1:47101  udp  dp8 DFRAME  POSITION_VELOCITY #7 47.46700 -122.30900 3281 ft pitch 1.9 bank -5.1 hdg 270.0 gs 100 kt vs +600 fpm
       0.003000  127.0.0.1:40000 -> 127.0.0.1:47101  udp  dp8 DFRAME  CHAT_TEXT "hello tower"
       0.004000  10.0.0.1:1033 -> 10.0.0.2:2300  tcp  dp4 DPSP_MSG_REQUESTPLAYERID  flags=LOCAL
       0.005000  10.0.0.1:2301 -> 10.0.0.2:2300  udp  dp4 DPSP_MSG_PLAYERMESSAGE  POSITION_VELOCITY #7 47.46700 -122.30900 3281 ft pitch 1.9 bank -5.1 hdg 270.0 gs 100 kt vs +600 fpm
    "#);
}

/// Item 9: JSON carries the add-on packet under `addon`, in human units.
#[test]
fn addon_json_in_human_units() {
    let path = flight_pcap("flight_json.pcap");
    let lines = json_lines(&dplay(&["decode", "--json", path.to_str().unwrap()]));
    let dp8 = &lines[2]["addon"][0];
    assert_eq!(lines[2]["message"], "DFRAME");
    assert_eq!(dp8["dialect"], "FS98");
    assert_eq!(dp8["packet"], "POSITION_VELOCITY");
    assert_eq!(dp8["latitude_deg"], 47.467);
    assert_eq!(dp8["longitude_deg"], -122.309);
    assert_eq!(dp8["altitude_m"], 1000.0);
    assert_eq!(dp8["heading_deg"], 270.0);
    assert_eq!(dp8["speeds"]["ground_speed_kt"], 100.0);
    assert_eq!(dp8["speeds"]["vertical_speed_fpm"], 600.0);
    let dp4 = &lines[5]["addon"][0];
    assert_eq!(lines[5]["message"], "DPSP_MSG_PLAYERMESSAGE");
    assert_eq!(dp4, dp8);
    assert_eq!(lines[3]["addon"][0]["text"], "hello tower");
}

/// `-v` prints the tree, with the add-on packet's fields after the message's.
#[test]
fn verbose_tree_shows_the_addon_packet() {
    let path = flight_pcap("flight_tree.pcap");
    let text = stdout(&dplay(&["decode", "-v", "--filter", "chat", path.to_str().unwrap()]));
    assert!(text.contains("DirectPlay 8 DFRAME  (MS-DPDX: TRANS_USERDATA_HEADER)\n"), "{text}");
    assert!(text.contains("  add-on FS98 CHAT_TEXT\n    text: hello tower\n"), "{text}");
}

/// Item 10: `-` reads the capture from standard input; `--filter` keeps messages by name or
/// address (any of several).
#[test]
fn stdin_and_filters() {
    let bytes = std::fs::read(flight_pcap("flight_stdin.pcap")).unwrap();
    let names = |out: &std::process::Output| -> Vec<String> {
        json_lines(out)
            .iter()
            .map(|l| l["addon"][0]["packet"].as_str().or(l["message"].as_str()).unwrap().to_owned())
            .collect()
    };
    let out = dplay_stdin(&["decode", "--json", "-"], &bytes);
    assert_eq!(names(&out).len(), 6, "{out:?}");
    let out = dplay_stdin(&["decode", "--json", "--filter", "POSITION", "-"], &bytes);
    assert_eq!(names(&out), ["POSITION_VELOCITY", "POSITION_VELOCITY"]);
    assert!(stderr(&out).contains("0 malformed, 2 shown"), "{}", stderr(&out));
    let out = dplay_stdin(&["decode", "--json", "--filter", "10.0.0.2", "--filter", "connect", "-"], &bytes);
    assert_eq!(names(&out), ["CONNECT", "DPSP_MSG_REQUESTPLAYERID", "POSITION_VELOCITY"]);
    let out = dplay_stdin(&["decode", "--json", "--filter", "10.0.0.1:2301", "-"], &bytes);
    assert_eq!(names(&out), ["POSITION_VELOCITY"]);
}

/// FS2004's dialect: found from its application GUID in the capture (here an EnumQuery), or
/// chosen with `--dialect`. FS2004 numbers POSITION_VELOCITY 0x100D, with 4 reserved bytes.
#[test]
fn fs2004_dialect() {
    let query = EnumMessage::Query(EnumQuery {
        enum_payload: 1,
        application_guid: Some(GUID_FS9),
        application_payload: Blob::default(),
    })
    .to_vec()
    .unwrap();
    let fs2004 = dframe(1, &position(Dialect::Fs2004));
    let path = temp("fs2004.pcap");
    write_pcap(
        &path,
        &[
            Frame::udp("10.0.0.1:2302", "10.0.0.2:6073", &query),
            Frame::udp("10.0.0.1:23456", "10.0.0.2:23456", &hex(CONNECT)),
            Frame::udp("10.0.0.1:23456", "10.0.0.2:23456", &fs2004),
        ],
    );
    let lines = json_lines(&dplay(&["decode", "--json", path.to_str().unwrap()]));
    assert_eq!(lines[2]["addon"][0]["dialect"], "FS2004");
    assert_eq!(lines[2]["addon"][0]["packet"], "POSITION_VELOCITY");
    assert_eq!(lines[2]["addon"][0]["latitude_deg"], 47.467);

    let text = dplay_wire::hexdump::hex(&fs2004);
    let lines = json_lines(&dplay(&["decode", "--json", "--dialect", "fs2004", "--hex", &text]));
    assert_eq!(lines[0]["addon"][0]["packet"], "POSITION_VELOCITY");
    // Read as FS98, 0x100D is OBSERVER_CHANGE_REFUSED (its data kept as bytes): the dialect matters.
    let lines = json_lines(&dplay(&["decode", "--json", "--hex", &text]));
    assert_eq!(lines[0]["addon"][0]["packet"], "OBSERVER_CHANGE_REFUSED");
}

/// FS98 positions over DirectPlay 4 UDP in a capture that missed the session's start (no
/// system message seen): the add-on packet after the two IDs identifies them, even on
/// DirectPlay 8's default ports; a DFRAME carrying one stays DirectPlay 8.
#[test]
fn fs98_over_dp4_without_the_session_start() {
    let ids = Some(PlayerIds { id_from: 0x0194_FDAD, id_to: 0 });
    let dp4 = DatagramPlayerMessage::new(ids, Blob::new(&position(Dialect::Fs98))).to_vec().unwrap();
    let dp8 = dframe(5, &position(Dialect::Fs98));
    let path = temp("fs98_mid_session.pcap");
    write_pcap(
        &path,
        &[
            Frame::udp("10.0.0.1:2350", "10.0.0.2:2350", &dp4),
            Frame::udp("10.0.0.1:2302", "10.0.0.2:2302", &dp8),
        ],
    );
    let lines = json_lines(&dplay(&["decode", "--json", path.to_str().unwrap()]));
    assert_eq!(lines[0]["family_short"], "dp4");
    assert_eq!(lines[0]["message"], "DPSP_MSG_PLAYERMESSAGE");
    assert_eq!(lines[0]["addon"][0]["packet"], "POSITION_VELOCITY");
    assert_eq!(lines[1]["family_short"], "dp8");
    assert_eq!(lines[1]["addon"][0]["packet"], "POSITION_VELOCITY");
}
