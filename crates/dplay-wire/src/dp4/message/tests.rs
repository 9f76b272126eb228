use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddrV4};

use proptest::prelude::*;

use super::strategy::{body, message, sock_addr};
use super::*;
use crate::WideString;
use crate::dp4::enumeration::EnumSessionsFlags;
use crate::dp4::header::{SockAddrIn, Token};
use crate::dp4::join::{CreateReserved, RequestGroupFlags, RequestPlayerFlags};
use crate::dp4::player::{Counted, LenWidth, PackedPlayer, SuperPackedPlayer};
use crate::dp4::player_message::PlayerIds;
use crate::dp4::routing::ChatFlags;
use crate::dp4::security::SignedFlags;
use crate::dp4::session::{PlayerFlags, SecurityDesc, SessionFlags};
use crate::hexdump::dump;
use crate::testutil::{assert_reemits, assert_roundtrip, bytes, snapshot_text};
use uuid::{Uuid, uuid};

/// {A052A50B-FFE0-CF11-9C4E-00A0C905425E}, the application of MC-DPL4CS 4.1 and 4.2.
const APP: Uuid = uuid!("A052A50B-FFE0-CF11-9C4E-00A0C905425E");

/// The MC-DPL4CS 4.1 listing as bytes: size 70, token 0xFAB, SockAddr 2/2300/0.0.0.0,
/// Command 2, Version 14, GuidApplication, PasswordOffset 32, Flags 2, Password "Password".
fn enumsessions_4_1() -> Vec<u8> {
    let mut msg = bytes(
        "46 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00
         00 00 00 00 70 6C 61 79 02 00 0E 00 0B A5 52 A0
         E0 FF 11 CF 9C 4E 00 A0 C9 05 42 5E 20 00 00 00
         02 00 00 00",
    );
    msg.extend("Password\0".encode_utf16().flat_map(u16::to_le_bytes));
    msg
}

/// The MC-DPL4CS 4.2 listing as bytes: size 128, DPSESSIONDESC2 (flags 0x404, 1000 players,
/// Reserved1 0x1E52A0A1, User2-4 = 2, 3, 4), NameOffset 92, "LOTHAIR".
fn enumsessionsreply_4_2() -> Vec<u8> {
    let mut msg = bytes(
        "80 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00
         00 00 00 00 70 6C 61 79 01 00 0E 00 50 00 00 00
         04 04 00 00 8E A0 FA 21 FC 42 46 B5 AF D3 5E 15
         84 FB BB 60 0B A5 52 A0 E0 FF 11 CF 9C 4E 00 A0
         C9 05 42 5E E8 03 00 00 01 00 00 00 00 00 00 00
         00 00 00 00 A1 A0 52 1E 00 00 00 00 00 00 00 00
         02 00 00 00 03 00 00 00 04 00 00 00 5C 00 00 00",
    );
    msg.extend("LOTHAIR\0".encode_utf16().flat_map(u16::to_le_bytes));
    msg
}

#[track_caller]
fn check_header(m: &Dp4Message, command: Command) {
    assert_eq!(m.header.token, Token::FROM_REMOTE);
    assert_eq!(m.header.sock_addr, SockAddrIn::new(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 2300)));
    assert_eq!(m.header.command, command);
    assert_eq!(m.header.version, 14);
}

/// MC-DPL4CS 4.1: DPSP_MSG_ENUMSESSIONS, 70 bytes; PasswordOffset 32 counts from 'play' (F-26).
#[test]
fn mc_dpl4cs_4_1_enumsessions() {
    let bytes = enumsessions_4_1();
    assert_eq!(bytes.len(), 70);
    let m = assert_reemits::<Dp4Message>(&bytes);
    check_header(&m, Command::DPSP_MSG_ENUMSESSIONS);
    assert_eq!(m.name(), "DPSP_MSG_ENUMSESSIONS");
    let Dp4Body::EnumSessions(e) = m.body else { panic!("not ENUMSESSIONS: {m:?}") };
    assert_eq!(e.application_guid, APP);
    assert_eq!(e.flags, EnumSessionsFlags::ALL);
    assert_eq!(e.password, Some(WideString::new("Password")));
}

/// MC-DPL4CS 4.2: DPSP_MSG_ENUMSESSIONSREPLY, 128 bytes; NameOffset 92 counts from 'play'.
#[test]
fn mc_dpl4cs_4_2_enumsessionsreply() {
    let bytes = enumsessionsreply_4_2();
    assert_eq!(bytes.len(), 128);
    let m = assert_reemits::<Dp4Message>(&bytes);
    check_header(&m, Command::DPSP_MSG_ENUMSESSIONSREPLY);
    assert_eq!(m.name(), "DPSP_MSG_ENUMSESSIONSREPLY");
    let Dp4Body::EnumSessionsReply(r) = m.body else { panic!("not ENUMSESSIONSREPLY: {m:?}") };
    let d = r.session_desc;
    assert_eq!(d.size, 80);
    assert_eq!(
        d.flags,
        SessionFlags::MIGRATE_HOST | SessionFlags::PASSWORD_REQUIRED,
        "0x404 is MH+PR (INDEX §0)"
    );
    assert_eq!(d.instance_guid, uuid!("21FAA08E-42FC-B546-AFD3-5E1584FBBB60"));
    assert_eq!(d.application_guid, APP);
    assert_eq!((d.max_players, d.current_player_count), (1000, 1));
    assert_eq!((d.session_name, d.password), (0, 0));
    assert_eq!((d.reserved1, d.reserved2), (0x1E52_A0A1, 0));
    assert_eq!(d.application_defined, [0, 2, 3, 4]);
    assert_eq!(r.session_name, Some(WideString::new("LOTHAIR")));
}

#[test]
fn rejects_bad_sizes_and_offsets() {
    let good = enumsessionsreply_4_2();
    let mut m = good.clone();
    m.push(0); // one byte more than dwSize says
    assert!(matches!(Dp4Message::parse(&m), Err(WireError::InvalidValue { field: "dwSize", .. })));
    let mut m = good.clone();
    m[108] = 0x80; // NameOffset past the end
    assert!(matches!(Dp4Message::parse(&m), Err(WireError::BadOffset { field: "SessionName", .. })));
    let mut m = good.clone();
    m[126] = b'X'; // the name loses its NUL
    assert!(matches!(Dp4Message::parse(&m), Err(WireError::BadString { field: "SessionName", .. })));
    assert!(Dp4Message::parse(&good[..107]).is_err());
    // A fixed body with a trailing byte (REQUESTPLAYERID is exactly 32 bytes).
    let msg = sample(Dp4Body::RequestPlayerId(RequestPlayerId { flags: RequestPlayerFlags::SYSTEM_PLAYER }));
    let mut b = msg.to_vec().unwrap();
    b.push(0);
    b[0] += 1;
    assert!(Dp4Message::parse(&b).is_err());
}

#[test]
fn emit_checks_command_consistency() {
    let mut m = sample(Dp4Body::YouAreDead(Empty));
    m.header.command = Command::DPSP_MSG_PING;
    assert!(matches!(m.to_vec(), Err(WireError::Unencodable { field: "wCommand", .. })));
    let other = sample(Dp4Body::Other { command: Command::DPSP_MSG_PING, data: Blob::default() });
    assert!(other.to_vec().is_err(), "Other never holds a command with its own variant");
}

fn sample(body: Dp4Body) -> Dp4Message {
    let addr = SockAddrIn::new(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 2300));
    Dp4Message::new(Token::FROM_REMOTE, addr, 14, body)
}

/// The Winsock SPData: stream then datagram SOCKADDR_IN, address 0.0.0.0 (MC-DPL4CS 2.2.2).
fn winsock_sp_data() -> Blob {
    Blob(bytes(
        "02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00
         02 00 08 FD 00 00 00 00 00 00 00 00 00 00 00 00",
    ))
}

fn system_player() -> PackedPlayer {
    PackedPlayer {
        flags: PlayerFlags::SYSTEM_PLAYER | PlayerFlags::NAME_SERVER | PlayerFlags::IN_GROUP,
        player_id: 0x1E52_A0A0,
        system_player_id: 0x1E52_A0A0,
        player_version: 14,
        parent_id: 0,
        short_name: None,
        long_name: None,
        sp_data: winsock_sp_data(),
        player_data: Blob::default(),
        player_ids: Vec::new(),
        size_counts_player_ids: false,
    }
}

fn pilot() -> PackedPlayer {
    PackedPlayer {
        flags: PlayerFlags::empty(),
        player_id: 0x1E53_A0A2,
        short_name: Some(WideString::new("Pilot")),
        long_name: Some(WideString::new("Test Pilot")),
        player_data: Blob(vec![1, 2, 3]),
        ..system_player()
    }
}

fn super_system_player() -> SuperPackedPlayer {
    SuperPackedPlayer {
        flags: PlayerFlags::SYSTEM_PLAYER | PlayerFlags::NAME_SERVER | PlayerFlags::IN_GROUP,
        id: 0x1E52_A0A0,
        version_or_system_player_id: 14,
        short_name: None,
        long_name: None,
        player_data: None,
        sp_data: Some(Counted { width: LenWidth::One, value: winsock_sp_data() }),
        player_ids: None,
        parent_id: None,
        shortcut_ids: None,
    }
}

fn desc() -> crate::dp4::session::SessionDesc2 {
    let Dp4Body::EnumSessionsReply(r) = Dp4Message::parse(&enumsessionsreply_4_2()).unwrap().body else {
        unreachable!()
    };
    r.session_desc
}

fn info(player_id: u32, player_info: PackedPlayer, reserved: Option<CreateReserved>) -> PlayerInfoMessage {
    PlayerInfoMessage { id_to: 0, player_id, group_id: 0, password_offset: 0, player_info, reserved }
}

/// One message per command, for the snapshots.
fn samples() -> Vec<Dp4Message> {
    let ids = |player_id, group_id| PlayerGroupIds { player_id, group_id, ..Default::default() };
    let groups = |child_group_id, parent_group_id| GroupGroupIds {
        child_group_id,
        parent_group_id,
        ..Default::default()
    };
    let name = Some(WideString::new("LOTHAIR"));
    let token = |t: &str| SecurityToken { id_from: 0x1E52_A0A0, security_token: Blob(bytes(t)) };
    let group = PackedPlayer { player_id: 0x1E51_A0A3, player_ids: vec![0x1E53_A0A2], ..pilot() };
    let inner = ShortMessage::new(14, Dp4Body::Ping(Ping { id_from: 0x1E52_A0A0, tick_count: 1000 }));
    let inner = Blob(inner.to_vec().unwrap());
    let multicast = Multicast { group_to: 0x1E51_A0A3, player_from: 0x1E53_A0A2, message: inner.clone() };
    [
        Dp4Message::parse(&enumsessionsreply_4_2()).unwrap().body,
        Dp4Message::parse(&enumsessions_4_1()).unwrap().body,
        Dp4Body::EnumPlayersReply(EnumPlayersReply {
            shortcut_count: 0,
            session_desc: desc(),
            session_name: name.clone(),
            password: None,
            players: vec![system_player(), pilot()],
            groups: vec![group.clone()],
        }),
        Dp4Body::EnumPlayer(Empty),
        Dp4Body::RequestPlayerId(RequestPlayerId { flags: RequestPlayerFlags::SYSTEM_PLAYER }),
        Dp4Body::RequestGroupId(RequestGroupId { flags: RequestGroupFlags::LOCAL }),
        Dp4Body::RequestPlayerReply(RequestPlayerReply {
            id: 0x1E52_A0A0,
            sec_desc: SecurityDesc::default(),
            result: 0,
            sspi_provider: None,
            capi_provider: None,
        }),
        Dp4Body::CreatePlayer(info(0x1E53_A0A2, pilot(), Some(CreateReserved::default()))),
        Dp4Body::CreateGroup(info(0x1E51_A0A3, group, None)),
        Dp4Body::DeletePlayer(ids(0x1E53_A0A2, 0)),
        Dp4Body::DeleteGroup(ids(0, 0x1E51_A0A3)),
        Dp4Body::AddPlayerToGroup(ids(0x1E53_A0A2, 0x1E51_A0A3)),
        Dp4Body::DeletePlayerFromGroup(ids(0x1E53_A0A2, 0x1E51_A0A3)),
        Dp4Body::PlayerDataChanged(DataChanged { id_to: 0, id: 0x1E53_A0A2, data: Blob(vec![9, 8, 7]) }),
        Dp4Body::PlayerNameChanged(NameChanged {
            id_to: 0,
            id: 0x1E53_A0A2,
            short_name: Some(WideString::new("Ace")),
            long_name: None,
        }),
        Dp4Body::GroupDataChanged(DataChanged { id_to: 0, id: 0x1E51_A0A3, data: Blob(vec![5]) }),
        Dp4Body::GroupNameChanged(NameChanged {
            id_to: 0,
            id: 0x1E51_A0A3,
            short_name: Some(WideString::new("Red")),
            long_name: Some(WideString::new("Red team")),
        }),
        Dp4Body::AddForwardRequest(AddForwardRequest {
            id_to: 0,
            player_id: 0x1E50_A0A4,
            group_id: 0,
            player_info: system_player(),
            password: Some(WideString::new("Password")),
            tick_count: 0x0011_5D07,
        }),
        Dp4Body::Packet(crate::dp4::fragment::Fragment {
            guid_message: APP,
            packet_index: 0,
            offset: 0,
            total_packets: 1,
            message_size: 16,
            packet_offset: crate::dp4::fragment::PACKET_DATA_OFFSET,
            data: inner.clone(),
        }),
        Dp4Body::Ping(Ping { id_from: 0x1E52_A0A0, tick_count: 1000 }),
        Dp4Body::PingReply(Ping { id_from: 0x1E52_A0A0, tick_count: 1000 }),
        Dp4Body::YouAreDead(Empty),
        Dp4Body::PlayerWrapper(PlayerWrapper { player_message: Blob(player_message_bytes()) }),
        Dp4Body::SessionDescChanged(SessionDescChanged {
            id_to: 0,
            session_desc: desc(),
            session_name: name.clone(),
            password: Some(WideString::new("Password")),
        }),
        Dp4Body::Challenge(token("4E 54 4C 4D 53 53 50 00 02 00 00 00")),
        Dp4Body::AccessGranted(AccessGranted { public_key: Blob(vec![0xA5; 24]) }),
        Dp4Body::LogonDenied(Empty),
        Dp4Body::AuthError(Dword(crate::dp4::security::SEC_E_INVALID_TOKEN)),
        Dp4Body::Negotiate(token("4E 54 4C 4D 53 53 50 00 01 00 00 00")),
        Dp4Body::ChallengeResponse(token("4E 54 4C 4D 53 53 50 00 03 00 00 00")),
        Dp4Body::Signed(Signed {
            id_from: 0x1E52_A0A0,
            flags: SignedFlags::SSPI_SIGNED,
            message: inner,
            signature: Blob(bytes("01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00")),
        }),
        Dp4Body::AddForwardReply(Dword(crate::dp4::join::DPERR_NONEWPLAYERS)),
        Dp4Body::Ask4Multicast(multicast.clone()),
        Dp4Body::Ask4MulticastGuaranteed(multicast.clone()),
        Dp4Body::AddShortcutToGroup(groups(0x1E4F_A0A5, 0x1E51_A0A3)),
        Dp4Body::DeleteGroupFromGroup(groups(0x1E4F_A0A5, 0x1E51_A0A3)),
        Dp4Body::SuperEnumPlayersReply(SuperEnumPlayersReply {
            session_desc: desc(),
            session_name: name,
            password: None,
            players: vec![super_system_player()],
            groups: Vec::new(),
            shortcuts: Vec::new(),
        }),
        Dp4Body::KeyExchange(KeyExchange {
            session_key: Blob(vec![0x5A; 8]),
            public_key: Blob(vec![0xA5; 12]),
        }),
        Dp4Body::KeyExchangeReply(KeyExchangeReply {
            session_key: Blob(vec![0x5A; 8]),
            public_key_size: 0,
            public_key_offset: 0,
        }),
        Dp4Body::Chat(Chat {
            id_from: 0x1E53_A0A2,
            id_to: 0,
            flags: ChatFlags::GUARANTEED,
            chat_message: Some(WideString::new("hi")),
        }),
        Dp4Body::AddForward(info(0x1E50_A0A4, system_player(), None)),
        Dp4Body::AddForwardAck(Dword(0x1E50_A0A4)),
        Dp4Body::Packet2Data(crate::dp4::fragment::Fragment {
            guid_message: APP,
            packet_index: 1,
            offset: 4,
            total_packets: 2,
            message_size: 8,
            packet_offset: crate::dp4::fragment::PACKET_DATA_OFFSET,
            data: Blob(bytes("2D 00 0E 00")),
        }),
        Dp4Body::Packet2Ack(crate::dp4::fragment::PacketAck { guid_message: APP, packet_id: 1 }),
        Dp4Body::IAmNameServer(IAmNameServer {
            id_to: 0x1E53_A0A2,
            id_host: 0x1E50_A0A4,
            flags: PlayerFlags::SYSTEM_PLAYER | PlayerFlags::NAME_SERVER | PlayerFlags::IN_GROUP,
            sp_data: winsock_sp_data(),
        }),
        Dp4Body::Voice(Voice {
            id_from: 0x1E53_A0A2,
            id_to: 0,
            message: crate::voice::VoiceMessage::Disconnect,
        }),
        Dp4Body::MulticastDelivery(multicast),
        Dp4Body::CreatePlayerVerify(info(0x1E53_A0A2, pilot(), Some(CreateReserved::default()))),
        Dp4Body::Other { command: Command(0x14), data: Blob(vec![0xEE]) },
    ]
    .into_iter()
    .map(sample)
    .collect()
}

/// One snapshot per DPSP_MSG_* (and one unassigned command); together they cover every
/// command with a body type.
#[test]
fn snapshots_cover_every_message() {
    let samples = samples();
    let covered: BTreeSet<_> = samples.iter().map(|m| m.header.command).collect();
    let known: BTreeSet<_> = Dp4Body::KNOWN.iter().copied().collect();
    assert!(known.is_subset(&covered), "missing samples: {:?}", known.difference(&covered));
    for m in &samples {
        assert_reemits::<Dp4Message>(&m.to_vec().unwrap());
        assert_eq!(Some(m.name()), m.header.command.name().or(Some("DPSP_MSG_UNKNOWN")));
        insta::assert_snapshot!(m.name(), snapshot_text(m));
    }
}

/// MC-DPL4CS 2.2.19 / INDEX D.15: CHAT travels with the 8-byte header; its MessageOffset
/// counts from the signature, like every other offset.
#[test]
fn chat_short_form() {
    let b = bytes(
        "70 6C 61 79 2D 00 0E 00 A2 A0 53 1E 00 00 00 00
         01 00 00 00 18 00 00 00 68 00 69 00 00 00",
    );
    let m = assert_reemits::<ShortMessage>(&b);
    assert_eq!(m.name(), "DPSP_MSG_CHAT");
    let Dp4Body::Chat(c) = &m.body else { panic!("not CHAT: {m:?}") };
    assert_eq!(c.chat_message, Some(WideString::new("hi")));
    insta::assert_snapshot!("DPSP_MSG_CHAT_short", snapshot_text(&m));
}

/// SIGNED, ASK4MULTICAST and MULTICASTDELIVERY carry short-form messages (MC-DPL4CS 2.2.14,
/// 2.2.37, 2.2.52).
#[test]
fn nested_messages_decode() {
    for m in samples() {
        let inner = match &m.body {
            Dp4Body::Signed(s) => s.inner(),
            Dp4Body::Ask4Multicast(x)
            | Dp4Body::Ask4MulticastGuaranteed(x)
            | Dp4Body::MulticastDelivery(x) => x.inner(),
            _ => continue,
        };
        assert_eq!(inner.unwrap().name(), "DPSP_MSG_PING", "inside {}", m.name());
    }
}

fn player_message_bytes() -> Vec<u8> {
    bytes("1E 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 A2 A0 53 1E 00 00 00 00 AB CD")
}

/// MC-DPL4CS 2.2.45 / F-23: a player message has no signature; IDs unless NM.
#[test]
fn player_message_without_signature() {
    let b = player_message_bytes();
    let Dp4Datagram::Player(p) = Dp4Datagram::parse(&b, true).unwrap() else {
        panic!("not a player message")
    };
    assert_eq!(p.ids, Some(PlayerIds { id_from: 0x1E53_A0A2, id_to: 0 }));
    assert_eq!(p.payload, Blob(vec![0xAB, 0xCD]));
    assert_eq!(p.to_vec().unwrap(), b);
    let nm = PlayerMessage::parse(&b, false).unwrap();
    assert_eq!((nm.ids, nm.payload.len()), (None, 10));
    assert_eq!(nm.to_vec().unwrap(), b);
    insta::assert_snapshot!("DPSP_MSG_PLAYERMESSAGE", format!("{}\n{p:#?}\n", dump(&b)));

    // 'play' at offset 20 is a system message, and a player message may not produce it.
    let sys = enumsessions_4_1();
    assert!(matches!(Dp4Datagram::parse(&sys, true), Ok(Dp4Datagram::System(_))));
    assert!(PlayerMessage::parse(&sys, true).is_err());
    let clash = PlayerMessage::new(None, Blob(b"play".to_vec()));
    assert!(matches!(clash.to_vec(), Err(WireError::Unencodable { .. })), "must go in a PLAYERWRAPPER");
}

/// F-29: DPLAYI_PACKEDPLAYER.Size with and without the PlayerIDs both parse and re-emit.
#[test]
fn packed_player_size_conventions() {
    let group = PackedPlayer { player_ids: vec![7, 8], ..pilot() };
    for counts in [false, true] {
        let p = PackedPlayer { size_counts_player_ids: counts, ..group.clone() };
        let m = sample(Dp4Body::CreateGroup(info(1, p.clone(), None)));
        let b = m.to_vec().unwrap();
        let size = u32::from_le_bytes(b[48..52].try_into().unwrap()) as usize;
        assert_eq!(size + if counts { 0 } else { 8 }, p.encoded_len());
        assert_eq!(assert_reemits::<Dp4Message>(&b), m);
    }
    let mut b = sample(Dp4Body::CreateGroup(info(1, group, None))).to_vec().unwrap();
    b[48] += 1; // neither convention
    assert!(matches!(Dp4Message::parse(&b), Err(WireError::InvalidValue { field: "Size", .. })));
    let mut b = sample(Dp4Body::AddForward(info(1, system_player(), None))).to_vec().unwrap();
    b[84] = 47; // FixedSize
    assert!(matches!(Dp4Message::parse(&b), Err(WireError::InvalidValue { field: "FixedSize", .. })));
}

/// MC-DPL4CS 2.2.3 / INDEX B.12: Windows codes SL=1 for a 0x20-byte SPData; mask 0x04.
#[test]
fn super_packed_player_length_codes() {
    let p = super_system_player();
    assert_eq!(p.player_info_mask(), 0x04);
    let wide = SuperPackedPlayer {
        sp_data: Some(Counted { width: LenWidth::Four, value: winsock_sp_data() }),
        player_ids: Some(Counted::narrowest(vec![1, 2], 2)),
        parent_id: Some(9),
        ..p.clone()
    };
    assert_eq!(wide.player_info_mask(), 0x0C | 0x40 | 0x100);
    let m = sample(Dp4Body::SuperEnumPlayersReply(SuperEnumPlayersReply {
        session_desc: desc(),
        session_name: None,
        password: None,
        players: vec![wide],
        groups: Vec::new(),
        shortcuts: Vec::new(),
    }));
    assert_roundtrip(&m);
    let big =
        SuperPackedPlayer { sp_data: Some(Counted { width: LenWidth::One, value: Blob(vec![0; 256]) }), ..p };
    let m = sample(Dp4Body::SuperEnumPlayersReply(SuperEnumPlayersReply {
        session_desc: desc(),
        session_name: None,
        password: None,
        players: vec![big],
        groups: Vec::new(),
        shortcuts: Vec::new(),
    }));
    assert!(matches!(m.to_vec(), Err(WireError::Unencodable { .. })));
}

proptest! {
    // About 20 cases per body type.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn message_roundtrips(m in message()) {
        assert_roundtrip(&m);
    }

    #[test]
    fn short_message_roundtrips(version in any::<u16>(), b in body()) {
        assert_roundtrip(&ShortMessage::new(version, b));
    }

    #[test]
    fn player_message_roundtrips(
        token in 0..=0xFFFu16,
        sock_addr in sock_addr(),
        ids in proptest::option::of(any::<(u32, u32)>()),
        payload in proptest::collection::vec(any::<u8>(), 0..32),
    ) {
        let p = PlayerMessage {
            token: Token(token),
            sock_addr,
            ids: ids.map(|(id_from, id_to)| PlayerIds { id_from, id_to }),
            payload: Blob(payload),
        };
        if let Ok(b) = p.to_vec() {
            prop_assert_eq!(b.len(), p.encoded_len());
            prop_assert_eq!(PlayerMessage::parse(&b, p.ids.is_some()).unwrap(), p);
        }
    }

    #[test]
    fn parse_never_panics(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = Dp4Message::parse(&data);
        let _ = ShortMessage::parse(&data);
        let _ = Dp4Datagram::parse(&data, true);
        let _ = Dp4Datagram::parse(&data, false);
    }

    /// Corrupting any byte of a valid message yields a value or an error, never a panic.
    #[test]
    fn corrupted_samples_never_panic(pick in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), v in any::<u8>()) {
        let samples = samples();
        let mut b = samples[pick.index(samples.len())].to_vec().unwrap();
        let i = at.index(b.len());
        b[i] = v;
        let _ = Dp4Message::parse(&b);
        let _ = ShortMessage::parse(&b[20..]);
    }
}
