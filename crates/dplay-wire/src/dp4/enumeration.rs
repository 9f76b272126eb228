//! Session and player enumeration: ENUMSESSIONS, ENUMSESSIONSREPLY, ENUMPLAYERSREPLY and
//! SUPERENUMPLAYERSREPLY (MC-DPL4CS 2.2.28-2.2.30, 2.2.53; INDEX D.17).

use bitflags::bitflags;
use uuid::Uuid;

use crate::codec::{Reader, Writer};
use crate::dp4::fields::{BODY_START, Body, off, place, reader_at, wide_at, wide_len, write_wide};
use crate::dp4::player::{PackedPlayer, SuperPackedPlayer};
use crate::dp4::session::{SESSION_DESC_LEN, SessionDesc2};
use crate::{WideString, WireError};

bitflags! {
    /// ENUMSESSIONS `Flags` (MC-DPL4CS 2.2.29; INDEX B.12). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct EnumSessionsFlags: u32 {
        /// AV: sessions that can be joined.
        const AVAILABLE = 0x1;
        /// AL: all sessions, even those that cannot be joined.
        const ALL = 0x2;
        /// PR: include sessions that require a password (see F-28).
        const PASSWORD_REQUIRED = 0x40;
        const _ = !0;
    }
}

/// DPSP_MSG_ENUMSESSIONS (0x02): a client looks for sessions of a game (MC-DPL4CS 2.2.29).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnumSessions {
    /// `ApplicationGuid`: the game.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub application_guid: Uuid,
    /// `Flags`.
    pub flags: EnumSessionsFlags,
    /// `Password`, at `PasswordOffset` (0: absent).
    pub password: Option<WideString>,
}

impl Body for EnumSessions {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let application_guid = r.guid("ApplicationGuid")?;
        let password_offset = r.u32("PasswordOffset")?;
        let flags = EnumSessionsFlags::from_bits_retain(r.u32("Flags")?);
        let password = wide_at(msg, "Password", password_offset)?.map(|(s, _)| s);
        Ok(Self { application_guid, flags, password })
    }

    fn len(&self) -> usize {
        24 + wide_len(&self.password).unwrap_or(0)
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.guid(&self.application_guid);
        w.u32(place(&mut (BODY_START + 24), wide_len(&self.password)));
        w.u32(self.flags.bits());
        write_wide(w, &self.password);
        Ok(())
    }
}

/// DPSP_MSG_ENUMSESSIONSREPLY (0x01): one session, sent by its host (MC-DPL4CS 2.2.30).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnumSessionsReply {
    /// `SessionDescription`.
    pub session_desc: SessionDesc2,
    /// `SessionName`, at `NameOffset` (0: absent).
    pub session_name: Option<WideString>,
}

impl Body for EnumSessionsReply {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let session_desc = SessionDesc2::read(r)?;
        let name_offset = r.u32("NameOffset")?;
        let session_name = wide_at(msg, "SessionName", name_offset)?.map(|(s, _)| s);
        Ok(Self { session_desc, session_name })
    }

    fn len(&self) -> usize {
        SESSION_DESC_LEN + 4 + wide_len(&self.session_name).unwrap_or(0)
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.session_desc.write(w);
        w.u32(place(&mut (BODY_START + SESSION_DESC_LEN + 4), wide_len(&self.session_name)));
        write_wide(w, &self.session_name);
        Ok(())
    }
}

/// The seven DWORDs that open ENUMPLAYERSREPLY and SUPERENUMPLAYERSREPLY.
const REPLY_FIXED_LEN: usize = 28;

/// What ENUMPLAYERSREPLY and SUPERENUMPLAYERSREPLY share (MC-DPL4CS 2.2.28, 2.2.53):
/// `PlayerCount`, `GroupCount`, the entries' offset, `ShortcutCount`, `DescriptionOffset`,
/// `NameOffset` and `PasswordOffset`, and the session description, name and password those
/// locate. The player entries follow them in the canonical layout.
struct ReplyHead {
    player_count: u32,
    group_count: u32,
    entries_offset: u32,
    shortcut_count: u32,
    session_desc: SessionDesc2,
    session_name: Option<WideString>,
    password: Option<WideString>,
}

impl ReplyHead {
    /// Reads the seven DWORDs (the entries' offset is named `entries_field`) and follows the
    /// session offsets.
    fn read(msg: &[u8], r: &mut Reader<'_>, entries_field: &'static str) -> Result<Self, WireError> {
        let player_count = r.u32("PlayerCount")?;
        let group_count = r.u32("GroupCount")?;
        let entries_offset = r.u32(entries_field)?;
        let shortcut_count = r.u32("ShortcutCount")?;
        let desc_offset = r.u32("DescriptionOffset")?;
        let name_offset = r.u32("NameOffset")?;
        let password_offset = r.u32("PasswordOffset")?;
        let session_desc = SessionDesc2::read(&mut reader_at(msg, "DescriptionOffset", desc_offset)?)?;
        let session_name = wide_at(msg, "SessionName", name_offset)?.map(|(s, _)| s);
        let password = wide_at(msg, "Password", password_offset)?.map(|(s, _)| s);
        Ok(Self {
            player_count,
            group_count,
            entries_offset,
            shortcut_count,
            session_desc,
            session_name,
            password,
        })
    }

    /// A reader at the entries, named `field`, unless `any` says there are none.
    fn entries<'a>(
        &self,
        msg: &'a [u8],
        field: &'static str,
        any: bool,
    ) -> Result<Option<Reader<'a>>, WireError> {
        any.then(|| reader_at(msg, field, self.entries_offset)).transpose()
    }

    /// Bytes of the seven DWORDs, the description, the name and the password.
    fn len(name: &Option<WideString>, password: &Option<WideString>) -> usize {
        REPLY_FIXED_LEN + SESSION_DESC_LEN + wide_len(name).unwrap_or(0) + wide_len(password).unwrap_or(0)
    }

    /// Writes the seven DWORDs (`[PlayerCount, GroupCount, ShortcutCount]` from `counts`) with
    /// canonical offsets, then the description, name and password; `entries` entries follow.
    fn write(
        w: &mut Writer<'_>,
        [players, groups, shortcuts]: [u32; 3],
        (desc, name, password): (&SessionDesc2, &Option<WideString>, &Option<WideString>),
        entries: usize,
    ) {
        let mut at = BODY_START + REPLY_FIXED_LEN;
        let desc_offset = place(&mut at, Some(SESSION_DESC_LEN));
        let name_offset = place(&mut at, wide_len(name));
        let password_offset = place(&mut at, wide_len(password));
        let entries_offset = place(&mut at, (entries != 0).then_some(0));
        for dword in [players, groups, entries_offset, shortcuts, desc_offset, name_offset, password_offset] {
            w.u32(dword);
        }
        desc.write(w);
        write_wide(w, name);
        write_wide(w, password);
    }
}

/// DPSP_MSG_ENUMPLAYERSREPLY (0x03): the whole name table as DPLAYI_PACKEDPLAYERs, used in
/// client/server sessions (MC-DPL4CS 2.2.28).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EnumPlayersReply {
    /// `ShortcutCount`: ignored on receipt, kept as read.
    pub shortcut_count: u32,
    /// `DPSessionDesc2`, at `DescriptionOffset`.
    pub session_desc: SessionDesc2,
    /// `SessionName`, at `NameOffset` (0: absent).
    pub session_name: Option<WideString>,
    /// `Password`, at `PasswordOffset` (0: absent).
    pub password: Option<WideString>,
    /// The first `PlayerCount` entries of `PlayerInfo`.
    pub players: Vec<PackedPlayer>,
    /// The next `GroupCount` entries of `PlayerInfo`.
    pub groups: Vec<PackedPlayer>,
}

impl Body for EnumPlayersReply {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let head = ReplyHead::read(msg, r, "PlayerOffset")?;
        let (mut players, mut groups) = (Vec::new(), Vec::new());
        let any = head.player_count != 0 || head.group_count != 0;
        if let Some(mut pr) = head.entries(msg, "PlayerOffset", any)? {
            for _ in 0..head.player_count {
                players.push(PackedPlayer::read(&mut pr)?);
            }
            for _ in 0..head.group_count {
                groups.push(PackedPlayer::read(&mut pr)?);
            }
        }
        let ReplyHead { shortcut_count, session_desc, session_name, password, .. } = head;
        Ok(Self { shortcut_count, session_desc, session_name, password, players, groups })
    }

    fn len(&self) -> usize {
        ReplyHead::len(&self.session_name, &self.password)
            + self.players.iter().chain(&self.groups).map(PackedPlayer::encoded_len).sum::<usize>()
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let counts = [off(self.players.len()), off(self.groups.len()), self.shortcut_count];
        let session = (&self.session_desc, &self.session_name, &self.password);
        ReplyHead::write(w, counts, session, self.players.len() + self.groups.len());
        self.players.iter().chain(&self.groups).for_each(|p| p.write(w));
        Ok(())
    }
}

/// DPSP_MSG_SUPERENUMPLAYERSREPLY (0x29): the whole name table as DPLAYI_SUPERPACKEDPLAYERs,
/// the last step of a join (MC-DPL4CS 2.2.53; INDEX E.6).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SuperEnumPlayersReply {
    /// `DPSessionDesc`, at `DescriptionOffset`.
    pub session_desc: SessionDesc2,
    /// `SessionName`, at `NameOffset` (0: absent).
    pub session_name: Option<WideString>,
    /// `Password`, at `PasswordOffset` (0: absent).
    pub password: Option<WideString>,
    /// The first `PlayerCount` entries of `SuperPackedPlayer`.
    pub players: Vec<SuperPackedPlayer>,
    /// The next `GroupCount` entries.
    pub groups: Vec<SuperPackedPlayer>,
    /// The last `ShortcutCount` entries: groups with shortcuts.
    pub shortcuts: Vec<SuperPackedPlayer>,
}

impl SuperEnumPlayersReply {
    fn entries(&self) -> impl Iterator<Item = &SuperPackedPlayer> {
        self.players.iter().chain(&self.groups).chain(&self.shortcuts)
    }
}

impl Body for SuperEnumPlayersReply {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let head = ReplyHead::read(msg, r, "PackedOffset")?;
        let (mut players, mut groups, mut shortcuts) = (Vec::new(), Vec::new(), Vec::new());
        let counts = [head.player_count, head.group_count, head.shortcut_count];
        if let Some(mut pr) = head.entries(msg, "PackedOffset", counts != [0; 3])? {
            for (list, n) in
                [(&mut players, counts[0]), (&mut groups, counts[1]), (&mut shortcuts, counts[2])]
            {
                for _ in 0..n {
                    list.push(SuperPackedPlayer::read(&mut pr)?);
                }
            }
        }
        let ReplyHead { session_desc, session_name, password, .. } = head;
        Ok(Self { session_desc, session_name, password, players, groups, shortcuts })
    }

    fn len(&self) -> usize {
        ReplyHead::len(&self.session_name, &self.password)
            + self.entries().map(SuperPackedPlayer::encoded_len).sum::<usize>()
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let counts = [off(self.players.len()), off(self.groups.len()), off(self.shortcuts.len())];
        let session = (&self.session_desc, &self.session_name, &self.password);
        ReplyHead::write(w, counts, session, self.entries().count());
        self.entries().try_for_each(|p| p.write(w))
    }
}
