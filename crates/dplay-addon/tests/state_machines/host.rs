//! Host tests, named after the seed 004 rows they answer, and a client joining our host.

use std::time::Instant;

use dplay_addon::packet::{PositionLlapbh, ZString};
use dplay_addon::{
    Client, ClientConfig, ClientState, Dialect, DisconnectReason, Endpoint, Event, Host, HostConfig,
    HostPolicy, Outgoing, Packet, PacketId, PlayerId, Position, Role, Target,
};

use crate::common::{at, events, sent, t0, wire};

const FS98: Dialect = Dialect::Fs98;
const US: PlayerId = PlayerId(0x1);
const A: PlayerId = PlayerId(0x100);
const B: PlayerId = PlayerId(0x200);

/// A policy of at most `max_players` players that does or does not take observers.
fn policy(max_players: Option<usize>, allow_observers: bool) -> HostPolicy {
    let mut policy = HostPolicy::default();
    policy.max_players = max_players;
    policy.allow_observers = allow_observers;
    policy
}

fn host(policy: HostPolicy) -> Host {
    Host::new(HostConfig::new(Dialect::Fs98, Role::Player, policy), US)
}

fn out(h: &mut Host) -> Vec<(Target, bool, Packet)> {
    sent(h, FS98)
}

fn signal(id: PacketId) -> Vec<u8> {
    wire(FS98, &Packet::signal(id))
}

fn send(to: Target, p: Packet) -> (Target, bool, Packet) {
    (to, true, p)
}

/// A host that has seen `ids` join, queries drained.
fn with_players(policy: HostPolicy, now: Instant, ids: &[PlayerId]) -> Host {
    let mut h = host(policy);
    for id in ids {
        h.player_joined(now, *id);
    }
    out(&mut h);
    h
}

#[test]
fn row_add_player_request_answered_with_change_to_player() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A]);
    h.handle_message(now, A, &signal(PacketId::ADD_PLAYER_REQUEST));
    assert_eq!(out(&mut h), vec![send(Target::All, Packet::ChangeToPlayer { player_id: A.0 })]);
    assert_eq!(events(&mut h), vec![Event::Accepted { id: A, role: Role::Player }]);
    assert_eq!(h.tracker().get(A).unwrap().role, Some(Role::Player));
}

#[test]
fn row_add_player_refused_beyond_the_player_limit() {
    let now = t0();
    let mut h = with_players(policy(Some(1), true), now, &[A, B]);
    h.handle_message(now, A, &signal(PacketId::ADD_PLAYER_REQUEST));
    out(&mut h);
    h.handle_message(now, B, &signal(PacketId::ADD_PLAYER_REQUEST));
    assert_eq!(out(&mut h), vec![send(Target::One(B), Packet::signal(PacketId::ADD_PLAYER_REFUSED))]);
    // A retransmit gets the same answer (row RETRANSMIT_JOIN_PLAYER).
    h.handle_message(now, B, &signal(PacketId::RETRANSMIT_JOIN_PLAYER));
    assert_eq!(out(&mut h), vec![send(Target::One(B), Packet::signal(PacketId::ADD_PLAYER_REFUSED))]);
    // B may still come as an observer.
    h.handle_message(now, B, &signal(PacketId::ADD_OBSERVER_REQUEST));
    assert_eq!(out(&mut h), vec![send(Target::All, Packet::ChangeToObserver { player_id: B.0 })]);
}

#[test]
fn row_add_observer_request_by_policy() {
    let now = t0();
    let mut h = with_players(policy(None, false), now, &[A]);
    h.handle_message(now, A, &signal(PacketId::ADD_OBSERVER_REQUEST));
    assert_eq!(out(&mut h), vec![send(Target::One(A), Packet::signal(PacketId::ADD_OBSERVER_REFUSED))]);
    assert_eq!(events(&mut h), vec![Event::Denied { id: A, role: Role::Observer }]);
}

#[test]
fn row_retransmit_join_player_repeats_the_confirmation() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A]);
    h.handle_message(now, A, &signal(PacketId::RETRANSMIT_JOIN_PLAYER));
    assert_eq!(out(&mut h), vec![send(Target::All, Packet::ChangeToPlayer { player_id: A.0 })]);
    h.handle_message(now, A, &signal(PacketId::RETRANSMIT_JOIN_PLAYER));
    assert_eq!(out(&mut h), vec![send(Target::One(A), Packet::ChangeToPlayer { player_id: A.0 })]);
}

#[test]
fn row_retransmit_join_observer_repeats_the_confirmation() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A]);
    h.handle_message(now, A, &signal(PacketId::ADD_OBSERVER_REQUEST));
    out(&mut h);
    h.handle_message(now, A, &signal(PacketId::RETRANSMIT_JOIN_OBSERVER));
    assert_eq!(out(&mut h), vec![send(Target::One(A), Packet::ChangeToObserver { player_id: A.0 })]);
    // Never from observer back to player.
    h.handle_message(now, A, &signal(PacketId::ADD_PLAYER_REQUEST));
    assert_eq!(out(&mut h), vec![send(Target::One(A), Packet::signal(PacketId::ADD_PLAYER_REFUSED))]);
}

#[test]
fn row_query_player_type_sent_every_30_s_to_unknown_players() {
    let now = t0();
    let mut h = host(HostPolicy::default());
    h.player_joined(now, A);
    let query = send(Target::One(A), Packet::signal(PacketId::QUERY_PLAYER_TYPE));
    assert_eq!(out(&mut h), vec![query.clone()]);
    assert_eq!(h.poll_timeout(), Some(at(now, 30.0)));
    h.handle_timeout(at(now, 30.0));
    assert_eq!(out(&mut h), vec![query]);
    // FS or an add-on answers with its own CHANGE_TO_*; then the queries stop.
    h.handle_message(at(now, 31.0), A, &wire(FS98, &Packet::ChangeToPlayer { player_id: A.0 }));
    assert_eq!(events(&mut h), vec![Event::PlayerType { id: A, role: Role::Player }]);
    h.handle_timeout(at(now, 60.0));
    assert_eq!(out(&mut h), vec![]);
    assert_eq!(h.poll_timeout(), None);
}

#[test]
fn row_change_to_player_about_someone_else_is_not_believed() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A, B]);
    h.handle_message(now, A, &wire(FS98, &Packet::ChangeToObserver { player_id: B.0 }));
    assert_eq!(h.tracker().get(B).unwrap().role, None);
    assert_eq!(h.stats().ignored, 1);
}

#[test]
fn row_query_player_type_answered_with_our_type() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A]);
    h.handle_message(now, A, &signal(PacketId::QUERY_PLAYER_TYPE));
    assert_eq!(out(&mut h), vec![send(Target::One(A), Packet::ChangeToPlayer { player_id: US.0 })]);
}

#[test]
fn row_request_observer_answered_with_observer_change_ok() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A]);
    h.handle_message(now, A, &signal(PacketId::ADD_PLAYER_REQUEST));
    out(&mut h);
    h.handle_message(now, A, &signal(PacketId::REQUEST_OBSERVER));
    assert_eq!(
        out(&mut h),
        vec![
            send(Target::One(A), Packet::signal(PacketId::OBSERVER_CHANGE_OK)),
            send(Target::All, Packet::ChangeToObserver { player_id: A.0 }),
        ]
    );
    h.handle_message(now, A, &signal(PacketId::RETRANSMIT_GO_OBSERVER));
    assert_eq!(out(&mut h), vec![send(Target::One(A), Packet::signal(PacketId::OBSERVER_CHANGE_OK))]);
}

#[test]
fn row_observer_change_refused_by_policy() {
    let now = t0();
    let mut h = with_players(policy(None, false), now, &[A]);
    h.handle_message(now, A, &signal(PacketId::ADD_PLAYER_REQUEST));
    out(&mut h);
    h.handle_message(now, A, &signal(PacketId::RETRANSMIT_GO_OBSERVER));
    assert_eq!(out(&mut h), vec![send(Target::One(A), Packet::signal(PacketId::OBSERVER_CHANGE_REFUSED))]);
    // From a player of unknown type, the request makes no sense.
    h.player_joined(now, B);
    out(&mut h);
    h.handle_message(now, B, &signal(PacketId::REQUEST_OBSERVER));
    assert_eq!(out(&mut h), vec![]);
}

#[test]
fn row_leave_session_removes_a_player() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A]);
    h.remove_player(now, A);
    assert_eq!(out(&mut h), vec![send(Target::One(A), Packet::signal(PacketId::LEAVE_SESSION))]);
    h.player_left(now, A);
    assert_eq!(events(&mut h), vec![Event::PlayerLeft { id: A }]);
}

#[test]
fn row_host_quit_when_the_session_ends() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A]);
    h.end_session(now);
    assert_eq!(out(&mut h), vec![send(Target::All, Packet::signal(PacketId::HOST_QUIT))]);
    assert_eq!(events(&mut h), vec![Event::Disconnect(DisconnectReason::SessionEnded)]);
    h.end_session(now);
    h.handle_message(now, A, &signal(PacketId::ADD_PLAYER_REQUEST));
    assert_eq!(out(&mut h), vec![]);
    assert_eq!(h.poll_timeout(), None);
}

#[test]
fn host_tracks_positions_and_chat() {
    let now = t0();
    let mut h = with_players(HostPolicy::default(), now, &[A]);
    let p = PositionLlapbh {
        application_time: 0,
        packet_index: 1,
        reserved: 0,
        reduced_llapbh: Position::default().to_reduced(),
        padding: Default::default(),
        unwritten: 0,
    };
    h.handle_message(now, A, &wire(FS98, &Packet::PositionLlapbh(p.clone())));
    h.handle_message(now, A, &wire(FS98, &Packet::PositionLlapbh(p)));
    h.send_chat(now, ZString::new(b"welcome").unwrap());
    let chat = h.poll_outgoing().unwrap().bytes;
    h.handle_message(now, A, &chat);
    assert_eq!(
        events(&mut h),
        vec![
            Event::PositionUpdated { id: A },
            Event::Chat { from: A, text: ZString::new(b"welcome").unwrap() }
        ]
    );
    assert_eq!(h.stats().stale_positions, 1);
    h.handle_message(now, A, &[1, 2, 3]);
    assert_eq!(h.stats().malformed, 1);
}

/// Delivers every queued message between the endpoints (ids: the host is `US`) until quiet.
fn pump(now: Instant, h: &mut Host, clients: &mut [(PlayerId, &mut Client)]) {
    loop {
        let mut queue: Vec<(PlayerId, Outgoing)> =
            std::iter::from_fn(|| h.poll_outgoing()).map(|o| (US, o)).collect();
        for (id, c) in clients.iter_mut() {
            queue.extend(std::iter::from_fn(|| c.poll_outgoing()).map(|o| (*id, o)));
        }
        if queue.is_empty() {
            return;
        }
        for (from, o) in queue {
            if from != US && matches!(o.to, Target::All | Target::One(US)) {
                h.handle_message(now, from, &o.bytes);
            }
            for (id, c) in clients.iter_mut() {
                if *id != from && (o.to == Target::All || o.to == Target::One(*id)) {
                    c.handle_message(now, from, &o.bytes);
                }
            }
        }
    }
}

/// FS-MULTIPLAYER.md 1.5 steps 3-7 end to end: a player and an observer join our host (limit
/// one player, so a second player is refused), types settle, positions flow.
#[test]
fn fs_multiplayer_1_5_session_procedure_end_to_end() {
    let now = t0();
    let mut h = host(policy(Some(1), true));
    let mut a = Client::new(ClientConfig::new(Role::Player));
    let mut b = Client::new(ClientConfig::new(Role::Observer));
    let mut c = Client::new(ClientConfig::new(Role::Player));
    for (me, cl) in [(A, &mut a), (B, &mut b), (PlayerId(0x300), &mut c)] {
        cl.player_joined(now, US);
        for other in [A, B, PlayerId(0x300)] {
            if other != me {
                cl.player_joined(now, other);
            }
        }
        h.player_joined(now, me);
    }
    a.start(now, A).unwrap();
    a.set_position(now, Position { latitude_deg: 10.0, ..Position::default() }, None);
    b.start(now, B).unwrap();
    pump(now, &mut h, &mut [(A, &mut a), (B, &mut b), (PlayerId(0x300), &mut c)]);
    c.start(now, PlayerId(0x300)).unwrap();
    pump(now, &mut h, &mut [(A, &mut a), (B, &mut b), (PlayerId(0x300), &mut c)]);
    assert_eq!(a.state(), ClientState::Joined { role: Role::Player });
    assert_eq!(b.state(), ClientState::Joined { role: Role::Observer });
    assert_eq!(c.state(), ClientState::Closed);
    assert!(events(&mut c).contains(&Event::Refused { role: Role::Player }));
    assert_eq!(b.tracker().get(A).unwrap().role, Some(Role::Player));
    assert_eq!(a.tracker().get(B).unwrap().role, Some(Role::Observer));
    assert_eq!(a.tracker().get(US).unwrap().role, Some(Role::Player));
    a.handle_timeout(now);
    pump(now, &mut h, &mut [(A, &mut a), (B, &mut b)]);
    let fix = b.tracker().get(A).unwrap().fix.unwrap();
    assert!((fix.position.latitude_deg - 10.0).abs() < 1e-6);
    assert!(h.tracker().get(A).unwrap().fix.is_some());
}

proptest::proptest! {
    /// Any framed packets from any player: no panic, the player limit always holds, and nothing
    /// is sent after the session ended.
    #[test]
    fn host_survives_anything(
        msgs in proptest::collection::vec((0u32..4, 0x1000u32..0x1022, proptest::collection::vec(proptest::prelude::any::<u8>(), 0..8)), 0..80),
        end_at in 0usize..100,
    ) {
        let now = t0();
        let mut h = with_players(policy(Some(2), true), now, &[A, B]);
        for (i, (from, id, data)) in msgs.into_iter().enumerate() {
            if i == end_at {
                h.end_session(now);
                out(&mut h);
            }
            let mut b = id.to_le_bytes().to_vec();
            b.extend_from_slice(&u32::try_from(data.len()).unwrap().to_le_bytes());
            b.extend_from_slice(&data);
            h.handle_message(at(now, i as f64), PlayerId(0x100 * from), &b);
            h.handle_timeout(at(now, i as f64));
            let players = h.tracker().iter().filter(|(_, r)| r.role == Some(Role::Player)).count();
            proptest::prop_assert!(players <= 4, "at most the limit plus self-announced players");
            if i >= end_at {
                proptest::prop_assert_eq!(out(&mut h), vec![]);
            }
        }
    }
}

/// Issue 16 / FS-MULTIPLAYER.md 3.1, 3.6: an FS2004 host asks nothing of a joiner; the
/// joiner's PLAYER_INFO_STRUCT (swift's flags 6) makes it an accepted player with its title.
/// Removing it is the DirectPlay 8 host's job (no LEAVE_SESSION in FS2004), and ending the
/// session sends no HOST_QUIT.
#[test]
fn fs2004_host_takes_joiners_from_their_player_info() {
    use dplay_addon::packet::{PlayerInfo, PlayerInfoFlags};
    let now = t0();
    let mut h = Host::new(HostConfig::new(Dialect::Fs2004, Role::Observer, HostPolicy::default()), US);
    h.player_joined(now, A);
    assert!(sent(&mut h, Dialect::Fs2004).is_empty(), "no QUERY_PLAYER_TYPE in FS2004");
    let swift =
        PlayerInfo { flags: PlayerInfoFlags::from_bits_retain(6), aircraft: ZString::from_text("B738") };
    h.player_info(now, A, swift);
    let observer = PlayerInfo { flags: PlayerInfoFlags::OBSERVER, aircraft: ZString::default() };
    h.player_joined(now, B);
    h.player_info(now, B, observer);
    assert_eq!(
        events(&mut h),
        vec![Event::Accepted { id: A, role: Role::Player }, Event::Accepted { id: B, role: Role::Observer }]
    );
    assert_eq!(
        h.tracker().get(A).and_then(|r| r.info.as_ref()).map(|i| i.aircraft.to_text()),
        Some("B738".into())
    );
    // FS98's handshake packets mean other things in FS2004 (0x1001 unknown): ignored.
    h.handle_message(now, A, &wire(Dialect::Fs2004, &Packet::signal(PacketId::ADD_PLAYER_REQUEST)));
    assert!(sent(&mut h, Dialect::Fs2004).is_empty());
    h.remove_player(now, A);
    assert_eq!(events(&mut h), vec![Event::Remove { id: A }]);
    assert!(sent(&mut h, Dialect::Fs2004).is_empty());
    h.end_session(now);
    assert!(sent(&mut h, Dialect::Fs2004).is_empty(), "no HOST_QUIT in FS2004");
    assert_eq!(events(&mut h), vec![Event::Disconnect(DisconnectReason::SessionEnded)]);
}

/// Issue 16: a client whose session's host role migrated to it answers joins as the host did
/// (seed 004 rows ADD_OBSERVER_REQUEST, CHANGE_TO_OBSERVER), keeping its own role.
#[test]
fn a_client_that_became_host_answers_joins() {
    let now = t0();
    let config = ClientConfig::new(Role::Player);
    let mut c = Client::new(config);
    c.player_joined(now, A);
    c.start(now, US).unwrap();
    c.handle_message(now, A, &signal(PacketId::ADD_OBSERVER_REQUEST));
    sent(&mut c, FS98);
    assert!(!c.is_host());
    c.become_host(HostPolicy::default());
    c.player_joined(now, B);
    sent(&mut c, FS98);
    events(&mut c);
    c.handle_message(now, B, &signal(PacketId::ADD_OBSERVER_REQUEST));
    assert_eq!(sent(&mut c, FS98), vec![send(Target::All, Packet::ChangeToObserver { player_id: B.0 })]);
    assert_eq!(events(&mut c), vec![Event::Accepted { id: B, role: Role::Observer }]);
    assert_eq!(c.state(), ClientState::Joining { role: Role::Player });
    c.become_host(HostPolicy::default());
    assert!(events(&mut c).is_empty(), "once");
}
