//! The router over arbitrary bytes, and lone player messages told from DirectPlay 8.

use dplay_addon::Dialect;
use dplay_wire::Blob;
use proptest::prelude::*;

use super::*;
use crate::addon_view;

const CARRIERS: [Carrier; 4] =
    [Carrier::Datagram, Carrier::Dp4Datagram, Carrier::Dp4Stream, Carrier::Dp4Reliable];

proptest! {
    /// Any bytes under any carrier: no panic; a parsed message re-emits to bytes that parse,
    /// under the same carrier, as a message of the same name; add-on packets are looked for
    /// without a panic in both dialects.
    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200), which in 0usize..4) {
        let carrier = CARRIERS[which];
        if let Ok(m) = Message::parse(&bytes, carrier, true) {
            for payload in m.app_payloads() {
                let _ = addon_view::find(payload, Dialect::Fs98);
                let _ = addon_view::find(payload, Dialect::Fs2004);
            }
            if let Ok(again) = m.reemit() {
                let reparsed = Message::parse(&again, carrier, true).map(|r| r.name());
                prop_assert_eq!(reparsed.ok(), Some(m.name()));
            }
        }
    }

    /// A stream-form player message with any IDs and payload is recognised from its bytes alone
    /// and re-emits byte for byte.
    #[test]
    fn stream_player_messages_alone(id_from in any::<u32>(), id_to in any::<u32>(),
                                    payload in proptest::collection::vec(any::<u8>(), 0..100)) {
        let ids = Some(dplay_wire::dp4::player_message::PlayerIds { id_from, id_to });
        let msg = PlayerMessage::new(ids, Blob::new(&payload));
        prop_assume!(!msg.needs_wrapper());
        let bytes = msg.to_vec().expect("emit");
        let parsed = Message::parse(&bytes, Carrier::Datagram, true).expect("parse");
        prop_assert_eq!(parsed.name(), "DPSP_MSG_PLAYERMESSAGE");
        prop_assert_eq!(parsed.reemit().expect("reemit"), bytes);
    }
}
