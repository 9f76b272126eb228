//! The trace of one add-on join over DirectPlay 8, fixed seed, clean link: the session join
//! (MS-DPDX 4.3), then ADD_PLAYER_REQUEST and CHANGE_TO_PLAYER (seed 004).

use std::time::Duration;

use dplay_addon::{HostPolicy, PacketId, Role};
use dplay_sim::LinkConfig;
use dplay_wire::Wire;
use dplay_wire::dp8::cframe::Cframe;
use dplay_wire::dp8::coalesce::parse_coalesced;
use dplay_wire::dp8::dframe::{Dframe, DframeCommand, DframeControl};
use dplay_wire::dp8::session::SessionMessage;

use crate::support::{Kind, Net};

/// An add-on packet's name, from its header's `packet_id`.
fn addon_name(bytes: &[u8]) -> String {
    match bytes.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) {
        Some(id) => PacketId(u32::from_le_bytes(id)).name().unwrap_or("ADDON?").to_owned(),
        None => "ADDON?".to_owned(),
    }
}

fn part(user_1: bool, bytes: &[u8]) -> String {
    if user_1 {
        SessionMessage::parse(bytes).map_or("USER_1?".to_owned(), |m| m.name().to_owned())
    } else {
        addon_name(bytes)
    }
}

/// Names a datagram: transport frames, session messages, add-on packets.
fn describe(bytes: &[u8]) -> String {
    if bytes.first().is_some_and(|b| b & 1 == 0) {
        return Cframe::parse(bytes).map_or("CFRAME?".to_owned(), |c| c.name().to_owned());
    }
    let Ok(f) = Dframe::parse(bytes) else { return "DFRAME?".to_owned() };
    let user_1 = f.header.command.contains(DframeCommand::USER_1);
    let body = if f.header.is_keepalive() {
        "KEEPALIVE".to_owned()
    } else if f.header.control.contains(DframeControl::COALESCE) {
        parse_coalesced(&f.payload).map_or("COALESCED?".to_owned(), |parts| {
            parts.iter().map(|p| part(p.user_1, p.data)).collect::<Vec<_>>().join(" + ")
        })
    } else {
        part(user_1, &f.payload)
    };
    let retry = if f.header.control.contains(DframeControl::RETRY) { " (retry)" } else { "" };
    format!("{body}{retry}")
}

/// Seed 004 rows ADD_PLAYER_REQUEST, QUERY_PLAYER_TYPE, CHANGE_TO_PLAYER over MS-DPDX 4.3.
#[test]
fn join_trace() {
    let link = LinkConfig::clean().with_latency(Duration::from_millis(15));
    let kinds = [Kind::Host(Role::Observer, HostPolicy::default()), Kind::Client(Role::Player)];
    let mut net = Net::new(7, link, &kinds);
    net.with(1, |n, _| n.flying = false);
    net.sim.enable_trace_with(describe);
    net.start();
    assert!(net.run_until_addon_joined(&[1], Duration::from_secs(5)));
    net.sim.run_for(Duration::from_millis(100));
    insta::assert_snapshot!("addon_join_over_dp8", net.sim.trace());
}
