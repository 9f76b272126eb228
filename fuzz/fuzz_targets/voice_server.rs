//! The voice server and the test client swallow any bytes from any player: no panic, and
//! nothing is kept for a player that never completed the connection (MC-DPLVP 5.1).
#![no_main]

use std::time::Instant;

use dplay_voice::{VoiceClient, VoiceClientConfig, VoiceServer, VoiceServerConfig};
use dplay_wire::voice::Dvid;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // The fuzzer's clock is a fixed base; only differences matter.
    #[allow(clippy::disallowed_methods)]
    let now = Instant::now();
    let members = |d: Dvid| (d == Dvid(9)).then(|| vec![Dvid(1), Dvid(2)]);
    for cfg in [VoiceServerConfig::forwarding(), VoiceServerConfig::echo()] {
        let mut server = VoiceServer::new(cfg).expect("a supported type");
        server.handle_message(now, Dvid(1), data, &members);
        while server.poll_outgoing().is_some() || server.poll_event().is_some() {}
        assert!(server.talkers().is_empty());
    }
    let mut client = VoiceClient::new(VoiceClientConfig { server: Dvid(1), local: Dvid(2), frames_per_burst: 10 });
    client.connect(now);
    client.handle_message(now, Dvid(1), data);
    while client.poll_outgoing().is_some() || client.poll_event().is_some() {}
});
