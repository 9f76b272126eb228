use dplay_wire::Blob;
use proptest::prelude::*;

use super::*;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};
use crate::units::{Fixed48, Pbh, Velocity16};

const FS98: Dialect = Dialect::Fs98;
const FS2004: Dialect = Dialect::Fs2004;

/// The seed 004 vector position (FS-MULTIPLAYER.md 3.4, 3.5): 47.5°, −122.3°, 100.5 m,
/// pbh 0xFC41CC00.
fn seattle() -> ReducedLlapbh {
    ReducedLlapbh {
        pbh: Pbh(0xFC41_CC00),
        lat: Fixed48 { i: 5_278_701, f: 25486 },
        lon: Fixed48 { i: -1_459_095_835, f: 54468 },
        alt: Fixed48 { i: 100, f: 32768 },
    }
}

/// The same reduced position as bytes, in the order of FS-MULTIPLAYER.md 1.3.
const SEATTLE_BYTES: &str = "00 CC 41 FC  ED 8B 50 00  E5 F6 07 A9  64 00 00 00  8E 63  C4 D4  00 80";

#[track_caller]
fn llapbh(p: Packet) -> PositionLlapbh {
    let Packet::PositionLlapbh(p) = p else { panic!("not a position: {p:?}") };
    p
}

#[track_caller]
fn velocity(p: Packet) -> PositionVelocity {
    let Packet::PositionVelocity(p) = p else { panic!("not a velocity: {p:?}") };
    p
}

/// Seed 004: "It's possible that a packet will contain only a packet ID and size fields".
#[test]
fn seed_004_header_only_packet() {
    let p = assert_reemits(FS98, &bytes("01 10 00 00 00 00 00 00"));
    assert_eq!(p, Packet::signal(PacketId::ADD_PLAYER_REQUEST));
    assert_eq!(p.opaque_fs98_id(), Some(PacketId::ADD_PLAYER_REQUEST));
}

/// Seed 004 row CHANGE_TO_PLAYER / CHANGE_TO_OBSERVER: `player_id` (FS-MULTIPLAYER.md 1.3).
#[test]
fn seed_004_change_to_player_and_observer() {
    let p = assert_reemits(FS98, &bytes("03 10 00 00 04 00 00 00 78 56 34 12"));
    assert_eq!(p, Packet::ChangeToPlayer { player_id: 0x1234_5678 });
    let p = assert_reemits(FS98, &bytes("04 10 00 00 04 00 00 00 01 00 00 00"));
    assert_eq!(p, Packet::ChangeToObserver { player_id: 1 });
}

/// Seed 004 row CHANGE_PLAYER_PLANE: engine_type then a NUL-terminated aircraft_name.
#[test]
fn seed_004_change_player_plane() {
    let p = assert_reemits(FS98, &bytes("0E 10 00 00 0B 00 00 00 01 00 00 00 42 37 33 37 2D 34 00"));
    let Packet::ChangePlayerPlane(c) = p else { panic!("{p:?}") };
    assert_eq!(c.engine_type, EngineType::ENGINE_TYPE_JET);
    assert_eq!(c.aircraft_name.as_bytes(), b"B737-4");
    // FS2004 numbers the same packet 0x1003 (FS-MULTIPLAYER.md 3.2).
    let p = assert_reemits(FS2004, &bytes("03 10 00 00 0B 00 00 00 01 00 00 00 42 37 33 37 2D 34 00"));
    assert!(matches!(p, Packet::ChangePlayerPlane(_)));
}

/// Seed 004 row POSITION_LLAPBH; FS-MULTIPLAYER.md 1.3: 30 bytes packed.
#[test]
fn seed_004_position_llapbh() {
    let b = bytes(&format!("18 10 00 00 1E 00 00 00  11 00 00 00  07 00 00 00  {SEATTLE_BYTES}"));
    let p = llapbh(assert_reemits(FS98, &b));
    assert_eq!((p.application_time, p.packet_index, p.reserved), (0x11, 7, 0));
    assert_eq!(p.reduced_llapbh, seattle());
    assert!(p.padding.is_empty());
    assert!((p.reduced_llapbh.latitude_deg() - 47.5).abs() < 1e-6);
    assert!((p.reduced_llapbh.longitude_deg() + 122.3).abs() < 1e-6);
    assert_eq!(p.reduced_llapbh.altitude_m(), 100.5);
}

/// FS-MULTIPLAYER.md 1.3 / 6 item 2: a sender counting the C sizeof (32) adds 2 padding bytes,
/// which re-emit as they came.
#[test]
fn fs_multiplayer_6_2_position_with_c_padding() {
    let b = bytes(&format!("18 10 00 00 20 00 00 00  11 00 00 00  07 00 00 00  {SEATTLE_BYTES} AA BB"));
    let p = llapbh(assert_reemits(FS98, &b));
    assert_eq!(p.padding, Blob::new(&[0xAA, 0xBB]));
}

/// Seed 004 row POSITION_VELOCITY; FS-MULTIPLAYER.md 1.3: packet_index first, 46 bytes.
#[test]
fn seed_004_position_velocity() {
    let b = bytes(&format!(
        "19 10 00 00 2E 00 00 00  09 00 00 00  00 00 00 00  00 80 01 00  00 80 FE FF  00 00 01 00  00 00 64 00  {SEATTLE_BYTES}"
    ));
    let p = velocity(assert_reemits(FS98, &b));
    assert_eq!(p.packet_index, 9);
    assert_eq!(p.lat_velocity.ft_per_s(), 1.5);
    assert_eq!(p.lon_velocity.ft_per_s(), -1.5);
    assert_eq!(p.alt_velocity, Velocity16(0x0001_0000));
    assert_eq!(Velocity16::unsigned_ft_per_s(p.ground_velocity), 100.0);
    assert_eq!(p.reduced_llapbh, seattle());
}

/// FS-MULTIPLAYER.md 3.3: FS2004's SLEWMODE (0x100C) and VELOCITY (0x100D) have 4 reserved
/// bytes before pbh.
#[test]
fn fs_multiplayer_3_3_fs2004_positions() {
    let b =
        bytes(&format!("0C 10 00 00 22 00 00 00  00 00 00 00  05 00 00 00  01 02 03 04  {SEATTLE_BYTES}"));
    let p = llapbh(assert_reemits(FS2004, &b));
    assert_eq!((p.packet_index, p.reserved), (5, 0x0403_0201));
    assert_eq!(p.reduced_llapbh, seattle());
    let b = bytes(&format!(
        "0D 10 00 00 32 00 00 00  06 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00  {SEATTLE_BYTES}"
    ));
    let p = velocity(assert_reemits(FS2004, &b));
    assert_eq!(p.packet_index, 6);
    assert_eq!(p.reduced_llapbh, seattle());
    // The same ids are OBSERVER_CHANGE_OK / REFUSED in FS98 (FS-MULTIPLAYER.md 3.2 warning).
    assert!(matches!(Packet::parse(FS98, &b), Ok(Packet::Opaque(_))));
}

/// Seed 004 row CHAT_TEXT: a NUL-terminated string; FS2004 numbers it 0x1017.
#[test]
fn seed_004_chat_text() {
    let p = assert_reemits(FS98, &bytes("20 10 00 00 03 00 00 00 68 69 00"));
    assert_eq!(p, Packet::ChatText(ChatText { chat_data: ZString::new(b"hi").unwrap() }));
    let p = assert_reemits(FS2004, &bytes("17 10 00 00 03 00 00 00 68 69 00"));
    assert!(matches!(p, Packet::ChatText(_)));
    assert!(matches!(assert_reemits(FS98, &bytes("17 10 00 00 03 00 00 00 68 69 00")), Packet::Opaque(_)));
}

/// Private payloads (PARAMS, SITUATION_DATA ...) re-emit byte for byte (FS-MULTIPLAYER.md 1.3).
#[test]
fn private_payloads_are_opaque() {
    let p = assert_reemits(FS98, &bytes("14 10 00 00 03 00 00 00 DE AD BE"));
    assert_eq!(p.opaque_fs98_id(), Some(PacketId::SITUATION_DATA));
    let p = assert_reemits(FS98, &bytes("99 99 00 00 01 00 00 00 01"));
    assert_eq!(p.packet_id(FS98), Ok(0x9999));
}

/// Issue: data_size checked against the datagram, strings against their NUL, short payloads.
#[test]
fn bad_input_is_an_error() {
    let err = |d, hex: &str| Packet::parse(d, &bytes(hex)).unwrap_err();
    assert!(matches!(err(FS98, "01 10 00 00"), WireError::Truncated { .. }));
    assert!(matches!(err(FS98, "20 10 00 00 FF FF FF FF 00"), WireError::Truncated { field: "data", .. }));
    assert!(matches!(
        err(FS98, "01 10 00 00 00 00 00 00 00"),
        WireError::InvalidValue { field: "data_size", .. }
    ));
    assert!(matches!(
        err(FS98, "03 10 00 00 02 00 00 00 01 02"),
        WireError::Truncated { field: "player_id", .. }
    ));
    assert!(matches!(err(FS98, "03 10 00 00 05 00 00 00 01 02 03 04 05"), WireError::InvalidValue { .. }));
    assert!(matches!(
        err(FS98, "20 10 00 00 02 00 00 00 68 69"),
        WireError::BadString { field: "chat_data", .. }
    ));
    assert!(matches!(err(FS98, "20 10 00 00 00 00 00 00"), WireError::BadString { .. }));
    assert!(matches!(err(FS98, "20 10 00 00 03 00 00 00 68 00 00"), WireError::BadString { .. }));
    assert!(matches!(err(FS98, "0E 10 00 00 03 00 00 00 01 00 00"), WireError::Truncated { .. }));
    assert!(matches!(err(FS98, "0E 10 00 00 04 00 00 00 01 00 00 00"), WireError::BadString { .. }));
    assert!(matches!(
        err(FS98, "18 10 00 00 08 00 00 00 00 00 00 00 01 00 00 00"),
        WireError::Truncated { .. }
    ));
    assert!(matches!(err(FS2004, "0D 10 00 00 04 00 00 00 00 00 00 00"), WireError::Truncated { .. }));
}

/// A packet a dialect cannot carry is refused when emitting, never sent wrong.
#[test]
fn unencodable_in_dialect() {
    assert!(Packet::ChangeToPlayer { player_id: 1 }.to_vec(FS2004).is_err());
    let mut p = PositionLlapbh {
        application_time: 0,
        packet_index: 0,
        reserved: 1,
        reduced_llapbh: seattle(),
        padding: Blob::default(),
        unwritten: 0,
    };
    assert!(Packet::PositionLlapbh(p.clone()).to_vec(FS98).is_err());
    p.reserved = 0;
    assert!(Packet::PositionLlapbh(p).to_vec(FS98).is_ok());
    assert_eq!(
        Packet::signal(PacketId::PARAMS).emit(FS98, &mut [0; 7]).unwrap_err(),
        WireError::BufferTooSmall { needed: 8, got: 7 }
    );
}

/// FS-MULTIPLAYER.md 3.6: PLAYER_INFO_STRUCT is 268 bytes, flags then a NUL-terminated title.
#[test]
fn fs_multiplayer_3_6_player_info() {
    let info = PlayerInfo {
        flags: PlayerInfoFlags::PARAMS_RECV | PlayerInfoFlags::PARAMS_SEND,
        aircraft: ZString::new(b"Boeing 737-400").unwrap(),
    };
    let b = info.to_bytes();
    assert_eq!(b.get(..4), Some(&[6, 0, 0, 0][..]));
    assert_eq!(b.get(4..18), Some(&b"Boeing 737-400"[..]));
    assert!(b.get(18..).unwrap().iter().all(|&x| x == 0));
    assert_eq!(PlayerInfo::parse(&b).as_ref(), Ok(&info));
    let mut no_nul = b;
    no_nul.get_mut(4..265).unwrap().fill(b'A');
    assert!(matches!(PlayerInfo::parse(&no_nul), Err(WireError::BadString { .. })));
    assert!(PlayerInfo::parse(b.get(..267).unwrap()).is_err());
    insta::assert_snapshot!("PLAYER_INFO_STRUCT", format!("{}\n{info:#?}\n", dplay_wire::hexdump::dump(&b)));
}

/// A sample of each packet, for the snapshots.
fn sample(dialect: Dialect, id: u32) -> Packet {
    let plane = || ChangePlayerPlane {
        engine_type: EngineType::ENGINE_TYPE_PISTON,
        aircraft_name: ZString::new(b"Cessna Skyhawk 172SP").unwrap(),
    };
    let reserved = 0;
    let unwritten = crate::tracking::unwritten_tail(dialect);
    match (dialect, id) {
        (FS98, 0x1003) => Packet::ChangeToPlayer { player_id: 0x0012_3456 },
        (FS98, 0x1004) => Packet::ChangeToObserver { player_id: 0x0012_3456 },
        (FS98, 0x100E) | (FS2004, 0x1003) => Packet::ChangePlayerPlane(plane()),
        (FS98, 0x1018) | (FS2004, 0x100C) => Packet::PositionLlapbh(PositionLlapbh {
            application_time: 0,
            packet_index: 42,
            reserved,
            reduced_llapbh: seattle(),
            padding: Blob::default(),
            unwritten,
        }),
        (FS98, 0x1019) | (FS2004, 0x100D) => Packet::PositionVelocity(PositionVelocity {
            packet_index: 43,
            application_time: 0,
            lat_velocity: Velocity16::from_ft_per_s(150.0),
            lon_velocity: Velocity16::from_ft_per_s(-75.5),
            alt_velocity: Velocity16::from_ft_per_s(-8.25),
            ground_velocity: Velocity16::unsigned_from_ft_per_s(167.7),
            reserved,
            reduced_llapbh: seattle(),
            padding: Blob::default(),
            unwritten,
        }),
        (FS98, 0x1020) | (FS2004, 0x1017) => {
            Packet::ChatText(ChatText { chat_data: ZString::new(b"Hello, tower").unwrap() })
        }
        (_, 0x1000 | 0x1014 | 0x1015 | 0x1017 | 0x101A..=0x101F) => {
            Packet::Opaque(Opaque { id, data: Blob::new(&[0x01, 0x02, 0x03, 0x04]) })
        }
        _ => Packet::Opaque(Opaque { id, data: Blob::default() }),
    }
}

/// One snapshot per FS98 packet id (seed 004 table; FS-MULTIPLAYER.md 1.2).
#[test]
fn snapshots_fs98() {
    for id in PacketId::ALL {
        let p = sample(FS98, id.0);
        assert_roundtrip(FS98, &p);
        insta::assert_snapshot!(format!("FS98_{}", id.name().unwrap()), snapshot_text(FS98, &p));
    }
}

/// One snapshot per FS2004 packet id (FS-MULTIPLAYER.md 3.2, 3.3).
#[test]
fn snapshots_fs2004() {
    for id in Fs2004PacketId::ALL {
        let p = sample(FS2004, id.0);
        assert_roundtrip(FS2004, &p);
        insta::assert_snapshot!(format!("FS2004_{}", id.name().unwrap()), snapshot_text(FS2004, &p));
    }
}

fn zstring() -> impl Strategy<Value = ZString> {
    proptest::collection::vec(1u8..=255, 0..40).prop_map(|v| ZString::new(&v).unwrap())
}

fn reduced() -> impl Strategy<Value = ReducedLlapbh> {
    (any::<u32>(), any::<(i32, u16)>(), any::<(i32, u16)>(), any::<(i32, u16)>()).prop_map(
        |(pbh, lat, lon, alt)| ReducedLlapbh {
            pbh: Pbh(pbh),
            lat: Fixed48 { i: lat.0, f: lat.1 },
            lon: Fixed48 { i: lon.0, f: lon.1 },
            alt: Fixed48 { i: alt.0, f: alt.1 },
        },
    )
}

fn blob(max: usize) -> impl Strategy<Value = Blob> {
    proptest::collection::vec(any::<u8>(), 0..max).prop_map(Blob)
}

fn packet(dialect: Dialect) -> impl Strategy<Value = Packet> {
    let reserved = if dialect == FS2004 { any::<u32>().boxed() } else { Just(0).boxed() };
    let unwritten = if dialect == FS2004 { (0..=UNWRITTEN_TAIL).boxed() } else { Just(0).boxed() };
    let typed: &[u32] = match dialect {
        Dialect::Fs98 => &[0x1003, 0x1004, 0x100E, 0x1018, 0x1019, 0x1020],
        Dialect::Fs2004 => &[0x1003, 0x100C, 0x100D, 0x1017],
    };
    let typed = typed.to_vec();
    prop_oneof![
        any::<u32>().prop_map(|player_id| Packet::ChangeToPlayer { player_id }),
        any::<u32>().prop_map(|player_id| Packet::ChangeToObserver { player_id }),
        (any::<u32>(), zstring()).prop_map(|(e, aircraft_name)| Packet::ChangePlayerPlane(
            ChangePlayerPlane { engine_type: EngineType(e), aircraft_name }
        )),
        (any::<u32>(), any::<u32>(), reserved.clone(), reduced(), blob(3), unwritten.clone()).prop_map(
            |(application_time, packet_index, reserved, reduced_llapbh, padding, unwritten)| {
                Packet::PositionLlapbh(PositionLlapbh {
                    application_time,
                    packet_index,
                    reserved,
                    reduced_llapbh,
                    padding,
                    unwritten,
                })
            }
        ),
        (any::<[u32; 2]>(), any::<[i32; 3]>(), any::<u32>(), reserved, reduced(), blob(3), unwritten)
            .prop_map(
                |(
                    [packet_index, application_time],
                    [la, lo, al],
                    ground_velocity,
                    reserved,
                    reduced_llapbh,
                    padding,
                    unwritten,
                )| {
                    Packet::PositionVelocity(PositionVelocity {
                        packet_index,
                        application_time,
                        lat_velocity: Velocity16(la),
                        lon_velocity: Velocity16(lo),
                        alt_velocity: Velocity16(al),
                        ground_velocity,
                        reserved,
                        reduced_llapbh,
                        padding,
                        unwritten,
                    })
                }
            ),
        zstring().prop_map(|chat_data| Packet::ChatText(ChatText { chat_data })),
        (0x1000u32..0x1030, blob(64))
            .prop_filter("typed ids parse as their type", move |(id, _)| !typed.contains(id))
            .prop_map(|(id, data)| Packet::Opaque(Opaque { id, data })),
    ]
    .prop_filter("CHANGE_TO_* is FS98 only", move |p| {
        dialect == FS98 || !matches!(p, Packet::ChangeToPlayer { .. } | Packet::ChangeToObserver { .. })
    })
}

proptest! {
    #[test]
    fn roundtrip_fs98(p in packet(FS98)) {
        assert_roundtrip(FS98, &p);
    }

    #[test]
    fn roundtrip_fs2004(p in packet(FS2004)) {
        assert_roundtrip(FS2004, &p);
    }

    #[test]
    fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..128)) {
        for d in [FS98, FS2004] {
            if let Ok(p) = Packet::parse(d, &b) {
                prop_assert_eq!(p.to_vec(d).unwrap(), b.clone());
            }
        }
        let _ = PlayerInfo::parse(&b);
    }

    /// Valid headers with arbitrary data reach every payload parser.
    #[test]
    fn parse_payloads_never_panic(id in 0x1000u32..0x1022, data in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut b = id.to_le_bytes().to_vec();
        b.extend_from_slice(&u32::try_from(data.len()).unwrap().to_le_bytes());
        b.extend_from_slice(&data);
        for d in [FS98, FS2004] {
            if let Ok(p) = Packet::parse(d, &b) {
                prop_assert_eq!(p.to_vec(d).unwrap(), b.clone());
            }
        }
    }
}

/// Issue #16 / FS-MULTIPLAYER.md 3.3: swift writes POSITION_SLEWMODE as `data_size` 36 over
/// 34 bytes (its struct's `unknown[2]` never written), and FS9 accepts it. The vector is the
/// issue's swift-shaped hex: 47.5°, −122.3° (swift's sign-magnitude longitude), 100.5 m, pbh
/// 0xFC41CC00 (docs/decisions.md "FS2004 position data_size").
#[test]
fn issue_16_swift_slewmode_36_over_34() {
    let b = bytes(
        "0c100000 24000000 00000000 07000000 00000000 00cc41fc ed8b5000 e6f607a9 64000000 8e63 3c2b 0080",
    );
    assert_eq!(b.len(), 8 + 34);
    let p = llapbh(assert_reemits(FS2004, &b));
    assert_eq!((p.packet_index, p.unwritten), (7, 2));
    assert!(p.padding.is_empty());
    // swift splits the negative longitude as sign and magnitude (−1459095834, 11068); read as
    // two's complement it is 0.34 units (2 mm) off the truth: within swift's own error
    // (FS-MULTIPLAYER.md 3.4 test vectors; docs/decisions.md "Fixed-point sign").
    let lon = p.reduced_llapbh.longitude_deg();
    assert!((lon + 122.3).abs() * 111_320.0 < 1.0, "{lon}");
    assert!((p.reduced_llapbh.latitude_deg() - 47.5).abs() < 1e-6);
    assert_eq!(p.reduced_llapbh.altitude_m(), 100.5);
}

/// FS-MULTIPLAYER.md 3.3: POSITION_VELOCITY announced as 52 over 50 bytes (swift's
/// `aircraftSituationToFS9` form), and the full 52-byte form, both accepted.
#[test]
fn fs_multiplayer_3_3_velocity_52_over_50_and_full() {
    let fields = format!(
        "06 00 00 00  00 00 00 00  00 80 01 00  00 00 00 00  00 00 00 00  00 00 64 00  00 00 00 00  {SEATTLE_BYTES}"
    );
    let p = velocity(assert_reemits(FS2004, &bytes(&format!("0D 10 00 00 34 00 00 00 {fields}"))));
    assert_eq!((p.packet_index, p.unwritten), (6, 2));
    let p = velocity(assert_reemits(FS2004, &bytes(&format!("0D 10 00 00 34 00 00 00 {fields} 00 00"))));
    assert_eq!((p.unwritten, p.padding.len()), (0, 2));
    // FS2004 ground_velocity is m/s × 65536 (docs/decisions.md "Ground velocity units").
    assert_eq!(p.ground_m_per_s(FS2004), 100.0);
}

/// The shortfall is accepted only where swift's form needs it: the whole layout present, at
/// most the 2 tail bytes missing, FS2004 positions only.
#[test]
fn short_data_size_accepted_only_for_fs2004_positions() {
    let slew = |size: &str, extra: &str| {
        bytes(&format!(
            "0C 10 00 00 {size} 00 00 00  00 00 00 00  05 00 00 00  00 00 00 00  {SEATTLE_BYTES} {extra}"
        ))
    };
    // 3 bytes announced and not there: more than the tail padding.
    assert!(matches!(Packet::parse(FS2004, &slew("25", "")), Err(WireError::Truncated { .. })));
    // The layout itself cut short.
    let mut cut = slew("24", "");
    cut.pop();
    assert!(matches!(Packet::parse(FS2004, &cut), Err(WireError::Truncated { .. })));
    // FS98 checks data_size exactly (0x1018 LLAPBH announcing 32 over 30 bytes).
    let b = bytes(&format!("18 10 00 00 20 00 00 00  11 00 00 00  07 00 00 00  {SEATTLE_BYTES}"));
    assert!(matches!(Packet::parse(FS98, &b), Err(WireError::Truncated { .. })));
    // And FS98 cannot send the short form.
    let mut p = llapbh(Packet::parse(FS2004, &slew("24", "")).unwrap());
    p.reserved = 0;
    assert!(Packet::PositionLlapbh(p).to_vec(FS98).is_err());
}

/// What we send in FS2004 is swift's proven form: 36 announced over 34 bytes, 52 over 50
/// (docs/decisions.md "FS2004 position data_size").
#[test]
fn fs2004_sends_swift_form() {
    use crate::tracking::{Position, Velocity};
    let v = Velocity::default().to_packet(FS2004, 1, &Position::default());
    let b = Packet::PositionVelocity(v).to_vec(FS2004).unwrap();
    assert_eq!((b.len(), &b[4..8]), (8 + 50, &[52, 0, 0, 0][..]));
    let v = Velocity::default().to_packet(FS98, 1, &Position::default());
    let b = Packet::PositionVelocity(v).to_vec(FS98).unwrap();
    assert_eq!((b.len(), &b[4..8]), (8 + 46, &[46, 0, 0, 0][..]));
}

/// Issue #16 / FS-MULTIPLAYER.md 3.3 chat: no source fixes the code page; we read and write
/// Windows-1252 and never lose a received byte (docs/decisions.md "Add-on text code page").
#[test]
fn chat_text_is_windows_1252_and_lossless() {
    let z = ZString::from_text("Grüße € “ok” 日本");
    assert_eq!(z.as_bytes(), b"Gr\xFC\xDFe \x80 \x93ok\x94 ??");
    assert_eq!(z.to_text(), "Grüße € “ok” ??");
    // Every byte but NUL survives a read as text and a write back.
    let all: Vec<u8> = (1..=255).collect();
    let z = ZString::new(&all).unwrap();
    assert_eq!(ZString::from_text(&z.to_text()).as_bytes(), &all[..]);
}

/// FS-MULTIPLAYER.md 2: the application GUIDs and their wire bytes (MS-DTYP mixed-endian);
/// FS2004 on UDP 23456 (MS KB 823630).
#[test]
fn fs_multiplayer_2_application_guids() {
    assert_eq!(crate::GUID_FS2004.to_bytes_le(), *bytes("A5 CA 08 08 2C E6 91 46 89 57 5D 45 24 B9 22 DA"));
    assert_eq!(crate::GUID_FS6.to_bytes_le(), *bytes("27 0A 08 CC 4E 6D D0 11 8E 21 00 A0 C9 05 42 EF"));
    assert_eq!(crate::FS2004_PORT, 23456);
}
