//! A cap on the dashboard's open connections: beyond [`MAX_CONNECTIONS`] a new connection
//! waits in the kernel's backlog until one closes, so idle or slow clients hold a bounded
//! number of sockets and buffers.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Connections served at once (more than [`crate::MAX_STREAMS`], so event streams cannot take
/// every one).
pub const MAX_CONNECTIONS: usize = 64;

/// A listener that accepts only while fewer than [`MAX_CONNECTIONS`] are open.
pub(crate) struct Capped {
    inner: TcpListener,
    slots: Arc<Semaphore>,
}

impl Capped {
    pub(crate) fn new(inner: TcpListener) -> Self {
        Self { inner, slots: Arc::new(Semaphore::new(MAX_CONNECTIONS)) }
    }
}

impl Listener for Capped {
    type Io = Held;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Held, SocketAddr) {
        // The semaphore is never closed, so this waits for a slot and never fails.
        let permit = loop {
            if let Ok(p) = self.slots.clone().acquire_owned().await {
                break p;
            }
        };
        let (io, addr) = Listener::accept(&mut self.inner).await;
        (Held { io, _slot: permit }, addr)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A connection that frees its slot when it closes.
pub(crate) struct Held {
    io: TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl AsyncRead for Held {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Held {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
