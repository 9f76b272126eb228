//! Identifiers are random by default and fixed only on request (docs/decisions.md, "Random by
//! default"): two sessions configured alike, each hosting, never share an instance GUID or a
//! DPNID, while two with the same explicit seed replay the same ones.
#![allow(clippy::disallowed_methods)] // a time origin for the sessions; nothing here is timed

use std::time::Instant;

use dplay_session::dp4::Dp4Config;
use dplay_session::{Session, SessionConfig};
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x0018_0018);

/// A host made from `config`: its instance GUID and its own DPNID.
fn host(config: SessionConfig) -> (Uuid, u32) {
    let mut session = Session::new(config, Instant::now());
    session.host(Instant::now()).expect("an idle session can host");
    (session.name_table().instance(), session.local_dpnid().0)
}

fn config() -> SessionConfig {
    SessionConfig::new(APP, "127.0.0.1:6073".parse().unwrap(), "host")
}

#[test]
fn sessions_built_with_defaults_share_no_identifier() {
    let hosts: Vec<(Uuid, u32)> = (0..8).map(|_| host(config())).collect();
    for (i, a) in hosts.iter().enumerate() {
        for b in hosts.iter().skip(i + 1) {
            assert_ne!(a.0, b.0, "two default sessions drew the same instance GUID");
            assert_ne!(a.1, b.1, "two default sessions drew the same DPNID");
        }
    }
}

#[test]
fn an_explicit_seed_replays() {
    assert_eq!(host(config().with_seed(7)), host(config().with_seed(7)));
    assert_ne!(host(config().with_seed(7)), host(config().with_seed(8)));
}

#[test]
fn every_default_seed_is_drawn_afresh() {
    assert_ne!(config().rng_seed, config().rng_seed);
    assert_ne!(dplay_dframe::Config::default().rng_seed, dplay_dframe::Config::default().rng_seed);
    assert_ne!(Dp4Config::default().seed, Dp4Config::default().seed);
    assert_ne!(dplay_dpsp::Config::default().seed, dplay_dpsp::Config::default().seed);
}
