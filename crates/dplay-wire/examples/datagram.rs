//! Builds a DirectPlay 8 EnumQuery, then parses it and a truncated copy the way a receiver
//! would: `cargo run -p dplay-wire --example datagram`.
#![allow(clippy::print_stdout)] // an example prints

use dplay_wire::dp8::enumeration::{DXDIAG_APPLICATION_GUID, EnumQuery};
use dplay_wire::{Blob, Wire, hexdump, parse_datagram};

fn main() -> Result<(), dplay_wire::WireError> {
    // Build: every message is a plain value; `to_vec` (or `emit` into a buffer) writes it.
    let query = EnumQuery {
        enum_payload: 0x1234,
        application_guid: Some(DXDIAG_APPLICATION_GUID),
        application_payload: Blob::default(),
    };
    let bytes = query.to_vec()?;
    println!("EnumQuery, {} bytes (MC-DPLHP 2.2.1):\n{}", bytes.len(), hexdump::dump(&bytes));

    // Parse: one entry point for any datagram, DirectPlay 8 or 4.
    let datagram = parse_datagram(&bytes)?;
    println!("parsed: {} {}", datagram.family().name(), datagram.message_name());

    // Bad input is an error naming the field and offset, never a panic.
    let truncated = bytes.get(..bytes.len() - 3).unwrap_or_default();
    match parse_datagram(truncated) {
        Ok(d) => println!("truncated still parses as {}", d.message_name()),
        Err(e) => println!("truncated: {e}"),
    }
    Ok(())
}
