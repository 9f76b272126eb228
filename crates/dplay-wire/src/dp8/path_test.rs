//! The NAT locator's session packets: PATH_TEST (= SESS_PATH_TEST), NAT_RESOLVER_QUERY and
//! NAT_RESOLVER_RESPONSE (MC-DPLNAT 2.2; MS-DPDX 2.2.6, 2.2.38).
//!
//! Like the enumeration messages they are led by a zero byte, then a command byte: 0x05, 0x06
//! or 0x07 (INDEX B.1). A PATH_TEST carries a key both peers derive from the joining peer's and
//! the existing peer's DPNIDs and the session's GUIDs ([`path_test_key`]), so the existing peer
//! can match it to the connect attempt it was instructed to make (MC-DPLNAT 3.1.3, 3.1.5).

use std::net::Ipv4Addr;

use sha1::{Digest, Sha1};
use uuid::Uuid;
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::WireError;
use crate::codec::{Reader, Wire, Writer};
use crate::dp8::enumeration::{LEAD_BYTE, read_command};
use crate::text::Blob;

/// `PATH_TEST_DATA_KIND`: `bCommand` of a PATH_TEST (MC-DPLNAT 2.2.2; MS-DPDX 2.2.6).
pub const PATH_TEST_DATA_KIND: u8 = 0x05;
/// `NAT_RESOLVER_QUERY_DATA_KIND`: `bCommand` of a NAT_RESOLVER_QUERY (MC-DPLNAT 2.2.3).
pub const NAT_RESOLVER_QUERY_DATA_KIND: u8 = 0x06;
/// `NAT_RESOLVER_RESPONSE_DATA_KIND`: `bCommand` of a NAT_RESOLVER_RESPONSE (MC-DPLNAT 2.2.4).
pub const NAT_RESOLVER_RESPONSE_DATA_KIND: u8 = 0x07;

/// PATHTESTKEYDATA: the 40 bytes hashed into a path-test key; never sent (MC-DPLNAT 2.2.1;
/// MS-DPDX 2.2.38).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct PathTestKeyData {
    /// `dpnidSender`: the new (joining) peer.
    dpnid_sender: U32,
    /// `dpnidTarget`: the existing peer.
    dpnid_target: U32,
    /// `guidApplication`, in the Windows layout.
    guid_application: [u8; 16],
    /// `guidInstance`, in the Windows layout.
    guid_instance: [u8; 16],
}
const _: () = assert!(size_of::<PathTestKeyData>() == 40);

/// The path-test key `ullKey`: the first 8 bytes of SHA-1(PATHTESTKEYDATA) read as a
/// little-endian u64, so that it goes on the wire as those same 8 bytes (MC-DPLNAT 2.2.1,
/// 3.1.3; MS-DPDX 2.2.38, 3.1.3).
///
/// `dpnid_sender` is the new peer's DPNID and `dpnid_target` the existing peer's, on both
/// sides. `application` and `instance` are the session's application and instance GUIDs.
pub fn path_test_key(dpnid_sender: u32, dpnid_target: u32, application: &Uuid, instance: &Uuid) -> u64 {
    let data = PathTestKeyData {
        dpnid_sender: dpnid_sender.into(),
        dpnid_target: dpnid_target.into(),
        guid_application: application.to_bytes_le(),
        guid_instance: instance.to_bytes_le(),
    };
    let digest = Sha1::digest(data.as_bytes());
    u64::from_le_bytes(digest.first_chunk::<8>().copied().unwrap_or_default())
}

/// The 12 bytes of a PATH_TEST (MC-DPLNAT 2.2.2; MS-DPDX 2.2.6).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawPathTest {
    b_zero: u8,
    b_command: u8,
    w_message_id: U16,
    ull_key: U64,
}
const _: () = assert!(size_of::<RawPathTest>() == 12);

/// PATH_TEST (MC-DPLNAT 2.2.2), which MS-DPDX 2.2.6 calls SESS_PATH_TEST: sent by a joining
/// peer to an existing peer, from the port that will accept the existing peer's connect, to open
/// a NAT or firewall mapping. Exactly 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct PathTest {
    /// `wMessageID` (MS-DPDX `wMsgID`): any value, SHOULD change per retry, ignored on receipt.
    pub msg_id: u16,
    /// `ullKey` (MS-DPDX `Key`): see [`path_test_key`].
    pub key: u64,
}

impl Wire for PathTest {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        read_command(bytes, PATH_TEST_DATA_KIND, "PATH_TEST bCommand")?;
        let mut r = Reader::new(bytes);
        let raw: &RawPathTest = r.layout("PATH_TEST")?;
        r.finish("PATH_TEST")?;
        Ok(Self { msg_id: raw.w_message_id.get(), key: raw.ull_key.get() })
    }

    fn encoded_len(&self) -> usize {
        size_of::<RawPathTest>()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        w.layout(&RawPathTest {
            b_zero: LEAD_BYTE,
            b_command: PATH_TEST_DATA_KIND,
            w_message_id: self.msg_id.into(),
            ull_key: self.key.into(),
        });
        w.finish()
    }
}

/// NAT_RESOLVER_QUERY: a host asks a resolver server for its public address (MC-DPLNAT 2.2.3).
/// 8 bytes, then optional `UserData` to the end of the datagram.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NatResolverQuery {
    /// `wMessageID`: echoed by the response; SHOULD change per retry.
    pub message_id: u16,
    /// `dwSourceID`: echoed by the response.
    pub source_id: u32,
    /// `UserData`: application-specific query payload; empty when omitted.
    pub user_data: Blob,
}

impl Wire for NatResolverQuery {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = read_command(bytes, NAT_RESOLVER_QUERY_DATA_KIND, "NAT_RESOLVER_QUERY bCommand")?;
        let message_id = r.u16("wMessageID")?;
        let source_id = r.u32("dwSourceID")?;
        Ok(Self { message_id, source_id, user_data: Blob::new(r.rest()) })
    }

    fn encoded_len(&self) -> usize {
        8 + self.user_data.len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        w.u8(LEAD_BYTE);
        w.u8(NAT_RESOLVER_QUERY_DATA_KIND);
        w.u16(self.message_id);
        w.u32(self.source_id);
        w.bytes(&self.user_data);
        w.finish()
    }
}

/// NAT_RESOLVER_RESPONSE: the query's source address as the resolver saw it (MC-DPLNAT 2.2.4).
/// Exactly 14 bytes.
///
/// On the wire, `dwIPv4Address` is the address in network order XOR `dwSourceID`, and `wPort`
/// the port in network order XOR `wMessageID`, each XOR taken over the echo fields' wire bytes
/// (verified: MC-DPLNAT 4.1). This value holds the plain address and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct NatResolverResponse {
    /// `wMessageIDEcho`: the query's `wMessageID`.
    pub message_id_echo: u16,
    /// `dwSourceIDEcho`: the query's `dwSourceID`.
    pub source_id_echo: u32,
    /// The query's public source address, from `dwIPv4Address` with the XOR undone.
    pub address: Ipv4Addr,
    /// The query's public source port, from `wPort` with the XOR undone.
    pub port: u16,
}

impl NatResolverResponse {
    /// `dwIPv4Address` as its four wire bytes.
    fn wire_address(&self) -> [u8; 4] {
        xor(self.address.octets(), self.source_id_echo.to_le_bytes())
    }

    /// `wPort` as its two wire bytes.
    fn wire_port(&self) -> [u8; 2] {
        xor(self.port.to_be_bytes(), self.message_id_echo.to_le_bytes())
    }
}

fn xor<const N: usize>(mut a: [u8; N], b: [u8; N]) -> [u8; N] {
    for (x, y) in a.iter_mut().zip(b) {
        *x ^= y;
    }
    a
}

impl Wire for NatResolverResponse {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = read_command(bytes, NAT_RESOLVER_RESPONSE_DATA_KIND, "NAT_RESOLVER_RESPONSE bCommand")?;
        let message_id_echo = r.u16("wMessageIDEcho")?;
        let source_id_echo = r.u32("dwSourceIDEcho")?;
        let address = xor(r.array("dwIPv4Address")?, source_id_echo.to_le_bytes());
        let port = xor(r.array("wPort")?, message_id_echo.to_le_bytes());
        r.finish("NAT_RESOLVER_RESPONSE")?;
        Ok(Self { message_id_echo, source_id_echo, address: address.into(), port: u16::from_be_bytes(port) })
    }

    fn encoded_len(&self) -> usize {
        14
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        w.u8(LEAD_BYTE);
        w.u8(NAT_RESOLVER_RESPONSE_DATA_KIND);
        w.u16(self.message_id_echo);
        w.u32(self.source_id_echo);
        w.bytes(&self.wire_address());
        w.bytes(&self.wire_port());
        w.finish()
    }
}

/// A NAT locator message: what a datagram led by 0x00 0x05, 0x00 0x06 or 0x00 0x07 holds
/// (MC-DPLNAT 2.2).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "message")]
pub enum NatMessage {
    /// PATH_TEST (0x05).
    PathTest(PathTest),
    /// NAT_RESOLVER_QUERY (0x06).
    NatResolverQuery(NatResolverQuery),
    /// NAT_RESOLVER_RESPONSE (0x07).
    NatResolverResponse(NatResolverResponse),
}

impl NatMessage {
    /// The message name as MC-DPLNAT spells it (MS-DPDX calls PATH_TEST SESS_PATH_TEST).
    pub fn name(&self) -> &'static str {
        match self {
            Self::PathTest(_) => "PATH_TEST",
            Self::NatResolverQuery(_) => "NAT_RESOLVER_QUERY",
            Self::NatResolverResponse(_) => "NAT_RESOLVER_RESPONSE",
        }
    }
}

impl Wire for NatMessage {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        match bytes.get(..2) {
            Some([LEAD_BYTE, NAT_RESOLVER_QUERY_DATA_KIND]) => {
                NatResolverQuery::parse(bytes).map(Self::NatResolverQuery)
            }
            Some([LEAD_BYTE, NAT_RESOLVER_RESPONSE_DATA_KIND]) => {
                NatResolverResponse::parse(bytes).map(Self::NatResolverResponse)
            }
            Some([LEAD_BYTE, other]) if *other != PATH_TEST_DATA_KIND => {
                Err(WireError::Unknown { what: "NAT locator bCommand", value: (*other).into() })
            }
            _ => PathTest::parse(bytes).map(Self::PathTest),
        }
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::PathTest(m) => m.encoded_len(),
            Self::NatResolverQuery(m) => m.encoded_len(),
            Self::NatResolverResponse(m) => m.encoded_len(),
        }
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        match self {
            Self::PathTest(m) => m.emit(buf),
            Self::NatResolverQuery(m) => m.emit(buf),
            Self::NatResolverResponse(m) => m.emit(buf),
        }
    }
}

#[cfg(test)]
mod tests;
