//! proptest strategies, one per message, and the properties every message must have:
//! `parse(emit(x)) == x`, `emit(x).len() == encoded_len()`, any layout order re-parses, and
//! parsing arbitrary bytes never panics.

use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};

use proptest::collection::vec;
use proptest::prelude::*;
use uuid::Uuid;

use super::super::*;
use crate::dp8::alternate_address::AlternateAddress;
use crate::dp8::url::AddressingUrl;
use crate::testutil::assert_roundtrip;
use crate::text::{Blob, WideString};

fn dpnid() -> impl Strategy<Value = Dpnid> {
    any::<u32>().prop_map(Dpnid)
}

fn guid() -> impl Strategy<Value = Uuid> {
    any::<u128>().prop_map(Uuid::from_u128)
}

fn wide() -> impl Strategy<Value = Option<WideString>> {
    proptest::option::of(vec(1u16.., 0..6).prop_map(WideString::from_units))
}

fn blob() -> impl Strategy<Value = Blob> {
    vec(any::<u8>(), 0..10).prop_map(Blob)
}

fn url() -> impl Strategy<Value = Option<AddressingUrl>> {
    proptest::option::of(vec(1u8.., 0..12).prop_map(|b| AddressingUrl::new(&b).unwrap()))
}

fn alternate_addresses() -> impl Strategy<Value = Vec<AlternateAddress>> {
    let one = (any::<bool>(), any::<[u8; 16]>(), any::<u16>()).prop_map(|(v4, ip, port)| {
        AlternateAddress(if v4 {
            SocketAddr::V4(SocketAddrV4::new([ip[0], ip[1], ip[2], ip[3]].into(), port))
        } else {
            SocketAddr::V6(SocketAddrV6::new(ip.into(), port, 0, 0))
        })
    });
    vec(one, 0..=12)
}

pub(super) fn player_connect_info() -> impl Strategy<Value = PlayerConnectInfo> {
    (any::<u32>(), 1u32..10, wide(), blob(), wide(), blob(), url(), guid(), guid(), alternate_addresses())
        .prop_map(
            |(
                flags,
                dnet_version,
                name,
                data,
                password,
                connect_data,
                url,
                guid_instance,
                guid_application,
                alt,
            )| {
                PlayerConnectInfo {
                    flags: ObjectType(flags),
                    dnet_version,
                    name,
                    data,
                    password,
                    connect_data,
                    url,
                    guid_instance,
                    guid_application,
                    alternate_addresses: if dnet_version >= DNET_VERSION_EX { alt } else { Vec::new() },
                    layout: BlobLayout(None),
                }
            },
        )
}

fn entry() -> impl Strategy<Value = NameTableEntry> {
    (dpnid(), dpnid(), any::<u32>(), any::<[u32; 3]>(), wide(), blob(), url()).prop_map(
        |(dpnid, dpnid_owner, flags, [version, version_not_used, dnet_version], name, data, url)| {
            NameTableEntry {
                dpnid,
                dpnid_owner,
                flags: NameTableEntryFlags::from_bits_retain(flags),
                version,
                version_not_used,
                dnet_version,
                name,
                data,
                url,
            }
        },
    )
}

fn membership() -> impl Strategy<Value = NameTableMembership> {
    (dpnid(), dpnid(), any::<u32>()).prop_map(|(p, g, v)| NameTableMembership::new(p, g, v))
}

pub(super) fn send_connect_info() -> impl Strategy<Value = SendConnectInfo> {
    (
        (blob(), any::<[u32; 3]>(), wide(), wide(), blob(), blob()),
        (guid(), guid(), dpnid(), any::<[u32; 2]>()),
        (vec(entry(), 0..4), vec(membership(), 0..3)),
    )
        .prop_map(
            |(
                (
                    reply,
                    [flags, max_players, current_players],
                    session_name,
                    password,
                    reserved_data,
                    app_reserved,
                ),
                (guid_instance, guid_application, dpnid, [version, version_not_used]),
                (entries, memberships),
            )| SendConnectInfo {
                reply,
                flags: ApplicationDescFlags::from_bits_retain(flags),
                max_players,
                current_players,
                session_name,
                password,
                reserved_data,
                application_reserved_data: app_reserved,
                guid_instance,
                guid_application,
                dpnid,
                version,
                version_not_used,
                entries,
                memberships,
                layout: BlobLayout(None),
            },
        )
}

pub(super) fn add_player() -> impl Strategy<Value = AddPlayer> {
    entry().prop_map(|entry| AddPlayer { entry, layout: BlobLayout(None) })
}

fn version_info() -> impl Strategy<Value = VersionInfo> {
    (1u32.., any::<u32>()).prop_map(|(version, version_not_used)| VersionInfo { version, version_not_used })
}

fn instruct_connect() -> impl Strategy<Value = InstructConnect> {
    (dpnid(), any::<u32>(), any::<u32>()).prop_map(|(dpnid, version, version_not_used)| InstructConnect {
        dpnid,
        version,
        version_not_used,
    })
}

fn destroy_player() -> impl Strategy<Value = DestroyPlayer> {
    (dpnid(), any::<[u32; 3]>()).prop_map(|(dpnid_leaving, [version, version_not_used, reason])| {
        DestroyPlayer { dpnid_leaving, version, version_not_used, destroy_reason: DestroyReason(reason) }
    })
}

fn create_group() -> impl Strategy<Value = CreateGroup> {
    (dpnid(), any::<u32>(), proptest::option::of(entry())).prop_map(
        |(dpnid_requesting, packet_context, group)| CreateGroup {
            dpnid_requesting,
            packet_context,
            group,
            layout: BlobLayout(None),
        },
    )
}

fn destroy_group() -> impl Strategy<Value = DestroyGroup> {
    (dpnid(), any::<[u32; 2]>(), dpnid(), any::<u32>()).prop_map(
        |(dpnid_group, [version, version_not_used], dpnid_requesting, packet_context)| DestroyGroup {
            dpnid_group,
            version,
            version_not_used,
            dpnid_requesting,
            packet_context,
        },
    )
}

fn group_member() -> impl Strategy<Value = GroupMember> {
    (dpnid(), dpnid(), any::<[u32; 2]>(), dpnid(), any::<u32>()).prop_map(
        |(dpnid_group, dpnid_player, [version, version_not_used], dpnid_requesting, packet_context)| {
            GroupMember {
                dpnid_group,
                dpnid_player,
                version,
                version_not_used,
                dpnid_requesting,
                packet_context,
            }
        },
    )
}

fn req_group_member() -> impl Strategy<Value = ReqGroupMember> {
    (any::<u32>(), dpnid(), dpnid()).prop_map(|(packet_context, dpnid_group, dpnid_player)| ReqGroupMember {
        packet_context,
        dpnid_group,
        dpnid_player,
    })
}

fn req_create_group() -> impl Strategy<Value = ReqCreateGroup> {
    (any::<[u32; 3]>(), wide(), blob()).prop_map(|([packet_context, group, info], name, data)| {
        ReqCreateGroup {
            packet_context,
            group_flags: GroupFlags::from_bits_retain(group),
            info_flags: InfoFlags::from_bits_retain(info),
            name,
            data,
            layout: BlobLayout(None),
        }
    })
}

fn req_update_info() -> impl Strategy<Value = ReqUpdateInfo> {
    (any::<u32>(), dpnid(), any::<u32>(), wide(), blob()).prop_map(
        |(packet_context, dpnid, info, name, data)| ReqUpdateInfo {
            packet_context,
            dpnid,
            info_flags: InfoFlags::from_bits_retain(info),
            name,
            data,
            layout: BlobLayout(None),
        },
    )
}

pub(super) fn update_info() -> impl Strategy<Value = UpdateInfo> {
    (any::<[u32; 4]>(), dpnid(), dpnid(), wide(), blob()).prop_map(
        |([packet_context, version, version_not_used, info], dpnid, dpnid_requesting, name, data)| {
            UpdateInfo {
                packet_context,
                dpnid,
                version,
                version_not_used,
                info_flags: InfoFlags::from_bits_retain(info),
                name,
                data,
                dpnid_requesting,
                layout: BlobLayout(None),
            }
        },
    )
}

fn name_table_op() -> impl Strategy<Value = NameTableOp> {
    prop_oneof![
        instruct_connect().prop_map(NameTableOp::InstructConnect),
        add_player().prop_map(NameTableOp::AddPlayer),
        destroy_player().prop_map(NameTableOp::DestroyPlayer),
        create_group().prop_map(NameTableOp::CreateGroup),
        destroy_group().prop_map(NameTableOp::DestroyGroup),
        group_member().prop_map(NameTableOp::AddPlayerToGroup),
        group_member().prop_map(NameTableOp::DeletePlayerFromGroup),
        update_info().prop_map(NameTableOp::UpdateInfo),
    ]
}

pub(super) fn ack_name_table_op() -> impl Strategy<Value = AckNameTableOp> {
    vec(name_table_op(), 0..4).prop_map(|ops| AckNameTableOp { ops, layout: BlobLayout(None) })
}

/// Every session message.
pub(super) fn session_message() -> impl Strategy<Value = SessionMessage> {
    use SessionMessage as M;
    prop_oneof![
        player_connect_info().prop_map(M::PlayerConnectInfo),
        send_connect_info().prop_map(|m| M::SendConnectInfo(Box::new(m))),
        Just(M::AckConnectInfo),
        dpnid().prop_map(|dpn_id| M::SendPlayerDpnid { dpn_id }),
        (any::<u32>(), blob()).prop_map(|(code, reply)| M::ConnectFailed(ConnectFailed {
            result_code: ResultCode(code),
            reply
        })),
        instruct_connect().prop_map(M::InstructConnect),
        dpnid().prop_map(|dpn_id| M::InstructedConnectFailed { dpn_id }),
        dpnid().prop_map(|dpn_id| M::ConnectAttemptFailed { dpn_id }),
        version_info().prop_map(M::NameTableVersion),
        version_info().prop_map(M::ResyncVersion),
        version_info().prop_map(M::ReqNameTableOp),
        ack_name_table_op().prop_map(M::AckNameTableOp),
        (dpnid(), dpnid())
            .prop_map(|(o, n)| M::HostMigrate(HostMigrate { dpnid_old_host: o, dpnid_new_host: n })),
        Just(M::HostMigrateComplete),
        add_player().prop_map(M::AddPlayer),
        destroy_player().prop_map(M::DestroyPlayer),
        req_create_group().prop_map(M::ReqCreateGroup),
        req_group_member().prop_map(M::ReqAddPlayerToGroup),
        req_group_member().prop_map(M::ReqDeletePlayerFromGroup),
        req_group_member().prop_map(M::ReqDestroyGroup),
        req_update_info().prop_map(M::ReqUpdateInfo),
        create_group().prop_map(M::CreateGroup),
        destroy_group().prop_map(M::DestroyGroup),
        group_member().prop_map(M::AddPlayerToGroup),
        group_member().prop_map(M::DeletePlayerFromGroup),
        update_info().prop_map(M::UpdateInfo),
        blob().prop_map(|terminate_data| M::TerminateSession(TerminateSession { terminate_data })),
        (any::<u32>(), blob()).prop_map(|(packet_context, payload)| M::ReqProcessCompletion(
            ReqProcessCompletion { packet_context, payload }
        )),
        any::<u32>().prop_map(|packet_context| M::ProcessCompletion(ProcessCompletion { packet_context })),
        (any::<u32>(), dpnid()).prop_map(|(req_context, dpnid_target)| M::ReqIntegrityCheck(
            ReqIntegrityCheck { req_context, dpnid_target }
        )),
        dpnid().prop_map(|dpnid_requesting| M::IntegrityCheck(IntegrityCheck { dpnid_requesting })),
        dpnid().prop_map(|dpnid_requesting| M::IntegrityCheckResponse(IntegrityCheck { dpnid_requesting })),
    ]
}

/// A message with its blobs in a random order (recorded in its layout).
fn shuffled_message() -> impl Strategy<Value = SessionMessage> {
    session_message()
        .prop_flat_map(|msg| {
            let fields = msg.blob_fields();
            (Just(msg), Just(fields).prop_shuffle())
        })
        .prop_map(|(mut msg, order)| {
            let canonical = msg.blob_fields();
            if let Some(layout) = msg.layout_mut() {
                // A canonical order is recorded as None, as parsing does.
                *layout = BlobLayout((order != canonical).then_some(order));
            }
            msg
        })
}

/// Arbitrary bytes behind a known `dwPacketType`, so every body parser sees garbage.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    (proptest::sample::select(PacketType::ALL), vec(any::<u8>(), 0..160)).prop_map(|(t, mut body)| {
        let mut out = t.0.to_le_bytes().to_vec();
        out.append(&mut body);
        out
    })
}

proptest! {
    #[test]
    fn roundtrip(msg in session_message()) {
        assert_roundtrip(&msg);
    }

    #[test]
    fn roundtrip_any_blob_order(msg in shuffled_message()) {
        assert_roundtrip(&msg);
    }

    #[test]
    fn parse_never_panics(data in garbage()) {
        if let Ok(msg) = SessionMessage::parse(&data) {
            // Whatever parses re-emits byte for byte.
            prop_assert_eq!(msg.to_vec().unwrap(), data);
        }
    }

    #[test]
    fn parse_never_panics_raw(data in vec(any::<u8>(), 0..64)) {
        let _ = SessionMessage::parse(&data);
        let _ = ChatMessage::parse(&data);
    }

    #[test]
    fn chat_roundtrip(units in vec(any::<u16>(), CHAT_STRING_UNITS)) {
        let chat = ChatMessage::from_units(units.try_into().unwrap());
        assert_roundtrip(&chat);
    }
}
