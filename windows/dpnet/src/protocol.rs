//! [`DllProtocol`]: the runtime protocol behind every DirectPlay 8 object of the DLL. It only
//! drives a [`Session`]: each [`Command`] is one call of the session's API, tagged with the
//! API's operation handle, and each session event comes back as an [`Out`] carrying what the
//! callbacks need (names, data and flags of the name table, read from the session itself, so
//! the COM side never asks the network thread anything).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use dplay_dframe::{Cancelled, FirstFrame, Priority, SendOutcome, Stats, Tracked};
use dplay_runtime::{Protocol, SocketId};
use dplay_session::{
    CommandError, CompletionError, EndReason, Event, ProcessToken, SendFlags, Session, SessionConfig,
};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::enumeration::{ENUM_QUERY_COMMAND, EnumResponse, LEAD_BYTE};
use dplay_wire::dp8::session::ChatMessage;
use dplay_wire::dp8::session::{DestroyReason, NameTableEntry};
use dplay_wire::{WideString, Wire};
use uuid::Uuid;

use crate::com::HRESULT;
use crate::dpn;
use crate::sends::CancelSends;

/// Who a send goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// Every player (`DPNID_ALL_PLAYERS_GROUP`).
    All,
    /// One player, or a group.
    Id(Dpnid),
}

/// What a COM method asks of the session; `handle` is the operation's `DPNHANDLE`.
#[derive(Debug)]
pub(crate) enum Command {
    Host,
    Join {
        host: SocketAddr,
        instance: Option<Uuid>,
    },
    EnumHosts {
        target: SocketAddr,
        application: Option<Uuid>,
    },
    StopEnum,
    Send {
        handle: u32,
        to: Target,
        data: Vec<u8>,
        flags: SendFlags,
        on_process: bool,
        priority: Priority,
        /// SendTo's `dwTimeOut` (`None`: 0, no limit).
        timeout: Option<Duration>,
    },
    /// The game's handler returned from the RECEIVE of a message whose sender asked for
    /// DPNSEND_COMPLETEONPROCESS: its DN_PROCESS_COMPLETION goes now.
    Processed(ProcessToken),
    /// CancelAsyncOperation of sends, answered at once on the network thread.
    CancelSends {
        which: CancelSends,
        reply: Sender<HRESULT>,
    },
    /// GetConnectionInfo and GetSendQueueInfo: the link with a player, answered at once on
    /// the network thread (never through the handler's dispatcher, so a handler may ask).
    Link {
        dpnid: Dpnid,
        reply: Sender<Option<LinkInfo>>,
    },
    SetInfo {
        handle: u32,
        name: Option<String>,
        data: Option<Vec<u8>>,
    },
    SetGroupInfo {
        handle: u32,
        group: Dpnid,
        name: Option<String>,
        data: Option<Vec<u8>>,
    },
    CreateGroup {
        handle: u32,
        name: String,
        data: Vec<u8>,
    },
    DestroyGroup {
        handle: u32,
        group: Dpnid,
    },
    AddToGroup {
        handle: u32,
        group: Dpnid,
        player: Dpnid,
    },
    RemoveFromGroup {
        handle: u32,
        group: Dpnid,
        player: Dpnid,
    },
    /// DestroyPeer / DestroyClient, with the data the player is told.
    RemovePlayer(Dpnid, Vec<u8>),
    /// The application's answer to a [`Out::JoinRequest`]: reply data, or a refusal with it.
    AnswerJoin {
        from: SocketAddr,
        accept: bool,
        reply: Vec<u8>,
    },
    /// The application's answer to an [`Out::EnumQuery`]: its reply data.
    AnswerEnum {
        from: SocketAddr,
        enum_payload: u16,
        reply: Vec<u8>,
    },
    /// SetApplicationDesc, answered at once on the network thread.
    SetDesc {
        max_players: u32,
        password: Option<String>,
        reserved: Vec<u8>,
        reply: Sender<HRESULT>,
    },
    Leave,
    Terminate(Vec<u8>),
}

/// One row of the name table, with what GetPeerInfo and the callbacks need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) dpnid: Dpnid,
    pub(crate) name: String,
    pub(crate) data: Vec<u8>,
    pub(crate) is_host: bool,
    pub(crate) is_local: bool,
    /// Where its datagrams come from, when we have a connection with it.
    pub(crate) addr: Option<SocketAddr>,
}

/// A group of the name table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GroupRow {
    pub(crate) dpnid: Dpnid,
    /// `dpnidOwner` of its name-table entry (MC-DPL8CS 2.2.1.5): who created it.
    pub(crate) owner: Dpnid,
    pub(crate) name: String,
    pub(crate) data: Vec<u8>,
    pub(crate) members: Vec<Dpnid>,
}

/// What the session tells the COM side.
#[derive(Debug)]
pub(crate) enum Out {
    Found {
        from: SocketAddr,
        response: Box<EnumResponse>,
        round_trip_ms: u32,
    },
    EnumDone,
    Joined {
        local: Dpnid,
        host: Dpnid,
        members: Vec<Member>,
        groups: Vec<GroupRow>,
        flags: u32,
        reply: Vec<u8>,
        /// The session's `ApplicationReservedData`.
        reserved: Vec<u8>,
    },
    JoinRequest {
        from: SocketAddr,
        connect_data: Vec<u8>,
    },
    JoinAborted(SocketAddr),
    /// The session refused Host (our own description is over a limit).
    HostFailed(HRESULT),
    /// An EnumQuery for our session, for DPN_MSGID_ENUM_HOSTS_QUERY.
    EnumQuery {
        from: SocketAddr,
        enum_payload: u16,
        data: Vec<u8>,
        /// `dwMaxResponseDataSize`.
        room: usize,
    },
    PlayerAdded(Member),
    PlayerRemoved {
        dpnid: Dpnid,
        reason: u32,
    },
    Received {
        from: Dpnid,
        data: Vec<u8>,
        reliable: bool,
        /// Its sender waits for [`Command::Processed`] (DPNSEND_COMPLETEONPROCESS).
        process_token: Option<ProcessToken>,
    },
    HostMigrated(Dpnid),
    GroupCreated(GroupRow),
    GroupDestroyed(Dpnid),
    MemberAdded {
        group: Dpnid,
        player: Dpnid,
    },
    MemberRemoved {
        group: Dpnid,
        player: Dpnid,
    },
    InfoUpdated {
        dpnid: Dpnid,
        group: bool,
        name: Option<String>,
        data: Option<Vec<u8>>,
    },
    OpDone {
        handle: u32,
        result: HRESULT,
    },
    /// A tracked send is done (every copy of it), with how its first frame went.
    SendDone {
        handle: u32,
        result: HRESULT,
        first_frame: Option<FirstFrame>,
    },
    Ended {
        reason: EndReason,
        reply: Vec<u8>,
        /// The host's DN_TERMINATE_SESSION data (DestroyPeer's or TerminateSession's).
        terminate_data: Vec<u8>,
    },
}

/// What GetConnectionInfo and GetSendQueueInfo read of the link with one player.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinkInfo {
    /// The transport's counters.
    pub(crate) stats: Stats,
    /// Application messages queued and their bytes, by [`Priority::index`].
    pub(crate) queued: [(usize, usize); 3],
    /// Bytes sent per second since the previous query for this player (the first: 0).
    pub(crate) throughput: u32,
    /// The highest of those.
    pub(crate) peak: u32,
}

/// At most [`EnumQueryCap::PER_SECOND`] EnumQuery messages a second reach the application's
/// handler (DPN_MSGID_ENUM_HOSTS_QUERY, one dispatcher call each); the others go unanswered,
/// so a flood of queries (spoofed sources included) never queues without bound nor draws
/// more answers than that.
#[derive(Debug, Default)]
struct EnumQueryCap {
    since: Option<Instant>,
    count: u32,
    dropped: u64,
}

impl EnumQueryCap {
    const PER_SECOND: u32 = 100;

    /// True when one more query may go to the application now.
    fn admit(&mut self, now: Instant) -> bool {
        if self.since.is_none_or(|t| now.saturating_duration_since(t) >= Duration::from_secs(1)) {
            if self.dropped > 0 {
                tracing::info!(dropped = self.dropped, "enumeration queries over the cap went unanswered");
            }
            *self = Self { since: Some(now), count: 0, dropped: 0 };
        }
        self.count += 1;
        if self.count > Self::PER_SECOND {
            self.dropped += 1;
        }
        self.count <= Self::PER_SECOND
    }
}

/// Where a player's throughput was last measured.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Instant,
    bytes: u64,
    peak: u32,
}

/// A [`Session`] as the runtime's protocol, for one COM object.
#[derive(Debug)]
pub(crate) struct DllProtocol {
    session: Session,
    out: VecDeque<Out>,
    /// Session contexts of operations that wait for an answer, with their handles.
    waiting: Vec<(u32, u32)>,
    /// Tracked sends by handle: the copies still under way, the result so far and the first
    /// acknowledged copy's first frame.
    sends: HashMap<u32, (usize, HRESULT, Option<FirstFrame>)>,
    /// DPNSEND_COMPLETEONPROCESS sends by handle, with their session context: tracked by the
    /// transport (so one not yet on the wire can be cancelled or time out) and completed by
    /// the receiver's DN_PROCESS_COMPLETION.
    on_process: HashMap<u32, u32>,
    /// Throughput samples by player.
    samples: HashMap<Dpnid, Sample>,
    /// The EnumQuery messages handed to the application this second.
    enum_queries: EnumQueryCap,
    enum_started: Option<Instant>,
    /// Joined was reported: before it, the players a joiner learns come in its snapshot.
    joined: bool,
    ended: bool,
}

impl DllProtocol {
    pub(crate) fn new(config: SessionConfig, now: Instant) -> Self {
        Self {
            session: Session::new(config, now),
            out: VecDeque::new(),
            waiting: Vec::new(),
            sends: HashMap::new(),
            on_process: HashMap::new(),
            samples: HashMap::new(),
            enum_queries: EnumQueryCap::default(),
            enum_started: None,
            joined: false,
            ended: false,
        }
    }

    fn member(&self, e: &NameTableEntry) -> Member {
        let s = &self.session;
        Member {
            dpnid: e.dpnid,
            name: text(&e.name),
            data: e.data.0.clone(),
            is_host: e.dpnid == s.host_dpnid(),
            is_local: e.dpnid == s.local_dpnid(),
            addr: s.player_addresses().into_iter().find(|(d, _)| *d == e.dpnid).map(|(_, a)| a),
        }
    }

    fn group_row(&self, dpnid: Dpnid) -> Option<GroupRow> {
        let t = self.session.name_table();
        let g = t.group(dpnid)?;
        Some(GroupRow {
            dpnid,
            owner: g.dpnid_owner,
            name: text(&g.name),
            data: g.data.0.clone(),
            members: t.group_members(dpnid).collect(),
        })
    }

    fn drain(&mut self, now: Instant) {
        while let Some(event) = self.session.poll_event() {
            let out = match event {
                Event::HostFound { from, response } => {
                    let since = self.enum_started.map_or(0, |t| now.duration_since(t).as_millis());
                    let retry = self.session.config().enum_retry().as_millis().max(1);
                    // The answer belongs to the last query, sent at a multiple of the interval.
                    let round_trip_ms = u32::try_from(since % retry).unwrap_or(u32::MAX);
                    Out::Found { from, response, round_trip_ms }
                }
                Event::Joined { local, host, flags } => {
                    self.joined = true;
                    let t = self.session.name_table();
                    let members = t.players().map(|e| self.member(e)).collect();
                    let ids: Vec<Dpnid> = t.groups().map(|g| g.dpnid).collect();
                    let groups = ids.into_iter().filter_map(|g| self.group_row(g)).collect();
                    let reply = self.session.connect_reply().to_vec();
                    let reserved = self.session.application_reserved_data().to_vec();
                    Out::Joined { local, host, members, groups, flags: flags.bits(), reply, reserved }
                }
                Event::PlayerAdded { .. } if !self.joined => continue,
                Event::PlayerAdded { dpnid, .. } => match self.session.name_table().get(dpnid) {
                    Some(e) => Out::PlayerAdded(self.member(e)),
                    None => continue,
                },
                Event::PlayerRemoved { dpnid, reason } => {
                    Out::PlayerRemoved { dpnid, reason: destroy_reason(reason) }
                }
                Event::HostMigrated { new_host } => Out::HostMigrated(new_host),
                Event::Message { from, data, reliable, process_token, .. } => {
                    Out::Received { from, data, reliable, process_token }
                }
                // DXDiag's chat message is application data to a game: its bytes, as sent
                // (MS-DPDX 3.1.5.7; its NUL padding is written back as it came).
                Event::Chat { from, text } => match ChatMessage::new(&text).to_vec() {
                    Ok(data) => Out::Received { from, data, reliable: false, process_token: None },
                    Err(_) => continue,
                },
                Event::NameTable(change) => match table_change(self, change) {
                    Some(o) => o,
                    None => continue,
                },
                Event::Completed { context, result } => {
                    let Some(i) = self.waiting.iter().position(|(c, _)| *c == context) else { continue };
                    let (_, handle) = self.waiting.swap_remove(i);
                    self.on_process.remove(&handle);
                    let result = match result {
                        Ok(()) => dpn::DPN_OK,
                        Err(CompletionError::ConnectionLost) | Err(_) => dpn::DPNERR_CONNECTIONLOST,
                    };
                    Out::OpDone { handle, result }
                }
                Event::SessionEnded { reason } => {
                    self.ended = true;
                    let s = &self.session;
                    let (reply, terminate_data) = (s.connect_reply().to_vec(), s.terminate_data().to_vec());
                    Out::Ended { reason, reply, terminate_data }
                }
                Event::SendDone { id, outcome, first_frame } => {
                    match self.send_done(id, outcome, first_frame) {
                        Some(o) => o,
                        None => continue,
                    }
                }
                Event::JoinRequest { from, connect_data, .. } => Out::JoinRequest { from, connect_data },
                Event::JoinAborted { from } => Out::JoinAborted(from),
                Event::EnumQuery { from, enum_payload, data, room } => {
                    if !self.enum_queries.admit(now) {
                        continue;
                    }
                    Out::EnumQuery { from, enum_payload, data, room }
                }
                _ => continue,
            };
            self.out.push_back(out);
        }
        if self.enum_started.is_some() && !self.session.is_enumerating() {
            self.enum_started = None;
            self.out.push_back(Out::EnumDone);
        }
    }

    /// Runs one command; its failure, if any, as the HRESULT of the operation's handle.
    fn apply(&mut self, now: Instant, command: Command) {
        let s = &mut self.session;
        let local = s.local_dpnid();
        let (handle, result): (u32, Result<Option<u32>, CommandError>) = match command {
            Command::Host => {
                if let Err(e) = s.host(now) {
                    self.out.push_back(Out::HostFailed(command_error(e)));
                }
                return;
            }
            Command::Join { host, instance } => (0, s.join(now, host, instance).map(|()| None)),
            Command::EnumHosts { target, application } => {
                self.enum_started = Some(now);
                (0, s.enum_hosts(now, target, application).map(|()| None))
            }
            Command::StopEnum => {
                s.stop_enum();
                (0, Ok(None))
            }
            Command::Send { handle, to, data, flags, on_process, priority, timeout } => {
                let looped = !flags.no_loopback && matches!(to, Target::All) || to == Target::Id(local);
                let track = Tracked { id: u64::from(handle), priority, expires: timeout.map(|t| now + t) };
                // Done when the receiver's DN_PROCESS_COMPLETION comes (`waits`), when each copy
                // the transport took is (SendDone), or now when there is none.
                let (mut copies, mut waits) = (0, false);
                let sent = match to {
                    Target::All => s.send_all_tracked(now, &data, flags, track).map(|n| copies = n),
                    Target::Id(id) if id == local => Ok(()),
                    Target::Id(id) if s.name_table().group(id).is_some() => {
                        s.send_to_group_tracked(now, id, &data, flags, track).map(|n| copies = n)
                    }
                    Target::Id(id) if on_process => {
                        s.send_with_completion_tracked(now, id, &data, track).map(|c| {
                            waits = true;
                            self.waiting.push((c, handle));
                            self.on_process.insert(handle, c);
                        })
                    }
                    Target::Id(id) => s.send_to_tracked(now, id, &data, flags, track).map(|()| copies = 1),
                };
                if looped && sent.is_ok() {
                    // Our own handler's RECEIVE is dispatched before the OpDone that follows,
                    // so a DPNSEND_COMPLETEONPROCESS send to ourselves completes after it.
                    let reliable = flags.reliable;
                    self.out.push_back(Out::Received { from: local, data, reliable, process_token: None });
                }
                if copies > 0 || waits {
                    if copies > 0 {
                        self.sends.insert(handle, (copies, dpn::DPN_OK, None));
                    }
                    return;
                }
                (handle, sent.map(|()| None))
            }
            Command::Processed(token) => {
                s.processed(now, token);
                return;
            }
            Command::CancelSends { which, reply } => {
                let _ = reply.send(self.cancel_sends(now, which));
                return;
            }
            Command::Link { dpnid, reply } => {
                let _ = reply.send(self.link_info(now, dpnid));
                return;
            }
            Command::SetInfo { handle, name, data } => {
                (handle, s.set_info(now, local, name.as_deref(), data.as_deref()).map(Some))
            }
            Command::SetGroupInfo { handle, group, name, data } => {
                (handle, s.set_info(now, group, name.as_deref(), data.as_deref()).map(Some))
            }
            Command::CreateGroup { handle, name, data } => {
                (handle, s.create_group(now, &name, &data, false).map(Some))
            }
            Command::DestroyGroup { handle, group } => (handle, s.destroy_group(now, group).map(Some)),
            Command::AddToGroup { handle, group, player } => {
                (handle, s.add_to_group(now, group, player).map(Some))
            }
            Command::RemoveFromGroup { handle, group, player } => {
                (handle, s.remove_from_group(now, group, player).map(Some))
            }
            Command::RemovePlayer(dpnid, data) => {
                (0, s.remove_player_with_data(now, dpnid, &data).map(|()| None))
            }
            Command::AnswerJoin { from, accept, reply } => {
                let code = dplay_wire::dp8::session::ResultCode::DPNERR_HOSTREJECTEDCONNECTION;
                let answer = if accept { Ok(reply) } else { Err((code, reply)) };
                (0, s.answer_join(now, from, answer).map(|()| None))
            }
            Command::AnswerEnum { from, enum_payload, reply } => {
                s.answer_enum(from, enum_payload, &reply);
                (0, Ok(None))
            }
            Command::SetDesc { max_players, password, reserved, reply } => {
                // The reserved data first: the one a game may make too large.
                let set = s.set_application_reserved_data(&reserved).and_then(|()| s.set_password(password));
                let result = set.and_then(|()| s.set_max_players(max_players));
                let _ = reply.send(result.map_or_else(command_error, |()| dpn::DPN_OK));
                return;
            }
            Command::Leave => {
                s.leave(now);
                (0, Ok(None))
            }
            Command::Terminate(data) => (0, s.terminate_session(now, &data).map(|()| None)),
        };
        match result {
            // Waits for the session's Completed event (a request to the host, a send with
            // completion); on the host, a group operation is done at once.
            Ok(Some(context)) if handle != 0 => self.waiting.push((context, handle)),
            Ok(_) if handle != 0 => self.out.push_back(Out::OpDone { handle, result: dpn::DPN_OK }),
            Ok(_) => {}
            Err(e) if handle != 0 => self.out.push_back(Out::OpDone { handle, result: command_error(e) }),
            Err(_) => {}
        }
    }
}

impl DllProtocol {
    /// Cancels the sends `which` names in the transport: those not started complete with
    /// DPNERR_USERCANCEL (through [`DllProtocol::send_done`]); the answer is
    /// [`crate::sends::cancel_result`]. A DPNSEND_COMPLETEONPROCESS send is cancelled the
    /// same way while none of it is on the wire; once sent, it waits for the receiver's
    /// DN_PROCESS_COMPLETION and answers DPNERR_CANNOTCANCEL.
    fn cancel_sends(&mut self, now: Instant, which: CancelSends) -> HRESULT {
        let s = &mut self.session;
        let tracked = |h: &u32| self.sends.contains_key(h) || self.on_process.contains_key(h);
        let done = match which {
            CancelSends::One(handle) if !tracked(&handle) => return dpn::DPNERR_CANNOTCANCEL,
            CancelSends::One(handle) => s.cancel_send(now, u64::from(handle)),
            CancelSends::All => {
                let handles: Vec<u32> = self.sends.keys().chain(self.on_process.keys()).copied().collect();
                let all = handles.into_iter().map(|h| s.cancel_send(now, u64::from(h)));
                all.fold(Cancelled::default(), |a, b| a + b)
            }
            CancelSends::To(dpnid, priority) => match s.cancel_sends_to(now, dpnid, priority) {
                Ok(done) => done,
                Err(e) => return command_error(e),
            },
        };
        crate::sends::cancel_result(done)
    }

    /// One copy of a tracked send is done: the send's OpDone once every copy is, with the
    /// first failure (DPNERR_TIMEDOUT unsent at its deadline, DPNERR_USERCANCEL cancelled
    /// unsent, DPNERR_CONNECTIONLOST when the link ended first) or DPN_OK.
    fn send_done(&mut self, id: u64, outcome: SendOutcome, first_frame: Option<FirstFrame>) -> Option<Out> {
        let handle = u32::try_from(id).ok()?;
        let this = match outcome {
            SendOutcome::Acknowledged | SendOutcome::Sent => dpn::DPN_OK,
            SendOutcome::TimedOut => dpn::DPNERR_TIMEDOUT,
            SendOutcome::Cancelled => dpn::DPNERR_USERCANCEL,
            _ => dpn::DPNERR_CONNECTIONLOST,
        };
        if let Some(&context) = self.on_process.get(&handle) {
            return self.process_send_done(handle, context, this);
        }
        let (left, result, first) = self.sends.get_mut(&handle)?;
        *first = first.or(first_frame);
        if *result == dpn::DPN_OK {
            *result = this;
        }
        *left -= 1;
        if *left > 0 {
            return None;
        }
        let (_, result, first_frame) = self.sends.remove(&handle)?;
        Some(Out::SendDone { handle, result, first_frame })
    }

    /// The transport is done with a DPNSEND_COMPLETEONPROCESS send: sent, it waits on for
    /// DN_PROCESS_COMPLETION (or the session's failure when its connection ends); cancelled
    /// or timed out unsent, it completes now and the session forgets its context.
    fn process_send_done(&mut self, handle: u32, context: u32, result: HRESULT) -> Option<Out> {
        if result != dpn::DPNERR_USERCANCEL && result != dpn::DPNERR_TIMEDOUT {
            return None;
        }
        self.on_process.remove(&handle);
        self.waiting.retain(|(c, _)| *c != context);
        self.session.abandon_completion(context);
        Some(Out::SendDone { handle, result, first_frame: None })
    }

    /// The link with `dpnid`, when we have one; its throughput measured since the last query.
    fn link_info(&mut self, now: Instant, dpnid: Dpnid) -> Option<LinkInfo> {
        let addr = self.session.player_addresses().into_iter().find(|(d, _)| *d == dpnid)?.1;
        let ep = self.session.endpoint();
        let stats = ep.stats(addr)?;
        let queued = [Priority::Low, Priority::Normal, Priority::High]
            .map(|p| ep.send_queue(addr, Some(p)).unwrap_or_default());
        let sample = self.samples.entry(dpnid).or_insert(Sample { at: now, bytes: 0, peak: 0 });
        let elapsed = now.saturating_duration_since(sample.at).as_secs_f64();
        let sent = stats.bytes_sent.saturating_sub(sample.bytes);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // saturating casts
        let throughput = if elapsed > 0.0 { (sent as f64 / elapsed) as u32 } else { 0 };
        *sample = Sample { at: now, bytes: stats.bytes_sent, peak: sample.peak.max(throughput) };
        Some(LinkInfo { stats, queued, throughput, peak: sample.peak })
    }
}

/// The closest DPNERR for a refused command.
pub(crate) fn command_error(e: CommandError) -> HRESULT {
    match e {
        CommandError::WrongState => dpn::DPNERR_NOCONNECTION,
        CommandError::UnknownPlayer => dpn::DPNERR_INVALIDPLAYER,
        CommandError::InvalidGroup => dpn::DPNERR_INVALIDGROUP,
        CommandError::InvalidParam => dpn::DPNERR_INVALIDPARAM,
        CommandError::Transport(dplay_dframe::SendError::TooLarge) => dpn::DPNERR_SENDTOOLARGE,
        CommandError::Busy | CommandError::Transport(_) => dpn::DPNERR_GENERIC,
        _ => dpn::DPNERR_GENERIC,
    }
}

fn text(name: &Option<WideString>) -> String {
    name.as_ref().map(WideString::to_string_lossy).unwrap_or_default()
}

/// `dwReason` of DPN_MSGID_DESTROY_PLAYER: the wire's `dwDestroyReason` has the API's values
/// (MC-DPL8CS 2.2.2.2); an unknown one reads as NORMAL.
fn destroy_reason(r: DestroyReason) -> u32 {
    if r.name().is_some() { r.0 } else { dpn::DPNDESTROYPLAYERREASON_NORMAL }
}

fn table_change(p: &DllProtocol, change: dplay_session::TableChange) -> Option<Out> {
    use dplay_session::TableChange as T;
    Some(match change {
        T::GroupCreated { group, .. } => Out::GroupCreated(p.group_row(group)?),
        T::GroupDestroyed { group } => Out::GroupDestroyed(group),
        T::MemberAdded { group, player } => Out::MemberAdded { group, player },
        T::MemberRemoved { group, player } => Out::MemberRemoved { group, player },
        T::InfoUpdated { dpnid, group, name, data } => Out::InfoUpdated { dpnid, group, name, data },
        _ => return None,
    })
}

impl Protocol for DllProtocol {
    type Command = Command;
    type Event = Out;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.session.handle_datagram(now, from, data);
        self.drain(now);
    }

    /// The enumeration helper's socket (a host's second one, on 6073) passes on EnumQuery only
    /// (MC-DPLHP 2.2.1), as DPNSVR forwards it to the game: the session answers from its own
    /// socket, so the EnumResponse names the port to join. Everything else there is dropped.
    fn handle_udp(&mut self, now: Instant, socket: SocketId, from: SocketAddr, data: &[u8]) {
        if socket == SocketId::MAIN || data.get(..2) == Some(&[LEAD_BYTE, ENUM_QUERY_COMMAND]) {
            self.handle_datagram(now, from, data);
        }
    }

    fn handle_command(&mut self, now: Instant, command: Command) {
        self.apply(now, command);
        self.drain(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
        self.drain(now);
    }

    fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        self.session.poll_transmit_into(buf)
    }

    fn poll_event(&mut self) -> Option<Out> {
        self.out.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.session.poll_timeout()
    }

    fn is_finished(&self) -> bool {
        self.ended && self.session.endpoint().active_connection_count() == 0
    }
}
