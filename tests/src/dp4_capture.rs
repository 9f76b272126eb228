//! A DirectPlay 4 session's traffic ([`dplay_testkit::dp4_sim::Capture`]) as packets: UDP
//! datagrams as they are, each TCP connection as a handshake and then one segment per write,
//! with sequence and acknowledgment numbers that run on per direction.

use dplay_session::dp4::Via;
use dplay_testkit::dp4_sim::Capture;

use crate::pcap::{Packet, TCP_ACK, TCP_PSH_ACK, TCP_SYN, TCP_SYN_ACK};

/// A packet of the capture, and the index of the [`Capture`] it carries (`None` for the
/// segments of a TCP handshake).
#[derive(Debug, Clone)]
pub struct CapturedPacket {
    /// The packet.
    pub packet: Packet,
    /// The capture it carries.
    pub capture: Option<usize>,
}

/// The initial sequence numbers of connection `conn`: (connecting side, listening side).
fn isn(conn: u64) -> (u32, u32) {
    let c = u32::try_from(conn % 0x100).unwrap_or_default();
    (0x1000_0000 + c * 0x0010_0000, 0x9000_0000 + c * 0x0001_0000)
}

/// Every capture as packets, in order; a connection's first write is preceded by its SYN,
/// SYN-ACK and ACK.
pub fn packets(captures: &[Capture]) -> Vec<CapturedPacket> {
    packets_mss(captures, usize::MAX)
}

/// Like [`packets`], with each TCP write cut into segments of at most `mss` bytes; the
/// capture index goes with the write's last segment.
pub fn packets_mss(captures: &[Capture], mss: usize) -> Vec<CapturedPacket> {
    let mut out = Vec::new();
    for (i, c) in captures.iter().enumerate() {
        let packet = match (c.via, c.stream) {
            (Via::Tcp, Some(pos)) => {
                let (client, server) = isn(pos.conn);
                if pos.offset == 0 {
                    let handshake = [
                        Packet::tcp_segment(c.src, c.dst, (client, 0), TCP_SYN, &[]),
                        Packet::tcp_segment(c.dst, c.src, (server, client + 1), TCP_SYN_ACK, &[]),
                        Packet::tcp_segment(c.src, c.dst, (client + 1, server + 1), TCP_ACK, &[]),
                    ];
                    out.extend(handshake.into_iter().map(|packet| CapturedPacket { packet, capture: None }));
                }
                let offset = u32::try_from(pos.offset).expect("stream offset fits a sequence number");
                let mut seq = client.wrapping_add(1).wrapping_add(offset);
                let chunks: Vec<&[u8]> = c.bytes.chunks(mss.max(1)).collect();
                let (last, first) = chunks.split_last().expect("a TCP write is never empty");
                for chunk in first {
                    let packet = Packet::tcp_segment(c.src, c.dst, (seq, server + 1), TCP_ACK, chunk);
                    out.push(CapturedPacket { packet, capture: None });
                    seq = seq.wrapping_add(u32::try_from(chunk.len()).expect("segment length"));
                }
                Packet::tcp_segment(c.src, c.dst, (seq, server + 1), TCP_PSH_ACK, last)
            }
            _ => Packet { src: c.src, dst: c.dst, proto: crate::pcap::Proto::Udp, payload: c.bytes.clone() },
        };
        out.push(CapturedPacket { packet, capture: Some(i) });
    }
    out
}
