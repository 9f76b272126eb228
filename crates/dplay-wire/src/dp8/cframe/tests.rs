use proptest::prelude::*;

use super::*;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};

/// MC-DPL8R 4.1: the unsigned handshake, three CFRAMEs, byte for byte.
#[test]
fn mc_dpl8r_4_1_handshake() {
    let connect = assert_reemits::<Cframe>(&bytes("88 01 00 00 06 00 01 00 C6 AE C9 79 9D 36 67 23"));
    let Cframe::Connect(c) = connect else { panic!("not CONNECT: {connect:?}") };
    assert!(c.poll);
    assert_eq!((c.msg_id, c.rsp_id), (0, 0));
    assert_eq!(c.protocol_version, 0x0001_0006);
    assert_eq!(c.sess_id, 0x79C9_AEC6);
    assert_eq!(c.timestamp, 0x2367_369D);

    let reply = assert_reemits::<Cframe>(&bytes("88 02 00 00 06 00 01 00 C6 AE C9 79 E1 DF 04 00"));
    let Cframe::Connected(r) = reply else { panic!("not CONNECTED: {reply:?}") };
    assert!(r.poll, "the listener's CONNECTED MUST set POLL");
    assert_eq!(r.sess_id, c.sess_id);

    let confirm = assert_reemits::<Cframe>(&bytes("80 02 01 00 06 00 01 00 C6 AE C9 79 9D 36 67 23"));
    let Cframe::Connected(k) = confirm else { panic!("not CONNECTED: {confirm:?}") };
    assert!(!k.poll, "the connector's confirmation MUST NOT set POLL");
    assert_eq!((k.msg_id, k.rsp_id), (1, 0));
}

/// MC-DPL8R 4.2: the SACK answering five data frames. The prose says Next Receive 5; the byte
/// says 6, which is right after seq 5 (INDEX F-5; docs/decisions.md).
#[test]
fn mc_dpl8r_4_2_sack() {
    let sack = assert_reemits::<Cframe>(&bytes("80 06 01 00 03 06 00 00 07 5D 11 00"));
    let Cframe::Sack(s) = sack else { panic!("not SACK: {sack:?}") };
    assert!(s.response && !s.poll);
    assert_eq!((s.retry, s.n_seq, s.n_rcv), (0, 3, 6));
    assert_eq!(s.timestamp, 0x0011_5D07);
    assert_eq!(s.masks, Masks::default());
}

#[test]
fn rejects_what_the_spec_says_to_ignore() {
    // Extra bCommand bits (MC-DPL8R 2.2.1).
    assert!(Cframe::parse(&bytes("C8 01 00 00 06 00 01 00 C6 AE C9 79 9D 36 67 23")).is_err());
    // Undefined bExtOpCode 0x05.
    assert_eq!(
        Cframe::parse(&bytes("88 05 00 00 06 00 01 00 C6 AE C9 79 9D 36 67 23")),
        Err(WireError::Unknown { what: "CFRAME bExtOpCode", value: 5 })
    );
    // A SACK whose mask flag is set but whose DWORD is missing (MS-DPDX 2.2.9).
    assert!(matches!(
        Cframe::parse(&bytes("80 06 03 00 03 06 00 00 07 5D 11 00")),
        Err(WireError::Truncated { field: "dwSACKMask1", offset: 12, needed: 4, got: 0 })
    ));
    // Undefined SACK flag bits.
    assert!(Cframe::parse(&bytes("80 06 21 00 03 06 00 00 07 5D 11 00")).is_err());
    // Truncated CONNECT.
    assert!(Cframe::parse(&bytes("88 01 00 00 06 00 01 00 C6 AE")).is_err());
}

#[test]
fn masks_map_halves() {
    let m = Masks::new(0x1_0000_0001, 0);
    assert_eq!((m.sack1, m.sack2, m.send1, m.send2), (Some(1), Some(1), None, None));
    assert_eq!(m.sack(), 0x1_0000_0001);
    assert_eq!(m.count(), 2);
}

fn connect_fields() -> impl Strategy<Value = ConnectFields> {
    (any::<bool>(), any::<u8>(), any::<u8>(), any::<u32>(), any::<u32>(), any::<u32>()).prop_map(
        |(poll, msg_id, rsp_id, protocol_version, sess_id, timestamp)| ConnectFields {
            poll,
            msg_id,
            rsp_id,
            protocol_version,
            sess_id,
            timestamp,
        },
    )
}

pub(crate) fn masks() -> impl Strategy<Value = Masks> {
    (any::<Option<u32>>(), any::<Option<u32>>(), any::<Option<u32>>(), any::<Option<u32>>())
        .prop_map(|(sack1, sack2, send1, send2)| Masks { sack1, sack2, send1, send2 })
}

fn cframe() -> impl Strategy<Value = Cframe> {
    prop_oneof![
        connect_fields().prop_map(Cframe::Connect),
        connect_fields().prop_map(Cframe::Connected),
        (connect_fields(), any::<Option<u64>>())
            .prop_map(|(fields, signature)| Cframe::HardDisconnect(HardDisconnect { fields, signature })),
        (connect_fields(), any::<[u64; 3]>(), prop_oneof![Just(1u32), Just(2u32)], any::<u32>()).prop_map(
            |(fields, [connect_sig, sender_secret, receiver_secret], opts, echo_timestamp)| {
                Cframe::ConnectedSigned(ConnectedSigned {
                    fields,
                    connect_sig,
                    sender_secret,
                    receiver_secret,
                    signing_opts: SigningOpts(opts),
                    echo_timestamp,
                })
            }
        ),
        (any::<(bool, bool, u8, u8, u8, u32)>(), masks(), any::<Option<u64>>()).prop_map(
            |((poll, response, retry, n_seq, n_rcv, timestamp), masks, signature)| {
                Cframe::Sack(Sack { poll, response, retry, n_seq, n_rcv, timestamp, masks, signature })
            }
        ),
    ]
}

proptest! {
    #[test]
    fn roundtrip(frame in cframe()) {
        assert_roundtrip(&frame);
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = Cframe::parse(&data);
    }
}

#[test]
fn snapshots() {
    let fields = ConnectFields {
        poll: true,
        msg_id: 0,
        rsp_id: 0,
        protocol_version: 0x0001_0006,
        sess_id: 0x79C9_AEC6,
        timestamp: 0x2367_369D,
    };
    insta::assert_snapshot!("CONNECT", snapshot_text(&Cframe::Connect(fields)));
    insta::assert_snapshot!(
        "CONNECTED",
        snapshot_text(&Cframe::Connected(ConnectFields { rsp_id: 0, ..fields }))
    );
    insta::assert_snapshot!(
        "CONNECTED_SIGNED",
        snapshot_text(&Cframe::ConnectedSigned(ConnectedSigned {
            fields,
            connect_sig: 0x0123_4567_89AB_CDEF,
            sender_secret: 0,
            receiver_secret: 0,
            signing_opts: SigningOpts::PACKET_SIGNING_FAST,
            echo_timestamp: 0,
        }))
    );
    insta::assert_snapshot!(
        "HARD_DISCONNECT",
        snapshot_text(&Cframe::HardDisconnect(HardDisconnect {
            fields: ConnectFields { poll: false, msg_id: 2, ..fields },
            signature: None
        }))
    );
    insta::assert_snapshot!(
        "SACK",
        snapshot_text(&Cframe::Sack(Sack {
            poll: false,
            response: true,
            retry: 0,
            n_seq: 3,
            n_rcv: 6,
            timestamp: 0x0011_5D07,
            masks: Masks::new(0b101, 0),
            signature: None,
        }))
    );
}
