use proptest::prelude::*;

use super::*;
use crate::dp4::header::Command;
use crate::testutil::{assert_reemits, bytes};

/// MC-DPL4CS 2.2.6 / 4.1: a 70-byte DPSP_MSG_ENUMSESSIONS from a remote machine.
fn enum_sessions() -> Vec<u8> {
    let mut msg =
        bytes("46 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 79 02 00 0E 00");
    msg.resize(70, 0);
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
    assert_eq!(m.body.len(), 42);

    let mut odd = enum_sessions();
    odd.truncate(69);
    odd[0] = 69;
    assert_eq!(classify(&odd), Kind::Dp4Message);
    check(&odd, Family::Dp4, "DPSP_MSG_ENUMSESSIONS");
}

/// A datagram holds exactly one DP4 message: a size short of the datagram is an error.
#[test]
fn dp4_size_must_cover_the_datagram() {
    let mut msg = enum_sessions();
    msg.push(0);
    assert!(matches!(parse_datagram(&msg), Err(WireError::InvalidValue { field: "dwSize", .. })));
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

proptest! {
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
        msg.extend_from_slice(b"play");
        msg.extend_from_slice(&tail);
        msg.truncate(size as usize);
        let d = parse_datagram(&msg).expect("parse");
        prop_assert_eq!(d.family(), Family::Dp4);
        prop_assert_eq!(d.to_vec().expect("emit"), msg);
    }
}
