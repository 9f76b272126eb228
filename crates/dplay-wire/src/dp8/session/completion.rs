//! Sends with delivery confirmation: DN_REQ_PROCESS_COMPLETION and DN_PROCESS_COMPLETION
//! (MC-DPL8CS 2.2.3.2, 2.2.3.3). A plain DN_SEND_DATA (2.2.3.1) has no session header at all:
//! its DFRAME has USER_1 clear and the payload goes to the application as is.

use super::Body;
use crate::WireError;
use crate::codec::{Reader, Writer};
use crate::text::Blob;

/// DN_REQ_PROCESS_COMPLETION (MC-DPL8CS 2.2.3.2), 0xE0: application data whose consumption
/// the receiver confirms.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReqProcessCompletion {
    /// `dwPacketContext`: echoed by DN_PROCESS_COMPLETION.
    pub packet_context: u32,
    /// `payload`: everything after the context.
    pub payload: Blob,
}

impl Body for ReqProcessCompletion {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        Ok(Self { packet_context: r.u32("dwPacketContext")?, payload: Blob::new(r.rest()) })
    }

    fn body_len(&self) -> usize {
        4 + self.payload.len()
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.packet_context);
        w.bytes(&self.payload);
        Ok(())
    }
}

/// DN_PROCESS_COMPLETION (MC-DPL8CS 2.2.3.3), 0xE1: the payload was consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ProcessCompletion {
    /// `dwPacketContext`: the request's, unchanged.
    pub packet_context: u32,
}

impl Body for ProcessCompletion {
    fn parse_body(body: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(body);
        let v = Self { packet_context: r.u32("dwPacketContext")? };
        r.finish("DN_PROCESS_COMPLETION")?;
        Ok(v)
    }

    fn body_len(&self) -> usize {
        4
    }

    fn emit_body(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.packet_context);
        Ok(())
    }
}
