//! One insta snapshot per message type: a spec-style hex dump, then the decoded value.

use super::super::*;
use super::examples::{CHAT, CONNECT_INFO_EX, SEND_CONNECT_INFO, dframe_payload, example_instance};
use crate::dp8::url::{AddressingUrl, DirectPlayUrl};
use crate::testutil::snapshot_text;
use crate::text::{Blob, WideString};

#[track_caller]
fn snap(msg: SessionMessage) {
    let name = msg.name();
    insta::assert_snapshot!(name, snapshot_text(&msg));
}

fn host() -> Dpnid {
    Dpnid::new(2, 2, &example_instance())
}

fn joiner() -> Dpnid {
    Dpnid::new(3, 3, &example_instance())
}

fn from_example(udp: &str) -> SessionMessage {
    SessionMessage::parse(&dframe_payload(udp).0).unwrap()
}

#[test]
fn connect_messages() {
    snap(from_example(CONNECT_INFO_EX));
    let SessionMessage::PlayerConnectInfo(ex) = from_example(CONNECT_INFO_EX) else { panic!() };
    snap(SessionMessage::PlayerConnectInfo(PlayerConnectInfo {
        flags: ObjectType::DN_OBJECT_TYPE_CLIENT,
        dnet_version: 6,
        password: Some(WideString::new("pw")),
        url: Some(AddressingUrl::from(&DirectPlayUrl::ip("10.0.0.2", 2302))),
        alternate_addresses: Vec::new(),
        ..ex
    }));
    snap(from_example(SEND_CONNECT_INFO));
    snap(SessionMessage::AckConnectInfo);
    snap(SessionMessage::SendPlayerDpnid { dpn_id: host() });
    snap(SessionMessage::ConnectFailed(ConnectFailed {
        result_code: ResultCode::DPNERR_HOSTREJECTEDCONNECTION,
        reply: Blob::new(b"full"),
    }));
    snap(SessionMessage::InstructConnect(InstructConnect {
        dpnid: joiner(),
        version: 3,
        version_not_used: 0,
    }));
    snap(SessionMessage::InstructedConnectFailed { dpn_id: joiner() });
    snap(SessionMessage::ConnectAttemptFailed { dpn_id: host() });
}

fn joiner_entry() -> NameTableEntry {
    let SessionMessage::SendConnectInfo(m) = from_example(SEND_CONNECT_INFO) else { panic!() };
    m.entries[1].clone()
}

#[test]
fn name_table_messages() {
    let version = VersionInfo { version: 4, version_not_used: 0 };
    snap(SessionMessage::NameTableVersion(version));
    snap(SessionMessage::ResyncVersion(version));
    snap(SessionMessage::ReqNameTableOp(version));
    let add = AddPlayer { entry: joiner_entry(), layout: BlobLayout(None) };
    snap(SessionMessage::AddPlayer(add.clone()));
    let destroy = DestroyPlayer {
        dpnid_leaving: host(),
        version: 4,
        version_not_used: 0,
        destroy_reason: DestroyReason::DPNDESTROYPLAYERREASON_CONNECTIONLOST,
    };
    snap(SessionMessage::AckNameTableOp(AckNameTableOp {
        ops: vec![NameTableOp::AddPlayer(add), NameTableOp::DestroyPlayer(destroy)],
        layout: BlobLayout(None),
    }));
    snap(SessionMessage::DestroyPlayer(destroy));
    snap(SessionMessage::HostMigrate(HostMigrate { dpnid_old_host: host(), dpnid_new_host: joiner() }));
    snap(SessionMessage::HostMigrateComplete);
    snap(SessionMessage::TerminateSession(TerminateSession { terminate_data: Blob::new(b"bye") }));
}

#[test]
fn group_messages() {
    let group = Dpnid::new(4, 4, &example_instance());
    snap(SessionMessage::ReqCreateGroup(ReqCreateGroup {
        packet_context: 7,
        group_flags: GroupFlags::AUTODESTRUCT,
        info_flags: InfoFlags::NAME | InfoFlags::DATA,
        name: Some(WideString::new("Team")),
        data: Blob::new(&[1, 2]),
        layout: BlobLayout(None),
    }));
    let req = ReqGroupMember { packet_context: 8, dpnid_group: group, dpnid_player: joiner() };
    snap(SessionMessage::ReqAddPlayerToGroup(req));
    snap(SessionMessage::ReqDeletePlayerFromGroup(req));
    snap(SessionMessage::ReqDestroyGroup(req));
    // With the group's entry, as we send it (the printed form: `rejects.rs`' byte test).
    snap(SessionMessage::CreateGroup(CreateGroup {
        dpnid_requesting: joiner(),
        packet_context: 7,
        group: Some(NameTableEntry {
            dpnid: group,
            dpnid_owner: joiner(),
            flags: NameTableEntryFlags::GROUP,
            version: 5,
            version_not_used: 0,
            dnet_version: 0,
            name: Some(WideString::new("Team")),
            data: Blob::new(&[1, 2]),
            url: None,
        }),
        layout: BlobLayout(None),
    }));
    snap(SessionMessage::DestroyGroup(DestroyGroup {
        dpnid_group: group,
        version: 6,
        version_not_used: 0,
        dpnid_requesting: joiner(),
        packet_context: 8,
    }));
    let member = GroupMember {
        dpnid_group: group,
        dpnid_player: joiner(),
        version: 5,
        version_not_used: 0,
        dpnid_requesting: host(),
        packet_context: 8,
    };
    snap(SessionMessage::AddPlayerToGroup(member));
    snap(SessionMessage::DeletePlayerFromGroup(member));
}

#[test]
fn other_messages() {
    snap(SessionMessage::ReqUpdateInfo(ReqUpdateInfo {
        packet_context: 9,
        dpnid: joiner(),
        info_flags: InfoFlags::NAME,
        name: Some(WideString::new("New")),
        data: Blob::default(),
        layout: BlobLayout(None),
    }));
    snap(SessionMessage::UpdateInfo(UpdateInfo {
        packet_context: 9,
        dpnid: joiner(),
        version: 5,
        version_not_used: 0,
        info_flags: InfoFlags::NAME,
        name: Some(WideString::new("New")),
        data: Blob::default(),
        dpnid_requesting: joiner(),
        layout: BlobLayout(None),
    }));
    snap(SessionMessage::ReqProcessCompletion(ReqProcessCompletion {
        packet_context: 10,
        payload: Blob::new(b"ABC"),
    }));
    snap(SessionMessage::ProcessCompletion(ProcessCompletion { packet_context: 10 }));
    snap(SessionMessage::ReqIntegrityCheck(ReqIntegrityCheck { req_context: 0, dpnid_target: host() }));
    snap(SessionMessage::IntegrityCheck(IntegrityCheck { dpnid_requesting: joiner() }));
    snap(SessionMessage::IntegrityCheckResponse(IntegrityCheck { dpnid_requesting: joiner() }));
}

#[test]
fn chat_message() {
    let chat = ChatMessage::parse(&dframe_payload(CHAT).0).unwrap();
    insta::assert_snapshot!("TRANS_USERDATA_SEND_MESSAGE", snapshot_text(&chat));
}
