//! MC-DPL8CS 4: every byte example, as UDP payloads (DFRAME header + message). MS-DPDX 4 has
//! no hex dumps (its 4.1-4.3 are prose and a sequence diagram).

use uuid::Uuid;

use super::super::*;
use crate::dp8::alternate_address::AlternateAddress;
use crate::dp8::dframe::{DframeCommand, DframeContext, DframeHeader};
use crate::dp8::url::{AddressingUrl, DirectPlayUrl};
use crate::testutil::{assert_reemits, bytes};
use crate::text::WideString;

/// MC-DPL8CS 4's three frames (UDP payloads): PLAYER_CONNECT_INFO_EX, SEND_CONNECT_INFO (a
/// 372-byte message) and the DXDiag chat "HI THERE" with 400 bytes of buffer.
pub(super) use dplay_spec_examples::mc_dpl8cs_4::{
    CHAT_FRAME as CHAT, CONNECT_INFO_EX_FRAME as CONNECT_INFO_EX,
    SEND_CONNECT_INFO_FRAME as SEND_CONNECT_INFO,
};

/// The DFRAME payload of a UDP payload, and whether USER_1 marks it a session message.
#[track_caller]
pub(super) fn dframe_payload(udp: &str) -> (Vec<u8>, bool) {
    let udp = bytes(udp);
    let (header, payload) = DframeHeader::parse(&udp, DframeContext::default()).expect("DFRAME header");
    (payload.to_vec(), header.command.contains(DframeCommand::USER_1))
}

/// The instance GUID of the MC-DPL8CS 4 session, `23 81 BE 94 …` on the wire.
pub(super) fn example_instance() -> Uuid {
    Uuid::from_bytes_le(dplay_spec_examples::mc_dpl8cs_4::INSTANCE)
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
