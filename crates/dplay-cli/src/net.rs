//! From a captured link-layer frame to a UDP or TCP payload with its addresses.
//!
//! Handles Ethernet (with 802.1Q tags), Linux cooked capture v1 and v2, BSD loopback and raw IP
//! link types; IPv4 (unfragmented) and IPv6 (without extension headers); UDP and TCP. Anything
//! else yields `None`: a capture holds much that is not DirectPlay.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use pcap_file::DataLink;

/// The transport a payload came over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Udp,
    Tcp,
}

impl Transport {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Udp => "udp",
            Self::Tcp => "tcp",
        }
    }
}

/// A transport payload and where it went.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment<'a> {
    pub(crate) src: SocketAddr,
    pub(crate) dst: SocketAddr,
    pub(crate) transport: Transport,
    /// TCP's sequence number of the first payload byte; 0 for UDP.
    pub(crate) seq: u32,
    pub(crate) payload: &'a [u8],
}

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86DD;
const ETHERTYPE_VLAN: u16 = 0x8100;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Finds the UDP or TCP payload in one captured frame.
pub(crate) fn segment(link: DataLink, frame: &[u8]) -> Option<Segment<'_>> {
    match link {
        DataLink::ETHERNET => {
            let mut at = 12;
            let mut ethertype = be16(frame, at)?;
            while ethertype == ETHERTYPE_VLAN {
                at += 4;
                ethertype = be16(frame, at)?;
            }
            by_ethertype(ethertype, frame.get(at + 2..)?)
        }
        DataLink::LINUX_SLL => by_ethertype(be16(frame, 14)?, frame.get(16..)?),
        DataLink::LINUX_SLL2 => by_ethertype(be16(frame, 0)?, frame.get(20..)?),
        DataLink::NULL | DataLink::LOOP => ip(frame.get(4..)?),
        DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => ip(frame),
        _ => None,
    }
}

fn by_ethertype(ethertype: u16, packet: &[u8]) -> Option<Segment<'_>> {
    match ethertype {
        ETHERTYPE_IPV4 => ipv4(packet),
        ETHERTYPE_IPV6 => ipv6(packet),
        _ => None,
    }
}

fn ip(packet: &[u8]) -> Option<Segment<'_>> {
    match packet.first()? >> 4 {
        4 => ipv4(packet),
        6 => ipv6(packet),
        _ => None,
    }
}

fn ipv4(p: &[u8]) -> Option<Segment<'_>> {
    let ihl = usize::from(p.first()? & 0x0F) * 4;
    let total = usize::from(be16(p, 2)?);
    let fragment = be16(p, 6)? & 0x3FFF;
    if ihl < 20 || total < ihl || fragment != 0 {
        return None;
    }
    let src = Ipv4Addr::from(<[u8; 4]>::try_from(p.get(12..16)?).ok()?);
    let dst = Ipv4Addr::from(<[u8; 4]>::try_from(p.get(16..20)?).ok()?);
    // The total length trims Ethernet padding; a truncated capture keeps what it has.
    let body = p.get(ihl..total.min(p.len()))?;
    transport(*p.get(9)?, src.into(), dst.into(), body)
}

fn ipv6(p: &[u8]) -> Option<Segment<'_>> {
    let len = usize::from(be16(p, 4)?);
    let src = Ipv6Addr::from(<[u8; 16]>::try_from(p.get(8..24)?).ok()?);
    let dst = Ipv6Addr::from(<[u8; 16]>::try_from(p.get(24..40)?).ok()?);
    let body = p.get(40..(40 + len).min(p.len()))?;
    transport(*p.get(6)?, src.into(), dst.into(), body)
}

fn transport(proto: u8, src: IpAddr, dst: IpAddr, body: &[u8]) -> Option<Segment<'_>> {
    let sport = be16(body, 0)?;
    let dport = be16(body, 2)?;
    let (transport, seq, payload) = match proto {
        IPPROTO_UDP => {
            let len = usize::from(be16(body, 4)?);
            (Transport::Udp, 0, body.get(8..len.clamp(8, body.len()))?)
        }
        IPPROTO_TCP => {
            let offset = usize::from(body.get(12)? >> 4) * 4;
            let seq = u32::from_be_bytes(<[u8; 4]>::try_from(body.get(4..8)?).ok()?);
            (Transport::Tcp, seq, body.get(offset.max(20)..)?)
        }
        _ => return None,
    };
    Some(Segment {
        src: SocketAddr::new(src, sport),
        dst: SocketAddr::new(dst, dport),
        transport,
        seq,
        payload,
    })
}

#[cfg(test)]
mod tests {
    use dplay_tests::pcap::Packet;

    use super::*;

    fn udp() -> (Packet, Vec<u8>) {
        let p = Packet::udp("10.0.0.1:2302", "10.0.0.2:6073", b"\x3F\x02\x00\x00");
        let frame = p.frame();
        (p, frame)
    }

    #[track_caller]
    fn check(link: DataLink, frame: &[u8], p: &Packet) {
        let seg = segment(link, frame).expect("a UDP segment");
        assert_eq!(seg.src, SocketAddr::V4(p.src));
        assert_eq!(seg.dst, SocketAddr::V4(p.dst));
        assert_eq!(seg.transport, Transport::Udp);
        assert_eq!(seg.payload, p.payload);
    }

    #[test]
    fn link_types() {
        let (p, eth) = udp();
        check(DataLink::ETHERNET, &eth, &p);
        let ip = &eth[14..];
        check(DataLink::RAW, ip, &p);
        check(DataLink::IPV4, ip, &p);
        check(DataLink::NULL, &[&[2, 0, 0, 0], ip].concat(), &p);
        let sll = [&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00][..], ip].concat();
        check(DataLink::LINUX_SLL, &sll, &p);
        let sll2 = [&[0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0][..], ip].concat();
        check(DataLink::LINUX_SLL2, &sll2, &p);
        let vlan = [&eth[..12], &[0x81, 0x00, 0x00, 0x05], &eth[12..]].concat();
        check(DataLink::ETHERNET, &vlan, &p);
        let padded = [&eth[..], &[0; 10]].concat();
        check(DataLink::ETHERNET, &padded, &p);
    }

    #[test]
    fn ipv6_udp() {
        let payload = b"\x80\x06\x01\x00\x03\x06\x00\x00\x07\x5D\x11\x00";
        let mut ip = vec![0x60, 0, 0, 0, 0, 20, 17, 64];
        ip.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        ip.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        ip.extend_from_slice(&[0x08, 0xFE, 0x17, 0xB9, 0, 20, 0, 0]);
        ip.extend_from_slice(payload);
        let seg = segment(DataLink::RAW, &ip).expect("a UDP segment");
        assert_eq!(seg.src, "[::1]:2302".parse().unwrap());
        assert_eq!(seg.dst, "[::1]:6073".parse().unwrap());
        assert_eq!(seg.payload, payload);
    }

    #[test]
    fn not_udp_or_tcp() {
        let (_, mut eth) = udp();
        eth[23] = 1; // ICMP
        assert!(segment(DataLink::ETHERNET, &eth).is_none());
        eth[12] = 0x86; // ARP-ish ethertype
        assert!(segment(DataLink::ETHERNET, &eth).is_none());
        assert!(segment(DataLink::ETHERNET, &eth[..10]).is_none());
        assert!(segment(DataLink::IEEE802_11, &eth).is_none());
    }
}
