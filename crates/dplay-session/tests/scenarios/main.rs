//! Session scenarios on dplay-sim (MS-DPDX 4.3; MC-DPL8CS 3.1.5, 3.2.5): traces, joins,
//! refusals, leaves, kills, host migration and the many-seed name-table property.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

use std::net::SocketAddr;
use std::time::Duration;

use dplay_sim::LinkConfig;
use dplay_wire::Wire;
use dplay_wire::dp8::cframe::Cframe;
use dplay_wire::dp8::coalesce::parse_coalesced;
use dplay_wire::dp8::dframe::{Dframe, DframeCommand, DframeControl};
use dplay_wire::dp8::enumeration::EnumMessage;
use dplay_wire::dp8::path_test::PathTest;
use dplay_wire::dp8::session::SessionMessage;

use dplay_session::test_hooks;
use dplay_session::{Event, Session};
use dplay_testkit::sim_check::{Mesh, sim_addr};

mod addresses;
mod bans;
mod early_data;
mod groups;
mod hostile;
mod indication;
mod join_errors;
mod joins;
mod leave;
mod member_budget;
mod migration;
mod process_completion;
mod property;
mod renames;
mod seed003;
mod session_input;
mod signing;
mod windows;
mod windows_peer;

/// A link with 15 ms of latency and `loss`.
fn link(loss: f64) -> LinkConfig {
    LinkConfig::clean().with_latency(Duration::from_millis(15)).with_loss(loss)
}

/// A session message's MS-DPDX name, or its MC-DPL8CS name.
fn session_name(bytes: &[u8]) -> String {
    match SessionMessage::parse(bytes) {
        Ok(m) => m.dpdx_name().unwrap_or(m.name()).to_owned(),
        Err(_) => "USER_1?".to_owned(),
    }
}

/// Names a datagram as MS-DPDX 4.3 does, for traces.
pub(crate) fn describe(bytes: &[u8]) -> String {
    match bytes.first() {
        Some(0) => match bytes.get(1) {
            Some(5) => PathTest::parse(bytes).map_or("PATH_TEST?".into(), |_| "SESS_PATH_TEST".into()),
            _ => EnumMessage::parse(bytes).map_or("ENUM?".into(), |m| m.name().to_owned()),
        },
        Some(b) if b & 1 == 1 => describe_dframe(bytes),
        Some(_) => match Cframe::parse(bytes) {
            Ok(Cframe::Connect(_)) => "TRANS_COMMAND_CONNECT".into(),
            Ok(Cframe::Connected(_)) => "TRANS_COMMAND_CONNECT_ACCEPT".into(),
            Ok(Cframe::Sack(_)) => "TRANS_COMMAND_SACK".into(),
            Ok(c) => c.name().to_owned(),
            Err(_) => "CFRAME?".into(),
        },
        None => String::new(),
    }
}

fn describe_dframe(bytes: &[u8]) -> String {
    let Ok(f) = Dframe::parse(bytes) else { return "DFRAME?".into() };
    let retry = if f.header.control.contains(DframeControl::RETRY) { " (retry)" } else { "" };
    let body = if f.header.is_keepalive() {
        "TRANS_USERDATA_KEEPALIVE".to_owned()
    } else if f.header.control.contains(DframeControl::END_STREAM) {
        "TRANS_USERDATA_END_OF_STREAM".to_owned()
    } else if f.header.control.contains(DframeControl::COALESCE) {
        match parse_coalesced(&f.payload) {
            Ok(parts) => parts
                .iter()
                .map(|p| if p.user_1 { session_name(p.data) } else { "APP_DATA".into() })
                .collect::<Vec<_>>()
                .join(" + "),
            Err(_) => "COALESCED?".into(),
        }
    } else if !f.header.command.contains(DframeCommand::NEW_MSG) {
        "(continuation)".to_owned()
    } else if f.header.command.contains(DframeCommand::USER_1) {
        session_name(&f.payload)
    } else {
        "APP_DATA".to_owned()
    };
    format!("{body}{retry}")
}

/// The events of node `i`.
fn events(mesh: &Mesh, i: usize) -> &[Event] {
    &mesh.node(i).events
}

/// The session of node `i`.
fn session(mesh: &Mesh, i: usize) -> &Session {
    &mesh.node(i).session
}

/// Address of node `i`.
fn addr(i: usize) -> SocketAddr {
    sim_addr(i)
}
