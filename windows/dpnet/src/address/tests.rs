//! The address object called through its vtables, as a game calls it. Expected answers are
//! the SDK documentation's and, where it is silent, Windows' as Wine's tests record them.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use dplay_wire::dp8::url::{CLSID_DP8SP_TCPIP, DirectPlayUrl};
use proptest::prelude::*;

use super::ip::AddressIpVtbl;
use super::*;
use crate::classes::CLSID_DIRECTPLAY8_ADDRESS;
use crate::com::{IID_ICLASSFACTORY, S_OK};
use crate::exports::DllGetClassObject;

const RANDOM: GUID = GUID::from_u128(0x6733C6E8_A0D6_450E_8C18_CEACF331DC27);
const TCPIP: GUID = GUID::from_u128(CLSID_DP8SP_TCPIP.as_u128());

/// A NUL-terminated UTF-16 string.
fn w(s: &str) -> Vec<u16> {
    wide_nul(s)
}

/// An interface pointer and its vtable, released when dropped.
struct Addr(This);

impl Addr {
    /// A new address through the class factory, as `CoCreateInstance` makes one.
    fn new() -> Self {
        #[repr(C)]
        struct FactoryVtbl {
            unknown: IUnknownVtbl,
            create_instance: unsafe extern "system" fn(This, This, *const GUID, *mut This) -> HRESULT,
        }
        let mut factory = null_mut();
        let mut obj = null_mut();
        // SAFETY: the COM contract, as a game keeps it.
        unsafe {
            assert_eq!(DllGetClassObject(&CLSID_DIRECTPLAY8_ADDRESS, &IID_ICLASSFACTORY, &mut factory), S_OK);
            let fv = &**factory.cast::<*const FactoryVtbl>();
            assert_eq!((fv.create_instance)(factory, null_mut(), &IID_IDIRECTPLAY8_ADDRESS, &mut obj), S_OK);
            (fv.unknown.release)(factory);
        }
        Self(obj)
    }

    fn vt(&self) -> &'static AddressVtbl {
        // SAFETY: a live interface pointer points at its vtable pointer.
        unsafe { &**self.0.cast::<*const AddressVtbl>() }
    }

    fn add(&self, name: &str, data: *const c_void, size: u32, kind: u32) -> HRESULT {
        // SAFETY: the game's side of the contract.
        unsafe { (self.vt().add_component)(self.0, w(name).as_ptr(), data, size, kind) }
    }

    fn add_str(&self, name: &str, value: &str) -> HRESULT {
        let v = w(value);
        self.add(name, v.as_ptr().cast(), u32::try_from(v.len() * 2).unwrap(), DPNA_DATATYPE_STRING)
    }

    fn count(&self) -> u32 {
        let mut n = 0;
        // SAFETY: a writable out pointer.
        assert_eq!(unsafe { (self.vt().get_num_components)(self.0, &mut n) }, S_OK);
        n
    }

    /// `GetComponentByName` into a 256-byte buffer: (result, bytes, type).
    fn by_name(&self, name: &str) -> (HRESULT, Vec<u8>, u32) {
        let mut buf = [0u8; 256];
        let (mut size, mut kind) = (256u32, 0u32);
        // SAFETY: buffers as sized.
        let hr = unsafe {
            (self.vt().get_component_by_name)(
                self.0,
                w(name).as_ptr(),
                buf.as_mut_ptr().cast(),
                &mut size,
                &mut kind,
            )
        };
        (hr, buf[..size.min(256) as usize].to_vec(), kind)
    }

    fn url_w(&self) -> String {
        let mut n = 0u32;
        // SAFETY: the size protocol.
        assert_eq!(unsafe { (self.vt().get_url_w)(self.0, null_mut(), &mut n) }, DPNERR_BUFFERTOOSMALL);
        let mut buf = vec![0u16; n as usize];
        // SAFETY: `buf` holds `n` characters.
        assert_eq!(unsafe { (self.vt().get_url_w)(self.0, buf.as_mut_ptr(), &mut n) }, S_OK);
        assert_eq!((n as usize, buf.last()), (buf.len(), Some(&0)));
        String::from_utf16(&buf[..buf.len() - 1]).unwrap()
    }

    fn build_w(&self, url: &str) -> HRESULT {
        // SAFETY: a NUL-terminated string.
        unsafe { (self.vt().build_from_url_w)(self.0, w(url).as_ptr()) }
    }

    fn ip(&self) -> (This, &'static AddressIpVtbl) {
        let mut p = null_mut();
        // SAFETY: the COM contract.
        assert_eq!(
            unsafe { (self.vt().unknown.query_interface)(self.0, &IID_IDIRECTPLAY8_ADDRESS_IP, &mut p) },
            S_OK
        );
        // SAFETY: a live interface pointer points at its vtable pointer.
        (p, unsafe { &**p.cast::<*const AddressIpVtbl>() })
    }
}

impl Drop for Addr {
    fn drop(&mut self) {
        // SAFETY: we hold one reference.
        unsafe { (self.vt().unknown.release)(self.0) };
    }
}

fn guid_bytes(g: GUID) -> Vec<u8> {
    native(&UrlValue::Guid(g.to_uuid())).1
}

#[test]
fn service_provider() {
    let a = Addr::new();
    let mut g = GUID::default();
    // SAFETY (whole test): pointers as the contract wants, or null on purpose.
    unsafe {
        assert_eq!((a.vt().get_sp)(a.0, null_mut()), DPNERR_INVALIDPOINTER);
        assert_eq!((a.vt().get_sp)(a.0, &mut g), DPNERR_DOESNOTEXIST);
        assert_eq!((a.vt().set_sp)(a.0, null()), DPNERR_INVALIDPOINTER);
        for sp in [GUID::default(), RANDOM, TCPIP] {
            assert_eq!((a.vt().set_sp)(a.0, &sp), S_OK);
            assert_eq!(((a.vt().get_sp)(a.0, &mut g), g), (S_OK, sp));
        }
    }
    // SetSP is the `provider` component, set in place.
    assert_eq!(a.count(), 1);
    let (hr, bytes, kind) = a.by_name("provider");
    assert_eq!((hr, bytes, kind), (S_OK, guid_bytes(TCPIP), DPNA_DATATYPE_GUID));
}

#[test]
fn add_component_checks_sizes_and_keeps_the_old_value_on_error() {
    let a = Addr::new();
    let guid = std::ptr::from_ref(&RANDOM).cast();
    assert_eq!(a.add("unknown", guid, 16, DPNA_DATATYPE_GUID), S_OK);
    assert_eq!(a.add("unknown", guid, 17, DPNA_DATATYPE_GUID), DPNERR_INVALIDPARAM);
    let host = w("localhost");
    let host_size = u32::try_from(host.len() * 2).unwrap();
    assert_eq!(
        a.add("hostname", host.as_ptr().cast(), host_size + 2, DPNA_DATATYPE_STRING),
        DPNERR_INVALIDPARAM
    );
    assert_eq!(
        a.add("hostname", host.as_ptr().cast(), host_size / 2, DPNA_DATATYPE_STRING),
        DPNERR_INVALIDPARAM
    );
    let ansi = b"testing\0";
    assert_eq!(a.add("hostname", ansi.as_ptr().cast(), 10, DPNA_DATATYPE_STRING_ANSI), DPNERR_INVALIDPARAM);
    assert_eq!(a.by_name("hostname").0, DPNERR_DOESNOTEXIST, "nothing added on error");
    assert_eq!(a.add("hostname", ansi.as_ptr().cast(), 8, DPNA_DATATYPE_STRING_ANSI), S_OK);
    let (hr, bytes, kind) = a.by_name("hostname");
    assert_eq!((hr, kind), (S_OK, DPNA_DATATYPE_STRING), "ANSI strings are kept as strings");
    assert_eq!(bytes, w("testing").iter().flat_map(|c| c.to_le_bytes()).collect::<Vec<_>>());
    assert_eq!(a.add("hostname", host.as_ptr().cast(), host_size, DPNA_DATATYPE_STRING), S_OK);
    assert_eq!(
        a.add("hostname", host.as_ptr().cast(), host_size + 2, DPNA_DATATYPE_STRING),
        DPNERR_INVALIDPARAM
    );
    assert_eq!(a.by_name("hostname").1.len(), host.len() * 2, "the old value stays");
    let port = 8888u32;
    let port_p = std::ptr::from_ref(&port).cast();
    assert_eq!(a.add("port", port_p, 6, DPNA_DATATYPE_DWORD), DPNERR_INVALIDPARAM);
    assert_eq!(a.add("port", port_p, 4, DPNA_DATATYPE_DWORD), S_OK);
    assert_eq!(a.by_name("port"), (S_OK, 8888u32.to_le_bytes().to_vec(), DPNA_DATATYPE_DWORD));
    // Predefined keys take their own type only; other keys take any.
    assert_eq!(a.add_str("port", "2302"), DPNERR_INVALIDPARAM);
    assert_eq!(a.add("provider", port_p, 4, DPNA_DATATYPE_DWORD), DPNERR_INVALIDPARAM);
    assert_eq!(a.add("hostname", port_p, 4, DPNA_DATATYPE_DWORD), DPNERR_INVALIDPARAM);
    assert_eq!(a.add("mine", port_p, 4, DPNA_DATATYPE_BINARY), S_OK);
    assert_eq!(a.add("mine", port_p, 4, 9), DPNERR_INVALIDPARAM, "no such type");
    // SAFETY: null pointers on purpose.
    unsafe {
        assert_eq!(
            (a.vt().add_component)(a.0, null(), port_p, 4, DPNA_DATATYPE_DWORD),
            DPNERR_INVALIDPOINTER
        );
        assert_eq!(
            (a.vt().add_component)(a.0, w("x").as_ptr(), null(), 4, DPNA_DATATYPE_DWORD),
            DPNERR_INVALIDPOINTER
        );
    }
    assert_eq!(a.count(), 4);
}

#[test]
fn get_component_by_name_pointer_and_size_rules() {
    let a = Addr::new();
    assert_eq!(a.add("unknown", std::ptr::from_ref(&RANDOM).cast(), 16, DPNA_DATATYPE_GUID), S_OK);
    let name = w("unknown");
    let f = a.vt().get_component_by_name;
    let (mut g, mut size, mut kind) = (GUID::default(), 0u32, 0u32);
    let gp = std::ptr::from_mut(&mut g).cast::<c_void>();
    // SAFETY (whole block): pointers as sized, or null on purpose.
    unsafe {
        assert_eq!(f(a.0, null(), gp, &mut size, &mut kind), DPNERR_INVALIDPOINTER);
        size = 15;
        assert_eq!(f(a.0, name.as_ptr(), null_mut(), &mut size, &mut kind), DPNERR_INVALIDPOINTER);
        assert_eq!(f(a.0, name.as_ptr(), gp, null_mut(), &mut kind), DPNERR_INVALIDPOINTER);
        assert_eq!(f(a.0, name.as_ptr(), gp, &mut size, null_mut()), DPNERR_INVALIDPOINTER);
        assert_eq!(f(a.0, name.as_ptr(), gp, &mut size, &mut kind), DPNERR_BUFFERTOOSMALL);
        assert_eq!(size, 16);
        assert_eq!(f(a.0, name.as_ptr(), gp, &mut size, &mut kind), S_OK);
        assert_eq!((g, size, kind), (RANDOM, 16, DPNA_DATATYPE_GUID));
        size = 0;
        assert_eq!(f(a.0, name.as_ptr(), null_mut(), &mut size, &mut kind), DPNERR_BUFFERTOOSMALL);
        assert_eq!(f(a.0, w("UNKNOWN").as_ptr(), gp, &mut size, &mut kind), S_OK, "keys ignore case");
        assert_eq!(f(a.0, w("other").as_ptr(), gp, &mut size, &mut kind), DPNERR_DOESNOTEXIST);
    }
}

#[test]
fn get_component_by_index_reports_both_sizes() {
    let a = Addr::new();
    assert_eq!(a.add("unknown", std::ptr::from_ref(&RANDOM).cast(), 16, DPNA_DATATYPE_GUID), S_OK);
    assert_eq!(a.add_str("hostname", "localhost"), S_OK);
    let f = a.vt().get_component_by_index;
    let (mut name_len, mut size, mut kind) = (0u32, 0u32, 0u32);
    let mut buf = [0u8; 100];
    let bp = buf.as_mut_ptr().cast::<c_void>();
    // SAFETY (whole block): pointers as sized, or null on purpose.
    unsafe {
        assert_eq!(
            f(a.0, 100, null_mut(), &mut name_len, null_mut(), &mut size, &mut kind),
            DPNERR_DOESNOTEXIST
        );
        assert_eq!(
            f(a.0, 1, null_mut(), &mut name_len, null_mut(), &mut size, null_mut()),
            DPNERR_INVALIDPOINTER
        );
        assert_eq!(
            f(a.0, 1, null_mut(), null_mut(), null_mut(), &mut size, &mut kind),
            DPNERR_INVALIDPOINTER
        );
        assert_eq!(
            f(a.0, 1, null_mut(), &mut name_len, null_mut(), null_mut(), &mut kind),
            DPNERR_INVALIDPOINTER
        );
        size = 100;
        assert_eq!(f(a.0, 1, null_mut(), &mut name_len, bp, &mut size, &mut kind), DPNERR_BUFFERTOOSMALL);
        name_len = 100;
        assert_eq!(
            f(a.0, 1, null_mut(), &mut name_len, null_mut(), &mut size, &mut kind),
            DPNERR_INVALIDPOINTER
        );
        (name_len, size, kind) = (0, 0, 0);
        assert_eq!(
            f(a.0, 0, null_mut(), &mut name_len, null_mut(), &mut size, &mut kind),
            DPNERR_BUFFERTOOSMALL
        );
        assert_eq!((name_len, size, kind), (8, 16, DPNA_DATATYPE_GUID));
        let mut name = vec![0u16; 8];
        assert_eq!(f(a.0, 0, name.as_mut_ptr(), &mut name_len, bp, &mut size, &mut kind), S_OK);
        assert_eq!((name, &buf[..16]), (w("unknown"), &guid_bytes(RANDOM)[..]));
        let mut name = vec![0u16; 9];
        (name_len, size) = (9, 100);
        assert_eq!(f(a.0, 1, name.as_mut_ptr(), &mut name_len, bp, &mut size, &mut kind), S_OK);
        assert_eq!((name, size, kind), (w("hostname"), 20, DPNA_DATATYPE_STRING));
    }
}

/// MC-DPL8CS 4's URL in and out, both character widths, with the buffer-size protocol.
#[test]
fn urls_both_ways() {
    let text =
        "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;hostname=65.52.239.61;port=2302";
    let a = Addr::new();
    assert_eq!(a.url_w(), "x-directplay:/", "an empty address");
    assert_eq!(a.build_w(text), S_OK);
    assert_eq!(a.url_w(), text);
    assert_eq!(a.count(), 3);
    assert_eq!(a.by_name("port"), (S_OK, 2302u32.to_le_bytes().to_vec(), DPNA_DATATYPE_DWORD));
    let mut g = GUID::default();
    // SAFETY (whole block): buffers as sized, or null on purpose.
    unsafe {
        assert_eq!(((a.vt().get_sp)(a.0, &mut g), g), (S_OK, TCPIP));
        let mut n = 10u32;
        assert_eq!((a.vt().get_url_a)(a.0, null_mut(), &mut n), DPNERR_INVALIDPOINTER);
        let mut buf = vec![0u8; 10];
        assert_eq!((a.vt().get_url_a)(a.0, buf.as_mut_ptr(), &mut n), DPNERR_BUFFERTOOSMALL);
        assert_eq!(n as usize, text.len() + 1);
        buf.resize(n as usize, 0xAA);
        assert_eq!((a.vt().get_url_a)(a.0, buf.as_mut_ptr(), &mut n), S_OK);
        assert_eq!(&buf[..], format!("{text}\0").as_bytes());
        assert_eq!((a.vt().get_url_a)(a.0, buf.as_mut_ptr(), null_mut()), DPNERR_INVALIDPOINTER);
        let mut other =
            b"x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;port=9\0".to_vec();
        assert_eq!((a.vt().build_from_url_a)(a.0, other.as_mut_ptr()), S_OK);
        assert_eq!((a.vt().build_from_url_a)(a.0, null()), DPNERR_INVALIDPOINTER);
    }
    assert_eq!(a.count(), 2, "building clears what was there");
    for bad in ["x-directplay://provider=x", "http:/a=b", "x-directplay:/a", "x-directplay:/a=%zz"] {
        assert_eq!(a.build_w(bad), DPNERR_INVALIDURL, "{bad}");
    }
    assert_eq!(a.count(), 2, "a bad URL changes nothing");
}

#[test]
fn duplicate_set_equal_is_equal_clear() {
    let a = Addr::new();
    assert_eq!(
        a.build_w("x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;hostname=h#ud"),
        S_OK
    );
    let mut p = null_mut();
    // SAFETY (whole block): out pointers as the contract wants.
    unsafe {
        assert_eq!((a.vt().duplicate)(a.0, null_mut()), DPNERR_INVALIDPOINTER);
        assert_eq!((a.vt().duplicate)(a.0, &mut p), S_OK);
    }
    let b = Addr(p);
    assert_eq!(b.url_w(), a.url_w());
    // SAFETY (whole block): live address pointers.
    unsafe {
        assert_eq!((a.vt().is_equal)(a.0, b.0), DPNSUCCESS_EQUAL);
        assert_eq!((a.vt().is_equal)(a.0, a.0), DPNSUCCESS_EQUAL);
        assert_eq!((b.vt().clear)(b.0), S_OK);
        assert_eq!(b.count(), 0);
        assert_eq!((a.vt().is_equal)(a.0, b.0), DPNSUCCESS_NOTEQUAL);
        assert_eq!((b.vt().set_equal)(b.0, a.0), S_OK);
        assert_eq!((a.vt().set_equal)(a.0, a.0), S_OK, "with itself: no deadlock");
        assert_eq!((b.vt().set_equal)(b.0, null_mut()), DPNERR_INVALIDPOINTER);
    }
    assert_eq!(b.url_w(), a.url_w());
}

#[test]
fn user_data() {
    let a = Addr::new();
    let f = a.vt().get_user_data;
    let mut size = 0u32;
    let mut buf = [0u8; 8];
    let data = [b'a', b';', 0];
    // SAFETY (whole block): buffers as sized, or null on purpose.
    unsafe {
        assert_eq!(f(a.0, null_mut(), &mut size), DPNERR_DOESNOTEXIST);
        assert_eq!((a.vt().set_user_data)(a.0, null(), 3), DPNERR_INVALIDPOINTER);
        assert_eq!((a.vt().set_user_data)(a.0, data.as_ptr().cast(), 3), S_OK);
        assert_eq!(f(a.0, null_mut(), &mut size), DPNERR_BUFFERTOOSMALL);
        assert_eq!(size, 3);
        assert_eq!(f(a.0, buf.as_mut_ptr().cast(), &mut size), S_OK);
        assert_eq!(buf[..3], data);
        assert_eq!(a.url_w(), "x-directplay:/#a%3B%00");
        assert_eq!((a.vt().set_user_data)(a.0, null(), 0), S_OK);
        assert_eq!(f(a.0, null_mut(), &mut size), DPNERR_DOESNOTEXIST);
    }
}

#[test]
fn device() {
    let a = Addr::new();
    let mut g = GUID::default();
    // SAFETY: pointers as the contract wants.
    unsafe {
        assert_eq!((a.vt().get_device)(a.0, &mut g), DPNERR_DOESNOTEXIST);
        assert_eq!((a.vt().set_device)(a.0, &RANDOM), S_OK);
        assert_eq!(((a.vt().get_device)(a.0, &mut g), g), (S_OK, RANDOM));
    }
    assert_eq!(a.url_w(), "x-directplay:/device=%7B6733C6E8-A0D6-450E-8C18-CEACF331DC27%7D");
}

#[test]
fn the_ip_interface_shares_the_object() {
    let a = Addr::new();
    let (ip, vt) = a.ip();
    let mut sockaddr = [0u8; 28];
    let mut size = 28u32;
    let mut port = 0u16;
    // SAFETY (whole block): buffers as sized, or null on purpose.
    unsafe {
        assert_eq!((vt.build_address)(ip, w("192.0.2.5").as_ptr(), 2302), S_OK);
        assert_eq!(a.url_w(), DirectPlayUrl::ip("192.0.2.5", 2302).to_string());
        assert_eq!((vt.get_sock_address)(ip, sockaddr.as_mut_ptr(), &mut size), S_OK);
        assert_eq!((size, &sockaddr[..8]), (16, &[2, 0, 0x08, 0xFE, 192, 0, 2, 5][..]));
        size = 4;
        assert_eq!((vt.get_sock_address)(ip, sockaddr.as_mut_ptr(), &mut size), DPNERR_BUFFERTOOSMALL);
        assert_eq!(size, 16);
        sockaddr[4..8].copy_from_slice(&[10, 0, 0, 1]);
        assert_eq!((vt.build_from_sock_addr)(ip, sockaddr.as_ptr()), S_OK);
        let mut chars = 0u32;
        assert_eq!((vt.get_address)(ip, null_mut(), &mut chars, &mut port), DPNERR_BUFFERTOOSMALL);
        let mut host = vec![0u16; chars as usize];
        assert_eq!((vt.get_address)(ip, host.as_mut_ptr(), &mut chars, &mut port), S_OK);
        assert_eq!((host, port), (w("10.0.0.1"), 2302));
        let mut g = GUID::default();
        assert_eq!((vt.get_local_address)(ip, &mut g, &mut port), crate::codes::DPNERR_INCOMPLETEADDRESS);
        assert_eq!((vt.build_local_address)(ip, &RANDOM, 7), S_OK);
        assert_eq!(((vt.get_local_address)(ip, &mut g, &mut port), g, port), (S_OK, RANDOM, 7));
        chars = 0;
        assert_eq!(
            (vt.get_address)(ip, null_mut(), &mut chars, &mut port),
            crate::codes::DPNERR_INCOMPLETEADDRESS
        );
        // QueryInterface from the IP side reaches the same object; references are shared.
        let mut main = null_mut();
        assert_eq!((vt.unknown.query_interface)(ip, &IID_IDIRECTPLAY8_ADDRESS, &mut main), S_OK);
        assert_eq!(main, a.0);
        assert_eq!((a.vt().unknown.release)(main), 2);
        assert_eq!((vt.unknown.release)(ip), 1);
    }
    let mut none = null_mut();
    // SAFETY: the COM contract.
    assert_eq!(unsafe { (a.vt().unknown.query_interface)(a.0, &RANDOM, &mut none) }, E_NOINTERFACE);
    assert!(none.is_null());
}

/// The contract the Peer, Client and Server objects use.
#[test]
fn create_address_and_address_url() {
    let url = DirectPlayUrl::ip("192.0.2.9", 6073);
    let p = create_address(&url);
    let a = Addr(p);
    assert_eq!(a.count(), 3);
    // SAFETY: a live address; null on purpose.
    unsafe {
        assert_eq!(address_url(p), Ok(url));
        assert_eq!(address_url(null_mut()), Err(DPNERR_INVALIDPOINTER));
    }
}

#[test]
fn build_from_dp4_address_pointer_rules() {
    let a = Addr::new();
    // SAFETY: null and an empty address on purpose.
    unsafe {
        assert_eq!((a.vt().build_from_dp4_address)(a.0, null_mut(), 0), DPNERR_INVALIDPOINTER);
        let mut empty = [0u8; 0];
        assert_eq!(
            (a.vt().build_from_dp4_address)(a.0, empty.as_mut_ptr().cast(), 0),
            DPNERR_INVALIDADDRESSFORMAT
        );
    }
}

proptest! {
    /// Whatever a game passes to AddComponent and BuildFromURL, the object answers without a
    /// panic, and what it then writes is a URL it reads back.
    #[test]
    fn hostile_input_never_panics(
        ops in proptest::collection::vec(
            (any::<bool>(), "[a-zA-Z%;=#{}/:]{0,12}", proptest::collection::vec(any::<u8>(), 0..40), 0u32..7, 0u32..48),
            1..12,
        ),
    ) {
        let a = Addr::new();
        for (url, name, mut data, kind, size) in ops {
            if url {
                let _ = a.build_w(&format!("x-directplay:/{name}{}", String::from_utf8_lossy(&data)));
            } else {
                // The game's buffer holds `size` bytes and ends with a NUL a string scan stops at.
                data.resize(size as usize + 2, 0);
                let _ = a.add(&name, data.as_ptr().cast(), size, kind);
            }
            let text = a.url_w();
            prop_assert!(DirectPlayUrl::parse(&text).is_ok(), "{}", text);
        }
    }
}

/// Every `DPNA_KEY_*` a game sets, with its type, survives a trip through the URL text into
/// another object: same type, same value.
#[test]
fn every_predefined_key_round_trips_through_the_url() {
    let a = Addr::new();
    let guid = std::ptr::from_ref(&RANDOM).cast();
    let dword = 57600u32;
    let dword_p = std::ptr::from_ref(&dword).cast();
    for key in ["provider", "device", "program", "applicationinstance"] {
        assert_eq!(a.add(key, guid, 16, DPNA_DATATYPE_GUID), S_OK, "{key}");
    }
    for key in ["port", "baud", "processor", "traversalmode"] {
        assert_eq!(a.add(key, dword_p, 4, DPNA_DATATYPE_DWORD), S_OK, "{key}");
    }
    for (key, value) in [
        ("hostname", "game.example"),
        ("phonenumber", "555-1212"),
        ("flowcontrol", "RTSDTR"),
        ("parity", "NONE"),
        ("stopbits", "1"),
        ("nameinfo", "Pilot; \"one\" #1"),
    ] {
        assert_eq!(a.add_str(key, value), S_OK, "{key}");
    }
    let b = Addr::new();
    assert_eq!(b.build_w(&a.url_w()), S_OK);
    assert_eq!(b.count(), a.count());
    for i in 0..a.count() {
        let mut name = [0u16; 32];
        let (mut name_len, mut size, mut kind) = (32u32, 256u32, 0u32);
        let mut buf = [0u8; 256];
        // SAFETY: buffers as sized.
        let hr = unsafe {
            (a.vt().get_component_by_index)(
                a.0,
                i,
                name.as_mut_ptr(),
                &mut name_len,
                buf.as_mut_ptr().cast(),
                &mut size,
                &mut kind,
            )
        };
        assert_eq!(hr, S_OK);
        let key = String::from_utf16(&name[..name_len as usize - 1]).unwrap();
        assert_eq!(b.by_name(&key), (S_OK, buf[..size as usize].to_vec(), kind), "{key}");
    }
}
