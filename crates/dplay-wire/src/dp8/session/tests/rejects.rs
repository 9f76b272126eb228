//! What the session parsers refuse, each case naming its rule.

use super::super::*;
use super::examples::{CONNECT_INFO_EX, SEND_CONNECT_INFO, dframe_payload};
use crate::testutil::bytes;

#[track_caller]
fn rejects(hex: &str) -> WireError {
    SessionMessage::parse(&bytes(hex)).expect_err("must not parse")
}

/// A copy of `payload` with the u32 at `at` replaced.
fn patch(payload: &[u8], at: usize, value: u32) -> Vec<u8> {
    let mut out = payload.to_vec();
    out.splice(at..at + 4, value.to_le_bytes());
    out
}

#[test]
fn unknown_packet_types() {
    for t in [0x00u32, 0xCF, 0xDC, 0xDD, 0xDE, 0xE5, 0x01] {
        let err = SessionMessage::parse(&t.to_le_bytes()).unwrap_err();
        assert_eq!(err, WireError::Unknown { what: "session dwPacketType", value: t.into() });
    }
    assert!(matches!(rejects("C1 00"), WireError::Truncated { field: "dwPacketType", .. }));
}

#[test]
fn fixed_messages_have_exact_lengths() {
    assert_eq!(SessionMessage::parse(&bytes("C3 00 00 00")).unwrap(), SessionMessage::AckConnectInfo);
    rejects("C3 00 00 00 00");
    rejects("C4 00 00 00 01 02 03");
    rejects("C4 00 00 00 01 02 03 04 05");
    rejects("CD 00 00 00 01 00 00 00");
    rejects("D1 00 00 00 01 00 00 00 02 00 00 00 00 00 00 00");
}

/// MS-DPDX 2.2.23: dwVersion of NAMETABLE_VERSION MUST NOT be 0; RESYNC_VERSION may carry 0.
#[test]
fn nametable_version_zero() {
    rejects("C9 00 00 00 00 00 00 00 00 00 00 00");
    assert!(SessionMessage::parse(&bytes("CA 00 00 00 00 00 00 00 00 00 00 00")).is_ok());
}

/// Offsets count from byte 4 and must stay inside the message (MC-DPL8CS 2.2.1.1).
#[test]
fn offsets_are_checked() {
    let (payload, _) = dframe_payload(CONNECT_INFO_EX);
    // dwNameOffset (payload 12) one byte too far.
    let err = SessionMessage::parse(&patch(&payload, 12, 0x61)).unwrap_err();
    assert!(matches!(err, WireError::BadOffset { field: "name", offset: 0x61, .. }), "{err:?}");
    // A size with no offset.
    let err = SessionMessage::parse(&patch(&payload, 24, 4)).unwrap_err();
    assert!(matches!(err, WireError::BadOffset { field: "data", .. }), "{err:?}");
    // An offset into the fixed part: the name would overlap the alternate addresses.
    assert!(SessionMessage::parse(&patch(&payload, 12, 0x5C)).is_err());
    // Trailing bytes after the last blob.
    let mut longer = payload.clone();
    longer.push(0);
    assert!(SessionMessage::parse(&longer).is_err());
    // The name is the last 20 bytes; cut one.
    assert!(SessionMessage::parse(payload.get(..payload.len() - 1).unwrap()).is_err());
}

/// dwDNETVersion 6 means the plain layout: the alternate-address pair is then not a field,
/// the fixed part is 8 bytes shorter and the example's offsets no longer tile the message.
#[test]
fn dnet_version_selects_the_layout() {
    let (payload, _) = dframe_payload(CONNECT_INFO_EX);
    assert!(SessionMessage::parse(&patch(&payload, 8, 6)).is_err());
}

#[test]
fn send_connect_info_counts_are_bounded() {
    let (payload, _) = dframe_payload(SEND_CONNECT_INFO);
    // dwEntryCount (payload 104) huge: refused before anything is allocated.
    let err = SessionMessage::parse(&patch(&payload, 104, u32::MAX)).unwrap_err();
    assert!(matches!(err, WireError::Truncated { field: "DN_NameTable_Entry_Info", .. }), "{err:?}");
    let err = SessionMessage::parse(&patch(&payload, 108, 0x1000_0000)).unwrap_err();
    assert!(matches!(err, WireError::Truncated { .. }), "{err:?}");
    // dwSize MUST be 0x50.
    assert!(SessionMessage::parse(&patch(&payload, 12, 0x4C)).is_err());
}

/// Two blobs may not share bytes: the host's name offset pointed at the joiner's.
#[test]
fn blobs_may_not_overlap() {
    let (payload, _) = dframe_payload(SEND_CONNECT_INFO);
    // Entry 0 dwNameOffset is at payload 4 + 108 + 24 = 136.
    assert!(SessionMessage::parse(&patch(&payload, 136, 0x12E)).is_err());
}

/// DN_ACK_NAMETABLE_OP (INDEX F-16): 12-byte records, then ops by offset; only name-table
/// operations are allowed as dwMsgId.
#[test]
fn ack_nametable_op_records() {
    // One DESTROY_PLAYER op at offset 16 (4 + 12), 16 bytes.
    let ok = "CC 00 00 00 01 00 00 00 D1 00 00 00 10 00 00 00 10 00 00 00
              21 81 9E 94 05 00 00 00 00 00 00 00 01 00 00 00";
    let SessionMessage::AckNameTableOp(m) = SessionMessage::parse(&bytes(ok)).unwrap() else { panic!() };
    let [NameTableOp::DestroyPlayer(d)] = m.ops.as_slice() else { panic!("{m:?}") };
    assert_eq!(
        (d.dpnid_leaving, d.version, d.destroy_reason),
        (Dpnid(0x949E_8121), 5, DestroyReason::DPNDESTROYPLAYERREASON_NORMAL)
    );
    // dwMsgId 0xC9 is not a name-table operation.
    let err = rejects(&ok.replacen("D1", "C9", 1));
    assert!(
        matches!(err, WireError::Unknown { what: "DN_ACK_NAMETABLE_OP dwMsgId", value: 0xC9 }),
        "{err:?}"
    );
    // The op's size disagrees with DESTROY_PLAYER's 16 bytes.
    rejects(
        "CC 00 00 00 01 00 00 00 D1 00 00 00 10 00 00 00 0C 00 00 00 21 81 9E 94 05 00 00 00 00 00 00 00",
    );
    // dwNumEntries larger than the records present.
    rejects("CC 00 00 00 FF FF FF FF D1 00 00 00");
}

/// DN_ALTERNATE_ADDRESS records inside PLAYER_CONNECT_INFO_EX (MC-DPL8CS 2.2.9): family 0x05.
#[test]
fn bad_alternate_address_family() {
    let (mut payload, _) = dframe_payload(CONNECT_INFO_EX);
    payload[93] = 0x05;
    assert!(SessionMessage::parse(&payload).is_err());
}

/// MS-DPDX 2.2.31: nType MUST be 1 and the string is exactly 400 bytes.
#[test]
fn chat_rules() {
    let mut raw = vec![0u8; CHAT_MESSAGE_LEN];
    raw[0] = 1;
    assert!(ChatMessage::parse(&raw).is_ok());
    assert!(ChatMessage::parse(raw.get(..CHAT_MESSAGE_LEN - 2).unwrap()).is_err());
    raw[0] = 2;
    assert!(ChatMessage::parse(&raw).is_err());
    assert_eq!(ChatMessage::new(&"x".repeat(300)).text().len(), CHAT_STRING_UNITS - 1);
}

/// A recorded layout that does not match the fields present cannot be emitted.
#[test]
fn layout_must_match_fields() {
    let (payload, _) = dframe_payload(SEND_CONNECT_INFO);
    let mut msg = SessionMessage::parse(&payload).unwrap();
    *msg.layout_mut().unwrap() = BlobLayout(Some(vec![BlobField::SessionName]));
    assert!(matches!(msg.to_vec(), Err(WireError::Unencodable { field: "BlobLayout", .. })));
}

/// Only the _EX layout carries alternate addresses.
#[test]
fn alternate_addresses_need_ex() {
    let (payload, _) = dframe_payload(CONNECT_INFO_EX);
    let SessionMessage::PlayerConnectInfo(mut m) = SessionMessage::parse(&payload).unwrap() else { panic!() };
    m.dnet_version = 6;
    assert!(SessionMessage::PlayerConnectInfo(m).to_vec().is_err());
}

/// An op in DN_ACK_NAMETABLE_OP is exactly the original message minus its `dwPacketType`
/// (MC-DPL8CS 2.2.2.10; INDEX D.10): offsets inside stay valid because both count from there.
#[test]
fn op_is_the_message_without_its_type() {
    let (payload, _) = dframe_payload(SEND_CONNECT_INFO);
    let SessionMessage::SendConnectInfo(m) = SessionMessage::parse(&payload).unwrap() else { panic!() };
    let add = AddPlayer { entry: m.entries[1].clone(), layout: BlobLayout(None) };
    let message = SessionMessage::AddPlayer(add.clone()).to_vec().unwrap();
    let ack = SessionMessage::AckNameTableOp(AckNameTableOp {
        ops: vec![NameTableOp::AddPlayer(add)],
        layout: BlobLayout(None),
    })
    .to_vec()
    .unwrap();
    // Type, count, one 12-byte record, then the op.
    assert_eq!(ack.get(8..20).unwrap(), [0xD0, 0, 0, 0, 16, 0, 0, 0, 166, 0, 0, 0]);
    assert_eq!(ack.get(20..).unwrap(), message.get(4..).unwrap());
}

/// DN_CREATE_GROUP as MC-DPL8CS 2.2.4.2 prints it (12 bytes: type, dpnidRequesting,
/// dwPacketContext) is read, with no group; a body that has more than the printed 8 bytes but
/// less than a whole DN_NAMETABLE_ENTRY_INFO is truncated (INDEX F-15).
#[test]
fn create_group_printed_and_cut() {
    let printed = bytes("D7 00 00 00 20 81 8E 94 07 00 00 00");
    let msg = SessionMessage::parse(&printed).unwrap();
    let SessionMessage::CreateGroup(g) = &msg else { panic!("{msg:?}") };
    assert_eq!((g.dpnid_requesting, g.packet_context, g.group.is_none()), (Dpnid(0x948E_8120), 7, true));
    assert_eq!(msg.to_vec().unwrap(), printed);
    let cut = bytes("D7 00 00 00 20 81 8E 94 07 00 00 00 01 00 00 00");
    assert!(matches!(SessionMessage::parse(&cut), Err(WireError::Truncated { .. })));
}
