use proptest::prelude::*;

use super::*;
use crate::dp4::header::Command;
use crate::dp8::dframe::DframeContext;
use crate::dp8::session::SessionMessage;
use crate::testutil::{assert_reemits, bytes};
use crate::text::Blob;

/// MC-DPL4CS 2.2.29: a 52-byte DPSP_MSG_ENUMSESSIONS (no password) from a remote machine.
fn enum_sessions() -> Vec<u8> {
    let mut msg =
        bytes("34 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 79 02 00 0E 00");
    msg.resize(52, 0);
    msg
}

#[track_caller]
fn check(frame: &[u8], family: Family, name: &str) -> Datagram {
    let d = assert_reemits::<Datagram>(frame);
    assert_eq!(d.family(), family);
    assert_eq!(d.message_name(), name);
    assert_eq!(classify(frame).family(), Some(family));
    d
}

/// INDEX B.1: the lead byte picks the DirectPlay 8 frame kind.
#[test]
fn demux_table() {
    assert_eq!(classify(&bytes("00 02 AA BB 02")), Kind::Dp8SessionPacket { command: 2 });
    assert_eq!(
        classify(&bytes("00 05 C1 D0 B8 82 DD 92 9C E9 AF F9")),
        Kind::Dp8SessionPacket { command: 5 }
    );
    assert_eq!(classify(&bytes("3F 02 00 00")), Kind::Dp8Dframe);
    assert_eq!(classify(&bytes("88 01 00 00 06 00 01 00 C6 AE C9 79")), Kind::Dp8Cframe);
    assert_eq!(classify(&bytes("80 06 01 00 03 06 00 00 07 5D 11")), Kind::Unknown, "CFRAME under 12 bytes");
    assert_eq!(classify(&bytes("3F 02 00")), Kind::Unknown, "DFRAME under 4 bytes");
    assert_eq!(classify(&bytes("84 01 00 00 06 00 01 00 C6 AE C9 79")), Kind::Unknown);
    assert_eq!(classify(&[]), Kind::Unknown);
    assert_eq!(classify(&enum_sessions()), Kind::Dp4Message);
}

/// MC-DPL8R 4.1: CONNECT, with its MS-DPDX alias.
#[test]
fn connect() {
    let d = check(&bytes("88 01 00 00 06 00 01 00 C6 AE C9 79 9D 36 67 23"), Family::Dp8, "CONNECT");
    assert_eq!(d.alias(), Some("TRANS_COMMAND_CONNECT"));
    assert_eq!(d.family().name(), "DirectPlay 8");
    assert_eq!(d.family().short(), "dp8");
}

/// MC-DPL8R 4.2: SACK (NRcv 6, F-5).
#[test]
fn sack() {
    let d = check(&bytes("80 06 01 00 03 06 00 00 07 5D 11 00"), Family::Dp8, "SACK");
    assert_eq!(d.alias(), Some("TRANS_COMMAND_SACK"));
}

/// MC-DPL8R 4.1: the KeepAlive DFRAME carries `dwSessID` and no payload.
#[test]
fn keepalive() {
    let d = check(&bytes("3F 02 00 00 C6 AE C9 79"), Family::Dp8, "KEEPALIVE");
    let Datagram::Dframe(f) = d else { panic!("not a DFRAME: {d:?}") };
    assert_eq!(f.header.sess_id, Some(0x79C9_AEC6));
    assert_eq!(f.payload, DframePayload::Empty);
}

/// MC-DPL8R 4.2: a data frame; its payload stays opaque (no USER_1).
#[test]
fn data_frame() {
    let d = check(&bytes("3D 00 05 03 01 41 42 43 44 45"), Family::Dp8, "DFRAME");
    let Datagram::Dframe(f) = d else { panic!("not a DFRAME: {d:?}") };
    assert_eq!(f.payload, DframePayload::Data(Blob::new(&bytes("01 41 42 43 44 45"))));
}

/// MS-DPDX 2.2.16: END_STREAM without payload.
#[test]
fn end_of_stream() {
    let d = check(&bytes("37 08 04 02"), Family::Dp8, "END_OF_STREAM");
    assert_eq!(d.alias(), Some("TRANS_USERDATA_END_OF_STREAM"));
}

/// MC-DPL4CS 2.2.6: DirectPlay 4 is recognised by `play` at offset 20, even when its size is
/// odd and its first byte would look like a DFRAME (decision F-21).
#[test]
fn dp4_message() {
    let d = check(&enum_sessions(), Family::Dp4, "DPSP_MSG_ENUMSESSIONS");
    let Datagram::Dp4(m) = &d else { panic!("not DP4: {d:?}") };
    assert_eq!(m.header.command, Command::DPSP_MSG_ENUMSESSIONS);

    // An unassigned Command (0x14) with one byte of body: 29 bytes, lead byte 0x1D.
    let odd = bytes("1D 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 79 14 00 0E 00 AA");
    assert_eq!(classify(&odd), Kind::Dp4Message);
    check(&odd, Family::Dp4, "DPSP_MSG_UNKNOWN");
}

/// A datagram holds exactly one DP4 message: a size short of the datagram is an error.
#[test]
fn dp4_size_must_cover_the_datagram() {
    let mut msg = enum_sessions();
    msg.push(0);
    assert!(matches!(parse_datagram(&msg), Err(WireError::InvalidValue { field: "dwSize", .. })));
}

/// MS-DPDX 2.2.4: DXDiag's EnumQuery, with its application GUID.
#[test]
fn enum_query() {
    check(&bytes("00 02 01 00 01 DA 80 EF 61 1B 69 47 42 9A DD 1C 7B ED 2B C1 3E"), Family::Dp8, "EnumQuery");
    check(&bytes("00 02 05 00 02 AB CD"), Family::Dp8, "EnumQuery");
}

/// MC-DPLNAT 4.2: PATH_TEST, which MS-DPDX calls SESS_PATH_TEST.
#[test]
fn path_test() {
    let d = check(&bytes("00 05 C1 D0 B8 82 DD 92 9C E9 AF F9"), Family::Dp8, "PATH_TEST");
    assert_eq!(d.alias(), Some("SESS_PATH_TEST"));
}

/// MC-DPL8R 2.2.3: a COALESCE frame is decoalesced, and each USER_1 sub-payload is a session
/// message (MS-DPDX 2.2.17.1); a bad coalesced payload is an error.
#[test]
fn coalesced() {
    let d = check(&bytes("3F 04 01 00 04 40 02 01 C3 00 00 00 BB CC"), Family::Dp8, "COALESCED");
    let Datagram::Dframe(f) = d else { panic!("not a DFRAME: {d:?}") };
    let DframePayload::Coalesced(parts) = f.payload else { panic!("not coalesced: {f:?}") };
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0].body, PartBody::Session(SessionMessage::AckConnectInfo));
    assert_eq!(parts[1].body, PartBody::Data(Blob::new(&bytes("BB CC"))));
    assert!(parse_datagram(&bytes("3F 04 01 00 01 40 02")).is_err());
    assert!(
        parse_datagram(&bytes("3F 04 01 00 01 41 00 00 7A")).is_err(),
        "USER_1 part not a session message"
    );
}

/// MC-DPL8CS 2.1.1: USER_1 with NEW_MSG and END_MSG carries one session message, named as
/// MC-DPL8CS names it, with its MS-DPDX alias (F-1).
#[test]
fn session_message() {
    let d = check(&bytes("7F 00 01 00 C3 00 00 00"), Family::Dp8, "DN_ACK_CONNECT_INFO");
    assert_eq!(d.alias(), Some("TRANS_USERDATA_ACK_SESSION_INFO"));
    assert!(parse_datagram(&bytes("7F 00 01 00 C3 00 00")).is_err());
    // Without END_MSG it is a piece of a larger message: bytes.
    let d = check(&bytes("5F 00 01 00 C3 00 00"), Family::Dp8, "DFRAME");
    assert!(matches!(d, Datagram::Dframe(DframeDatagram { payload: DframePayload::Data(_), .. })));
}

/// MS-DPDX 2.2.31: DXDiag's chat message travels as application data.
#[test]
fn chat_message() {
    let mut frame = bytes("3D 00 05 03 01 00 48 00 69 00");
    frame.resize(4 + 402, 0);
    check(&frame, Family::Dp8, "TRANS_USERDATA_SEND_MESSAGE");
    frame.pop();
    check(&frame, Family::Dp8, "DFRAME");
}

#[test]
fn unknown_is_an_error() {
    assert!(matches!(parse_datagram(&bytes("42 00")), Err(WireError::Unknown { .. })));
    assert!(matches!(parse_datagram(&bytes("00 09 00 00")), Err(WireError::Unknown { .. })));
    assert!(matches!(
        parse_datagram(&bytes("88 09 00 00 06 00 01 00 C6 AE C9 79")),
        Err(WireError::Unknown { .. })
    ));
}

/// MC-DPL4CS 2.1: a TCP stream is cut by the size fields.
#[test]
fn dp4_stream() {
    let one = enum_sessions();
    let mut stream = [one.clone(), one.clone()].concat();
    let msgs: Vec<_> = dp4_stream_messages(&stream).collect();
    assert_eq!(msgs, vec![Ok(&one[..]), Ok(&one[..])]);

    stream.truncate(100);
    let msgs: Vec<_> = dp4_stream_messages(&stream).collect();
    assert_eq!(msgs.len(), 2);
    assert!(msgs[1].is_err());
}

/// MC-DPL8R 2.2.2: in a signed connection the 8 bytes after the header are `ullSignature`, not
/// payload: a fast-signed DFRAME carrying "hi" reads as signature and data, and re-emits.
#[test]
fn signed_dframe_in_its_context() {
    let frame = bytes("37 00 05 03 88 77 66 55 44 33 22 11 68 69");
    let signed = DframeContext { signed: true, ..DframeContext::default() };
    let d = DframeDatagram::parse_in(&frame, signed).expect("parses");
    assert_eq!(d.header.signature, Some(0x1122_3344_5566_7788));
    assert_eq!(d.payload, DframePayload::Data(Blob::new(b"hi")));
    assert_eq!(Datagram::Dframe(d).to_vec().expect("emit"), frame);
    let unsigned = DframeDatagram::parse(&frame).expect("parses");
    assert_eq!(unsigned.header.signature, None, "without the context the signature is payload");
    assert!(DframeDatagram::parse_in(&frame[..11], signed).is_err(), "a signature cut short");
}

proptest! {
    /// Any bytes, read as a signed connection's DFRAME: never a panic, and what parses
    /// re-emits to the same bytes' meaning.
    #[test]
    fn signed_dframe_parse_reparses(data in proptest::collection::vec(any::<u8>(), 0..96)) {
        let signed = DframeContext { signed: true, ..DframeContext::default() };
        if let Ok(d) = DframeDatagram::parse_in(&data, signed) {
            prop_assert!(d.header.signature.is_some());
            let again = d.to_vec().expect("emit");
            prop_assert_eq!(again.len(), d.encoded_len());
            prop_assert_eq!(DframeDatagram::parse_in(&again, signed).expect("reparse"), d);
        }
    }

    #[test]
    fn parse_never_panics_and_reparses(data in proptest::collection::vec(any::<u8>(), 0..96)) {
        if let Ok(d) = parse_datagram(&data) {
            let again = d.to_vec().expect("emit");
            prop_assert_eq!(again.len(), d.encoded_len());
            prop_assert_eq!(parse_datagram(&again).expect("reparse"), d);
        }
        for msg in dp4_stream_messages(&data) {
            let _ = msg;
        }
    }

    #[test]
    fn dp4_lead_bytes_reparse(size in 28u32..60, token in 0u32..0x1000, tail in proptest::collection::vec(any::<u8>(), 40)) {
        let mut msg = (size | token << 20).to_le_bytes().to_vec();
        msg.extend_from_slice(&[2, 0, 8, 0xFC, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        // An unassigned Command (0x14), whose body is any bytes.
        msg.extend_from_slice(b"play\x14\x00\x0E\x00");
        msg.extend_from_slice(&tail);
        msg.truncate(size as usize);
        let d = parse_datagram(&msg).expect("parse");
        prop_assert_eq!(d.family(), Family::Dp4);
        prop_assert_eq!(d.to_vec().expect("emit"), msg);
    }
}

/// MC-DPL8R 2.2.1 (issue 25 item 18): `88 01` is a CFRAME cut short, not an unknown lead byte;
/// a lone DFRAME lead byte likewise. Other unknown lead bytes stay unknown.
#[test]
fn short_frames_are_truncated_not_unknown() {
    for short in [&[0x88u8, 0x01][..], &[0x80], &[0x3F]] {
        let e = parse_datagram(short).expect_err("too short");
        assert!(matches!(e, WireError::Truncated { .. }), "{short:02x?}: {e}");
    }
    assert!(matches!(parse_datagram(&[0x02, 0x00]), Err(WireError::Unknown { .. })));
}
