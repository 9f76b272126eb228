//! Who sent a member's first datagram at an endpoint (docs/relay.md, "Latching").

use std::net::SocketAddr;

use dplay_wire::Wire;
use dplay_wire::dp8::cframe::ExtOpCode;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::path_test::{PATH_TEST_DATA_KIND, PathTest, path_test_key};

use crate::Relay;

/// A CFRAME's `bCommand` has this bit (MC-DPL8R 2.2.1).
const PACKET_COMMAND_CFRAME: u8 = 0x80;

impl Relay {
    /// The member that sent `data` from `from`, its first datagram at `endpoint` (owned by
    /// `owner`): a joiner's PATH_TEST whose key is that of the pair (MC-DPLNAT 3.1.3), or an
    /// older member's CONNECT (MC-DPL8R 2.2.1.1) from its public address, or from its IP when
    /// no other older member not yet latched there shares that IP. `None`: a stranger, or
    /// members behind one NAT we cannot tell apart (their CONNECTs are retried, and each
    /// latch narrows the field).
    pub(crate) fn identify(
        &self,
        endpoint: usize,
        owner: Dpnid,
        from: SocketAddr,
        data: &[u8],
    ) -> Option<Dpnid> {
        let ep = self.endpoints.get(endpoint)?;
        let owner_order = self.members.get(&owner)?.order;
        let mut candidates = self
            .members
            .iter()
            .filter(|(d, m)| **d != owner && m.addr.ip() == from.ip() && !ep.by_member.contains_key(d));
        if data.first() == Some(&0) && data.get(1) == Some(&PATH_TEST_DATA_KIND) {
            let test = PathTest::parse(data).ok()?;
            let (app, instance) = (&self.application, &self.instance);
            return candidates
                .find(|(d, _)| path_test_key(d.0, owner.0, app, instance) == test.key)
                .map(|(d, _)| *d);
        }
        let connect = data.len() >= 12
            && data.first().is_some_and(|b| b & PACKET_COMMAND_CFRAME != 0)
            && data.get(1) == Some(&ExtOpCode::CONNECT.0);
        if !connect {
            return None;
        }
        let older: Vec<(Dpnid, SocketAddr)> =
            candidates.by_ref().filter(|(_, m)| m.order < owner_order).map(|(d, m)| (*d, m.addr)).collect();
        if let Some((d, _)) = older.iter().find(|(_, a)| *a == from) {
            return Some(*d);
        }
        match older.as_slice() {
            [(d, _)] => Some(*d),
            _ => None,
        }
    }
}
