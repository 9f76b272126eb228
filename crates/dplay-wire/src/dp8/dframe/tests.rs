use proptest::prelude::*;

use super::*;
use crate::dp8::cframe::tests::masks;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};

/// MC-DPL8R 4.1: the KeepAlive that opens each direction: REL|SEQ|POLL|NEW|END, seq 0, NRcv 0.
#[test]
fn mc_dpl8r_4_1_keepalive() {
    let ka = assert_reemits::<Dframe>(&bytes("3F 02 00 00 C6 AE C9 79"));
    assert_eq!(ka.name(), "KEEPALIVE");
    assert_eq!(ka.header.command.bits(), 0x3F);
    assert_eq!(ka.header.sess_id, Some(0x79C9_AEC6));
    assert!(ka.payload.is_empty());
}

/// MC-DPL8R 4.2: an unreliable sequential data frame, seq 5, NRcv 3. Six payload bytes follow
/// the header although the prose says five (INDEX F-5: trust the bytes).
#[test]
fn mc_dpl8r_4_2_data_frame() {
    let f = assert_reemits::<Dframe>(&bytes("3D 00 05 03 01 41 42 43 44 45"));
    assert_eq!(f.header.command, DframeCommand::from_bits_retain(0x3D));
    assert!(!f.header.command.contains(DframeCommand::RELIABLE));
    assert_eq!((f.header.seq, f.header.n_rcv), (5, 3));
    assert_eq!(&*f.payload, b"\x01ABCDE");
}

/// MC-DPL8CS 4: a session message's header, `7F 00 01 00`, then dwPacketType.
#[test]
fn session_message_header() {
    let frame = bytes("7F 00 01 00 C1 00 00 00");
    let (h, payload) = DframeHeader::parse(&frame, DframeContext::default()).unwrap();
    assert!(h.command.contains(DframeCommand::USER_1 | DframeCommand::RELIABLE | DframeCommand::SEQUENTIAL));
    assert_eq!((h.seq, h.n_rcv), (1, 0));
    assert_eq!(payload, &[0xC1, 0, 0, 0]);
}

#[test]
fn masks_and_context() {
    // SACK1 and SEND2 present: two DWORDs in wire order.
    let frame = bytes("07 90 0A 02 05 00 00 00 01 00 00 00 AA");
    let (h, payload) = DframeHeader::parse(&frame, DframeContext::default()).unwrap();
    assert_eq!((h.masks.sack1, h.masks.send2), (Some(5), Some(1)));
    assert_eq!(h.control(), DframeControl::SACK1 | DframeControl::SEND2);
    assert_eq!(payload, &[0xAA]);
    // A mask bit with its DWORD missing makes the frame invalid (MS-DPDX 3.1.5.9).
    assert!(DframeHeader::parse(&bytes("07 10 0A 02 05 00"), DframeContext::default()).is_err());
    // Signed: the signature follows the masks.
    let signed = DframeContext { signed: true, keepalive_sess_id: true };
    let (h, _) = DframeHeader::parse(&bytes("07 00 00 00 01 02 03 04 05 06 07 08"), signed).unwrap();
    assert_eq!(h.signature, Some(0x0807_0605_0403_0201));
    // Before 0x00010005 bit 0x02 is CORRELATE and no dwSessID follows.
    let old = DframeContext { signed: false, keepalive_sess_id: false };
    let frame = bytes("3F 02 00 00 C6 AE C9 79");
    let (h, payload) = DframeHeader::parse(&frame, old).unwrap();
    assert_eq!((h.sess_id, payload.len()), (None, 4));
}

#[test]
fn rejects_frames_without_data_bit() {
    assert!(Dframe::parse(&bytes("3E 00 00 00")).is_err());
    assert!(Dframe::parse(&bytes("3F 00 00")).is_err());
}

fn header() -> impl Strategy<Value = DframeHeader> {
    (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), masks(), any::<Option<u32>>()).prop_map(
        |(command, control, seq, n_rcv, masks, sess_id)| {
            let mut control = DframeControl::from_bits_retain(control).difference(MASK_BITS);
            // Context-free parsing ties dwSessID to the KEEPALIVE bit.
            control.set(DframeControl::KEEPALIVE_OR_CORRELATE, sess_id.is_some());
            DframeHeader {
                command: DframeCommand::from_bits_retain(command) | DframeCommand::DATA,
                control,
                seq,
                n_rcv,
                masks,
                signature: None,
                sess_id,
            }
        },
    )
}

proptest! {
    #[test]
    fn roundtrip(header in header(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
        assert_roundtrip(&Dframe { header, payload: Blob(payload) });
    }

    #[test]
    fn signed_roundtrip(mut header in header(), sig in any::<u64>()) {
        header.signature = Some(sig);
        let mut buf = vec![0; header.len()];
        header.emit(&mut buf).unwrap();
        let (back, rest) = DframeHeader::parse(&buf, DframeContext { signed: true, keepalive_sess_id: true }).unwrap();
        prop_assert_eq!(back, header);
        prop_assert!(rest.is_empty());
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64), signed: bool, ka: bool) {
        let _ = DframeHeader::parse(&data, DframeContext { signed, keepalive_sess_id: ka });
    }
}

#[test]
fn snapshots() {
    let keepalive = Dframe {
        header: DframeHeader {
            command: DframeCommand::from_bits_retain(0x3F),
            control: DframeControl::KEEPALIVE_OR_CORRELATE,
            seq: 0,
            n_rcv: 0,
            masks: Masks::default(),
            signature: None,
            sess_id: Some(0x79C9_AEC6),
        },
        payload: Blob::default(),
    };
    insta::assert_snapshot!("KEEPALIVE", snapshot_text(&keepalive));
    let eos = Dframe {
        header: DframeHeader {
            command: DframeCommand::from_bits_retain(0x3F),
            control: DframeControl::END_STREAM,
            seq: 7,
            n_rcv: 4,
            masks: Masks::new(0b10, 0),
            signature: None,
            sess_id: None,
        },
        payload: Blob::default(),
    };
    insta::assert_snapshot!("END_OF_STREAM", snapshot_text(&eos));
    let data = Dframe {
        header: DframeHeader {
            command: DframeCommand::from_bits_retain(0x3D),
            control: DframeControl::empty(),
            seq: 5,
            n_rcv: 3,
            masks: Masks::default(),
            signature: None,
            sess_id: None,
        },
        payload: Blob(b"\x01ABCDE".to_vec()),
    };
    insta::assert_snapshot!("DFRAME", snapshot_text(&data));
}
