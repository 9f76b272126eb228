//! What a DirectPlay 4 message says about who sent it, and the fields the relay rewrites
//! (MC-DPL4CS 2.2.6 header, 2.2.2 SPData; offsets of INDEX D.17, from the signature).
//!
//! A member behind NAT is not known by its header alone: two members behind one NAT share
//! the public IP, and Windows writes 0.0.0.0 and its listener port in the header SockAddr
//! (docs/decisions.md, "Where to answer"), so two that use the same port write the same
//! header. The IDs a message names as its sender tell them apart ([`sender_id`]).

use std::ops::Range;

use dplay_session::dp4::table::SP_DATA_LEN;
use dplay_wire::dp4::header::{SIGNATURE, SIGNATURE_OFFSET, SockAddrIn};

/// DPSP_MSG_REQUESTPLAYERID (MC-DPL4CS 2.2.49).
const REQUEST_PLAYER_ID: u16 = 0x05;
/// Its Flags' SP bit: the system player, i.e. a new instance joining (2.2.49, 3.1.4.2).
const SYSTEM_PLAYER: u32 = 0x1;
/// DPSP_MSG_CREATEPLAYER, DPSP_MSG_CREATEPLAYERVERIFY (2.2.21, 2.2.22) and
/// DPSP_MSG_ADDFORWARDREQUEST (2.2.11): a PACKEDPLAYER at CreateOffset.
pub(crate) const CREATE_PLAYER: u16 = 0x08;
pub(crate) const CREATE_PLAYER_VERIFY: u16 = 0x38;
const ADD_FORWARD_REQUEST: u16 = 0x13;
/// DPSP_MSG_PING and DPSP_MSG_PINGREPLY (2.2.42, 2.2.43): IDFrom first in the body.
const PING: [u16; 2] = [0x16, 0x17];
/// Bytes of a message's start that [`sender_id`] and [`is_join`] read at most: the packed
/// player's SystemPlayerID of a CREATEPLAYER at CreateOffset 28 ends at 20 + 28 + 36.
pub(crate) const HINT_LEN: usize = SIGNATURE_OFFSET + 28 + 36;

fn dword(m: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(m.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn offset(m: &[u8], at: usize) -> Option<usize> {
    usize::try_from(dword(m, at)?).ok()
}

/// Whether `m` has the signature of a system message (MC-DPL4CS 2.2.6; a player message has
/// none, 2.2.45).
pub(crate) fn signed(m: &[u8]) -> bool {
    m.get(SIGNATURE_OFFSET..SIGNATURE_OFFSET + 4) == Some(&SIGNATURE[..])
}

/// A system message's command (2.2.6).
pub(crate) fn command(m: &[u8]) -> Option<u16> {
    signed(m).then(|| m.get(24..26)?.try_into().ok().map(u16::from_le_bytes))?
}

/// The listener port a full header's SockAddr names (2.2.6), if AF_INET.
pub(crate) fn header_port(m: &[u8]) -> Option<u16> {
    let addr = SockAddrIn::read(&mut dplay_wire::Reader::new(m.get(4..SIGNATURE_OFFSET)?)).ok()?;
    (addr.family == SockAddrIn::AF_INET).then(|| addr.addr.port())
}

/// The size a stream message's first DWORD gives (2.2.6: its low 20 bits).
pub(crate) fn stream_size(m: &[u8]) -> Option<usize> {
    usize::try_from(dword(m, 0)? & 0xF_FFFF).ok()
}

/// Whether `m` is a REQUESTPLAYERID for a system player: a new instance's join (3.1.4.2).
pub(crate) fn is_join(m: &[u8]) -> bool {
    command(m) == Some(REQUEST_PLAYER_ID) && dword(m, 28).is_some_and(|f| f & SYSTEM_PLAYER != 0)
}

/// The PACKEDPLAYER of a CREATEPLAYER, CREATEPLAYERVERIFY or ADDFORWARDREQUEST: where it starts.
fn packed_player(m: &[u8]) -> Option<usize> {
    let c = command(m)?;
    [CREATE_PLAYER, CREATE_PLAYER_VERIFY, ADD_FORWARD_REQUEST]
        .contains(&c)
        .then(|| SIGNATURE_OFFSET.checked_add(offset(m, 40)?))?
}

/// The player a CREATEPLAYER or CREATEPLAYERVERIFY creates and its system player (the
/// PACKEDPLAYER's PlayerID and SystemPlayerID, 2.2.2): how the relay learns which instance
/// owns an application player.
pub(crate) fn created_player(m: &[u8]) -> Option<(u32, u32)> {
    let packed = packed_player(m)?;
    Some((dword(m, packed + 8)?, dword(m, packed + 32)?))
}

/// The player message `m` says it comes from: a player message's idFrom (2.2.45; in a stream
/// message after the 20-byte prefix, in a headerless datagram first), a PING's or PINGREPLY's
/// IDFrom, or the SystemPlayerID of the player a CREATEPLAYER, CREATEPLAYERVERIFY or
/// ADDFORWARDREQUEST carries. A hint only: the caller checks it against what it saw.
pub(crate) fn sender_id(m: &[u8], headerless: bool) -> Option<u32> {
    if headerless {
        return dword(m, 0);
    }
    match command(m) {
        None => dword(m, SIGNATURE_OFFSET),
        Some(c) if PING.contains(&c) => dword(m, 28),
        Some(_) => dword(m, packed_player(m)? + 32),
    }
}

/// Where the Winsock SPData of the PACKEDPLAYER at CreateOffset sits (2.2.2, 2.2.21), when it
/// is Winsock's 32 bytes.
pub(crate) fn sp_data_range(m: &[u8]) -> Option<Range<usize>> {
    let packed = packed_player(m)?;
    let short = offset(m, packed + 12)?;
    let long = offset(m, packed + 16)?;
    if offset(m, packed + 20)? != SP_DATA_LEN {
        return None;
    }
    let fixed = offset(m, packed + 36)?;
    let at = packed.checked_add(fixed)?.checked_add(short)?.checked_add(long)?;
    let end = at.checked_add(SP_DATA_LEN)?;
    (end <= m.len()).then_some(at..end)
}

/// Sets the port of the header SockAddr of `m` to `port`, and, in a message that carries a
/// PACKEDPLAYER, both ports of its SPData, every other byte as sent: how the host's session
/// sees a member known at another port than its header names (docs/decisions.md, "Relay").
pub(crate) fn set_ports(m: &mut [u8], port: u16) {
    if header_port(m).is_some()
        && let Some(p) = m.get_mut(6..8)
    {
        p.copy_from_slice(&port.to_be_bytes());
    }
    if let Some(r) = sp_data_range(m)
        && let Some(sp) = m.get_mut(r)
    {
        // Two SOCKADDR_INs, stream then datagram: family (2), port (2, big-endian), ...
        for at in [2, 2 + SockAddrIn::LEN] {
            if let Some(p) = sp.get_mut(at..at + 2) {
                p.copy_from_slice(&port.to_be_bytes());
            }
        }
    }
}
