//! A peer shaped as swift's FS9 plugin sends (its `CFs9Client`; FS-MULTIPLAYER.md 3.1-3.6),
//! built byte by byte here, independently of the crate's encoder: a DirectPlay 8 peer whose
//! player data is PLAYER_INFO_STRUCT with flags 6, no join handshake, CHANGE_PLAYER_PLANE once
//! joined, then every 25 ms POSITION_SLEWMODE (`data_size` 36 over 34 bytes, fixed point split
//! as sign and magnitude) and PARAMS, each with its own `packet_index`, all guaranteed.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_addon::Position;
use dplay_session::{Event, SendFlags, Session};
use dplay_sim::{Node, Transmit};

/// swift's per-aircraft timer (`simulatorfs9.cpp`, `CTime(25, ms)`).
pub(crate) const SWIFT_INTERVAL: Duration = Duration::from_millis(25);

/// The aircraft title swift announces.
pub(crate) const SWIFT_TITLE: &str = "Boeing 737-800 Paint1";

/// PLAYER_INFO_STRUCT: dwFlags 6 (PARAMS_RECV | PARAMS_SEND, as swift sends), then the title
/// NUL-filled to 261 bytes, then 3 bytes of padding: 268 in all (FS-MULTIPLAYER.md 3.6).
pub(crate) fn player_info() -> Vec<u8> {
    let mut b = 6u32.to_le_bytes().to_vec();
    b.extend_from_slice(SWIFT_TITLE.as_bytes());
    b.resize(268, 0);
    b
}

fn header(id: u32, data_size: u32) -> Vec<u8> {
    let mut b = id.to_le_bytes().to_vec();
    b.extend_from_slice(&data_size.to_le_bytes());
    b
}

/// CHANGE_PLAYER_PLANE 0x1003: engine 1 (jet, swift's default) and the title.
fn change_player_plane() -> Vec<u8> {
    let size = u32::try_from(4 + SWIFT_TITLE.len() + 1).expect("short");
    let mut b = header(0x1003, size);
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(SWIFT_TITLE.as_bytes());
    b.push(0);
    b
}

/// swift's split of `x` units: the integer part toward zero, the fraction's magnitude in 1/65536
/// (truncated, as its SLEWMODE encoder does; FS-MULTIPLAYER.md 3.4 "Encoding, swift").
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // swift's C casts, in range here
fn split(x: f64) -> (i32, u16) {
    let i = x.trunc();
    (i as i32, ((x - i).abs() * 65536.0) as u16)
}

/// POSITION_SLEWMODE 0x100C as swift writes it: `data_size` 36, 34 bytes (FS-MULTIPLAYER.md 3.3).
/// Level, heading north, airborne: pbh 0xFFFFF000 (`~floor(0)` = −1 in pitch and bank, 3.5).
fn slewmode(index: u32, p: &Position) -> Vec<u8> {
    let (lat_i, lat_f) = split(p.latitude_deg * 10_001_750.0 / 90.0);
    let (lon_hi, lon_lo) = split(p.longitude_deg * 4_294_967_296.0 / 360.0);
    let (alt_i, alt_f) = split(p.altitude_m);
    let mut b = header(0x100C, 36);
    for w in [0, index, 0, 0xFFFF_F000] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    for w in [lat_i, lon_hi, alt_i] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    for w in [lat_f, lon_lo, alt_f] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    assert_eq!(b.len(), 8 + 34);
    b
}

/// PARAMS 0x1000, 28 bytes: gear down (0xA1) and engines on (N1 140), as swift fills them
/// (FS-MULTIPLAYER.md 3.3).
fn params(index: u32) -> Vec<u8> {
    let mut b = header(0x1000, 28);
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&index.to_le_bytes());
    let mut rest = [0u8; 20];
    for (i, v) in rest.iter_mut().enumerate() {
        *v = match i + 8 {
            20..=22 => 0xA1,
            23 | 24 => 140,
            _ => 0,
        };
    }
    b.extend_from_slice(&rest);
    b
}

/// One swift-shaped peer on the simulated network.
pub(crate) struct SwiftPeer {
    pub(crate) session: Session,
    /// Its track ([`crate::common::track`] of this index).
    pub(crate) index: usize,
    origin: Instant,
    next: Option<Instant>,
    packet_index: u32,
    /// Every SLEWMODE sent: its `packet_index` and the true position it carried.
    pub(crate) sent: BTreeMap<u32, Position>,
    /// Stops sending positions when false.
    pub(crate) flying: bool,
}

impl SwiftPeer {
    pub(crate) fn new(session: Session, index: usize, origin: Instant) -> Self {
        Self { session, index, origin, next: None, packet_index: 0, sent: BTreeMap::new(), flying: true }
    }

    fn drain(&mut self, now: Instant) {
        while let Some(e) = self.session.poll_event() {
            if let Event::Joined { .. } = e {
                self.send(now, &change_player_plane());
                self.next = Some(now);
            }
        }
    }

    fn send(&mut self, now: Instant, bytes: &[u8]) {
        // Refused only before joined or after leaving; the scenario checks what arrived.
        let _ = self.session.send_all(now, bytes, SendFlags::RELIABLE_SEQUENTIAL);
    }

    /// One tick of swift's timer: SLEWMODE then PARAMS, each its own index.
    fn tick(&mut self, now: Instant) {
        let p = crate::common::track(self.index, now.duration_since(self.origin));
        let index = self.packet_index;
        self.sent.insert(index, p);
        self.send(now, &slewmode(index, &p));
        self.send(now, &params(index + 1));
        self.packet_index += 2;
    }
}

impl Node for SwiftPeer {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.session.handle_datagram(now, from, data);
        self.drain(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.session.poll_timeout().is_some_and(|t| now >= t) {
            self.session.handle_timeout(now);
        }
        self.drain(now);
        if let Some(at) = self.next.filter(|at| now >= *at) {
            if self.flying && self.session.is_joined() {
                self.tick(now);
            }
            self.next = Some(at + SWIFT_INTERVAL);
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.drain(now);
        self.session.poll_transmit().map(|t| Transmit { destination: t.destination, contents: t.contents })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.session.poll_timeout().into_iter().chain(self.next).min()
    }
}
