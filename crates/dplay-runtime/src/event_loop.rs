//! The event loop: one thread, the sockets of its [`RuntimeConfig`], one protocol.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::bind::{Bound, SocketSpec};
use crate::streams::Streams;
use crate::udp::{Outbox, RecvBuffers};
use crate::{Direction, Path, Protocol, RuntimeError, SocketId, Tap};

/// The waker's token; sockets take `Token(index)`, TCP connections [`crate::streams`] tokens.
const WAKER: Token = Token(usize::MAX);

/// How to start a [`Runtime`].
#[non_exhaustive]
pub struct RuntimeConfig {
    /// The sockets to open, in order: [`SocketId`] `i` is `sockets[i]`. [`RuntimeConfig::new`]
    /// opens one UDP socket.
    pub sockets: Vec<SocketSpec>,
    /// Sees every datagram and TCP read and write, if set.
    pub tap: Option<Box<dyn Tap>>,
    /// The network thread's name, for debuggers and logs; NUL characters are dropped.
    pub thread_name: String,
    /// Bytes a TCP connection may have queued and not yet written; past it the connection is
    /// closed with [`crate::CloseReason::Overflow`], so a peer that does not read cannot make
    /// us hold unbounded memory.
    pub stream_write_limit: usize,
    /// How long opening a TCP connection may take before it counts as failed.
    pub connect_timeout: Duration,
    /// At most this many TCP connections at once, accepted and opened. At the cap a new one
    /// evicts the oldest accepted one that belongs to no known peer, else the longest idle
    /// one we opened; with neither, an accepted one is closed at once and an opening fails.
    pub max_streams: usize,
    /// Deadlines and a per-source cap for accepted TCP connections.
    pub stream_limits: StreamLimits,
}

/// What an accepted TCP connection may hold and for how long (docs/limits.md). A connection
/// belongs to a known peer once the protocol says so ([`crate::StreamStatus::known`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamLimits {
    /// An accepted connection must deliver its first whole message within this.
    pub first_message: Duration,
    /// A connection of no known peer is closed after this long without a whole message.
    pub idle_unknown: Duration,
    /// A message begun on any connection must be complete within this.
    pub partial_message: Duration,
    /// At most this many accepted connections from one source IP; more are closed at once.
    pub max_per_source: usize,
    /// A connection we opened is closed after this long without a read or a write (the next
    /// message opens a new one), so a peer that never closes cannot hold it forever.
    pub idle_opened: Duration,
    /// A connection, accepted or opened, whose peer stops answering (a pulled cable: nothing
    /// closes) fails after about this long, with [`crate::CloseReason::Failed`]: bytes sent
    /// and not acknowledged for this long (`TCP_USER_TIMEOUT`, Linux), or, when idle, this long
    /// since the peer was last heard while keepalive probes go unanswered (docs/decisions.md,
    /// "A silent peer").
    pub silent_peer: Duration,
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            first_message: Duration::from_secs(10),
            idle_unknown: Duration::from_secs(30),
            partial_message: Duration::from_secs(60),
            max_per_source: 16,
            idle_opened: Duration::from_secs(120),
            silent_peer: Duration::from_secs(30),
        }
    }
}

impl RuntimeConfig {
    /// One UDP socket on `bind` (port 0: any free port), no tap.
    pub fn new(bind: SocketAddr) -> Self {
        Self::with_sockets(vec![SocketSpec::udp(bind)])
    }

    /// The sockets of `sockets`, no tap.
    pub fn with_sockets(sockets: Vec<SocketSpec>) -> Self {
        Self {
            sockets,
            tap: None,
            thread_name: "dplay-net".into(),
            stream_write_limit: 8 << 20,
            connect_timeout: Duration::from_secs(5),
            max_streams: 1024,
            stream_limits: StreamLimits::default(),
        }
    }
}

/// A running network thread driving one protocol. Dropping it stops the thread.
pub struct Runtime<P: Protocol> {
    commands: Sender<P::Command>,
    events: Receiver<P::Event>,
    waker: Arc<Waker>,
    stop: Arc<AtomicBool>,
    local_addrs: Vec<SocketAddr>,
    thread: Option<JoinHandle<Result<(), RuntimeError>>>,
}

impl<P: Protocol> Runtime<P> {
    /// Binds the sockets (errors come back here, before any thread starts) and starts the loop.
    pub fn spawn(config: RuntimeConfig, protocol: P) -> Result<Self, RuntimeError> {
        Self::spawn_with(config, |_| protocol)
    }

    /// As [`Runtime::spawn`], making the protocol once the sockets are bound: `make` gets the
    /// first socket's address (a session writes it into its player URL).
    pub fn spawn_with(
        config: RuntimeConfig,
        make: impl FnOnce(SocketAddr) -> P,
    ) -> Result<Self, RuntimeError> {
        Self::try_spawn_with(config, |addrs| {
            addrs.first().copied().map(make).ok_or_else(|| RuntimeError::Protocol("no socket to bind".into()))
        })
    }

    /// As [`Runtime::spawn`], making the protocol once the sockets are bound: `make` gets every
    /// socket's address, by [`SocketId`], and may refuse to start.
    pub fn try_spawn_with(
        config: RuntimeConfig,
        make: impl FnOnce(&[SocketAddr]) -> Result<P, RuntimeError>,
    ) -> Result<Self, RuntimeError> {
        let poll = Poll::new()?;
        let mut sockets = Vec::with_capacity(config.sockets.len());
        let mut local_addrs = Vec::with_capacity(config.sockets.len());
        for (i, spec) in config.sockets.iter().enumerate() {
            let mut bound =
                if spec.on_demand { Bound::Closed(spec.clone()) } else { crate::bind::open(spec)? };
            local_addrs.push(bound.local_addr()?);
            register(&poll, &mut bound, i)?;
            sockets.push(bound);
        }
        let protocol = make(&local_addrs)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let (commands, command_rx) = crossbeam_channel::unbounded();
        let (event_tx, events) = crossbeam_channel::unbounded();
        let stop = Arc::new(AtomicBool::new(false));
        let streams = Streams::new(
            config.stream_write_limit,
            config.connect_timeout,
            config.max_streams,
            config.stream_limits,
            protocol.memory_budget().unwrap_or_default(),
        );
        let event_loop = EventLoop {
            poll,
            sockets,
            local_addrs: local_addrs.clone(),
            protocol,
            commands: command_rx,
            events: event_tx,
            stop: Arc::clone(&stop),
            tap: config.tap,
            outbox: Outbox::new(),
            writable_interest: None,
            streams,
        };
        // A thread name cannot hold NUL (`Builder::spawn` would panic): those are dropped.
        let name = config.thread_name.replace('\0', "");
        let thread = std::thread::Builder::new().name(name).spawn(move || event_loop.run())?;
        Ok(Self { commands, events, waker, stop, local_addrs, thread: Some(thread) })
    }

    /// The address the first socket is bound to (with the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addrs.first().copied().unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// Every socket's address, by [`SocketId`].
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// The address of socket `id`, if the configuration opened it.
    pub fn socket_addr(&self, id: SocketId) -> Option<SocketAddr> {
        self.local_addrs.get(id.0).copied()
    }

    /// Sends a command to the protocol and wakes the loop.
    pub fn command(&self, command: P::Command) -> Result<(), RuntimeError> {
        self.commands.send(command).map_err(|_| RuntimeError::Stopped)?;
        self.waker.wake()?;
        Ok(())
    }

    /// Events from the protocol, in order.
    pub fn events(&self) -> &Receiver<P::Event> {
        &self.events
    }

    /// True while the network thread runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stops the loop and waits for the thread; returns the error that ended it, if any.
    pub fn shutdown(mut self) -> Result<(), RuntimeError> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> Result<(), RuntimeError> {
        self.stop.store(true, Ordering::Release);
        let _ = self.waker.wake();
        match self.thread.take() {
            Some(thread) => thread.join().unwrap_or(Err(RuntimeError::Stopped)),
            None => Ok(()),
        }
    }
}

impl<P: Protocol> Drop for Runtime<P> {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

pub(crate) struct EventLoop<P: Protocol> {
    pub(crate) poll: Poll,
    pub(crate) sockets: Vec<Bound>,
    pub(crate) local_addrs: Vec<SocketAddr>,
    pub(crate) protocol: P,
    commands: Receiver<P::Command>,
    events: Sender<P::Event>,
    stop: Arc<AtomicBool>,
    pub(crate) tap: Option<Box<dyn Tap>>,
    /// Datagrams taken from the protocol and not yet sent; those a socket refused with
    /// WouldBlock stay here, in order, and are sent first once it is writable.
    outbox: Outbox,
    /// The UDP socket registered for writable events, if any.
    writable_interest: Option<SocketId>,
    pub(crate) streams: Streams,
}

/// What one readiness event asks for.
#[derive(Debug, Clone, Copy)]
struct Ready {
    token: Token,
    readable: bool,
    writable: bool,
}

impl<P: Protocol> EventLoop<P> {
    fn run(mut self) -> Result<(), RuntimeError> {
        let mut events = Events::with_capacity(256);
        let mut ready = Vec::with_capacity(256);
        let mut recv_bufs = RecvBuffers::new();
        while !self.stop.load(Ordering::Acquire) {
            let deadline = match (self.protocol.poll_timeout(), self.streams.next_deadline()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let timeout = deadline.map(|t| t.saturating_duration_since(Instant::now()));
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
            ready.clear();
            ready.extend(events.iter().map(|e| Ready {
                token: e.token(),
                readable: e.is_readable() || e.is_read_closed() || e.is_error(),
                writable: e.is_writable() || e.is_write_closed() || e.is_error(),
            }));
            for r in &ready {
                self.dispatch(*r, &mut recv_bufs)?;
            }
            let now = Instant::now();
            loop {
                match self.commands.try_recv() {
                    Ok(command) => self.protocol.handle_command(now, command),
                    Err(TryRecvError::Empty) => break,
                    // Every Runtime handle is gone: nobody can stop us any more, so stop now.
                    Err(TryRecvError::Disconnected) => return Ok(()),
                }
            }
            if self.protocol.poll_timeout().is_some_and(|deadline| deadline <= now) {
                self.protocol.handle_timeout(now);
            }
            while let Some(id) = self.protocol.poll_open() {
                self.open_on_demand(now, id)?;
            }
            while let Some(to) = self.protocol.poll_abandon() {
                self.abandon_streams(now, to)?;
            }
            self.expire_streams(now)?;
            self.flush(now)?;
            while let Some(event) = self.protocol.poll_event() {
                // The application may have stopped listening; the protocol still runs.
                let _ = self.events.send(event);
            }
            if self.protocol.is_finished() && self.outbox.is_empty() && self.streams.all_written() {
                break;
            }
        }
        Ok(())
    }

    /// Opens on-demand socket `id` ([`crate::SocketSpec::on_demand`]) and tells the protocol
    /// where, or why not; one already open is left as it is.
    fn open_on_demand(&mut self, now: Instant, id: SocketId) -> Result<(), RuntimeError> {
        let Some(Bound::Closed(spec)) = self.sockets.get(id.0) else { return Ok(()) };
        let opened = crate::bind::open(spec).and_then(|mut bound| {
            let addr = bound.local_addr()?;
            register(&self.poll, &mut bound, id.0)?;
            Ok((bound, addr))
        });
        match opened {
            Ok((bound, addr)) => {
                if let (Some(slot), Some(local)) =
                    (self.sockets.get_mut(id.0), self.local_addrs.get_mut(id.0))
                {
                    *slot = bound;
                    *local = addr;
                }
                self.protocol.handle_opened(now, id, Ok(addr));
            }
            Err(e) => self.protocol.handle_opened(now, id, Err(e.to_string())),
        }
        Ok(())
    }

    /// Hands one readiness event to the socket or connection it names.
    fn dispatch(&mut self, r: Ready, bufs: &mut RecvBuffers) -> Result<(), RuntimeError> {
        if r.token == WAKER {
            return Ok(());
        }
        if let Some(stream) = crate::streams::stream_of(r.token) {
            return self.stream_ready(stream, r.readable, r.writable, bufs.scratch());
        }
        let id = SocketId(r.token.0);
        match self.sockets.get(id.0) {
            Some(Bound::Udp(_)) if r.readable => self.read_udp(id, bufs),
            Some(Bound::Listener(_)) => self.accept_all(id),
            _ => Ok(()),
        }
    }

    /// Reads until UDP socket `id` would block, in batches ([`RecvBuffers::recv`]), handing
    /// each datagram to the tap and the protocol.
    fn read_udp(&mut self, id: SocketId, bufs: &mut RecvBuffers) -> Result<(), RuntimeError> {
        let Some(Bound::Udp(socket)) = self.sockets.get(id.0) else { return Ok(()) };
        let local = self.local_addrs.get(id.0).copied().unwrap_or_else(|| SocketAddr::from(([0; 4], 0)));
        let (tap, protocol) = (&mut self.tap, &mut self.protocol);
        loop {
            let read = bufs.recv(socket, |from, data| {
                if let Some(tap) = tap.as_mut() {
                    tap.datagram(Direction::Received, local, from, data);
                }
                protocol.handle_udp(Instant::now(), id, from, data);
            });
            match read {
                // A short batch emptied the queue: a datagram arriving after it raises readiness
                // again (mio's readiness is edge-triggered, and every datagram queued is an edge),
                // and an unconnected UDP socket without IP_RECVERR (ours) is given no ICMP error
                // that could have cut the batch short (Linux). So the read that could only say
                // WouldBlock is saved: one system call per socket and wake-up.
                Ok(n) if n < crate::udp::BATCH && cfg!(target_os = "linux") => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // An ICMP error for an earlier send (port unreachable): the transport's timers
                // notice the silence; nothing to do here.
                Err(e) if is_icmp_error(&e) => tracing::debug!("icmp error on receive: {e}"),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes what the protocol queued: datagrams in batches until a socket is full, stream
    /// bytes into their connection's buffer. Nothing more is taken from the protocol while a
    /// datagram waits for its socket.
    fn flush(&mut self, now: Instant) -> Result<(), RuntimeError> {
        loop {
            if !self.send_outbox()? {
                return self.want_writable(self.outbox.blocked_socket());
            }
            while let Some(buf) = self.outbox.slot() {
                buf.clear();
                let Some(transmit) = self.protocol.poll_send(now, buf) else { break };
                match transmit.path {
                    Path::Udp(id) => self.outbox.push(id, transmit.to),
                    Path::Tcp | Path::Stream(_) => {
                        let bytes = self.outbox.slot().map(std::mem::take).unwrap_or_default();
                        match transmit.path {
                            Path::Stream(id) => self.send_on_stream(now, id, &bytes)?,
                            _ => self.send_stream(now, transmit.to, &bytes)?,
                        }
                        if let Some(slot) = self.outbox.slot() {
                            *slot = bytes;
                        }
                    }
                }
            }
            if self.outbox.is_empty() {
                return self.want_writable(None);
            }
        }
    }

    /// Sends the outbox's datagrams in order, each run from one socket with one system call
    /// where the platform allows ([`crate::udp::send`]); `Ok(false)` when a socket would block,
    /// the rest staying queued.
    fn send_outbox(&mut self) -> Result<bool, RuntimeError> {
        while let Some((id, run)) = self.outbox.next_run() {
            let Some(Bound::Udp(socket)) = self.sockets.get(id.0) else {
                tracing::warn!("no UDP socket {} to send from; {} datagrams dropped", id.0, run.len());
                let n = run.len();
                self.outbox.advance(n);
                continue;
            };
            let done = match crate::udp::send(socket, run) {
                Ok(n) => {
                    if let (Some(tap), Some(local)) = (self.tap.as_mut(), self.local_addrs.get(id.0)) {
                        for d in run.iter().take(n) {
                            tap.datagram(Direction::Sent, *local, d.to, &d.data);
                        }
                    }
                    n
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
                // Unreachable hosts and the like lose this datagram, as a network would; the
                // protocol's retry and timeout rules handle it.
                Err(e) => {
                    // Display, not Debug (issue 25 item 8: it said `Some(...)`).
                    let to = run.first().map(|d| d.to.to_string()).unwrap_or_default();
                    tracing::warn!("send to {to} failed: {e}");
                    1
                }
            };
            self.outbox.advance(done);
        }
        Ok(true)
    }

    /// Registers UDP socket `id` (and no other) for writable events.
    fn want_writable(&mut self, id: Option<SocketId>) -> Result<(), RuntimeError> {
        if id == self.writable_interest {
            return Ok(());
        }
        let registry = self.poll.registry();
        for (which, interest) in
            [(self.writable_interest, Interest::READABLE), (id, Interest::READABLE | Interest::WRITABLE)]
        {
            if let Some(SocketId(i)) = which
                && let Some(Bound::Udp(socket)) = self.sockets.get_mut(i)
            {
                registry.reregister(socket, Token(i), interest)?;
            }
        }
        self.writable_interest = id;
        Ok(())
    }
}

/// Registers socket `i` for reads (a closed on-demand socket is not).
fn register(poll: &Poll, bound: &mut Bound, i: usize) -> io::Result<()> {
    match bound {
        Bound::Udp(s) => poll.registry().register(s, Token(i), Interest::READABLE),
        Bound::Listener(l) => poll.registry().register(l, Token(i), Interest::READABLE),
        Bound::Closed(_) => Ok(()),
    }
}

fn is_icmp_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkUnreachable
    )
}

#[cfg(test)]
mod tests;
