//! DN_ALTERNATE_ADDRESS: extra IPv4/IPv6 addresses a joiner offers (MC-DPL8CS 2.2.9, 2.2.10;
//! MS-DPDX 2.2.35, 2.2.36).
//!
//! Records sit back to back in the `alternateAddressData` field of
//! DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO_EX, at most 12 of them (MC-DPL8CS 2.2.1.2). Each is
//! `bSize` (not counting itself), `bFamily`, `wPort`, then the address. The port and the
//! address are big-endian bytes, as in a sockaddr: the specs' prose says otherwise, but their
//! own worked value and the MC-DPL8CS 4 bytes (`07 02 08 FE 41 34 EF 3D` = port 2302,
//! 65.52.239.61) are big-endian (INDEX F-12; docs/decisions.md).

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::WireError;
use crate::codec::{Reader, Writer};

/// `bFamily` of an IPv4 record (`AF_INET`).
pub const FAMILY_IPV4: u8 = 0x02;
/// `bFamily` of an IPv6 record (`AF_INET6` as Windows numbers it).
pub const FAMILY_IPV6: u8 = 0x17;
/// `bSize` of an IPv4 record: family, port and 4 address bytes.
pub const SIZE_IPV4: u8 = 7;
/// `bSize` of an IPv6 record: family, port and 16 address bytes.
pub const SIZE_IPV6: u8 = 19;
/// The most records one message may carry (MC-DPL8CS 2.2.1.2).
pub const MAX_ALTERNATE_ADDRESSES: usize = 12;

/// One DN_ALTERNATE_ADDRESS record (MC-DPL8CS 2.2.9 IPv4, 2.2.10 IPv6).
///
/// IPv6 flow information and scope are not carried: addresses built here have them at 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct AlternateAddress(pub SocketAddr);

impl AlternateAddress {
    /// Bytes on the wire, `bSize` included: 8 for IPv4, 20 for IPv6.
    pub fn wire_len(&self) -> usize {
        match self.0 {
            SocketAddr::V4(_) => 1 + usize::from(SIZE_IPV4),
            SocketAddr::V6(_) => 1 + usize::from(SIZE_IPV6),
        }
    }

    /// Reads one record; `bSize` must match `bFamily`.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.pos();
        let size = r.u8("bSize")?;
        let family = r.u8("bFamily")?;
        let port = r.u16_be("wPort")?;
        let bad = |field, value: u8, reason| WireError::InvalidValue {
            field,
            offset: at,
            value: value.into(),
            reason,
        };
        match (family, size) {
            (FAMILY_IPV4, SIZE_IPV4) => {
                let ip = Ipv4Addr::from(r.array::<4>("dwAddrIn")?);
                Ok(Self(SocketAddr::V4(SocketAddrV4::new(ip, port))))
            }
            (FAMILY_IPV6, SIZE_IPV6) => {
                let ip = Ipv6Addr::from(r.array::<16>("dwAddrIn")?);
                Ok(Self(SocketAddr::V6(SocketAddrV6::new(ip, port, 0, 0))))
            }
            (FAMILY_IPV4 | FAMILY_IPV6, _) => {
                Err(bad("bSize", size, "7 for IPv4, 19 for IPv6 (MC-DPL8CS 2.2.9, 2.2.10)"))
            }
            _ => Err(bad("bFamily", family, "0x02 (IPv4) or 0x17 (IPv6) (MC-DPL8CS 2.2.9, 2.2.10)")),
        }
    }

    /// Writes the record.
    pub fn write(&self, w: &mut Writer<'_>) {
        match self.0 {
            SocketAddr::V4(a) => {
                w.u8(SIZE_IPV4);
                w.u8(FAMILY_IPV4);
                w.u16_be(a.port());
                w.bytes(&a.ip().octets());
            }
            SocketAddr::V6(a) => {
                w.u8(SIZE_IPV6);
                w.u8(FAMILY_IPV6);
                w.u16_be(a.port());
                w.bytes(&a.ip().octets());
            }
        }
    }

    /// Parses a whole `alternateAddressData` field: records back to back, at most 12.
    pub fn parse_list(field: &[u8]) -> Result<Vec<Self>, WireError> {
        let mut r = Reader::new(field);
        let mut out = Vec::new();
        while r.remaining() > 0 {
            if out.len() == MAX_ALTERNATE_ADDRESSES {
                return Err(too_many(r.pos(), out.len() + 1));
            }
            out.push(Self::read(&mut r)?);
        }
        Ok(out)
    }

    /// Bytes of a list on the wire.
    pub fn list_len(list: &[Self]) -> usize {
        list.iter().map(Self::wire_len).sum()
    }

    /// Writes a list; fails if it has more than 12 records.
    pub fn write_list(list: &[Self], w: &mut Writer<'_>) -> Result<(), WireError> {
        if list.len() > MAX_ALTERNATE_ADDRESSES {
            return Err(WireError::Unencodable {
                field: "alternateAddressData",
                reason: "at most 12 DN_ALTERNATE_ADDRESS records (MC-DPL8CS 2.2.1.2)",
            });
        }
        for a in list {
            a.write(w);
        }
        Ok(())
    }
}

fn too_many(offset: usize, count: usize) -> WireError {
    WireError::InvalidValue {
        field: "alternateAddressData",
        offset,
        value: count as u64,
        reason: "at most 12 DN_ALTERNATE_ADDRESS records (MC-DPL8CS 2.2.1.2)",
    }
}

impl From<SocketAddr> for AlternateAddress {
    fn from(a: SocketAddr) -> Self {
        Self(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::bytes;

    fn emit(list: &[AlternateAddress]) -> Vec<u8> {
        let len = AlternateAddress::list_len(list);
        let mut buf = vec![0; len];
        let mut w = Writer::new(&mut buf, len).unwrap();
        AlternateAddress::write_list(list, &mut w).unwrap();
        w.finish().unwrap();
        buf
    }

    /// MC-DPL8CS 4: `07 02 08 FE 41 34 EF 3D` is 65.52.239.61 port 2302 (INDEX F-12).
    #[test]
    fn mc_dpl8cs_4_record() {
        let raw = bytes("07 02 08 FE 41 34 EF 3D");
        let list = AlternateAddress::parse_list(&raw).unwrap();
        assert_eq!(list, vec![AlternateAddress("65.52.239.61:2302".parse().unwrap())]);
        assert_eq!(emit(&list), raw);
    }

    /// MS-DPDX 2.2.35: port 2302 is `00001000 11111110`, 192.168.239.61 is
    /// `11000000 10101000 11101111 00111101`.
    #[test]
    fn ms_dpdx_2_2_35_worked_value() {
        let a = AlternateAddress("192.168.239.61:2302".parse().unwrap());
        assert_eq!(
            emit(&[a]),
            vec![7, 2, 0b0000_1000, 0b1111_1110, 0b1100_0000, 0b1010_1000, 0b1110_1111, 0b0011_1101]
        );
    }

    /// MS-DPDX 2.2.36.1: 2001:db8:85a3::8a2e:370:7334 is big-endian.
    #[test]
    fn ipv6_record() {
        let a = AlternateAddress("[2001:db8:85a3::8a2e:370:7334]:2302".parse().unwrap());
        let raw = emit(&[a]);
        assert_eq!(raw, bytes("13 17 08 FE 20 01 0D B8 85 A3 00 00 00 00 8A 2E 03 70 73 34"));
        assert_eq!(AlternateAddress::parse_list(&raw).unwrap(), vec![a]);
    }

    #[test]
    fn rejects_bad_records() {
        assert!(AlternateAddress::parse_list(&bytes("07 17 08 FE 41 34 EF 3D")).is_err());
        assert!(AlternateAddress::parse_list(&bytes("07 03 08 FE 41 34 EF 3D")).is_err());
        assert!(AlternateAddress::parse_list(&bytes("07 02 08 FE 41 34 EF")).is_err());
        let thirteen = bytes(&"07 02 08 FE 41 34 EF 3D ".repeat(13));
        assert!(AlternateAddress::parse_list(&thirteen).is_err());
        let twelve = bytes(&"07 02 08 FE 41 34 EF 3D ".repeat(12));
        assert_eq!(AlternateAddress::parse_list(&twelve).unwrap().len(), 12);
    }
}
