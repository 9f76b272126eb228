//! Which flows of a capture carry DirectPlay, learnt from the whole capture before decoding
//! (a first pass), so that a flow is read the same way from its first datagram to its last.
//!
//! * DirectPlay 8 runs over UDP only (MC-DPL8R 1; MC-DPLHP 1.9). Its lead bytes are common in
//!   other protocols, so a flow (a pair of UDP endpoints) is DirectPlay 8 when it carries a
//!   message no other protocol sends by chance: a CONNECT or CONNECTED CFRAME with protocol
//!   major version 1 (MC-DPL8R 2.2.1.1), an EnumResponse (MC-DPLHP 2.2.2), or an EnumQuery to
//!   the enumeration port 6073 (MC-DPLHP 2.2.1). Elsewhere, lead bytes alone count on UDP 6073
//!   and 2302-2400 (DirectPlay 8's defaults) or, with `--any-port`, on every port. A flow with a
//!   CONNECTED_SIGNED is signed: its DFRAMEs carry `ullSignature` (MC-DPL8R 2.2.1.3, 2.2.2). So
//!   is a flow whose SACK or HARD_DISCONNECT carries one, which their fixed lengths show
//!   (2.2.1.5, 2.2.1.4): how a capture that starts after the handshake is read right. A
//!   CONNECTED or a SACK without one shows the flow unsigned; with neither, its signing is
//!   unknown and its DFRAMEs are read as unsigned ([`Flows::signing_unknown`]; docs/decisions.md).
//! * DirectPlay 4 system messages carry 'play' at offset 20 on any port and either transport
//!   (MC-DPL4CS 2.2.6). Its player messages do not (2.2.45): on TCP the stream decides
//!   ([`crate::stream`]); a UDP datagram is a player message when both hosts were seen speaking
//!   DirectPlay 4 and it uses an endpoint that carried a system message or the service
//!   provider's port range 2300-2400 on both sides (MC-DPL4CS 1.9; decision in
//!   docs/decisions.md). A datagram that holds a Flight Simulator add-on packet after the two
//!   IDs is one too, wherever it was captured.
//! * Player messages carry `idFrom` and `idTo` unless a session description in the capture has
//!   DPSESSION_NOMESSAGEID (MC-DPL4CS 2.2.45, 2.2.5); with DPSESSION_DIRECTPLAYPROTOCOL, the
//!   UDP datagrams without 'play' are MC-DPL4R frames (MC-DPL4CS 3.1.4.16).
//! * The add-on dialect: FS2004 when the capture carries FS2004's application GUID
//!   (FS-MULTIPLAYER.md 2), FS98 otherwise.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};

use dplay_addon::Dialect;
use dplay_wire::datagram::{Kind, classify};
use dplay_wire::dp4::message::Dp4Body;
use dplay_wire::dp4::player_message::IDS_LEN;
use dplay_wire::dp4::session::SessionFlags;
use dplay_wire::dp8::cframe::Cframe;
use dplay_wire::dp8::enumeration::EnumMessage;
use dplay_wire::{Datagram, Family, parse_datagram};

use crate::addon_view;
use crate::message::{Carrier, Message};
use crate::net::{Segment, Transport};

/// FS2004's application GUID as it appears on the wire (FS-MULTIPLAYER.md 2).
const GUID_FS9_WIRE: [u8; 16] =
    [0xA5, 0xCA, 0x08, 0x08, 0x2C, 0xE6, 0x91, 0x46, 0x89, 0x57, 0x5D, 0x45, 0x24, 0xB9, 0x22, 0xDA];

/// DirectPlay 8's enumeration port (MC-DPLHP 1.9).
const DP8_ENUM_PORT: u16 = 6073;

/// DirectPlay 8's enumeration port and default game ports (MC-DPLHP 1.9; INDEX B.8).
fn dp8_port(port: u16) -> bool {
    port == DP8_ENUM_PORT || (2302..=2400).contains(&port)
}

/// The DirectPlay 4 service provider's port range (MC-DPL4CS 1.9).
fn dp4_port(port: u16) -> bool {
    (2300..=2400).contains(&port)
}

/// A UDP flow: its two endpoints, in a fixed order.
type FlowKey = (SocketAddr, SocketAddr);

fn flow(a: SocketAddr, b: SocketAddr) -> FlowKey {
    if a <= b { (a, b) } else { (b, a) }
}

fn unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !(v4.is_broadcast() || v4.is_multicast() || v4.is_unspecified()),
        IpAddr::V6(v6) => !(v6.is_multicast() || v6.is_unspecified()),
    }
}

/// What the first pass learnt.
#[derive(Debug, Default)]
pub(crate) struct Flows {
    dp8: HashSet<FlowKey>,
    /// DirectPlay 8 flows whose handshake was signed (a CONNECTED_SIGNED, MC-DPL8R 2.2.1.3).
    dp8_signed: HashSet<FlowKey>,
    /// Flows with a SACK or HARD_DISCONNECT carrying `ullSignature`: signed, once the flow is
    /// DirectPlay 8 on other grounds (a lookalike proves nothing by itself).
    dp8_signed_seen: HashSet<FlowKey>,
    /// DirectPlay 8 flows seen unsigned: a CONNECTED, or a SACK or HARD_DISCONNECT without it.
    dp8_unsigned: HashSet<FlowKey>,
    dp4_hosts: HashSet<IpAddr>,
    dp4_endpoints: HashSet<SocketAddr>,
    /// FS2004 when its GUID was seen, FS98 otherwise.
    pub(crate) dialect: Dialect,
    /// Whether DirectPlay 4 player messages carry `idFrom` and `idTo`.
    pub(crate) ids: bool,
    /// Whether a DirectPlay 4 session runs MC-DPL4R (DPSESSION_DIRECTPLAYPROTOCOL).
    reliable: bool,
    any_port: bool,
}

/// The session flags a DirectPlay 4 message describes, if it carries a DPSESSIONDESC2
/// (MC-DPL4CS 2.2.5).
fn session_flags(d: &Datagram) -> Option<SessionFlags> {
    let Datagram::Dp4(m) = d else { return None };
    Some(match &m.body {
        Dp4Body::EnumSessionsReply(r) => r.session_desc.flags,
        Dp4Body::EnumPlayersReply(r) => r.session_desc.flags,
        Dp4Body::SuperEnumPlayersReply(r) => r.session_desc.flags,
        Dp4Body::SessionDescChanged(c) => c.session_desc.flags,
        _ => return None,
    })
}

/// Whether `payload` is a player message in its datagram form carrying a Flight Simulator
/// add-on packet (the FS98 dialect over DirectPlay 4: `idFrom`, `idTo`, then a packet whose
/// header fits, FS-MULTIPLAYER.md 1.1), and not a DirectPlay 8 DFRAME carrying one: found this
/// way even when the capture missed the session's start.
fn dp4_addon_datagram(payload: &[u8]) -> bool {
    let dp4 = payload.get(IDS_LEN..).and_then(|p| addon_view::find(p, Dialect::Fs98)).is_some();
    let dp8 = || {
        Message::parse(payload, Carrier::Datagram, true)
            .is_ok_and(|m| m.app_payloads().iter().any(|p| addon_view::find(p, Dialect::Fs98).is_some()))
    };
    dp4 && !dp8()
}

/// What a DirectPlay 8 message says of its connection's signing (MC-DPL8R 2.2.1.2-2.2.1.5):
/// `Some(true)` signed, `Some(false)` unsigned, `None` nothing.
fn signing(d: &Datagram) -> Option<bool> {
    match d {
        Datagram::Cframe(Cframe::ConnectedSigned(_)) => Some(true),
        Datagram::Cframe(Cframe::Connected(_)) => Some(false),
        Datagram::Cframe(Cframe::Sack(s)) => Some(s.signature.is_some()),
        Datagram::Cframe(Cframe::HardDisconnect(h)) => Some(h.signature.is_some()),
        _ => None,
    }
}

/// Whether a DirectPlay 8 message could only be DirectPlay 8 (see the module documentation).
fn proves_dp8(d: &Datagram, dst_port: u16) -> bool {
    match d {
        Datagram::Cframe(Cframe::Connect(c) | Cframe::Connected(c)) => c.protocol_version >> 16 == 1,
        Datagram::Cframe(Cframe::ConnectedSigned(s)) => s.fields.protocol_version >> 16 == 1,
        Datagram::Enum(EnumMessage::Response(_)) => true,
        Datagram::Enum(EnumMessage::Query(_)) => dst_port == DP8_ENUM_PORT,
        _ => false,
    }
}

impl Flows {
    /// Learns from every segment of a capture.
    pub(crate) fn learn<'a>(segments: impl IntoIterator<Item = Segment<'a>>, any_port: bool) -> Self {
        let mut flows = Self { any_port, ids: true, ..Self::default() };
        for seg in segments {
            let signed = classify(seg.payload) == Kind::Dp4Message;
            if signed {
                if let Ok(d) = parse_datagram(seg.payload) {
                    let flags = session_flags(&d).unwrap_or(SessionFlags::empty());
                    flows.ids &= !flags.contains(SessionFlags::NO_MESSAGE_ID);
                    flows.reliable |= flags.contains(SessionFlags::DIRECTPLAY_PROTOCOL);
                    for ip in [seg.src.ip(), seg.dst.ip()].into_iter().filter(|&ip| unicast(ip)) {
                        flows.dp4_hosts.insert(ip);
                    }
                    if seg.transport == Transport::Udp {
                        flows.dp4_endpoints.insert(seg.src);
                    }
                }
                continue;
            }
            if seg.transport == Transport::Tcp || classify(seg.payload).family() != Some(Family::Dp8) {
                continue;
            }
            if let Ok(d) = parse_datagram(seg.payload) {
                if proves_dp8(&d, seg.dst.port()) {
                    flows.dp8.insert(flow(seg.src, seg.dst));
                }
                let seen = match signing(&d) {
                    Some(true) if matches!(d, Datagram::Cframe(Cframe::ConnectedSigned(_))) => {
                        Some(&mut flows.dp8_signed)
                    }
                    Some(true) => Some(&mut flows.dp8_signed_seen),
                    Some(false) => Some(&mut flows.dp8_unsigned),
                    None => None,
                };
                if let Some(set) = seen {
                    set.insert(flow(seg.src, seg.dst));
                }
                if seg.payload.windows(GUID_FS9_WIRE.len()).any(|w| w == GUID_FS9_WIRE) {
                    flows.dialect = Dialect::Fs2004;
                }
            }
        }
        flows
    }

    /// Whether nothing in the capture says if this DirectPlay 8 flow is signed (no CONNECTED,
    /// CONNECTED_SIGNED, SACK or HARD_DISCONNECT): its DFRAMEs are read as unsigned.
    pub(crate) fn signing_unknown(&self, seg: &Segment<'_>) -> bool {
        let key = flow(seg.src, seg.dst);
        ![&self.dp8_signed, &self.dp8_signed_seen, &self.dp8_unsigned].iter().any(|set| set.contains(&key))
    }

    /// How to read a datagram of a DirectPlay 8 flow: signed when a SACK or HARD_DISCONNECT
    /// of the flow carried `ullSignature`.
    fn dp8_carrier(&self, key: &FlowKey) -> Carrier {
        if self.dp8_signed_seen.contains(key) { Carrier::Dp8Signed } else { Carrier::Datagram }
    }

    /// How to read a UDP datagram, or `None` when it is not DirectPlay.
    pub(crate) fn udp_carrier(&self, seg: &Segment<'_>) -> Option<Carrier> {
        let kind = classify(seg.payload);
        let key = flow(seg.src, seg.dst);
        if kind != Kind::Dp4Message && self.dp8_signed.contains(&key) {
            return Some(Carrier::Dp8Signed);
        }
        if kind == Kind::Dp4Message {
            return Some(Carrier::Datagram);
        }
        if self.dp8.contains(&key) {
            return Some(self.dp8_carrier(&key));
        }
        let dp4_hosts = self.dp4_hosts.contains(&seg.src.ip()) && self.dp4_hosts.contains(&seg.dst.ip());
        let dp4_ports = self.dp4_endpoints.contains(&seg.src)
            || self.dp4_endpoints.contains(&seg.dst)
            || (dp4_port(seg.src.port()) && dp4_port(seg.dst.port()));
        if dp4_hosts && dp4_ports {
            return Some(if self.reliable { Carrier::Dp4Reliable } else { Carrier::Dp4Datagram });
        }
        if dp4_addon_datagram(seg.payload) {
            return Some(Carrier::Dp4Datagram);
        }
        let dp8_ports = self.any_port || dp8_port(seg.src.port()) || dp8_port(seg.dst.port());
        (kind.family() == Some(Family::Dp8) && dp8_ports).then(|| self.dp8_carrier(&key))
    }
}
