//! Client tests, one or more per row of seed 004's packet table, named after the row (`row_*`).

use std::time::Instant;

use dplay_addon::packet::{ChangePlayerPlane, EngineType, Opaque, PositionLlapbh, ZString};
use dplay_addon::{
    Client, ClientConfig, ClientState, CommandError, Dialect, DisconnectReason, Endpoint, Event, Packet,
    PacketId, PlayerId, Position, PositionFormat, Role, Target, Velocity,
};

use crate::common::{at, events, sent, t0, wire};

const FS98: Dialect = Dialect::Fs98;
const ME: PlayerId = PlayerId(0x100);
const HOST: PlayerId = PlayerId(0x1);
const OTHER: PlayerId = PlayerId(0x200);

fn plane() -> ChangePlayerPlane {
    ChangePlayerPlane {
        engine_type: EngineType::ENGINE_TYPE_JET,
        aircraft_name: ZString::new(b"Learjet 45").unwrap(),
    }
}

fn here() -> Position {
    Position { latitude_deg: 47.5, longitude_deg: -122.3, altitude_m: 100.5, ..Position::default() }
}

fn signal(id: PacketId) -> Vec<u8> {
    wire(FS98, &Packet::signal(id))
}

/// Sent packets, parsed (FS98).
fn out(c: &mut Client) -> Vec<(Target, bool, Packet)> {
    sent(c, FS98)
}

/// A client started at `now` that has sent its join request.
fn joining(role: Role, now: Instant) -> Client {
    let mut c = Client::new(ClientConfig::new(role));
    c.player_joined(now, HOST);
    c.start(now, ME).unwrap();
    c
}

/// A client confirmed as `role`, its outputs drained.
fn joined(role: Role, now: Instant) -> Client {
    let mut c = joining(role, now);
    let confirm = match role {
        Role::Player => Packet::ChangeToPlayer { player_id: ME.0 },
        Role::Observer => Packet::ChangeToObserver { player_id: ME.0 },
    };
    c.handle_message(now, HOST, &wire(FS98, &confirm));
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: HOST.0 }));
    out(&mut c);
    events(&mut c);
    c
}

#[track_caller]
fn assert_silent(c: &mut Client) {
    assert_eq!(out(c), vec![], "nothing should be sent");
    assert_eq!(events(c), vec![], "no event expected");
}

#[test]
fn row_add_player_request_sent_to_all_guaranteed() {
    let now = t0();
    let mut c = joining(Role::Player, now);
    assert_eq!(out(&mut c), vec![(Target::All, true, Packet::signal(PacketId::ADD_PLAYER_REQUEST))]);
    assert_eq!(c.state(), ClientState::Joining { role: Role::Player });
    assert_eq!(c.poll_timeout(), Some(at(now, 30.0)));
}

#[test]
fn row_add_observer_request_sent_to_all_guaranteed() {
    let mut c = joining(Role::Observer, t0());
    assert_eq!(out(&mut c), vec![(Target::All, true, Packet::signal(PacketId::ADD_OBSERVER_REQUEST))]);
    assert_eq!(c.start(t0(), ME), Err(CommandError::AlreadyStarted));
}

#[test]
fn row_add_player_and_observer_request_ignored_when_received() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    for id in [PacketId::ADD_PLAYER_REQUEST, PacketId::ADD_OBSERVER_REQUEST] {
        c.handle_message(now, OTHER, &signal(id));
    }
    assert_silent(&mut c);
    assert_eq!(c.stats().ignored, 2);
}

#[test]
fn row_change_to_player_with_own_id_joins_and_starts_positions() {
    let now = t0();
    let mut c = joining(Role::Player, now);
    c.set_position(now, here(), None);
    out(&mut c);
    c.handle_message(at(now, 1.0), HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    assert_eq!(c.state(), ClientState::Joined { role: Role::Player });
    assert_eq!(events(&mut c), vec![Event::Joined { role: Role::Player }]);
    // The host's type is still unknown to us: it is queried (row QUERY_PLAYER_TYPE).
    assert_eq!(out(&mut c), vec![(Target::One(HOST), true, Packet::signal(PacketId::QUERY_PLAYER_TYPE))]);
    // "At this point, the add-on must send location update information."
    assert_eq!(c.poll_timeout(), Some(at(now, 1.0)));
    c.handle_timeout(at(now, 1.0));
    let sent = out(&mut c);
    assert!(matches!(sent.as_slice(), [(Target::All, false, Packet::PositionVelocity(_))]), "{sent:?}");
}

#[test]
fn row_change_to_player_other_id_records_a_player() {
    let now = t0();
    let mut c = joined(Role::Observer, now);
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: OTHER.0 }));
    assert_eq!(events(&mut c), vec![Event::PlayerType { id: OTHER, role: Role::Player }]);
    assert_eq!(c.tracker().get(OTHER).unwrap().role, Some(Role::Player));
}

#[test]
fn row_change_to_observer_with_own_id_joins_silently() {
    let now = t0();
    let mut c = joining(Role::Observer, now);
    out(&mut c);
    c.set_position(now, here(), None);
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToObserver { player_id: ME.0 }));
    assert_eq!(events(&mut c), vec![Event::Joined { role: Role::Observer }]);
    out(&mut c);
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: HOST.0 }));
    // "The add-on doesn't send location update information."
    c.handle_timeout(at(now, 5.0));
    assert_eq!(out(&mut c), vec![]);
    assert_eq!(c.poll_timeout(), Some(at(now, 30.0)), "only the query timer, which then stops");
    c.handle_timeout(at(now, 30.0));
    assert_eq!(out(&mut c), vec![]);
    assert_eq!(c.poll_timeout(), None);
    assert_eq!(c.send_chat(now, ZString::new(b"hi").unwrap()), Err(CommandError::NotAPlayer));
}

#[test]
fn row_change_to_observer_other_id_records_an_observer() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToObserver { player_id: OTHER.0 }));
    assert_eq!(c.tracker().get(OTHER).unwrap().role, Some(Role::Observer));
}

#[test]
fn row_change_to_wrong_role_does_not_confirm() {
    let now = t0();
    let mut c = joining(Role::Observer, now);
    out(&mut c);
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    assert_eq!(c.state(), ClientState::Joining { role: Role::Observer });
    assert_silent(&mut c);
}

#[test]
fn row_add_player_refused_tells_user_and_leaves() {
    let now = t0();
    let mut c = joining(Role::Player, now);
    out(&mut c);
    c.handle_message(now, HOST, &signal(PacketId::ADD_PLAYER_REFUSED));
    assert_eq!(
        events(&mut c),
        vec![Event::Refused { role: Role::Player }, Event::Disconnect(DisconnectReason::Refused)]
    );
    assert_eq!(c.state(), ClientState::Closed);
    assert_eq!(c.poll_timeout(), None);
    c.handle_timeout(at(now, 60.0));
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    assert_silent(&mut c);
}

#[test]
fn row_add_observer_refused_tells_user_and_leaves() {
    let now = t0();
    let mut c = joining(Role::Observer, now);
    out(&mut c);
    c.handle_message(now, HOST, &signal(PacketId::ADD_PLAYER_REFUSED));
    assert_silent(&mut c);
    c.handle_message(now, HOST, &signal(PacketId::ADD_OBSERVER_REFUSED));
    assert_eq!(
        events(&mut c),
        vec![Event::Refused { role: Role::Observer }, Event::Disconnect(DisconnectReason::Refused)]
    );
}

#[test]
fn row_add_player_refused_after_joining_is_ignored() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.handle_message(now, HOST, &signal(PacketId::ADD_PLAYER_REFUSED));
    assert_silent(&mut c);
    assert_eq!(c.state(), ClientState::Joined { role: Role::Player });
}

#[test]
fn row_query_player_type_unanswered_before_confirmation() {
    let now = t0();
    let mut c = joining(Role::Player, now);
    out(&mut c);
    c.handle_message(now, HOST, &signal(PacketId::QUERY_PLAYER_TYPE));
    assert_silent(&mut c);
}

#[test]
fn row_query_player_type_answered_once_confirmed() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.handle_message(now, OTHER, &signal(PacketId::QUERY_PLAYER_TYPE));
    assert_eq!(out(&mut c), vec![(Target::One(OTHER), true, Packet::ChangeToPlayer { player_id: ME.0 })]);
    let mut c = joined(Role::Observer, now);
    c.handle_message(now, OTHER, &signal(PacketId::QUERY_PLAYER_TYPE));
    assert_eq!(out(&mut c), vec![(Target::One(OTHER), true, Packet::ChangeToObserver { player_id: ME.0 })]);
}

#[test]
fn row_query_player_type_sent_to_new_players_every_30_s_until_known() {
    let now = t0();
    let mut c = joined(Role::Observer, now);
    c.player_joined(now, OTHER);
    assert_eq!(out(&mut c), vec![(Target::One(OTHER), true, Packet::signal(PacketId::QUERY_PLAYER_TYPE))]);
    c.handle_timeout(at(now, 29.9));
    assert_eq!(out(&mut c), vec![]);
    c.handle_timeout(at(now, 30.0));
    assert_eq!(out(&mut c), vec![(Target::One(OTHER), true, Packet::signal(PacketId::QUERY_PLAYER_TYPE))]);
    c.handle_message(at(now, 31.0), OTHER, &wire(FS98, &Packet::ChangeToPlayer { player_id: OTHER.0 }));
    c.handle_timeout(at(now, 60.0));
    assert_eq!(out(&mut c), vec![]);
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn row_query_player_type_sent_to_unknown_players_on_joining() {
    let now = t0();
    let mut c = joining(Role::Player, now);
    c.player_joined(now, OTHER);
    out(&mut c);
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    let q = |id| (Target::One(id), true, Packet::signal(PacketId::QUERY_PLAYER_TYPE));
    assert_eq!(out(&mut c), vec![q(HOST), q(OTHER)]);
}

#[test]
fn row_retransmit_join_player_every_30_s_until_change_to_player() {
    let now = t0();
    let mut c = joining(Role::Player, now);
    out(&mut c);
    c.handle_timeout(at(now, 29.0));
    assert_eq!(out(&mut c), vec![]);
    let retransmit = (Target::All, true, Packet::signal(PacketId::RETRANSMIT_JOIN_PLAYER));
    c.handle_timeout(at(now, 30.0));
    assert_eq!(out(&mut c), vec![retransmit.clone()]);
    c.handle_timeout(at(now, 60.0));
    assert_eq!(out(&mut c), vec![retransmit]);
    c.handle_message(at(now, 61.0), HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    out(&mut c);
    c.handle_timeout(at(now, 90.0));
    assert_eq!(out(&mut c), vec![]);
}

#[test]
fn row_retransmit_join_observer_every_30_s_until_refused() {
    let now = t0();
    let mut c = joining(Role::Observer, now);
    out(&mut c);
    c.handle_timeout(at(now, 30.0));
    assert_eq!(out(&mut c), vec![(Target::All, true, Packet::signal(PacketId::RETRANSMIT_JOIN_OBSERVER))]);
    c.handle_message(at(now, 31.0), HOST, &signal(PacketId::ADD_OBSERVER_REFUSED));
    c.handle_timeout(at(now, 60.0));
    assert_eq!(out(&mut c), vec![]);
}

#[test]
fn row_retransmit_join_player_and_observer_ignored_when_received() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.handle_message(now, OTHER, &signal(PacketId::RETRANSMIT_JOIN_PLAYER));
    c.handle_message(now, OTHER, &signal(PacketId::RETRANSMIT_JOIN_OBSERVER));
    assert_silent(&mut c);
}

#[test]
fn row_request_observer_sent_to_all_by_a_player_only() {
    let now = t0();
    let mut c = joining(Role::Player, now);
    assert_eq!(c.request_observer(now), Err(CommandError::NotAPlayer));
    let mut c = joined(Role::Player, now);
    c.request_observer(now).unwrap();
    assert_eq!(out(&mut c), vec![(Target::All, true, Packet::signal(PacketId::REQUEST_OBSERVER))]);
    assert_eq!(c.state(), ClientState::ChangingToObserver);
    assert_eq!(c.request_observer(now), Err(CommandError::AlreadyObserver));
    let mut c = joined(Role::Observer, now);
    assert_eq!(c.request_observer(now), Err(CommandError::AlreadyObserver));
}

#[test]
fn row_request_observer_and_retransmit_go_observer_ignored_when_received() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.handle_message(now, OTHER, &signal(PacketId::REQUEST_OBSERVER));
    c.handle_message(now, OTHER, &signal(PacketId::RETRANSMIT_GO_OBSERVER));
    assert_silent(&mut c);
}

#[test]
fn row_retransmit_go_observer_every_30_s_until_answered() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.request_observer(now).unwrap();
    out(&mut c);
    let retransmit = (Target::All, true, Packet::signal(PacketId::RETRANSMIT_GO_OBSERVER));
    c.handle_timeout(at(now, 30.0));
    assert_eq!(out(&mut c), vec![retransmit.clone()]);
    c.handle_timeout(at(now, 60.0));
    assert_eq!(out(&mut c), vec![retransmit]);
    c.handle_message(at(now, 61.0), HOST, &signal(PacketId::OBSERVER_CHANGE_REFUSED));
    c.handle_timeout(at(now, 90.0));
    assert_eq!(out(&mut c), vec![]);
}

#[test]
fn row_observer_change_ok_makes_an_observer_for_good() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.set_position(now, here(), None);
    c.request_observer(now).unwrap();
    // Still a player until the answer: positions go on.
    c.handle_timeout(now);
    assert_eq!(out(&mut c).len(), 2);
    c.handle_message(now, HOST, &signal(PacketId::OBSERVER_CHANGE_OK));
    assert_eq!(events(&mut c), vec![Event::BecameObserver]);
    assert_eq!(c.state(), ClientState::Joined { role: Role::Observer });
    c.handle_timeout(at(now, 1.0));
    assert_eq!(out(&mut c), vec![]);
    // Never from observer back to player.
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    assert_eq!(c.state(), ClientState::Joined { role: Role::Observer });
    c.handle_message(now, OTHER, &signal(PacketId::QUERY_PLAYER_TYPE));
    assert_eq!(out(&mut c), vec![(Target::One(OTHER), true, Packet::ChangeToObserver { player_id: ME.0 })]);
}

#[test]
fn row_observer_change_ok_unrequested_is_ignored() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.handle_message(now, HOST, &signal(PacketId::OBSERVER_CHANGE_OK));
    assert_silent(&mut c);
    assert_eq!(c.state(), ClientState::Joined { role: Role::Player });
}

#[test]
fn row_observer_change_refused_keeps_a_player() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.request_observer(now).unwrap();
    out(&mut c);
    c.handle_message(now, HOST, &signal(PacketId::OBSERVER_CHANGE_REFUSED));
    assert_eq!(events(&mut c), vec![Event::ObserverChangeRefused]);
    assert_eq!(c.state(), ClientState::Joined { role: Role::Player });
}

#[test]
fn row_change_player_plane_received_updates_the_plane() {
    let now = t0();
    let mut c = joined(Role::Observer, now);
    c.handle_message(now, OTHER, &wire(FS98, &Packet::ChangePlayerPlane(plane())));
    assert_eq!(
        events(&mut c),
        vec![Event::PlaneChanged {
            id: OTHER,
            engine_type: EngineType::ENGINE_TYPE_JET,
            aircraft_name: plane().aircraft_name
        }]
    );
    assert_eq!(c.tracker().get(OTHER).unwrap().plane, Some(plane()));
}

#[test]
fn row_change_player_plane_sent_on_joining_and_on_change() {
    let now = t0();
    let mut config = ClientConfig::new(Role::Player);
    config.plane = Some(plane());
    let mut c = Client::new(config);
    c.start(now, ME).unwrap();
    out(&mut c);
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    assert_eq!(out(&mut c), vec![(Target::All, true, Packet::ChangePlayerPlane(plane()))]);
    let mut other = plane();
    other.engine_type = EngineType::ENGINE_TYPE_PISTON;
    c.change_plane(now, other.clone()).unwrap();
    assert_eq!(out(&mut c), vec![(Target::All, true, Packet::ChangePlayerPlane(other))]);
    let mut obs = joined(Role::Observer, now);
    assert_eq!(obs.change_plane(now, plane()), Err(CommandError::NotAPlayer));
}

#[test]
fn row_query_player_plane_answered_by_a_player() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.handle_message(now, OTHER, &signal(PacketId::QUERY_PLAYER_PLANE));
    assert_silent(&mut c);
    c.change_plane(now, plane()).unwrap();
    out(&mut c);
    c.handle_message(now, OTHER, &signal(PacketId::QUERY_PLAYER_PLANE));
    assert_eq!(out(&mut c), vec![(Target::One(OTHER), true, Packet::ChangePlayerPlane(plane()))]);
    let mut c = joined(Role::Observer, now);
    c.handle_message(now, OTHER, &signal(PacketId::QUERY_PLAYER_PLANE));
    assert_silent(&mut c);
}

#[test]
fn row_player_crash_received_is_processed() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.handle_message(now, OTHER, &signal(PacketId::PLAYER_CRASH));
    assert_eq!(events(&mut c), vec![Event::Crash { from: OTHER }]);
}

#[test]
fn row_player_crash_sent_only_to_a_collidable_player() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.player_joined(now, OTHER);
    assert_eq!(c.report_crash(now, OTHER), Err(CommandError::CannotCollide), "type unknown");
    c.handle_message(now, OTHER, &wire(FS98, &Packet::ChangeToObserver { player_id: OTHER.0 }));
    assert_eq!(c.report_crash(now, OTHER), Err(CommandError::CannotCollide), "an observer");
    c.report_crash(now, HOST).unwrap();
    let sent = out(&mut c);
    assert_eq!(sent.last(), Some(&(Target::One(HOST), true, Packet::signal(PacketId::PLAYER_CRASH))));
    // Within 10 s of a POSITION_LLAPBH the player must not be collided with.
    let p = PositionLlapbh {
        application_time: 0,
        packet_index: 1,
        reserved: 0,
        reduced_llapbh: here().to_reduced(),
        padding: Default::default(),
        unwritten: 0,
    };
    c.handle_message(now, HOST, &wire(FS98, &Packet::PositionLlapbh(p)));
    assert_eq!(c.report_crash(at(now, 9.0), HOST), Err(CommandError::CannotCollide));
    assert_eq!(c.report_crash(at(now, 10.0), HOST), Ok(()));
}

/// Every row that says "If an add-on receives this packet, it should be ignored", plus
/// REMOTE_PLANE_UNKNOWN and unknown ids.
#[test]
fn rows_ignored_when_received() {
    let now = t0();
    for role in [Role::Player, Role::Observer] {
        let mut c = joined(role, now);
        let ignored = [
            PacketId::PARAMS,
            PacketId::REMOTE_PLANE_UNKNOWN,
            PacketId::HOST_QUIT,
            PacketId::REQUEST_SITUATION,
            PacketId::SITUATION_DATA,
            PacketId::TEXTURE_REQUEST_LIST,
            PacketId::SYNC_INFORMATION,
            PacketId::INITIALIZE_AIRCRAFT_SEND,
            PacketId::AIRCRAFT_SEGMENT,
            PacketId::AIRCRAFT_CANCEL,
            PacketId::INITIALIZE_TEXTURE_SEND,
            PacketId::TEXTURE_SEGMENT,
            PacketId::TEXTURE_CANCEL,
            PacketId(0x7777),
        ];
        for id in ignored {
            let data = dplay_wire::Blob::new(&[1, 2, 3]);
            c.handle_message(now, HOST, &wire(FS98, &Packet::Opaque(Opaque { id: id.0, data })));
        }
        assert_silent(&mut c);
        assert_eq!(c.stats().ignored, 14);
        assert_eq!(c.state(), ClientState::Joined { role });
    }
}

#[test]
fn row_leave_session_closes_the_connection() {
    let now = t0();
    let mut c = joined(Role::Observer, now);
    c.handle_message(now, HOST, &signal(PacketId::LEAVE_SESSION));
    assert_eq!(events(&mut c), vec![Event::Disconnect(DisconnectReason::RemovedByHost)]);
    assert_eq!(c.state(), ClientState::Closed);
    assert_eq!(c.send_chat(now, ZString::default()), Err(CommandError::Closed));
}

#[test]
fn row_position_llapbh_sent_to_all_four_times_a_second() {
    let now = t0();
    let mut config = ClientConfig::new(Role::Player);
    config.position_format = PositionFormat::Llapbh;
    let mut c = Client::new(config);
    c.start(now, ME).unwrap();
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    out(&mut c);
    c.set_position(now, here(), None);
    let mut indexes = vec![];
    let mut t = now;
    while t < at(now, 1.0) {
        c.handle_timeout(t);
        for (to, guaranteed, p) in out(&mut c) {
            let Packet::PositionLlapbh(p) = p else { panic!("{p:?}") };
            assert_eq!((to, guaranteed), (Target::All, false));
            assert_eq!(p.reduced_llapbh, here().to_reduced());
            indexes.push(p.packet_index);
        }
        t = c.poll_timeout().unwrap();
    }
    assert_eq!(indexes, vec![0, 1, 2, 3]);
    assert_eq!(c.poll_timeout(), Some(at(now, 1.0)));
}

#[test]
fn row_position_llapbh_received_updates_tracking() {
    let now = t0();
    let mut c = joined(Role::Observer, now);
    let p = |i| {
        wire(
            FS98,
            &Packet::PositionLlapbh(PositionLlapbh {
                application_time: 9,
                packet_index: i,
                reserved: 0,
                reduced_llapbh: here().to_reduced(),
                padding: Default::default(),
                unwritten: 0,
            }),
        )
    };
    c.handle_message(now, OTHER, &p(3));
    assert_eq!(events(&mut c), vec![Event::PositionUpdated { id: OTHER }]);
    c.handle_message(now, OTHER, &p(2));
    c.handle_message(now, OTHER, &p(3));
    assert_eq!(events(&mut c), vec![], "out of order");
    assert_eq!(c.stats().stale_positions, 2);
    let fix = c.tracker().get(OTHER).unwrap().fix.unwrap();
    assert!((fix.position.latitude_deg - 47.5).abs() < 1e-6);
}

#[test]
fn row_position_velocity_sent_and_received() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    let v = Velocity { north_ft_s: 150.0, east_ft_s: -20.0, up_ft_s: 5.0, ground_ft_s: 151.3 };
    c.set_position(now, here(), Some(v));
    c.handle_timeout(now);
    let sent = out(&mut c);
    let [(Target::All, false, Packet::PositionVelocity(p))] = sent.as_slice() else { panic!("{sent:?}") };
    assert_eq!(Velocity::from_packet(Dialect::Fs98, p).north_ft_s, 150.0);
    // Another client tracks it and extrapolates.
    let mut o = joined(Role::Observer, now);
    o.handle_message(now, ME, &wire(FS98, &Packet::PositionVelocity(p.clone())));
    assert_eq!(events(&mut o), vec![Event::PositionUpdated { id: ME }]);
    let later = o.tracker().extrapolate(ME, at(now, 1.0)).unwrap();
    assert!(later.latitude_deg > 47.5 && later.longitude_deg < -122.3, "{later:?}");
}

#[test]
fn row_chat_text_sent_with_nul_and_received() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.send_chat(now, ZString::from_text("hello é")).unwrap();
    let sent = c.poll_outgoing().unwrap();
    assert_eq!((sent.to, sent.guaranteed), (Target::All, true));
    assert_eq!(sent.bytes.get(8..), Some(&b"hello \xE9\0"[..]));
    c.handle_message(now, OTHER, &sent.bytes);
    assert_eq!(events(&mut c), vec![Event::Chat { from: OTHER, text: ZString::new(b"hello \xE9").unwrap() }]);
}

#[test]
fn bad_input_is_counted_never_fatal() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    for bad in [&[][..], &[0x18, 0x10, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF], &[0x20, 0x10, 0, 0, 1, 0, 0, 0, b'x']] {
        c.handle_message(now, OTHER, bad);
    }
    assert_eq!(c.stats().malformed, 3);
    assert_silent(&mut c);
    assert_eq!(c.state(), ClientState::Joined { role: Role::Player });
}

#[test]
fn player_left_is_forgotten() {
    let now = t0();
    let mut c = joined(Role::Player, now);
    c.player_left(now, HOST);
    assert_eq!(events(&mut c), vec![Event::PlayerLeft { id: HOST }]);
    assert!(c.tracker().get(HOST).is_none());
    c.player_left(now, HOST);
    assert_eq!(events(&mut c), vec![]);
}

/// FS-MULTIPLAYER.md 3.1: FS2004 has no join handshake; the client flies at once, announcing its
/// plane, and speaks the FS2004 ids.
#[test]
fn fs2004_dialect_joins_at_once() {
    let now = t0();
    let mut config = ClientConfig::new(Role::Player);
    config.dialect = Dialect::Fs2004;
    config.plane = Some(plane());
    config.position_format = PositionFormat::Llapbh;
    let mut c = Client::new(config);
    c.set_position(now, here(), None);
    c.start(now, ME).unwrap();
    assert_eq!(events(&mut c), vec![Event::Joined { role: Role::Player }]);
    c.handle_timeout(now);
    let sent = sent(&mut c, Dialect::Fs2004);
    assert!(
        matches!(
            sent.as_slice(),
            [(_, true, Packet::ChangePlayerPlane(_)), (_, false, Packet::PositionLlapbh(_))]
        ),
        "{sent:?}"
    );
    assert_eq!(c.request_observer(now), Err(CommandError::NotInDialect));
    // 0x100D is POSITION_VELOCITY in FS2004.
    let v = Velocity::default().to_packet(Dialect::Fs98, 1, &here());
    c.handle_message(now, OTHER, &wire(Dialect::Fs2004, &Packet::PositionVelocity(v)));
    assert_eq!(events(&mut c), vec![Event::PositionUpdated { id: OTHER }]);
    // FS98-only signals are unknown there and ignored.
    c.handle_message(now, OTHER, &signal(PacketId::LEAVE_SESSION));
    assert_eq!(c.state(), ClientState::Joined { role: Role::Player });
}

/// FS-MULTIPLAYER.md 3.6: the player info an FS2004 joiner sends carries its role and plane.
#[test]
fn fs2004_player_info_from_config() {
    use dplay_addon::packet::{PlayerInfo, PlayerInfoFlags};
    let mut config = ClientConfig::new(Role::Observer);
    config.plane = Some(plane());
    let info = config.player_info();
    assert_eq!(info, PlayerInfo { flags: PlayerInfoFlags::OBSERVER, aircraft: plane().aircraft_name });
    assert_eq!(PlayerInfo::parse(&info.to_bytes()), Ok(info));
}

#[test]
fn own_id_in_the_roster_is_not_queried() {
    let now = t0();
    let mut c = Client::new(ClientConfig::new(Role::Player));
    c.player_joined(now, ME);
    c.start(now, ME).unwrap();
    c.player_joined(now, ME);
    c.handle_message(now, HOST, &wire(FS98, &Packet::ChangeToPlayer { player_id: ME.0 }));
    assert_eq!(out(&mut c), vec![(Target::All, true, Packet::signal(PacketId::ADD_PLAYER_REQUEST))]);
    assert!(c.tracker().get(ME).is_none());
}

/// Any sequence of well-framed packets, roster changes and timeouts: no panic, and nothing is
/// sent once the client is closed (issue: bad input "ignored or reported, never a panic").
mod random {
    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Step {
        Message { from: u32, id: u32, data: Vec<u8> },
        Joined(u32),
        Left(u32),
        Wait(u16),
    }

    fn step() -> impl Strategy<Value = Step> {
        let from = prop_oneof![Just(HOST.0), Just(OTHER.0), Just(ME.0)];
        prop_oneof![
            4 => (from.clone(), 0x1000u32..0x1022, proptest::collection::vec(any::<u8>(), 0..50))
                .prop_map(|(from, id, data)| Step::Message { from, id, data }),
            1 => (from.clone(), any::<u32>()).prop_map(|(from, player_id)| Step::Message {
                from,
                id: 0x1003,
                data: (if player_id % 2 == 0 { ME.0 } else { player_id }).to_le_bytes().to_vec(),
            }),
            1 => from.clone().prop_map(Step::Joined),
            1 => from.prop_map(Step::Left),
            2 => any::<u16>().prop_map(Step::Wait),
        ]
    }

    proptest! {
        #[test]
        fn client_survives_anything(role in prop_oneof![Just(Role::Player), Just(Role::Observer)], steps in proptest::collection::vec(step(), 0..60)) {
            let mut now = t0();
            let mut c = joining(role, now);
            c.set_position(now, here(), None);
            for s in steps {
                match s {
                    Step::Message { from, id, data } => {
                        let mut b = id.to_le_bytes().to_vec();
                        b.extend_from_slice(&u32::try_from(data.len()).unwrap().to_le_bytes());
                        b.extend_from_slice(&data);
                        c.handle_message(now, PlayerId(from), &b);
                    }
                    Step::Joined(id) => c.player_joined(now, PlayerId(id)),
                    Step::Left(id) => c.player_left(now, PlayerId(id)),
                    Step::Wait(ms) => {
                        now += std::time::Duration::from_millis(u64::from(ms) * 10);
                        c.handle_timeout(now);
                    }
                }
                if c.state() == ClientState::Closed {
                    while c.poll_outgoing().is_some() {}
                    c.handle_timeout(now + std::time::Duration::from_secs(100));
                    prop_assert_eq!(c.poll_outgoing(), None);
                    prop_assert_eq!(c.poll_timeout(), None);
                }
                events(&mut c);
            }
        }
    }
}
