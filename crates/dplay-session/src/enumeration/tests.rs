//! Our enumeration as the wire shows it.

use std::time::{Duration, Instant};

use dplay_wire::Wire;
use dplay_wire::dp8::enumeration::EnumMessage;

use crate::{Session, SessionConfig};

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
