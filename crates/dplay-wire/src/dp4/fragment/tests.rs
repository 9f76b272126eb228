use proptest::prelude::*;

use super::*;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes};

/// INDEX D.16: fragment 1 of 2 of a 10-byte message, 4 bytes at offset 6, PacketData at 48.
#[test]
fn fragment_body_layout() {
    let body = bytes(
        "00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF
         01 00 00 00 04 00 00 00 06 00 00 00 02 00 00 00
         0A 00 00 00 30 00 00 00 DE AD BE EF",
    );
    let f = assert_reemits::<Fragment>(&body);
    assert_eq!(f.guid_message, Uuid::from_bytes_le(body[..16].try_into().unwrap()));
    assert_eq!(f.packet_index, 1);
    assert_eq!(f.offset, 6);
    assert_eq!(f.total_packets, 2);
    assert_eq!(f.message_size, 10);
    assert_eq!(f.packet_offset, PACKET_DATA_OFFSET);
    assert_eq!(f.data, Blob::new(&[0xDE, 0xAD, 0xBE, 0xEF]));
}

#[test]
fn data_size_must_match_the_remainder() {
    let mut body = vec![0; FRAGMENT_BODY_FIXED_LEN + 4];
    body[20] = 5; // DataSize 5, 4 bytes present
    assert!(matches!(
        Fragment::parse(&body),
        Err(WireError::InvalidValue { field: "DataSize", offset: 20, .. })
    ));
    body[20] = 3; // one trailing byte
    assert!(Fragment::parse(&body).is_err());
    body[20] = 0xFF;
    body[23] = 0xFF; // huge DataSize: rejected, never allocated
    assert!(Fragment::parse(&body).is_err());
    body[20] = 4;
    body[23] = 0;
    assert!(Fragment::parse(&body).is_ok());
    assert!(Fragment::parse(&body[..39]).is_err());
}

/// INDEX D.16: PACKET2_ACK is GuidMessage and PacketID.
#[test]
fn packet_ack_body_layout() {
    let body = bytes("00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF 07 00 00 00");
    let ack = assert_reemits::<PacketAck>(&body);
    assert_eq!(ack.packet_id, 7);
    assert!(PacketAck::parse(&body[..19]).is_err());
    let mut long = body.clone();
    long.push(0);
    assert!(PacketAck::parse(&long).is_err());
}

pub(crate) fn fragment() -> impl Strategy<Value = Fragment> {
    (any::<u128>(), any::<[u32; 5]>(), proptest::collection::vec(any::<u8>(), 0..64)).prop_map(
        |(g, [packet_index, offset, total_packets, message_size, packet_offset], data)| Fragment {
            guid_message: Uuid::from_u128(g),
            packet_index,
            offset,
            total_packets,
            message_size,
            packet_offset,
            data: Blob(data),
        },
    )
}

pub(crate) fn packet_ack() -> impl Strategy<Value = PacketAck> {
    (any::<u128>(), any::<u32>())
        .prop_map(|(g, packet_id)| PacketAck { guid_message: Uuid::from_u128(g), packet_id })
}

proptest! {
    #[test]
    fn fragment_roundtrips(f in fragment()) {
        assert_roundtrip(&f);
    }

    #[test]
    fn packet_ack_roundtrips(a in packet_ack()) {
        assert_roundtrip(&a);
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..96)) {
        let _ = Fragment::parse(&data);
        let _ = PacketAck::parse(&data);
    }
}
