//! Add-on packets and state machines on arbitrary bytes: parsing never panics, whatever parses
//! re-emits byte for byte, and the client and host of both dialects swallow any message and any
//! player data (seed 004; FS-MULTIPLAYER.md 1.3, 3.3, 3.6).
#![no_main]

use std::time::{Duration, Instant};

use dplay_addon::packet::PlayerInfo;
use dplay_addon::{Client, ClientConfig, Dialect, Endpoint, Host, HostConfig, HostPolicy, Packet, PlayerId, Role};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    for dialect in [Dialect::Fs98, Dialect::Fs2004] {
        if let Ok(p) = Packet::parse(dialect, data) {
            assert_eq!(p.to_vec(dialect).expect("a parsed packet emits"), data);
        }
    }
    let _ = PlayerInfo::parse(data);

    // The fuzzer's clock is a fixed base; only differences matter.
    #[allow(clippy::disallowed_methods)]
    let now = Instant::now();
    let later = now + Duration::from_secs(31);
    let from = PlayerId(0x200);
    for dialect in [Dialect::Fs98, Dialect::Fs2004] {
        let mut config = ClientConfig::new(Role::Player);
        config.dialect = dialect;
        let mut client = Client::new(config);
        client.player_joined(now, from);
        let _ = client.start(now, PlayerId(0x100));
        client.handle_message(now, from, data);
        client.handle_timeout(later);
        while client.poll_outgoing().is_some() || client.poll_event().is_some() {}
    }
    for dialect in [Dialect::Fs98, Dialect::Fs2004] {
        let mut host = Host::new(HostConfig::new(dialect, Role::Player, HostPolicy::default()), PlayerId(1));
        host.player_joined(now, from);
        // A joiner's DirectPlay 8 player data, as the bridge hands it over (FS-MULTIPLAYER.md 3.6).
        if let Ok(info) = PlayerInfo::parse(data) {
            host.player_info(now, from, info);
        }
        host.handle_message(now, from, data);
        host.handle_timeout(later);
        while host.poll_outgoing().is_some() || host.poll_event().is_some() {}
    }
});
