//! Criterion benchmarks of the wire codec and of reassembly, each next to its baseline in the
//! same run: parsing and emitting the three wire messages against a 1 KiB copy, and a 1 MiB
//! message through dplay-dframe and dplay-dpsp against copying 1 MiB; forwarded voice speech
//! against parsing it. Writes
//! `target/bench/micro.json`.
#![allow(missing_docs, clippy::print_stdout, clippy::disallowed_methods)]

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use dplay_bench::pair::Pair;
use dplay_bench::report::{self, Row, Rows};
use dplay_bench::wire;
use dplay_dpsp::{Dpsp, DpspMessage, Reliability};
use dplay_wire::Wire;
use dplay_wire::dp8::cframe::Cframe;
use dplay_wire::dp8::dframe::{Dframe, DframeContext, DframeHeader};
use dplay_wire::dp8::session::SessionMessage;

const MIB: usize = 1 << 20;

/// Runs `routine(iters) -> time` under criterion and returns the median ns per iteration of
/// the measured samples.
fn measure(c: &mut Criterion, name: &str, mut routine: impl FnMut(u64) -> Duration) -> f64 {
    let samples = RefCell::new(Vec::new());
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let d = routine(iters);
            samples.borrow_mut().push(d.as_nanos() as f64 / iters.max(1) as f64);
            d
        })
    });
    let mut s = samples.into_inner();
    // The last samples are the measurement; the first ones were the warm-up.
    let keep = s.len().min(if report::quick() { 10 } else { 30 });
    let mut tail = s.split_off(s.len() - keep);
    tail.sort_by(f64::total_cmp);
    tail.get(tail.len() / 2).copied().unwrap_or(0.0)
}

/// Times `iters` runs of `f`.
fn timed(iters: u64, mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed()
}

fn wire_rows(c: &mut Criterion, rows: &mut Rows) {
    let [d, k, s] = wire::encoded().expect("the bench messages encode");
    let (dframe, connect, info) = (wire::dframe_1k(), wire::connect(), wire::send_session_info(32));
    let src = vec![0x5au8; 1024];
    let mut dst = vec![0u8; 1024];
    let copy = measure(c, "memcpy 1 KiB", |n| timed(n, || dst.copy_from_slice(black_box(&src))));
    let parse = measure(c, "parse DFRAME 1 KiB + CONNECT + SEND_SESSION_INFO(32)", |n| {
        timed(n, || {
            black_box(Dframe::parse(black_box(&d)).ok());
            black_box(Cframe::parse(black_box(&k)).ok());
            black_box(SessionMessage::parse(black_box(&s)).ok());
        })
    });
    let mut out = vec![0u8; 4096];
    let emit = measure(c, "emit DFRAME 1 KiB + CONNECT + SEND_SESSION_INFO(32)", |n| {
        timed(n, || {
            black_box(black_box(&dframe).emit(&mut out).ok());
            black_box(black_box(&connect).emit(&mut out).ok());
            black_box(black_box(&info).emit(&mut out).ok());
        })
    });
    let header = measure(c, "parse DFRAME header", |n| {
        timed(n, || {
            black_box(DframeHeader::parse(black_box(&d), DframeContext::default()).ok());
        })
    });
    rows.insert("wire_parse_vs_memcpy".into(), Row::time(parse / 3.0, copy, "ns/msg"));
    rows.insert("wire_emit_vs_memcpy".into(), Row::time(emit / 3.0, copy, "ns/msg"));
    rows.insert("dframe_header_parse_vs_memcpy".into(), Row::time(header, copy, "ns/msg"));
}

fn mib_per_s(ns: f64) -> f64 {
    if ns > 0.0 { 1e9 / ns } else { 0.0 }
}

fn reassembly_rows(c: &mut Criterion, rows: &mut Rows) {
    let message: Vec<u8> = (0..MIB).map(|i| u8::try_from(i % 251).unwrap_or(0)).collect();
    let copy = measure(c, "copy 1 MiB", |n| timed(n, || drop(black_box(black_box(&message).to_vec()))));

    let config = dplay_dframe::Config::default();
    let dframe = measure(c, "dplay-dframe 1 MiB message", |n| {
        let mut total = Duration::ZERO;
        for _ in 0..n {
            let mut pair = Pair::connected(&config, Instant::now());
            let t = Instant::now();
            black_box(pair.transfer(&message));
            total += t.elapsed();
        }
        total
    });

    let from = "10.0.0.1:2300".parse().expect("address");
    let to = "10.0.0.2:2300".parse().expect("address");
    let t0 = Instant::now();
    let mut sender = Dpsp::new(dplay_dpsp::Config::default()).expect("default config");
    sender.send(t0, to, &message, Reliability::Unreliable).expect("1 MiB is within the limits");
    let fragments: Vec<DpspMessage> =
        std::iter::from_fn(|| sender.poll_transmit()).map(|t| t.message).collect();
    let dpsp = measure(c, "dplay-dpsp 1 MiB message", |n| {
        timed(n, || {
            let mut receiver = Dpsp::new(dplay_dpsp::Config::default()).expect("default config");
            for f in &fragments {
                receiver.handle_message(t0, from, f);
            }
            black_box(receiver.poll_event());
        })
    });
    rows.insert("reassembly_dframe_vs_copy".into(), Row::rate(mib_per_s(dframe), mib_per_s(copy), "MiB/s"));
    rows.insert("reassembly_dpsp_vs_copy".into(), Row::rate(mib_per_s(dpsp), mib_per_s(copy), "MiB/s"));
}

/// The relay's own cost per forwarded datagram (issue 23): identify the sender by its latch,
/// take a token, queue, and hand the bytes out, with 32 members latched everywhere. The
/// baseline is the 25%-of-a-core budget at 40,000 datagrams/s: 6,250 ns per datagram.
fn relay_rows(c: &mut Criterion, rows: &mut Rows) {
    use dplay_bench::relay::{PILOTS, POSITION_DATAGRAM, latched_relay, member_addr};
    let mut relay = latched_relay();
    let data = vec![0x3fu8; POSITION_DATAGRAM];
    let mut buf = Vec::with_capacity(2048);
    let t = Instant::now();
    let mut k = 0usize;
    let ns = measure(c, "relay: forward one position datagram (32 members)", |n| {
        timed(n, || {
            let from = k % PILOTS;
            let to = (from + 1 + (k / PILOTS) % (PILOTS - 1)) % PILOTS;
            k += 1;
            relay.handle_datagram(t, to, member_addr(from), black_box(&data));
            buf.clear();
            black_box(relay.poll_forward(&mut buf));
        })
    });
    rows.insert("relay_forward_vs_budget".into(), Row::time(ns, 6250.0, "ns/datagram"));
}

/// Forwarded speech (MC-DPLVP 3.2.5.5.2): one SPEECHWITHTARGET with an SC03 frame (40 bytes)
/// from one of eight voice clients to another, parsed, checked and re-emitted as
/// SPEECHWITHFROM, against parsing the same message alone. The clock moves 25 ms a message,
/// inside the per-client rate cap.
fn voice_rows(c: &mut Criterion, rows: &mut Rows) {
    use dplay_voice::{VoiceServer, VoiceServerConfig};
    use dplay_wire::voice::{Dvid, SpeechWithTarget, VoiceMessage};
    let t0 = Instant::now();
    let mut server = VoiceServer::new(VoiceServerConfig::forwarding()).expect("forwarding is served");
    let none = |_: Dvid| None;
    for id in 1..=8 {
        let confirm = VoiceMessage::SettingsConfirm {
            player_flags: Default::default(),
            host_order_id: dplay_wire::voice::NO_HOST_ORDER_ID,
        };
        server.handle_message(t0, Dvid(id), &confirm.to_vec().expect("encodes"), &none);
    }
    while server.poll_outgoing().is_some() || server.poll_event().is_some() {}
    let speech = VoiceMessage::SpeechWithTarget(SpeechWithTarget {
        message_number: 1,
        sequence_number: 0,
        targets: vec![Dvid(2)],
        data: dplay_wire::Blob(vec![0x5a; 40]),
    })
    .to_vec()
    .expect("encodes");
    let parse = measure(c, "parse SPEECHWITHTARGET (SC03 frame)", |n| {
        timed(n, || drop(black_box(VoiceMessage::parse(black_box(&speech)).ok())))
    });
    let mut now = t0;
    let forward = measure(c, "forward SPEECHWITHTARGET -> SPEECHWITHFROM", |n| {
        timed(n, || {
            now += Duration::from_millis(25);
            server.handle_message(now, Dvid(1), black_box(&speech), &none);
            black_box(server.poll_outgoing());
        })
    });
    let per_s = |ns: f64| if ns > 0.0 { 1e9 / ns } else { 0.0 };
    rows.insert("voice_forward_vs_parse".into(), Row::rate(per_s(forward), per_s(parse), "frames/s"));
}

fn main() {
    let quick = report::quick();
    let mut c = Criterion::default()
        .output_directory(&report::out_dir().join("criterion"))
        .sample_size(if quick { 10 } else { 30 })
        .warm_up_time(Duration::from_millis(if quick { 300 } else { 1000 }))
        .measurement_time(Duration::from_millis(if quick { 1000 } else { 3000 }))
        .configure_from_args();
    let mut rows = Rows::new();
    wire_rows(&mut c, &mut rows);
    reassembly_rows(&mut c, &mut rows);
    relay_rows(&mut c, &mut rows);
    voice_rows(&mut c, &mut rows);
    c.final_summary();
    report::write("micro", &rows).expect("write target/bench/micro.json");
}
