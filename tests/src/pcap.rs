//! Writing captures of our own encodings: Ethernet, IPv4 and UDP or TCP headers with correct
//! lengths and checksums around each payload, in a classic pcap file.

use std::net::SocketAddrV4;
use std::path::Path;
use std::time::Duration;

use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;

/// UDP or TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// UDP (IP protocol 17).
    Udp,
    /// TCP (IP protocol 6): one segment.
    Tcp {
        /// The segment's sequence number.
        seq: u32,
        /// Its acknowledgment number.
        ack: u32,
        /// Its flags ([`TCP_PSH_ACK`], [`TCP_SYN`], ...).
        flags: u8,
    },
}

/// TCP flags: SYN.
pub const TCP_SYN: u8 = 0x02;
/// TCP flags: ACK.
pub const TCP_ACK: u8 = 0x10;
/// TCP flags: SYN and ACK.
pub const TCP_SYN_ACK: u8 = TCP_SYN | TCP_ACK;
/// TCP flags: PSH and ACK, a data segment.
pub const TCP_PSH_ACK: u8 = 0x18;

/// One captured packet: addresses, transport and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Source address and port.
    pub src: SocketAddrV4,
    /// Destination address and port.
    pub dst: SocketAddrV4,
    /// Transport.
    pub proto: Proto,
    /// The UDP or TCP payload.
    pub payload: Vec<u8>,
}

impl Packet {
    /// A UDP datagram from `src` to `dst` (`"10.0.0.1:2302"`).
    pub fn udp(src: &str, dst: &str, payload: &[u8]) -> Self {
        Self { src: addr(src), dst: addr(dst), proto: Proto::Udp, payload: payload.to_vec() }
    }

    /// A TCP segment from `src` to `dst` carrying `payload` at sequence number `seq`.
    pub fn tcp(src: &str, dst: &str, seq: u32, payload: &[u8]) -> Self {
        Self::tcp_segment(addr(src), addr(dst), (seq, 1), TCP_PSH_ACK, payload)
    }

    /// A TCP segment with sequence and acknowledgment numbers `(seq, ack)` and `flags`.
    pub fn tcp_segment(
        src: SocketAddrV4,
        dst: SocketAddrV4,
        (seq, ack): (u32, u32),
        flags: u8,
        payload: &[u8],
    ) -> Self {
        Self { src, dst, proto: Proto::Tcp { seq, ack, flags }, payload: payload.to_vec() }
    }

    /// The whole Ethernet frame.
    pub fn frame(&self) -> Vec<u8> {
        let transport = match self.proto {
            Proto::Udp => self.udp_segment(),
            Proto::Tcp { seq, ack, flags } => self.tcp_header(seq, ack, flags),
        };
        let mut ip = vec![0x45, 0];
        ip.extend_from_slice(&u16_len(20 + transport.len()).to_be_bytes());
        ip.extend_from_slice(&[0, 1, 0x40, 0, 64, self.ip_proto(), 0, 0]);
        ip.extend_from_slice(&self.src.ip().octets());
        ip.extend_from_slice(&self.dst.ip().octets());
        let sum = checksum(&[&ip]);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());

        let mut frame = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00];
        frame.extend_from_slice(&ip);
        frame.extend_from_slice(&transport);
        frame
    }

    fn ip_proto(&self) -> u8 {
        match self.proto {
            Proto::Udp => 17,
            Proto::Tcp { .. } => 6,
        }
    }

    fn pseudo_header(&self, len: usize) -> Vec<u8> {
        let mut p = Vec::with_capacity(12);
        p.extend_from_slice(&self.src.ip().octets());
        p.extend_from_slice(&self.dst.ip().octets());
        p.extend_from_slice(&[0, self.ip_proto()]);
        p.extend_from_slice(&u16_len(len).to_be_bytes());
        p
    }

    fn udp_segment(&self) -> Vec<u8> {
        let len = 8 + self.payload.len();
        let mut udp = Vec::with_capacity(len);
        udp.extend_from_slice(&self.src.port().to_be_bytes());
        udp.extend_from_slice(&self.dst.port().to_be_bytes());
        udp.extend_from_slice(&u16_len(len).to_be_bytes());
        udp.extend_from_slice(&[0, 0]);
        udp.extend_from_slice(&self.payload);
        let sum = match checksum(&[&self.pseudo_header(len), &udp]) {
            0 => 0xFFFF,
            s => s,
        };
        udp[6..8].copy_from_slice(&sum.to_be_bytes());
        udp
    }

    fn tcp_header(&self, seq: u32, ack: u32, flags: u8) -> Vec<u8> {
        let mut tcp = Vec::with_capacity(20 + self.payload.len());
        tcp.extend_from_slice(&self.src.port().to_be_bytes());
        tcp.extend_from_slice(&self.dst.port().to_be_bytes());
        tcp.extend_from_slice(&seq.to_be_bytes());
        tcp.extend_from_slice(&ack.to_be_bytes());
        tcp.extend_from_slice(&[0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]);
        tcp.extend_from_slice(&self.payload);
        let sum = checksum(&[&self.pseudo_header(tcp.len()), &tcp]);
        tcp[16..18].copy_from_slice(&sum.to_be_bytes());
        tcp
    }
}

fn addr(s: &str) -> SocketAddrV4 {
    s.parse().unwrap_or_else(|e| panic!("bad test address {s:?}: {e}"))
}

fn u16_len(len: usize) -> u16 {
    u16::try_from(len).unwrap_or_else(|_| panic!("test packet of {len} bytes does not fit IPv4"))
}

/// The Internet checksum (RFC 1071) over the concatenation of `parts`.
fn checksum(parts: &[&[u8]]) -> u16 {
    let bytes: Vec<u8> = parts.concat();
    let mut sum: u32 =
        bytes.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !u16::try_from(sum).unwrap_or(0)
}

/// The capture time of packet `i`: one millisecond apart from a fixed start.
fn time(i: usize) -> Duration {
    Duration::from_secs(1_700_000_000) + Duration::from_millis(i as u64)
}

/// Writes `packets` as an Ethernet pcapng with one interface (default microsecond timestamps),
/// one millisecond apart.
pub fn write_pcapng(path: &Path, packets: &[Packet]) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let mut writer = PcapNgWriter::new(file).expect("write pcapng section");
    let idb = InterfaceDescriptionBlock { linktype: DataLink::ETHERNET, snaplen: 0, options: vec![] };
    writer.write_pcapng_block(idb).expect("write pcapng interface");
    for (i, packet) in packets.iter().enumerate() {
        let frame = packet.frame();
        // pcap-file writes the timestamp's nanosecond count as the raw value, which readers
        // take in the interface's unit, microseconds.
        let raw = u64::try_from(time(i).as_micros()).expect("timestamp");
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(raw),
            original_len: u32::try_from(frame.len()).expect("frame length"),
            data: frame.into(),
            options: vec![],
        };
        writer.write_pcapng_block(epb).expect("write pcapng packet");
    }
}

/// Writes `packets` as an Ethernet pcap, one millisecond apart.
pub fn write_pcap(path: &Path, packets: &[Packet]) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let header = PcapHeader { datalink: DataLink::ETHERNET, ..PcapHeader::default() };
    let mut writer = PcapWriter::with_header(file, header).expect("write pcap header");
    for (i, packet) in packets.iter().enumerate() {
        let frame = packet.frame();
        let len = u32::try_from(frame.len()).expect("frame length");
        writer.write_packet(&PcapPacket::new(time(i), len, &frame)).expect("write pcap packet");
    }
}
