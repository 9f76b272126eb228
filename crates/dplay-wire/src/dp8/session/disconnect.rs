//! Disconnect and host-migration messages: DN_TERMINATE_SESSION, DN_DESTROY_PLAYER and
//! DN_HOST_MIGRATE (MC-DPL8CS 2.2.2.1-2.2.2.3; MS-DPDX 2.2.14, 2.2.15, 2.2.18).

use super::Body;
use super::layout::{BlobField, BlobLayout, BlobReader, Blobs, Placement, Span, push_bytes};
use crate::codec::{Reader, Writer};
use crate::dp8::dpnid::Dpnid;
use crate::text::Blob;
use crate::{WireError, open_enum};

open_enum! {
    /// `dwDestroyReason` of DN_DESTROY_PLAYER (MC-DPL8CS 2.2.2.2; MS-DPDX 2.2.15 lists only 1
    /// and 4). A u32 on the wire although the spec prints the values as 0x0001 (INDEX F-14).
    pub struct DestroyReason(u32) {
        /// `DPNDESTROYPLAYERREASON_NORMAL`: the player is leaving.
        DPNDESTROYPLAYERREASON_NORMAL = 0x0000_0001,
        /// `DPNDESTROYPLAYERREASON_CONNECTIONLOST`: the connection to it was lost.
        DPNDESTROYPLAYERREASON_CONNECTIONLOST = 0x0000_0002,
        /// `DPNDESTROYPLAYERREASON_SESSIONTERMINATED`: the session ended.
        DPNDESTROYPLAYERREASON_SESSIONTERMINATED = 0x0000_0003,
        /// `DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER`: the host removed it.
        DPNDESTROYPLAYERREASON_HOSTDESTROYEDPLAYER = 0x0000_0004,
    }
}

/// DN_TERMINATE_SESSION (MC-DPL8CS 2.2.2.1; MS-DPDX 2.2.14), 0xDF: the receiver is removed
/// from the session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TerminateSession {
    /// `TerminateData`: the host application's reason.
    pub terminate_data: Blob,
}

impl TerminateSession {
    fn blobs(&self) -> Blobs<'_> {
        let mut b = Blobs::new();
        push_bytes(&mut b, BlobField::TerminateData, &self.terminate_data);
        b
    }
}

impl Body for TerminateSession {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let span = Span::read(&mut r, "dwTerminateDataOffset", "dwTerminateDataSize")?;
        let mut blobs = BlobReader::new(body);
        let v = Self { terminate_data: blobs.blob(BlobField::TerminateData, "TerminateData", span)? };
        blobs.finish(r.pos(), &v.blobs())?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        8 + self.terminate_data.len()
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let p = Placement::new(&BlobLayout::default(), 8, self.blobs())?;
        p.write_span(w, BlobField::TerminateData);
        p.write(w)
    }
}

/// DN_DESTROY_PLAYER (MC-DPL8CS 2.2.2.2; MS-DPDX 2.2.15), 0xD1: remove a player from the name
/// table. Also a name-table operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DestroyPlayer {
    /// `dpnidLeaving`.
    pub dpnid_leaving: Dpnid,
    /// `dwVersion`: the name-table version of this operation.
    pub version: u32,
    /// `dwVersionNotUsed`: kept for re-emission.
    pub version_not_used: u32,
    /// `dwDestroyReason`.
    pub destroy_reason: DestroyReason,
}

impl Body for DestroyPlayer {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self {
            dpnid_leaving: Dpnid(r.u32("dpnidLeaving")?),
            version: r.u32("dwVersion")?,
            version_not_used: r.u32("dwVersionNotUsed")?,
            destroy_reason: DestroyReason(r.u32("dwDestroyReason")?),
        };
        r.finish("DN_DESTROY_PLAYER")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        16
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.dpnid_leaving.0);
        w.u32(self.version);
        w.u32(self.version_not_used);
        w.u32(self.destroy_reason.0);
        Ok(())
    }
}

/// DN_HOST_MIGRATE (MC-DPL8CS 2.2.2.3; MS-DPDX 2.2.18), 0xCD: the new host announces itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct HostMigrate {
    /// `dpnidOldHost`: the host that left.
    pub dpnid_old_host: Dpnid,
    /// `dpnidNewHost`: the sender, now host.
    pub dpnid_new_host: Dpnid,
}

impl Body for HostMigrate {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self {
            dpnid_old_host: Dpnid(r.u32("dpnidOldHost")?),
            dpnid_new_host: Dpnid(r.u32("dpnidNewHost")?),
        };
        r.finish("DN_HOST_MIGRATE")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        8
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.dpnid_old_host.0);
        w.u32(self.dpnid_new_host.0);
        Ok(())
    }
}
