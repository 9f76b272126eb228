//! Splitting a TCP byte stream into DirectPlay 4 messages by the DPSP_MSG_HEADER size field
//! (MC-DPL4CS 2.1, 2.2.6; INDEX D.15).
//!
//! Guaranteed messages travel over TCP with no framing of their own: the first DWORD of each
//! message holds its size (bits 0-19) and a token (bits 20-31). One read may carry several
//! messages or part of one. [`StreamFramer`] gathers the bytes of one connection and hands out
//! whole messages; a size or token that cannot be right breaks the framer for good, because
//! nothing after it can be trusted to start a message.

use dplay_wire::dp4::header::{MAX_MESSAGE_SIZE, Token};

/// Bytes before a player message's IDs: size/token and SockAddr; the smallest message there is
/// (a DPSP_MSG_PLAYERMESSAGE with NM and no payload, MC-DPL4CS 2.2.45).
pub const MIN_MESSAGE_SIZE: usize = 20;

/// Why a stream was rejected. The connection carrying it must be closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The token is none of 0xFAB, 0xCAB, 0xBAB (MC-DPL4CS 2.2.6).
    #[error("bad DPSP token {0:#05x}")]
    BadToken(u16),
    /// The size is below the smallest message or above the framer's limit.
    #[error("bad DPSP message size {size} (limits {min}..={max})")]
    BadSize {
        /// The size field.
        size: usize,
        /// The smallest size accepted.
        min: usize,
        /// The largest size accepted.
        max: usize,
    },
    /// A message without the 'play' signature (so a player message) on a connection that
    /// belongs to no known instance, at a host or an endpoint in no session (MC-DPL4CS 2.2.6,
    /// 2.2.45): nothing on it can be trusted.
    #[error("no 'play' signature from an unknown sender")]
    NoSignature,
    /// The partial message it holds would take what the host holds for others past its
    /// memory budget (docs/limits.md).
    #[error("the host's memory budget is full")]
    OverBudget,
}

/// What one read did to a connection, for the runtime's deadlines (docs/limits.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TcpStatus {
    /// Whole messages the read completed.
    pub messages: usize,
    /// Bytes held for a message not yet complete.
    pub buffered: usize,
    /// The connection belongs to a known instance (one of its messages named a listener in
    /// the Player List, or the host we are joining).
    pub known: bool,
}

/// Splits one TCP connection's bytes into DP4 messages (MC-DPL4CS 2.1, 2.2.6).
///
/// The buffer never holds more than one partial message, whose size is at most `max_size`, so
/// memory per connection is bounded by the limit, whatever the peer sends.
#[derive(Debug, Clone)]
pub struct StreamFramer {
    buf: Vec<u8>,
    max_size: usize,
    broken: Option<StreamError>,
}

impl Default for StreamFramer {
    fn default() -> Self {
        Self::new(MAX_MESSAGE_SIZE)
    }
}

impl StreamFramer {
    /// A framer accepting messages up to `max_size` bytes (at most 0xFFFFF, the size field's
    /// range).
    pub fn new(max_size: usize) -> Self {
        Self { buf: Vec::new(), max_size: max_size.clamp(MIN_MESSAGE_SIZE, MAX_MESSAGE_SIZE), broken: None }
    }

    /// Bytes held for a message not yet complete.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Changes the largest message accepted from the next size field on (same bounds as
    /// [`StreamFramer::new`]).
    pub fn set_max_size(&mut self, max_size: usize) {
        self.max_size = max_size.clamp(MIN_MESSAGE_SIZE, MAX_MESSAGE_SIZE);
    }

    /// Appends `bytes` and returns every message they complete, in order. After an error the
    /// framer stays broken and returns the same error for any further bytes.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, StreamError> {
        if let Some(e) = self.broken {
            return Err(e);
        }
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        loop {
            match self.next_size() {
                Err(e) => {
                    self.broken = Some(e);
                    self.buf = Vec::new();
                    return Err(e);
                }
                Ok(Some(size)) if self.buf.len() >= size => {
                    let rest = self.buf.split_off(size);
                    out.push(std::mem::replace(&mut self.buf, rest));
                }
                Ok(_) => return Ok(out),
            }
        }
    }

    /// The size of the message at the front, once its first DWORD is in.
    fn next_size(&self) -> Result<Option<usize>, StreamError> {
        let Some(first) = self.buf.first_chunk::<4>() else { return Ok(None) };
        let dword = u32::from_le_bytes(*first);
        #[allow(clippy::cast_possible_truncation)] // 12 bits
        let token = Token((dword >> 20) as u16);
        if ![Token::FROM_REMOTE, Token::FORWARD, Token::FROM_SERVER].contains(&token) {
            return Err(StreamError::BadToken(token.0));
        }
        let size = (dword & 0xF_FFFF) as usize;
        if !(MIN_MESSAGE_SIZE..=self.max_size).contains(&size) {
            return Err(StreamError::BadSize { size, min: MIN_MESSAGE_SIZE, max: self.max_size });
        }
        Ok(Some(size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(len: usize, fill: u8) -> Vec<u8> {
        let mut m = vec![fill; len];
        let dword = u32::try_from(len).unwrap() | 0xFAB << 20;
        m[..4].copy_from_slice(&dword.to_le_bytes());
        m
    }

    /// MC-DPL4CS 2.1: several messages in one read come out one by one.
    #[test]
    fn several_messages_in_one_read() {
        let (a, b) = (message(28, 1), message(70, 2));
        let mut f = StreamFramer::default();
        assert_eq!(f.push(&[a.clone(), b.clone()].concat()).unwrap(), vec![a, b]);
        assert_eq!(f.buffered(), 0);
    }

    /// MC-DPL4CS 2.1: a message split across reads, even inside its size DWORD, is joined.
    #[test]
    fn one_message_split_across_reads() {
        let m = message(70, 7);
        let mut f = StreamFramer::default();
        assert!(f.push(&m[..2]).unwrap().is_empty());
        assert!(f.push(&m[2..40]).unwrap().is_empty());
        assert_eq!(f.push(&m[40..]).unwrap(), vec![m]);
    }

    /// MC-DPL4CS 2.2.6: the token must be 0xFAB, 0xCAB or 0xBAB; the framer stays broken.
    #[test]
    fn bad_token_breaks_the_stream() {
        let mut m = message(28, 0);
        m[3] = 0x12;
        let mut f = StreamFramer::default();
        assert_eq!(f.push(&m), Err(StreamError::BadToken(0x12B)));
        assert_eq!(f.push(&message(28, 0)), Err(StreamError::BadToken(0x12B)));
    }

    /// MC-DPL4CS 2.2.6: a size below 20 or above the limit is refused before any buffering.
    #[test]
    fn bad_size_is_refused() {
        let mut small = StreamFramer::new(100);
        let big = (200u32 | 0xFAB << 20).to_le_bytes();
        assert_eq!(small.push(&big), Err(StreamError::BadSize { size: 200, min: 20, max: 100 }));
        let mut f = StreamFramer::default();
        let tiny = (4u32 | 0xFAB << 20).to_le_bytes();
        assert!(matches!(f.push(&tiny), Err(StreamError::BadSize { size: 4, .. })));
    }

    proptest::proptest! {
        /// Any split of a valid stream gives back the same messages.
        #[test]
        fn any_split_gives_the_same_messages(lens in proptest::collection::vec(20usize..300, 1..6), cut in 0usize..2000) {
            let msgs: Vec<_> = lens.iter().enumerate().map(|(i, &n)| message(n, u8::try_from(i).unwrap())).collect();
            let all = msgs.concat();
            let cut = cut % (all.len() + 1);
            let mut f = StreamFramer::default();
            let mut got = f.push(&all[..cut]).unwrap();
            got.extend(f.push(&all[cut..]).unwrap());
            proptest::prop_assert_eq!(got, msgs);
        }

        /// Arbitrary bytes never panic and never grow the buffer beyond the limit.
        #[test]
        fn arbitrary_bytes_never_panic(chunks in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..64), 0..8)) {
            let mut f = StreamFramer::new(256);
            for c in chunks {
                if f.push(&c).is_err() { break; }
                proptest::prop_assert!(f.buffered() <= 256);
            }
        }
    }
}
