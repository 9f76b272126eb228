//! Unit tests of the DirectPlay 4 bridge: GUID_FS6 on the wire, our player when hosting.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use dplay_session::dp4::{Dp4Config, Dp4Session, Via};

use super::*;
use crate::client::ClientConfig;
use crate::session_iface::Role;
use crate::testutil::bytes;

#[allow(clippy::disallowed_methods)] // one real instant; nothing here waits
fn now() -> Instant {
    Instant::now()
}

/// FS-MULTIPLAYER.md 2: GUID_FS6's wire bytes (MS-DTYP mixed-endian), as an FS98 add-on's
/// DPSP_MSG_ENUMSESSIONS carries them in `ApplicationGuid` right after the 28-byte header
/// (MC-DPL4CS 2.2.29).
#[test]
fn enumeration_asks_for_guid_fs6() {
    let wire = bytes("27 0A 08 CC 4E 6D D0 11 8E 21 00 A0 C9 05 42 EF");
    assert_eq!(GUID_FS6.to_bytes_le().as_slice(), wire.as_slice());
    let session = Dp4Session::new(Dp4Config::default()).expect("default MTU");
    let client = Client::new(ClientConfig::new(Role::Observer));
    let mut bridge = AddonOverDp4::client(session, client, "tower");
    bridge.enum_sessions(now(), Some(SocketAddr::from((Ipv4Addr::LOCALHOST, 47624))), None);
    let t = bridge.poll_transmit().expect("ENUMSESSIONS");
    assert_eq!((t.via, t.to), (Via::Udp, SocketAddr::from((Ipv4Addr::LOCALHOST, 47624))));
    assert_eq!(t.bytes.get(28..44), Some(wire.as_slice()));
    assert_eq!(bridge.own_player(), None);
    assert_eq!(bridge.tracker().map(|t| t.iter().count()), Some(0));
}

/// FS-MULTIPLAYER.md 1.5 step 2: hosting creates our DirectPlay player at once, named as
/// configured, and the add-on host starts with its DPID.
#[test]
fn hosting_creates_our_named_player() {
    let session = Dp4Session::new(Dp4Config::default()).expect("default MTU");
    let config = HostConfig::new(crate::Dialect::Fs98, Role::Observer, crate::HostPolicy::default());
    let mut bridge = AddonOverDp4::host(session, config, "fs-host");
    assert!(bridge.host_ref().is_none());
    bridge.host_session(now(), fs98_host_config("FS98")).expect("host");
    let own = bridge.own_player().expect("our player");
    assert_eq!(bridge.player_name(own).as_deref(), Some("fs-host"));
    assert!(bridge.host_ref().is_some());
    assert_eq!(bridge.session().session_desc().map(|d| d.application_guid), Some(GUID_FS6));
    let events: Vec<_> = std::iter::from_fn(|| bridge.poll_event()).collect();
    assert_eq!(events.first(), Some(&OverDp4Event::Session(Dp4Event::PlayerCreated { id: own.0 })));
    // FS-MULTIPLAYER.md 1.5 step 4: FS98's two groups, made by the host.
    let groups = [FS61_REQUEST_PARAMS, FS61_REFUSE_PARAMS].map(|n| bridge.session().group_named(n));
    let [Some(request), Some(refuse)] = groups else { panic!("groups missing: {groups:?}") };
    let created = |id, name: &str| {
        OverDp4Event::Session(Dp4Event::Group(GroupEvent::Created {
            id,
            name: Some(name.into()),
            local: true,
        }))
    };
    assert_eq!(events[1..], [created(request, FS61_REQUEST_PARAMS), created(refuse, FS61_REFUSE_PARAMS)]);
}

/// Issue 27 item 16: a password-protected FS98 session answers [`fs98_enum_request`] with no
/// password or a wrong one (PR set: MC-DPL4CS 2.2.29, 3.2.5.3, INDEX F-28), so `fs join ADDR`
/// goes on to the join, whose refusal says the password is missing or wrong, rather than
/// finding no session.
#[test]
fn a_password_protected_session_is_found() {
    let mut host = Dp4Session::new(Dp4Config::default()).expect("default MTU");
    let mut config = fs98_host_config("fs98");
    config.password = Some("secret".into());
    config.flags |= dplay_wire::dp4::session::SessionFlags::PASSWORD_REQUIRED;
    host.host(now(), config).expect("hosting");
    for password in [None, Some("wrong")] {
        let mut client = Dp4Session::new(Dp4Config::default()).expect("default MTU");
        client.enum_sessions_at(
            now(),
            SocketAddr::from((Ipv4Addr::LOCALHOST, 47624)),
            &fs98_enum_request(password),
        );
        let t = client.poll_transmit().expect("ENUMSESSIONS");
        host.handle_udp(now(), SocketAddr::from((Ipv4Addr::LOCALHOST, 2350)), &t.bytes);
        let reply = host.poll_transmit().expect("ENUMSESSIONSREPLY");
        assert_eq!(reply.via, Via::Tcp, "{password:?}");
    }
}
