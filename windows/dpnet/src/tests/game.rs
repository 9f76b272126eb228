//! A game's side for the tests: a message handler that records what it hears, and addresses.

use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::com::{HRESULT, S_OK};
use crate::dpn::*;

/// One message the handler got, with the fields the tests check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Heard {
    EnumResponse {
        session: String,
        max_players: u32,
        context: usize,
        sender: String,
        round_trip: u32,
        data: Vec<u8>,
        reserved: Vec<u8>,
    },
    EnumQuery {
        data: Vec<u8>,
        room: u32,
    },
    AsyncOpComplete {
        handle: u32,
        result: HRESULT,
        context: usize,
    },
    ConnectComplete {
        handle: u32,
        result: HRESULT,
        local: u32,
        context: usize,
        reply: Vec<u8>,
    },
    IndicateConnect {
        data: Vec<u8>,
    },
    ReturnBuffer {
        context: usize,
    },
    CreatePlayer {
        dpnid: u32,
    },
    DestroyPlayer {
        dpnid: u32,
        reason: u32,
        context: usize,
    },
    Receive {
        from: u32,
        data: Vec<u8>,
        context: usize,
        guaranteed: bool,
    },
    SendComplete {
        handle: u32,
        result: HRESULT,
        context: usize,
    },
    CreateGroup {
        group: u32,
        owner: u32,
    },
    AddToGroup {
        group: u32,
        player: u32,
    },
    PeerInfo {
        dpnid: u32,
    },
    HostMigrate {
        new_host: u32,
    },
    Terminate {
        result: HRESULT,
        data: Vec<u8>,
    },
    Other(u32),
}

/// What a test's game heard, in order; `player_context` is what CREATE_PLAYER sets.
#[derive(Default)]
pub(crate) struct Game {
    heard: Mutex<Vec<Heard>>,
    changed: Condvar,
    /// Context given to each new player: the DPNID plus this.
    pub(crate) context_base: usize,
    /// RECEIVE answers DPNSUCCESS_PENDING (the game keeps the buffer).
    pub(crate) keep_buffers: Mutex<Vec<(u32, usize)>>,
    pub(crate) keep: bool,
    /// INDICATE_CONNECT refuses the joiner, ENUM_HOSTS_QUERY the enumeration.
    pub(crate) refuse: bool,
    /// INDICATE_CONNECT's reply data, and ENUM_HOSTS_QUERY's response data.
    pub(crate) reply: Vec<u8>,
    /// RECEIVE takes this long before it returns (a slow game).
    pub(crate) receive_delay: Duration,
    /// When a RECEIVE last returned.
    pub(crate) receive_returned: Mutex<Option<Instant>>,
}

impl Game {
    pub(crate) fn new(context_base: usize) -> Arc<Self> {
        Arc::new(Self { context_base, ..Self::default() })
    }

    /// A game that keeps every RECEIVE buffer (answers DPNSUCCESS_PENDING).
    pub(crate) fn keeping() -> Arc<Self> {
        Arc::new(Self { keep: true, ..Self::default() })
    }

    /// A game whose RECEIVE takes `delay` and keeps the buffer (answers DPNSUCCESS_PENDING).
    pub(crate) fn slow_keeping(context_base: usize, delay: Duration) -> Arc<Self> {
        Arc::new(Self { context_base, keep: true, receive_delay: delay, ..Self::default() })
    }

    /// A host game that answers INDICATE_CONNECT with `reply`, refusing when `refuse`.
    pub(crate) fn answering(context_base: usize, refuse: bool, reply: &[u8]) -> Arc<Self> {
        Arc::new(Self { context_base, refuse, reply: reply.to_vec(), ..Self::default() })
    }

    pub(crate) fn heard(&self) -> Vec<Heard> {
        self.heard.lock().unwrap().clone()
    }

    /// Waits (at most 10 s) until a message matching `want` was heard; returns it.
    pub(crate) fn wait_for(&self, what: &str, want: impl Fn(&Heard) -> bool) -> Heard {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut heard = self.heard.lock().unwrap();
        loop {
            if let Some(h) = heard.iter().find(|h| want(h)) {
                return h.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "never heard {what}; heard {:?}", *heard);
            heard = self.changed.wait_timeout(heard, left).unwrap().0;
        }
    }

    /// The handler's context pointer for Initialize.
    pub(crate) fn context(self: &Arc<Self>) -> *mut c_void {
        Arc::as_ptr(self).cast_mut().cast()
    }
}

/// The message handler every test game registers.
pub(crate) unsafe extern "system" fn handler(context: *mut c_void, id: u32, msg: *mut c_void) -> HRESULT {
    // SAFETY: `context` is the `Game` the test keeps alive; `msg` is the structure `id` names.
    let game = unsafe { &*context.cast::<Game>() };
    let mut answer = S_OK;
    let heard = unsafe {
        match id {
            DPN_MSGID_ENUM_HOSTS_RESPONSE => {
                let m = &*msg.cast::<DPNMSG_ENUM_HOSTS_RESPONSE>();
                let d = &*m.pApplicationDescription;
                Heard::EnumResponse {
                    session: read_wide(d.pwszSessionName).unwrap_or_default(),
                    max_players: d.dwMaxPlayers,
                    context: m.pvUserContext as usize,
                    sender: crate::address::address_url(m.pAddressSender)
                        .map(|u| u.to_string())
                        .unwrap_or_default(),
                    round_trip: m.dwRoundTripLatencyMS,
                    data: read_bytes(m.pvResponseData, m.dwResponseDataSize),
                    reserved: read_bytes(d.pvApplicationReservedData, d.dwApplicationReservedDataSize),
                }
            }
            // Answered with the INDICATE_CONNECT reply as response data, or refused with it.
            DPN_MSGID_ENUM_HOSTS_QUERY => {
                let m = &mut *msg.cast::<DPNMSG_ENUM_HOSTS_QUERY>();
                if !game.reply.is_empty() {
                    m.pvResponseData = game.reply.as_ptr().cast_mut().cast();
                    m.dwResponseDataSize = game.reply.len() as u32;
                    m.pvResponseContext = 0x4343 as *mut c_void;
                }
                if game.refuse {
                    answer = DPNERR_GENERIC;
                }
                Heard::EnumQuery {
                    data: read_bytes(m.pvReceivedData, m.dwReceivedDataSize),
                    room: m.dwMaxResponseDataSize,
                }
            }
            DPN_MSGID_ASYNC_OP_COMPLETE => {
                let m = &*msg.cast::<DPNMSG_ASYNC_OP_COMPLETE>();
                Heard::AsyncOpComplete {
                    handle: m.hAsyncOp,
                    result: m.hResultCode,
                    context: m.pvUserContext as usize,
                }
            }
            DPN_MSGID_CONNECT_COMPLETE => {
                let m = &*msg.cast::<DPNMSG_CONNECT_COMPLETE>();
                Heard::ConnectComplete {
                    handle: m.hAsyncOp,
                    result: m.hResultCode,
                    local: m.dpnidLocal,
                    context: m.pvUserContext as usize,
                    reply: read_bytes(m.pvApplicationReplyData, m.dwApplicationReplyDataSize),
                }
            }
            DPN_MSGID_INDICATE_CONNECT => {
                let m = &mut *msg.cast::<DPNMSG_INDICATE_CONNECT>();
                if !game.reply.is_empty() {
                    m.pvReplyData = game.reply.as_ptr().cast_mut().cast();
                    m.dwReplyDataSize = game.reply.len() as u32;
                    m.pvReplyContext = 0x4242 as *mut c_void;
                    m.pvPlayerContext = 0x5150 as *mut c_void;
                }
                if game.refuse {
                    answer = DPNERR_GENERIC;
                }
                Heard::IndicateConnect { data: read_bytes(m.pvUserConnectData, m.dwUserConnectDataSize) }
            }
            DPN_MSGID_RETURN_BUFFER => {
                Heard::ReturnBuffer { context: (*msg.cast::<DPNMSG_RETURN_BUFFER>()).pvUserContext as usize }
            }
            DPN_MSGID_CREATE_PLAYER => {
                let m = &mut *msg.cast::<DPNMSG_CREATE_PLAYER>();
                if m.pvPlayerContext.is_null() {
                    m.pvPlayerContext = (game.context_base + m.dpnidPlayer as usize) as *mut c_void;
                }
                Heard::CreatePlayer { dpnid: m.dpnidPlayer }
            }
            DPN_MSGID_DESTROY_PLAYER => {
                let m = &*msg.cast::<DPNMSG_DESTROY_PLAYER>();
                Heard::DestroyPlayer {
                    dpnid: m.dpnidPlayer,
                    reason: m.dwReason,
                    context: m.pvPlayerContext as usize,
                }
            }
            DPN_MSGID_RECEIVE => {
                std::thread::sleep(game.receive_delay);
                let m = &*msg.cast::<DPNMSG_RECEIVE>();
                let data = std::slice::from_raw_parts(m.pReceiveData, m.dwReceiveDataSize as usize).to_vec();
                if game.keep {
                    game.keep_buffers
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((m.hBufferHandle, m.pReceiveData as usize));
                    answer = DPNSUCCESS_PENDING;
                }
                Heard::Receive {
                    from: m.dpnidSender,
                    data,
                    context: m.pvPlayerContext as usize,
                    guaranteed: m.dwReceiveFlags & DPNRECEIVE_GUARANTEED != 0,
                }
            }
            DPN_MSGID_SEND_COMPLETE => {
                let m = &*msg.cast::<DPNMSG_SEND_COMPLETE>();
                Heard::SendComplete {
                    handle: m.hAsyncOp,
                    result: m.hResultCode,
                    context: m.pvUserContext as usize,
                }
            }
            DPN_MSGID_CREATE_GROUP => {
                let m = &*msg.cast::<DPNMSG_CREATE_GROUP>();
                Heard::CreateGroup { group: m.dpnidGroup, owner: m.dpnidOwner }
            }
            DPN_MSGID_ADD_PLAYER_TO_GROUP => {
                let m = &*msg.cast::<DPNMSG_GROUP_MEMBER>();
                Heard::AddToGroup { group: m.dpnidGroup, player: m.dpnidPlayer }
            }
            DPN_MSGID_PEER_INFO => Heard::PeerInfo { dpnid: (*msg.cast::<DPNMSG_ID_CONTEXT>()).dpnid },
            DPN_MSGID_HOST_MIGRATE => {
                Heard::HostMigrate { new_host: (*msg.cast::<DPNMSG_ID_CONTEXT>()).dpnid }
            }
            DPN_MSGID_TERMINATE_SESSION => {
                let m = &*msg.cast::<DPNMSG_TERMINATE_SESSION>();
                Heard::Terminate {
                    result: m.hResultCode,
                    data: read_bytes(m.pvTerminateData, m.dwTerminateDataSize),
                }
            }
            other => Heard::Other(other),
        }
    };
    let receive = matches!(heard, Heard::Receive { .. });
    game.heard.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(heard);
    if receive {
        *game.receive_returned.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some(Instant::now());
    }
    game.changed.notify_all();
    answer
}

/// An IDirectPlay8Address of the DLL holding `url`, as a game builds one; released on drop.
pub(crate) struct Address(pub(crate) *mut c_void);

impl Address {
    pub(crate) fn new(url: &str) -> Self {
        Self(crate::address::create_address(&dplay_wire::dp8::url::DirectPlayUrl::parse(url).unwrap()))
    }
}

impl Drop for Address {
    fn drop(&mut self) {
        crate::core::release(self.0);
    }
}
