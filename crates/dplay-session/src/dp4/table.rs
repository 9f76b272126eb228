//! The Player List (MC-DPL4CS 3.1.1) and its conversions to and from DPLAYI_PACKEDPLAYER and
//! DPLAYI_SUPERPACKEDPLAYER (MC-DPL4CS 2.2.2, 2.2.3).

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_wire::dp4::header::SockAddrIn;
use dplay_wire::dp4::player::{Counted, PackedPlayer, SuperPackedPlayer};
use dplay_wire::dp4::session::PlayerFlags;
use dplay_wire::{Blob, Reader, WideString, Writer};

/// Winsock SPData: stream then datagram SOCKADDR_IN (MC-DPL4CS 2.2.2; INDEX D.17).
pub const SP_DATA_LEN: usize = 2 * SockAddrIn::LEN;

/// One entry of the Player List (MC-DPL4CS 3.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// `Player.ID`.
    pub id: u32,
    /// Flags (SP, NS, PG).
    pub flags: PlayerFlags,
    /// The system player of the instance that owns it (itself for a system player).
    pub system_player_id: u32,
    /// The owning instance's dialect.
    pub version: u32,
    /// `Player.ShortName`.
    pub short_name: Option<WideString>,
    /// `Player.LongName`.
    pub long_name: Option<WideString>,
    /// `Player.GameData`.
    pub player_data: Blob,
    /// The instance's TCP listener and UDP socket (system players; from SPData).
    pub addrs: Option<(SocketAddr, SocketAddr)>,
    /// Whether this endpoint created it.
    pub local: bool,
    /// `Player.ChatterCount`: messages received since the last Ping timer (3.1.1).
    pub chatter: u32,
    /// PINGs sent to it without a reply (3.1.6.2).
    pub missed_pings: u32,
    /// Whether its instance has answered a PING of ours (system players): from then on, a
    /// period of silence through its PINGs removes it (docs/decisions.md, "A silent peer").
    pub answers_pings: bool,
    /// The round trip of our last PING it answered: its PINGREPLY echoes our TickCount
    /// (MC-DPL4CS 2.2.42, 2.2.43). System players only.
    pub round_trip: Option<Duration>,
    /// When [`crate::dp4::Dp4Session::probe_round_trips`] last sent it a PING.
    pub probed_at: Option<Instant>,
}

impl Player {
    /// About what this entry holds, in bytes, as charged to the memory budget: its names and
    /// data plus the record ([`crate::ENTRY_OVERHEAD`]).
    pub fn held_bytes(&self) -> usize {
        let units = |n: &Option<WideString>| n.as_ref().map_or(0, |n| 2 * n.units().len());
        crate::ENTRY_OVERHEAD + units(&self.short_name) + units(&self.long_name) + self.player_data.len()
    }

    /// Whether this is a system player.
    pub fn is_system(&self) -> bool {
        self.flags.contains(PlayerFlags::SYSTEM_PLAYER)
    }

    /// From a PACKEDPLAYER; an SPData address of 0.0.0.0 becomes `seen` (the sender's IP).
    pub fn from_packed(p: &PackedPlayer, seen: IpAddr) -> Self {
        Self {
            id: p.player_id,
            flags: p.flags - PlayerFlags::LOCAL,
            system_player_id: p.system_player_id,
            version: p.player_version,
            short_name: p.short_name.clone(),
            long_name: p.long_name.clone(),
            player_data: p.player_data.clone(),
            addrs: parse_sp_data(&p.sp_data, seen),
            local: false,
            chatter: 0,
            missed_pings: 0,
            answers_pings: false,
            round_trip: None,
            probed_at: None,
        }
    }

    /// From a SUPERPACKEDPLAYER (MC-DPL4CS 2.2.3).
    pub fn from_super(p: &SuperPackedPlayer, seen: IpAddr) -> Self {
        let system = p.flags.contains(PlayerFlags::SYSTEM_PLAYER);
        Self {
            id: p.id,
            flags: p.flags - PlayerFlags::LOCAL,
            system_player_id: if system { p.id } else { p.version_or_system_player_id },
            version: if system { p.version_or_system_player_id } else { 0 },
            short_name: p.short_name.clone(),
            long_name: p.long_name.clone(),
            player_data: p.player_data.as_ref().map(|c| c.value.clone()).unwrap_or_default(),
            addrs: p.sp_data.as_ref().and_then(|c| parse_sp_data(&c.value, seen)),
            local: false,
            chatter: 0,
            missed_pings: 0,
            answers_pings: false,
            round_trip: None,
            probed_at: None,
        }
    }

    /// Flags as sent: PL is set on the players of the sending instance (MC-DPL4CS 2.2.2;
    /// Windows does so, per Wine's dplayx tests).
    fn wire_flags(&self) -> PlayerFlags {
        if self.local { self.flags | PlayerFlags::LOCAL } else { self.flags }
    }

    /// As a PACKEDPLAYER (MC-DPL4CS 2.2.2).
    pub fn to_packed(&self) -> PackedPlayer {
        PackedPlayer {
            flags: self.wire_flags(),
            player_id: self.id,
            system_player_id: self.system_player_id,
            player_version: self.version,
            parent_id: 0,
            short_name: self.short_name.clone(),
            long_name: self.long_name.clone(),
            sp_data: self.sp_data(),
            player_data: self.player_data.clone(),
            player_ids: Vec::new(),
            size_counts_player_ids: false,
        }
    }

    /// As a SUPERPACKEDPLAYER (MC-DPL4CS 2.2.3): the dialect for a system player, else its
    /// system player's ID.
    pub fn to_super(&self) -> SuperPackedPlayer {
        let sp = self.sp_data();
        SuperPackedPlayer {
            flags: self.wire_flags(),
            id: self.id,
            version_or_system_player_id: if self.is_system() { self.version } else { self.system_player_id },
            short_name: self.short_name.clone(),
            long_name: self.long_name.clone(),
            player_data: (!self.player_data.is_empty())
                .then(|| Counted::narrowest(self.player_data.clone(), self.player_data.len())),
            sp_data: (!sp.is_empty()).then(|| Counted::narrowest(sp.clone(), sp.len())),
            player_ids: None,
            parent_id: None,
            shortcut_ids: None,
        }
    }

    fn sp_data(&self) -> Blob {
        self.addrs.map(|(s, d)| sp_data(s, d)).unwrap_or_default()
    }
}

fn v4(addr: SocketAddr) -> SocketAddrV4 {
    match addr {
        SocketAddr::V4(a) => a,
        SocketAddr::V6(a) => {
            SocketAddrV4::new(a.ip().to_ipv4_mapped().unwrap_or(std::net::Ipv4Addr::UNSPECIFIED), a.port())
        }
    }
}

/// Winsock SPData for a stream and a datagram address (MC-DPL4CS 2.2.2).
pub fn sp_data(stream: SocketAddr, datagram: SocketAddr) -> Blob {
    let mut out = vec![0; SP_DATA_LEN];
    if let Ok(mut w) = Writer::new(&mut out, SP_DATA_LEN) {
        SockAddrIn::new(v4(stream)).write(&mut w);
        SockAddrIn::new(v4(datagram)).write(&mut w);
    }
    Blob(out)
}

/// The two addresses of Winsock SPData; 0.0.0.0 becomes `seen`.
pub fn parse_sp_data(data: &[u8], seen: IpAddr) -> Option<(SocketAddr, SocketAddr)> {
    let mut r = Reader::new(data);
    let stream = SockAddrIn::read(&mut r).ok()?;
    let datagram = SockAddrIn::read(&mut r).ok()?;
    Some((resolve(stream.addr, seen), resolve(datagram.addr, seen)))
}

/// Where to answer: the SockAddr as given, its unspecified IP replaced by the one seen
/// (MC-DPL4CS 2.2.6, 3.2.5.3).
pub fn resolve(addr: SocketAddrV4, seen: IpAddr) -> SocketAddr {
    if addr.ip().is_unspecified() { SocketAddr::new(seen, addr.port()) } else { SocketAddr::V4(addr) }
}

/// The Player List, by ID.
pub type PlayerList = BTreeMap<u32, Player>;
