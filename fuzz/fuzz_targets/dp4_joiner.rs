//! A DirectPlay 4 joiner waiting for its name table (MC-DPL4CS 3.1.5.7): after REQUESTPLAYERREPLY
//! it takes arbitrary messages from the host, most framed as ENUMPLAYERSREPLY (2.2.28) or
//! SUPERENUMPLAYERSREPLY (2.2.53) so the fuzzer reaches the name-table code. Nothing panics,
//! every entry kept is within the limits, and every TCP message goes to the host.
#![no_main]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_session::dp4::{Dp4Config, Dp4Session, Via};
use libfuzzer_sys::fuzz_target;

/// A message as a Windows host frames it: size and token 0xFAB, SockAddr (TCP 2349), 'play',
/// `command`, dialect 14, `body` (MC-DPL4CS 2.2.6).
fn framed(command: u16, body: &[u8]) -> Vec<u8> {
    let size = u32::try_from(28 + body.len()).unwrap_or(0) & 0xF_FFFF;
    let mut out = (0xFAB0_0000 | size).to_le_bytes().to_vec();
    out.extend_from_slice(&[2, 0, 0x09, 0x2D]);
    out.extend_from_slice(&[0; 12]);
    out.extend_from_slice(b"play");
    out.extend_from_slice(&command.to_le_bytes());
    out.extend_from_slice(&14u16.to_le_bytes());
    out.extend_from_slice(body);
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(mut joiner) = Dp4Session::new(Dp4Config::default()) else { return };
    let limits = joiner.config().limits.clone();
    #[allow(clippy::disallowed_methods)] // one base instant; time then advances by the input
    let start = Instant::now();
    let host: SocketAddr = "10.0.0.1:2349".parse().unwrap_or_else(|_| unreachable!());
    let from: SocketAddr = "10.0.0.1:40000".parse().unwrap_or_else(|_| unreachable!());
    if joiner.join(start, host, None).is_err() {
        return;
    }
    // REQUESTPLAYERREPLY: ID, an empty SecDesc, no providers, S_OK (2.2.50).
    let mut reply = 0x1234_5678u32.to_le_bytes().to_vec();
    reply.resize(4 + 24 + 12, 0);
    if joiner.handle_tcp(start, 1, from, &framed(7, &reply)).is_err() {
        return;
    }
    let mut now = start;
    let mut rest = data;
    while let [kind, lo, hi, tail @ ..] = rest {
        let len = usize::from(u16::from_le_bytes([*lo, *hi])).min(tail.len());
        let (body, tail) = tail.split_at(len);
        rest = tail;
        let bytes = match kind % 3 {
            0 => framed(3, body),
            1 => framed(0x29, body),
            _ => body.to_vec(),
        };
        now += Duration::from_millis(u64::from(*kind));
        if joiner.handle_tcp(now, 1, from, &bytes).is_err() {
            break;
        }
        joiner.handle_timeout(now);
        while let Some(t) = joiner.poll_transmit() {
            if t.via == Via::Tcp {
                assert_eq!(t.to, host, "TCP to a third party");
            }
        }
        while joiner.poll_event().is_some() {}
    }
    let units = |n: &Option<dplay_wire::WideString>| n.as_ref().map_or(0, |n| n.units().len());
    for p in joiner.players().values() {
        assert!(units(&p.short_name) <= limits.max_player_name && units(&p.long_name) <= limits.max_player_name);
        assert!(p.player_data.len() <= limits.max_player_data);
    }
    for g in joiner.groups().values() {
        assert!(units(&g.short_name) <= limits.max_player_name && g.group_data.len() <= limits.max_player_data);
    }
});
