//! Host on several device addresses: the session listens on each, GetLocalHostAddresses
//! reports each, and a joiner on any of them is answered from the one it chose.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use super::game::{Address, Game, Heard};
use super::peer::{Peer, desc};
use crate::dpn::*;

/// A TCP/IP device address on loopback, `port` of the test's choosing.
fn device(port: u16) -> Address {
    Address::new(&format!(
        "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;hostname=127.0.0.1;port={port}"
    ))
}

/// Two UDP ports on loopback that were free a moment ago.
fn two_free_ports() -> (u16, u16) {
    let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    (a.local_addr().unwrap().port(), b.local_addr().unwrap().port())
}

/// The URLs GetLocalHostAddresses reports.
fn local_host_addresses(p: &Peer) -> Vec<String> {
    let mut out = [std::ptr::null_mut(); 8];
    let mut n = 0;
    let hr = unsafe { (p.v().get_local_host_addresses)(p.0, out.as_mut_ptr(), &mut n, 0) };
    assert_eq!((hr, n), (DPNERR_BUFFERTOOSMALL, 2), "the count comes first");
    let hr = unsafe { (p.v().get_local_host_addresses)(p.0, out.as_mut_ptr(), &mut n, 0) };
    assert_eq!(hr, DPN_OK);
    out[..n as usize]
        .iter()
        .map(|&a| {
            let url = unsafe { crate::address::address_url(a) }.unwrap().to_string();
            crate::core::release(a);
            url
        })
        .collect()
}

fn joins(game: &Game) {
    match game.wait_for("CONNECT_COMPLETE", |h| matches!(h, Heard::ConnectComplete { .. })) {
        Heard::ConnectComplete { result, .. } => assert_eq!(result, DPN_OK),
        _ => unreachable!(),
    }
}

#[test]
fn a_host_listens_on_every_device_address() {
    let _pool = super::shared();
    let (first, second) = two_free_ports();
    let (host_game, a_game, b_game) = (Game::new(0x1000), Game::new(0x2000), Game::new(0x3000));
    let host = Peer::new();
    host.init(&host_game);
    let mut name = wide("two devices");
    let d = desc(0, &mut name);
    let (one, two) = (device(first), device(second));
    let mut devices = [one.0, two.0];
    let hr = unsafe {
        (host.v().host)(
            host.0,
            &d,
            devices.as_mut_ptr(),
            2,
            std::ptr::null(),
            std::ptr::null(),
            7 as *mut c_void,
            0,
        )
    };
    assert_eq!(hr, DPN_OK);
    let urls = local_host_addresses(&host);
    for (url, port) in urls.iter().zip([first, second]) {
        assert!(url.contains("hostname=127.0.0.1") && url.contains(&format!("port={port}")), "{url}");
    }

    // One joiner through each device address: both are answered, and both are in.
    let (a, b) = (Peer::new(), Peer::new());
    a.init(&a_game);
    b.init(&b_game);
    assert_eq!(b.connect(second, 0, false).0, DPNSUCCESS_PENDING);
    joins(&b_game);
    assert_eq!(a.connect(first, 0, false).0, DPNSUCCESS_PENDING);
    joins(&a_game);
    let deadline = Instant::now() + Duration::from_secs(10);
    let created = || host_game.heard().iter().filter(|h| matches!(h, Heard::CreatePlayer { .. })).count();
    while created() < 3 {
        assert!(Instant::now() < deadline, "the host heard {:?}", host_game.heard());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(a.close(), DPN_OK);
    assert_eq!(b.close(), DPN_OK);
    assert_eq!(host.close(), DPN_OK);
}

#[test]
fn a_device_address_already_taken_fails_host() {
    let _pool = super::shared();
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let (free, _) = two_free_ports();
    let game = Game::new(0x1000);
    let host = Peer::new();
    host.init(&game);
    let mut name = wide("taken");
    let d = desc(0, &mut name);
    let (one, two) = (device(free), device(taken.local_addr().unwrap().port()));
    let mut devices = [one.0, two.0];
    let hr = unsafe {
        (host.v().host)(
            host.0,
            &d,
            devices.as_mut_ptr(),
            2,
            std::ptr::null(),
            std::ptr::null(),
            7 as *mut c_void,
            0,
        )
    };
    assert_eq!(hr, DPNERR_INVALIDDEVICEADDRESS);
}
