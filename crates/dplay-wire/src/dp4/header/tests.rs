use super::*;
use crate::testutil::bytes;

/// MC-DPL4CS 2.2.6: a 70-byte message from a remote machine starts `46 00 B0 FA`.
#[test]
fn size_and_token() {
    let mut msg =
        bytes("46 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 79 02 00 0E 00");
    msg.resize(70, 0);
    let (h, len) = Header::parse(&msg).unwrap();
    assert_eq!(len, 70);
    assert_eq!(h.token, Token::FROM_REMOTE);
    assert_eq!(h.sock_addr.addr.port(), 2300);
    assert_eq!(h.command, Command::DPSP_MSG_ENUMSESSIONS);
    assert_eq!(h.version, 14);

    let mut out = vec![0; HEADER_LEN];
    let mut w = Writer::new(&mut out, HEADER_LEN).unwrap();
    h.write(&mut w, 70).unwrap();
    w.finish().unwrap();
    assert_eq!(out[..], msg[..HEADER_LEN]);
}

#[test]
fn rejects_bad_signature_and_size() {
    let mut msg =
        bytes("1C 00 B0 FA 02 00 08 FC 00 00 00 00 00 00 00 00 00 00 00 00 70 6C 61 78 02 00 0E 00");
    assert!(Header::parse(&msg).is_err());
    msg[23] = 0x79;
    assert!(Header::parse(&msg).is_ok());
    msg[0] = 0x1D; // claims 29 bytes, 28 present
    assert!(Header::parse(&msg).is_err());
    msg[0] = 0x10; // smaller than the header
    assert!(Header::parse(&msg).is_err());
}
