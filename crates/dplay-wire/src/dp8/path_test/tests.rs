use proptest::prelude::*;

use super::*;
use crate::dp8::cframe::Cframe;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};

/// The UDP payload of an Ethernet II / IPv4 (no options) / UDP frame, after checking that the
/// UDP length field covers exactly the bytes printed.
#[track_caller]
fn udp_payload(frame: &str) -> Vec<u8> {
    let frame = bytes(frame);
    let udp_len = u16::from_be_bytes([frame[38], frame[39]]);
    assert_eq!(usize::from(udp_len), frame.len() - 34, "UDP length");
    frame[42..].to_vec()
}

/// MC-DPLNAT 4.2: the session's GUIDs and PlayerC's (new) and PlayerB's (existing) DPNIDs.
const APPLICATION: Uuid = uuid::uuid!("02AE835D-9179-485F-8343-901D327CE794");
const INSTANCE: Uuid = uuid::uuid!("C0A65D4F-9CE3-4F70-80DE-3AB4DF6F09B6");
const PLAYER_C: u32 = 0xC0F6_5D4B;
const PLAYER_B: u32 = 0xC096_5D4C;

/// MC-DPLNAT 4.2: PlayerC's key is 0xF9AFE99C92DD82B8, the first 8 bytes of
/// SHA-1(4B 5D F6 C0 | 4C 5D 96 C0 | guidApplication | guidInstance) (INDEX D.14).
#[test]
fn mc_dpl_nat_4_2_key() {
    assert_eq!(path_test_key(PLAYER_C, PLAYER_B, &APPLICATION, &INSTANCE), 0xF9AF_E99C_92DD_82B8);
    // The roles are not symmetric: the new peer is always dpnidSender.
    assert_ne!(path_test_key(PLAYER_B, PLAYER_C, &APPLICATION, &INSTANCE), 0xF9AF_E99C_92DD_82B8);
}

/// MC-DPLNAT 4.2: PlayerC's PATH_TEST to PlayerB, message ID 0xD0C1, the whole frame.
#[test]
fn mc_dpl_nat_4_2_path_test() {
    let payload = udp_payload(
        "00 0F B5 95 C3 C8 00 1D 92 37 5E 40 08 00 45 00 \
         00 28 1C 45 00 00 80 11 09 D0 C0 A8 01 02 0A C2 \
         48 44 08 FE 08 FE 00 14 34 4B 00 05 C1 D0 B8 82 \
         DD 92 9C E9 AF F9",
    );
    assert_eq!(payload, bytes("00 05 C1 D0 B8 82 DD 92 9C E9 AF F9"));
    let p = assert_reemits::<PathTest>(&payload);
    assert_eq!(
        p,
        PathTest { msg_id: 0xD0C1, key: path_test_key(PLAYER_C, PLAYER_B, &APPLICATION, &INSTANCE) }
    );
    assert_eq!(assert_reemits::<NatMessage>(&payload).name(), "PATH_TEST");
}

/// MC-DPLNAT 4.2: PlayerB's instructed CONNECT, then its retry after the PATH_TEST: same
/// dwSessID, bMsgID 0 then 1 (MC-DPL8R 2.2.1.1).
#[test]
fn mc_dpl_nat_4_2_connect_retry() {
    let head = "00 1D 92 37 5E 40 00 0F B5 95 C3 C8 08 00 45 00 00 2C 12 D8 00 00 7C 11 00 00 0A C2 48 44 C0 A8 \
                01 02 08 FE 08 FE 00 18 21 EF";
    let first = udp_payload(&format!("{head} 88 01 00 00 06 00 01 00 E4 1C B0 50 E4 CA 32 00"));
    let retry = udp_payload(&format!("{head} 88 01 01 00 06 00 01 00 E4 1C B0 50 E4 CA 32 00"));
    let (Cframe::Connect(a), Cframe::Connect(b)) = (assert_reemits(&first), assert_reemits(&retry)) else {
        panic!("not CONNECTs");
    };
    assert_eq!((a.msg_id, b.msg_id), (0, 1));
    assert_eq!(a.sess_id, b.sess_id);
    assert_eq!(a.sess_id, 0x50B0_1CE4);
}

/// MC-DPLNAT 4.1: the query from 192.168.1.2:2302, wMessageID 0xD5F1, dwSourceID 0xBA51163C.
#[test]
fn mc_dpl_nat_4_1_query() {
    let payload = udp_payload(
        "00 0F B5 95 C3 C8 00 1D 92 37 5E 40 08 00 45 00 \
         00 24 7E 09 00 00 80 11 A7 EF C0 A8 01 02 41 34 \
         0A 0A 08 FE 09 CA 00 10 87 92 00 06 F1 D5 3C 16 \
         51 BA",
    );
    let q = assert_reemits::<NatResolverQuery>(&payload);
    assert_eq!((q.message_id, q.source_id), (0xD5F1, 0xBA51_163C));
    assert!(q.user_data.is_empty());
    assert_eq!(assert_reemits::<NatMessage>(&payload).name(), "NAT_RESOLVER_QUERY");
}

/// MC-DPLNAT 4.1: the response tells the client it is 65.52.252.61:2302 behind the NAT, with
/// address and port XORed with the echoed IDs.
#[test]
fn mc_dpl_nat_4_1_response() {
    let payload = udp_payload(
        "00 1D 92 37 5E 40 00 0F B5 95 C3 C8 08 00 45 00 \
         00 2A 42 F2 00 00 7C 11 E7 02 41 34 0A 0A C0 A8 \
         01 02 09 CA 08 FE 00 16 1D 45 00 07 F1 D5 3C 16 \
         51 BA 7D 22 AD 87 F9 2B",
    );
    let r = assert_reemits::<NatResolverResponse>(&payload);
    assert_eq!((r.message_id_echo, r.source_id_echo), (0xD5F1, 0xBA51_163C));
    assert_eq!(r.address, Ipv4Addr::new(65, 52, 252, 61));
    assert_eq!(r.port, 2302);
    assert_eq!(assert_reemits::<NatMessage>(&payload).name(), "NAT_RESOLVER_RESPONSE");
}

#[test]
fn rejects_malformed() {
    // MC-DPLNAT 3.1.5: a PATH_TEST that is not exactly 12 bytes is not properly formed.
    assert!(matches!(
        PathTest::parse(&bytes("00 05 C1 D0 B8 82 DD 92 9C E9 AF")),
        Err(WireError::Truncated { .. })
    ));
    assert!(matches!(
        PathTest::parse(&bytes("00 05 C1 D0 B8 82 DD 92 9C E9 AF F9 00")),
        Err(WireError::InvalidValue { field: "PATH_TEST", .. })
    ));
    assert!(matches!(
        PathTest::parse(&bytes("01 05 C1 D0 B8 82 DD 92 9C E9 AF F9")),
        Err(WireError::InvalidValue { field: "LeadByte", .. })
    ));
    assert!(NatResolverResponse::parse(&bytes("00 07 F1 D5 3C 16 51 BA 7D 22 AD 87 F9")).is_err());
    assert!(NatResolverResponse::parse(&bytes("00 07 F1 D5 3C 16 51 BA 7D 22 AD 87 F9 2B 00")).is_err());
    assert!(NatResolverQuery::parse(&bytes("00 06 F1 D5 3C 16 51")).is_err());
    assert_eq!(
        NatMessage::parse(&bytes("00 02 01 00 02")),
        Err(WireError::Unknown { what: "NAT locator bCommand", value: 2 })
    );
}

fn nat_message() -> impl Strategy<Value = NatMessage> {
    prop_oneof![
        any::<(u16, u64)>().prop_map(|(msg_id, key)| NatMessage::PathTest(PathTest { msg_id, key })),
        (any::<u16>(), any::<u32>(), proptest::collection::vec(any::<u8>(), 0..32)).prop_map(
            |(message_id, source_id, user_data)| {
                NatMessage::NatResolverQuery(NatResolverQuery {
                    message_id,
                    source_id,
                    user_data: user_data.into(),
                })
            }
        ),
        any::<(u16, u32, u32, u16)>().prop_map(|(message_id_echo, source_id_echo, address, port)| {
            NatMessage::NatResolverResponse(NatResolverResponse {
                message_id_echo,
                source_id_echo,
                address: address.into(),
                port,
            })
        }),
    ]
}

proptest! {
    #[test]
    fn roundtrip(m in nat_message()) {
        assert_roundtrip(&m);
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..40)) {
        let _ = NatMessage::parse(&data);
    }

    #[test]
    fn parse_never_panics_after_lead(data in proptest::collection::vec(any::<u8>(), 0..20), command in 5u8..8) {
        let mut bytes = vec![0, command];
        bytes.extend(data);
        let _ = NatMessage::parse(&bytes);
    }
}

#[test]
fn snapshots() {
    let key = path_test_key(PLAYER_C, PLAYER_B, &APPLICATION, &INSTANCE);
    insta::assert_snapshot!(
        "PATH_TEST",
        snapshot_text(&NatMessage::PathTest(PathTest { msg_id: 0xD0C1, key }))
    );
    insta::assert_snapshot!(
        "NAT_RESOLVER_QUERY",
        snapshot_text(&NatMessage::NatResolverQuery(NatResolverQuery {
            message_id: 0xD5F1,
            source_id: 0xBA51_163C,
            user_data: Blob::new(b"hi"),
        }))
    );
    insta::assert_snapshot!(
        "NAT_RESOLVER_RESPONSE",
        snapshot_text(&NatMessage::NatResolverResponse(NatResolverResponse {
            message_id_echo: 0xD5F1,
            source_id_echo: 0xBA51_163C,
            address: Ipv4Addr::new(65, 52, 252, 61),
            port: 2302,
        }))
    );
}
