//! Messages as a Windows DirectPlay 4 peer writes them, byte by byte in MC-DPL4CS 2.2's
//! layouts (Wine's `dplayx` and its tests for the Windows facts: address 0 in every
//! SOCKADDR_IN, dialect 14), for scripted peers on the sim.

use uuid::Uuid;

/// DWORDs, little-endian, back to back.
pub fn dwords(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The DWORD at `at`, little-endian (0 past the end).
pub fn dword(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).and_then(|d| d.try_into().ok()).map_or(0, u32::from_le_bytes)
}

/// A length as a DWORD.
pub fn len32(b: &[u8]) -> u32 {
    u32::try_from(b.len()).unwrap_or(u32::MAX)
}

/// A SOCKADDR_IN as Windows writes it in headers and SPData (MC-DPL4CS 2.2.6, 2.2.2):
/// AF_INET, the port big-endian, address 0 (the sender's), zero padding.
pub fn sock_addr(port: u16) -> Vec<u8> {
    [&[2, 0][..], &port.to_be_bytes(), &[0; 12]].concat()
}

/// A string as Windows sends it: UTF-16LE with its NUL.
pub fn utf16z(s: &str) -> Vec<u8> {
    s.encode_utf16().chain([0]).flat_map(u16::to_le_bytes).collect()
}

/// A system message (MC-DPL4CS 2.2.6, 2.2.7): size and token 0xFAB, the SockAddr naming
/// the sender's listener `port`, 'play', `command`, dialect 14, then `body`.
pub fn message(port: u16, command: u16, body: &[u8]) -> Vec<u8> {
    let size = 28 + len32(body);
    [
        &(0xFAB0_0000 | size).to_le_bytes()[..],
        &sock_addr(port),
        b"play",
        &command.to_le_bytes(),
        &14u16.to_le_bytes(),
        body,
    ]
    .concat()
}

/// A guaranteed player message on a stream (MC-DPL4CS 2.2.45): size and token, the SockAddr
/// of the listener `port`, then idFrom, idTo and the data.
pub fn player_message_tcp(port: u16, from: u32, to: u32, data: &[u8]) -> Vec<u8> {
    let size = 28 + len32(data);
    [dwords(&[0xFAB0_0000 | size]), sock_addr(port), dwords(&[from, to]), data.to_vec()].concat()
}

/// A non-guaranteed player message as a datagram (MC-DPL4CS 2.2.45): idFrom, idTo, data.
pub fn player_message_udp(from: u32, to: u32, data: &[u8]) -> Vec<u8> {
    [dwords(&[from, to]), data.to_vec()].concat()
}

/// The command of message `m` (offset 24), when it has the 'play' signature.
pub fn command(m: &[u8]) -> Option<u16> {
    let c: [u8; 2] = m.get(24..26)?.try_into().ok()?;
    (m.get(20..24) == Some(b"play")).then(|| u16::from_le_bytes(c))
}

/// Winsock SPData (MC-DPL4CS 2.2.2): the listener's and the game socket's SOCKADDR_INs.
pub fn sp_data(stream_port: u16, datagram_port: u16) -> Vec<u8> {
    [sock_addr(stream_port), sock_addr(datagram_port)].concat()
}

/// One DPLAYI_PACKEDPLAYER as Windows lays it out (MC-DPL4CS 2.2.2): Size (without the
/// PlayerIDs), Flags, PlayerID, the name, SPData and data lengths, NumberOfPlayers,
/// SystemPlayerID, FixedSize 48, PlayerVersion 14, ParentID, then ShortName, LongName,
/// SPData, PlayerData and PlayerIDs.
pub fn packed(flags: u32, id: u32, system: u32, short: &str, sp: &[u8], data: &[u8]) -> Vec<u8> {
    let short = if short.is_empty() { Vec::new() } else { utf16z(short) };
    let size = 48 + len32(&short) + len32(sp) + len32(data);
    let fixed = dwords(&[size, flags, id, len32(&short), 0, len32(sp), len32(data), 0, system, 48, 14, 0]);
    [fixed, short, sp.to_vec(), data.to_vec()].concat()
}

/// A DPSESSIONDESC2 (MC-DPL4CS 2.2.5) of `application` with `flags`, MaxPlayers 10 and
/// Reserved1 0xaabbccdd.
pub fn session_desc(flags: u32, application: Uuid) -> Vec<u8> {
    [
        dwords(&[80, flags]),
        application.to_bytes_le().to_vec(),
        application.to_bytes_le().to_vec(),
        dwords(&[10, 0, 0, 0, 0xaabb_ccdd, 0, 0, 0, 0, 0]),
    ]
    .concat()
}

/// ENUMPLAYERSREPLY (MC-DPL4CS 2.2.28) from the listener `port`: PlayerCount, GroupCount,
/// PlayerOffset, ShortcutCount (uninitialized in Windows, <9>: 0xCCCCCCCC),
/// DescriptionOffset, NameOffset, PasswordOffset 0, the description, the name and the
/// PACKEDPLAYERs. Offsets count from after the 20-byte SP header.
pub fn enum_players_reply(port: u16, desc: &[u8], name: &str, players: &[Vec<u8>]) -> Vec<u8> {
    let name = utf16z(name);
    let count = u32::try_from(players.len()).unwrap_or(u32::MAX);
    let head = dwords(&[count, 0, 36 + len32(desc) + len32(&name), 0xCCCC_CCCC, 36, 36 + len32(desc), 0]);
    message(port, 3, &[head, desc.to_vec(), name, players.concat()].concat())
}

/// REQUESTPLAYERREPLY (MC-DPL4CS 2.2.50): the ID, a zeroed security description and
/// results, 132 bytes in all.
pub fn request_player_reply(port: u16, id: u32) -> Vec<u8> {
    message(port, 7, &[dwords(&[id]), vec![0; 24], dwords(&[0, 0, 0]), vec![0; 64]].concat())
}

/// DELETEPLAYER (MC-DPL4CS 2.2.26) of `id`.
pub fn delete_player(port: u16, id: u32) -> Vec<u8> {
    message(port, 0x0B, &dwords(&[0, id, 0, 0, 0]))
}
