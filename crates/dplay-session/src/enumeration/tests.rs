//! Our enumeration as the wire shows it.

use std::time::{Duration, Instant};

use dplay_wire::dp8::enumeration::{EnumMessage, EnumQuery};
use dplay_wire::{Blob, Wire};

use crate::{Event, Session, SessionConfig};

/// Our EnumQuery carries the application's payload (MC-DPLHP 2.2.1), every retry; the
/// search ends after `enum_count` sends and one more interval.
#[test]
fn enum_query_carries_the_payload_and_ends() {
    #[allow(clippy::disallowed_methods)] // a test's time origin
    let now = Instant::now();
    let mut cfg =
        SessionConfig::new(uuid::Uuid::nil(), "10.0.0.2:2302".parse().unwrap(), "seeker").with_seed(7);
    cfg.enum_query_data = b"game filter".to_vec();
    cfg.enum_count = 2;
    cfg.set_enum_retry(Duration::from_millis(100));
    let mut s = Session::new(cfg, now);
    s.enum_hosts(now, "10.0.0.1:6073".parse().unwrap(), None).unwrap();
    let mut queries = 0;
    let mut t = now;
    while s.is_enumerating() {
        while let Some(d) = s.poll_transmit() {
            let Ok(EnumMessage::Query(q)) = EnumMessage::parse(&d.contents) else {
                panic!("not an EnumQuery")
            };
            assert_eq!(q.application_payload.0, b"game filter");
            queries += 1;
        }
        t += Duration::from_millis(100);
        s.handle_timeout(t);
    }
    assert_eq!(queries, 2);
    assert_eq!(t - now, Duration::from_millis(200));
}

/// With `indicate_enum`, the host's application answers each EnumQuery for its session
/// (DPN_MSGID_ENUM_HOSTS_QUERY): nothing goes out until it does, the EnumResponse then echoes
/// the query's EnumPayload with the application's reply as `ApplicationData` (MC-DPLHP
/// 2.2.2); a reply over one datagram, or none, sends nothing.
#[test]
fn the_application_answers_enumeration() {
    #[allow(clippy::disallowed_methods)] // a test's time origin
    let now = Instant::now();
    let app = uuid::Uuid::from_u128(0x5EED);
    let mut cfg = SessionConfig::new(app, "10.0.0.1:2302".parse().unwrap(), "host").with_seed(8);
    cfg.session_name = "arena".into();
    cfg.indicate_enum = true;
    let mut s = Session::new(cfg, now);
    s.host(now).unwrap();
    while s.poll_transmit().is_some() {}
    while s.poll_event().is_some() {}
    let seeker: std::net::SocketAddr = "10.0.0.2:2302".parse().unwrap();
    let query = EnumMessage::Query(EnumQuery {
        enum_payload: 0x1234,
        application_guid: Some(app),
        application_payload: Blob::new(b"filter"),
    });
    s.handle_datagram(now, seeker, &query.to_vec().unwrap());
    assert!(s.poll_transmit().is_none(), "answered before the application");
    let Some(Event::EnumQuery { from, enum_payload, data, room }) = s.poll_event() else {
        panic!("no EnumQuery")
    };
    assert_eq!((from, enum_payload, data.as_slice()), (seeker, 0x1234, &b"filter"[..]));
    assert_eq!(room, 1472 - 92 - 2 * 6);

    s.answer_enum(from, enum_payload, &vec![0; room + 1]);
    assert!(s.poll_transmit().is_none(), "a reply over one datagram went out");
    s.answer_enum(from, enum_payload, b"map=canyon");
    let d = s.poll_transmit().expect("an EnumResponse");
    assert_eq!(d.destination, seeker);
    let Ok(EnumMessage::Response(r)) = EnumMessage::parse(&d.contents) else { panic!("not an EnumResponse") };
    assert_eq!(r.enum_payload, 0x1234);
    assert_eq!(r.application_data.map(|b| b.0), Some(b"map=canyon".to_vec()));
    assert_eq!(d.contents.len() - b"map=canyon".len() + room, 1472, "the room fills one datagram exactly");
}
