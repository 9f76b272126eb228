//! The DirectPlay 4 fragmentation endpoint (dplay-dpsp) on arbitrary input: raw datagrams,
//! fragments with arbitrary fields from a few senders, ACKs for its own reliable send, and time
//! passing. Nothing panics, every datagram it queues encodes, nothing delivered exceeds the
//! largest message or is itself a fragment, and the limits hold (MC-DPL4CS 2.2.39-2.2.41,
//! 3.1.5.27-3.1.5.29; issue items 2-4).
#![no_main]

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_dpsp::{Config, Dpsp, DpspMessage, Event, Limits, Reliability};
use dplay_fuzz::Input;
use dplay_wire::Blob;
use dplay_wire::dp4::fragment::{Fragment, PACKET_DATA_OFFSET, PacketAck};
use dplay_wire::dp4::message::Dp4Message;
use dplay_wire::{Uuid, Wire};

const MAX_MESSAGE: u32 = 4096;
const MAX_PARTIALS_PER_SENDER: usize = 4;
const MAX_BYTES_TOTAL: usize = 16384;

/// Small limits, so that eviction is reached quickly.
fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_message_size = MAX_MESSAGE;
    limits.max_partials_per_sender = MAX_PARTIALS_PER_SENDER;
    limits.max_bytes_per_sender = 8192;
    limits.max_bytes_total = MAX_BYTES_TOTAL;
    limits.max_finished = 64;
    limits
}
const SENDERS: u8 = 3;

fn peer(n: u8) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, n), 2300))
}

/// One of the four GUIDs in play: the endpoint's own reliable send, and three others.
fn pick(guids: &[Uuid; 4], n: u8) -> Uuid {
    guids.get(usize::from(n & 3)).copied().unwrap_or_default()
}

fn drain(d: &mut Dpsp, now: Instant) {
    while let Some(t) = d.poll_transmit() {
        let bytes = t.to_vec().expect("every queued datagram encodes");
        assert!(bytes.len() <= d.config().mtu, "a datagram above the MTU");
        assert_eq!(Dp4Message::parse(&bytes).expect("reparses"), t.to_message());
    }
    while let Some(e) = d.poll_event() {
        if let Event::Delivered { message, .. } = e {
            assert!(message.len() <= MAX_MESSAGE as usize);
            let mut again = Dpsp::new(Config::default()).expect("valid config");
            let nested = again.handle_datagram(now, peer(0), &message);
            assert_eq!(nested, dplay_dpsp::Datagram::NotDpsp, "a delivered message is a fragment");
        }
    }
    assert!(d.bytes_held() <= MAX_BYTES_TOTAL);
    assert!(d.partial_messages() <= usize::from(SENDERS) * MAX_PARTIALS_PER_SENDER);
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // The fuzzer's clock is a fixed base; only differences matter.
    #[allow(clippy::disallowed_methods)]
    let mut now = Instant::now();
    // A fixed seed: a crash must replay from its input alone.
    let mut config = Config::default().with_seed(0);
    config.mtu = 68 + 64;
    config.limits = limits();
    let mut d = Dpsp::new(config).expect("valid config");
    let sent = d.send(now, peer(0), &[7; 1000], Reliability::Reliable).expect("sendable");
    let guids = [sent, Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3)];
    let mut input = Input(data);
    while !input.0.is_empty() {
        match input.u8() % 4 {
            0 => {
                let len = usize::from(input.u8());
                let from = peer(input.u8() % SENDERS);
                d.handle_datagram(now, from, input.bytes(len));
            }
            1 => {
                let from = peer(input.u8() % SENDERS);
                let flags = input.u8();
                let guid = pick(&guids, flags);
                let fragment = Fragment {
                    guid_message: guid,
                    packet_index: u32::from(input.u8()),
                    offset: u32::from(input.u16()),
                    total_packets: u32::from(input.u8()),
                    message_size: u32::from(input.u16()),
                    packet_offset: PACKET_DATA_OFFSET,
                    data: Blob(vec![flags; usize::from(input.u8())]),
                };
                let message = if flags & 4 == 0 {
                    DpspMessage::Packet(fragment)
                } else {
                    DpspMessage::Packet2Data(fragment)
                };
                d.handle_message(now, from, &message);
            }
            2 => {
                let ack =
                    PacketAck { guid_message: pick(&guids, input.u8()), packet_id: u32::from(input.u8()) };
                d.handle_message(now, peer(input.u8() % SENDERS), &DpspMessage::Packet2Ack(ack));
            }
            _ => {
                now += Duration::from_millis(u64::from(input.u16()) * 10);
                d.handle_timeout(now);
            }
        }
        drain(&mut d, now);
    }
});
