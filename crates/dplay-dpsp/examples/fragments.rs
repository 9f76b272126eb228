//! A 5000-byte DirectPlay 4 message cut into fragments and reassembled, first without
//! reliability (every DPSP_MSG_PACKET at once, delivered here in reverse order), then reliably
//! (one DPSP_MSG_PACKET2_DATA at a time, each acknowledged):
//! `cargo run -p dplay-dpsp --example fragments`. No sockets: datagrams are carried by hand.
#![allow(clippy::print_stdout, clippy::disallowed_methods)] // an example prints and has a clock

use std::net::SocketAddr;
use std::time::Instant;

use dplay_dpsp::{Config, Dpsp, Event, Reliability};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let now = Instant::now();
    let a_addr: SocketAddr = "10.0.0.1:2350".parse()?;
    let b_addr: SocketAddr = "10.0.0.2:2350".parse()?;
    let (mut a, mut b) = (Dpsp::new(Config::default())?, Dpsp::new(Config::default())?);
    let message: Vec<u8> = (0..=250u8).cycle().take(5000).collect();

    // Unreliable: every fragment is queued at once; any arrival order reassembles.
    let guid = a.send(now, b_addr, &message, Reliability::Unreliable)?;
    let datagrams: Vec<Vec<u8>> =
        std::iter::from_fn(|| a.poll_transmit()).map(|t| t.to_vec()).collect::<Result<_, _>>()?;
    println!("PACKET: {guid} in {} datagrams, delivered last first", datagrams.len());
    for d in datagrams.iter().rev() {
        b.handle_datagram(now, a_addr, d);
    }
    report(&mut b, &message);

    // Reliable: each PACKET2_DATA waits for its PACKET2_ACK (the Packetize timer resends it).
    let guid = a.send(now, b_addr, &message, Reliability::Reliable)?;
    let mut exchanged = 0;
    loop {
        let mut idle = true;
        while let Some(t) = a.poll_transmit() {
            b.handle_datagram(now, a_addr, &t.to_vec()?);
            (idle, exchanged) = (false, exchanged + 1);
        }
        while let Some(t) = b.poll_transmit() {
            a.handle_datagram(now, b_addr, &t.to_vec()?);
            (idle, exchanged) = (false, exchanged + 1);
        }
        if idle {
            break;
        }
    }
    println!("PACKET2_DATA: {guid} in {exchanged} datagrams, data and acknowledgements");
    report(&mut b, &message);
    if let Some(Event::SendComplete { guid, .. }) = a.poll_event() {
        println!("sender: {guid} acknowledged in full");
    }
    Ok(())
}

/// Prints what the receiver delivered and checks it is the message sent.
fn report(b: &mut Dpsp, sent: &[u8]) {
    while let Some(event) = b.poll_event() {
        if let Event::Delivered { message, .. } = event {
            println!(
                "  reassembled {} bytes, {}",
                message.len(),
                if message == sent { "identical" } else { "DIFFERENT" }
            );
        }
    }
}
