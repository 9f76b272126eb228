//! Addresses as Windows sends them (MC-DPL8CS 2.2.1.2, 2.2.9, 4) and client/server recognised
//! from the session (MC-DPL8CS 2.2.7, 3.1.5.1).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use dplay_spec_examples::mc_dpl8cs_4::{CONNECT_INFO_EX, INSTANCE};
use dplay_wire::dp8::alternate_address::AlternateAddress;
use dplay_wire::dp8::cframe::ConnectFields;
use dplay_wire::dp8::dframe::{DframeCommand, DframeContext, DframeHeader};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;
use dplay_wire::dp8::session::{ApplicationDescFlags, PlayerConnectInfo};
use uuid::Uuid;

use super::*;
use dplay_session::{Mode, SessionConfig};

/// The bytes of the PLAYER_CONNECT_INFO a joiner configured by `tune` sends once its transport
/// connection to a scripted host is up (MS-DPDX 4.3 steps 3-7).
fn connect_info_bytes(tune: impl FnOnce(&mut SessionConfig), instance: Option<Uuid>) -> Vec<u8> {
    let now = dplay_sim::Sim::new(0).now();
    let host = SocketAddr::from(([65, 52, 239, 1], 2302));
    let mut cfg = SessionConfig::new(DXDIAG_APPLICATION_GUID, addr(1), "Test User");
    tune(&mut cfg);
    let mut s = Session::new(cfg, now);
    s.join(now, host, instance).expect("idle");
    let connect = s.poll_transmit().expect("CONNECT");
    let Ok(Cframe::Connect(f)) = Cframe::parse(&connect.contents) else { panic!("not a CONNECT") };
    let reply = ConnectFields { poll: true, rsp_id: f.msg_id, ..f };
    s.handle_datagram(now, host, &Cframe::Connected(reply).to_vec().expect("emit"));
    std::iter::from_fn(|| s.poll_transmit())
        .find_map(|t| {
            let (h, payload) = DframeHeader::parse(&t.contents, DframeContext::default()).ok()?;
            h.command.contains(DframeCommand::USER_1).then(|| payload.to_vec())
        })
        .expect("PLAYER_CONNECT_INFO")
}

/// MC-DPL8CS 4, 2.2.1.2, 2.2.9: our joiner, set up as the spec's example joiner (DirectX 9.0c,
/// "Test User", bound to 65.52.239.61:2302, the example's instance), sends the example's
/// PLAYER_CONNECT_INFO_EX byte for byte: no URL, one DN_ALTERNATE_ADDRESS.
#[test]
fn joiner_sends_the_mc_dpl8cs_4_connect_info() {
    let instance = Uuid::from_bytes_le(INSTANCE);
    let ours = connect_info_bytes(
        |cfg| {
            cfg.dnet_version = 8;
            cfg.local_addr = SocketAddr::from(([65, 52, 239, 61], 2302));
        },
        Some(instance),
    );
    let spec = dplay_wire::hexdump::parse_hex(CONNECT_INFO_EX).expect("hex");
    assert_eq!(dplay_wire::hexdump::hex(&ours), dplay_wire::hexdump::hex(&spec));
}

/// MC-DPL8CS 2.2.9: a joiner bound to 0.0.0.0 never names it: it offers the interface
/// addresses it was given, with its port, or no alternate address at all; never a URL.
#[test]
fn joiner_bound_to_any_address_names_no_unspecified_address() {
    let any = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 2302));
    for (interfaces, expected) in [
        (vec![], vec![]),
        (
            vec![IpAddr::from([0, 0, 0, 0]), IpAddr::from([192, 0, 2, 5]), IpAddr::from([198, 51, 100, 7])],
            vec![
                AlternateAddress(SocketAddr::from(([192, 0, 2, 5], 2302))),
                AlternateAddress(SocketAddr::from(([198, 51, 100, 7], 2302))),
            ],
        ),
    ] {
        let bytes = connect_info_bytes(
            |cfg| {
                cfg.local_addr = any;
                cfg.interface_addrs = interfaces;
            },
            None,
        );
        let Ok(SessionMessage::PlayerConnectInfo(info)) = SessionMessage::parse(&bytes) else { panic!() };
        let info: PlayerConnectInfo = info;
        assert_eq!(info.url, None);
        assert_eq!(info.alternate_addresses, expected);
    }
}

/// MC-DPL8CS 4 (SEND_CONNECT_INFO): the host's own entry carries no URL (a host bound to
/// 0.0.0.0 would otherwise send `hostname=0.0.0.0`); the joiner's entry names the address its
/// datagrams came from.
#[test]
fn name_table_urls_are_real_addresses() {
    let mut mesh = Mesh::new(51, 2, link(0.0), |i, cfg| {
        if i == 0 {
            cfg.local_addr = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 2302));
        }
    });
    mesh.host(0);
    mesh.join(1, 0);
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(5)));
    let table = session(&mesh, 1).name_table();
    let host = table.get(session(&mesh, 1).host_dpnid()).expect("host entry");
    assert_eq!(host.url, None);
    let me = table.get(session(&mesh, 1).local_dpnid()).expect("own entry");
    let url = me.url.as_ref().expect("a URL").url().expect("a DirectPlay URL");
    assert_eq!(url.hostname(), Some("10.0.0.2"));
    assert_eq!(url.port(), Some(2302));
}

/// MC-DPL8CS 2.2.7, 3.1.5.1: a client recognises a server whose entry is flagged SERVER but not
/// HOST, and joins without waiting for a DN_INSTRUCT_CONNECT a server never sends; it reports
/// the session as client/server.
#[test]
fn client_recognises_a_server_flagged_server_only() {
    let mut mesh = Mesh::new(53, 2, link(0.0), |_, cfg| cfg.mode = Mode::ClientServer);
    mesh.host(0);
    mesh.with(0, |s, _| test_hooks::name_table_mut(s).set_host(Dpnid::NONE));
    mesh.join(1, 0);
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(5)));
    let server = session(&mesh, 0).local_dpnid();
    assert_eq!(session(&mesh, 1).host_dpnid(), server);
    assert!(events(&mesh, 1).iter().any(|e| matches!(
        e,
        Event::Joined { host, flags, .. } if *host == server && flags.contains(ApplicationDescFlags::CLIENT_SERVER)
    )));
    assert_eq!(session(&mesh, 1).stats().path_tests_sent, 0);
}

/// MC-DPL8CS 3.1.5.1: a joiner whose own setting says peer-to-peer when the server's
/// SEND_CONNECT_INFO arrives (DPNSESSION_CLIENT_SERVER in its flags) does not wait for an
/// INSTRUCT_CONNECT that a server never sends, and starts no path tests.
#[test]
fn session_flag_makes_a_joiner_a_client() {
    let mut mesh = Mesh::new(57, 2, link(0.0), |_, cfg| cfg.mode = Mode::ClientServer);
    mesh.host(0);
    mesh.join(1, 0);
    let joiner = mesh.ids[1];
    let deadline = mesh.sim.now() + Duration::from_secs(5);
    assert!(mesh.sim.run_until_with(deadline, |sim| {
        sim.node::<dplay_testkit::sim_check::SimNode>(joiner).session.phase()
            == dplay_session::Phase::AwaitingInfo
    }));
    mesh.with(1, |s, _| test_hooks::config_mut(s).mode = Mode::PeerToPeer);
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(5)));
    assert_eq!(session(&mesh, 1).stats().path_tests_sent, 0);
}
