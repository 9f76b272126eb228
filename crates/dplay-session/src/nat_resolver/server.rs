//! The NAT resolver server (MC-DPLNAT 3.2): answers each NAT_RESOLVER_QUERY with a
//! NAT_RESOLVER_RESPONSE carrying the query's source address and port, XORed with its IDs
//! (2.2.4), to that source and nowhere else.
//!
//! The server answers whoever asks, so a query with a forged source would make it send to a
//! third party. It never amplifies: a response is 14 bytes for a query of at least 8, at most
//! one response per query, and the answers per source address and in total are capped per
//! second ([`ResolverLimits`]; docs/limits.md). Everything it holds is bounded: the sources it
//! counts and the responses waiting to go.

use std::collections::{BTreeMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_wire::Wire;
use dplay_wire::dp8::path_test::{NAT_RESOLVER_QUERY_DATA_KIND, NatResolverQuery, NatResolverResponse};
use dplay_wire::log_limit::LogLimit;

/// The longest `UserData` checked against a [`UserString`]; longer queries are refused.
pub const MAX_USER_DATA: usize = 512;

/// The window the per-source and total answer counts are kept over.
const WINDOW: Duration = Duration::from_secs(1);

/// How often one source's refused queries are logged at most.
const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// The application-specific check of a query's `UserData` (MC-DPLNAT 3.2.5): the query must
/// carry this string. DirectPlay 8 keeps it as a wide string (DPNA_KEY_NAT_RESOLVER_USER_STRING)
/// and MC-DPLNAT does not say how it goes on the wire, so its bytes are accepted as UTF-8 or as
/// UTF-16LE, each with or without one terminating NUL (docs/decisions.md, "NAT resolver").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserString(String);

impl UserString {
    /// The string queries must carry.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// True when `user_data` is this string in one of the accepted encodings.
    pub fn accepts(&self, user_data: &[u8]) -> bool {
        let narrow = user_data.strip_suffix(&[0]).unwrap_or(user_data);
        if narrow == self.0.as_bytes() {
            return true;
        }
        let wide = user_data.strip_suffix(&[0, 0]).unwrap_or(user_data);
        let units = wide
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c.first().copied().unwrap_or(0), c.last().copied().unwrap_or(0)]));
        wide.len().is_multiple_of(2) && units.eq(self.0.encode_utf16())
    }
}

/// What a resolver server holds and answers at most (docs/limits.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolverLimits {
    /// Answers to one source IP address per second; its further queries are dropped.
    pub per_source_per_second: u32,
    /// Answers per second in total.
    pub total_per_second: u32,
    /// Source addresses counted at once; a query from a new one past it is dropped until the
    /// counts of a second ago are forgotten.
    pub max_sources: usize,
    /// Responses queued and not yet sent.
    pub max_queued: usize,
}

impl Default for ResolverLimits {
    fn default() -> Self {
        Self { per_source_per_second: 4, total_per_second: 2000, max_sources: 4096, max_queued: 256 }
    }
}

/// What a resolver server did with the datagrams it was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResolverStats {
    /// Queries answered.
    pub answered: u64,
    /// Datagrams that are not a properly formed NAT_RESOLVER_QUERY (MC-DPLNAT 3.2.5: ignored).
    pub malformed: u64,
    /// Queries whose `UserData` the [`UserString`] refused (MC-DPLNAT 3.2.5: ignored).
    pub refused_user_data: u64,
    /// Queries dropped by the caps of [`ResolverLimits`].
    pub rate_limited: u64,
    /// Queries from a source no response can go to: not IPv4 (`dwIPv4Address` holds IPv4
    /// only), port 0, or not a unicast address.
    pub unanswerable: u64,
}

/// Answers per source in the current window.
#[derive(Debug, Clone, Copy)]
struct Count {
    since: Instant,
    answers: u32,
}

/// A NAT resolver server (MC-DPLNAT 3.2), sans-IO: feed it every datagram of its socket with
/// [`ResolverServer::handle_datagram`] and send what [`ResolverServer::poll_transmit`] gives.
/// It has no timers (MC-DPLNAT 3.2.2).
#[derive(Debug)]
pub struct ResolverServer {
    user_string: Option<UserString>,
    limits: ResolverLimits,
    sources: BTreeMap<Ipv4Addr, Count>,
    total: Count,
    queued: VecDeque<(SocketAddr, NatResolverResponse)>,
    stats: ResolverStats,
    logged: LogLimit,
}

impl ResolverServer {
    /// A server that answers queries carrying `user_string` (any query when `None`).
    pub fn new(user_string: Option<UserString>, limits: ResolverLimits, now: Instant) -> Self {
        Self {
            user_string,
            limits,
            sources: BTreeMap::new(),
            total: Count { since: now, answers: 0 },
            queued: VecDeque::new(),
            stats: ResolverStats::default(),
            logged: LogLimit::default(),
        }
    }

    /// What it did so far.
    pub fn stats(&self) -> ResolverStats {
        self.stats
    }

    /// A datagram arrived from `from` (MC-DPLNAT 3.2.5). A properly formed query whose
    /// `UserData` passes the check is answered, within the caps; everything else, responses and
    /// PATH_TESTs included, is ignored and counted.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let query = match data.get(..2) {
            Some([0, NAT_RESOLVER_QUERY_DATA_KIND]) => NatResolverQuery::parse(data).ok(),
            _ => None,
        };
        let Some(query) = query else {
            self.stats.malformed += 1;
            return self.log(now, from, "not a NAT_RESOLVER_QUERY");
        };
        if let Some(check) = &self.user_string
            && (query.user_data.len() > MAX_USER_DATA || !check.accepts(&query.user_data))
        {
            self.stats.refused_user_data += 1;
            return self.log(now, from, "NAT_RESOLVER_QUERY refused: wrong user string");
        }
        let SocketAddr::V4(source) = from else {
            self.stats.unanswerable += 1;
            return;
        };
        let ip = *source.ip();
        if source.port() == 0 || ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() {
            self.stats.unanswerable += 1;
            return self.log(now, from, "NAT_RESOLVER_QUERY from an address no answer can go to");
        }
        if !self.admit(now, ip) {
            self.stats.rate_limited += 1;
            return self.log(now, from, "NAT_RESOLVER_QUERY over the rate limit");
        }
        self.stats.answered += 1;
        let response = NatResolverResponse {
            message_id_echo: query.message_id,
            source_id_echo: query.source_id,
            address: ip,
            port: source.port(),
        };
        self.queued.push_back((from, response));
    }

    /// The next response: written into `buf`, with its destination.
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let (to, response) = self.queued.pop_front()?;
        buf.resize(response.encoded_len(), 0);
        let len = response.emit(buf).ok()?;
        buf.truncate(len);
        Some(to)
    }

    /// True when one more answer to `ip` fits the caps at `now`, and counts it.
    fn admit(&mut self, now: Instant, ip: Ipv4Addr) -> bool {
        if self.queued.len() >= self.limits.max_queued {
            return false;
        }
        renew(&mut self.total, now);
        if self.total.answers >= self.limits.total_per_second {
            return false;
        }
        if !self.sources.contains_key(&ip) && self.sources.len() >= self.limits.max_sources {
            self.sources.retain(|_, c| now.saturating_duration_since(c.since) < WINDOW);
            if self.sources.len() >= self.limits.max_sources {
                return false;
            }
        }
        let count = self.sources.entry(ip).or_insert(Count { since: now, answers: 0 });
        renew(count, now);
        if count.answers >= self.limits.per_source_per_second {
            return false;
        }
        count.answers += 1;
        self.total.answers += 1;
        true
    }

    fn log(&mut self, now: Instant, from: SocketAddr, what: &str) {
        if self.logged.may_log(now, from.ip(), LOG_INTERVAL) {
            tracing::info!(source = %from, "{what} (further ones from this address are not logged for {LOG_INTERVAL:?})");
        }
    }
}

/// Starts a new window for `count` once the last one is over.
fn renew(count: &mut Count, now: Instant) {
    if now.saturating_duration_since(count.since) >= WINDOW {
        *count = Count { since: now, answers: 0 };
    }
}
