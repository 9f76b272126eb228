//! The token bucket against a hand-advanced clock.

use super::*;

#[allow(clippy::disallowed_methods)] // tests need one real starting instant; time then advances by hand
fn t0() -> Instant {
    Instant::now()
}

#[test]
fn a_burst_then_the_rate() {
    let limit = RateLimit { datagrams: 400, bytes: 1 << 20 };
    let t0 = t0();
    let mut b = Bucket::new();
    let burst = (0..200).filter(|_| b.take(t0, 10, limit)).count();
    assert_eq!(burst, 100, "a quarter second's worth");
    let later = (0..200).filter(|_| b.take(t0 + Duration::from_millis(100), 10, limit)).count();
    assert_eq!(later, 40, "400 per second for 100 ms");
}

#[test]
fn bytes_cap_too() {
    let limit = RateLimit { datagrams: 10_000, bytes: 4_000 };
    let mut b = Bucket::new();
    let t0 = t0();
    assert_eq!((0..10).filter(|_| b.take(t0, 500, limit)).count(), 2);
}
