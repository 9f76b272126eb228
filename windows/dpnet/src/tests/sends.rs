//! SendTo's completion, priorities and timeouts, GetSendQueueInfo and GetConnectionInfo from
//! the transport, and DestroyPeer's data, between two peers on loopback.

use std::ffi::c_void;
use std::sync::Arc;

use super::game::{Game, Heard};
use super::peer::Peer;
use crate::com::HRESULT;
use crate::dpn::*;

impl Peer {
    fn send_timed(&self, to: u32, data: &[u8], flags: u32, timeout: u32, context: usize) -> (HRESULT, u32) {
        let buf = DPN_BUFFER_DESC { dwBufferSize: data.len() as u32, pBufferData: data.as_ptr().cast_mut() };
        let mut handle = 0;
        let hr = unsafe {
            (self.v().send_to)(self.0, to, &buf, 1, timeout, context as *mut c_void, &mut handle, flags)
        };
        (hr, handle)
    }

    fn cancel(&self, handle: u32, flags: u32) -> HRESULT {
        unsafe { (self.v().cancel_async_operation)(self.0, handle, flags) }
    }

    fn queue_info(&self, to: u32, flags: u32) -> Result<(u32, u32), HRESULT> {
        let (mut msgs, mut bytes) = (0, 0);
        match unsafe { (self.v().get_send_queue_info)(self.0, to, &mut msgs, &mut bytes, flags) } {
            DPN_OK => Ok((msgs, bytes)),
            e => Err(e),
        }
    }

    fn connection_info(&self, to: u32, size: u32) -> Result<DPN_CONNECTION_INFO, HRESULT> {
        let mut info = DPN_CONNECTION_INFO { dwSize: size, ..DPN_CONNECTION_INFO::default() };
        match unsafe { (self.v().get_connection_info)(self.0, to, &mut info, 0) } {
            DPN_OK => Ok(info),
            e => Err(e),
        }
    }
}

/// A host and a joiner's games, the host and the joiner, and their DPNIDs. The games come
/// first: bound in this order, the peers (whose release may still call a handler) drop first.
fn pair() -> (Arc<Game>, Arc<Game>, Peer, Peer, u32, u32) {
    pair_with(Game::new(0x1000))
}

/// [`pair`] with the host's game given.
fn pair_with(host_game: Arc<Game>) -> (Arc<Game>, Arc<Game>, Peer, Peer, u32, u32) {
    let join_game = Game::new(0x2000);
    let host = Peer::new();
    host.init(&host_game);
    let port = host.host(0);
    let joiner = Peer::new();
    joiner.init(&join_game);
    assert_eq!(joiner.connect(port, 0, true).0, DPN_OK);
    let Heard::ConnectComplete { local, .. } =
        join_game.wait_for("CONNECT_COMPLETE", |h| matches!(h, Heard::ConnectComplete { .. }))
    else {
        unreachable!()
    };
    let host_id = *joiner.players().iter().find(|p| **p != local).unwrap();
    host_game.wait_for("the joiner on the host", |h| *h == Heard::CreatePlayer { dpnid: local });
    (host_game, join_game, host, joiner, host_id, local)
}

/// The lengths of the messages `game` received, in order.
fn received_lengths(game: &Game) -> Vec<usize> {
    let lengths = game.heard().into_iter().filter_map(|h| match h {
        Heard::Receive { data, .. } => Some(data.len()),
        _ => None,
    });
    lengths.collect()
}

fn completion(game: &Game, handle: u32) -> HRESULT {
    match game
        .wait_for("SEND_COMPLETE", |h| matches!(h, Heard::SendComplete { handle: x, .. } if *x == handle))
    {
        Heard::SendComplete { result, .. } => result,
        _ => unreachable!(),
    }
}

/// Behind a large guaranteed message: a message whose `dwTimeOut` passes before its turn
/// completes with DPNERR_TIMEDOUT and never arrives; a DPNSEND_PRIORITY_HIGH one overtakes a
/// normal one queued before it; GetSendQueueInfo counts what waits; every guaranteed send
/// completes DPN_OK once acknowledged, and GetConnectionInfo counts them.
#[test]
fn queue_priorities_timeouts_and_counters() {
    let _pool = super::shared();
    let (host_game, join_game, host, joiner, host_id, _) = pair();
    assert_eq!(
        joiner.send_timed(host_id, b"x", DPNSEND_PRIORITY_HIGH | DPNSEND_PRIORITY_LOW, 0, 0).0,
        DPNERR_INVALIDFLAGS
    );
    let big = vec![0xB1; 600 * 1024];
    let (hr, big_handle) = joiner.send_timed(host_id, &big, DPNSEND_GUARANTEED, 0, 1);
    assert_eq!(hr, DPNSUCCESS_PENDING);
    let (_, late) = joiner.send_timed(host_id, b"late", DPNSEND_GUARANTEED, 1, 2);
    let (_, normal) = joiner.send_timed(host_id, b"normal", DPNSEND_GUARANTEED, 0, 3);
    let (_, high) = joiner.send_timed(host_id, b"high", DPNSEND_GUARANTEED | DPNSEND_PRIORITY_HIGH, 0, 4);
    let (msgs, bytes) = joiner.queue_info(host_id, 0).unwrap();
    assert!(msgs >= 2 && bytes >= 10, "{msgs} messages, {bytes} bytes queued");
    assert_eq!(joiner.queue_info(host_id, DPNGETSENDQUEUEINFO_PRIORITY_HIGH).unwrap(), (1, 4));
    assert_eq!(joiner.queue_info(host_id, 0x8), Err(DPNERR_INVALIDFLAGS));

    assert_eq!(completion(&join_game, late), DPNERR_TIMEDOUT);
    for h in [big_handle, normal, high] {
        assert_eq!(completion(&join_game, h), DPN_OK);
    }
    host_game
        .wait_for("the normal message", |h| matches!(h, Heard::Receive { data, .. } if data == b"normal"));
    // What arrived, in order, by length and first byte (the large one is 600 KiB).
    let received: Vec<(usize, u8)> = host_game
        .heard()
        .into_iter()
        .filter_map(|h| match h {
            Heard::Receive { data, .. } => Some((data.len(), data[0])),
            _ => None,
        })
        .collect();
    assert_eq!(received, [(big.len(), 0xB1), (4, b'h'), (6, b'n')]);
    assert_eq!(joiner.queue_info(host_id, 0).unwrap(), (0, 0));

    assert_eq!(joiner.connection_info(host_id, 88).err(), Some(DPNERR_INVALIDPARAM));
    let info = joiner.connection_info(host_id, size_of::<DPN_CONNECTION_INFO>() as u32).unwrap();
    assert_eq!(info.dwSize, 92);
    assert!(info.dwPacketsSentGuaranteed > 400, "{}", info.dwPacketsSentGuaranteed);
    assert!(info.dwBytesSentGuaranteed > 600 * 1024);
    assert_eq!(info.dwMessagesTransmittedHighPriority, 1);
    assert_eq!(info.dwMessagesTimedOutNormalPriority, 1);
    assert!(info.dwMessagesTransmittedNormalPriority >= 2);
    assert!(info.dwPacketsReceivedGuaranteed > 0 && info.dwMessagesReceived > 0);
    assert!(info.dwPeakThroughputBPS >= info.dwThroughputBPS);
    let local = joiner.players().into_iter().find(|p| *p != host_id).unwrap();
    assert_eq!(joiner.connection_info(local, 92).err(), Some(DPNERR_INVALIDPLAYER));
    assert_eq!(joiner.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
}

/// CancelAsyncOperation of sends, behind large guaranteed messages partly on the wire: a
/// send still wholly queued completes DPNERR_USERCANCEL and never arrives; the first large
/// one answers DPNERR_CANNOTCANCEL and completes DPN_OK; the DPNCANCEL_PLAYER_SENDS forms
/// cancel by player and priority, DPNCANCEL_SEND everything queued (answering
/// DPNERR_CANNOTCANCEL, as a large one on the wire could not be).
#[test]
fn cancel_sends_still_queued() {
    let _pool = super::shared();
    let (host_game, join_game, host, joiner, host_id, local) = pair();
    let big = vec![0xB2; 1 << 20];
    let bigs: Vec<u32> =
        (1..=3).map(|c| joiner.send_timed(host_id, &big, DPNSEND_GUARANTEED, 0, c).1).collect();
    let (_, one) = joiner.send_timed(host_id, b"one", DPNSEND_GUARANTEED, 0, 4);
    let (_, high) = joiner.send_timed(host_id, b"high", DPNSEND_GUARANTEED | DPNSEND_PRIORITY_HIGH, 0, 5);
    let (_, low) = joiner.send_timed(host_id, b"low", DPNSEND_GUARANTEED | DPNSEND_PRIORITY_LOW, 0, 6);
    let (_, rest) = joiner.send_timed(host_id, b"rest", DPNSEND_GUARANTEED, 0, 7);

    // Every cancel at once, the one next in line first, while the large ones are on the wire.
    assert_eq!(joiner.cancel(host_id, DPNCANCEL_PLAYER_SENDS_PRIORITY_HIGH), DPN_OK);
    assert_eq!(joiner.cancel(bigs[0], 0), DPNERR_CANNOTCANCEL);
    assert_eq!(joiner.cancel(one, 0), DPN_OK);
    assert_eq!(joiner.cancel(host_id, DPNCANCEL_PLAYER_SENDS_PRIORITY_LOW), DPN_OK);
    assert_eq!(joiner.cancel(0, DPNCANCEL_SEND), DPNERR_CANNOTCANCEL, "a large one is on the wire");
    assert_eq!(joiner.cancel(bigs[0], DPNCANCEL_SEND), DPNERR_INVALIDFLAGS);
    assert_eq!(joiner.cancel(0x7777, 0), DPNERR_INVALIDHANDLE);
    assert_eq!(joiner.cancel(local + 99, DPNCANCEL_PLAYER_SENDS), DPNERR_INVALIDPLAYER);
    assert_eq!(joiner.cancel(local, DPNCANCEL_PLAYER_SENDS), DPN_OK, "nothing waits for ourselves");
    assert_eq!(joiner.cancel(host_id, DPNCANCEL_PLAYER_SENDS | 0x4), DPNERR_INVALIDFLAGS);
    for h in [high, one, low, rest] {
        assert_eq!(completion(&join_game, h), DPNERR_USERCANCEL);
    }
    assert_eq!(completion(&join_game, bigs[0]), DPN_OK);
    // The later large ones: finished if they had started, cancelled if not.
    let later: Vec<HRESULT> = bigs[1..].iter().map(|h| completion(&join_game, *h)).collect();
    assert!(later.iter().all(|r| [DPN_OK, DPNERR_USERCANCEL].contains(r)), "{later:?}");

    let (_, after) = joiner.send_timed(host_id, b"after", DPNSEND_GUARANTEED, 0, 8);
    assert_eq!(completion(&join_game, after), DPN_OK);
    host_game.wait_for("the last message", |h| matches!(h, Heard::Receive { data, .. } if data == b"after"));
    let received = received_lengths(&host_game);
    let arrived = 1 + later.iter().filter(|r| **r == DPN_OK).count();
    let mut expected = vec![big.len(); arrived];
    expected.push(5);
    assert_eq!(received, expected, "nothing cancelled arrived");
    assert_eq!(joiner.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
}

/// CancelAsyncOperation (DirectPlay 8 documentation: sends, enumerations and the connect
/// only): a DPNSEND_COMPLETEONPROCESS send none of whose frames went out is cancelled as any
/// send (SEND_COMPLETE DPNERR_USERCANCEL, never delivered) or times out unsent; one on the wire
/// answers DPNERR_CANNOTCANCEL and completes DPN_OK once the receiver processed it. A group
/// request sent to the host answers DPNERR_CANNOTCANCEL and completes normally.
#[test]
fn cancel_sends_with_completion_and_requests() {
    let _pool = super::shared();
    let (host_game, join_game, host, joiner, host_id, _) = pair();
    let on_process = DPNSEND_GUARANTEED | DPNSEND_COMPLETEONPROCESS;
    let big = vec![0xB3; 600 * 1024];
    let (hr, first) = joiner.send_timed(host_id, &big, on_process, 0, 1);
    assert_eq!(hr, DPNSUCCESS_PENDING);
    let (_, queued) = joiner.send_timed(host_id, b"queued", on_process, 0, 2);
    let (_, late) = joiner.send_timed(host_id, b"late", on_process, 1, 3);
    assert_eq!(joiner.cancel(first, 0), DPNERR_CANNOTCANCEL);
    assert_eq!(joiner.cancel(queued, 0), DPN_OK);
    assert_eq!(completion(&join_game, queued), DPNERR_USERCANCEL);
    assert_eq!(completion(&join_game, late), DPNERR_TIMEDOUT);
    assert_eq!(completion(&join_game, first), DPN_OK);
    assert_eq!(joiner.cancel(first, 0), DPNERR_INVALIDHANDLE, "a completed send");

    let (_, after) = joiner.send_timed(host_id, b"after", on_process, 0, 4);
    assert_eq!(completion(&join_game, after), DPN_OK);
    host_game.wait_for("the last message", |h| matches!(h, Heard::Receive { data, .. } if data == b"after"));
    let received = received_lengths(&host_game);
    assert_eq!(received, [big.len(), 5], "nothing cancelled or timed out arrived");

    let mut name: Vec<u16> = "wingmen\0".encode_utf16().collect();
    let info = DPN_GROUP_INFO {
        dwSize: size_of::<DPN_GROUP_INFO>() as u32,
        dwInfoFlags: DPNINFO_NAME,
        pwszName: name.as_mut_ptr(),
        pvData: std::ptr::null_mut(),
        dwDataSize: 0,
        dwPlayerFlags: 0,
    };
    let mut request = 0;
    let (null, context) = (std::ptr::null_mut(), 0x6C as *mut c_void);
    let hr = unsafe { (joiner.v().create_group)(joiner.0, &info, null, context, &mut request, 0) };
    assert_eq!(hr, DPNSUCCESS_PENDING);
    assert_eq!(joiner.cancel(request, 0), DPNERR_CANNOTCANCEL);
    join_game.wait_for("CreateGroup's completion", |h| {
        *h == Heard::AsyncOpComplete { handle: request, result: DPN_OK, context: 0x6C }
    });
    assert_eq!(joiner.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
}

/// DPNSEND_COMPLETEONPROCESS: SEND_COMPLETE comes once "the target's message handler returns
/// from indicating its reception" (DirectPlay 8 documentation of the flag; MC-DPL8CS 3.3): not
/// before a slow RECEIVE handler returned, and not later than that when it keeps the buffer
/// (DPNSUCCESS_PENDING; docs/decisions.md). A plain guaranteed send completes on the
/// transport's acknowledgement, while the handler still runs.
#[test]
fn complete_on_process_waits_for_the_handler() {
    let _pool = super::shared();
    let delay = std::time::Duration::from_millis(300);
    let (host_game, join_game, host, joiner, host_id, _) = pair_with(Game::slow_keeping(0x1000, delay));
    let started = std::time::Instant::now();
    let on_process = DPNSEND_GUARANTEED | DPNSEND_COMPLETEONPROCESS;
    let (hr, handle) = joiner.send_timed(host_id, b"processed?", on_process, 0, 7);
    assert_eq!(hr, DPNSUCCESS_PENDING);
    assert_eq!(completion(&join_game, handle), DPN_OK);
    let returned = host_game.receive_returned.lock().unwrap().expect("the handler returned first");
    assert!(returned.duration_since(started) >= delay);
    assert_eq!(host_game.keep_buffers.lock().unwrap().len(), 1, "the buffer is still the game's");

    *host_game.receive_returned.lock().unwrap() = None;
    let (_, plain) = joiner.send_timed(host_id, b"acknowledged", DPNSEND_GUARANTEED, 0, 8);
    assert_eq!(completion(&join_game, plain), DPN_OK);
    assert!(host_game.receive_returned.lock().unwrap().is_none(), "the handler was still running");
    host_game.wait_for(
        "the second message",
        |h| matches!(h, Heard::Receive { data, .. } if data == b"acknowledged"),
    );
    assert_eq!(joiner.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
}

/// DestroyPeer: the removed peer hears TERMINATE_SESSION with the host's data
/// (DN_TERMINATE_SESSION, MC-DPL8CS 2.2.2.1).
#[test]
fn destroy_peer_tells_the_player_why() {
    let _pool = super::shared();
    let (_host_game, join_game, host, joiner, _, local) = pair();
    let why = b"kicked";
    let hr = unsafe { (host.v().destroy_peer)(host.0, local, why.as_ptr().cast(), why.len() as u32, 0) };
    assert_eq!(hr, DPN_OK);
    join_game.wait_for("TERMINATE_SESSION", |h| {
        *h == Heard::Terminate { result: DPNERR_HOSTTERMINATEDSESSION, data: why.to_vec() }
    });
    assert_eq!(joiner.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
}
