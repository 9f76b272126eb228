//! DirectPlay 4 large messages in DPSP_MSG_PACKET and DPSP_MSG_PACKET2_DATA fragments
//! (MC-DPL4CS 2.2.39, 2.2.41, 3.1.5.27, 3.1.5.28; INDEX D.16): pieces are kept by direction and
//! `GuidMessage` at their `Offset`, and the message is whole once they cover `MessageSize`
//! bytes from 0. The caps are the module's ([`super::PER_DIRECTION`] for one message, the shared
//! [`super::TOTAL`]), at most [`MAX_PENDING`] messages at once, and a message unfinished 15
//! seconds (capture time) after its first fragment is forgotten, as a receiver discards it
//! (2.2.41).

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

use dplay_wire::dp4::fragment::Fragment;
use uuid::Uuid;

use super::{Layer, PER_DIRECTION, PIECE_OVERHEAD, Reassembly, TOTAL, Whole};

/// Messages being put back together at once, at most.
pub(crate) const MAX_PENDING: usize = 4096;
/// Seconds after its first fragment that an unfinished message is forgotten (MC-DPL4CS 2.2.41).
pub(crate) const DISCARD_SECS: f64 = 15.0;

/// One message's fragments so far.
#[derive(Debug)]
pub(crate) struct Pending {
    message_size: u32,
    first_seen: f64,
    /// By `Offset`: the bytes and the capture frame.
    pieces: BTreeMap<u32, (Vec<u8>, u64)>,
    held: usize,
}

impl Pending {
    /// Fragments held.
    pub(crate) fn len(&self) -> usize {
        self.pieces.len()
    }
}

/// Every direction's unfinished messages, by sender, receiver and `GuidMessage`.
pub(crate) type PendingMessages = HashMap<(SocketAddr, SocketAddr, Uuid), Pending>;

impl Reassembly {
    /// Takes a PACKET or PACKET2_DATA fragment that frame `frame` carried from `src` to `dst`
    /// at `time` (seconds into the capture); returns the message it completes, if any.
    pub(crate) fn offer_packet(
        &mut self,
        (src, dst): (SocketAddr, SocketAddr),
        (frame, time): (u64, f64),
        f: &Fragment,
    ) -> Option<Whole> {
        self.forget_old_packets(time);
        let key = (src, dst, f.guid_message);
        let end = u64::from(f.offset).saturating_add(f.data.len() as u64);
        let fits = end <= u64::from(f.message_size) && f.message_size as usize <= PER_DIRECTION;
        let known = self.packets.get(&key).map(|p| p.message_size);
        if !fits || known.is_some_and(|size| size != f.message_size) {
            self.dropped.incomplete += 1;
            return None;
        }
        let cost = f.data.len().saturating_add(PIECE_OVERHEAD);
        if (known.is_none() && self.packets.len() >= MAX_PENDING) || self.held.saturating_add(cost) > TOTAL {
            self.dropped.over_cap += 1;
            return None;
        }
        let pending = self.packets.entry(key).or_insert_with(|| Pending {
            message_size: f.message_size,
            first_seen: time,
            pieces: BTreeMap::new(),
            held: 0,
        });
        // A retransmission replaces its copy.
        if let Some((old, _)) = pending.pieces.insert(f.offset, (f.data.0.clone(), frame)) {
            let freed = old.len().saturating_add(PIECE_OVERHEAD);
            pending.held = pending.held.saturating_sub(freed);
            self.held = self.held.saturating_sub(freed);
        }
        pending.held += cost;
        self.held += cost;
        let whole = assemble(pending)?;
        if let Some(p) = self.packets.remove(&key) {
            self.held = self.held.saturating_sub(p.held);
        }
        Some(whole)
    }

    /// Drops the messages unfinished [`DISCARD_SECS`] after their first fragment.
    fn forget_old_packets(&mut self, time: f64) {
        let mut freed = 0;
        let mut forgotten = 0;
        self.packets.retain(|_, p| {
            let keep = time - p.first_seen < DISCARD_SECS;
            if !keep {
                freed += p.held;
                forgotten += p.pieces.len() as u64;
            }
            keep
        });
        self.held = self.held.saturating_sub(freed);
        self.dropped.incomplete += forgotten;
    }
}

/// The whole message, when the pieces cover `MessageSize` bytes from 0 (overlaps allowed, the
/// later offset's bytes winning).
fn assemble(p: &Pending) -> Option<Whole> {
    let size = p.message_size as usize;
    let mut covered = 0usize;
    for (&offset, (data, _)) in &p.pieces {
        if offset as usize > covered {
            return None;
        }
        covered = covered.max(offset as usize + data.len());
    }
    if covered < size {
        return None;
    }
    // The pieces held cover `size` bytes, so this allocation is bounded by what is held.
    let mut bytes = vec![0; size];
    for (&offset, (data, _)) in &p.pieces {
        if let Some(dst) = bytes.get_mut(offset as usize..offset as usize + data.len()) {
            dst.copy_from_slice(data);
        }
    }
    Some(Whole {
        layer: Layer::Dp4Packet,
        command: 0,
        bytes,
        frames: p.pieces.values().map(|(_, frame)| *frame).collect(),
    })
}
