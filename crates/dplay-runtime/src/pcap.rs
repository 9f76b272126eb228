//! [`PcapTap`]: every datagram a runtime sends or receives, written as a pcap capture
//! (Ethernet, IPv4 or IPv6, UDP) that Wireshark and `dplay decode` open; TCP bytes become
//! synthesized TCP segments (the `tcp` module). The CLI's `--pcap` and `dpnet.dll`'s `DPNET_PCAP` use it.

mod tcp;

use std::fs::File;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};

use self::tcp::{Flows, TcpHeader};
use crate::{Direction, Tap};

/// The Ethernet addresses of the two ends: made up, locally administered, one per side.
const LOCAL_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const REMOTE_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
const UDP_HEADER: usize = 8;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// A [`Tap`] that writes a pcap file.
pub struct PcapTap {
    writer: PcapWriter<File>,
    flows: Flows,
}

impl PcapTap {
    /// Creates (or truncates) `path` and writes the capture's header.
    pub fn create(path: &Path) -> io::Result<Self> {
        let file = File::create(path)?;
        let header = PcapHeader { datalink: DataLink::ETHERNET, ..PcapHeader::default() };
        let writer = PcapWriter::with_header(file, header).map_err(io::Error::other)?;
        Ok(Self { writer, flows: Flows::default() })
    }

    fn write(&mut self, frame: Option<Vec<u8>>, len: usize) {
        let Some(frame) = frame else {
            tracing::warn!("a {len} byte payload is too large for a pcap frame; not recorded");
            return;
        };
        #[allow(clippy::disallowed_methods)] // the capture's timestamps are wall-clock time
        let timestamp = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let Ok(frame_len) = u32::try_from(frame.len()) else { return };
        let written = self.writer.write_packet(&PcapPacket::new(timestamp, frame_len, &frame));
        // Unbuffered, so a killed process still leaves a readable capture.
        if let Err(e) = written {
            tracing::warn!("cannot write the pcap file: {e}");
        }
    }
}

fn ends(
    direction: Direction,
    local: SocketAddr,
    remote: SocketAddr,
) -> (SocketAddr, SocketAddr, [u8; 6], [u8; 6]) {
    match direction {
        Direction::Sent => (local, remote, LOCAL_MAC, REMOTE_MAC),
        Direction::Received => (remote, local, REMOTE_MAC, LOCAL_MAC),
    }
}

/// A [`PcapTap`] that several runtimes write (`join`'s enumeration probe, then its session).
#[derive(Clone)]
pub struct SharedTap(Arc<Mutex<PcapTap>>);

impl SharedTap {
    /// `tap`, to share.
    pub fn new(tap: PcapTap) -> Self {
        Self(Arc::new(Mutex::new(tap)))
    }
}

impl Tap for SharedTap {
    fn datagram(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        if let Ok(mut tap) = self.0.lock() {
            tap.datagram(direction, local, remote, data);
        }
    }

    fn stream(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        if let Ok(mut tap) = self.0.lock() {
            tap.stream(direction, local, remote, data);
        }
    }
}

/// Our end of a socket bound to the unspecified address (0.0.0.0, ::) as a capture shows it:
/// loopback towards a loopback peer, else the first interface address of its family (the
/// socket does not say which one a datagram used).
fn concrete(local: SocketAddr, remote: SocketAddr) -> SocketAddr {
    if !local.ip().is_unspecified() {
        return local;
    }
    let ip = if remote.ip().is_loopback() {
        Some(if local.is_ipv4() {
            IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)
        } else {
            IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)
        })
    } else {
        // Asked once per family: a capture writes many datagrams.
        static V4: OnceLock<Option<IpAddr>> = OnceLock::new();
        static V6: OnceLock<Option<IpAddr>> = OnceLock::new();
        let first = || crate::interface_addrs(local.ip()).into_iter().find(|ip| !ip.is_loopback());
        *if local.is_ipv4() { &V4 } else { &V6 }.get_or_init(first)
    };
    ip.map_or(local, |ip| SocketAddr::new(ip, local.port()))
}

impl Tap for PcapTap {
    fn datagram(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        let (src, dst, src_mac, dst_mac) = ends(direction, concrete(local, remote), remote);
        let frame = udp(src, dst, data).and_then(|seg| frame(src, dst, src_mac, dst_mac, seg));
        self.write(frame, data.len());
    }

    /// One segment per DirectPlay 4 message (dissectors see whole messages), after a
    /// synthesized handshake the first time a connection is seen.
    fn stream(&mut self, direction: Direction, local: SocketAddr, remote: SocketAddr, data: &[u8]) {
        let (src, dst, src_mac, dst_mac) = ends(direction, concrete(local, remote), remote);
        for (from, header, payload) in self.flows.segments(src, dst, data) {
            let (smac, dmac) = if from == src { (src_mac, dst_mac) } else { (dst_mac, src_mac) };
            let to = if from == src { dst } else { src };
            let frame = tcp(from, to, header, &payload).and_then(|seg| frame(from, to, smac, dmac, seg));
            self.write(frame, payload.len());
        }
    }
}

/// The UDP header (checksum computed) around `data`.
fn udp(src: SocketAddr, dst: SocketAddr, data: &[u8]) -> Option<(u8, Vec<u8>)> {
    let udp_len = u16::try_from(UDP_HEADER + data.len()).ok()?;
    let mut udp = Vec::with_capacity(usize::from(udp_len));
    udp.extend_from_slice(&src.port().to_be_bytes());
    udp.extend_from_slice(&dst.port().to_be_bytes());
    udp.extend_from_slice(&udp_len.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(data);
    let sum = match checksum(sum_words(0, &pseudo_header(src, dst, IPPROTO_UDP, udp.len())), &udp) {
        0 => 0xFFFF,
        s => s,
    };
    udp.get_mut(6..8)?.copy_from_slice(&sum.to_be_bytes());
    Some((IPPROTO_UDP, udp))
}

/// A TCP segment (20-byte header, checksum computed) carrying `data`.
fn tcp(src: SocketAddr, dst: SocketAddr, h: TcpHeader, data: &[u8]) -> Option<(u8, Vec<u8>)> {
    let mut seg = Vec::with_capacity(20 + data.len());
    seg.extend_from_slice(&src.port().to_be_bytes());
    seg.extend_from_slice(&dst.port().to_be_bytes());
    seg.extend_from_slice(&h.seq.to_be_bytes());
    seg.extend_from_slice(&h.ack.to_be_bytes());
    seg.extend_from_slice(&[0x50, h.flags, 0xFF, 0xFF, 0, 0, 0, 0]);
    seg.extend_from_slice(data);
    let sum = checksum(sum_words(0, &pseudo_header(src, dst, IPPROTO_TCP, seg.len())), &seg);
    seg.get_mut(16..18)?.copy_from_slice(&sum.to_be_bytes());
    Some((IPPROTO_TCP, seg))
}

/// The IPv4 or IPv6 pseudo-header of a transport checksum.
fn pseudo_header(src: SocketAddr, dst: SocketAddr, proto: u8, len: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(40);
    match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
            p.extend_from_slice(&[0, proto]);
            p.extend_from_slice(&u16::try_from(len).unwrap_or(0).to_be_bytes());
        }
        (s, d) => {
            p.extend_from_slice(&v6(s));
            p.extend_from_slice(&v6(d));
            p.extend_from_slice(&u32::try_from(len).unwrap_or(0).to_be_bytes());
            p.extend_from_slice(&[0, 0, 0, proto]);
        }
    }
    p
}

/// Ethernet + IP around a transport segment, with correct lengths and IPv4 header checksum.
fn frame(
    src: SocketAddr,
    dst: SocketAddr,
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    (proto, seg): (u8, Vec<u8>),
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(14 + 40 + seg.len());
    out.extend_from_slice(&dst_mac);
    out.extend_from_slice(&src_mac);
    match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = u16::try_from(20 + seg.len()).ok()?;
            out.extend_from_slice(&[0x08, 0x00]);
            let mut ip = vec![0x45, 0];
            ip.extend_from_slice(&total.to_be_bytes());
            ip.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
            ip.extend_from_slice(&s.octets());
            ip.extend_from_slice(&d.octets());
            let sum = checksum(0, &ip).to_be_bytes();
            ip.get_mut(10..12)?.copy_from_slice(&sum);
            out.extend_from_slice(&ip);
        }
        (s, d) => {
            out.extend_from_slice(&[0x86, 0xDD]);
            out.extend_from_slice(&[0x60, 0, 0, 0]);
            out.extend_from_slice(&u16::try_from(seg.len()).ok()?.to_be_bytes());
            out.extend_from_slice(&[proto, 64]);
            out.extend_from_slice(&v6(s));
            out.extend_from_slice(&v6(d));
        }
    }
    out.extend_from_slice(&seg);
    Some(out)
}

fn v6(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// The one's-complement sum of big-endian 16-bit words (RFC 1071), added to `start`.
fn sum_words(start: u32, bytes: &[u8]) -> u32 {
    bytes.chunks(2).fold(start, |acc, w| {
        let word = match w {
            [a, b] => u16::from_be_bytes([*a, *b]),
            [a] => u16::from_be_bytes([*a, 0]),
            _ => 0,
        };
        acc + u32::from(word)
    })
}

/// The Internet checksum (RFC 1071) of `bytes`, continuing a partial sum.
fn checksum(start: u32, bytes: &[u8]) -> u16 {
    let mut sum = sum_words(start, bytes);
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !u16::try_from(sum).unwrap_or(0xFFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame carries the datagram at offset 42 with consistent IPv4 and UDP lengths and a
    /// valid IPv4 header checksum.
    #[test]
    fn ipv4_frame_has_correct_lengths_and_checksum() {
        let src: SocketAddr = "127.0.0.1:2302".parse().unwrap();
        let dst: SocketAddr = "127.0.0.1:6073".parse().unwrap();
        let f = frame(src, dst, LOCAL_MAC, REMOTE_MAC, udp(src, dst, b"hello").unwrap()).unwrap();
        assert_eq!(f.len(), 14 + 20 + 8 + 5);
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 20 + 8 + 5);
        assert_eq!(checksum(0, &f[14..34]), 0, "a header with its checksum sums to zero");
        assert_eq!(u16::from_be_bytes([f[34], f[35]]), 2302);
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), 6073);
        assert_eq!(u16::from_be_bytes([f[38], f[39]]), 8 + 5);
        assert_eq!(&f[42..], b"hello");
    }

    /// A written capture reads back with both datagrams intact.
    #[test]
    fn capture_reads_back() {
        let dir = std::env::temp_dir().join(format!("dplay-pcap-tap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.pcap");
        let local: SocketAddr = "127.0.0.1:6073".parse().unwrap();
        let remote: SocketAddr = "127.0.0.1:2302".parse().unwrap();
        let mut tap = PcapTap::create(&path).unwrap();
        tap.datagram(Direction::Sent, local, remote, &[0x88, 0x01, 0x00, 0x00]);
        tap.datagram(Direction::Received, local, remote, &[0x80, 0x02]);
        drop(tap);
        let mut reader = pcap_file::pcap::PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.header().datalink, DataLink::ETHERNET);
        let first = reader.next_packet().unwrap().unwrap();
        assert_eq!(&first.data[42..], [0x88, 0x01, 0x00, 0x00]);
        let second = reader.next_packet().unwrap().unwrap();
        assert_eq!(&second.data[42..], [0x80, 0x02]);
        assert!(reader.next_packet().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
