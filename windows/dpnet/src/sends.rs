//! What SendTo's flags ask of the transport (priorities), which sends CancelAsyncOperation
//! asks it to cancel and what it answers, and what GetSendQueueInfo and
//! GetConnectionInfo read back from it: the transport's own queue and counters
//! ([`dplay_dframe::Stats`]), as the DirectPlay 8 documentation defines each field.

use dplay_dframe::{Cancelled, Priority};
use dplay_wire::dp8::dpnid::Dpnid;

use crate::com::HRESULT;
use crate::dpn::*;
use crate::protocol::LinkInfo;

/// DPNSEND_PRIORITY_HIGH / _LOW (neither: normal); both at once is DPNERR_INVALIDFLAGS.
pub(crate) fn priority(flags: u32) -> Result<Priority, HRESULT> {
    match (flags & DPNSEND_PRIORITY_HIGH != 0, flags & DPNSEND_PRIORITY_LOW != 0) {
        (true, true) => Err(DPNERR_INVALIDFLAGS),
        (true, false) => Ok(Priority::High),
        (false, true) => Ok(Priority::Low),
        (false, false) => Ok(Priority::Normal),
    }
}

/// The sends CancelAsyncOperation asks the transport to cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelSends {
    /// The send of this handle.
    One(u32),
    /// Every send (DPNCANCEL_SEND, DPNCANCEL_ALL_OPERATIONS).
    All,
    /// The sends to a player, of one priority or all (DPNCANCEL_PLAYER_SENDS and its
    /// _PRIORITY_ forms).
    To(Dpnid, Option<Priority>),
}

/// The priority a DPNCANCEL_PLAYER_SENDS form names (the plain flag: every one); other bits
/// with it are DPNERR_INVALIDFLAGS.
pub(crate) fn player_sends_priority(flags: u32) -> Result<Option<Priority>, HRESULT> {
    match flags {
        DPNCANCEL_PLAYER_SENDS => Ok(None),
        DPNCANCEL_PLAYER_SENDS_PRIORITY_HIGH => Ok(Some(Priority::High)),
        DPNCANCEL_PLAYER_SENDS_PRIORITY_NORMAL => Ok(Some(Priority::Normal)),
        DPNCANCEL_PLAYER_SENDS_PRIORITY_LOW => Ok(Some(Priority::Low)),
        _ => Err(DPNERR_INVALIDFLAGS),
    }
}

/// CancelAsyncOperation's answer for sends: DPNERR_CANNOTCANCEL when any send it tried is
/// already (partly) on the wire, even though others were cancelled, as the DirectPlay 8
/// documentation says of the forms that cancel several; DPN_OK otherwise.
pub(crate) fn cancel_result(c: Cancelled) -> HRESULT {
    if c.started > 0 { DPNERR_CANNOTCANCEL } else { DPN_OK }
}

/// GetSendQueueInfo: the messages and bytes queued for the player and not yet sent, of the
/// priorities `flags` names (none: all of them).
pub(crate) fn queued(link: &LinkInfo, flags: u32) -> Result<(u32, u32), HRESULT> {
    const ALL: u32 = DPNGETSENDQUEUEINFO_PRIORITY_NORMAL
        | DPNGETSENDQUEUEINFO_PRIORITY_HIGH
        | DPNGETSENDQUEUEINFO_PRIORITY_LOW;
    if flags & !ALL != 0 {
        return Err(DPNERR_INVALIDFLAGS);
    }
    let wanted = if flags == 0 { ALL } else { flags };
    let mut total = (0usize, 0usize);
    for (bit, p) in [
        (DPNGETSENDQUEUEINFO_PRIORITY_LOW, Priority::Low),
        (DPNGETSENDQUEUEINFO_PRIORITY_NORMAL, Priority::Normal),
        (DPNGETSENDQUEUEINFO_PRIORITY_HIGH, Priority::High),
    ] {
        if wanted & bit != 0 {
            let (n, b) = link.queued.get(p.index()).copied().unwrap_or_default();
            total = (total.0 + n, total.1 + b);
        }
    }
    Ok((dword(total.0 as u64), dword(total.1 as u64)))
}

/// DPN_CONNECTION_INFO from the transport's counters. Packets are DFRAMEs: "sent" counts
/// first transmissions, "retried" the retransmissions, "dropped" the unreliable frames given
/// up (announced in a send mask, MC-DPL8R 3.1.6.5).
pub(crate) fn connection_info(link: &LinkInfo) -> DPN_CONNECTION_INFO {
    let s = &link.stats;
    let [low, normal, high] = s.messages_transmitted;
    let [low_out, normal_out, high_out] = s.messages_timed_out;
    DPN_CONNECTION_INFO {
        dwSize: size_of::<DPN_CONNECTION_INFO>() as u32,
        dwRoundTripLatencyMS: s.rtt.map_or(0, |r| dword(r.as_millis() as u64)),
        dwThroughputBPS: link.throughput,
        dwPeakThroughputBPS: link.peak,
        dwBytesSentGuaranteed: dword(s.reliable_bytes_sent),
        dwPacketsSentGuaranteed: dword(s.reliable_frames_sent),
        dwBytesSentNonGuaranteed: dword(s.unreliable_bytes_sent),
        dwPacketsSentNonGuaranteed: dword(s.unreliable_frames_sent),
        dwBytesRetried: dword(s.retransmitted_bytes),
        dwPacketsRetried: dword(s.retransmissions),
        dwBytesDropped: dword(s.send_masked_bytes),
        dwPacketsDropped: dword(s.send_masked),
        dwMessagesTransmittedHighPriority: dword(high),
        dwMessagesTimedOutHighPriority: dword(high_out),
        dwMessagesTransmittedNormalPriority: dword(normal),
        dwMessagesTimedOutNormalPriority: dword(normal_out),
        dwMessagesTransmittedLowPriority: dword(low),
        dwMessagesTimedOutLowPriority: dword(low_out),
        dwBytesReceivedGuaranteed: dword(s.reliable_bytes_received),
        dwPacketsReceivedGuaranteed: dword(s.reliable_frames_received),
        dwBytesReceivedNonGuaranteed: dword(s.unreliable_bytes_received),
        dwPacketsReceivedNonGuaranteed: dword(s.unreliable_frames_received),
        dwMessagesReceived: dword(s.messages_received),
    }
}

/// A counter as a DWORD, saturated (Windows' own counters are DWORDs).
fn dword(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
