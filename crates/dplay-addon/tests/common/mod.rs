//! What the bridge scenarios over DirectPlay 4 (`over_dp4`) and DirectPlay 8 (`over_dp8`)
//! share: the players' tracks, the kinds of node, and the checks on what a node's tracker holds
//! (seed 004; FS-MULTIPLAYER.md 1.4, 1.5).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use dplay_addon::tracking::Remote;
use dplay_addon::{HostPolicy, PlayerId, Position, Role, Tracker};

/// Degrees of latitude a player moves per second along its track.
pub(crate) const DEG_PER_S: f64 = 0.001;

/// Where player node `i` is `t` into the run: a straight northward track.
pub(crate) fn track(i: usize, t: Duration) -> Position {
    Position {
        latitude_deg: 40.0 + i as f64 + DEG_PER_S * t.as_secs_f64(),
        longitude_deg: -100.0 + i as f64,
        altitude_m: 1000.0,
        ..Position::default()
    }
}

/// What a node is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// The add-on host, with its own role and policy.
    Host(Role, HostPolicy),
    /// A client joining as this role.
    Client(Role),
}

/// The positions a node accepted, per sender, for the `packet_index` rule (seed 004 row
/// POSITION_LLAPBH).
#[derive(Debug, Default)]
pub(crate) struct Accepted {
    /// Per sender: the tracker's `packet_index` after each input that accepted positions.
    pub(crate) indices: BTreeMap<PlayerId, Vec<u32>>,
    /// Per sender: the positions accepted.
    pub(crate) updates: BTreeMap<PlayerId, usize>,
}

impl Accepted {
    /// Records one input's accepted positions, a sender per `PositionUpdated` event. Several
    /// positions of one sender may be accepted in one input (a datagram that waited for a gap to
    /// fill): the add-on's `tracker` then holds the last one, recorded once.
    #[track_caller]
    pub(crate) fn record(&mut self, updated: &[PlayerId], tracker: Option<&Tracker>) {
        for id in updated {
            *self.updates.entry(*id).or_default() += 1;
        }
        let once: BTreeSet<PlayerId> = updated.iter().copied().collect();
        if once.is_empty() {
            return;
        }
        let tracker = tracker.expect("the add-on has started");
        for id in once {
            let index = tracker.get(id).and_then(|r| r.last_packet_index);
            let index = index.expect("an accepted position has a packet_index");
            self.indices.entry(id).or_default().push(index);
        }
    }
}

/// Checks the `packet_index` rule at node `at`: the indices it accepted of every sender
/// strictly increase (seed 004 row POSITION_LLAPBH). Returns the number of positions accepted
/// from each sender.
#[track_caller]
pub(crate) fn assert_increasing(at: usize, accepted: &Accepted) -> BTreeMap<PlayerId, usize> {
    accepted
        .indices
        .iter()
        .map(|(id, indices)| {
            assert!(
                indices.is_sorted_by(|a, b| a < b),
                "node {at} accepted an out-of-order position from {id:?}: {indices:?}"
            );
            (*id, accepted.updates.get(id).copied().unwrap_or(0))
        })
        .collect()
}

/// The tracker of node `at`'s entry for node `of` (player `id`).
#[track_caller]
fn remote(tracker: &Tracker, at: usize, of: usize, id: PlayerId) -> &Remote {
    tracker.get(id).unwrap_or_else(|| panic!("node {at} does not know node {of}"))
}

/// Checks that node `at`, at `now`, tracks node `of` (player `id`, on its track since `origin`)
/// as a player with a recent fix close to where `of` was; `context` describes node `at` when
/// the role is wrong.
#[track_caller]
pub(crate) fn assert_tracks(
    at: usize,
    tracker: &Tracker,
    of: usize,
    id: PlayerId,
    origin: Instant,
    now: Instant,
    context: impl FnOnce() -> String,
) {
    let remote = remote(tracker, at, of, id);
    assert_eq!(
        remote.role,
        Some(Role::Player),
        "node {at} sees node {of} as {:?}; {}",
        remote.role,
        context()
    );
    let fix = remote.fix.unwrap_or_else(|| panic!("node {at} has no position of node {of}"));
    let age = now.duration_since(fix.at);
    assert!(age < Duration::from_secs(2), "node {at}: last position of node {of} is {age:?} old");
    // Sent at most one interval before it arrived, plus the link's delay and a loss or two.
    let expected = track(of, fix.at.duration_since(origin));
    let lag_deg = (expected.latitude_deg - fix.position.latitude_deg).abs();
    assert!(lag_deg < DEG_PER_S * 1.5, "node {at} sees node {of} {lag_deg} deg behind");
    assert!((expected.longitude_deg - fix.position.longitude_deg).abs() < 1e-4);
    assert!((expected.altitude_m - fix.position.altitude_m).abs() < 1.0);
}

/// Checks that node `at` knows node `of` (player `id`) as an observer without any position,
/// and accepted none (`accepted` are its recorded indices).
#[track_caller]
pub(crate) fn assert_silent_observer(
    at: usize,
    tracker: &Tracker,
    of: usize,
    id: PlayerId,
    accepted: &Accepted,
) {
    let remote = remote(tracker, at, of, id);
    assert_eq!(remote.role, Some(Role::Observer), "node {at} sees node {of} as {:?}", remote.role);
    assert!(remote.fix.is_none(), "node {at} has a position of observer node {of}");
    assert!(!accepted.indices.contains_key(&id));
}
