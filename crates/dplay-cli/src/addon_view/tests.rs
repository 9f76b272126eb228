//! Add-on packets found and shown (seed 004; FS-MULTIPLAYER.md 1.1-1.3).

use dplay_addon::packet::{ChangePlayerPlane, EngineType, ZString};

use super::*;

fn plane() -> Vec<u8> {
    Packet::ChangePlayerPlane(ChangePlayerPlane {
        engine_type: EngineType::ENGINE_TYPE_JET,
        aircraft_name: ZString::from_ascii_lossy("Boeing 737-400"),
    })
    .to_vec(Dialect::Fs98)
    .expect("emit")
}

#[test]
fn found_only_when_the_header_fits() {
    let bytes = plane();
    let found = find(&bytes, Dialect::Fs98).expect("a packet");
    assert_eq!(found.to_string(), "CHANGE_PLAYER_PLANE \"Boeing 737-400\" ENGINE_TYPE_JET");
    // One byte more or less than data_size says, or an id outside 0x1000-0x1020: not a packet.
    assert!(find(&[&bytes[..], &[0]].concat(), Dialect::Fs98).is_none());
    assert!(find(&bytes[..bytes.len() - 1], Dialect::Fs98).is_none());
    let mut other = bytes.clone();
    other[1] = 0x20;
    assert!(find(&other, Dialect::Fs98).is_none());
    assert!(find(&[], Dialect::Fs98).is_none());
}

#[test]
fn header_only_packets_and_the_host_log() {
    let request = Packet::signal(PacketId::ADD_PLAYER_REQUEST).to_vec(Dialect::Fs98).expect("emit");
    let found = find(&request, Dialect::Fs98).expect("a packet");
    assert_eq!(found.to_string(), "ADD_PLAYER_REQUEST");
    assert_eq!(
        found.json(),
        serde_json::json!({"dialect": "FS98", "packet": "ADD_PLAYER_REQUEST", "data_bytes": 0})
    );
    // The hosts' message logs show it by name too.
    assert_eq!(crate::live::printable(&request), ("addon", "ADD_PLAYER_REQUEST".to_owned()));
    assert_eq!(crate::live::printable(b"hello\0"), ("text", "hello".to_owned()));
}

/// FS2004's PLAYER_INFO_STRUCT in a joiner's player data (FS-MULTIPLAYER.md 3.6): shown in
/// that dialect only, and only at its exact size.
#[test]
fn fs2004_player_info() {
    use dplay_addon::packet::{PlayerInfo, PlayerInfoFlags};
    let info =
        PlayerInfo { flags: PlayerInfoFlags::OBSERVER, aircraft: ZString::from_ascii_lossy("Cessna 172") };
    let bytes = info.to_bytes();
    let found = find_player_info(&bytes, Dialect::Fs2004).expect("player info");
    assert_eq!(found.to_string(), "PLAYER_INFO_STRUCT \"Cessna 172\" observer");
    assert_eq!(found.json()["flags"], "0x1");
    assert!(find_player_info(&bytes, Dialect::Fs98).is_none());
    assert!(find_player_info(&bytes[..200], Dialect::Fs2004).is_none());
}
