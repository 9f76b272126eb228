//! The event loop: one thread, one UDP socket, one protocol.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token, Waker};

use crate::{Direction, Protocol, RuntimeError, Tap};

const SOCKET: Token = Token(0);
const WAKER: Token = Token(1);
/// The largest UDP payload.
const MAX_DATAGRAM: usize = 65_535;

/// How to start a [`Runtime`].
pub struct RuntimeConfig {
    /// The address to bind the UDP socket to (port 0: any free port).
    pub bind: SocketAddr,
    /// Sees every datagram sent and received, if set.
    pub tap: Option<Box<dyn Tap>>,
    /// The network thread's name, for debuggers and logs.
    pub thread_name: String,
}

impl RuntimeConfig {
    /// Binds `bind`, no tap.
    pub fn new(bind: SocketAddr) -> Self {
        Self { bind, tap: None, thread_name: "dplay-net".into() }
    }
}

/// A running network thread driving one protocol. Dropping it stops the thread.
pub struct Runtime<P: Protocol> {
    commands: Sender<P::Command>,
    events: Receiver<P::Event>,
    waker: Arc<Waker>,
    stop: Arc<AtomicBool>,
    local_addr: SocketAddr,
    thread: Option<JoinHandle<Result<(), RuntimeError>>>,
}

impl<P: Protocol> Runtime<P> {
    /// Binds the socket (errors come back here, before any thread starts) and starts the loop.
    pub fn spawn(config: RuntimeConfig, protocol: P) -> Result<Self, RuntimeError> {
        Self::spawn_with(config, |_| protocol)
    }

    /// As [`Runtime::spawn`], making the protocol once the socket is bound: `make` gets the
    /// bound address (a session writes it into its player URL).
    pub fn spawn_with(
        config: RuntimeConfig,
        make: impl FnOnce(SocketAddr) -> P,
    ) -> Result<Self, RuntimeError> {
        let mut socket =
            crate::socket::bind_udp(config.bind).map_err(|e| RuntimeError::bind(config.bind, e))?;
        let local_addr = socket.local_addr()?;
        let protocol = make(local_addr);
        let poll = Poll::new()?;
        poll.registry().register(&mut socket, SOCKET, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let (commands, command_rx) = crossbeam_channel::unbounded();
        let (event_tx, events) = crossbeam_channel::unbounded();
        let stop = Arc::new(AtomicBool::new(false));
        let event_loop = EventLoop {
            poll,
            socket,
            local_addr,
            protocol,
            commands: command_rx,
            events: event_tx,
            stop: Arc::clone(&stop),
            tap: config.tap,
            pending: None,
            writable_interest: false,
        };
        let thread = std::thread::Builder::new().name(config.thread_name).spawn(move || event_loop.run())?;
        Ok(Self { commands, events, waker, stop, local_addr, thread: Some(thread) })
    }

    /// The address the socket is bound to (with the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
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

struct EventLoop<P: Protocol> {
    poll: Poll,
    socket: UdpSocket,
    local_addr: SocketAddr,
    protocol: P,
    commands: Receiver<P::Command>,
    events: Sender<P::Event>,
    stop: Arc<AtomicBool>,
    tap: Option<Box<dyn Tap>>,
    /// A datagram the socket refused with WouldBlock, sent first once it is writable.
    pending: Option<(SocketAddr, Vec<u8>)>,
    writable_interest: bool,
}

impl<P: Protocol> EventLoop<P> {
    fn run(mut self) -> Result<(), RuntimeError> {
        let mut events = Events::with_capacity(64);
        let mut recv_buf = vec![0; MAX_DATAGRAM];
        let mut send_buf = Vec::with_capacity(2048);
        while !self.stop.load(Ordering::Acquire) {
            let timeout = self.protocol.poll_timeout().map(|t| t.saturating_duration_since(Instant::now()));
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
            let readable = events.iter().any(|e| e.token() == SOCKET && e.is_readable());
            if readable {
                self.read_all(&mut recv_buf)?;
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
            self.flush(now, &mut send_buf)?;
            while let Some(event) = self.protocol.poll_event() {
                // The application may have stopped listening; the protocol still runs.
                let _ = self.events.send(event);
            }
            if self.protocol.is_finished() && self.pending.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// Reads until the socket would block, handing each datagram to the protocol.
    fn read_all(&mut self, buf: &mut [u8]) -> Result<(), RuntimeError> {
        loop {
            match self.socket.recv_from(buf) {
                Ok((len, from)) => {
                    let data = buf.get(..len).unwrap_or_default();
                    if let Some(tap) = self.tap.as_mut() {
                        tap.datagram(Direction::Received, self.local_addr, from, data);
                    }
                    self.protocol.handle_datagram(Instant::now(), from, data);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // An ICMP error for an earlier send (port unreachable): the transport's timers
                // notice the silence; nothing to do here.
                Err(e) if is_icmp_error(&e) => tracing::debug!("icmp error on receive: {e}"),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes queued datagrams until the protocol has none or the socket is full.
    fn flush(&mut self, now: Instant, buf: &mut Vec<u8>) -> Result<(), RuntimeError> {
        if let Some((to, data)) = self.pending.take()
            && !self.send(to, &data)?
        {
            self.pending = Some((to, data));
            return self.want_writable(true);
        }
        loop {
            buf.clear();
            let Some(to) = self.protocol.poll_transmit(now, buf) else { break };
            if !self.send(to, buf)? {
                self.pending = Some((to, std::mem::take(buf)));
                return self.want_writable(true);
            }
        }
        self.want_writable(false)
    }

    /// Sends one datagram; `Ok(false)` when the socket would block.
    fn send(&mut self, to: SocketAddr, data: &[u8]) -> Result<bool, RuntimeError> {
        match self.socket.send_to(data, to) {
            Ok(_) => {
                if let Some(tap) = self.tap.as_mut() {
                    tap.datagram(Direction::Sent, self.local_addr, to, data);
                }
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            // Unreachable hosts and the like lose this datagram, as a network would; the
            // protocol's retry and timeout rules handle it.
            Err(e) => {
                tracing::warn!("send to {to} failed: {e}");
                Ok(true)
            }
        }
    }

    fn want_writable(&mut self, writable: bool) -> Result<(), RuntimeError> {
        if writable != self.writable_interest {
            let interest =
                if writable { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
            self.poll.registry().reregister(&mut self.socket, SOCKET, interest)?;
            self.writable_interest = writable;
        }
        Ok(())
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
