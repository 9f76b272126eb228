//! MC-DPL8CS 4: every byte example, as UDP payloads (DFRAME header + message). MS-DPDX 4 has
//! no hex dumps (its 4.1-4.3 are prose and a sequence diagram).

use uuid::Uuid;

use super::super::*;
use crate::dp8::alternate_address::AlternateAddress;
use crate::dp8::dframe::{DframeCommand, DframeContext, DframeHeader};
use crate::dp8::url::{AddressingUrl, DirectPlayUrl};
use crate::testutil::{assert_reemits, bytes};
use crate::text::WideString;

/// MC-DPL8CS 4, first frame: DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO_EX (UDP payload).
pub(super) const CONNECT_INFO_EX: &str = "
    7F 00 01 00 C1 00 00 00 04 00 00 00 08 00 00 00
    60 00 00 00 14 00 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 00 00 00 00 23 81 BE 94 AB A1 FB 48
    A2 E7 23 85 9E 65 89 36 DA 80 EF 61 1B 69 47 42
    9A DD 1C 7B ED 2B C1 3E 58 00 00 00 08 00 00 00
    07 02 08 FE 41 34 EF 3D 54 00 65 00 73 00 74 00
    20 00 55 00 73 00 65 00 72 00 00 00";

/// MC-DPL8CS 4, second frame: DN_SEND_CONNECT_INFO, a 372-byte message (UDP payload).
pub(super) const SEND_CONNECT_INFO: &str = "
    7F 00 01 02 C2 00 00 00 00 00 00 00 00 00 00 00
    50 00 00 00 04 00 00 00 00 00 00 00 02 00 00 00
    56 01 00 00 1A 00 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
    23 81 BE 94 AB A1 FB 48 A2 E7 23 85 9E 65 89 36
    DA 80 EF 61 1B 69 47 42 9A DD 1C 7B ED 2B C1 3E
    20 81 8E 94 03 00 00 00 00 00 00 00 02 00 00 00
    00 00 00 00 21 81 9E 94 00 00 00 00 02 01 00 00
    02 00 00 00 00 00 00 00 07 00 00 00 42 01 00 00
    14 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
    00 00 00 00 20 81 8E 94 00 00 00 00 00 01 00 00
    03 00 00 00 00 00 00 00 08 00 00 00 2E 01 00 00
    14 00 00 00 00 00 00 00 00 00 00 00 CC 00 00 00
    62 00 00 00 78 2D 64 69 72 65 63 74 70 6C 61 79
    3A 2F 70 72 6F 76 69 64 65 72 3D 25 37 42 45 42
    46 45 37 42 41 30 2D 36 32 38 44 2D 31 31 44 32
    2D 41 45 30 46 2D 30 30 36 30 39 37 42 30 31 34
    31 31 25 37 44 3B 68 6F 73 74 6E 61 6D 65 3D 36
    35 2E 35 32 2E 32 33 39 2E 36 31 3B 70 6F 72 74
    3D 32 33 30 32 00 54 00 65 00 73 00 74 00 20 00
    55 00 73 00 65 00 72 00 00 00 54 00 65 00 73 00
    74 00 20 00 55 00 73 00 65 00 72 00 00 00 54 00
    65 00 73 00 74 00 20 00 53 00 65 00 73 00 73 00
    69 00 6F 00 6E 00 00 00";

/// MC-DPL8CS 4, third frame: the DXDiag chat "HI THERE" with 400 bytes of buffer (UDP payload).
pub(super) const CHAT: &str = "
    3D 00 05 03 01 00 48 00 49 00 20 00 54 00 48 00
    45 00 52 00 45 00 00 00 4E 1C 3F 77 64 00 83 00
    00 00 00 00 FC 84 41 7E A4 85 41 7E 22 06 2B 00
    A6 88 41 7E BF 3D 3F 77 48 EF CF 00 D1 88 41 7E
    A8 1B 60 00 00 00 00 00 DA 88 41 7E A6 88 41 7E
    BF 3D 3F 77 00 00 00 00 24 EF CF 00 01 00 00 00
    FC EF CF 00 87 D3 00 00 78 EF CF 00 90 49 3F 77
    20 3E 01 05 C2 00 00 00 00 00 00 00 18 5E 69 4F
    BF 3D 3F 77 BF 3D 3F 77 00 00 00 00 0D 00 00 00
    00 01 00 00 58 5E A8 06 BF 3D 3F 77 01 00 00 00
    A4 EF CF 00 34 87 41 7E 22 06 2B 00 C2 00 00 00
    00 00 00 00 18 5E 69 4F BF 3D 3F 77 CD AB BA DC
    00 00 00 00 E0 EF CF 00 BF 3D 3F 77 0C F0 CF 00
    16 88 41 7E 00 90 FD 7F 0C F0 CF 00 5A 88 41 7E
    CC EF CF 00 2A 88 41 7E C2 00 00 00 A8 1B 60 00
    BC 1B 60 00 14 00 00 00 01 00 00 00 00 00 00 00
    00 00 00 00 10 00 00 00 00 00 00 00 30 88 41 7E
    00 00 00 00 00 00 00 00 01 00 00 00 C0 EF CF 00
    BF 3D 3F 77 5C F2 CF 00 57 04 44 7E C0 F1 CF 00
    08 00 00 00 C0 F1 CF 00 C0 F1 CF 00 C0 F1 CF 00
    30 F0 CF 00 85 38 6A 4F 09 00 00 00 C0 F1 CF 00
    08 00 00 00 58 5E A8 06 48 F0 CF 00 2E 3B 6A 4F
    58 5E A8 06 08 00 00 00 08 00 00 00 C0 F1 CF 00
    64 F0 CF 00 A6 3F 6A 4F 58 5E A8 06 08 00 00 00
    CE 3D 42 7E 8E 13 00 00 BA B8 41 7E 74 F0 CF 00
    BE 7A 6A 4F 00 00";

/// The DFRAME payload of a UDP payload, and whether USER_1 marks it a session message.
#[track_caller]
pub(super) fn dframe_payload(udp: &str) -> (Vec<u8>, bool) {
    let udp = bytes(udp);
    let (header, payload) = DframeHeader::parse(&udp, DframeContext::default()).expect("DFRAME header");
    (payload.to_vec(), header.command.contains(DframeCommand::USER_1))
}

/// The instance GUID of the MC-DPL8CS 4 session, `23 81 BE 94 …` on the wire.
pub(super) fn example_instance() -> Uuid {
    Uuid::from_bytes_le(bytes("23 81 BE 94 AB A1 FB 48 A2 E7 23 85 9E 65 89 36").try_into().unwrap())
}

/// The DXDiag application GUID {61EF80DA-691B-4247-9ADD-1C7BED2BC13E} (MS-DPDX 2.2.26).
pub(super) const DXDIAG_APP: Uuid = Uuid::from_u128(0x61EF80DA_691B_4247_9ADD_1C7BED2BC13E);

#[test]
fn mc_dpl8cs_4_player_connect_info_ex() {
    let (payload, user_1) = dframe_payload(CONNECT_INFO_EX);
    assert!(user_1);
    assert_eq!(payload.len(), 120);
    let msg = assert_reemits::<SessionMessage>(&payload);
    assert_eq!(msg.name(), "DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO_EX");
    assert_eq!(msg.dpdx_name(), Some("TRANS_USERDATA_PLAYER_CONNECT_INFO"));
    let SessionMessage::PlayerConnectInfo(m) = msg else { panic!("not PLAYER_CONNECT_INFO: {msg:?}") };
    assert_eq!(m.flags, ObjectType::DN_OBJECT_TYPE_PEER);
    assert_eq!(m.dnet_version, 8);
    assert!(m.is_ex());
    assert_eq!(m.name, Some(WideString::new("Test User")));
    assert_eq!((m.data.len(), m.password.clone(), m.connect_data.len(), m.url.clone()), (0, None, 0, None));
    assert_eq!(m.guid_instance, example_instance());
    assert_eq!(m.guid_application, DXDIAG_APP);
    assert_eq!(m.alternate_addresses, vec![AlternateAddress("65.52.239.61:2302".parse().unwrap())]);
    // Written in the diagram's order: alternate addresses at 0x58, then the name at 0x60.
    assert_eq!(m.layout, BlobLayout(None));
}

#[test]
fn mc_dpl8cs_4_send_connect_info() {
    let (payload, user_1) = dframe_payload(SEND_CONNECT_INFO);
    assert!(user_1);
    assert_eq!(payload.len(), 372);
    let msg = assert_reemits::<SessionMessage>(&payload);
    assert_eq!(msg.name(), "DN_SEND_CONNECT_INFO");
    assert_eq!(msg.dpdx_name(), Some("TRANS_USERDATA_SEND_SESSION_INFO"));
    let SessionMessage::SendConnectInfo(m) = msg else { panic!("not SEND_CONNECT_INFO: {msg:?}") };
    let instance = example_instance();
    assert_eq!(m.flags, ApplicationDescFlags::MIGRATE_HOST);
    assert_eq!((m.max_players, m.current_players), (0, 2));
    assert_eq!(m.session_name, Some(WideString::new("Test Session")));
    assert_eq!(
        (m.password.clone(), m.reply.len(), m.reserved_data.len(), m.application_reserved_data.len()),
        (None, 0, 0, 0)
    );
    assert_eq!((m.guid_instance, m.guid_application), (instance, DXDIAG_APP));
    assert_eq!(m.dpnid, Dpnid(0x948E_8120));
    assert_eq!((m.version, m.version_not_used), (3, 0));
    assert_eq!((m.entries.len(), m.memberships.len()), (2, 0));

    let host = &m.entries[0];
    assert_eq!(host.dpnid, Dpnid(0x949E_8121));
    assert_eq!(host.dpnid.raw(&instance), 0x0020_0002);
    assert_eq!(host.flags, NameTableEntryFlags::HOST | NameTableEntryFlags::PEER);
    assert_eq!((host.version, host.dnet_version), (2, 7));
    assert_eq!(host.name, Some(WideString::new("Test User")));
    assert_eq!(host.url, None);

    let joiner = &m.entries[1];
    assert_eq!(joiner.dpnid, m.dpnid);
    assert_eq!(joiner.dpnid.raw(&instance), 0x0030_0003);
    assert_eq!(joiner.dpnid.version(&instance), joiner.version);
    assert_eq!(joiner.flags, NameTableEntryFlags::PEER);
    assert_eq!((joiner.version, joiner.dnet_version), (3, 8));
    assert_eq!(joiner.name, Some(WideString::new("Test User")));
    let url = joiner.url.as_ref().expect("joiner URL");
    assert_eq!(url.wire_len(), 98);
    assert_eq!(*url, AddressingUrl::from(&DirectPlayUrl::ip("65.52.239.61", 2302)));

    // Windows wrote the blobs from the end backwards (the joiner's URL and name come first):
    // that is our canonical order, so nothing is recorded.
    assert_eq!(m.layout, BlobLayout(None));
}

/// MC-DPL8CS 4 (item 9 of issue 13): the example's value, laid out by us, is the example's
/// bytes: the entries' blobs last entry first, then SessionName.
#[test]
fn send_connect_info_packed_as_the_example() {
    let (payload, _) = dframe_payload(SEND_CONNECT_INFO);
    let SessionMessage::SendConnectInfo(mut m) = SessionMessage::parse(&payload).unwrap() else { panic!() };
    m.layout = BlobLayout(None);
    assert_eq!(SessionMessage::SendConnectInfo(m).to_vec().unwrap(), payload);
}

#[test]
fn mc_dpl8cs_4_chat() {
    let (payload, user_1) = dframe_payload(CHAT);
    assert!(!user_1, "chat is application data: USER_1 clear (MS-DPDX 2.2.31)");
    assert_eq!(payload.len(), CHAT_MESSAGE_LEN);
    let chat = assert_reemits::<ChatMessage>(&payload);
    assert_eq!(chat.text(), "HI THERE");
}
