//! The trace of one add-on join over DirectPlay 4, fixed seed, clean links: the session join
//! (MC-DPL4CS 3.1.4.2, 3.1.5.1, INDEX E.6), our player (3.1.4.4) and its ADDPLAYERTOGROUP into
//! FS61_REFUSE_PARAMS (3.1.4.12; FS-MULTIPLAYER.md 1.5 step 4), then ADD_PLAYER_REQUEST,
//! CHANGE_TO_PLAYER, QUERY_PLAYER_TYPE and the first positions (seed 004).

use std::time::Duration;

use dplay_addon::{HostPolicy, PacketId, Role};
use dplay_session::dp4::Via;
use dplay_wire::dp4::message::Dp4Datagram;

use crate::net::{Links, Sent};
use crate::support::{Kind, Net};

/// An add-on packet's name, from its header's `packet_id`.
fn addon_name(bytes: &[u8]) -> String {
    match bytes.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) {
        Some(id) => PacketId(u32::from_le_bytes(id)).name().unwrap_or("ADDON?").to_owned(),
        None => "ADDON?".to_owned(),
    }
}

/// Names a message: a DPSP system message, or the add-on packet a player message carries
/// (over UDP: `idFrom`, `idTo`, data; over TCP: the stream prefix first, MC-DPL4CS 2.2.45).
fn describe(s: &Sent) -> String {
    let name = match (s.via, Dp4Datagram::parse(&s.bytes, true)) {
        (_, Ok(Dp4Datagram::System(m))) => m.name().to_owned(),
        (Via::Udp, _) => addon_name(s.bytes.get(8..).unwrap_or_default()),
        (Via::Tcp, Ok(Dp4Datagram::Player(p))) => addon_name(&p.payload.0),
        (Via::Tcp, Err(_)) => "UNPARSED".to_owned(),
    };
    let lost = if s.lost { " (lost)" } else { "" };
    format!("{}->{} {:?} {name}{lost}", s.from, s.to, s.via)
}

/// Seed 004 rows ADD_PLAYER_REQUEST, CHANGE_TO_PLAYER, QUERY_PLAYER_TYPE, POSITION_VELOCITY
/// over the DirectPlay 4 join of MC-DPL4CS (INDEX E.6).
#[test]
fn join_trace() {
    let kinds = [Kind::Host(Role::Observer, HostPolicy::default()), Kind::Client(Role::Player)];
    let mut net = Net::new(7, Links::clean(), &kinds);
    net.wires.trace = Some(Vec::new());
    net.start();
    assert!(net.run_until_addon_joined(&[1], Duration::from_secs(5)));
    net.run_for(Duration::from_millis(600));
    let origin = net.wires.trace.as_ref().and_then(|t| t.first()).map(|s| s.at).expect("traffic");
    let lines: Vec<String> = net
        .wires
        .trace
        .iter()
        .flatten()
        .map(|s| format!("t={}ms {}", s.at.duration_since(origin).as_millis(), describe(s)))
        .collect();
    insta::assert_snapshot!("addon_join_over_dp4", lines.join("\n"));
}
