//! `dplay decode` names the NAT resolver's messages (MC-DPLNAT 2.2.3, 2.2.4), and
//! `dplay nat-resolver` refuses a bad address before it binds anything.
#![allow(clippy::indexing_slicing)] // test code: a bad index is a failed test

mod common;

use common::{dplay, json_lines, stderr};

/// MC-DPLNAT 4.1: the query and the response, UDP payloads.
const QUERY: &str = "00 06 F1 D5 3C 16 51 BA";
const RESPONSE: &str = "00 07 F1 D5 3C 16 51 BA 7D 22 AD 87 F9 2B";

#[test]
fn decode_names_the_resolver_messages() {
    let out = dplay(&["decode", "--json", "--hex", QUERY, "--hex", RESPONSE]);
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (lines[0]["family"].as_str(), lines[0]["message"].as_str()),
        (Some("DirectPlay 8"), Some("NAT_RESOLVER_QUERY"))
    );
    assert_eq!(lines[0]["fields"]["source_id"], 0xBA51_163Cu32);
    assert_eq!(lines[1]["message"], "NAT_RESOLVER_RESPONSE");
    assert_eq!(
        (lines[1]["fields"]["address"].as_str(), lines[1]["fields"]["port"].as_u64()),
        (Some("65.52.252.61"), Some(2302))
    );
}

#[test]
fn nat_resolver_needs_an_address() {
    let out = dplay(&["nat-resolver", "--bind", "not an address"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("is not an address"), "{}", stderr(&out));
}
