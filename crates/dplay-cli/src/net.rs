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
    let (transport, payload) = match proto {
        IPPROTO_UDP => {
            let len = usize::from(be16(body, 4)?);
            (Transport::Udp, body.get(8..len.clamp(8, body.len()))?)
        }
        IPPROTO_TCP => {
            let offset = usize::from(body.get(12)? >> 4) * 4;
            (Transport::Tcp, body.get(offset.max(20)..)?)
        }
        _ => return None,
    };
    Some(Segment { src: SocketAddr::new(src, sport), dst: SocketAddr::new(dst, dport), transport, payload })
}
