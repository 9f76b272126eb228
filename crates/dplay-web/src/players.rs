//! [`Players`]: the players of a [`crate::Snapshot`], as `/api/players` lists them, built so
//! that the protocol thread does not rebuild a large session's strings at every publish: who
//! the players are (names, DPNIDs and addresses as text, states, join times) is shared between
//! snapshots and rebuilt only when the players change; their connections' numbers (round trip,
//! bytes, retransmissions) are copied afresh each time (docs/PERFORMANCE.md, "The dashboard
//! under 1,000 clients").

use std::net::SocketAddr;
use std::sync::Arc;

use serde::{Serialize, Serializer};

use crate::snapshot::PlayerView;

/// The players of a snapshot, in list order. Serialised as a list of [`PlayerView`]s.
#[derive(Debug, Clone, Default)]
pub struct Players {
    roster: Arc<Roster>,
    /// The numbers read since the roster was built, one per row; `None`: the rows' own.
    links: Option<Vec<LinkNumbers>>,
}

/// Who the players are, shared by every snapshot until they change.
#[derive(Debug, Clone, Default)]
struct Roster {
    rows: Vec<PlayerView>,
    /// Each row's connection, to read its numbers again (empty when not kept).
    addresses: Vec<Option<SocketAddr>>,
    /// What the protocol view compares to tell that the players may have changed.
    key: u64,
}

/// One player's connection numbers, as [`PlayerView`] has them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LinkNumbers {
    pub(crate) rtt_ms: Option<u64>,
    pub(crate) bytes_sent: Option<u64>,
    pub(crate) bytes_received: Option<u64>,
    pub(crate) retransmissions: Option<u64>,
}

impl LinkNumbers {
    fn of(p: &PlayerView) -> Self {
        Self {
            rtt_ms: p.rtt_ms,
            bytes_sent: p.bytes_sent,
            bytes_received: p.bytes_received,
            retransmissions: p.retransmissions,
        }
    }
}

impl Players {
    /// `rows` with, for [`Players::refreshed`], each row's connection and the protocol's key.
    pub(crate) fn with_addresses(
        rows: Vec<PlayerView>,
        addresses: Vec<Option<SocketAddr>>,
        key: u64,
    ) -> Self {
        Self { roster: Arc::new(Roster { rows, addresses, key }), links: None }
    }

    /// The same players with these numbers (one per row, in order), sharing who they are.
    pub(crate) fn refreshed(&self, links: Vec<LinkNumbers>) -> Self {
        Self { roster: self.roster.clone(), links: Some(links) }
    }

    /// The key given to [`Players::with_addresses`].
    pub(crate) fn key(&self) -> u64 {
        self.roster.key
    }

    /// Each row's connection, as given to [`Players::with_addresses`].
    pub(crate) fn addresses(&self) -> &[Option<SocketAddr>] {
        &self.roster.addresses
    }

    /// The rows to complete before the players are shared (a copy if they already are).
    pub(crate) fn rows_mut(&mut self) -> impl Iterator<Item = &mut PlayerView> {
        Arc::make_mut(&mut self.roster).rows.iter_mut()
    }

    /// How many players.
    pub fn len(&self) -> usize {
        self.roster.rows.len()
    }

    /// No players (before the session is hosted).
    pub fn is_empty(&self) -> bool {
        self.roster.rows.is_empty()
    }

    /// Each player as `/api/players` shows it (a copy: the rows are shared).
    pub fn iter(&self) -> impl Iterator<Item = PlayerView> + '_ {
        self.rows().map(|(p, n)| PlayerView {
            rtt_ms: n.rtt_ms,
            bytes_sent: n.bytes_sent,
            bytes_received: n.bytes_received,
            retransmissions: n.retransmissions,
            ..p.clone()
        })
    }

    /// The player with this ID.
    pub fn get(&self, id: u32) -> Option<PlayerView> {
        self.iter().find(|p| p.id == id)
    }

    fn rows(&self) -> impl Iterator<Item = (&PlayerView, LinkNumbers)> + '_ {
        let links = self.links.as_deref().unwrap_or_default();
        self.roster
            .rows
            .iter()
            .enumerate()
            .map(|(i, p)| (p, links.get(i).copied().unwrap_or(LinkNumbers::of(p))))
    }
}

impl From<Vec<PlayerView>> for Players {
    fn from(rows: Vec<PlayerView>) -> Self {
        Self::with_addresses(rows, Vec::new(), 0)
    }
}

impl PartialEq for Players {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// A row as [`PlayerView`] serialises, borrowed: the server writes the list without copying
/// its strings.
#[derive(Serialize)]
struct Row<'a> {
    dpnid: &'a str,
    id: u32,
    name: &'a str,
    address: Option<&'a str>,
    joined_at_s: u64,
    state: &'static str,
    rtt_ms: Option<u64>,
    bytes_sent: Option<u64>,
    bytes_received: Option<u64>,
    retransmissions: Option<u64>,
}

impl Serialize for Players {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.rows().map(|(p, n)| Row {
            dpnid: &p.dpnid,
            id: p.id,
            name: &p.name,
            address: p.address.as_deref(),
            joined_at_s: p.joined_at_s,
            state: p.state,
            rtt_ms: n.rtt_ms,
            bytes_sent: n.bytes_sent,
            bytes_received: n.bytes_received,
            retransmissions: n.retransmissions,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(id: u32, address: Option<&str>, rtt_ms: Option<u64>) -> PlayerView {
        PlayerView {
            dpnid: format!("0x{id:08X}"),
            id,
            name: format!("<b>p{id}</b> \"x\""),
            address: address.map(str::to_owned),
            joined_at_s: 7,
            state: "connected",
            rtt_ms,
            bytes_sent: rtt_ms.map(|r| r * 10),
            bytes_received: rtt_ms.map(|r| r * 20),
            retransmissions: rtt_ms.map(|r| r + 1),
        }
    }

    #[test]
    fn serialises_as_the_list_of_player_views() {
        let views = vec![view(1, None, None), view(2, Some("10.0.0.2:2302"), Some(30))];
        let players = Players::from(views.clone());
        assert_eq!(serde_json::to_string(&players).unwrap(), serde_json::to_string(&views).unwrap());
        assert_eq!(players.iter().collect::<Vec<_>>(), views);
        assert_eq!(serde_json::to_string(&Players::default()).unwrap(), "[]");
    }

    #[test]
    fn refreshed_numbers_replace_the_rows_and_share_the_rest() {
        let players = Players::with_addresses(
            vec![view(1, None, None), view(2, Some("10.0.0.2:2302"), Some(30))],
            vec![None, Some("10.0.0.2:2302".parse().unwrap())],
            9,
        );
        let fresh =
            players.refreshed(vec![LinkNumbers::default(), LinkNumbers::of(&view(2, None, Some(45)))]);
        assert!(Arc::ptr_eq(&players.roster, &fresh.roster));
        assert_eq!((fresh.key(), fresh.addresses().len()), (9, 2));
        let expected = vec![view(1, None, None), view(2, Some("10.0.0.2:2302"), Some(45))];
        assert_eq!(fresh.iter().collect::<Vec<_>>(), expected);
        assert_eq!(serde_json::to_string(&fresh).unwrap(), serde_json::to_string(&expected).unwrap());
        assert_eq!(fresh.get(2).and_then(|p| p.rtt_ms), Some(45));
        assert_eq!(fresh.get(3), None);
    }
}
