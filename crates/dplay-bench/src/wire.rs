//! The messages of the wire rows: a DFRAME with a 1 KiB payload, a CONNECT, and a
//! SEND_SESSION_INFO (DN_SEND_CONNECT_INFO) with 32 players.

use dplay_wire::dp8::cframe::{Cframe, ConnectFields, Masks};
use dplay_wire::dp8::dframe::{Dframe, DframeCommand, DframeControl, DframeHeader};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::{
    ApplicationDescFlags, BlobLayout, NameTableEntry, NameTableEntryFlags, SendConnectInfo, SessionMessage,
};
use dplay_wire::{Blob, Uuid, WideString, Wire};

/// A reliable sequential DFRAME (MC-DPL8R 2.2.2) carrying 1 KiB.
pub fn dframe_1k() -> Dframe {
    let payload: Vec<u8> = (0..1024u32).map(|i| i.to_le_bytes()[0]).collect();
    Dframe {
        header: DframeHeader {
            command: DframeCommand::DATA
                | DframeCommand::RELIABLE
                | DframeCommand::SEQUENTIAL
                | DframeCommand::NEW_MSG
                | DframeCommand::END_MSG,
            control: DframeControl::empty(),
            seq: 7,
            n_rcv: 3,
            masks: Masks::default(),
            signature: None,
            sess_id: None,
        },
        payload: Blob::new(&payload),
    }
}

/// A CONNECT (MC-DPL8R 2.2.1.1).
pub fn connect() -> Cframe {
    Cframe::Connect(ConnectFields {
        poll: true,
        msg_id: 0,
        rsp_id: 0,
        protocol_version: dplay_dframe::PROTOCOL_VERSION,
        sess_id: 0x1234_5678,
        timestamp: 1000,
    })
}

/// A DN_SEND_CONNECT_INFO (MC-DPL8CS 2.2.1.4) with `players` named players.
pub fn send_session_info(players: u32) -> SessionMessage {
    let entries = (1..=players)
        .map(|i| NameTableEntry {
            dpnid: Dpnid(0x0010_0000 + i),
            dpnid_owner: Dpnid(0),
            flags: NameTableEntryFlags::empty(),
            version: i,
            version_not_used: 0,
            dnet_version: 7,
            name: Some(WideString::new(&format!("Player {i}"))),
            data: Blob::new(&[]),
            url: None,
        })
        .collect();
    SessionMessage::SendConnectInfo(Box::new(SendConnectInfo {
        reply: Blob::new(&[]),
        flags: ApplicationDescFlags::MIGRATE_HOST,
        max_players: 64,
        current_players: players,
        session_name: Some(WideString::new("Benchmark session")),
        password: None,
        reserved_data: Blob::new(&[]),
        application_reserved_data: Blob::new(&[]),
        guid_instance: Uuid::from_u128(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10),
        guid_application: Uuid::from_u128(0x1112_1314_1516_1718_191a_1b1c_1d1e_1f20),
        dpnid: Dpnid(0x0010_0000 + players),
        version: players,
        version_not_used: 0,
        entries,
        memberships: Vec::new(),
        layout: BlobLayout::default(),
    }))
}

/// The three messages, encoded.
pub fn encoded() -> Result<[Vec<u8>; 3], dplay_wire::WireError> {
    Ok([dframe_1k().to_vec()?, connect().to_vec()?, send_session_info(32).to_vec()?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_reparse_to_themselves() {
        let [d, c, s] = encoded().unwrap();
        assert_eq!(d.len(), 4 + 1024);
        assert_eq!(Dframe::parse(&d).unwrap(), dframe_1k());
        assert_eq!(Cframe::parse(&c).unwrap(), connect());
        let info = SessionMessage::parse(&s).unwrap();
        assert_eq!(info.to_vec().unwrap(), s);
        let SessionMessage::SendConnectInfo(info) = info else { panic!("not SEND_CONNECT_INFO") };
        assert_eq!(info.entries.len(), 32);
    }
}
