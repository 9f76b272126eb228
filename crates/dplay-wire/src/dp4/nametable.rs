//! Name-table changes: DELETEPLAYER, DELETEGROUP, ADDPLAYERTOGROUP, DELETEPLAYERFROMGROUP,
//! ADDSHORTCUTTOGROUP, DELETEGROUPFROMGROUP, PLAYER/GROUPDATACHANGED, PLAYER/GROUPNAMECHANGED
//! and SESSIONDESCCHANGED (MC-DPL4CS 2.2.12, 2.2.13, 2.2.23-2.2.26, 2.2.31, 2.2.32, 2.2.44,
//! 2.2.46, 2.2.51).

use crate::codec::{Reader, Writer};
use crate::dp4::fields::{BODY_START, Body, blob_at, off, place, place_blob, wide_at, wide_len, write_wide};
use crate::dp4::session::{SESSION_DESC_LEN, SessionDesc2};
use crate::{Blob, WideString, WireError};

/// The 20-byte body of DELETEPLAYER (0x0B), DELETEGROUP (0x0C), ADDPLAYERTOGROUP (0x0D) and
/// DELETEPLAYERFROMGROUP (0x0E) (MC-DPL4CS 2.2.25, 2.2.23, 2.2.12, 2.2.26). Fields the spec
/// marks as ignored are kept as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct PlayerGroupIds {
    /// `IDTo`.
    pub id_to: u32,
    /// `PlayerID`: the player deleted, added or removed (ignored by DELETEGROUP).
    pub player_id: u32,
    /// `GroupID`: the group deleted, added to or removed from (ignored by DELETEPLAYER).
    pub group_id: u32,
    /// `CreateOffset`: not used.
    pub create_offset: u32,
    /// `PasswordOffset`: not used.
    pub password_offset: u32,
}

/// The 20-byte body of ADDSHORTCUTTOGROUP (0x27) and DELETEGROUPFROMGROUP (0x28)
/// (MC-DPL4CS 2.2.13, 2.2.24).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct GroupGroupIds {
    /// `IDTo`.
    pub id_to: u32,
    /// `ChildGroupID`.
    pub child_group_id: u32,
    /// `ParentGroupID`.
    pub parent_group_id: u32,
    /// `CreateOffset`: not used.
    pub create_offset: u32,
    /// `PasswordOffset`: not used.
    pub password_offset: u32,
}

fn read5(r: &mut Reader<'_>, names: [&'static str; 5]) -> Result<[u32; 5], WireError> {
    let mut out = [0; 5];
    for (v, name) in out.iter_mut().zip(names) {
        *v = r.u32(name)?;
    }
    r.finish("PasswordOffset")?;
    Ok(out)
}

impl Body for PlayerGroupIds {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let [id_to, player_id, group_id, create_offset, password_offset] =
            read5(r, ["IDTo", "PlayerID", "GroupID", "CreateOffset", "PasswordOffset"])?;
        Ok(Self { id_to, player_id, group_id, create_offset, password_offset })
    }
    fn len(&self) -> usize {
        20
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        [self.id_to, self.player_id, self.group_id, self.create_offset, self.password_offset]
            .into_iter()
            .for_each(|v| w.u32(v));
        Ok(())
    }
}

impl Body for GroupGroupIds {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let [id_to, child_group_id, parent_group_id, create_offset, password_offset] =
            read5(r, ["IDTo", "ChildGroupID", "ParentGroupID", "CreateOffset", "PasswordOffset"])?;
        Ok(Self { id_to, child_group_id, parent_group_id, create_offset, password_offset })
    }
    fn len(&self) -> usize {
        20
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        [self.id_to, self.child_group_id, self.parent_group_id, self.create_offset, self.password_offset]
            .into_iter()
            .for_each(|v| w.u32(v));
        Ok(())
    }
}

/// PLAYERDATACHANGED (0x0F) and GROUPDATACHANGED (0x11): new application data for a player
/// or group, at `DataOffset`, `DataSize` bytes (MC-DPL4CS 2.2.44, 2.2.31).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DataChanged {
    /// `IDTo`: zero.
    pub id_to: u32,
    /// `PlayerID` / `GroupID`.
    pub id: u32,
    /// `PlayerData` / `GroupData`.
    pub data: Blob,
}

impl Body for DataChanged {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_to = r.u32("IDTo")?;
        let id = r.u32("PlayerID")?;
        let size = r.u32("DataSize")?;
        let offset = r.u32("DataOffset")?;
        Ok(Self { id_to, id, data: blob_at(msg, "PlayerData", offset, size)? })
    }
    fn len(&self) -> usize {
        16 + self.data.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.id_to);
        w.u32(self.id);
        w.u32(off(self.data.len()));
        w.u32(place_blob(&mut (BODY_START + 16), &self.data));
        w.bytes(&self.data);
        Ok(())
    }
}

/// PLAYERNAMECHANGED (0x10) and GROUPNAMECHANGED (0x12): new names, at `ShortOffset` and
/// `LongOffset` (0: a null name) (MC-DPL4CS 2.2.46, 2.2.32).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NameChanged {
    /// `IDTo`: zero.
    pub id_to: u32,
    /// `PlayerID` / `GroupID`.
    pub id: u32,
    /// `ShortName`.
    pub short_name: Option<WideString>,
    /// `LongName`.
    pub long_name: Option<WideString>,
}

impl Body for NameChanged {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_to = r.u32("IDTo")?;
        let id = r.u32("PlayerID")?;
        let short_offset = r.u32("ShortOffset")?;
        let long_offset = r.u32("LongOffset")?;
        let short_name = wide_at(msg, "ShortName", short_offset)?.map(|(s, _)| s);
        let long_name = wide_at(msg, "LongName", long_offset)?.map(|(s, _)| s);
        Ok(Self { id_to, id, short_name, long_name })
    }
    fn len(&self) -> usize {
        16 + wide_len(&self.short_name).unwrap_or(0) + wide_len(&self.long_name).unwrap_or(0)
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let mut at = BODY_START + 16;
        w.u32(self.id_to);
        w.u32(self.id);
        w.u32(place(&mut at, wide_len(&self.short_name)));
        w.u32(place(&mut at, wide_len(&self.long_name)));
        write_wide(w, &self.short_name);
        write_wide(w, &self.long_name);
        Ok(())
    }
}

/// DPSP_MSG_SESSIONDESCCHANGED (0x1A): the session description changed (MC-DPL4CS 2.2.51).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SessionDescChanged {
    /// `IDTo`: zero.
    pub id_to: u32,
    /// `SessionDesc`: right after the three DWORDs.
    pub session_desc: SessionDesc2,
    /// `SessionName`, at `SessionNameOffset` (0: absent).
    pub session_name: Option<WideString>,
    /// `Password`, at `PasswordOffset` (0: no password).
    pub password: Option<WideString>,
}

impl Body for SessionDescChanged {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_to = r.u32("IDTo")?;
        let name_offset = r.u32("SessionNameOffset")?;
        let password_offset = r.u32("PasswordOffset")?;
        let session_desc = SessionDesc2::read(r)?;
        let session_name = wide_at(msg, "SessionName", name_offset)?.map(|(s, _)| s);
        let password = wide_at(msg, "Password", password_offset)?.map(|(s, _)| s);
        Ok(Self { id_to, session_desc, session_name, password })
    }
    fn len(&self) -> usize {
        12 + SESSION_DESC_LEN
            + wide_len(&self.session_name).unwrap_or(0)
            + wide_len(&self.password).unwrap_or(0)
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let mut at = BODY_START + 12 + SESSION_DESC_LEN;
        w.u32(self.id_to);
        w.u32(place(&mut at, wide_len(&self.session_name)));
        w.u32(place(&mut at, wide_len(&self.password)));
        self.session_desc.write(w);
        write_wide(w, &self.session_name);
        write_wide(w, &self.password);
        Ok(())
    }
}
