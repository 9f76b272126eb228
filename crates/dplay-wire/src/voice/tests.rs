//! The MC-DPLVP 4.1 example byte for byte, every 2.2 layout as hard bytes, one insta snapshot
//! per message, the rejects 5.1 asks for, and proptest round trips.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::Wire;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};
use crate::text::Blob;

#[track_caller]
fn exact(msg: &VoiceMessage, hex: &str) {
    assert_eq!(msg.to_vec().unwrap(), bytes(hex), "{msg:?}");
    assert_eq!(&assert_reemits::<VoiceMessage>(&bytes(hex)), msg);
}

fn speech(n: u8, s: u8, data: &[u8]) -> Speech {
    Speech { message_number: n, sequence_number: s, data: Blob::new(data) }
}

/// MC-DPLVP 4.1, the five messages of a successful connect, byte for byte.
#[test]
fn section_4_1_connect_sequence() {
    exact(&VoiceMessage::ConnectRequest(VoiceVersion::SPEC), "51 01 00 03 00 00 00");
    exact(
        &VoiceMessage::ConnectAccept {
            session_type: VoiceSessionType::DVSESSIONTYPE_PEER,
            version: VoiceVersion::SPEC,
            session_flags: VoiceSessionFlags::empty(),
            compression_type: Codec::sc03().guid,
        },
        "56 01 00 00 00 01 00 03 00 00 00 00 00 00 00 9B
         A2 82 7D 42 22 82 4F 8F 39 5D 11 53 DF 3E 41",
    );
    exact(
        &VoiceMessage::SettingsConfirm {
            player_flags: VoicePlayerFlags::empty(),
            host_order_id: NO_HOST_ORDER_ID,
        },
        "58 00 00 00 00 FF FF FF FF",
    );
    let entry = |dvid, host_order_id| VoiceClientEntry {
        dvid: Dvid(dvid),
        player_flags: VoicePlayerFlags::empty(),
        host_order_id,
    };
    exact(
        &VoiceMessage::PlayerList {
            host_order_id: 1,
            entries: vec![entry(0x5942F4AE, 1), entry(0x5952F4AE, 0)],
        },
        "61 01 00 00 00 02 00 00 00 AE F4 42 59 00 00 00
         00 01 00 00 00 AE F4 52 59 00 00 00 00 00 00 00
         00",
    );
    exact(&VoiceMessage::CreateVoicePlayer(entry(0x5942F4AE, 1)), "01 AE F4 42 59 00 00 00 00 01 00 00 00");
}

/// Every other layout of 2.2, field by field.
#[test]
fn section_2_2_layouts() {
    exact(&VoiceMessage::DeleteVoicePlayer { dvid: Dvid(0x5942F4AE) }, "02 AE F4 42 59");
    exact(&VoiceMessage::SessionLost { reason: VoiceResult::DVERR_SESSIONLOST }, "03 2C 01 15 80");
    exact(&VoiceMessage::HostMigrated, "0C");
    exact(&VoiceMessage::SetTargets { targets: vec![] }, "0D 00 00 00 00");
    exact(
        &VoiceMessage::SetTargets { targets: vec![Dvid(1), Dvid(0x5942F4AE)] },
        "0D 02 00 00 00 01 00 00 00 AE F4 42 59",
    );
    exact(
        &VoiceMessage::ConnectRefuse { reason: VoiceResult::DVERR_NOTHOSTING, version: VoiceVersion::SPEC },
        "53 7B 01 15 80 01 00 03 00 00 00",
    );
    exact(&VoiceMessage::Disconnect, "54");
    exact(&VoiceMessage::Speech(speech(7, 2, &[0xAA, 0xBB])), "55 07 02 AA BB");
    exact(&VoiceMessage::DisconnectConfirm, "5A");
    exact(&VoiceMessage::SpeechBounce(speech(7, 2, &[0xAA])), "60 07 02 AA");
    exact(&VoiceMessage::HostMigrateLeave, "62");
    exact(
        &VoiceMessage::SpeechWithTarget(SpeechWithTarget {
            message_number: 1,
            sequence_number: 9,
            targets: vec![Dvid(0)],
            data: Blob::new(&[1, 2, 3]),
        }),
        "63 01 09 01 00 00 00 00 00 00 00 01 02 03",
    );
    exact(
        &VoiceMessage::SpeechWithFrom(SpeechWithFrom {
            message_number: 1,
            sequence_number: 9,
            source: Dvid(0x5942F4AE),
            data: Blob::new(&[1, 2, 3]),
        }),
        "64 01 09 AE F4 42 59 01 02 03",
    );
    exact(
        &VoiceMessage::ConnectAccept {
            session_type: VoiceSessionType::DVSESSIONTYPE_FORWARDING,
            version: VoiceVersion::SPEC,
            session_flags: VoiceSessionFlags::NO_HOST_MIGRATION,
            compression_type: Codec::pcm().guid,
        },
        "56 03 00 00 00 01 00 03 00 00 00 01 00 00 00 D4
         2F E1 8D B3 7C CE 48 A7 E8 9C 47 A2 2E 8A C5",
    );
}

#[test]
fn codecs_by_name_and_guid() {
    assert_eq!(Codec::by_name("sc03"), Some(Codec::sc03()));
    assert_eq!(Codec::by_name("DPVCTGUID_NONE"), Some(Codec::pcm()));
    assert_eq!(Codec::sc03().guid.to_string(), "7d82a29b-2242-4f82-8f39-5d1153df3e41");
    assert_eq!(Codec::by_guid(Codec::by_name("gsm").unwrap().guid).unwrap().constant, "DPVCTGUID_GSM");
    assert_eq!(Codec::by_name("opus"), None);
    assert_eq!(Dvid(0x5942F4AE).to_string(), "0x5942F4AE");
}

/// Section 5.1: wrong lengths and forbidden counts are errors, never allocations.
#[test]
fn rejects() {
    let bad = [
        "",                                                // no MessageType
        "00",                                              // unknown type
        "FF",                                              // unknown type
        "51 01 00 03 00 00",                               // short CONNECTREQUEST
        "51 01 00 03 00 00 00 00",                         // trailing byte
        "54 00",                                           // DISCONNECT with a body
        "55 00 00",                                        // SPEECH without a frame
        "60 00",                                           // SPEECHBOUNCE without SequenceNumber
        "63 00 00 00 00 00 00 AA",                         // SPEECHWITHTARGET with no target
        "63 00 00 41 00 00 00 AA",                         // 65 targets
        "63 00 00 02 00 00 00 01 00 00 00",                // 2 targets, 1 present
        "63 00 00 02 00 00 00 01 00 00 00 01 00 00 00 AA", // a target twice
        "63 00 00 01 00 00 00 01 00 00 00",                // no SpeechData
        "0D 41 00 00 00",                                  // SETTARGETS over 64
        "0D FF FF FF FF",                                  // SETTARGETS, a huge count
        "61 01 00 00 00 53 00 00 00",                      // PLAYERLIST over 0x52
        "61 01 00 00 00 01 00 00 00 AE F4",                // PLAYERLIST entry cut short
        "64 00 00 01 00 00 00",                            // SPEECHWITHFROM without a frame
    ];
    for hex in bad {
        assert!(VoiceMessage::parse(&bytes(hex)).is_err(), "{hex} parsed");
    }
    let empty = VoiceMessage::Speech(speech(0, 0, &[]));
    assert!(empty.to_vec().is_err());
    let none = VoiceMessage::SpeechWithTarget(SpeechWithTarget {
        message_number: 0,
        sequence_number: 0,
        targets: vec![],
        data: Blob::new(&[1]),
    });
    assert!(none.to_vec().is_err());
}

#[track_caller]
fn snap(msg: VoiceMessage) {
    insta::assert_snapshot!(msg.name(), snapshot_text(&msg));
}

#[test]
fn snapshots() {
    for hex in [
        "51 01 00 03 00 00 00",
        "56 01 00 00 00 01 00 03 00 00 00 00 00 00 00 9B A2 82 7D 42 22 82 4F 8F 39 5D 11 53 DF 3E 41",
        "58 00 00 00 00 FF FF FF FF",
        "61 01 00 00 00 02 00 00 00 AE F4 42 59 00 00 00 00 01 00 00 00 AE F4 52 59 00 00 00 00 00 00 00 00",
        "01 AE F4 42 59 00 00 00 00 01 00 00 00",
        "02 AE F4 42 59",
        "03 2C 01 15 80",
        "0C",
        "0D 02 00 00 00 01 00 00 00 AE F4 42 59",
        "53 7B 01 15 80 01 00 03 00 00 00",
        "54",
        "55 07 02 AA BB",
        "5A",
        "60 07 02 AA",
        "62",
        "63 01 09 01 00 00 00 00 00 00 00 01 02 03",
        "64 01 09 AE F4 42 59 01 02 03",
    ] {
        snap(VoiceMessage::parse(&bytes(hex)).unwrap());
    }
}

fn dvid() -> impl Strategy<Value = Dvid> {
    any::<u32>().prop_map(Dvid)
}

fn targets(min: usize) -> impl Strategy<Value = Vec<Dvid>> {
    proptest::collection::hash_set(dvid(), min..=MAX_TARGETS).prop_map(|s| s.into_iter().collect())
}

fn frame() -> impl Strategy<Value = Blob> {
    vec(any::<u8>(), 1..64).prop_map(Blob)
}

fn version() -> impl Strategy<Value = VoiceVersion> {
    (any::<u8>(), any::<u8>(), any::<u32>()).prop_map(|(major, minor, build)| VoiceVersion {
        major,
        minor,
        build,
    })
}

fn entry() -> impl Strategy<Value = VoiceClientEntry> {
    (dvid(), any::<u32>(), any::<u32>()).prop_map(|(dvid, f, host_order_id)| VoiceClientEntry {
        dvid,
        player_flags: VoicePlayerFlags::from_bits_retain(f),
        host_order_id,
    })
}

fn speech_strategy() -> impl Strategy<Value = Speech> {
    (any::<u8>(), any::<u8>(), frame()).prop_map(|(message_number, sequence_number, data)| Speech {
        message_number,
        sequence_number,
        data,
    })
}

fn message() -> impl Strategy<Value = VoiceMessage> {
    prop_oneof![
        entry().prop_map(VoiceMessage::CreateVoicePlayer),
        dvid().prop_map(|dvid| VoiceMessage::DeleteVoicePlayer { dvid }),
        any::<u32>().prop_map(|r| VoiceMessage::SessionLost { reason: VoiceResult(r) }),
        Just(VoiceMessage::HostMigrated),
        targets(0).prop_map(|targets| VoiceMessage::SetTargets { targets }),
        version().prop_map(VoiceMessage::ConnectRequest),
        (any::<u32>(), version())
            .prop_map(|(r, version)| VoiceMessage::ConnectRefuse { reason: VoiceResult(r), version }),
        Just(VoiceMessage::Disconnect),
        speech_strategy().prop_map(VoiceMessage::Speech),
        (any::<u32>(), version(), any::<u32>(), any::<u128>()).prop_map(|(t, version, f, g)| {
            VoiceMessage::ConnectAccept {
                session_type: VoiceSessionType(t),
                version,
                session_flags: VoiceSessionFlags::from_bits_retain(f),
                compression_type: crate::Uuid::from_u128(g),
            }
        }),
        (any::<u32>(), any::<u32>()).prop_map(|(f, host_order_id)| VoiceMessage::SettingsConfirm {
            player_flags: VoicePlayerFlags::from_bits_retain(f),
            host_order_id,
        }),
        Just(VoiceMessage::DisconnectConfirm),
        speech_strategy().prop_map(VoiceMessage::SpeechBounce),
        (any::<u32>(), vec(entry(), 0..=MAX_PLAYER_LIST_ENTRIES))
            .prop_map(|(host_order_id, entries)| VoiceMessage::PlayerList { host_order_id, entries }),
        Just(VoiceMessage::HostMigrateLeave),
        (any::<u8>(), any::<u8>(), targets(1), frame()).prop_map(|(m, s, targets, data)| {
            VoiceMessage::SpeechWithTarget(SpeechWithTarget {
                message_number: m,
                sequence_number: s,
                targets,
                data,
            })
        }),
        (any::<u8>(), any::<u8>(), dvid(), frame()).prop_map(|(m, s, source, data)| {
            VoiceMessage::SpeechWithFrom(SpeechWithFrom {
                message_number: m,
                sequence_number: s,
                source,
                data,
            })
        }),
    ]
}

proptest! {
    #[test]
    fn roundtrip(msg in message()) {
        assert_roundtrip(&msg);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in vec(any::<u8>(), 0..600)) {
        if let Ok(msg) = VoiceMessage::parse(&data) {
            prop_assert_eq!(msg.to_vec().unwrap(), data);
        }
    }

    #[test]
    fn typed_prefix_never_panics(kind in prop::sample::select(VoiceMessageType::ALL), rest in vec(any::<u8>(), 0..300)) {
        let mut data = vec![kind.0];
        data.extend(rest);
        if let Ok(msg) = VoiceMessage::parse(&data) {
            prop_assert_eq!(msg.to_vec().unwrap(), data);
        }
    }
}

/// Carried over DirectPlay 8: a DFRAME with USER_2, NEW_MSG and END_MSG (MC-DPL8R 2.2.3), named
/// by the voice message; over DirectPlay 4: DPSP_MSG_VOICE (MC-DPL4CS 2.2.54).
#[test]
fn carriers() {
    // bCommand 0xB1: DATA, NEW_MSG, END_MSG, USER_2 (speech: neither reliable nor sequential).
    let dframe = bytes("B1 00 05 02 63 01 09 01 00 00 00 00 00 00 00 01 02 03");
    let d = crate::parse_datagram(&dframe).unwrap();
    assert_eq!(d.message_name(), "DVMSGID_SPEECHWITHTARGET");
    assert_eq!(d.to_vec().unwrap(), dframe);
    // The same bytes with USER_1 instead are a session message, and fail as one.
    assert!(crate::parse_datagram(&bytes("71 00 05 02 63 01 09 01 00 00 00 00 00 00 00 01 02 03")).is_err());

    use crate::dp4::header::{SockAddrIn, Token};
    use crate::dp4::message::{Dp4Body, Dp4Message};
    use crate::dp4::routing::Voice;
    let voice = Voice {
        id_from: 0x1E53_A0A2,
        id_to: 0x1E50_A0A4,
        message: VoiceMessage::ConnectRequest(VoiceVersion::SPEC),
    };
    let msg = Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, Dp4Body::Voice(voice));
    let wire = msg.to_vec().unwrap();
    assert_eq!(wire[28..], bytes("A2 A0 53 1E A4 A0 50 1E 51 01 00 03 00 00 00")[..]);
    let d = crate::parse_datagram(&wire).unwrap();
    assert_eq!(d.message_name(), "DVMSGID_CONNECTREQUEST");
    assert_eq!(d.alias(), Some("DPSP_MSG_VOICE"));
}
