//! Requests per client address: a token bucket per IP address, [`RATE`] a second with bursts
//! of [`BURST`]; past it the server answers 429. The table of addresses is capped too
//! ([`MAX_CLIENTS`]): when full, addresses whose bucket has refilled are forgotten first, and
//! if none has, the newcomer is refused rather than the table grown.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Requests a second one address may make, sustained.
pub const RATE: u32 = 20;
/// Requests one address may make at once before [`RATE`] applies.
pub const BURST: u32 = 40;
/// Client addresses tracked at most.
pub const MAX_CLIENTS: usize = 1024;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The buckets, by client address.
#[derive(Debug)]
pub(crate) struct RateLimit {
    rate: f64,
    burst: f64,
    buckets: HashMap<IpAddr, Bucket>,
}

impl RateLimit {
    pub(crate) fn new(rate: u32, burst: u32) -> Self {
        Self { rate: f64::from(rate.max(1)), burst: f64::from(burst.max(1)), buckets: HashMap::new() }
    }

    fn refill(&self, b: &Bucket, now: Instant) -> f64 {
        (b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * self.rate).min(self.burst)
    }

    /// Whether `ip` may make a request at `now`; `Err` gives how long until it may.
    pub(crate) fn check(&mut self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        if !self.buckets.contains_key(&ip) && self.buckets.len() >= MAX_CLIENTS {
            let (rate, burst) = (self.rate, self.burst);
            self.buckets
                .retain(|_, b| b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < burst);
            if self.buckets.len() >= MAX_CLIENTS {
                return Err(Duration::from_secs(1));
            }
        }
        let fresh = Bucket { tokens: self.burst, at: now };
        let tokens = self.buckets.get(&ip).map_or(self.burst, |b| self.refill(b, now));
        let bucket = self.buckets.entry(ip).or_insert(fresh);
        if tokens >= 1.0 {
            *bucket = Bucket { tokens: tokens - 1.0, at: now };
            Ok(())
        } else {
            *bucket = Bucket { tokens, at: now };
            Err(Duration::from_secs_f64((1.0 - tokens) / self.rate))
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // an origin for the test's times
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 2));

    #[test]
    fn a_burst_then_the_rate_per_address() {
        let mut r = RateLimit::new(10, 3);
        let t = Instant::now();
        assert!((0..3).all(|_| r.check(A, t).is_ok()));
        let wait = r.check(A, t).unwrap_err();
        assert_eq!(wait, Duration::from_millis(100));
        assert!(r.check(B, t).is_ok(), "another address has its own bucket");
        assert!(r.check(A, t + Duration::from_millis(100)).is_ok());
        assert!(r.check(A, t + Duration::from_millis(100)).is_err());
        assert!((0..3).all(|_| r.check(A, t + Duration::from_secs(5)).is_ok()), "refilled to the burst");
    }

    #[test]
    fn the_table_of_addresses_is_capped() {
        let mut r = RateLimit::new(1, 2);
        let t = Instant::now();
        for i in 0..MAX_CLIENTS {
            let ip = IpAddr::V6(std::net::Ipv6Addr::from(u128::try_from(i).unwrap()));
            assert!(r.check(ip, t).is_ok());
        }
        assert!(r.check(A, t).is_err(), "full of busy addresses: the newcomer waits");
        assert!(r.check(A, t + Duration::from_secs(2)).is_ok(), "refilled ones are forgotten");
        assert!(r.buckets.len() <= MAX_CLIENTS);
    }
}
