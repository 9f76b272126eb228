//! The host's ban file (`dplay host --bans FILE`; docs/web-api.md, "Ban file"): any text is a
//! list or names its first bad line, never a panic, and a list renders to text that reads back
//! as the same list.
#![no_main]

use dplay_web::{parse_ban_list, render_ban_list};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_ban_list(&text) {
        Ok(bans) => {
            let again = parse_ban_list(&render_ban_list(&bans));
            assert_eq!(again.as_ref(), Ok(&bans), "a rendered list reads back differently");
            assert!(bans.names().count() + bans.addresses().count() <= dplay_session::MAX_BANS);
        }
        Err(e) => assert!(e.line >= 1 && e.line <= text.lines().count(), "bad line {} of {text:?}", e.line),
    }
});
