//! Percentiles of latency samples.

/// p50 and p99 of a set of samples, in the samples' unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    /// The median.
    pub p50: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// How many samples.
    pub count: usize,
}

/// The nearest-rank percentile `q` (0..=1) of sorted samples; 0 for none.
fn rank(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let n = sorted.len();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0 <= q*n <= n
    let i = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
    sorted.get(i).copied().unwrap_or(0) as f64
}

/// p50 and p99 of `samples` (sorted in place).
pub fn percentiles(samples: &mut [u64]) -> Percentiles {
    samples.sort_unstable();
    Percentiles { p50: rank(samples, 0.50), p99: rank(samples, 0.99), count: samples.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_one_to_a_hundred() {
        let mut s: Vec<u64> = (1..=100).rev().collect();
        let p = percentiles(&mut s);
        assert_eq!((p.p50, p.p99, p.count), (50.0, 99.0, 100));
        assert_eq!(percentiles(&mut []).p99, 0.0);
    }
}
