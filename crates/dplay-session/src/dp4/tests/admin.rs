//! The host operator's tools (issue 17): removing an instance with DELETEPLAYER, bans refused
//! with DPERR_ACCESSDENIED, and the password changed live with SESSIONDESCCHANGED
//! (MC-DPL4CS 2.2.10, 2.2.25, 2.2.50, 2.2.51, 3.1.5.14, 3.1.5.22).

use dplay_wire::dp4::session::SessionFlags;

use super::net::{created, ip, session_in, session_of};
use crate::Bans;
use crate::bans::DPERR_ACCESSDENIED;
use crate::dp4::{Dp4Event, DropReason, EndReason, JoinError};

/// MC-DPL4CS 3.1.5.14, 3.1.5.32: the host deletes an instance's players, its system player
/// last, at every instance, the removed one included, and then sends it YOUAREDEAD; that one
/// ends with `Removed`, the others drop them.
#[test]
fn the_host_removes_an_instance_with_deleteplayer() {
    let mut net = session_of(3, |_| {});
    let bob = created(&mut net, 1, "bob");
    let b_sys = net.nodes[1].system_player().unwrap();
    for i in 0..3 {
        net.take(i);
    }
    net.log.clear();
    let now = net.now;
    net.nodes[0].remove_instance(now, bob).unwrap();
    net.run();
    let trace = net.trace();
    let to_1: Vec<&str> = trace.iter().filter(|t| t.starts_with("0->1")).map(String::as_str).collect();
    assert_eq!(
        to_1,
        ["0->1 Tcp DPSP_MSG_DELETEPLAYER", "0->1 Tcp DPSP_MSG_DELETEPLAYER", "0->1 Tcp DPSP_MSG_YOUAREDEAD"]
    );
    let to_2 = trace.iter().filter(|t| t.starts_with("0->2")).count();
    assert_eq!((to_2, trace.len()), (2, 5), "{trace:?}");
    assert_eq!(net.take(0), [Dp4Event::PlayerLeft { id: bob }, Dp4Event::PlayerLeft { id: b_sys }]);
    assert_eq!(net.take(2), [Dp4Event::PlayerLeft { id: bob }, Dp4Event::PlayerLeft { id: b_sys }]);
    // Its own players' DELETEPLAYERs are dropped; its system player's ends the session for it.
    assert_eq!(net.take(1), [Dp4Event::Ended(EndReason::Removed)]);
    // Not the host's own, and only by the host.
    let host = net.nodes[0].system_player().unwrap();
    let now = net.now;
    assert!(net.nodes[0].remove_instance(now, host).is_err());
    assert!(net.nodes[2].remove_instance(now, host).is_err());
}

/// A member's own system player deleted by another member (not the host) is dropped.
#[test]
fn only_the_host_removes_us() {
    let mut net = session_of(3, |_| {});
    let c_sys = net.nodes[2].system_player().unwrap();
    let body = dplay_wire::dp4::message::Dp4Body::DeletePlayer(dplay_wire::dp4::nametable::PlayerGroupIds {
        player_id: c_sys,
        ..Default::default()
    });
    net.nodes[1].send_body(crate::dp4::Via::Tcp, super::net::stream(2), body);
    net.take(2);
    net.run();
    assert!(net.take(2).is_empty());
    assert_eq!(net.nodes[2].role(), crate::dp4::Role::Member);
}

/// A banned address gets DPERR_ACCESSDENIED in REQUESTPLAYERREPLY (a banned name in the system
/// player's names would get it in ADDFORWARDREPLY; Windows sends that player unnamed).
#[test]
fn banned_addresses_and_names_are_refused_with_accessdenied() {
    let mut net = session_in(3, 1, |_| {});
    let mut bans = Bans::new();
    bans.ban_address(ip(1).into()).unwrap();
    net.nodes[0].set_bans(bans);
    net.join(1, None);
    assert_eq!(net.take(1), [Dp4Event::JoinFailed(JoinError::Refused(DPERR_ACCESSDENIED))]);
    let refused =
        |e: &Dp4Event| matches!(e, Dp4Event::JoinRefused { name: None, code: DPERR_ACCESSDENIED, .. });
    assert_eq!(net.take(0).iter().filter(|e| refused(e)).count(), 1, "the host reports the refusal");
    net.join(2, None);
    assert!(net.take(2).iter().any(|e| matches!(e, Dp4Event::Joined { .. })), "another address joins");
    assert_eq!(net.nodes[0].stats().dropped(DropReason::Banned), 1);
}

/// A name is not known at join in DirectPlay 4 (the system player has none): a player created
/// with a banned name gets its instance removed (docs/decisions.md, "Bans").
#[test]
fn a_player_created_with_a_banned_name_has_its_instance_removed() {
    let mut net = session_of(3, |_| {});
    let mut bans = Bans::new();
    bans.ban_name("Mallory").unwrap();
    net.nodes[0].set_bans(bans);
    for i in 0..3 {
        net.take(i);
    }
    let b_sys = net.nodes[1].system_player().unwrap();
    let now = net.now;
    net.nodes[1].create_player(now, "MALLORY").unwrap();
    net.run();
    assert!(net.take(1).contains(&Dp4Event::Ended(EndReason::Removed)));
    assert!(!net.nodes[0].players().contains_key(&b_sys));
    assert!(!net.nodes[2].players().values().any(|p| p.system_player_id == b_sys));
    assert_eq!(net.nodes[0].stats().dropped(DropReason::Banned), 1);
}

/// MC-DPL4CS 2.2.51, 3.1.5.22: a new password goes to every instance with SESSIONDESCCHANGED
/// and is required from the next join on; members keep it, so a host by migration checks
/// joins against it (issue 27 item 15).
#[test]
fn a_live_password_is_announced_and_required() {
    let mut net = session_in(3, 2, |_| {});
    net.take(1);
    net.log.clear();
    net.nodes[0].set_password(Some("secret")).unwrap();
    net.run();
    assert_eq!(net.trace(), ["0->1 Tcp DPSP_MSG_SESSIONDESCCHANGED"]);
    let desc = *net.nodes[1].session_desc().unwrap();
    assert!(desc.flags.contains(SessionFlags::PASSWORD_REQUIRED));
    assert_eq!(net.nodes[0].password().as_deref(), Some("secret"));
    assert_eq!(net.nodes[1].password().as_deref(), Some("secret"), "kept by the member");
    net.join(2, Some("wrong"));
    let refused = JoinError::Refused(crate::dp4::DPERR_INVALIDPASSWORD);
    assert_eq!(net.take(2), [Dp4Event::JoinFailed(refused)]);
    let reported =
        |e: &Dp4Event| matches!(e, Dp4Event::JoinRefused { code: crate::dp4::DPERR_INVALIDPASSWORD, .. });
    assert!(net.take(0).iter().any(reported), "the host reports the wrong password");
    net.nodes[0].set_password(None).unwrap();
    assert!(!net.nodes[0].session_desc().unwrap().flags.contains(SessionFlags::PASSWORD_REQUIRED));
}

/// MC-DPL4CS 3.1.4.17: a chat line to everyone is one DPSP_MSG_CHAT per remote player, each
/// naming its receiver, and each instance reports it.
#[test]
fn a_chat_line_to_everyone_reaches_every_player() {
    let mut net = session_of(3, |_| {});
    let bob = created(&mut net, 1, "bob");
    let host = net.nodes[0].system_player().unwrap();
    let c_sys = net.nodes[2].system_player().unwrap();
    for i in 0..3 {
        net.take(i);
    }
    assert_eq!(net.nodes[0].send_chat_all(host, "hello <b>all</b>").unwrap(), 2);
    net.run();
    let text = Some("hello <b>all</b>".to_owned());
    assert_eq!(net.take(1), [Dp4Event::Chat { from: host, to: bob, text: text.clone() }]);
    assert_eq!(net.take(2), [Dp4Event::Chat { from: host, to: c_sys, text }]);
}
