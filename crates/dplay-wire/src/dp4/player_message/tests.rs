//! Both forms of DPSP_MSG_PLAYERMESSAGE and their PLAYERWRAPPER (MC-DPL4CS 2.2.45, 2.2.47,
//! 3.1.4.16.2).

use proptest::prelude::*;

use super::*;
use crate::Wire;
use crate::dp4::message::{Dp4Body, Dp4Datagram, Dp4Message, Dp4UdpDatagram};
use crate::dp4::routing::PlayerWrapper;
use crate::hexdump::dump;
use crate::testutil::bytes;

const IDS: PlayerIds = PlayerIds { id_from: 0x1E53_A0A2, id_to: 0x1E52_A0A3 };

fn snapshot<T: std::fmt::Debug>(b: &[u8], v: &T) -> String {
    format!("{}\n{v:#?}\n", dump(b))
}

/// Application data that carries 'play' at offset 12, i.e. at offset 20 of a message with
/// `idFrom`/`idTo` in the datagram form.
fn clashing_payload() -> Vec<u8> {
    let mut p = vec![0x11; 12];
    p.extend_from_slice(b"play");
    p.extend_from_slice(&[0x22; 4]);
    p
}

/// MC-DPL4CS 2.2.45 (datagram form, docs/decisions.md): idFrom, idTo, then the data.
#[test]
fn datagram_form_bytes() {
    let b = bytes("A2 A0 53 1E A3 A0 52 1E 68 69");
    let m = DatagramPlayerMessage::parse(&b, true).unwrap();
    assert_eq!(m, DatagramPlayerMessage::new(Some(IDS), Blob::new(b"hi")));
    assert_eq!(m.encoded_len(), 10);
    assert_eq!(m.to_vec().unwrap(), b);
    let nm = DatagramPlayerMessage::parse(&b, false).unwrap();
    assert_eq!((nm.ids, nm.payload.len()), (None, 10));
    assert_eq!(nm.to_vec().unwrap(), b);
    assert!(matches!(DatagramPlayerMessage::parse(&b[..7], true), Err(WireError::Truncated { .. })));
    insta::assert_snapshot!("DPSP_MSG_PLAYERMESSAGE_datagram", snapshot(&b, &m));
}

/// MC-DPL4CS 2.2.45 (stream form): size/token, SockAddr, idFrom, idTo, data.
#[test]
fn stream_form_bytes() {
    let b = bytes(
        "1E 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00
         00 00 00 00 A2 A0 53 1E A3 A0 52 1E 68 69",
    );
    let m = PlayerMessage::parse(&b, true).unwrap();
    assert_eq!(m.ids, Some(IDS));
    assert_eq!(m.token, Token::FROM_REMOTE);
    assert_eq!(m.sock_addr.addr.port(), 2300);
    assert_eq!(m.payload, Blob::new(b"hi"));
    assert_eq!(m.to_vec().unwrap(), b);
    let mut short = b.clone();
    short[0] = 0x1D;
    assert!(matches!(PlayerMessage::parse(&short, true), Err(WireError::InvalidValue { field: "size", .. })));
}

/// MC-DPL4CS 3.1.4.16.2: data with 'play' at offset 20 is refused alone in either form and
/// goes in a PLAYERWRAPPER, whose content decodes again (the bug of issue 8: `inner` refused
/// exactly what it wraps).
#[test]
fn wrapper_carries_what_the_plain_forms_refuse() {
    let d = DatagramPlayerMessage::new(Some(IDS), Blob(clashing_payload()));
    assert!(d.needs_wrapper());
    assert!(matches!(d.to_vec(), Err(WireError::Unencodable { .. })));
    let raw = d.to_wrapped_vec().unwrap();
    assert_eq!(&raw[20..24], b"play");
    assert!(DatagramPlayerMessage::parse(&raw, true).is_err());
    let w = PlayerWrapper::wrap_datagram(&d).unwrap();
    assert_eq!(w.inner_datagram(true).unwrap(), d);

    // The stream form: 'play' at 20 is idFrom itself.
    let s = PlayerMessage::new(
        Some(PlayerIds { id_from: u32::from_le_bytes(*b"play"), id_to: 7 }),
        Blob::new(b"x"),
    );
    assert!(s.needs_wrapper());
    assert!(s.to_vec().is_err());
    let w = PlayerWrapper::wrap(&s).unwrap();
    assert_eq!(w.inner(true).unwrap(), s);
    let nm = PlayerMessage::new(None, Blob::new(b"play!"));
    assert!(nm.needs_wrapper() && PlayerWrapper::wrap(&nm).unwrap().inner(false).unwrap() == nm);

    // As a whole DPSP_MSG_PLAYERWRAPPER datagram (full header) and back.
    let msg = Dp4Message::new(Token::FROM_REMOTE, SockAddrIn::unspecified(), 14, Dp4Body::PlayerWrapper(w));
    let b = msg.to_vec().unwrap();
    let Ok(Dp4UdpDatagram::System(again)) = Dp4UdpDatagram::parse(&b, true) else { panic!("not system") };
    let Dp4Body::PlayerWrapper(w) = again.body else { panic!("not a wrapper") };
    assert_eq!(w.inner(true).unwrap(), s);
    insta::assert_snapshot!("DPSP_MSG_PLAYERWRAPPER_stream_content", snapshot(&b, &s));
}

/// F-21: the UDP demux gives the datagram form, the stream demux the stream form.
#[test]
fn demux_by_transport() {
    let d = bytes("A2 A0 53 1E A3 A0 52 1E 68 69");
    assert!(matches!(Dp4UdpDatagram::parse(&d, true), Ok(Dp4UdpDatagram::Player(m)) if m.ids == Some(IDS)));
    assert!(Dp4Datagram::parse(&d, true).is_err(), "too short for the stream form");
}

fn ids() -> impl Strategy<Value = Option<PlayerIds>> {
    proptest::option::of(any::<(u32, u32)>().prop_map(|(id_from, id_to)| PlayerIds { id_from, id_to }))
}

proptest! {
    #[test]
    fn datagram_form_roundtrips(ids in ids(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
        let m = DatagramPlayerMessage::new(ids, Blob(payload));
        let present = ids.is_some();
        let raw = m.to_wrapped_vec().unwrap();
        prop_assert_eq!(raw.len(), m.encoded_len());
        prop_assert_eq!(&DatagramPlayerMessage::parse_wrapped(&raw, present).unwrap(), &m);
        match m.to_vec() {
            Ok(b) => prop_assert_eq!(DatagramPlayerMessage::parse(&b, present).unwrap(), m),
            Err(_) => prop_assert!(m.needs_wrapper()),
        }
    }

    #[test]
    fn stream_form_wrapped_roundtrips(ids in ids(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
        let m = PlayerMessage::new(ids, Blob(payload));
        let w = PlayerWrapper::wrap(&m).unwrap();
        prop_assert_eq!(w.player_message.len(), m.encoded_len());
        prop_assert_eq!(w.inner(ids.is_some()).unwrap(), m);
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..96), present in any::<bool>()) {
        let _ = DatagramPlayerMessage::parse(&data, present);
        let _ = DatagramPlayerMessage::parse_wrapped(&data, present);
        let _ = PlayerMessage::parse_wrapped(&data, present);
        let _ = Dp4UdpDatagram::parse(&data, present);
    }
}
