//! insta snapshot of the fragments of a sample message: each datagram as a spec-style hex dump,
//! then its decoded value (MC-DPL4CS 2.2.39, 2.2.41, 2.2.40; INDEX D.16).

mod common;

use std::fmt::Write;

use common::{base, peer, transmits};
use dplay_dpsp::{Config, Dpsp, DpspMessage, FRAGMENT_OVERHEAD, Reliability, Transmit};
use dplay_wire::dp4::fragment::PacketAck;
use dplay_wire::hexdump::dump;

/// A 100-byte message whose first 8 bytes are a short DP4 header ('play', Command 0x0A
/// PLAYERMESSAGE, Version 14) followed by text, cut into 40-byte fragments.
fn sample() -> Vec<u8> {
    let mut m = b"play\x0a\x00\x0e\x00".to_vec();
    let text = b"A large DirectPlay 4 message, cut into fragments of forty bytes each. ";
    m.extend(text.iter().cycle().take(92));
    m
}

fn render(transmits: &[Transmit]) -> String {
    let mut out = String::new();
    for t in transmits {
        writeln!(out, "{}\n{t:#?}\n", dump(&t.to_vec().unwrap())).unwrap();
    }
    out
}

#[test]
fn fragments_of_a_sample_message() {
    let mut config = Config::default().with_seed(0);
    config.mtu = FRAGMENT_OVERHEAD + 40;
    let mut a = Dpsp::new(config.clone()).unwrap();
    a.send(base(), peer(2), &sample(), Reliability::Unreliable).unwrap();
    let packets = transmits(&mut a);
    assert_eq!(packets.len(), 3);
    insta::assert_snapshot!("PACKET_fragments", render(&packets));

    let mut a = Dpsp::new(config).unwrap();
    let guid = a.send(base(), peer(2), &sample(), Reliability::Reliable).unwrap();
    let first = transmits(&mut a);
    let mut b = Dpsp::new(Config::default().with_seed(1)).unwrap();
    for t in &first {
        b.handle_message(base(), peer(1), &t.message);
    }
    let acks = transmits(&mut b);
    let ack = DpspMessage::Packet2Ack(PacketAck { guid_message: guid, packet_id: 0 });
    assert_eq!(acks.iter().map(|t| &t.message).collect::<Vec<_>>(), [&ack]);
    let exchange: Vec<Transmit> = first.into_iter().chain(acks).collect();
    insta::assert_snapshot!("PACKET2_DATA_and_ACK", render(&exchange));
}
