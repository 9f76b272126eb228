//! Fast packet signing (MC-DPL8R 2.2.1.3, 3.1.4.4, 3.1.5.1.3, 3.1.5.2.7): the signed
//! handshake with CONNECTED_SIGNED, the listener's stateless cookie, and the secrets every
//! DFRAME, SACK and HARD_DISCONNECT of a signed connection carries.
//!
//! Full signing is refused: MC-DPL8R never says how the secret modifier is derived from a
//! payload (INDEX F-9), so a connection asking for it fails at once (docs/decisions.md).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_wire::dp8::cframe::{Cframe, ConnectedSigned, SigningOpts};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha1::{Digest, Sha1};

use crate::config::Config;
use crate::connection::{Connection, Out, Phase};
use crate::event::DisconnectReason;
use crate::handshake::version_ok;
use crate::stats::DropReason;

/// The first protocol version that signs; a signing side ignores lower versions (MC-DPL8R
/// 2.2.1.1-2.2.1.3).
pub const SIGNING_VERSION: u32 = 0x0001_0006;

/// True for a version a signing side talks to: major 1, minor 6 or later (MC-DPL8R 2.2.1.1-3:
/// "MUST be ignored if the recipient is using signing but the minor version number is less
/// than 0x0006").
pub(crate) fn signing_version_ok(version: u32) -> bool {
    version_ok(version) && version & 0xFFFF >= SIGNING_VERSION & 0xFFFF
}

/// Bytes `ullSignature` adds to a DFRAME header (MC-DPL8R 2.2.2).
pub(crate) const SIGNATURE_LEN: usize = 8;

/// How long one listener cookie secret lasts; a cookie of the previous period is still taken,
/// so a confirmation is accepted for 64 to 128 s after the CONNECTED_SIGNED it echoes.
const COOKIE_PERIOD: Duration = Duration::from_secs(64);

/// The endpoint's signing: what it asks of the peers it connects to and requires of the peers
/// that connect to it (MC-DPL8R 1.7: both sides must sign, or neither).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Signing {
    /// Neither: CONNECT is answered with CONNECTED.
    #[default]
    Off,
    /// Fast signing (`PACKET_SIGNING_FAST`): CONNECT is answered with CONNECTED_SIGNED, and
    /// every frame carries the sender's secret.
    Fast,
}

/// A signing mode a peer asked for, as [`DisconnectReason::SigningRequired`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SigningMode {
    /// `PACKET_SIGNING_FAST` (DPNSESSION_FAST_SIGNED).
    Fast,
    /// `PACKET_SIGNING_FULL` (DPNSESSION_FULL_SIGNED): not implemented (INDEX F-9).
    Full,
}

impl std::fmt::Display for SigningMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Fast => "fast signing (PACKET_SIGNING_FAST)",
            Self::Full => "full signing (PACKET_SIGNING_FULL), which MC-DPL8R does not specify fully",
        })
    }
}

impl SigningMode {
    fn of(opts: SigningOpts) -> Self {
        if opts == SigningOpts::PACKET_SIGNING_FAST { Self::Fast } else { Self::Full }
    }
}

/// The secrets of a fast-signed connection (MC-DPL8R 3.1.1 Local/Remote Secrets).
#[derive(Debug, Clone)]
pub(crate) struct FastSigning {
    /// Our `ullSignature` on every frame we send: `ullSenderSecret` when we connected out,
    /// `ullReceiverSecret` when we accepted (MC-DPL8R 3.1.4.4).
    pub(crate) local: u64,
    /// What every frame from the peer must carry (MC-DPL8R 3.1.5.2.7).
    pub(crate) remote: u64,
    /// Connector: our CONNECTED_SIGNED confirmation, sent again each time the retry timer
    /// fires until the listener (which keeps no state before it) shows it got it by a valid
    /// frame (MC-DPL8R 3.1.5.1.3: the KeepAlive "prompts" it).
    pub(crate) confirmation: Option<ConnectedSigned>,
}

impl FastSigning {
    /// A connector's two fresh non-zero secrets (MC-DPL8R 2.2.1.3).
    pub(crate) fn draw(rng: &mut ChaCha8Rng) -> Self {
        Self { local: rng.gen_range(1..=u64::MAX), remote: rng.gen_range(1..=u64::MAX), confirmation: None }
    }

    /// True when `signature` is the peer's secret; a missing one never is.
    pub(crate) fn accepts(&self, signature: Option<u64>) -> bool {
        signature == Some(self.remote)
    }
}

/// The listener's `ullConnectSig` cookies: SHA-1 over a secret key, the period, the source
/// address and `dwSessID`, as MC-DPL8R 3.1.5.1.3 recommends, so the listener keeps no state for
/// a CONNECT.
#[derive(Debug)]
pub(crate) struct Cookies {
    key: [u8; 16],
}

impl Cookies {
    /// A key from its own RNG stream, so drawing it leaves the endpoint's `dwSessID` sequence
    /// unchanged.
    pub(crate) fn new(seed: u64) -> Self {
        Self { key: ChaCha8Rng::seed_from_u64(seed ^ 0xC00C_1E5E_C2E7_0001).r#gen() }
    }

    fn at(&self, period: u64, from: SocketAddr, sess_id: u32) -> u64 {
        let mut h = Sha1::new();
        h.update(self.key);
        h.update(period.to_le_bytes());
        match from.ip() {
            std::net::IpAddr::V4(ip) => h.update(ip.octets()),
            std::net::IpAddr::V6(ip) => h.update(ip.octets()),
        }
        h.update(from.port().to_le_bytes());
        h.update(sess_id.to_le_bytes());
        let digest = h.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
        u64::from_le_bytes(first)
    }

    fn period(elapsed: Duration) -> u64 {
        elapsed.as_secs() / COOKIE_PERIOD.as_secs()
    }

    /// The cookie for a CONNECT from `from` now.
    pub(crate) fn issue(&self, elapsed: Duration, from: SocketAddr, sess_id: u32) -> u64 {
        self.at(Self::period(elapsed), from, sess_id)
    }

    /// True when `cookie` is one we issued to `from` for `sess_id` in this period or the last.
    pub(crate) fn check(&self, elapsed: Duration, from: SocketAddr, sess_id: u32, cookie: u64) -> bool {
        let now = Self::period(elapsed);
        [Some(now), now.checked_sub(1)].into_iter().flatten().any(|p| self.at(p, from, sess_id) == cookie)
    }
}

/// What a listener that requires signing checks in a connector's CONNECTED_SIGNED before it
/// allocates the connection (MC-DPL8R 3.1.5.1.3): POLL clear, a signing version, FAST (the
/// only mode we sign with), non-zero secrets. The cookie is checked by the caller.
pub(crate) fn confirmation_ok(s: &ConnectedSigned) -> Result<(), DropReason> {
    if s.fields.poll {
        return Err(DropReason::HandshakeRule);
    }
    if !signing_version_ok(s.fields.protocol_version) {
        return Err(DropReason::BadVersion);
    }
    if s.signing_opts != SigningOpts::PACKET_SIGNING_FAST {
        return Err(DropReason::SigningMismatch);
    }
    if s.sender_secret == 0 || s.receiver_secret == 0 {
        return Err(DropReason::HandshakeRule);
    }
    Ok(())
}

impl Connection {
    /// A CONNECTED_SIGNED on this connection (MC-DPL8R 3.1.5.1.3). As connector in the
    /// handshake: a listener that signs FAST while we do too establishes us and gets our
    /// confirmation; one that asks for a mode we do not use ends the attempt at once
    /// ([`DisconnectReason::SigningRequired`]) instead of leaving it to time out. Once
    /// established, the listener's repeated reply gets our confirmation again.
    pub(crate) fn handle_connected_signed(
        &mut self,
        now: Instant,
        cfg: &Config,
        s: &ConnectedSigned,
        out: &mut Out<'_>,
    ) {
        if s.fields.sess_id != self.sess_id {
            self.stats.drops.add(DropReason::BadSessionId);
            return;
        }
        if !version_ok(s.fields.protocol_version) {
            self.stats.drops.add(DropReason::BadVersion);
            return;
        }
        // Only the listener's reply (POLL set) concerns a connector; the listener side of a
        // connection ignores repeated confirmations.
        if !self.outbound || !s.fields.poll {
            self.stats.drops.add(DropReason::HandshakeRule);
            return;
        }
        match self.phase {
            Phase::Handshake => {
                self.stats.received(48);
                let wanted = self.signing.is_some();
                if !wanted || s.signing_opts != SigningOpts::PACKET_SIGNING_FAST {
                    self.finish(DisconnectReason::SigningRequired(SigningMode::of(s.signing_opts)), out);
                    return;
                }
                if !signing_version_ok(s.fields.protocol_version) {
                    self.stats.drops.add(DropReason::BadVersion);
                    return;
                }
                self.peer_version = s.fields.protocol_version;
                self.handshake.peer_msg_id = s.fields.msg_id;
                let confirmation = self.confirmation(now, cfg, s);
                self.emit_cframe(&Cframe::ConnectedSigned(confirmation), out);
                if let Some(signing) = self.signing.as_mut() {
                    signing.confirmation = Some(confirmation);
                }
                self.handshake_rtt(now, s.fields.rsp_id);
                self.establish(now, cfg, out);
            }
            Phase::Established | Phase::Lingering if self.signing.is_some() => {
                self.stats.received(48);
                if let Some(c) = self.signing.as_ref().and_then(|s| s.confirmation) {
                    self.emit_cframe(&Cframe::ConnectedSigned(c), out);
                }
            }
            _ => self.stats.drops.add(DropReason::HandshakeRule),
        }
    }

    /// The connector's CONNECTED_SIGNED: POLL clear, the cookie echoed, our two secrets, FAST,
    /// and the listener's `tTimestamp` echoed (MC-DPL8R 2.2.1.3).
    fn confirmation(&mut self, now: Instant, cfg: &Config, s: &ConnectedSigned) -> ConnectedSigned {
        let msg_id = self.msg_id;
        self.msg_id = msg_id.wrapping_add(1);
        let (local, remote) = self.signing.as_ref().map_or((0, 0), |g| (g.local, g.remote));
        ConnectedSigned {
            fields: dplay_wire::dp8::cframe::ConnectFields {
                poll: false,
                msg_id,
                rsp_id: s.fields.msg_id,
                protocol_version: cfg.protocol_version,
                sess_id: self.sess_id,
                timestamp: self.timestamp(now),
            },
            connect_sig: s.connect_sig,
            sender_secret: local,
            receiver_secret: remote,
            signing_opts: SigningOpts::PACKET_SIGNING_FAST,
            echo_timestamp: s.fields.timestamp,
        }
    }

    /// Our `ullSignature`, on a signed connection.
    pub(crate) fn signature(&self) -> Option<u64> {
        self.signing.as_ref().map(|s| s.local)
    }

    /// Checks a received frame's `ullSignature` (MC-DPL8R 3.1.5.2.7): false (counted) when the
    /// connection signs and the frame does not carry the peer's secret. The first valid frame
    /// also tells a connector its confirmation arrived.
    pub(crate) fn signature_ok(&mut self, signature: Option<u64>) -> bool {
        let Some(signing) = self.signing.as_mut() else { return true };
        if !signing.accepts(signature) {
            self.stats.drops.add(DropReason::BadSignature);
            return false;
        }
        signing.confirmation = None;
        true
    }

    /// Connector: sends the CONNECTED_SIGNED confirmation again while the listener has not
    /// shown it has the connection (called each time the retry timer fires).
    pub(crate) fn repeat_confirmation(&mut self, out: &mut Out<'_>) {
        if let Some(c) = self.signing.as_ref().and_then(|s| s.confirmation) {
            self.emit_cframe(&Cframe::ConnectedSigned(c), out);
        }
    }
}
