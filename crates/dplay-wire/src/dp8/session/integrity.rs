//! The integrity check: DN_REQ_INTEGRITY_CHECK, DN_INTEGRITY_CHECK and
//! DN_INTEGRITY_CHECK_RESPONSE (MC-DPL8CS 2.2.2.6-2.2.2.8, 3.2.5.3; MS-DPDX 2.2.27-2.2.29).

use super::Body;
use crate::WireError;
use crate::codec::{Reader, Writer};
use crate::dp8::dpnid::Dpnid;

/// DN_REQ_INTEGRITY_CHECK (MC-DPL8CS 2.2.2.6; MS-DPDX 2.2.27), 0xE2: a peer asks the host
/// whether `dpnidTarget` is still there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ReqIntegrityCheck {
    /// `dwReqContext`: ignored by the recipient, kept for re-emission.
    pub req_context: u32,
    /// `dpnidTarget`: the peer to check.
    pub dpnid_target: Dpnid,
}

impl Body for ReqIntegrityCheck {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self { req_context: r.u32("dwReqContext")?, dpnid_target: Dpnid(r.u32("dpnidTarget")?) };
        r.finish("DN_REQ_INTEGRITY_CHECK")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        8
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.req_context);
        w.u32(self.dpnid_target.0);
        Ok(())
    }
}

/// The body of DN_INTEGRITY_CHECK (0xE3, host to the checked peer) and
/// DN_INTEGRITY_CHECK_RESPONSE (0xE4, its answer) (MC-DPL8CS 2.2.2.7, 2.2.2.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IntegrityCheck {
    /// `dpnidRequesting`: the peer that raised the alarm.
    pub dpnid_requesting: Dpnid,
}

impl Body for IntegrityCheck {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self { dpnid_requesting: Dpnid(r.u32("dpnidRequesting")?) };
        r.finish("dpnidRequesting")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        4
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.dpnid_requesting.0);
        Ok(())
    }
}
