//! The raw UDP baseline on std sockets: a blast of same-size datagrams for goodput, and paced
//! timestamped datagrams for one-way latency. No reliability, no acknowledgements.

use std::io;
use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::{LOOPBACK, age_ns, stamp};

/// Goodput of a raw UDP blast: `datagram`-byte datagrams sent as fast as one thread can for
/// `duration`; returns `(payload bytes per second received, datagrams per second received)`,
/// counting `payload` bytes of each datagram.
pub fn blast(
    datagram: usize,
    payload: usize,
    warmup: Duration,
    duration: Duration,
) -> io::Result<(f64, f64)> {
    let rx = UdpSocket::bind(LOOPBACK)?;
    rx.set_read_timeout(Some(Duration::from_millis(20)))?;
    let tx = UdpSocket::bind(LOOPBACK)?;
    tx.connect(rx.local_addr()?)?;
    let stop = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let receiver = {
        let (stop, received) = (Arc::clone(&stop), Arc::clone(&received));
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !stop.load(Ordering::Relaxed) {
                if rx.recv(&mut buf).is_ok() {
                    received.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let sender = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let data = vec![0x5au8; datagram];
            while !stop.load(Ordering::Relaxed) {
                // The receiver's buffer overflowing loses datagrams; that is the baseline.
                let _ = tx.send(&data);
            }
        })
    };
    std::thread::sleep(warmup);
    let start = (Instant::now(), received.load(Ordering::Relaxed));
    std::thread::sleep(duration);
    let end = (Instant::now(), received.load(Ordering::Relaxed));
    stop.store(true, Ordering::Relaxed);
    let _ = sender.join();
    let _ = receiver.join();
    let secs = (end.0 - start.0).as_secs_f64();
    let datagrams = (end.1 - start.1) as f64 / secs;
    Ok((datagrams * payload as f64, datagrams))
}

/// One-way latencies (ns) of `size`-byte timestamped datagrams sent every `interval` for
/// `duration`.
pub fn paced(size: usize, interval: Duration, duration: Duration) -> io::Result<Vec<u64>> {
    let rx = UdpSocket::bind(LOOPBACK)?;
    rx.set_read_timeout(Some(Duration::from_millis(200)))?;
    let tx = UdpSocket::bind(LOOPBACK)?;
    tx.connect(rx.local_addr()?)?;
    let epoch = Instant::now();
    let per = interval.as_nanos().max(1);
    let count = usize::try_from(duration.as_nanos() / per).unwrap_or(usize::MAX);
    let receiver = std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        let mut samples = Vec::with_capacity(count);
        while samples.len() < count {
            match rx.recv(&mut buf) {
                Ok(n) => samples.extend(buf.get(..n).and_then(|d| age_ns(d, epoch))),
                Err(_) => break,
            }
        }
        samples
    });
    let mut data = vec![0u8; size.max(8)];
    let mut next = Instant::now();
    for _ in 0..count {
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        stamp(&mut data, epoch);
        tx.send(&data)?;
        next += interval;
    }
    receiver.join().map_err(|_| io::Error::other("receiver panicked"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_blast_delivers() {
        let (bytes, datagrams) = blast(1028, 1024, Duration::ZERO, Duration::from_millis(50)).unwrap();
        assert!(datagrams > 0.0 && bytes > datagrams);
    }

    #[test]
    fn paced_datagrams_all_arrive() {
        let samples = paced(64, Duration::from_millis(1), Duration::from_millis(20)).unwrap();
        assert_eq!(samples.len(), 20);
    }
}
