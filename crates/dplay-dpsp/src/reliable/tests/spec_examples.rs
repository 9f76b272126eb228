//! MC-DPL4R 4.1 byte for byte, as a Windows peer numbers it (messageid and sequence from 0)
//! and as our receiver answers it: the ACKs of 4.1.1 and 4.1.3, and an ACK of the in-order
//! point where 4.1.3 shows a NACK (Windows has none, 6 <2>; 3.1.5.2 allows "an ACK or NACK").

use super::*;

/// Node A (the Windows peer, index 1) to node B (us, index 2): the player indexes header
/// (2.2.1), then flags, messageid, sequence, serial and `len` bytes of data (2.2.2), so the
/// frame counts `len + 4` bytes towards bytes received (3.1.5.4).
fn wire(flags: u8, message_id: u8, sequence: u8, serial: u8, len: usize) -> Vec<u8> {
    let mut f = vec![0x01, 0x02, flags, message_id, sequence, serial];
    f.extend(bytes_of(len, sequence));
    f
}

/// An ACK from B to A (2.2.4): flags 0x02, messageid, sequence, serial, bytes received and
/// local tick count, little-endian.
fn ack_bytes(message_id: u8, sequence: u8, serial: u8, bytes: u32, tick: u32) -> Vec<u8> {
    let mut f = vec![0x02, 0x01, 0x02, message_id, sequence, serial];
    f.extend(bytes.to_le_bytes());
    f.extend(tick.to_le_bytes());
    f
}

fn out_bytes(e: &mut Reliable) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| e.poll_transmit()).map(|t| t.to_vec().unwrap()).collect()
}

const STA: u8 = 0x10;
const EOM: u8 = 0x08;
const RLY: u8 = 0x01;

/// MC-DPL4R 4.1.1-4.1.4 with the example's numbers: three 1500-byte frames make 4500 bytes
/// received, and 8954 when message 4 has arrived.
#[test]
fn example_4_1_byte_for_byte() {
    let t0 = base();
    let mut b = Reliable::new(Config { mtu: 1600, ..Config::default() }).unwrap();
    b.open_link(addr(A), B_INDEX, A_INDEX).unwrap();
    let feed_bytes = |b: &mut Reliable, t: Instant, f: Vec<u8>| b.handle_datagram(t, addr(A), &f);

    // 4.1.1: "Flags: STA, RLY messageid: 0, sequence: 0, serial: 0" and so on; "Flags: ACK
    // messageid: 0, sequence: 2, bytes received: 4500".
    feed_bytes(&mut b, t0, wire(STA | RLY, 0, 0, 0, 1496));
    feed_bytes(&mut b, t0, wire(RLY, 0, 1, 1, 1496));
    feed_bytes(&mut b, t0, wire(EOM | RLY, 0, 2, 2, 1496));
    let got = delivered(&mut b);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].0, got[0].1, got[0].2.len()), (0, true, 3 * 1496));
    assert_eq!(out_bytes(&mut b), [ack_bytes(0, 2, 2, 4500, 0)]);

    // 4.1.2: "Flags: STA, EOM messageid: 1, sequence: 3, serial: 0"; acknowledged at our
    // discretion, at its end (3.1.3).
    feed_bytes(&mut b, t0, wire(STA | EOM, 1, 3, 0, 1496));
    assert_eq!(delivered(&mut b).iter().map(|d| (d.0, d.1)).collect::<Vec<_>>(), [(1, false)]);
    assert_eq!(out_bytes(&mut b), [ack_bytes(1, 3, 0, 6000, 0)]);

    // 4.1.3: message 3 ("STA, EOM, RLY messageid: 2, sequence: 4") is lost; message 4's two
    // unreliable frames arrive and go up whole; where the example's receiver sends "NACK
    // messageid: 2, sequence: 4, nNACK: 0, bytes received 8954", ours acknowledges the in-order
    // point with the same byte count after its ACK delay (no SAK, 3.1.3), having acknowledged
    // message 4 by name.
    feed_bytes(&mut b, t0, wire(STA, 3, 5, 0, 1496));
    feed_bytes(&mut b, t0, wire(EOM, 3, 6, 1, 1450));
    assert_eq!(
        delivered(&mut b).iter().map(|d| (d.0, d.1, d.2.len())).collect::<Vec<_>>(),
        [(3, false, 2946)]
    );
    // Message 4 is held whole past the hole: acknowledged by name at its end (3.1.5.2).
    assert_eq!(out_bytes(&mut b), [ack_bytes(3, 6, 1, 8954, 0)]);
    b.handle_timeout(t0 + ms(50));
    assert_eq!(out_bytes(&mut b), [ack_bytes(1, 3, 0, 8954, 50)]);

    // "Message 3: DATA FRAME (retry) Flags: STA, EOM, RLY messageid: 2, sequence: 4, serial: 1".
    feed_bytes(&mut b, t0 + ms(60), wire(STA | EOM | RLY, 2, 4, 1, 100));
    assert_eq!(delivered(&mut b).iter().map(|d| (d.0, d.1)).collect::<Vec<_>>(), [(2, true)]);
    // The in-order point passes message 4, already handed up, to sequence 6; message 3 is
    // also acknowledged by name, since that ACK names message 4.
    assert_eq!(out_bytes(&mut b), [ack_bytes(3, 6, 1, 9058, 60), ack_bytes(2, 4, 1, 9058, 60)]);
    assert_eq!(b.stats().nacks_sent, 0);
}

/// MC-DPL4R 2.2.2 (our side of 4.1): our sender's frames carry the example's flags (plus CMD,
/// which 2.2.2 requires), numbered from 1 (3.1.3).
#[test]
fn our_frames_match_the_example_flags() {
    let t0 = base();
    let (mut a, _) = pair(small());
    a.send(t0, addr(B), &bytes_of(3 * DATA, 1), true).unwrap();
    let f: Vec<Vec<u8>> = out(&mut a).iter().map(|f| f.to_vec().unwrap()).collect();
    // CMD 0x20 | STA | RLY | SAK 0x04 (6 <8>: nothing asked for yet); CMD | RLY; CMD | EOM | RLY.
    let heads: Vec<&[u8]> = f.iter().map(|f| &f[..6]).collect();
    assert_eq!(heads, [&[1, 2, 0x35, 1, 1, 0][..], &[1, 2, 0x21, 1, 2, 1], &[1, 2, 0x29, 1, 3, 2]]);
}
