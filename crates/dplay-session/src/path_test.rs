//! PATH_TEST, MS-DPDX's SESS_PATH_TEST (MC-DPLNAT 3.1.3, 3.1.5; MS-DPDX 3.1.2.5, 3.1.6.5, 4.3
//! step 9): a joiner opens the way for each existing peer's connect, every 375 ms, at most 7
//! times, until that peer has connected.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::Wire;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::path_test::{PathTest, path_test_key};

use crate::session::Session;
use crate::stats::DropReason;

/// The path-test retry timer towards one existing peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathTester {
    pub(crate) target: Dpnid,
    addr: SocketAddr,
    key: u64,
    sent: u32,
    pub(crate) next: Instant,
}

impl Session {
    /// After SEND_CONNECT_INFO: one tester per existing peer but the host (MC-DPLNAT 3.1.3).
    pub(crate) fn start_path_tests(&mut self, now: Instant) {
        let app = self.cfg.application_guid;
        let instance = self.table.instance();
        let local = self.local;
        let targets: Vec<PathTester> = self
            .table
            .players()
            .filter(|e| e.dpnid != local && e.dpnid != self.host)
            .filter_map(|e| {
                let url = e.url.as_ref()?.url().ok()?;
                let addr = SocketAddr::new(url.hostname()?.parse().ok()?, url.port()?);
                Some(PathTester {
                    target: e.dpnid,
                    addr,
                    key: path_test_key(local.0, e.dpnid.0, &app, &instance),
                    sent: 0,
                    next: now,
                })
            })
            .collect();
        self.path_tests = targets;
        self.path_test_timeout(now);
    }

    /// Sends the due PATH_TESTs and drops the exhausted testers.
    pub(crate) fn path_test_timeout(&mut self, now: Instant) {
        let tries = self.cfg.path_test_tries;
        let interval = self.cfg.path_test_interval();
        let mut out = Vec::new();
        for p in self.path_tests.iter_mut().filter(|p| p.next <= now) {
            p.sent += 1;
            p.next = now + interval;
            // wMessageID changes per retry (MC-DPLNAT 2.2.2).
            let msg = PathTest { msg_id: u16::try_from(p.sent).unwrap_or(u16::MAX), key: p.key };
            if let Ok(bytes) = msg.to_vec() {
                out.push((p.addr, bytes));
            }
        }
        self.path_tests.retain(|p| p.sent < tries);
        for (addr, bytes) in out {
            self.stats.path_tests_sent += 1;
            self.ep.send_unowned(addr, bytes);
        }
    }

    /// A PATH_TEST arrived: if its key is that of a newer player we will connect to, remember
    /// where it came from (MS-DPDX 4.3 step 13: the target may have moved).
    pub(crate) fn on_path_test(&mut self, from: SocketAddr, test: PathTest) {
        let app = self.cfg.application_guid;
        let instance = self.table.instance();
        let local = self.local;
        let mine = self.table.get(local).map(|e| e.version).unwrap_or(u32::MAX);
        let joiner = self
            .table
            .players()
            .filter(|e| e.version > mine)
            .find(|e| path_test_key(e.dpnid.0, local.0, &app, &instance) == test.key)
            .map(|e| e.dpnid);
        match joiner {
            Some(d) => {
                self.stats.path_tests_matched += 1;
                self.path_test_from.insert(d, from);
            }
            None => self.stats.drop(DropReason::PathTestUnmatched),
        }
    }
}
