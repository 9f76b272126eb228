//! [`Core`]: what a Peer, Client or Server object is behind its vtable. It keeps the game's
//! handler, the operations under way and a mirror of the name table (fed only by the session's
//! events, so reading it never waits for the network thread), and owns the runtimes: one for
//! the session (Host or Connect) and one per enumeration.
//!
//! Threads, as Windows has them: the runtime's network thread drives the session; one
//! dispatcher thread per runtime turns its events into `DPN_MSGID_*` calls of the handler, in
//! order, one at a time (so CONNECT_COMPLETE comes before the first CREATE_PLAYER on a joiner,
//! CREATE_PLAYER before any RECEIVE from that player, DESTROY_PLAYER after its last one). No
//! lock is held while the handler runs: a game may call any method from inside it.

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use dplay_runtime::{Runtime, RuntimeConfig, SocketSpec};
use dplay_session::{EndReason, FirstFrame, Mode, SendFlags, SessionConfig};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::url::DirectPlayUrl;
use uuid::Uuid;

use crate::com::{GUID, HRESULT};
use crate::devices::Devices;
use crate::dpn::{self, *};
use crate::protocol::{Command, DllProtocol, GroupRow, LinkInfo, Member, Out, Target};
use crate::sends::CancelSends;
use crate::{addressing, threadpool};

/// Which interface the object serves: it sets the session's topology and some message ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Peer,
    Client,
    Server,
}

/// How long a synchronous Host waits for its session to exist (it is local: at once).
const HOST_WAIT: Duration = Duration::from_secs(5);
/// How long Close waits for the graceful leave (DISCONNECT acknowledged by every peer).
const CLOSE_WAIT: Duration = Duration::from_secs(3);

/// The game's handler and its context (`Initialize`).
#[derive(Clone, Copy)]
struct Handler {
    f: MessageHandler,
    context: usize,
}

/// A player of the mirror, with the context the game gave it in CREATE_PLAYER.
struct Player {
    member: Member,
    context: usize,
}

/// A group of the mirror.
struct Group {
    row: GroupRow,
    context: usize,
}

/// An operation under way that completes with a message (or wakes a synchronous caller).
enum Op {
    Send {
        context: usize,
        no_complete: bool,
        guaranteed: bool,
        started: Instant,
        sync: Option<Sender<HRESULT>>,
    },
    /// A group or information request; `group_context` for CreateGroup.
    Request { context: usize, sync: Option<Sender<HRESULT>>, group: Option<(String, usize)> },
}

/// The connect under way.
struct Connecting {
    handle: u32,
    context: usize,
    player_context: usize,
    sync: Option<Sender<HRESULT>>,
}

/// An enumeration: its own runtime and dispatcher.
struct Enumeration {
    runtime: Runtime<DllProtocol>,
    context: usize,
    sync: Option<Sender<HRESULT>>,
    cancelled: bool,
}

/// The session's runtime (on every device address) and its dispatcher.
struct Live {
    runtime: Runtime<Devices<DllProtocol>>,
    dispatcher: Option<JoinHandle<()>>,
    dispatcher_id: ThreadId,
}

/// Settings of the application description the game gave Host (or learnt at Connect).
#[derive(Default, Clone)]
pub(crate) struct AppDesc {
    pub(crate) flags: u32,
    pub(crate) instance: Uuid,
    pub(crate) application: Uuid,
    pub(crate) max_players: u32,
    pub(crate) session_name: String,
    pub(crate) password: Option<String>,
    /// `pvApplicationReservedData`: the host's, sent in enumeration responses and to joiners.
    pub(crate) app_reserved: Vec<u8>,
}

/// `DPN_CAPS` and `DPN_SP_CAPS` as the game set them (Windows' defaults until then).
#[derive(Clone, Copy)]
pub(crate) struct Caps {
    pub(crate) connect_timeout: u32,
    pub(crate) connect_retries: u32,
    pub(crate) keep_alive: u32,
    pub(crate) buffers_per_thread: u32,
    pub(crate) system_buffer_size: u32,
}

impl Default for Caps {
    fn default() -> Self {
        Self {
            connect_timeout: 200,
            connect_retries: 14,
            keep_alive: 60_000,
            buffers_per_thread: 1,
            system_buffer_size: 0x1_0000,
        }
    }
}

#[derive(Default)]
struct State {
    handler: Option<Handler>,
    live: Option<Live>,
    /// Bumped by Close: a dispatcher of an older session delivers nothing more.
    generation: u64,
    enums: HashMap<u32, Enumeration>,
    ops: HashMap<u32, Op>,
    connecting: Option<Connecting>,
    hosting: Option<(Sender<HRESULT>, usize)>,
    next_handle: u32,
    name: String,
    data: Vec<u8>,
    players: BTreeMap<u32, Player>,
    groups: BTreeMap<u32, Group>,
    desc: AppDesc,
    local: u32,
    host: u32,
    buffers: HashMap<u32, Vec<u8>>,
    /// Joiners the application accepted in INDICATE_CONNECT, with the player context it gave.
    accepted: HashMap<SocketAddr, usize>,
    caps: Caps,
    /// The first device address's socket.
    bound: Option<SocketAddr>,
    /// Every device address's socket (Host with several), the first included.
    devices: Vec<SocketAddr>,
    /// The enumeration helper's port (MC-DPLHP 1.9: 6073), where a host on another port also
    /// answers EnumQuery; 0: none. Tests open it on a port they chose (0 unless they do).
    enum_helper_port: u16,
    /// Whether this session's host answers on the helper port (it was free).
    helper_bound: Option<SocketAddr>,
}

/// The state of one DirectPlay 8 object, shared by its vtable methods and its dispatchers.
pub(crate) struct Core {
    role: Role,
    state: Mutex<State>,
}

/// A completion a synchronous call waits for.
fn waiter() -> (Sender<HRESULT>, Receiver<HRESULT>) {
    bounded(1)
}

impl Core {
    pub(crate) fn new(role: Role) -> Arc<Self> {
        let enum_helper_port = if cfg!(test) { 0 } else { addressing::DEFAULT_PORT };
        Arc::new(Self {
            role,
            state: Mutex::new(State { next_handle: 1, enum_helper_port, ..State::default() }),
        })
    }

    /// Moves the enumeration helper to `port` (0: none), for tests on ports they opened.
    #[cfg(test)]
    pub(crate) fn set_enum_helper_port(&self, port: u16) {
        self.lock().enum_helper_port = port;
    }

    /// Where this host also answers EnumQuery for the enumeration helper, if it does.
    #[cfg(test)]
    pub(crate) fn enum_helper(&self) -> Option<SocketAddr> {
        self.lock().helper_bound
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while locked was caught at the COM edge; the state is still usable.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn next_handle(st: &mut State) -> u32 {
        let h = st.next_handle;
        st.next_handle = st.next_handle.wrapping_add(1).max(1);
        h
    }

    /// Calls the game's handler with the lock released; its answer.
    fn call<M>(&self, id: u32, msg: &mut M) -> HRESULT {
        let handler = self.lock().handler;
        match handler {
            // SAFETY: the game registered this handler with Initialize; `msg` is the structure
            // `id` names and lives for the call.
            Some(h) => unsafe { (h.f)(h.context as *mut c_void, id, (msg as *mut M).cast()) },
            None => DPN_OK,
        }
    }

    // ---- Initialize, info, caps -------------------------------------------------------------

    pub(crate) fn initialize(&self, f: Option<MessageHandler>, context: usize) -> HRESULT {
        let Some(f) = f else { return DPNERR_INVALIDPARAM };
        let mut st = self.lock();
        if st.handler.is_some() {
            return DPNERR_ALREADYINITIALIZED;
        }
        st.handler = Some(Handler { f, context });
        DPN_OK
    }

    pub(crate) fn check_init(&self) -> Result<(), HRESULT> {
        if self.lock().handler.is_some() { Ok(()) } else { Err(DPNERR_UNINITIALIZED) }
    }

    pub(crate) fn caps(&self) -> Caps {
        self.lock().caps
    }

    pub(crate) fn set_caps(&self, f: impl FnOnce(&mut Caps)) {
        f(&mut self.lock().caps);
    }

    /// SetPeerInfo / SetClientInfo / SetServerInfo: before Host or Connect the name and data
    /// are what others will see; after, an update of our entry (MC-DPL8CS 3.5).
    pub(crate) fn set_info(
        &self,
        name: Option<String>,
        data: Option<Vec<u8>>,
        context: usize,
        sync: bool,
    ) -> Result<u32, HRESULT> {
        let mut st = self.lock();
        if let Some(n) = &name {
            st.name.clone_from(n);
        }
        if let Some(d) = &data {
            st.data.clone_from(d);
        }
        if st.live.is_none() || st.local == 0 {
            return Ok(0);
        }
        let handle = Self::next_handle(&mut st);
        let (tx, rx) = waiter();
        st.ops.insert(handle, Op::Request { context, sync: sync.then_some(tx), group: None });
        Self::command(&st, Command::SetInfo { handle, name, data })?;
        drop(st);
        if sync {
            Ok(threadpool::wait(&rx, None).unwrap_or(DPNERR_CONNECTIONLOST))
                .and_then(|r| if r < 0 { Err(r) } else { Ok(0) })
        } else {
            Ok(handle)
        }
    }

    fn command(st: &State, c: Command) -> Result<(), HRESULT> {
        let live = st.live.as_ref().ok_or(DPNERR_NOCONNECTION)?;
        live.runtime.command(c).map_err(|_| DPNERR_CONNECTIONLOST)
    }

    /// The player `dpnid`'s name, data and flags.
    pub(crate) fn player_info(&self, dpnid: u32) -> Option<(String, Vec<u8>, u32)> {
        let st = self.lock();
        let p = st.players.get(&dpnid)?;
        let mut flags = 0;
        if p.member.is_local {
            flags |= DPNPLAYER_LOCAL;
        }
        if p.member.is_host {
            flags |= DPNPLAYER_HOST;
        }
        Some((p.member.name.clone(), p.member.data.clone(), flags))
    }

    pub(crate) fn group_info(&self, dpnid: u32) -> Option<(String, Vec<u8>)> {
        let st = self.lock();
        st.groups.get(&dpnid).map(|g| (g.row.name.clone(), g.row.data.clone()))
    }

    pub(crate) fn player_context(&self, dpnid: u32) -> Option<usize> {
        self.lock().players.get(&dpnid).map(|p| p.context)
    }

    pub(crate) fn group_context(&self, dpnid: u32) -> Option<usize> {
        self.lock().groups.get(&dpnid).map(|g| g.context)
    }

    pub(crate) fn is_player(&self, dpnid: u32) -> bool {
        self.lock().players.contains_key(&dpnid)
    }

    pub(crate) fn ids(&self, players: bool, groups: bool) -> Vec<u32> {
        let st = self.lock();
        let p = st.players.keys().copied().filter(|_| players);
        p.chain(st.groups.keys().copied().filter(|_| groups)).collect()
    }

    pub(crate) fn members(&self, group: u32) -> Option<Vec<u32>> {
        self.lock().groups.get(&group).map(|g| g.row.members.iter().map(|d| d.0).collect())
    }

    pub(crate) fn player_addr(&self, dpnid: u32) -> Option<SocketAddr> {
        let st = self.lock();
        let p = st.players.get(&dpnid)?;
        if p.member.is_local { st.bound } else { p.member.addr }
    }

    /// The first device address's socket (the tests' host port).
    #[cfg(test)]
    pub(crate) fn bound(&self) -> Option<SocketAddr> {
        self.lock().bound
    }

    /// GetLocalHostAddresses on a host: each device address's socket, on each interface
    /// address when it is bound to all of them (the bound address itself where the system
    /// lists none).
    pub(crate) fn local_host_addresses(&self) -> Option<Vec<SocketAddr>> {
        let st = self.lock();
        if st.local == 0 || st.local != st.host {
            return None;
        }
        let mut out = Vec::new();
        for bound in &st.devices {
            let mut ips = if bound.ip().is_unspecified() {
                dplay_runtime::interface_addrs(bound.ip())
            } else {
                Vec::new()
            };
            if ips.is_empty() {
                ips.push(bound.ip());
            }
            out.extend(ips.into_iter().map(|ip| SocketAddr::new(ip, bound.port())));
        }
        Some(out)
    }

    pub(crate) fn app_desc(&self) -> Option<(AppDesc, u32)> {
        let st = self.lock();
        st.live.as_ref()?;
        Some((st.desc.clone(), u32::try_from(st.players.len()).unwrap_or(u32::MAX)))
    }

    /// The host's (the server's) DPNID; 0 outside a session.
    pub(crate) fn host_id(&self) -> u32 {
        self.lock().host
    }

    pub(crate) fn is_host(&self) -> bool {
        let st = self.lock();
        st.local != 0 && st.local == st.host
    }

    /// SetApplicationDesc on the host: a new player limit, password and application reserved
    /// data for the joins and enumerations to come (answered on the network thread).
    pub(crate) fn set_app_desc(
        &self,
        max_players: u32,
        password: Option<String>,
        reserved: Vec<u8>,
    ) -> HRESULT {
        let mut st = self.lock();
        if st.local == 0 || st.local != st.host {
            return DPNERR_NOTHOST;
        }
        let (tx, rx) = bounded(1);
        let set = Command::SetDesc {
            max_players,
            password: password.clone(),
            reserved: reserved.clone(),
            reply: tx,
        };
        if let Err(e) = Self::command(&st, set) {
            return e;
        }
        let result = rx.recv_timeout(Duration::from_secs(1)).unwrap_or(DPNERR_GENERIC);
        if result == DPN_OK {
            st.desc.max_players = max_players;
            st.desc.password = password;
            st.desc.app_reserved = reserved;
        }
        result
    }

    pub(crate) fn take_buffer(&self, handle: u32) -> bool {
        self.lock().buffers.remove(&handle).is_some()
    }

    // ---- Host, Connect, EnumHosts ------------------------------------------------------------

    fn session_config(st: &State, role: Role, application: Uuid, local: SocketAddr) -> SessionConfig {
        let mut cfg = SessionConfig::new(application, local, &st.name);
        cfg.player_data.clone_from(&st.data);
        cfg.mode = if role == Role::Peer { Mode::PeerToPeer } else { Mode::ClientServer };
        cfg.interface_addrs = dplay_runtime::interface_addrs(local.ip());
        // DPNSEND_COMPLETEONPROCESS: a message is processed when the handler returns from its
        // RECEIVE (docs/decisions.md), so the session's answer waits for `Command::Processed`.
        cfg.defer_process_completion = true;
        // DPN_CAPS: the first CONNECT retry interval, the retries, the keep-alive silence.
        cfg.transport.connect_retry_initial =
            Duration::from_millis(u64::from(st.caps.connect_timeout.max(1)));
        cfg.transport.connect_retries = st.caps.connect_retries;
        cfg.transport.keepalive_idle = Duration::from_millis(u64::from(st.caps.keep_alive.max(1)));
        cfg
    }

    /// Starts the session runtime on the `devices` sockets (one per device address, the first
    /// the session's own, [`Devices`]) and its dispatcher; with `helper`, also a socket there
    /// that takes only EnumQuery ([`DllProtocol`]'s enumeration helper). A helper port another
    /// process holds is left to it: the session runs without (docs/decisions.md).
    fn start(
        self: &Arc<Self>,
        st: &mut State,
        devices: Vec<SocketSpec>,
        helper: Option<SocketAddr>,
        cfg: SessionConfig,
    ) -> Result<(), HRESULT> {
        let count = devices.len();
        let spawn = |helper: Option<SocketAddr>, cfg: SessionConfig| {
            let mut sockets: Vec<SocketSpec> = devices.iter().cloned().map(SocketSpec::broadcast).collect();
            sockets.extend(helper.map(SocketSpec::udp));
            let mut rc = RuntimeConfig::with_sockets(sockets);
            rc.thread_name = "dpnet-session".into();
            Runtime::spawn_with(rc, move |addr| {
                let mut cfg = cfg;
                cfg.local_addr = addr;
                Devices::new(DllProtocol::new(cfg, Instant::now()), count)
            })
        };
        let runtime = match helper.map(|h| spawn(Some(h), cfg.clone())) {
            Some(Ok(runtime)) => runtime,
            outcome => {
                if let Some(Err(e)) = outcome {
                    tracing::info!(
                        "the enumeration port is taken ({e}); this session answers only on its own"
                    );
                }
                spawn(None, cfg).map_err(|_| DPNERR_INVALIDDEVICEADDRESS)?
            }
        };
        st.helper_bound = runtime.socket_addr(dplay_runtime::SocketId(count));
        st.bound = Some(runtime.local_addr());
        st.devices = runtime.local_addrs().iter().copied().take(count).collect();
        let events = runtime.events().clone();
        let me = Arc::clone(self);
        let generation = st.generation;
        let dispatcher = std::thread::Builder::new()
            .name("dpnet-dispatch".into())
            .spawn(move || {
                for out in events.iter() {
                    if me.lock().generation != generation {
                        break;
                    }
                    let job = Arc::clone(&me);
                    let closed = Arc::clone(&me);
                    threadpool::deliver(
                        move || {
                            if job.lock().generation == generation {
                                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    job.dispatch(out)
                                }));
                            }
                        },
                        move || closed.lock().generation != generation,
                    );
                }
            })
            .map_err(|_| DPNERR_GENERIC)?;
        let dispatcher_id = dispatcher.thread().id();
        st.live = Some(Live { runtime, dispatcher: Some(dispatcher), dispatcher_id });
        Ok(())
    }

    /// Host: creates the session on every device address (at least one) and reports the
    /// local player before returning.
    pub(crate) fn host(
        self: &Arc<Self>,
        desc: AppDesc,
        devices: &[DirectPlayUrl],
        player_context: usize,
    ) -> HRESULT {
        let mut st = self.lock();
        if st.live.is_some() {
            return DPNERR_ALREADYCONNECTED;
        }
        let binds: Vec<SocketAddr> = devices.iter().map(|d| addressing::bind_for(Some(d))).collect();
        let Some(&bind) = binds.first() else { return DPNERR_INVALIDPARAM };
        let mut cfg = Self::session_config(&st, self.role, desc.application, bind);
        cfg.session_name.clone_from(&desc.session_name);
        cfg.max_players = desc.max_players;
        cfg.application_reserved_data.clone_from(&desc.app_reserved);
        cfg.migrate_host = desc.flags & DPNSESSION_MIGRATE_HOST != 0;
        cfg.no_enums = desc.flags & DPNSESSION_NOENUMS != 0;
        cfg.indicate_connect = true;
        cfg.indicate_enum = true;
        cfg.password =
            if desc.flags & DPNSESSION_REQUIREPASSWORD != 0 { desc.password.clone() } else { None };
        if desc.flags & DPNSESSION_FAST_SIGNED != 0 {
            cfg.transport.signing = dplay_dframe::Signing::Fast;
        }
        // No port in a device address: Windows takes the first free one of 2302-2400.
        let specs =
            binds
                .iter()
                .map(|&b| {
                    if b.port() == 0 {
                        SocketSpec::udp(b).first_free(2302..=2400)
                    } else {
                        SocketSpec::udp(b)
                    }
                })
                .collect();
        // DPNSVR (MC-DPLHP 1.9, MS-DPDX 3.2.3): the session is also enumerable on 6073, on
        // the first device's IP, unless a device is on 6073 itself.
        let helper_port = st.enum_helper_port;
        let helper = (helper_port != 0
            && binds.iter().all(|b| b.port() != helper_port)
            && desc.flags & DPNSESSION_NODPNSVR == 0)
            .then(|| SocketAddr::new(bind.ip(), helper_port));
        if let Err(e) = self.start(&mut st, specs, helper, cfg) {
            return e;
        }
        st.desc = desc;
        let (tx, rx) = waiter();
        st.hosting = Some((tx, player_context));
        if let Err(e) = Self::command(&st, Command::Host) {
            return e;
        }
        drop(st);
        let result = threadpool::wait(&rx, Some(HOST_WAIT)).unwrap_or(DPNERR_GENERIC);
        if result < 0 {
            self.close(false);
        }
        result
    }

    /// Connect: joins the session at `host`; CONNECT_COMPLETE reports the result.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn connect(
        self: &Arc<Self>,
        desc: AppDesc,
        host: SocketAddr,
        device: Option<DirectPlayUrl>,
        connect_data: Vec<u8>,
        player_context: usize,
        context: usize,
        sync: bool,
    ) -> Result<u32, HRESULT> {
        let mut st = self.lock();
        if st.live.is_some() || st.connecting.is_some() {
            return Err(DPNERR_ALREADYCONNECTED);
        }
        let bind = addressing::bind_for(device.as_ref());
        let mut cfg = Self::session_config(&st, self.role, desc.application, bind);
        cfg.password.clone_from(&desc.password);
        cfg.connect_data = connect_data;
        self.start(&mut st, vec![SocketSpec::udp(bind)], None, cfg)?;
        let handle = Self::next_handle(&mut st);
        let (tx, rx) = waiter();
        st.connecting = Some(Connecting { handle, context, player_context, sync: sync.then_some(tx) });
        let instance = (!desc.instance.is_nil()).then_some(desc.instance);
        st.desc = desc;
        Self::command(&st, Command::Join { host, instance })?;
        drop(st);
        if !sync {
            return Ok(handle);
        }
        let result = threadpool::wait(&rx, None).unwrap_or(DPNERR_NOCONNECTION);
        if result < 0 { Err(result) } else { Ok(0) }
    }

    /// EnumHosts: its own socket and session, sending EnumQuery `count` times every `retry`.
    pub(crate) fn enum_hosts(
        self: &Arc<Self>,
        search: Search,
        context: usize,
        sync: bool,
    ) -> Result<u32, HRESULT> {
        let Search { application, target, device, count, retry, payload } = search;
        let mut st = self.lock();
        let bind = addressing::bind_for(device.as_ref());
        let mut cfg = Self::session_config(&st, self.role, application.unwrap_or_default(), bind);
        cfg.enum_count = count;
        cfg.set_enum_retry(retry);
        cfg.enum_query_data = payload;
        let mut rc = RuntimeConfig::with_sockets(vec![SocketSpec::udp(bind).broadcast()]);
        rc.thread_name = "dpnet-enum".into();
        let runtime = Runtime::spawn_with(rc, move |addr| {
            let mut cfg = cfg;
            cfg.local_addr = addr;
            DllProtocol::new(cfg, Instant::now())
        })
        .map_err(|_| DPNERR_INVALIDDEVICEADDRESS)?;
        let handle = Self::next_handle(&mut st);
        let events = runtime.events().clone();
        let device_addr = runtime.local_addr();
        runtime.command(Command::EnumHosts { target, application }).map_err(|_| DPNERR_GENERIC)?;
        let (tx, rx) = waiter();
        st.enums.insert(handle, Enumeration { runtime, context, sync: sync.then_some(tx), cancelled: false });
        drop(st);
        let me = Arc::clone(self);
        std::thread::Builder::new()
            .name("dpnet-enum-dispatch".into())
            .spawn(move || {
                for out in events.iter() {
                    let done = matches!(out, Out::EnumDone);
                    let job = Arc::clone(&me);
                    let closed = Arc::clone(&me);
                    threadpool::deliver(
                        move || {
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                job.dispatch_enum(handle, device_addr, out);
                            }));
                        },
                        move || !closed.lock().enums.contains_key(&handle),
                    );
                    if done {
                        break;
                    }
                }
            })
            .map_err(|_| DPNERR_GENERIC)?;
        if sync {
            let r = threadpool::wait(&rx, None).unwrap_or(DPN_OK);
            return if r < 0 && r != DPNERR_USERCANCEL { Err(r) } else { Ok(0) };
        }
        Ok(handle)
    }

    // ---- Sends and groups --------------------------------------------------------------------

    /// SendTo: `to` 0 is every player; a player or a group otherwise. `timeout_ms` 0: none.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send(
        &self,
        to: u32,
        data: Vec<u8>,
        flags: u32,
        timeout_ms: u32,
        context: usize,
        sync: bool,
    ) -> Result<u32, HRESULT> {
        let priority = crate::sends::priority(flags)?;
        let mut st = self.lock();
        if st.live.is_none() || st.local == 0 {
            return Err(DPNERR_NOCONNECTION);
        }
        let target = if to == DPNID_ALL_PLAYERS_GROUP {
            Target::All
        } else if st.players.contains_key(&to) || st.groups.contains_key(&to) {
            Target::Id(Dpnid(to))
        } else {
            return Err(DPNERR_INVALIDPLAYER);
        };
        let guaranteed = flags & DPNSEND_GUARANTEED != 0;
        let send_flags = SendFlags {
            reliable: guaranteed,
            sequential: flags & DPNSEND_NONSEQUENTIAL == 0,
            no_loopback: flags & DPNSEND_NOLOOPBACK != 0,
        };
        let handle = Self::next_handle(&mut st);
        let (tx, rx) = waiter();
        let no_complete = flags & DPNSEND_NOCOMPLETE != 0;
        let on_process = flags & DPNSEND_COMPLETEONPROCESS != 0;
        st.ops.insert(
            handle,
            Op::Send { context, no_complete, guaranteed, started: Instant::now(), sync: sync.then_some(tx) },
        );
        let timeout = (timeout_ms != 0).then(|| Duration::from_millis(u64::from(timeout_ms)));
        let send =
            Command::Send { handle, to: target, data, flags: send_flags, on_process, priority, timeout };
        Self::command(&st, send)?;
        drop(st);
        if sync {
            let r = threadpool::wait(&rx, None).unwrap_or(DPNERR_CONNECTIONLOST);
            return if r < 0 { Err(r) } else { Ok(0) };
        }
        Ok(handle)
    }

    /// A group or information request to the session, completed by ASYNC_OP_COMPLETE (or the
    /// synchronous return).
    pub(crate) fn request(
        &self,
        make: impl FnOnce(u32) -> Command,
        context: usize,
        sync: bool,
        group: Option<(String, usize)>,
    ) -> Result<u32, HRESULT> {
        let mut st = self.lock();
        if st.live.is_none() || st.local == 0 {
            return Err(DPNERR_NOCONNECTION);
        }
        let handle = Self::next_handle(&mut st);
        let (tx, rx) = waiter();
        st.ops.insert(handle, Op::Request { context, sync: sync.then_some(tx), group });
        Self::command(&st, make(handle))?;
        drop(st);
        if sync {
            let r = threadpool::wait(&rx, None).unwrap_or(DPNERR_CONNECTIONLOST);
            return if r < 0 { Err(r) } else { Ok(0) };
        }
        Ok(handle)
    }

    /// The link with a remote player, read on the network thread (GetConnectionInfo,
    /// GetSendQueueInfo); DPNERR_INVALIDPLAYER for ourselves or a player we have no link with.
    pub(crate) fn link(&self, dpnid: u32) -> Result<LinkInfo, HRESULT> {
        let (tx, rx) = bounded(1);
        Self::command(&self.lock(), Command::Link { dpnid: Dpnid(dpnid), reply: tx })?;
        rx.recv_timeout(Duration::from_secs(1)).ok().flatten().ok_or(DPNERR_INVALIDPLAYER)
    }

    pub(crate) fn plain_command(&self, c: Command) -> HRESULT {
        match Self::command(&self.lock(), c) {
            Ok(()) => DPN_OK,
            Err(e) => e,
        }
    }

    // ---- Cancel and Close --------------------------------------------------------------------

    /// CancelAsyncOperation: an enumeration or the connect ends with DPNERR_USERCANCEL; sends
    /// are cancelled by the transport ([`DllProtocol`]'s answer). DPNCANCEL_PLAYER_SENDS
    /// names the player in `handle` (a client: 0, the server).
    pub(crate) fn cancel(&self, handle: u32, flags: u32) -> HRESULT {
        let mut st = self.lock();
        if flags & DPNCANCEL_PLAYER_SENDS != 0 {
            let priority = match crate::sends::player_sends_priority(flags) {
                Ok(p) => p,
                Err(e) => return e,
            };
            let player = match (self.role, handle) {
                (Role::Client, 0) => st.host,
                (Role::Client, _) => return DPNERR_INVALIDPARAM,
                // Sends to ourselves are delivered at once: nothing waits.
                (_, dpnid) if dpnid == st.local => return DPN_OK,
                (_, dpnid) if st.players.contains_key(&dpnid) => dpnid,
                _ => return DPNERR_INVALIDPLAYER,
            };
            return Self::cancel_sends(&st, CancelSends::To(Dpnid(player), priority));
        }
        if handle != 0 {
            if flags != 0 {
                return DPNERR_INVALIDFLAGS;
            }
            if let Some(e) = st.enums.get_mut(&handle) {
                e.cancelled = true;
                let _ = e.runtime.command(Command::StopEnum);
                return DPN_OK;
            }
            if st.connecting.as_ref().is_some_and(|c| c.handle == handle) {
                drop(st);
                self.cancel_connect();
                return DPN_OK;
            }
            return match st.ops.get(&handle) {
                Some(Op::Send { .. }) => Self::cancel_sends(&st, CancelSends::One(handle)),
                Some(Op::Request { .. }) => DPNERR_CANNOTCANCEL,
                None => DPNERR_INVALIDHANDLE,
            };
        }
        if flags & (DPNCANCEL_ENUM | DPNCANCEL_ALL_OPERATIONS) != 0 {
            for e in st.enums.values_mut() {
                e.cancelled = true;
                let _ = e.runtime.command(Command::StopEnum);
            }
        }
        let sends = flags & (DPNCANCEL_SEND | DPNCANCEL_ALL_OPERATIONS) != 0 && st.live.is_some();
        let result = if sends { Self::cancel_sends(&st, CancelSends::All) } else { DPN_OK };
        let connect = flags & (DPNCANCEL_CONNECT | DPNCANCEL_ALL_OPERATIONS) != 0 && st.connecting.is_some();
        drop(st);
        if connect {
            self.cancel_connect();
        }
        result
    }

    /// Sends cancelled on the network thread, which answers at once (never through the
    /// handler's dispatcher, so a handler may cancel); the completions follow as messages.
    fn cancel_sends(st: &State, which: CancelSends) -> HRESULT {
        let (tx, rx) = bounded(1);
        if let Err(e) = Self::command(st, Command::CancelSends { which, reply: tx }) {
            return e;
        }
        rx.recv_timeout(Duration::from_secs(1)).unwrap_or(DPNERR_CANNOTCANCEL)
    }

    fn cancel_connect(&self) {
        let Some(c) = self.lock().connecting.take() else { return };
        self.connect_failed(c, DPNERR_USERCANCEL, Vec::new());
        self.close(false);
    }

    fn connect_failed(&self, c: Connecting, result: HRESULT, reply: Vec<u8>) {
        self.connect_complete(c, result, reply, 0);
    }

    /// DPN_MSGID_CONNECT_COMPLETE for `c` (`local`: our DPNID, 0 when it failed), then the
    /// result to a synchronous Connect waiting for it.
    fn connect_complete(&self, c: Connecting, result: HRESULT, mut reply: Vec<u8>, local: u32) {
        let mut msg = DPNMSG_CONNECT_COMPLETE {
            dwSize: size_of::<DPNMSG_CONNECT_COMPLETE>() as u32,
            hAsyncOp: if c.sync.is_some() { 0 } else { c.handle },
            pvUserContext: c.context as *mut c_void,
            hResultCode: result,
            pvApplicationReplyData: dpn::buffer_or_null(&mut reply),
            dwApplicationReplyDataSize: reply.len() as u32,
            dpnidLocal: local,
        };
        self.call(DPN_MSGID_CONNECT_COMPLETE, &mut msg);
        if let Some(tx) = c.sync {
            let _ = tx.send(result);
        }
    }

    /// Close: enumerations end (USERCANCEL), we leave the session gracefully (waiting a few
    /// round trips at most), every player and group is reported destroyed, and every thread
    /// and socket of the object is gone when it returns (but the dispatcher, when Close is
    /// called from inside the handler: it ends once the handler returns).
    pub(crate) fn close(&self, uninitialize: bool) -> HRESULT {
        let mut st = self.lock();
        st.generation += 1;
        let enums: Vec<(u32, Enumeration)> = st.enums.drain().collect();
        let live = st.live.take();
        let connecting = st.connecting.take();
        let ops: Vec<(u32, Op)> = st.ops.drain().collect();
        let hosting = st.hosting.take();
        drop(st);
        for (handle, e) in enums {
            drop(e.runtime);
            self.enum_finished(handle, e.context, e.sync, DPNERR_USERCANCEL);
        }
        if let Some(c) = connecting {
            self.connect_failed(c, DPNERR_USERCANCEL, Vec::new());
        }
        if let Some((tx, _)) = hosting {
            let _ = tx.send(DPNERR_USERCANCEL);
        }
        for (handle, op) in ops {
            self.complete(handle, op, DPNERR_USERCANCEL, None);
        }
        if let Some(mut live) = live {
            let _ = live.runtime.command(Command::Leave);
            let deadline = Instant::now() + CLOSE_WAIT;
            while live.runtime.is_running() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            drop(live.runtime);
            if let Some(d) =
                live.dispatcher.take().filter(|_| std::thread::current().id() != live.dispatcher_id)
            {
                let _ = d.join();
            }
        }
        self.destroy_all(DPNDESTROYPLAYERREASON_NORMAL);
        let mut st = self.lock();
        st.local = 0;
        st.host = 0;
        st.bound = None;
        st.devices.clear();
        st.buffers.clear();
        if uninitialize {
            st.handler = None;
        }
        DPN_OK
    }

    /// DESTROY_GROUP and DESTROY_PLAYER for everything left in the mirror.
    fn destroy_all(&self, reason: u32) {
        let groups: Vec<Group> = std::mem::take(&mut self.lock().groups).into_values().collect();
        for g in groups {
            let mut msg = DPNMSG_DESTROY_GROUP {
                dwSize: size_of::<DPNMSG_DESTROY_GROUP>() as u32,
                dpnidGroup: g.row.dpnid.0,
                pvGroupContext: g.context as *mut c_void,
                dwReason: DPNDESTROYGROUPREASON_NORMAL,
            };
            self.call(DPN_MSGID_DESTROY_GROUP, &mut msg);
        }
        let players: Vec<Player> = std::mem::take(&mut self.lock().players).into_values().collect();
        for p in players {
            self.destroy_player(&p, reason);
        }
    }

    fn destroy_player(&self, p: &Player, reason: u32) {
        if self.role == Role::Client {
            return;
        }
        let mut msg = DPNMSG_DESTROY_PLAYER {
            dwSize: size_of::<DPNMSG_DESTROY_PLAYER>() as u32,
            dpnidPlayer: p.member.dpnid.0,
            pvPlayerContext: p.context as *mut c_void,
            dwReason: reason,
        };
        self.call(DPN_MSGID_DESTROY_PLAYER, &mut msg);
    }

    // ---- Dispatch ----------------------------------------------------------------------------

    fn enum_finished(&self, handle: u32, context: usize, sync: Option<Sender<HRESULT>>, result: HRESULT) {
        match sync {
            Some(tx) => {
                let _ = tx.send(result);
            }
            None => {
                let mut msg = DPNMSG_ASYNC_OP_COMPLETE {
                    dwSize: size_of::<DPNMSG_ASYNC_OP_COMPLETE>() as u32,
                    hAsyncOp: handle,
                    pvUserContext: context as *mut c_void,
                    hResultCode: result,
                };
                self.call(DPN_MSGID_ASYNC_OP_COMPLETE, &mut msg);
            }
        }
    }

    fn dispatch_enum(&self, handle: u32, device: SocketAddr, out: Out) {
        match out {
            Out::Found { from, response, round_trip_ms } => {
                let Some(context) = self.lock().enums.get(&handle).map(|e| e.context) else { return };
                let name = dpn::wide(
                    &response.session_name.as_ref().map(|n| n.to_string_lossy()).unwrap_or_default(),
                );
                // The host's DPN_APPLICATION_DESC data as it sent them (MC-DPLHP 2.2.2).
                let bytes =
                    |b: &Option<dplay_wire::Blob>| b.as_ref().map(|b| b.0.clone()).unwrap_or_default();
                let (mut reserved, mut app_reserved) =
                    (bytes(&response.reserved_data), bytes(&response.application_reserved_data));
                let desc = DPN_APPLICATION_DESC {
                    dwSize: size_of::<DPN_APPLICATION_DESC>() as u32,
                    dwFlags: response.application_desc_flags.bits(),
                    guidInstance: GUID::from_uuid(response.application_instance_guid),
                    guidApplication: GUID::from_uuid(response.application_guid),
                    dwMaxPlayers: response.max_players,
                    dwCurrentPlayers: response.current_players,
                    pwszSessionName: name.as_ptr().cast_mut(),
                    pwszPassword: std::ptr::null_mut(),
                    pvReservedData: dpn::buffer_or_null(&mut reserved),
                    dwReservedDataSize: reserved.len() as u32,
                    pvApplicationReservedData: dpn::buffer_or_null(&mut app_reserved),
                    dwApplicationReservedDataSize: app_reserved.len() as u32,
                };
                let mut data = bytes(&response.application_data);
                let sender = addressing::new_address(&addressing::url_for(from));
                let dev = addressing::new_address(&addressing::url_for(device));
                let mut msg = DPNMSG_ENUM_HOSTS_RESPONSE {
                    dwSize: size_of::<DPNMSG_ENUM_HOSTS_RESPONSE>() as u32,
                    pAddressSender: sender,
                    pAddressDevice: dev,
                    pApplicationDescription: &desc,
                    pvResponseData: dpn::buffer_or_null(&mut data),
                    dwResponseDataSize: data.len() as u32,
                    pvUserContext: context as *mut c_void,
                    dwRoundTripLatencyMS: round_trip_ms,
                };
                self.call(DPN_MSGID_ENUM_HOSTS_RESPONSE, &mut msg);
                release(sender);
                release(dev);
            }
            Out::EnumDone => {
                let Some(e) = self.lock().enums.remove(&handle) else { return };
                let result = if e.cancelled { DPNERR_USERCANCEL } else { DPN_OK };
                drop(e.runtime);
                self.enum_finished(handle, e.context, e.sync, result);
            }
            _ => {}
        }
    }

    /// The end of an operation: SEND_COMPLETE (with how its first frame went, when the
    /// transport acknowledged it) or ASYNC_OP_COMPLETE, or the synchronous caller's result.
    fn complete(&self, handle: u32, op: Op, result: HRESULT, first_frame: Option<FirstFrame>) {
        match op {
            Op::Send { context, no_complete, guaranteed, started, sync } => {
                if let Some(tx) = sync {
                    let _ = tx.send(result);
                    return;
                }
                if no_complete {
                    return;
                }
                let mut msg = DPNMSG_SEND_COMPLETE {
                    dwSize: size_of::<DPNMSG_SEND_COMPLETE>() as u32,
                    hAsyncOp: handle,
                    pvUserContext: context as *mut c_void,
                    hResultCode: result,
                    dwSendTime: u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX),
                    dwFirstFrameRTT: first_frame
                        .map_or(0, |f| u32::try_from(f.rtt.as_millis()).unwrap_or(u32::MAX)),
                    dwFirstFrameRetryCount: first_frame.map_or(0, |f| f.retries),
                    dwSendCompleteFlags: if guaranteed { DPNSENDCOMPLETE_GUARANTEED } else { 0 },
                    pBuffers: std::ptr::null_mut(),
                    dwNumBuffers: 0,
                };
                self.call(DPN_MSGID_SEND_COMPLETE, &mut msg);
            }
            Op::Request { context, sync, .. } => match sync {
                Some(tx) => {
                    let _ = tx.send(result);
                }
                None => {
                    let mut msg = DPNMSG_ASYNC_OP_COMPLETE {
                        dwSize: size_of::<DPNMSG_ASYNC_OP_COMPLETE>() as u32,
                        hAsyncOp: handle,
                        pvUserContext: context as *mut c_void,
                        hResultCode: result,
                    };
                    self.call(DPN_MSGID_ASYNC_OP_COMPLETE, &mut msg);
                }
            },
        }
    }

    /// A player that entered the table: into the mirror, then CREATE_PLAYER.
    fn create_player(&self, m: Member, context: usize) {
        let dpnid = m.dpnid.0;
        {
            let mut st = self.lock();
            if st.players.contains_key(&dpnid) {
                return;
            }
            st.players.insert(dpnid, Player { member: m, context });
        }
        self.announce_player(dpnid);
    }

    /// CREATE_PLAYER for a player of the mirror; the context the handler leaves in the message
    /// is the player's.
    fn announce_player(&self, dpnid: u32) {
        if self.role == Role::Client {
            return; // A client hears of no player (the server included).
        }
        let Some(context) = self.player_context(dpnid) else { return };
        let mut msg = DPNMSG_CREATE_PLAYER {
            dwSize: size_of::<DPNMSG_CREATE_PLAYER>() as u32,
            dpnidPlayer: dpnid,
            pvPlayerContext: context as *mut c_void,
        };
        self.call(DPN_MSGID_CREATE_PLAYER, &mut msg);
        if let Some(p) = self.lock().players.get_mut(&dpnid) {
            p.context = msg.pvPlayerContext as usize;
        }
    }

    fn create_group(&self, row: GroupRow) {
        let (dpnid, owner) = (row.dpnid.0, row.owner.0);
        let mut st = self.lock();
        // Our own CreateGroup: the context it was given.
        let mine = st.ops.values().find_map(|op| match op {
            Op::Request { group: Some((name, ctx)), .. } if owner == st.local && *name == row.name => {
                Some(*ctx)
            }
            _ => None,
        });
        let owner_context = st.players.get(&owner).map_or(0, |p| p.context);
        let members = row.members.clone();
        st.groups.insert(dpnid, Group { row, context: mine.unwrap_or(0) });
        drop(st);
        let mut msg = DPNMSG_CREATE_GROUP {
            dwSize: size_of::<DPNMSG_CREATE_GROUP>() as u32,
            dpnidGroup: dpnid,
            dpnidOwner: owner,
            pvGroupContext: mine.unwrap_or(0) as *mut c_void,
            pvOwnerContext: owner_context as *mut c_void,
        };
        self.call(DPN_MSGID_CREATE_GROUP, &mut msg);
        if let Some(g) = self.lock().groups.get_mut(&dpnid) {
            g.context = msg.pvGroupContext as usize;
        }
        for player in members {
            self.membership(DPN_MSGID_ADD_PLAYER_TO_GROUP, dpnid, player.0);
        }
    }

    fn membership(&self, id: u32, group: u32, player: u32) {
        let (gc, pc) = {
            let mut st = self.lock();
            if let Some(g) = st.groups.get_mut(&group) {
                let p = Dpnid(player);
                if id == DPN_MSGID_ADD_PLAYER_TO_GROUP && !g.row.members.contains(&p) {
                    g.row.members.push(p);
                } else if id == DPN_MSGID_REMOVE_PLAYER_FROM_GROUP {
                    g.row.members.retain(|m| *m != p);
                }
            }
            (st.groups.get(&group).map_or(0, |g| g.context), st.players.get(&player).map_or(0, |p| p.context))
        };
        let mut msg = DPNMSG_GROUP_MEMBER {
            dwSize: size_of::<DPNMSG_GROUP_MEMBER>() as u32,
            dpnidGroup: group,
            pvGroupContext: gc as *mut c_void,
            dpnidPlayer: player,
            pvPlayerContext: pc as *mut c_void,
        };
        self.call(id, &mut msg);
    }

    fn info_message(&self, dpnid: u32, group: bool) {
        let st = self.lock();
        let (id, context) = if group {
            (DPN_MSGID_GROUP_INFO, st.groups.get(&dpnid).map_or(0, |g| g.context))
        } else {
            let id = match self.role {
                Role::Peer => DPN_MSGID_PEER_INFO,
                Role::Client => DPN_MSGID_SERVER_INFO,
                Role::Server => DPN_MSGID_CLIENT_INFO,
            };
            (id, st.players.get(&dpnid).map_or(0, |p| p.context))
        };
        drop(st);
        let mut msg = DPNMSG_ID_CONTEXT {
            dwSize: size_of::<DPNMSG_ID_CONTEXT>() as u32,
            dpnid,
            pvContext: context as *mut c_void,
        };
        self.call(id, &mut msg);
    }

    /// One event of the session, as the handler hears it.
    fn dispatch(&self, out: Out) {
        match out {
            Out::Joined { local, host, members, groups, flags, reply, reserved } => {
                self.lock().desc.app_reserved = reserved;
                self.joined(local.0, host.0, members, groups, flags, reply)
            }
            Out::JoinRequest { from, connect_data } => self.indicate_connect(from, connect_data),
            Out::HostFailed(result) => {
                if let Some((tx, _)) = self.lock().hosting.take() {
                    let _ = tx.send(result);
                }
            }
            Out::EnumQuery { from, enum_payload, data, room } => {
                self.enum_hosts_query(from, enum_payload, data, room)
            }
            Out::JoinAborted(from) => {
                let context = self.lock().accepted.remove(&from);
                if let Some(context) = context {
                    let mut msg = DPNMSG_INDICATED_CONNECT_ABORTED {
                        dwSize: size_of::<DPNMSG_INDICATED_CONNECT_ABORTED>() as u32,
                        pvPlayerContext: context as *mut c_void,
                    };
                    self.call(DPN_MSGID_INDICATED_CONNECT_ABORTED, &mut msg);
                }
            }
            Out::PlayerAdded(m) => {
                let context = m.addr.and_then(|a| self.lock().accepted.remove(&a)).unwrap_or(0);
                self.create_player(m, context)
            }
            Out::PlayerRemoved { dpnid, reason } => {
                let p = self.lock().players.remove(&dpnid.0);
                if let Some(p) = p {
                    self.destroy_player(&p, reason);
                }
            }
            Out::Received { from, data, reliable, process_token } => {
                self.receive(from, data, reliable);
                // Processed once the handler returned, whether it kept the buffer or not.
                if let Some(token) = process_token {
                    let _ = self.plain_command(Command::Processed(token));
                }
            }
            Out::HostMigrated(new_host) => {
                let context = {
                    let mut st = self.lock();
                    st.host = new_host.0;
                    for p in st.players.values_mut() {
                        p.member.is_host = p.member.dpnid == new_host;
                    }
                    st.players.get(&new_host.0).map_or(0, |p| p.context)
                };
                let mut msg = DPNMSG_ID_CONTEXT {
                    dwSize: size_of::<DPNMSG_ID_CONTEXT>() as u32,
                    dpnid: new_host.0,
                    pvContext: context as *mut c_void,
                };
                self.call(DPN_MSGID_HOST_MIGRATE, &mut msg);
            }
            Out::GroupCreated(group) => self.create_group(group),
            Out::GroupDestroyed(group) => {
                let g = self.lock().groups.remove(&group.0);
                if let Some(g) = g {
                    let mut msg = DPNMSG_DESTROY_GROUP {
                        dwSize: size_of::<DPNMSG_DESTROY_GROUP>() as u32,
                        dpnidGroup: group.0,
                        pvGroupContext: g.context as *mut c_void,
                        dwReason: DPNDESTROYGROUPREASON_NORMAL,
                    };
                    self.call(DPN_MSGID_DESTROY_GROUP, &mut msg);
                }
            }
            Out::MemberAdded { group, player } => {
                self.membership(DPN_MSGID_ADD_PLAYER_TO_GROUP, group.0, player.0)
            }
            Out::MemberRemoved { group, player } => {
                self.membership(DPN_MSGID_REMOVE_PLAYER_FROM_GROUP, group.0, player.0);
            }
            Out::InfoUpdated { dpnid, group, name, data } => {
                {
                    let mut st = self.lock();
                    if group {
                        if let Some(g) = st.groups.get_mut(&dpnid.0) {
                            g.row.name = name.unwrap_or(std::mem::take(&mut g.row.name));
                            g.row.data = data.unwrap_or(std::mem::take(&mut g.row.data));
                        }
                    } else if let Some(p) = st.players.get_mut(&dpnid.0) {
                        p.member.name = name.unwrap_or(std::mem::take(&mut p.member.name));
                        p.member.data = data.unwrap_or(std::mem::take(&mut p.member.data));
                    }
                }
                self.info_message(dpnid.0, group);
            }
            Out::OpDone { handle, result } => {
                let op = self.lock().ops.remove(&handle);
                if let Some(op) = op {
                    self.complete(handle, op, result, None);
                }
            }
            Out::SendDone { handle, result, first_frame } => {
                let op = self.lock().ops.remove(&handle);
                if let Some(op) = op {
                    self.complete(handle, op, result, first_frame);
                }
            }
            Out::Ended { reason, reply, terminate_data } => self.ended(reason, reply, terminate_data),
            Out::Found { .. } | Out::EnumDone => {}
        }
    }

    /// RECEIVE: the buffer is ours until the handler returns, or until ReturnBuffer when it
    /// answers DPNSUCCESS_PENDING.
    fn receive(&self, from: Dpnid, mut data: Vec<u8>, reliable: bool) {
        let (context, handle) = {
            let mut st = self.lock();
            (st.players.get(&from.0).map_or(0, |p| p.context), Self::next_handle(&mut st))
        };
        let mut msg = DPNMSG_RECEIVE {
            dwSize: size_of::<DPNMSG_RECEIVE>() as u32,
            dpnidSender: from.0,
            pvPlayerContext: context as *mut c_void,
            pReceiveData: data.as_mut_ptr(),
            dwReceiveDataSize: data.len() as u32,
            hBufferHandle: handle,
            dwReceiveFlags: if reliable { DPNRECEIVE_GUARANTEED } else { 0 },
        };
        // Kept before the handler runs, since a game may hand the buffer back from
        // another thread as soon as it has seen it; the buffer's address stays put when
        // the Vec moves into the map. Dropped again unless the handler keeps it.
        self.lock().buffers.insert(handle, data);
        if self.call(DPN_MSGID_RECEIVE, &mut msg) != DPNSUCCESS_PENDING {
            self.lock().buffers.remove(&handle);
        }
    }

    /// INDICATE_CONNECT: the handler's answer admits the joiner (its reply data and player
    /// context kept) or refuses it (DPNERR_HOSTREJECTEDCONNECTION with the reply data); the
    /// reply buffer goes back with RETURN_BUFFER once copied.
    fn indicate_connect(&self, from: SocketAddr, mut connect_data: Vec<u8>) {
        let player = addressing::new_address(&addressing::url_for(from));
        let device = self.device_address();
        let mut msg = DPNMSG_INDICATE_CONNECT {
            dwSize: size_of::<DPNMSG_INDICATE_CONNECT>() as u32,
            pvUserConnectData: dpn::buffer_or_null(&mut connect_data),
            dwUserConnectDataSize: connect_data.len() as u32,
            pvReplyData: std::ptr::null_mut(),
            dwReplyDataSize: 0,
            pvReplyContext: std::ptr::null_mut(),
            pvPlayerContext: std::ptr::null_mut(),
            pAddressPlayer: player,
            pAddressDevice: device,
        };
        let accept = self.call(DPN_MSGID_INDICATE_CONNECT, &mut msg) >= 0;
        release(player);
        release(device);
        // SAFETY: the handler's reply buffer, `dwReplyDataSize` bytes, valid until RETURN_BUFFER.
        let reply = unsafe { dpn::read_bytes(msg.pvReplyData, msg.dwReplyDataSize) };
        if accept {
            self.lock().accepted.insert(from, msg.pvPlayerContext as usize);
        }
        let _ = self.plain_command(Command::AnswerJoin { from, accept, reply });
        self.return_buffer(msg.pvReplyData, msg.pvReplyContext);
    }

    /// RETURN_BUFFER: a buffer the handler lent (reply or response data) is no longer used.
    fn return_buffer(&self, buffer: *mut c_void, context: *mut c_void) {
        if !buffer.is_null() {
            let mut back = DPNMSG_RETURN_BUFFER {
                dwSize: size_of::<DPNMSG_RETURN_BUFFER>() as u32,
                hResultCode: DPN_OK,
                pvBuffer: buffer,
                pvUserContext: context,
            };
            self.call(DPN_MSGID_RETURN_BUFFER, &mut back);
        }
    }

    /// A new address object of our first device (null before we are bound).
    fn device_address(&self) -> *mut c_void {
        self.lock().bound.map_or(std::ptr::null_mut(), |b| addressing::new_address(&addressing::url_for(b)))
    }

    /// ENUM_HOSTS_QUERY: the handler answers DPN_OK to have the query answered, with its
    /// response data (at most `dwMaxResponseDataSize`), or anything else to leave it
    /// unanswered; the response buffer goes back with RETURN_BUFFER once copied.
    fn enum_hosts_query(&self, from: SocketAddr, enum_payload: u16, mut data: Vec<u8>, room: usize) {
        let sender = addressing::new_address(&addressing::url_for(from));
        let device = self.device_address();
        let mut msg = DPNMSG_ENUM_HOSTS_QUERY {
            dwSize: size_of::<DPNMSG_ENUM_HOSTS_QUERY>() as u32,
            pAddressSender: sender,
            pAddressDevice: device,
            pvReceivedData: dpn::buffer_or_null(&mut data),
            dwReceivedDataSize: data.len() as u32,
            dwMaxResponseDataSize: u32::try_from(room).unwrap_or(u32::MAX),
            pvResponseData: std::ptr::null_mut(),
            dwResponseDataSize: 0,
            pvResponseContext: std::ptr::null_mut(),
        };
        let answer = self.call(DPN_MSGID_ENUM_HOSTS_QUERY, &mut msg) == DPN_OK;
        release(sender);
        release(device);
        let fits = msg.dwResponseDataSize as usize <= room;
        if answer && !fits {
            tracing::debug!(
                bytes = msg.dwResponseDataSize,
                room,
                "ENUM_HOSTS_QUERY's response data is too large: unanswered"
            );
        }
        if answer && fits {
            // SAFETY: the handler's response buffer, `dwResponseDataSize` bytes, valid until
            // RETURN_BUFFER.
            let reply = unsafe { dpn::read_bytes(msg.pvResponseData, msg.dwResponseDataSize) };
            let _ = self.plain_command(Command::AnswerEnum { from, enum_payload, reply });
        }
        self.return_buffer(msg.pvResponseData, msg.pvResponseContext);
    }

    fn joined(
        &self,
        local: u32,
        host: u32,
        members: Vec<Member>,
        groups: Vec<GroupRow>,
        flags: u32,
        reply: Vec<u8>,
    ) {
        let (connecting, hosting) = {
            let mut st = self.lock();
            st.local = local;
            st.host = host;
            st.desc.flags = flags;
            (st.connecting.take(), st.hosting.take())
        };
        let own_context =
            connecting.as_ref().map(|c| c.player_context).or(hosting.as_ref().map(|h| h.1)).unwrap_or(0);
        // The local player first, then the host, then the others; all in the mirror before
        // CONNECT_COMPLETE, so the game may send from it at once.
        let mut members = members;
        members.sort_by_key(|m| (!m.is_local, !m.is_host, m.dpnid.0));
        let ids: Vec<u32> = members.iter().map(|m| m.dpnid.0).collect();
        {
            let mut st = self.lock();
            for m in members {
                let context = if m.is_local { own_context } else { 0 };
                st.players.entry(m.dpnid.0).or_insert(Player { member: m, context });
            }
        }
        if let Some(c) = connecting {
            self.connect_complete(c, DPN_OK, reply, local);
        }
        for dpnid in ids {
            self.announce_player(dpnid);
        }
        for g in groups {
            self.create_group(g);
        }
        if let Some((tx, _)) = hosting {
            let _ = tx.send(DPN_OK);
        }
    }

    /// The session ended: CONNECT_COMPLETE for a join under way, else TERMINATE_SESSION with
    /// the host's data (DestroyPeer's `pvDestroyData`, TerminateSession's `pvTerminateData`).
    fn ended(&self, reason: EndReason, reply: Vec<u8>, mut terminate_data: Vec<u8>) {
        let connecting = self.lock().connecting.take();
        if let Some(c) = connecting {
            let result = match reason {
                EndReason::Refused(code) => code.0 as i32,
                EndReason::NoAnswer => DPNERR_NORESPONSE,
                _ => DPNERR_NOCONNECTION,
            };
            self.connect_failed(c, result, reply);
            return;
        }
        let result = match reason {
            EndReason::Left => return,
            EndReason::Terminated => DPNERR_HOSTTERMINATEDSESSION,
            _ => DPNERR_CONNECTIONLOST,
        };
        let mut msg = DPNMSG_TERMINATE_SESSION {
            dwSize: size_of::<DPNMSG_TERMINATE_SESSION>() as u32,
            hResultCode: result,
            pvTerminateData: dpn::buffer_or_null(&mut terminate_data),
            dwTerminateDataSize: terminate_data.len() as u32,
        };
        self.call(DPN_MSGID_TERMINATE_SESSION, &mut msg);
    }
}

/// What an EnumHosts looks for, and how.
pub(crate) struct Search {
    /// Only hosts of this application answer.
    pub(crate) application: Option<Uuid>,
    /// A host, or the broadcast address.
    pub(crate) target: SocketAddr,
    /// The device address (our port).
    pub(crate) device: Option<DirectPlayUrl>,
    /// EnumQuery sends.
    pub(crate) count: u32,
    /// Between them.
    pub(crate) retry: Duration,
    /// The game's enum data (EnumQuery `ApplicationPayload`).
    pub(crate) payload: Vec<u8>,
}

/// Releases a COM reference (null: nothing).
pub(crate) fn release(p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: `p` is a live COM object we hold a reference on; Release is slot 2.
        unsafe {
            let vtbl = *p.cast::<*const crate::com::IUnknownVtbl>();
            ((*vtbl).release)(p);
        }
    }
}
