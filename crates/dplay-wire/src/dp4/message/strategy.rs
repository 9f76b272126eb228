//! proptest strategies for every DP4 body, and one sample message per command for snapshots.

use std::net::{Ipv4Addr, SocketAddrV4};

use proptest::collection::vec;
use proptest::prelude::*;
use uuid::Uuid;

use super::*;
use crate::WideString;
use crate::dp4::enumeration::EnumSessionsFlags;
use crate::dp4::header::{SockAddrIn, Token};
use crate::dp4::join::{CreateReserved, RequestGroupFlags, RequestPlayerFlags};
use crate::dp4::player::{Counted, LenWidth, PackedPlayer, SuperPackedPlayer};
use crate::dp4::routing::ChatFlags;
use crate::dp4::security::SignedFlags;
use crate::dp4::session::{PlayerFlags, SecurityDesc, SessionDesc2, SessionFlags};

fn guid() -> impl Strategy<Value = Uuid> {
    any::<u128>().prop_map(Uuid::from_u128)
}

fn blob() -> impl Strategy<Value = Blob> {
    vec(any::<u8>(), 0..24).prop_map(Blob)
}

fn wide() -> impl Strategy<Value = WideString> {
    vec(1..=u16::MAX, 0..8).prop_map(WideString::from_units)
}

fn opt_wide() -> impl Strategy<Value = Option<WideString>> {
    proptest::option::of(wide())
}

fn ids() -> impl Strategy<Value = Vec<u32>> {
    vec(any::<u32>(), 0..5)
}

fn session_desc() -> impl Strategy<Value = SessionDesc2> {
    (any::<[u32; 4]>(), guid(), guid(), any::<[u32; 6]>()).prop_map(
        |([size, flags, max_players, current_player_count], instance_guid, application_guid, rest)| {
            let [session_name, password, reserved1, reserved2, a1, a2] = rest;
            SessionDesc2 {
                size,
                flags: SessionFlags::from_bits_retain(flags),
                instance_guid,
                application_guid,
                max_players,
                current_player_count,
                session_name,
                password,
                reserved1,
                reserved2,
                application_defined: [a1, a2, a1 ^ a2, 4],
            }
        },
    )
}

fn security_desc() -> impl Strategy<Value = SecurityDesc> {
    any::<[u32; 6]>().prop_map(|[size, flags, sspi, capi, kind, alg]| SecurityDesc {
        size,
        flags,
        sspi_provider: sspi,
        capi_provider: capi,
        capi_provider_type: kind,
        encryption_algorithm: alg,
    })
}

pub(super) fn packed_player() -> impl Strategy<Value = PackedPlayer> {
    (any::<[u32; 5]>(), opt_wide(), opt_wide(), blob(), blob(), ids(), any::<bool>()).prop_map(
        |(
            [flags, player_id, system_player_id, player_version, parent_id],
            short_name,
            long_name,
            sp_data,
            player_data,
            player_ids,
            counts,
        )| {
            PackedPlayer {
                flags: PlayerFlags::from_bits_retain(flags),
                player_id,
                system_player_id,
                player_version,
                parent_id,
                short_name,
                long_name,
                sp_data,
                player_data,
                size_counts_player_ids: counts && !player_ids.is_empty(),
                player_ids,
            }
        },
    )
}

fn width() -> impl Strategy<Value = LenWidth> {
    prop_oneof![Just(LenWidth::One), Just(LenWidth::Two), Just(LenWidth::Four)]
}

fn counted<T: std::fmt::Debug + Clone>(
    value: impl Strategy<Value = T>,
) -> impl Strategy<Value = Option<Counted<T>>> {
    proptest::option::of((width(), value).prop_map(|(width, value)| Counted { width, value }))
}

pub(super) fn super_packed_player() -> impl Strategy<Value = SuperPackedPlayer> {
    (
        any::<[u32; 3]>(),
        opt_wide(),
        opt_wide(),
        counted(blob()),
        counted(blob()),
        counted(ids()),
        proptest::option::of(any::<u32>()),
        counted(ids()),
    )
        .prop_map(
            |(
                [flags, id, version],
                short_name,
                long_name,
                player_data,
                sp_data,
                player_ids,
                parent_id,
                shortcut_ids,
            )| {
                SuperPackedPlayer {
                    flags: PlayerFlags::from_bits_retain(flags),
                    id,
                    version_or_system_player_id: version,
                    short_name,
                    long_name,
                    player_data,
                    sp_data,
                    player_ids,
                    parent_id,
                    shortcut_ids,
                }
            },
        )
}

fn player_info_message() -> impl Strategy<Value = PlayerInfoMessage> {
    (any::<[u32; 4]>(), packed_player(), proptest::option::of(any::<(u16, u32)>())).prop_map(
        |([id_to, player_id, group_id, password_offset], player_info, reserved)| PlayerInfoMessage {
            id_to,
            player_id,
            group_id,
            password_offset,
            player_info,
            reserved: reserved.map(|(reserved1, reserved2)| CreateReserved { reserved1, reserved2 }),
        },
    )
}

fn player_group_ids() -> impl Strategy<Value = PlayerGroupIds> {
    any::<[u32; 5]>().prop_map(|[id_to, player_id, group_id, create_offset, password_offset]| {
        PlayerGroupIds { id_to, player_id, group_id, create_offset, password_offset }
    })
}

fn group_group_ids() -> impl Strategy<Value = GroupGroupIds> {
    any::<[u32; 5]>().prop_map(|[id_to, child_group_id, parent_group_id, create_offset, password_offset]| {
        GroupGroupIds { id_to, child_group_id, parent_group_id, create_offset, password_offset }
    })
}

fn data_changed() -> impl Strategy<Value = DataChanged> {
    (any::<u32>(), any::<u32>(), blob()).prop_map(|(id_to, id, data)| DataChanged { id_to, id, data })
}

fn name_changed() -> impl Strategy<Value = NameChanged> {
    (any::<u32>(), any::<u32>(), opt_wide(), opt_wide())
        .prop_map(|(id_to, id, short_name, long_name)| NameChanged { id_to, id, short_name, long_name })
}

fn security_token() -> impl Strategy<Value = SecurityToken> {
    (any::<u32>(), blob()).prop_map(|(id_from, security_token)| SecurityToken { id_from, security_token })
}

fn multicast() -> impl Strategy<Value = Multicast> {
    (any::<u32>(), any::<u32>(), blob()).prop_map(|(group_to, player_from, message)| Multicast {
        group_to,
        player_from,
        message,
    })
}

fn ping() -> impl Strategy<Value = Ping> {
    (any::<u32>(), any::<u32>()).prop_map(|(id_from, tick_count)| Ping { id_from, tick_count })
}

fn other_command() -> impl Strategy<Value = Command> {
    prop_oneof![prop::sample::select(vec![0x0A, 0x14, 0x1B, 0x23, 0x2A, 0x32, 0x33, 0x34]), 0x39..=u16::MAX,]
        .prop_map(Command)
}

fn enumeration_body() -> impl Strategy<Value = Dp4Body> {
    prop_oneof![
        (session_desc(), opt_wide()).prop_map(|(session_desc, session_name)| Dp4Body::EnumSessionsReply(
            EnumSessionsReply { session_desc, session_name }
        )),
        (guid(), any::<u32>(), opt_wide()).prop_map(|(application_guid, flags, password)| {
            Dp4Body::EnumSessions(EnumSessions {
                application_guid,
                flags: EnumSessionsFlags::from_bits_retain(flags),
                password,
            })
        }),
        (
            any::<u32>(),
            session_desc(),
            opt_wide(),
            opt_wide(),
            vec(packed_player(), 0..3),
            vec(packed_player(), 0..2)
        )
            .prop_map(|(shortcut_count, session_desc, session_name, password, players, groups)| {
                Dp4Body::EnumPlayersReply(EnumPlayersReply {
                    shortcut_count,
                    session_desc,
                    session_name,
                    password,
                    players,
                    groups,
                })
            }),
        (
            session_desc(),
            opt_wide(),
            opt_wide(),
            vec(super_packed_player(), 0..3),
            vec(super_packed_player(), 0..2),
            vec(super_packed_player(), 0..2)
        )
            .prop_map(|(session_desc, session_name, password, players, groups, shortcuts)| {
                Dp4Body::SuperEnumPlayersReply(SuperEnumPlayersReply {
                    session_desc,
                    session_name,
                    password,
                    players,
                    groups,
                    shortcuts,
                })
            }),
        Just(Dp4Body::EnumPlayer(Empty)),
    ]
}

fn join_body() -> impl Strategy<Value = Dp4Body> {
    prop_oneof![
        any::<u32>().prop_map(|f| Dp4Body::RequestPlayerId(RequestPlayerId {
            flags: RequestPlayerFlags::from_bits_retain(f)
        })),
        any::<u32>().prop_map(|f| Dp4Body::RequestGroupId(RequestGroupId {
            flags: RequestGroupFlags::from_bits_retain(f)
        })),
        (any::<[u32; 2]>(), security_desc(), opt_wide(), opt_wide()).prop_map(
            |([id, result], sec_desc, sspi_provider, capi_provider)| Dp4Body::RequestPlayerReply(
                RequestPlayerReply { id, sec_desc, result, sspi_provider, capi_provider }
            )
        ),
        player_info_message().prop_map(Dp4Body::CreatePlayer),
        player_info_message().prop_map(Dp4Body::CreateGroup),
        player_info_message().prop_map(Dp4Body::AddForward),
        player_info_message().prop_map(Dp4Body::CreatePlayerVerify),
        (any::<[u32; 4]>(), packed_player(), opt_wide()).prop_map(
            |([id_to, player_id, group_id, tick_count], player_info, password)| Dp4Body::AddForwardRequest(
                AddForwardRequest { id_to, player_id, group_id, player_info, password, tick_count }
            )
        ),
        any::<u32>().prop_map(|v| Dp4Body::AddForwardAck(Dword(v))),
        any::<u32>().prop_map(|v| Dp4Body::AddForwardReply(Dword(v))),
        (any::<[u32; 3]>(), blob()).prop_map(|([id_to, id_host, flags], sp_data)| Dp4Body::IAmNameServer(
            IAmNameServer { id_to, id_host, flags: PlayerFlags::from_bits_retain(flags), sp_data }
        )),
    ]
}

fn nametable_body() -> impl Strategy<Value = Dp4Body> {
    prop_oneof![
        player_group_ids().prop_map(Dp4Body::DeletePlayer),
        player_group_ids().prop_map(Dp4Body::DeleteGroup),
        player_group_ids().prop_map(Dp4Body::AddPlayerToGroup),
        player_group_ids().prop_map(Dp4Body::DeletePlayerFromGroup),
        group_group_ids().prop_map(Dp4Body::AddShortcutToGroup),
        group_group_ids().prop_map(Dp4Body::DeleteGroupFromGroup),
        data_changed().prop_map(Dp4Body::PlayerDataChanged),
        data_changed().prop_map(Dp4Body::GroupDataChanged),
        name_changed().prop_map(Dp4Body::PlayerNameChanged),
        name_changed().prop_map(Dp4Body::GroupNameChanged),
        (any::<u32>(), session_desc(), opt_wide(), opt_wide()).prop_map(
            |(id_to, session_desc, session_name, password)| Dp4Body::SessionDescChanged(SessionDescChanged {
                id_to,
                session_desc,
                session_name,
                password
            })
        ),
    ]
}

fn security_body() -> impl Strategy<Value = Dp4Body> {
    prop_oneof![
        security_token().prop_map(Dp4Body::Negotiate),
        security_token().prop_map(Dp4Body::Challenge),
        security_token().prop_map(Dp4Body::ChallengeResponse),
        blob().prop_map(|public_key| Dp4Body::AccessGranted(AccessGranted { public_key })),
        Just(Dp4Body::LogonDenied(Empty)),
        any::<u32>().prop_map(|v| Dp4Body::AuthError(Dword(v))),
        (blob(), blob()).prop_map(|(session_key, public_key)| Dp4Body::KeyExchange(KeyExchange {
            session_key,
            public_key
        })),
        (blob(), any::<u32>(), any::<u32>()).prop_map(|(session_key, public_key_size, public_key_offset)| {
            Dp4Body::KeyExchangeReply(KeyExchangeReply { session_key, public_key_size, public_key_offset })
        }),
        (any::<u32>(), any::<u32>(), blob(), blob()).prop_map(|(id_from, flags, message, signature)| {
            Dp4Body::Signed(Signed {
                id_from,
                flags: SignedFlags::from_bits_retain(flags),
                message,
                signature,
            })
        }),
    ]
}

fn routing_body() -> impl Strategy<Value = Dp4Body> {
    prop_oneof![
        ping().prop_map(Dp4Body::Ping),
        ping().prop_map(Dp4Body::PingReply),
        Just(Dp4Body::YouAreDead(Empty)),
        blob().prop_map(|player_message| Dp4Body::PlayerWrapper(PlayerWrapper { player_message })),
        multicast().prop_map(Dp4Body::Ask4Multicast),
        multicast().prop_map(Dp4Body::Ask4MulticastGuaranteed),
        multicast().prop_map(Dp4Body::MulticastDelivery),
        (any::<[u32; 3]>(), opt_wide()).prop_map(|([id_from, id_to, flags], chat_message)| Dp4Body::Chat(
            Chat { id_from, id_to, flags: ChatFlags::from_bits_retain(flags), chat_message }
        )),
        (any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(id_from, id_to, n)| Dp4Body::Voice(Voice {
            id_from,
            id_to,
            message: crate::voice::VoiceMessage::DeleteVoicePlayer { dvid: crate::voice::Dvid(n.into()) }
        })),
        crate::dp4::fragment::tests::fragment().prop_map(Dp4Body::Packet),
        crate::dp4::fragment::tests::fragment().prop_map(Dp4Body::Packet2Data),
        crate::dp4::fragment::tests::packet_ack().prop_map(Dp4Body::Packet2Ack),
        (other_command(), blob()).prop_map(|(command, data)| Dp4Body::Other { command, data }),
    ]
}

/// Any body.
pub(super) fn body() -> impl Strategy<Value = Dp4Body> {
    prop_oneof![enumeration_body(), join_body(), nametable_body(), security_body(), routing_body()]
}

pub(super) fn sock_addr() -> impl Strategy<Value = SockAddrIn> {
    (any::<u16>(), any::<u32>(), any::<u16>()).prop_map(|(family, ip, port)| SockAddrIn {
        family,
        addr: SocketAddrV4::new(Ipv4Addr::from(ip), port),
    })
}

/// Any full-header message.
pub(super) fn message() -> impl Strategy<Value = Dp4Message> {
    (0..=0xFFFu16, sock_addr(), any::<u16>(), body())
        .prop_map(|(token, sock_addr, version, body)| Dp4Message::new(Token(token), sock_addr, version, body))
}
