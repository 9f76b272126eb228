//! The MC-DPL4R endpoint (dplay-dpsp `reliable`) on arbitrary input: raw datagrams, data,
//! ACK and NACK frames with arbitrary fields from its peer, sends of its own, and time passing.
//! Nothing panics, every frame it queues encodes within the MTU, nothing delivered exceeds the
//! largest message, and held memory stays within the receive window (MC-DPL4R 2.2, 3.1.5).
#![no_main]

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_dpsp::reliable::{Config, Event, FRAME_OVERHEAD, Limits, RECEIVE_WINDOW, Reliable};
use dplay_fuzz::Input;
use dplay_wire::dp4::reliable::{
    AckFrame, DataFrame, FrameBody, NackFrame, NackMask, ReliableFlags, ReliableFrame,
};
use dplay_wire::{Blob, Wire};

const DATA: usize = 16;
const MAX_MESSAGE: usize = 256;

/// Small limits, so that they are reached quickly.
fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_message_size = MAX_MESSAGE;
    limits.max_queued_bytes = 4096;
    limits.max_links = 2;
    limits
}

fn peer() -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 2350))
}

fn drain(e: &mut Reliable) {
    while let Some(t) = e.poll_transmit() {
        let bytes = t.to_vec().expect("every queued frame encodes");
        assert!(bytes.len() <= e.config().mtu, "a frame above the MTU");
        assert_eq!(ReliableFrame::parse(&bytes).expect("reparses"), t.frame);
    }
    while let Some(ev) = e.poll_event() {
        if let Event::Delivered { data, .. } = ev {
            assert!(data.len() <= MAX_MESSAGE);
        }
    }
    assert!(e.bytes_held() <= usize::from(RECEIVE_WINDOW) * DATA + MAX_MESSAGE);
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    #[allow(clippy::disallowed_methods)]
    let mut now = Instant::now();
    let mut config = Config::default();
    config.mtu = FRAME_OVERHEAD + DATA;
    config.limits = limits();
    let mut e = Reliable::new(config).expect("valid config");
    e.open_link(peer(), 1, 2).expect("room for a link");
    let mut input = Input(data);
    while !input.0.is_empty() {
        let body = match input.u8() % 6 {
            0 => {
                let len = usize::from(input.u8() % 40);
                e.handle_datagram(now, peer(), input.bytes(len));
                None
            }
            1 => {
                let flags = ReliableFlags::from_bits_retain(input.u8())
                    & !(ReliableFlags::ACK | ReliableFlags::EXT | ReliableFlags::BIG);
                let (message_id, sequence, serial) = (input.u8(), input.u8(), input.u8());
                let len = usize::from(input.u8()) % (DATA + 1);
                let data = Blob(input.bytes(len).to_vec());
                Some(FrameBody::Data(DataFrame { flags, message_id, sequence, serial, nack: None, data }))
            }
            2 => Some(FrameBody::Ack(AckFrame {
                flags: ReliableFlags::ACK,
                message_id: input.u8(),
                sequence: input.u8(),
                serial: input.u8(),
                bytes_received: u32::from(input.u8()) << 8,
                local_tick_count: u32::from(input.u8()) << 8,
            })),
            3 => {
                let len = input.u8() % 4;
                let bits = u32::from_le_bytes([input.u8(), input.u8(), input.u8(), 0])
                    & ((1 << (8 * u32::from(len))) - 1);
                Some(FrameBody::Nack(NackFrame {
                    flags: ReliableFlags::ACK | ReliableFlags::EXT,
                    message_id: input.u8(),
                    sequence: input.u8(),
                    bytes_received: 0,
                    local_tick_count: 0,
                    nack: NackMask { len, bits },
                }))
            }
            4 => {
                let len = usize::from(input.u8());
                let _ = e.send(now, peer(), &vec![input.u8(); len], input.u8() & 1 == 1);
                None
            }
            _ => {
                now += Duration::from_millis(u64::from(input.u8()) * 20);
                e.handle_timeout(now);
                None
            }
        };
        if let Some(body) = body {
            e.handle_frame(now, peer(), &ReliableFrame { id_from: 2, id_to: 1, body });
        }
        drain(&mut e);
    }
});
