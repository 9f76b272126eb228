//! The join of seed 3697 (docs/decisions.md, "The late-handshake join"): the joiner's
//! confirming CONNECTED (MC-DPL8R 3.1.5.1.2) never reaches the host, every time. Its first
//! DFRAME completes the host's half-open attempt (MC-DPL8R 3.1.5.1.3's prompting KeepAlive),
//! so its PLAYER_CONNECT_INFO is answered and the join completes at once, not after the host's
//! connect retries run out.
#![allow(clippy::disallowed_methods)] // a time origin for the sessions; time here is virtual

use std::time::{Duration, Instant};

use dplay_session::{Session, SessionConfig};
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x3697);

/// A connector's confirming CONNECTED: a CFRAME (0x80, POLL clear) with bExtOpcode 0x02
/// (MC-DPL8R 2.2.1.2).
fn is_confirmation(datagram: &[u8]) -> bool {
    datagram.get(..2) == Some(&[0x80, 0x02])
}

#[test]
fn joiner_whose_confirmation_is_always_lost_still_joins() {
    let start = Instant::now();
    let (host_addr, joiner_addr) = ("10.0.0.1:2302".parse().unwrap(), "10.0.0.2:2302".parse().unwrap());
    let mut host = Session::new(SessionConfig::new(APP, host_addr, "host").with_seed(1), start);
    let mut joiner = Session::new(SessionConfig::new(APP, joiner_addr, "joiner").with_seed(2), start);
    host.host(start).expect("host");
    joiner.join(start, host_addr, None).expect("join");
    let mut now = start;
    let mut dropped = 0;
    while !joiner.is_joined() && now - start < Duration::from_secs(30) {
        while let Some(t) = joiner.poll_transmit() {
            if is_confirmation(&t.contents) {
                dropped += 1;
            } else {
                host.handle_datagram(now, joiner_addr, &t.contents);
            }
        }
        while let Some(t) = host.poll_transmit() {
            joiner.handle_datagram(now, host_addr, &t.contents);
        }
        while host.poll_event().is_some() || joiner.poll_event().is_some() {}
        now += Duration::from_millis(10);
        host.handle_timeout(now);
        joiner.handle_timeout(now);
    }
    assert!(joiner.is_joined(), "not joined after 30 s");
    assert!(dropped >= 1);
    assert!(now - start < Duration::from_secs(1), "joined only after {:?}", now - start);
    assert_eq!(host.name_table().len(), 2);
}
