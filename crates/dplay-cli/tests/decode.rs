//! `dplay decode`, run as a user runs it: hex, pcap, pcapng, JSON, malformed input, bad arguments.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use common::{dplay, hex, json_lines, stderr, stdout, temp};
use dplay_tests::pcap::{Packet, write_pcap, write_pcapng};
use serde_json::Value;

/// MC-DPL8R 4.1: the CONNECT of the handshake example.
const CONNECT: &str = "88 01 00 00 06 00 01 00 C6 AE C9 79 9D 36 67 23";
/// MC-DPL8R 4.2: the SACK example.
const SACK: &str = "80 06 01 00 03 06 00 00 07 5D 11 00";
/// A CFRAME with the undefined bExtOpCode 0x09.
const BAD_CFRAME: &str = "88 09 00 00 06 00 01 00 C6 AE C9 79";

/// MC-DPL4CS 2.2.29: a 52-byte DPSP_MSG_ENUMSESSIONS without password.
fn enum_sessions() -> Vec<u8> {
    let mut msg = hex("34 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 79 02 00 0E 00");
    msg.resize(52, 0);
    msg
}

/// A DP4 message of `len` bytes with the unassigned Command 0x14 (its body is any bytes).
fn unassigned(len: u8) -> Vec<u8> {
    let mut msg = hex("00 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 79 14 00 0E 00");
    msg[0] = len;
    msg.resize(usize::from(len), 0xAA);
    msg
}

#[test]
fn hex_prints_a_tree() {
    let out = dplay(&["decode", "--hex", CONNECT]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.starts_with("DirectPlay 8 CONNECT  (MS-DPDX: TRANS_COMMAND_CONNECT)\n"), "{text}");
    for line in ["  poll: true", "  protocol_version: 65542 (0x10006)", "  sess_id: 2043260614 (0x79C9AEC6)"]
    {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
}

#[test]
fn hex_json_has_family_message_and_fields() {
    let out = dplay(&["decode", "--json", "--hex", SACK, "--hex", "3F 02 00 00 C6 AE C9 79"]);
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["family"], "DirectPlay 8");
    assert_eq!(lines[0]["message"], "SACK");
    assert_eq!(lines[0]["alias"], "TRANS_COMMAND_SACK");
    assert_eq!(lines[0]["fields"]["n_rcv"], 6);
    assert_eq!(lines[1]["message"], "KEEPALIVE");
    assert_eq!(lines[1]["fields"]["header"]["sess_id"], 0x79C9_AEC6u32);
}

#[test]
fn malformed_is_reported_and_decoding_goes_on() {
    let out = dplay(&["decode", "--hex", BAD_CFRAME, "--hex", CONNECT]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("DirectPlay 8 MALFORMED: unknown CFRAME bExtOpCode 0x9"), "{text}");
    assert!(text.contains("DirectPlay 8 CONNECT"), "{text}");

    let out = dplay(&["decode", "--json", "--hex", "88 01 00"]);
    let lines = json_lines(&out);
    assert_eq!(lines[0]["message"], Value::Null);
    // Issue 25 item 18: a CFRAME cut short, not an unknown lead byte.
    assert!(lines[0]["error"].as_str().unwrap().contains("truncated"), "{lines:?}");
    assert_eq!(lines[0]["bytes"], "88 01 00");
}

/// A capture with DirectPlay 8 on UDP, other UDP traffic, a malformed CFRAME, and DirectPlay 4
/// over TCP: two messages in one segment, then one split across two segments.
fn capture() -> Vec<Packet> {
    let two = [enum_sessions(), unassigned(29)].concat();
    let split = unassigned(40);
    vec![
        Packet::udp("10.0.0.1:2302", "10.0.0.2:6073", &hex(CONNECT)),
        Packet::udp("10.0.0.1:5353", "10.0.0.2:53", &hex("3F 02 00 00 C6 AE C9 79")),
        Packet::udp("10.0.0.2:6073", "10.0.0.1:2302", &hex(BAD_CFRAME)),
        Packet::tcp("10.0.0.1:2300", "10.0.0.2:2300", 1, &two),
        Packet::tcp("10.0.0.1:2300", "10.0.0.2:2300", 100, &split[..30]),
        Packet::tcp("10.0.0.1:2300", "10.0.0.2:2300", 130, &split[30..]),
        Packet::udp("10.0.0.2:6073", "10.0.0.1:2302", &hex(SACK)),
    ]
}

#[track_caller]
fn check_capture(lines: &[Value]) {
    let summary: Vec<_> = lines
        .iter()
        .map(|l| {
            (
                l["frame"].as_u64().unwrap(),
                l["transport"].as_str().unwrap(),
                l["message"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (1, "udp", "CONNECT"),
            (3, "udp", "-"),
            (4, "tcp", "DPSP_MSG_ENUMSESSIONS"),
            (4, "tcp", "DPSP_MSG_UNKNOWN"),
            (6, "tcp", "DPSP_MSG_UNKNOWN"),
            (7, "udp", "SACK"),
        ]
    );
    assert_eq!(lines[0]["src"], "10.0.0.1:2302");
    assert_eq!(lines[0]["dst"], "10.0.0.2:6073");
    assert_eq!(lines[0]["time"], 0.0);
    assert_eq!(lines[0]["family_short"], "dp8");
    assert_eq!(lines[5]["time"], 0.006);
    assert_eq!(lines[1]["family"], "DirectPlay 8");
    assert!(lines[1]["error"].as_str().unwrap().contains("bExtOpCode"));
    assert_eq!(lines[2]["family"], "DirectPlay 4");
    assert_eq!(lines[2]["length"], 52);
    assert_eq!(lines[3]["length"], 29);
    assert_eq!(lines[4]["length"], 40);
    assert_eq!(lines[4]["fields"]["header"]["sock_addr"]["addr"], "0.0.0.0:2300");
}

#[test]
fn pcap_json_finds_every_message() {
    let path = temp("decode.pcap");
    write_pcap(&path, &capture());
    let out = dplay(&["decode", "--json", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "one frame is malformed: {out:?}");
    check_capture(&json_lines(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("7 frames, 6 DirectPlay messages, 1 other frames skipped, 1 malformed"), "{err}");
}

#[test]
fn pcapng_json_finds_every_message() {
    let path = temp("decode.pcapng");
    write_pcapng(&path, &capture());
    let out = dplay(&["decode", "--json", path.to_str().unwrap()]);
    check_capture(&json_lines(&out));
}

#[test]
fn pcap_tree_shows_origin() {
    let path = temp("tree.pcap");
    write_pcap(&path, &capture()[..1]);
    let out = dplay(&["decode", "-v", path.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "frame 1  0.000000 s  10.0.0.1:2302 -> 10.0.0.2:6073  udp  16 bytes\nDirectPlay 8 CONNECT"
        ),
        "{text}"
    );
}

/// Lead bytes alone are not enough on a port DirectPlay 8 does not use by default.
#[test]
fn any_port_finds_dp8_elsewhere() {
    let path = temp("ports.pcap");
    write_pcap(&path, &[Packet::udp("10.0.0.1:5000", "10.0.0.2:5001", &hex(SACK))]);
    let out = dplay(&["decode", "--json", path.to_str().unwrap()]);
    assert!(json_lines(&out).is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: no DirectPlay found") && err.contains("--any-port"), "{err}");
    let out = dplay(&["decode", "--json", "--any-port", path.to_str().unwrap()]);
    assert_eq!(json_lines(&out)[0]["message"], "SACK");
}

#[test]
fn bad_arguments_fail_clearly() {
    let cases: [(&[&str], i32, &str); 5] = [
        (&["decode"], 2, "required"),
        (&["decode", "--hex", "88 0"], 2, "odd number of hex digits"),
        (&["decode", "--hex", "zz"], 2, "not a hex byte"),
        (&["frobnicate"], 2, "unrecognized subcommand"),
        (&["decode", "/nonexistent/x.pcap"], 1, "cannot read /nonexistent/x.pcap"),
    ];
    for (args, code, message) in cases {
        let out = dplay(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    let not_pcap = temp("not.pcap");
    std::fs::write(&not_pcap, b"hello").unwrap();
    let out = dplay(&["decode", not_pcap.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a pcap or pcapng file"));
}

/// What `dplay decode --help` says, and every error message of decode's own arguments.
#[test]
fn help_and_errors_snapshot() {
    insta::assert_snapshot!("decode_help", stdout(&dplay(&["decode", "--help"])));
    let not_pcap = temp("snapshot-not.pcap");
    std::fs::write(&not_pcap, b"hello").unwrap();
    let cases: [&[&str]; 7] = [
        &["decode"],
        &["decode", "--hex", "88 0"],
        &["decode", "--hex", ""],
        &["decode", "--tcp", "x.pcap"],
        &["decode", "--dialect", "fs2", "--hex", "00"],
        &["decode", "/nonexistent/x.pcap"],
        &["decode", not_pcap.to_str().unwrap()],
    ];
    let mut all = String::new();
    for args in cases {
        let out = dplay(args);
        let err = String::from_utf8_lossy(&out.stderr).replace(not_pcap.to_str().unwrap(), "NOT.pcap");
        all.push_str(&format!("$ dplay {}\n[exit {:?}]\n{err}\n", args.join(" "), out.status.code()));
    }
    insta::assert_snapshot!("decode_errors", all.replace(not_pcap.to_str().unwrap(), "NOT.pcap"));
}

/// MC-DPL8R 2.2.1.3, 2.2.2: a fast-signed connection between two of our endpoints, captured:
/// the flow's CONNECTED_SIGNED makes its DFRAMEs signed, so each shows its `ullSignature` and
/// its data whole (not 8 bytes short, led by the signature), and every frame re-emits as
/// captured. With --hex, `--signed` reads a DFRAME the same way.
#[test]
fn signed_dframes_show_their_signature() {
    use dplay_dframe::{Config, Endpoint, MessageKind, Signing};
    #[allow(clippy::disallowed_methods)] // the origin of the exchange's virtual time
    let start = std::time::Instant::now();
    let (a_addr, b_addr) = ("10.0.0.1:2302", "10.0.0.2:2302");
    let mut config = Config::default();
    config.signing = Signing::Fast;
    let mut a = Endpoint::new(config.clone(), start);
    let mut b = Endpoint::new(config.with_seed(1), start);
    let mut packets = Vec::new();
    a.connect(start, b_addr.parse().unwrap()).unwrap();
    let mut now = start;
    for round in 0..10 {
        if round == 5 {
            a.send(now, b_addr.parse().unwrap(), b"signed data", MessageKind::RELIABLE).unwrap();
        }
        now += std::time::Duration::from_millis(30);
        a.handle_timeout(now);
        b.handle_timeout(now);
        while let Some(t) = a.poll_transmit() {
            b.handle_datagram(now, a_addr.parse().unwrap(), &t.contents);
            packets.push(Packet::udp(a_addr, b_addr, &t.contents));
        }
        while let Some(t) = b.poll_transmit() {
            a.handle_datagram(now, b_addr.parse().unwrap(), &t.contents);
            packets.push(Packet::udp(b_addr, a_addr, &t.contents));
        }
    }
    let path = temp("signed.pcap");
    write_pcap(&path, &packets);
    let out = dplay(&["decode", path.to_str().unwrap(), "--json", "--reemit"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    let dframes: Vec<&Value> = lines.iter().filter(|l| l["fields"]["header"].is_object()).collect();
    assert!(dframes.len() >= 3, "{lines:?}");
    for d in &dframes {
        assert!(d["fields"]["header"]["signature"].is_u64(), "{d}");
    }
    let data = dframes.iter().find(|d| d["message"] == "DFRAME").expect("the data frame");
    assert_eq!(data["fields"]["payload"]["Data"], "73 69 67 6E 65 64 20 64 61 74 61", "{data}");
    for l in &lines {
        assert_eq!(l["reemitted"], l["bytes"], "{l}");
    }
    let text = stdout(&dplay(&["decode", path.to_str().unwrap()]));
    assert!(text.contains("dp8 DFRAME signed 0x"), "{text}");

    let frame = "37 00 05 03 88 77 66 55 44 33 22 11 68 69";
    let out = dplay(&["decode", "--json", "--hex", frame, "--signed"]);
    let v = &json_lines(&out)[0];
    assert_eq!(v["fields"]["header"]["signature"], 0x1122_3344_5566_7788u64, "{v}");
    assert_eq!(v["fields"]["payload"]["Data"], "68 69", "{v}");
}
