//! TCP segments for a pcap capture from the bytes a runtime reads and writes on its
//! connections: a handshake the first time a connection is seen, then one PSH|ACK segment per
//! DirectPlay 4 message with consistent sequence and acknowledgement numbers, so Wireshark
//! follows the conversation and its `dplay` dissector sees whole messages (MC-DPL4CS 2.1).

use std::collections::HashMap;
use std::net::SocketAddr;

use dplay_session::dp4::StreamFramer;

const SYN: u8 = 0x02;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;
/// Payload per segment: a message larger than this spans several segments, as IPv4's 16-bit
/// length requires.
const MAX_SEGMENT: usize = 65_000;

/// The header fields of one synthesized segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TcpHeader {
    pub(crate) seq: u32,
    pub(crate) ack: u32,
    pub(crate) flags: u8,
}

/// One direction of a connection.
struct Half {
    next_seq: u32,
    framer: StreamFramer,
    /// The bytes stopped looking like DirectPlay 4 messages: written as they come.
    raw: bool,
}

impl Half {
    fn new() -> Self {
        Self { next_seq: 1, framer: StreamFramer::default(), raw: false }
    }
}

/// Every connection seen, by (sender, receiver).
#[derive(Default)]
pub(crate) struct Flows {
    halves: HashMap<(SocketAddr, SocketAddr), Half>,
}

impl Flows {
    /// The segments to record for `data` going from `src` to `dst`: `(sender, header,
    /// payload)`. Bytes of a message not complete yet wait for the rest.
    pub(crate) fn segments(
        &mut self,
        src: SocketAddr,
        dst: SocketAddr,
        data: &[u8],
    ) -> Vec<(SocketAddr, TcpHeader, Vec<u8>)> {
        let mut out = Vec::new();
        if !self.halves.contains_key(&(src, dst)) && !self.halves.contains_key(&(dst, src)) {
            // The side that sends first opened the connection (DirectPlay 4 never writes on a
            // connection it accepted).
            out.push((src, TcpHeader { seq: 0, ack: 0, flags: SYN }, Vec::new()));
            out.push((dst, TcpHeader { seq: 0, ack: 1, flags: SYN | ACK }, Vec::new()));
            out.push((src, TcpHeader { seq: 1, ack: 1, flags: ACK }, Vec::new()));
            self.halves.insert((dst, src), Half::new());
        }
        let ack = self.halves.get(&(dst, src)).map_or(1, |h| h.next_seq);
        let half = self.halves.entry((src, dst)).or_insert_with(Half::new);
        let messages = if half.raw {
            vec![data.to_vec()]
        } else {
            half.framer.push(data).unwrap_or_else(|_| {
                half.raw = true;
                vec![data.to_vec()]
            })
        };
        for message in &messages {
            for chunk in message.chunks(MAX_SEGMENT) {
                out.push((src, TcpHeader { seq: half.next_seq, ack, flags: PSH | ACK }, chunk.to_vec()));
                half.next_seq = half.next_seq.wrapping_add(u32::try_from(chunk.len()).unwrap_or(0));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(len: usize) -> Vec<u8> {
        let mut m = vec![7; len];
        m[..4].copy_from_slice(&(u32::try_from(len).unwrap() | 0xFAB << 20).to_le_bytes());
        m
    }

    /// MC-DPL4CS 2.1: two messages in one read become two segments, a message split across
    /// reads one segment, after a handshake; sequence numbers count the bytes.
    #[test]
    fn one_segment_per_message() {
        let (a, b): (SocketAddr, SocketAddr) =
            ("127.0.0.1:40000".parse().unwrap(), "127.0.0.1:2300".parse().unwrap());
        let mut flows = Flows::default();
        let (m1, m2) = (message(28), message(40));
        let first = flows.segments(a, b, &[m1.clone(), m2[..10].to_vec()].concat());
        let flags: Vec<u8> = first.iter().map(|(_, h, _)| h.flags).collect();
        assert_eq!(flags, [SYN, SYN | ACK, ACK, PSH | ACK]);
        assert_eq!(first[3].2, m1);
        let second = flows.segments(a, b, &m2[10..]);
        assert_eq!(second, vec![(a, TcpHeader { seq: 29, ack: 1, flags: PSH | ACK }, m2)]);
    }

    /// Bytes that are not DirectPlay 4 messages are still recorded, as they come.
    #[test]
    fn garbage_is_kept_raw() {
        let (a, b): (SocketAddr, SocketAddr) =
            ("127.0.0.1:40000".parse().unwrap(), "127.0.0.1:2300".parse().unwrap());
        let mut flows = Flows::default();
        let got = flows.segments(a, b, b"GET / HTTP/1.0");
        assert_eq!(got.last().map(|(_, _, p)| p.as_slice()), Some(&b"GET / HTTP/1.0"[..]));
    }
}
