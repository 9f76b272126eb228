//! DirectPlay 4 TCP streams: segments put back in sequence order, then cut into messages by
//! their size fields (MC-DPL4CS 2.1, 2.2.6).
//!
//! A stream is followed from the first bytes that start a DirectPlay 4 message: a system message
//! ('play' at offset 20) or the stream form of a player message
//! ([`crate::message::dp4_stream_message_size`]). A retransmitted segment is trimmed to its
//! new bytes; a gap (bytes the capture missed) drops the partial message and waits for the
//! next segment that starts one. A message that cannot be framed is reported, and the stream
//! dropped until such a segment.

use std::collections::HashMap;
use std::net::SocketAddr;

use dplay_wire::WireError;
use dplay_wire::dp4::header::HEADER_LEN;

use crate::message::dp4_stream_message_size;

/// One direction of a TCP connection.
#[derive(Debug, Default)]
struct Stream {
    /// The sequence number of the next byte expected.
    next_seq: Option<u32>,
    /// Bytes of the message being assembled.
    buf: Vec<u8>,
    following: bool,
}

/// What one segment completed.
#[derive(Debug)]
pub(crate) enum Cut {
    /// One whole message.
    Message(Vec<u8>),
    /// Bytes that cannot be framed, and why.
    Unframed(Vec<u8>, WireError),
}

/// Every TCP stream of a capture.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    streams: HashMap<(SocketAddr, SocketAddr), Stream>,
    /// Segments that followed bytes the capture does not have.
    pub(crate) gaps: u64,
}

impl Streams {
    /// Feeds one segment's payload; returns the messages it completed. `true` in the second
    /// place when the stream is being followed (the segment was DirectPlay 4).
    pub(crate) fn feed(
        &mut self,
        src: SocketAddr,
        dst: SocketAddr,
        seq: u32,
        payload: &[u8],
    ) -> (Vec<Cut>, bool) {
        let stream = self.streams.entry((src, dst)).or_default();
        let mut data = payload;
        if let Some(next) = stream.next_seq {
            // Serial-number arithmetic: the signed distance from what we expect.
            #[allow(clippy::cast_possible_wrap)]
            let ahead = seq.wrapping_sub(next) as i32;
            if ahead < 0 {
                let old = usize::try_from(ahead.unsigned_abs()).unwrap_or(usize::MAX);
                data = payload.get(old..).unwrap_or_default();
            } else if ahead > 0 {
                self.gaps += u64::from(stream.following || !stream.buf.is_empty());
                stream.buf.clear();
                stream.following = false;
            }
        }
        if data.is_empty() {
            return (Vec::new(), stream.following);
        }
        let end = seq.wrapping_add(u32::try_from(payload.len()).unwrap_or(u32::MAX));
        stream.next_seq = Some(end);
        stream.buf.extend_from_slice(data);
        if !stream.following {
            match stream.starts_message() {
                Some(true) => stream.following = true,
                Some(false) => {
                    stream.buf.clear();
                    return (Vec::new(), false);
                }
                None => return (Vec::new(), false),
            }
        }
        (stream.cut(), true)
    }

    /// Bytes of messages the capture ended in the middle of.
    pub(crate) fn unfinished(&self) -> usize {
        self.streams.values().map(|s| s.buf.len()).sum()
    }
}

impl Stream {
    /// The size field of the message the buffer starts with.
    fn size_field(&self) -> usize {
        self.buf
            .get(..4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, |b| (u32::from_le_bytes(b) & 0xF_FFFF) as usize)
    }

    /// Whether the buffer has enough bytes to tell whether it starts a message: the whole
    /// message, or its 28-byte header when longer.
    fn can_judge(&self) -> bool {
        self.buf.len() >= 4 && self.buf.len() >= self.size_field().clamp(4, HEADER_LEN)
    }

    /// Whether the buffer starts a DirectPlay 4 message; `None` until it can tell.
    fn starts_message(&self) -> Option<bool> {
        self.can_judge().then(|| dp4_stream_message_size(&self.buf).is_some())
    }

    fn cut(&mut self) -> Vec<Cut> {
        let mut out = Vec::new();
        while self.can_judge() {
            let size_field = self.size_field();
            let Some(size) = dp4_stream_message_size(&self.buf) else {
                let bytes = std::mem::take(&mut self.buf);
                self.following = false;
                let error = WireError::InvalidValue {
                    field: "dwSize",
                    offset: 0,
                    value: size_field as u64,
                    reason: "cannot frame the DirectPlay 4 stream",
                };
                out.push(Cut::Unframed(bytes, error));
                break;
            };
            if self.buf.len() < size {
                break;
            }
            out.push(Cut::Message(self.buf.drain(..size).collect()));
        }
        out
    }
}

#[cfg(test)]
mod tests;
