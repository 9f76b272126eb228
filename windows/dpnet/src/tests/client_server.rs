//! IDirectPlay8Server and IDirectPlay8Client against each other on loopback.

use std::ffi::c_void;

use super::game::{Address, Game, Heard, handler};
use super::peer::desc;
use crate::classes::{IID_IDIRECTPLAY8_CLIENT, IID_IDIRECTPLAY8_SERVER};
use crate::client::ClientVtbl;
use crate::dpn::*;
use crate::exports::DirectPlay8Create;
use crate::server::ServerVtbl;

const TCPIP: &str = "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D";

fn create<V>(iid: &crate::com::GUID) -> (*mut c_void, &'static V) {
    let mut p = std::ptr::null_mut();
    assert_eq!(unsafe { DirectPlay8Create(iid, &mut p, std::ptr::null_mut()) }, DPN_OK);
    (p, unsafe { &**p.cast::<*const V>() })
}

fn release(p: *mut c_void) {
    unsafe { ((**p.cast::<*const crate::com::IUnknownVtbl>()).release)(p) };
}

#[test]
fn a_client_joins_a_server_and_both_exchange_messages() {
    let _pool = super::shared();
    let (server_game, client_game) = (Game::new(0x100), Game::new(0x200));
    let (server, sv) = create::<ServerVtbl>(&IID_IDIRECTPLAY8_SERVER);
    let (client, cv) = create::<ClientVtbl>(&IID_IDIRECTPLAY8_CLIENT);
    unsafe {
        assert_eq!((sv.initialize)(server, server_game.context(), Some(handler), 0), DPN_OK);
        assert_eq!((cv.initialize)(client, client_game.context(), Some(handler), 0), DPN_OK);
        let mut name = wide("server session");
        let d = desc(DPNSESSION_CLIENT_SERVER, &mut name);
        let device = Address::new(&format!("{TCPIP};port=0"));
        let mut devices = [device.0];
        let hr = (sv.host)(
            server,
            &d,
            devices.as_mut_ptr(),
            1,
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null_mut(),
            0,
        );
        assert_eq!(hr, DPN_OK);
        let port = crate::methods::core::<ServerVtbl>(server).bound().unwrap().port();

        let host = Address::new(&format!("{TCPIP};hostname=127.0.0.1;port={port}"));
        let mut name = wide("");
        let d = desc(DPNSESSION_CLIENT_SERVER, &mut name);
        let mut handle = 0;
        let hr = (cv.connect)(
            client,
            &d,
            host.0,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
            std::ptr::null(),
            0,
            0x31 as *mut c_void,
            &mut handle,
            DPNOP_SYNC,
        );
        assert_eq!(hr, DPN_OK);
        let local =
            match client_game.wait_for("CONNECT_COMPLETE", |h| matches!(h, Heard::ConnectComplete { .. })) {
                Heard::ConnectComplete { result, local, .. } => {
                    assert_eq!(result, DPN_OK);
                    local
                }
                _ => unreachable!(),
            };
        server_game.wait_for("the client's CREATE_PLAYER", |h| *h == Heard::CreatePlayer { dpnid: local });

        let data = b"to the server";
        let buf = DPN_BUFFER_DESC { dwBufferSize: data.len() as u32, pBufferData: data.as_ptr().cast_mut() };
        let hr = (cv.send)(
            client,
            &buf,
            1,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            DPNSEND_GUARANTEED | DPNOP_SYNC,
        );
        assert_eq!(hr, DPN_OK);
        server_game.wait_for(
            "the client's message",
            |h| matches!(h, Heard::Receive { from, data: d, .. } if *from == local && d == data),
        );

        let data = b"to the client";
        let buf = DPN_BUFFER_DESC { dwBufferSize: data.len() as u32, pBufferData: data.as_ptr().cast_mut() };
        let mut h = 0;
        let hr = (sv.send_to)(server, local, &buf, 1, 0, std::ptr::null_mut(), &mut h, DPNSEND_GUARANTEED);
        assert_eq!(hr, DPNSUCCESS_PENDING);
        client_game
            .wait_for("the server's message", |h| matches!(h, Heard::Receive { data: d, .. } if d == data));
        assert!(
            !client_game.heard().iter().any(|h| matches!(h, Heard::CreatePlayer { .. })),
            "a client hears of no player"
        );

        assert_eq!((cv.close)(client, 0), DPN_OK);
        server_game.wait_for(
            "the client's DESTROY_PLAYER",
            |h| matches!(h, Heard::DestroyPlayer { dpnid, .. } if *dpnid == local),
        );
        assert_eq!((sv.close)(server, 0), DPN_OK);
    }
    release(client);
    release(server);
}
