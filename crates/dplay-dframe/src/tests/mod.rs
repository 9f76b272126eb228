//! State-machine tests as exchanges of typed frames, each naming its spec section.

mod data;
mod handshake;
mod lifecycle;
mod signing;
mod tracked;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_wire::Wire;
use dplay_wire::dp8::cframe::{Cframe, ConnectFields, Masks, Sack};
use dplay_wire::dp8::dframe::{Dframe, DframeCommand, DframeContext, DframeControl, DframeHeader};

use crate::{Config, Endpoint, Event};

pub(crate) const PEER: &str = "192.0.2.7:2302";
pub(crate) const SESS: u32 = 0x79C9_AEC6;

pub(crate) fn peer() -> SocketAddr {
    PEER.parse().unwrap()
}

/// A time origin: the sim's virtual clock base, so this crate never reads a clock itself.
pub(crate) fn origin() -> Instant {
    dplay_sim::Sim::new(0).now()
}

pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What the endpoint sent, decoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Sent {
    C(Cframe),
    D(Dframe),
}

impl Sent {
    #[track_caller]
    pub(crate) fn cframe(&self) -> &Cframe {
        match self {
            Self::C(c) => c,
            Self::D(d) => panic!("expected a CFRAME, got {d:?}"),
        }
    }

    #[track_caller]
    pub(crate) fn dframe(&self) -> &Dframe {
        match self {
            Self::D(d) => d,
            Self::C(c) => panic!("expected a DFRAME, got {c:?}"),
        }
    }

    #[track_caller]
    pub(crate) fn sack(&self) -> &Sack {
        match self.cframe() {
            Cframe::Sack(s) => s,
            other => panic!("expected a SACK, got {other:?}"),
        }
    }
}

/// One endpoint under test and a scripted peer.
pub(crate) struct Harness {
    pub(crate) ep: Endpoint,
    pub(crate) now: Instant,
    pub(crate) ctx: DframeContext,
}

impl Harness {
    pub(crate) fn new(config: Config) -> Self {
        let now = origin();
        Self { ep: Endpoint::new(config, now), now, ctx: DframeContext::default() }
    }

    /// Everything sent since the last call, decoded.
    #[track_caller]
    pub(crate) fn sent(&mut self) -> Vec<Sent> {
        let mut out = Vec::new();
        while let Some(t) = self.ep.poll_transmit() {
            assert_eq!(t.destination, peer());
            out.push(if t.contents.first().is_some_and(|b| b & 1 == 1) {
                let (header, payload) = DframeHeader::parse(&t.contents, self.ctx).unwrap();
                Sent::D(Dframe { header, payload: dplay_wire::Blob::new(payload) })
            } else {
                Sent::C(Cframe::parse(&t.contents).unwrap())
            });
        }
        out
    }

    pub(crate) fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.ep.poll_event()).collect()
    }

    /// Moves the clock forward by `d`, firing every timer due on the way.
    pub(crate) fn advance(&mut self, d: Duration) {
        let target = self.now + d;
        while let Some(at) = self.ep.poll_timeout().filter(|&at| at <= target) {
            self.now = at.max(self.now);
            self.ep.handle_timeout(self.now);
        }
        self.now = target;
    }

    /// Runs until the next timer and returns how long that was.
    #[track_caller]
    pub(crate) fn next_timer(&mut self) -> Duration {
        let at = self.ep.poll_timeout().expect("a timer");
        let waited = at - self.now;
        self.now = at;
        self.ep.handle_timeout(at);
        waited
    }

    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.ep.handle_datagram(self.now, peer(), bytes);
    }

    pub(crate) fn feed_c(&mut self, frame: Cframe) {
        self.feed(&frame.to_vec().unwrap());
    }

    pub(crate) fn feed_d(&mut self, header: DframeHeader, payload: &[u8]) {
        let frame = Dframe { header, payload: dplay_wire::Blob::new(payload) };
        self.feed(&frame.to_vec().unwrap());
    }
}

pub(crate) fn connect_fields(
    poll: bool,
    msg_id: u8,
    rsp_id: u8,
    version: u32,
    sess_id: u32,
) -> ConnectFields {
    ConnectFields { poll, msg_id, rsp_id, protocol_version: version, sess_id, timestamp: 0 }
}

/// A data DFRAME header from the peer.
pub(crate) fn data(command: DframeCommand, seq: u8, n_rcv: u8) -> DframeHeader {
    DframeHeader {
        command: command | DframeCommand::DATA,
        control: DframeControl::empty(),
        seq,
        n_rcv,
        masks: Masks::default(),
        signature: None,
        sess_id: None,
    }
}

pub(crate) const WHOLE: DframeCommand = DframeCommand::NEW_MSG.union(DframeCommand::END_MSG);
pub(crate) const REL_SEQ: DframeCommand =
    WHOLE.union(DframeCommand::RELIABLE).union(DframeCommand::SEQUENTIAL);

/// An endpoint that accepted a connection from the scripted peer at `version` and has sent
/// (and had acknowledged) its opening KeepAlive, seq 0; the peer's KeepAlive, seq 0, is in.
pub(crate) fn established(config: Config, version: u32) -> Harness {
    established_on(Harness::new(config), version)
}

/// [`established`], on a harness made beforehand (with a memory budget, say).
pub(crate) fn established_on(mut h: Harness, version: u32) -> Harness {
    h.ctx.keepalive_sess_id = version >= crate::COALESCE_VERSION;
    h.feed_c(Cframe::Connect(connect_fields(true, 0, 0, version, SESS)));
    h.sent();
    h.advance(ms(20));
    h.feed_c(Cframe::Connected(connect_fields(false, 1, 0, version, SESS)));
    assert!(matches!(h.events()[..], [Event::Connected { outbound: false, .. }]));
    let sent = h.sent();
    assert_eq!(sent.len(), 1, "the opening KeepAlive");
    let mut ka = data(REL_SEQ | DframeCommand::POLL, 0, 1);
    if h.ctx.keepalive_sess_id {
        ka.control = DframeControl::KEEPALIVE_OR_CORRELATE;
        ka.sess_id = Some(SESS);
    }
    h.feed_d(ka, &[]);
    let acks = h.sent();
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].sack().n_rcv, 1);
    h
}
