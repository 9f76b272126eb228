//! IDirectPlay8Peer against itself on loopback: enumerate, host, join, send, info, groups,
//! close.

use std::ffi::c_void;
use std::sync::Arc;

use super::game::{Address, Game, Heard, handler};
use crate::classes::IID_IDIRECTPLAY8_PEER;
use crate::com::{GUID, HRESULT};
use crate::dpn::*;
use crate::exports::DirectPlay8Create;
use crate::peer::PeerVtbl;

pub(crate) const APP: GUID = GUID::from_u128(0x1BADB002_0000_4000_8000_0000000000AA);

/// A peer object as a game holds it.
pub(crate) struct Peer(pub(crate) *mut c_void);

impl Peer {
    pub(crate) fn new() -> Self {
        let mut p = std::ptr::null_mut();
        let hr = unsafe { DirectPlay8Create(&IID_IDIRECTPLAY8_PEER, &mut p, std::ptr::null_mut()) };
        assert_eq!(hr, DPN_OK);
        Self(p)
    }

    pub(crate) fn v(&self) -> &PeerVtbl {
        unsafe { &**self.0.cast::<*const PeerVtbl>() }
    }

    pub(crate) fn init(&self, game: &Arc<Game>) {
        assert_eq!(unsafe { (self.v().initialize)(self.0, game.context(), Some(handler), 0) }, DPN_OK);
    }

    pub(crate) fn set_name(&self, name: &str) {
        let mut wide = wide(name);
        let info = DPN_PLAYER_INFO {
            dwSize: size_of::<DPN_PLAYER_INFO>() as u32,
            dwInfoFlags: DPNINFO_NAME,
            pwszName: wide.as_mut_ptr(),
            pvData: std::ptr::null_mut(),
            dwDataSize: 0,
            dwPlayerFlags: 0,
        };
        let hr = unsafe {
            (self.v().set_peer_info)(self.0, &info, std::ptr::null_mut(), std::ptr::null_mut(), DPNOP_SYNC)
        };
        assert_eq!(hr, DPN_OK);
    }

    /// Hosts "test session" on a port the system picks; returns the port.
    pub(crate) fn host(&self, flags: u32) -> u16 {
        let mut name = wide("test session");
        assert_eq!(self.host_desc(&desc(flags, &mut name)), DPN_OK);
        let mut out = [std::ptr::null_mut(); 4];
        let mut n = 4;
        let hr = unsafe { (self.v().get_local_host_addresses)(self.0, out.as_mut_ptr(), &mut n, 0) };
        assert_eq!(hr, DPN_OK);
        self.local_port()
    }

    /// Host with `desc` on a port the system picks.
    fn host_desc(&self, desc: &DPN_APPLICATION_DESC) -> HRESULT {
        let device = Address::new("x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;port=0");
        let mut devices = [device.0];
        unsafe {
            (self.v().host)(
                self.0,
                desc,
                devices.as_mut_ptr(),
                1,
                std::ptr::null(),
                std::ptr::null(),
                7 as *mut c_void,
                0,
            )
        }
    }

    /// GetApplicationDesc's `pvApplicationReservedData`.
    fn app_reserved(&self) -> Vec<u8> {
        let mut size = 0;
        let hr = unsafe { (self.v().get_application_desc)(self.0, std::ptr::null_mut(), &mut size, 0) };
        assert_eq!(hr, DPNERR_BUFFERTOOSMALL);
        let mut buf = vec![0u64; (size as usize).div_ceil(8)];
        let d = buf.as_mut_ptr().cast::<DPN_APPLICATION_DESC>();
        unsafe {
            (*d).dwSize = size_of::<DPN_APPLICATION_DESC>() as u32;
            assert_eq!((self.v().get_application_desc)(self.0, d, &mut size, 0), DPN_OK);
            crate::dpn::read_bytes((*d).pvApplicationReservedData, (*d).dwApplicationReservedDataSize)
        }
    }

    fn local_port(&self) -> u16 {
        unsafe { crate::methods::core::<PeerVtbl>(self.0) }.bound().unwrap().port()
    }

    pub(crate) fn connect(&self, port: u16, context: usize, sync: bool) -> (HRESULT, u32) {
        self.connect_with(port, context, sync, &[])
    }

    pub(crate) fn connect_with(&self, port: u16, context: usize, sync: bool, data: &[u8]) -> (HRESULT, u32) {
        let mut name = wide("");
        let desc = desc(0, &mut name);
        let host = Address::new(&format!(
            "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;hostname=127.0.0.1;port={port}"
        ));
        let device = Address::new("x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;port=0");
        let mut handle = 0;
        let hr = unsafe {
            (self.v().connect)(
                self.0,
                &desc,
                host.0,
                device.0,
                std::ptr::null(),
                std::ptr::null(),
                if data.is_empty() { std::ptr::null() } else { data.as_ptr().cast() },
                data.len() as u32,
                9 as *mut c_void,
                context as *mut c_void,
                &mut handle,
                if sync { DPNOP_SYNC } else { 0 },
            )
        };
        (hr, handle)
    }

    pub(crate) fn send(&self, to: u32, data: &[u8], flags: u32, context: usize) -> (HRESULT, u32) {
        let buf = DPN_BUFFER_DESC { dwBufferSize: data.len() as u32, pBufferData: data.as_ptr().cast_mut() };
        let mut handle = 0;
        let hr =
            unsafe { (self.v().send_to)(self.0, to, &buf, 1, 0, context as *mut c_void, &mut handle, flags) };
        (hr, handle)
    }

    pub(crate) fn name_of(&self, dpnid: u32) -> Result<(String, u32), HRESULT> {
        let mut size = 0;
        let hr = unsafe { (self.v().get_peer_info)(self.0, dpnid, std::ptr::null_mut(), &mut size, 0) };
        if hr != DPNERR_BUFFERTOOSMALL {
            return Err(hr);
        }
        let mut buf = vec![0u64; (size as usize).div_ceil(8)];
        let info = buf.as_mut_ptr().cast::<DPN_PLAYER_INFO>();
        unsafe { (*info).dwSize = size_of::<DPN_PLAYER_INFO>() as u32 };
        let hr = unsafe { (self.v().get_peer_info)(self.0, dpnid, info, &mut size, 0) };
        if hr != DPN_OK {
            return Err(hr);
        }
        unsafe { Ok((read_wide((*info).pwszName).unwrap(), (*info).dwPlayerFlags)) }
    }

    pub(crate) fn players(&self) -> Vec<u32> {
        let mut ids = [0u32; 16];
        let mut n = 16;
        let hr =
            unsafe { (self.v().enum_players_and_groups)(self.0, ids.as_mut_ptr(), &mut n, DPNENUM_PLAYERS) };
        assert_eq!(hr, DPN_OK);
        ids[..n as usize].to_vec()
    }

    pub(crate) fn close(&self) -> HRESULT {
        unsafe { (self.v().close)(self.0, 0) }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        unsafe { ((*self.0.cast::<*const crate::com::IUnknownVtbl>()).as_ref().unwrap().release)(self.0) };
    }
}

pub(crate) fn desc(flags: u32, name: &mut [u16]) -> DPN_APPLICATION_DESC {
    DPN_APPLICATION_DESC {
        dwSize: size_of::<DPN_APPLICATION_DESC>() as u32,
        dwFlags: flags,
        guidInstance: GUID::default(),
        guidApplication: APP,
        dwMaxPlayers: 8,
        dwCurrentPlayers: 0,
        pwszSessionName: name.as_mut_ptr(),
        pwszPassword: std::ptr::null_mut(),
        pvReservedData: std::ptr::null_mut(),
        dwReservedDataSize: 0,
        pvApplicationReservedData: std::ptr::null_mut(),
        dwApplicationReservedDataSize: 0,
    }
}

#[test]
fn methods_before_initialize_answer_uninitialized() {
    let _pool = super::shared();
    let p = Peer::new();
    let mut n = 0;
    let hr = unsafe { (p.v().enum_players_and_groups)(p.0, std::ptr::null_mut(), &mut n, DPNENUM_PLAYERS) };
    assert_eq!(hr, DPNERR_UNINITIALIZED);
    let game = Game::new(0);
    p.init(&game);
    assert_eq!(
        unsafe { (p.v().initialize)(p.0, game.context(), Some(handler), 0) },
        DPNERR_ALREADYINITIALIZED
    );
}

#[test]
fn sp_caps_are_windows_defaults() {
    let _pool = super::shared();
    let p = Peer::new();
    let game = Game::new(0);
    p.init(&game);
    let mut caps: DPN_SP_CAPS = unsafe { std::mem::zeroed() };
    caps.dwSize = size_of::<DPN_SP_CAPS>() as u32;
    assert_eq!(unsafe { (p.v().get_sp_caps)(p.0, &CLSID_DP8SP_TCPIP, &mut caps, 0) }, DPN_OK);
    assert_eq!(
        (caps.dwDefaultEnumCount, caps.dwDefaultEnumRetryInterval, caps.dwDefaultEnumTimeout),
        (5, 1500, 1500)
    );
    assert_eq!(caps.dwMaxEnumPayloadSize, 983);
    let other = GUID::from_u128(0x53934290_628D_11D2_AE0F_006097B01411); // IPX
    assert_eq!(unsafe { (p.v().get_sp_caps)(p.0, &other, &mut caps, 0) }, DPNERR_DOESNOTEXIST);
    let (mut size, mut count) = (0, 0);
    let hr = unsafe {
        (p.v().enum_service_providers)(
            p.0,
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null_mut(),
            &mut size,
            &mut count,
            0,
        )
    };
    assert_eq!(hr, DPNERR_BUFFERTOOSMALL);
    let mut buf = vec![0u64; (size as usize).div_ceil(8)];
    let info = buf.as_mut_ptr().cast::<DPN_SERVICE_PROVIDER_INFO>();
    let hr = unsafe {
        (p.v().enum_service_providers)(
            p.0,
            std::ptr::null(),
            std::ptr::null(),
            info,
            &mut size,
            &mut count,
            0,
        )
    };
    assert_eq!((hr, count), (DPN_OK, 1));
    assert_eq!(unsafe { (*info).guid }, CLSID_DP8SP_TCPIP);
    assert_eq!(unsafe { read_wide((*info).pwszName) }.unwrap(), "DirectPlay8 TCP/IP Service Provider");
}

/// RegisterLobby names a lobby connection, and no lobby launched us: DPNERR_INVALIDPARAM
/// both ways (the documentation's one error), whatever the handle; unknown flags
/// DPNERR_INVALIDFLAGS.
#[test]
fn register_lobby_without_a_lobby() {
    let _pool = super::shared();
    let p = Peer::new();
    let game = Game::new(0);
    p.init(&game);
    let mut app = 0u32; // stands for a lobbied application object: never read
    let app = (&raw mut app).cast::<c_void>();
    let register = |handle, flags| unsafe { (p.v().register_lobby)(p.0, handle, app, flags) };
    assert_eq!(register(0, DPNLOBBY_REGISTER), DPNERR_INVALIDPARAM);
    assert_eq!(register(1, DPNLOBBY_REGISTER), DPNERR_INVALIDPARAM);
    assert_eq!(register(1, DPNLOBBY_UNREGISTER), DPNERR_INVALIDPARAM);
    assert_eq!(register(1, 0), DPNERR_INVALIDFLAGS);
    assert_eq!(register(1, DPNLOBBY_REGISTER | DPNLOBBY_UNREGISTER), DPNERR_INVALIDFLAGS);
}

/// An asynchronous EnumHosts of the host at `port` on loopback with `data` and `context` (two
/// queries 50 ms apart); its handle.
fn enumerate(p: &Peer, port: u16, data: &[u8], context: usize) -> u32 {
    let mut name = wide("");
    let d = desc(0, &mut name);
    let target = Address::new(&format!(
        "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;hostname=127.0.0.1;port={port}"
    ));
    let mut handle = 0;
    let hr = unsafe {
        (p.v().enum_hosts)(
            p.0,
            &d,
            target.0,
            std::ptr::null_mut(),
            data.as_ptr().cast(),
            data.len() as u32,
            2,
            50,
            0,
            context as *mut c_void,
            &mut handle,
            0,
        )
    };
    assert_eq!(hr, DPNSUCCESS_PENDING);
    assert_ne!(handle, 0);
    handle
}

/// pvApplicationReservedData (MC-DPLHP 2.2.2, MC-DPL8CS 2.2.1.4): the host's reaches an
/// enumerating game's ENUM_HOSTS_RESPONSE and a joiner's GetApplicationDesc; SetApplicationDesc
/// changes it for later enumerations; data that would not leave the enumeration response in
/// one datagram is DPNERR_INVALIDPARAM, in Host and SetApplicationDesc.
#[test]
fn application_reserved_data_reaches_enumerators_and_joiners() {
    let _pool = super::shared();
    let (host_game, join_game) = (Game::new(0x1000), Game::new(0x2000));
    let host = Peer::new();
    host.init(&host_game);
    let mut name = wide("test session");
    let mut d = desc(0, &mut name);
    let mut big = vec![0u8; 1500];
    (d.pvApplicationReservedData, d.dwApplicationReservedDataSize) = (big.as_mut_ptr().cast(), 1500);
    assert_eq!(host.host_desc(&d), DPNERR_INVALIDPARAM);
    let mut canyon = b"map=canyon".to_vec();
    (d.pvApplicationReservedData, d.dwApplicationReservedDataSize) = (canyon.as_mut_ptr().cast(), 10);
    assert_eq!(host.host_desc(&d), DPN_OK);
    let port = host.local_port();

    let joiner = Peer::new();
    joiner.init(&join_game);
    let found = |want: &'static [u8]| move |h: &Heard| matches!(h, Heard::EnumResponse { reserved, .. } if reserved == want);
    enumerate(&joiner, port, b"", 0);
    join_game.wait_for("ENUM_HOSTS_RESPONSE with the reserved data", found(b"map=canyon"));
    assert_eq!(joiner.connect(port, 0, true).0, DPN_OK);
    assert_eq!(joiner.app_reserved(), b"map=canyon");

    let mut desert = b"map=desert".to_vec();
    (d.pvApplicationReservedData, d.dwApplicationReservedDataSize) = (big.as_mut_ptr().cast(), 1500);
    assert_eq!(unsafe { (host.v().set_application_desc)(host.0, &d, 0) }, DPNERR_INVALIDPARAM);
    (d.pvApplicationReservedData, d.dwApplicationReservedDataSize) = (desert.as_mut_ptr().cast(), 10);
    assert_eq!(unsafe { (host.v().set_application_desc)(host.0, &d, 0) }, DPN_OK);
    assert_eq!(host.app_reserved(), b"map=desert");
    let seeker_game = Game::new(0x3000);
    let seeker = Peer::new();
    seeker.init(&seeker_game);
    enumerate(&seeker, port, b"", 0);
    seeker_game.wait_for("ENUM_HOSTS_RESPONSE with the new reserved data", found(b"map=desert"));
    assert_eq!(seeker.close(), DPN_OK);
    assert_eq!(joiner.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
}

/// DPN_MSGID_ENUM_HOSTS_QUERY: the host's handler gets the enumerating game's data and the
/// room for its own, answers DPN_OK with response data that the enumerating game's
/// ENUM_HOSTS_RESPONSE carries, and gets its buffer back (RETURN_BUFFER); a handler that
/// answers otherwise leaves the query unanswered.
#[test]
fn the_host_answers_enumeration_with_its_data() {
    let _pool = super::shared();
    for refuse in [false, true] {
        let (host_game, seek_game) = (Game::answering(0x1000, refuse, b"map=canyon"), Game::new(0x2000));
        let host = Peer::new();
        host.init(&host_game);
        let port = host.host(0);
        let seeker = Peer::new();
        seeker.init(&seek_game);
        let handle = enumerate(&seeker, port, b"filter", 0);
        seek_game.wait_for(
            "the enumeration's end",
            |h| matches!(h, Heard::AsyncOpComplete { handle: x, .. } if *x == handle),
        );
        let Heard::EnumQuery { data, room } =
            host_game.wait_for("ENUM_HOSTS_QUERY", |h| matches!(h, Heard::EnumQuery { .. }))
        else {
            unreachable!()
        };
        assert_eq!(data, b"filter");
        assert_eq!(room, 1472 - 92 - 2 * "test session".len() as u32 - 2);
        host_game.wait_for("RETURN_BUFFER of the response data", |h| {
            *h == Heard::ReturnBuffer { context: 0x4343 }
        });
        let responses: Vec<Vec<u8>> = seek_game
            .heard()
            .into_iter()
            .filter_map(|h| match h {
                Heard::EnumResponse { data, .. } => Some(data),
                _ => None,
            })
            .collect();
        if refuse {
            assert!(responses.is_empty(), "a refused query was answered: {responses:?}");
        } else {
            assert!(!responses.is_empty() && responses.iter().all(|d| d == b"map=canyon"), "{responses:?}");
        }
        assert_eq!(seeker.close(), DPN_OK);
        assert_eq!(host.close(), DPN_OK);
    }
}

#[test]
fn enumerate_join_send_and_leave() {
    let _pool = super::shared();
    let (host_game, join_game) = (Game::new(0x1000), Game::new(0x2000));
    let host = Peer::new();
    host.init(&host_game);
    host.set_name("alice");
    let port = host.host(DPNSESSION_MIGRATE_HOST);
    let host_id = match host_game
        .wait_for("the host's own CREATE_PLAYER", |h| matches!(h, Heard::CreatePlayer { .. }))
    {
        Heard::CreatePlayer { dpnid } => dpnid,
        _ => unreachable!(),
    };
    assert_eq!(host.name_of(host_id).unwrap(), ("alice".into(), DPNPLAYER_LOCAL | DPNPLAYER_HOST));

    let joiner = Peer::new();
    joiner.init(&join_game);
    joiner.set_name("bob");
    // Enumerate the host (async, two queries 50 ms apart).
    let handle = enumerate(&joiner, port, b"", 0x55);
    let found = join_game.wait_for("ENUM_HOSTS_RESPONSE", |h| matches!(h, Heard::EnumResponse { .. }));
    let Heard::EnumResponse { session, max_players, context, sender, round_trip, .. } = found else {
        unreachable!()
    };
    assert_eq!((session.as_str(), max_players, context), ("test session", 8, 0x55));
    assert!(sender.contains("hostname=127.0.0.1") && sender.contains(&format!("port={port}")), "{sender}");
    assert!(round_trip < 50, "{round_trip} ms on loopback");
    join_game.wait_for("the enumeration's completion", |h| {
        *h == Heard::AsyncOpComplete { handle, result: DPN_OK, context: 0x55 }
    });

    // Join, asynchronously.
    let (hr, handle) = joiner.connect(port, 0x77, false);
    assert_eq!(hr, DPNSUCCESS_PENDING);
    let local = match join_game.wait_for("CONNECT_COMPLETE", |h| matches!(h, Heard::ConnectComplete { .. })) {
        Heard::ConnectComplete { handle: h, result, local, context, .. } => {
            assert_eq!((h, result, context), (handle, DPN_OK, 0x77));
            local
        }
        _ => unreachable!(),
    };
    join_game.wait_for("the host's CREATE_PLAYER", |h| *h == Heard::CreatePlayer { dpnid: host_id });
    let heard = join_game.heard();
    let connected = heard.iter().position(|h| matches!(h, Heard::ConnectComplete { .. })).unwrap();
    let first_create = heard.iter().position(|h| matches!(h, Heard::CreatePlayer { .. })).unwrap();
    assert!(connected < first_create, "CONNECT_COMPLETE comes before the first CREATE_PLAYER: {heard:?}");
    host_game
        .wait_for("the joiner's CREATE_PLAYER on the host", |h| *h == Heard::CreatePlayer { dpnid: local });
    assert_eq!(host.name_of(local).unwrap(), ("bob".into(), 0));
    assert_eq!(joiner.name_of(host_id).unwrap(), ("alice".into(), DPNPLAYER_HOST));
    assert_eq!(joiner.players().len(), 2);

    // A guaranteed message each way, with completions and player contexts.
    let (hr, send) = joiner.send(host_id, b"hello", DPNSEND_GUARANTEED, 0x99);
    assert_eq!(hr, DPNSUCCESS_PENDING);
    host_game.wait_for("RECEIVE", |h| {
        *h == Heard::Receive {
            from: local,
            data: b"hello".to_vec(),
            context: 0x1000 + local as usize,
            guaranteed: true,
        }
    });
    join_game.wait_for("SEND_COMPLETE", |h| {
        *h == Heard::SendComplete { handle: send, result: DPN_OK, context: 0x99 }
    });
    let (hr, _) = host.send(
        DPNID_ALL_PLAYERS_GROUP,
        b"to all",
        DPNSEND_GUARANTEED | DPNSEND_NOCOMPLETE | DPNSEND_NOLOOPBACK,
        0,
    );
    assert_eq!(hr, DPNSUCCESS_PENDING);
    join_game.wait_for("the broadcast", |h| matches!(h, Heard::Receive { data, .. } if data == b"to all"));
    assert!(!host_game.heard().iter().any(|h| matches!(h, Heard::Receive { data, .. } if data == b"to all")));
    let (hr, _) = host.send(0x1234_5678, b"nobody", 0, 0);
    assert_eq!(hr, DPNERR_INVALIDPLAYER);

    // The joiner leaves: the host hears DESTROY_PLAYER with the context it set.
    assert_eq!(joiner.close(), DPN_OK);
    host_game.wait_for("DESTROY_PLAYER", |h| {
        *h == Heard::DestroyPlayer {
            dpnid: local,
            reason: DPNDESTROYPLAYERREASON_NORMAL,
            context: 0x1000 + local as usize,
        }
    });
    join_game.wait_for(
        "the joiner's own DESTROY_PLAYER",
        |h| matches!(h, Heard::DestroyPlayer { dpnid, .. } if *dpnid == local),
    );
    assert_eq!(host.close(), DPN_OK);
}

#[test]
fn synchronous_connect_to_nobody_fails() {
    let _pool = super::shared();
    let game = Game::new(0);
    let p = Peer::new();
    p.init(&game);
    // A port we hold and never answer on.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let caps = DPN_CAPS {
        dwSize: size_of::<DPN_CAPS>() as u32,
        dwFlags: 0,
        dwConnectTimeout: 50,
        dwConnectRetries: 2,
        dwTimeoutUntilKeepAlive: 60_000,
    };
    assert_eq!(unsafe { (p.v().set_caps)(p.0, &caps, 0) }, DPN_OK);
    let (hr, _) = p.connect(port, 0, true);
    assert!(hr < 0, "{hr:#x}");
}

#[test]
fn the_host_answers_indicate_connect_with_reply_data() {
    let _pool = super::shared();
    for refuse in [false, true] {
        let (host_game, join_game) = (Game::answering(0x1000, refuse, b"reply!"), Game::new(0x2000));
        let host = Peer::new();
        host.init(&host_game);
        let port = host.host(0);
        let joiner = Peer::new();
        joiner.init(&join_game);
        let (hr, _) = joiner.connect_with(port, 3, true, b"knock knock");
        assert_eq!(hr, if refuse { DPNERR_HOSTREJECTEDCONNECTION } else { DPN_OK });
        host_game
            .wait_for("INDICATE_CONNECT", |h| *h == Heard::IndicateConnect { data: b"knock knock".to_vec() });
        host_game.wait_for("RETURN_BUFFER", |h| *h == Heard::ReturnBuffer { context: 0x4242 });
        let done = join_game.wait_for("CONNECT_COMPLETE", |h| matches!(h, Heard::ConnectComplete { .. }));
        let Heard::ConnectComplete { reply, local, .. } = done else { unreachable!() };
        assert_eq!(reply, b"reply!");
        if !refuse {
            // The context the host gave in INDICATE_CONNECT is the new player's.
            let mut ctx = std::ptr::null_mut();
            host_game.wait_for("CREATE_PLAYER", |h| *h == Heard::CreatePlayer { dpnid: local });
            assert_eq!(unsafe { (host.v().get_player_context)(host.0, local, &mut ctx, 0) }, DPN_OK);
            assert_eq!(ctx as usize, 0x5150);
        }
        assert_eq!(joiner.close(), DPN_OK);
        assert_eq!(host.close(), DPN_OK);
    }
}

impl Peer {
    fn create_group(&self, name: &str, context: usize) -> HRESULT {
        let mut wide = wide(name);
        let info = DPN_GROUP_INFO {
            dwSize: size_of::<DPN_GROUP_INFO>() as u32,
            dwInfoFlags: DPNINFO_NAME,
            pwszName: wide.as_mut_ptr(),
            pvData: std::ptr::null_mut(),
            dwDataSize: 0,
            dwPlayerFlags: 0,
        };
        unsafe {
            (self.v().create_group)(
                self.0,
                &info,
                context as *mut c_void,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                DPNOP_SYNC,
            )
        }
    }
}

/// Two peers: a group, a member added, a send to the group; a name change; the host leaves
/// and the joiner takes over (MIGRATE_HOST); a second joiner then sees it terminate.
#[test]
fn groups_info_migration_and_termination() {
    let _pool = super::shared();
    let (a_game, b_game) = (Game::new(0x1000), Game::new(0x2000));
    let a = Peer::new();
    a.init(&a_game);
    a.set_name("alice");
    let port = a.host(DPNSESSION_MIGRATE_HOST);
    let b = Peer::new();
    b.init(&b_game);
    b.set_name("bob");
    assert_eq!(b.connect(port, 0, true).0, DPN_OK);
    let ids = b.players();
    let Heard::ConnectComplete { local: bob, .. } =
        b_game.wait_for("CONNECT_COMPLETE", |h| matches!(h, Heard::ConnectComplete { .. }))
    else {
        unreachable!()
    };
    let alice = *ids.iter().find(|i| **i != bob).unwrap();
    a_game.wait_for("bob on the host", |h| *h == Heard::CreatePlayer { dpnid: bob });

    // A group made by bob (a request to the host), with alice in it.
    assert_eq!(b.create_group("wingmen", 0xAB), DPN_OK);
    let Heard::CreateGroup { group, owner } =
        b_game.wait_for("CREATE_GROUP", |h| matches!(h, Heard::CreateGroup { .. }))
    else {
        unreachable!()
    };
    assert_eq!(owner, bob);
    let mut ctx = std::ptr::null_mut();
    assert_eq!(unsafe { (b.v().get_group_context)(b.0, group, &mut ctx, 0) }, DPN_OK);
    assert_eq!(ctx as usize, 0xAB);
    a_game.wait_for("CREATE_GROUP on the host", |h| *h == Heard::CreateGroup { group, owner: bob });
    let hr = unsafe {
        (b.v().add_player_to_group)(b.0, group, alice, std::ptr::null_mut(), std::ptr::null_mut(), DPNOP_SYNC)
    };
    assert_eq!(hr, DPN_OK);
    b_game.wait_for("ADD_PLAYER_TO_GROUP", |h| *h == Heard::AddToGroup { group, player: alice });
    let mut members = [0u32; 4];
    let mut n = 4;
    assert_eq!(unsafe { (b.v().enum_group_members)(b.0, group, members.as_mut_ptr(), &mut n, 0) }, DPN_OK);
    assert_eq!(&members[..n as usize], &[alice]);
    let (hr, _) = b.send(group, b"to the group", DPNSEND_GUARANTEED, 0);
    assert_eq!(hr, DPNSUCCESS_PENDING);
    a_game.wait_for(
        "the group message",
        |h| matches!(h, Heard::Receive { from, data, .. } if *from == bob && data == b"to the group"),
    );

    // Bob renames himself: alice hears PEER_INFO and reads the new name.
    b.set_name("robert");
    a_game.wait_for("PEER_INFO", |h| *h == Heard::PeerInfo { dpnid: bob });
    assert_eq!(a.name_of(bob).unwrap().0, "robert");

    // The host leaves: bob becomes the host.
    assert_eq!(a.close(), DPN_OK);
    b_game.wait_for("HOST_MIGRATE", |h| *h == Heard::HostMigrate { new_host: bob });
    b_game.wait_for(
        "alice's DESTROY_PLAYER",
        |h| matches!(h, Heard::DestroyPlayer { dpnid, .. } if *dpnid == alice),
    );
    assert_eq!(b.name_of(bob).unwrap().1, DPNPLAYER_LOCAL | DPNPLAYER_HOST);

    // A newcomer joins the new host: the group that exists comes with its owner (the name
    // table's dpnidOwner); then the host ends the session, telling why.
    let c_game = Game::new(0x3000);
    let c = Peer::new();
    c.init(&c_game);
    let b_port = unsafe { crate::methods::core::<PeerVtbl>(b.0) }.bound().unwrap().port();
    assert_eq!(c.connect(b_port, 0, true).0, DPN_OK);
    c_game.wait_for("the group's CREATE_GROUP on the newcomer", |h| {
        *h == Heard::CreateGroup { group, owner: bob }
    });
    let why = b"game over";
    assert_eq!(unsafe { (b.v().terminate_session)(b.0, why.as_ptr().cast(), why.len() as u32, 0) }, DPN_OK);
    c_game.wait_for("TERMINATE_SESSION", |h| {
        *h == Heard::Terminate { result: DPNERR_HOSTTERMINATEDSESSION, data: why.to_vec() }
    });
    assert_eq!(c.close(), DPN_OK);
    assert_eq!(b.close(), DPN_OK);
}

/// EnumHosts: synchronous against a host, and an asynchronous one cancelled with
/// DPNERR_USERCANCEL; a RECEIVE kept with DPNSUCCESS_PENDING comes back with ReturnBuffer.
#[test]
fn sync_enumeration_cancel_and_kept_buffers() {
    let _pool = super::shared();
    let host_game = Game::keeping();
    let host = Peer::new();
    host.init(&host_game);
    let port = host.host(0);
    let game = Game::new(0);
    let p = Peer::new();
    p.init(&game);
    let mut name = wide("");
    let d = desc(0, &mut name);
    let target = Address::new(&format!(
        "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;hostname=127.0.0.1;port={port}"
    ));
    let hr = unsafe {
        (p.v().enum_hosts)(
            p.0,
            &d,
            target.0,
            std::ptr::null_mut(),
            std::ptr::null(),
            0,
            2,
            20,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            DPNOP_SYNC,
        )
    };
    assert_eq!(hr, DPN_OK);
    assert!(
        game.heard().iter().any(|h| matches!(h, Heard::EnumResponse { .. })),
        "answered before it returned"
    );
    assert!(
        !game.heard().iter().any(|h| matches!(h, Heard::AsyncOpComplete { .. })),
        "no completion for a synchronous one"
    );
    // An asynchronous enumeration that would run for a minute, cancelled.
    let mut handle = 0;
    let hr = unsafe {
        (p.v().enum_hosts)(
            p.0,
            &d,
            target.0,
            std::ptr::null_mut(),
            std::ptr::null(),
            0,
            60,
            1000,
            0,
            0x66 as *mut c_void,
            &mut handle,
            0,
        )
    };
    assert_eq!(hr, DPNSUCCESS_PENDING);
    assert_eq!(unsafe { (p.v().cancel_async_operation)(p.0, handle, 0) }, DPN_OK);
    game.wait_for("the cancelled completion", |h| {
        *h == Heard::AsyncOpComplete { handle, result: DPNERR_USERCANCEL, context: 0x66 }
    });
    assert_eq!(unsafe { (p.v().cancel_async_operation)(p.0, 0x7777, 0) }, DPNERR_INVALIDHANDLE);

    // Kept buffers.
    assert_eq!(p.connect(port, 0, true).0, DPN_OK);
    let host_id = p.players().into_iter().find(|i| p.name_of(*i).unwrap().1 & DPNPLAYER_HOST != 0).unwrap();
    assert_eq!(p.send(host_id, b"keep me", DPNSEND_GUARANTEED, 0).0, DPNSUCCESS_PENDING);
    host_game.wait_for("RECEIVE", |h| matches!(h, Heard::Receive { data, .. } if data == b"keep me"));
    let (buffer, at) = host_game.keep_buffers.lock().unwrap()[0];
    assert_eq!(
        unsafe { std::slice::from_raw_parts(at as *const u8, 7) },
        b"keep me",
        "still valid after the handler returned"
    );
    assert_eq!(unsafe { (host.v().return_buffer)(host.0, buffer, 0) }, DPN_OK);
    assert_eq!(unsafe { (host.v().return_buffer)(host.0, buffer, 0) }, DPNERR_INVALIDHANDLE);
    assert_eq!(p.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
}

/// A free UDP port on loopback, for the enumeration helper (never 6073 itself: tests use only
/// the ports they open).
fn free_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn a_host_on_another_port_answers_enumeration_on_the_helper_port() {
    let _pool = super::shared();
    let helper = free_port();
    let (host_game, join_game) = (Game::new(0x5000), Game::new(0x6000));
    let (second_game, quiet_game) = (Game::new(0x7000), Game::new(0x8000));
    let host = Peer::new();
    host.init(&host_game);
    unsafe { crate::methods::core::<PeerVtbl>(host.0) }.set_enum_helper_port(helper);
    let port = host.host(0);
    assert_ne!(port, helper);
    let at = unsafe { crate::methods::core::<PeerVtbl>(host.0) }.enum_helper();
    assert_eq!(at.map(|a| a.port()), Some(helper));

    // A second host on this machine finds the helper port taken: it hosts all the same,
    // reachable on its own port only.
    let second = Peer::new();
    second.init(&second_game);
    unsafe { crate::methods::core::<PeerVtbl>(second.0) }.set_enum_helper_port(helper);
    second.host(0);
    assert_eq!(unsafe { crate::methods::core::<PeerVtbl>(second.0) }.enum_helper(), None);
    // NODPNSVR: no helper at all.
    let quiet = Peer::new();
    quiet.init(&quiet_game);
    unsafe { crate::methods::core::<PeerVtbl>(quiet.0) }.set_enum_helper_port(free_port());
    quiet.host(DPNSESSION_NODPNSVR);
    assert_eq!(unsafe { crate::methods::core::<PeerVtbl>(quiet.0) }.enum_helper(), None);

    // The query sent to the helper port is answered from the game's port, which the joiner
    // learns from the response's sender.
    let joiner = Peer::new();
    joiner.init(&join_game);
    let mut name = wide("");
    let d = desc(0, &mut name);
    let target = Address::new(&format!(
        "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;hostname=127.0.0.1;port={helper}"
    ));
    let mut handle = 0;
    let hr = unsafe {
        (joiner.v().enum_hosts)(
            joiner.0,
            &d,
            target.0,
            std::ptr::null_mut(),
            std::ptr::null(),
            0,
            2,
            50,
            0,
            0x56 as *mut c_void,
            &mut handle,
            0,
        )
    };
    assert_eq!(hr, DPNSUCCESS_PENDING);
    let found = join_game.wait_for("ENUM_HOSTS_RESPONSE", |h| matches!(h, Heard::EnumResponse { .. }));
    let Heard::EnumResponse { session, sender, .. } = found else { unreachable!() };
    assert_eq!(session, "test session");
    assert!(
        sender.contains(&format!("port={port};")) || sender.ends_with(&format!("port={port}")),
        "{sender}"
    );
    join_game.wait_for("the enumeration's completion", |h| {
        *h == Heard::AsyncOpComplete { handle, result: DPN_OK, context: 0x56 }
    });
}
