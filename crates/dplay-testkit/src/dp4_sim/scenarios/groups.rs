//! The groups scenario: every group message our session logic sends (MC-DPL4CS 3.1.4.6-3.1.4.9,
//! 3.1.4.12, 3.1.4.13, 3.1.4.16, 3.2.5.4), on its own so the other scenarios stay as they were.

use std::time::Instant;

use super::{APP, check, player};
use crate::dp4_sim::Dp4Net;
use dplay_session::dp4::{CommandError, Dp4Event, Dp4Session, GroupEvent, HostConfig};

/// Runs a command on node `i`, then the network.
fn on(
    net: &mut Dp4Net,
    i: usize,
    what: &str,
    f: impl FnOnce(&mut Dp4Session, Instant) -> Result<(), CommandError>,
) -> Result<(), String> {
    let now = net.now;
    f(net.node(i)?, now).map_err(|e| format!("node {i} {what}: {e}"))?;
    net.run()
}

/// The group named `name` at node `i`.
fn group(net: &Dp4Net, i: usize, name: &str) -> Result<u32, String> {
    net.nodes.get(i).and_then(|n| n.group_named(name)).ok_or_else(|| format!("node {i} has no group {name}"))
}

/// Node `i`'s members of `group`.
fn members(net: &Dp4Net, i: usize, group: u32) -> Vec<u32> {
    net.nodes.get(i).and_then(|n| n.group_members(group)).map(Iterator::collect).unwrap_or_default()
}

/// MC-DPL4CS 3.1.4.6 (CREATEGROUP from the host; REQUESTGROUPID, REQUESTPLAYERREPLY and
/// CREATEGROUP from a member, 3.2.5.4), 3.1.4.12 (ADDPLAYERTOGROUP), 3.1.5.7 (the groups in a
/// later joiner's SUPERENUMPLAYERSREPLY), 3.1.4.16 (a message to a group reaches its members'
/// instance only), 3.1.4.8, 3.1.4.9 (GROUPDATACHANGED, GROUPNAMECHANGED), 3.1.4.13
/// (DELETEPLAYERFROMGROUP) and 3.1.4.7 (DELETEGROUP): FS98's two groups.
pub fn groups(start: Instant) -> Result<Dp4Net, String> {
    let mut net = Dp4Net::lan(3, start)?;
    net.host(0, HostConfig::new("FS98 groups", APP))?;
    net.join(1, 0, None)?;
    let h = player(&mut net, 0, "host pilot")?;
    let a = player(&mut net, 1, "alice")?;
    on(&mut net, 0, "create_group", |s, now| s.create_group(now, "FS61_REQUEST_PARAMS"))?;
    on(&mut net, 1, "create_group", |s, now| s.create_group(now, "FS61_REFUSE_PARAMS"))?;
    let (request, refuse) = (group(&net, 1, "FS61_REQUEST_PARAMS")?, group(&net, 0, "FS61_REFUSE_PARAMS")?);
    on(&mut net, 1, "add_player_to_group", |s, _| s.add_player_to_group(refuse, a))?;
    check(members(&net, 0, refuse) == [a], "the host sees alice in FS61_REFUSE_PARAMS")?;
    net.join(2, 0, None)?;
    check(group(&net, 2, "FS61_REQUEST_PARAMS")? == request, "a joiner learns FS61_REQUEST_PARAMS")?;
    check(members(&net, 2, refuse) == [a], "a joiner learns the members of FS61_REFUSE_PARAMS")?;
    net.send(0, h, refuse, b"to the refusers", true)?;
    let to_group = |e: &Dp4Event| matches!(e, Dp4Event::Message { to: Some(t), .. } if *t == refuse);
    check(net.saw(1, to_group) && !net.saw(2, to_group), "a message to a group reaches its members only")?;
    on(&mut net, 1, "set_group_data", |s, _| s.set_group_data(refuse, &[1, 2, 3]))?;
    on(&mut net, 1, "set_group_name", |s, _| s.set_group_name(refuse, Some("refusers"), None))?;
    check(group(&net, 2, "refusers")? == refuse, "GROUPNAMECHANGED renames the group")?;
    on(&mut net, 1, "delete_player_from_group", |s, _| s.delete_player_from_group(refuse, a))?;
    on(&mut net, 0, "delete_group", |s, _| s.delete_group(request))?;
    let removed = Dp4Event::Group(GroupEvent::PlayerRemoved { group: refuse, player: a });
    check(net.saw(2, |e| *e == removed), "DELETEPLAYERFROMGROUP reaches every instance")?;
    check(net.saw(1, |e| *e == Dp4Event::Group(GroupEvent::Deleted { id: request })), "DELETEGROUP")?;
    check(net.nodes.iter().all(|n| n.stats().dropped_total() == 0), "nothing dropped")?;
    Ok(net)
}
