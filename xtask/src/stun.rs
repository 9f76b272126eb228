//! `cargo xtask stun-responder ADDR SECS` (hidden): the smallest STUN server (RFC 5389 Binding)
//! that Debian's miniupnpd accepts with `ext_perform_stun`, for the UPnP integration case.
//! Run on the "public" side of its namespaces: it answers every Binding Request from the same
//! socket with the source it saw, as MAPPED-ADDRESS and XOR-MAPPED-ADDRESS. It ignores
//! CHANGE-REQUEST, which miniupnpd sends but does not check the answers' source for (only that
//! all four come back and map to the ports it sent from). It ends after SECS seconds.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::Context;

/// RFC 5389 6: the magic cookie.
const MAGIC: [u8; 4] = [0x21, 0x12, 0xA4, 0x42];

/// Answers Binding Requests on `bind` for `secs` seconds.
#[allow(clippy::disallowed_methods)] // its own lifetime
pub(crate) fn run(bind: &str, secs: u64) -> anyhow::Result<()> {
    let socket = UdpSocket::bind(bind).with_context(|| format!("cannot bind {bind}"))?;
    socket.set_read_timeout(Some(Duration::from_millis(200)))?;
    let until = Instant::now() + Duration::from_secs(secs);
    let mut buf = [0u8; 1500];
    while Instant::now() < until {
        let Ok((len, from)) = socket.recv_from(&mut buf) else { continue };
        if let Some(answer) = buf.get(..len).and_then(|request| answer(request, from)) {
            let _ = socket.send_to(&answer, from);
        }
    }
    Ok(())
}

/// The Binding Success Response to `request` from `from`, if it is a Binding Request.
fn answer(request: &[u8], from: SocketAddr) -> Option<Vec<u8>> {
    let (head, _) = request.split_first_chunk::<20>()?;
    if head[..2] != [0x00, 0x01] {
        return None;
    }
    let SocketAddr::V4(from) = from else { return None };
    let port = from.port().to_be_bytes();
    let ip = from.ip().octets();
    let mut out = vec![0x01, 0x01, 0x00, 24];
    out.extend_from_slice(&head[4..20]); // the cookie and the transaction ID
    // MAPPED-ADDRESS (RFC 5389 15.1): family 1 (IPv4), port, address.
    out.extend_from_slice(&[0x00, 0x01, 0x00, 0x08, 0x00, 0x01]);
    out.extend_from_slice(&port);
    out.extend_from_slice(&ip);
    // XOR-MAPPED-ADDRESS (15.2): port and address XORed with the magic cookie.
    out.extend_from_slice(&[0x00, 0x20, 0x00, 0x08, 0x00, 0x01]);
    out.extend_from_slice(&[port[0] ^ MAGIC[0], port[1] ^ MAGIC[1]]);
    out.extend(ip.iter().zip(MAGIC).map(|(a, m)| a ^ m));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 5769 2.2's address (192.0.2.1:32853) as XOR-MAPPED-ADDRESS: port 0xA147, address
    /// 0xE112A643.
    #[test]
    fn answers_a_binding_request_with_the_source() {
        let mut request = vec![0x00, 0x01, 0x00, 0x00];
        request.extend_from_slice(&MAGIC);
        request.extend_from_slice(&[7; 12]);
        let answer = answer(&request, "192.0.2.1:32853".parse().unwrap()).unwrap();
        assert_eq!(answer.len(), 44);
        assert_eq!(&answer[..4], &[0x01, 0x01, 0x00, 24]);
        assert_eq!(&answer[8..20], &[7; 12]);
        assert_eq!(&answer[24..32], &[0x00, 0x01, 0x80, 0x55, 192, 0, 2, 1]);
        assert_eq!(&answer[36..44], &[0x00, 0x01, 0xA1, 0x47, 0xE1, 0x12, 0xA6, 0x43]);
        assert_eq!(
            super::answer(&answer, "192.0.2.1:1".parse().unwrap()),
            None,
            "a response is not answered"
        );
    }
}
