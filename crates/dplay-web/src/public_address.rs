//! The address players outside the host's network join at, as `/api/session` and the page
//! show it: learnt by the command (UPnP on the host's router, or a NAT resolver's answer),
//! never by the protocol loop, so it is kept beside the snapshot rather than in it.

use serde::Serialize;

use crate::snapshot::SessionView;

/// Where players outside the host's network join, and how the host learnt it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PublicAddress {
    /// `IP:PORT`.
    pub addr: String,
    /// `upnp` (mapped on the host's router) or `nat-resolver` (MC-DPLNAT 3.3).
    pub via: &'static str,
}

/// `/api/session`: the session, with `public_address` and `public_address_via` when known, and
/// `relay` when the host relays (`/api/relay` shows it).
#[derive(Serialize)]
pub(crate) struct SessionReply<'a> {
    #[serde(flatten)]
    pub(crate) session: &'a SessionView,
    pub(crate) public_address: Option<&'a str>,
    pub(crate) public_address_via: Option<&'static str>,
    pub(crate) relay: bool,
}

impl<'a> SessionReply<'a> {
    pub(crate) fn new(session: &'a SessionView, public: Option<&'a PublicAddress>, relay: bool) -> Self {
        Self {
            session,
            public_address: public.map(|p| p.addr.as_str()),
            public_address_via: public.map(|p| p.via),
            relay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `/api/session` is the session's fields with the public address beside them (`null`
    /// until the command learnt it).
    #[test]
    fn the_session_with_its_public_address() {
        let session = SessionView::default();
        let unknown = serde_json::to_value(SessionReply::new(&session, None, false)).unwrap();
        assert!(unknown["public_address"].is_null() && unknown["public_address_via"].is_null());
        assert_eq!(unknown["relay"], false);
        assert_eq!(unknown["uptime_s"], 0);
        let public = PublicAddress { addr: "203.0.113.7:6073".into(), via: "upnp" };
        let known = serde_json::to_value(SessionReply::new(&session, Some(&public), true)).unwrap();
        assert_eq!(
            (known["public_address"].as_str(), known["public_address_via"].as_str()),
            (Some("203.0.113.7:6073"), Some("upnp"))
        );
        assert_eq!(known["relay"], true);
    }
}
