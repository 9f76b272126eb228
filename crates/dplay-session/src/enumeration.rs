//! Host enumeration (MC-DPLHP 3.1-3.2; MS-DPDX 3.1.5, 3.1.6.2): the host answers EnumQuery
//! with EnumResponse, honouring the application-GUID filter; a seeker repeats EnumQuery every
//! 1.5 s and keeps the replies that echo one of its EnumPayload values.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp8::enumeration::{
    ENUM_QUERY_COMMAND, ENUM_RESPONSE_COMMAND, EnumMessage, EnumQuery, EnumResponse,
};
use dplay_wire::dp8::path_test::{PATH_TEST_DATA_KIND, PathTest};
use dplay_wire::dp8::session::ApplicationDescFlags;
use dplay_wire::{Blob, WideString, Wire};
use rand::Rng;
use uuid::Uuid;

use crate::event::{CommandError, Event};
use crate::session::{Phase, Session};
use crate::stats::DropReason;

/// How many EnumPayload values a search remembers; older ones no longer match.
const PAYLOADS_KEPT: usize = 16;

/// An enumeration in progress (MC-DPLHP 3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seeker {
    target: SocketAddr,
    application_guid: Option<Uuid>,
    payloads: Vec<u16>,
    sent: u32,
    pub(crate) next: Instant,
}

impl Session {
    /// Starts looking for sessions at `target` (a host, or a broadcast address): EnumQuery
    /// now and every `enum_retry`, `enum_count` times (MS-DPDX 3.1.6.2). `application_guid`
    /// restricts the answers to hosts of that application. [`Event::HostFound`] reports each
    /// matching EnumResponse.
    pub fn enum_hosts(
        &mut self,
        now: Instant,
        target: SocketAddr,
        application_guid: Option<Uuid>,
    ) -> Result<(), CommandError> {
        if self.phase != Phase::Idle {
            return Err(CommandError::WrongState);
        }
        self.seeker = Some(Seeker { target, application_guid, payloads: Vec::new(), sent: 0, next: now });
        self.enum_timeout(now);
        Ok(())
    }

    /// True while an enumeration started by [`Session::enum_hosts`] still sends EnumQuery or
    /// waits for answers to its last one (its `enum_count` sends, then one `enum_retry`).
    pub fn is_enumerating(&self) -> bool {
        self.seeker.is_some()
    }

    /// Stops the enumeration.
    pub fn stop_enum(&mut self) {
        self.seeker = None;
    }

    /// Sends the due EnumQuery.
    pub(crate) fn enum_timeout(&mut self, now: Instant) {
        let count = self.cfg.enum_count;
        let retry = self.cfg.enum_retry();
        let payload: u16 = self.rng.r#gen();
        let Some(s) = self.seeker.as_mut().filter(|s| s.next <= now) else { return };
        if s.sent >= count {
            self.seeker = None;
            return;
        }
        s.sent += 1;
        s.next = now + retry;
        s.payloads.push(payload);
        if s.payloads.len() > PAYLOADS_KEPT {
            s.payloads.remove(0);
        }
        let query = EnumQuery {
            enum_payload: payload,
            application_guid: s.application_guid,
            application_payload: Blob::new(&self.cfg.enum_query_data),
        };
        let target = s.target;
        if let Ok(bytes) = EnumMessage::Query(query).to_vec() {
            self.stats.enum_queries_sent += 1;
            self.ep.send_unowned(target, bytes);
        }
    }

    /// A datagram led by a zero byte: enumeration or path test (MC-DPL8R 3.1.5; INDEX B.1).
    pub(crate) fn on_unowned(&mut self, from: SocketAddr, data: &[u8]) {
        match data.get(1).copied() {
            Some(ENUM_QUERY_COMMAND | ENUM_RESPONSE_COMMAND) => match EnumMessage::parse(data) {
                Ok(EnumMessage::Query(q)) => self.on_enum_query(from, &q),
                Ok(EnumMessage::Response(r)) => self.on_enum_response(from, r),
                Err(_) => self.stats.drop(DropReason::Malformed),
            },
            Some(PATH_TEST_DATA_KIND) => match PathTest::parse(data) {
                Ok(t) if self.phase == Phase::Member => self.on_path_test(from, t),
                Ok(_) => self.stats.drop(DropReason::WrongState),
                Err(_) => self.stats.drop(DropReason::Malformed),
            },
            _ => self.stats.drop(DropReason::Malformed),
        }
    }

    /// EnumQuery: answered by the host when the application matches (MC-DPLHP 3.2.5), at once
    /// or, with `indicate_enum`, by the application ([`Event::EnumQuery`]).
    fn on_enum_query(&mut self, from: SocketAddr, q: &EnumQuery) {
        let other_app = q.application_guid.is_some_and(|g| g != self.cfg.application_guid);
        if !self.answers_enums() || other_app {
            return self.stats.drop(DropReason::EnumFiltered);
        }
        if self.cfg.indicate_enum {
            let data = q.application_payload.0.clone();
            let room = self.enum_reply_room();
            self.events.push_back(Event::EnumQuery { from, enum_payload: q.enum_payload, data, room });
            return;
        }
        let reply = self.cfg.enum_reply_data.clone();
        self.send_enum_response(from, q.enum_payload, &reply);
    }

    /// Host with `indicate_enum`: answers the [`Event::EnumQuery`] from `from` with the
    /// application's `reply` data (MC-DPLHP 2.2.2 `ApplicationData`; empty: none), if we
    /// still host an enumerable session.
    /// A reply over the [`Event::EnumQuery`]'s `room` is not sent (it would not fit one
    /// datagram).
    pub fn answer_enum(&mut self, from: SocketAddr, enum_payload: u16, reply: &[u8]) {
        if reply.len() > self.enum_reply_room() {
            tracing::debug!(%from, bytes = reply.len(), "enumeration reply data over one datagram: not sent");
            return self.stats.drop(DropReason::EnumFiltered);
        }
        if self.answers_enums() {
            self.send_enum_response(from, enum_payload, reply);
        }
    }

    /// [`Event::EnumQuery`]'s `room`: the transport's datagram less the EnumResponse's fixed
    /// 92 bytes, the session name (UTF-16 with its NUL) and the `ApplicationReservedData`
    /// (MC-DPLHP 2.2.2).
    fn enum_reply_room(&self) -> usize {
        let reserved = self.desc.as_ref().map_or(0, |d| d.application_reserved_data.len());
        self.enum_room_with(reserved).unwrap_or(0)
    }

    /// The room left for reply data with `reserved` bytes of `ApplicationReservedData`;
    /// `None` when they do not fit at all.
    fn enum_room_with(&self, reserved: usize) -> Option<usize> {
        let name = self.desc.as_ref().map_or(&self.cfg.session_name, |d| &d.session_name);
        let units = name.encode_utf16().count() + 1;
        self.cfg.transport.max_datagram().checked_sub(92 + 2 * units + reserved)
    }

    /// True when `reserved` bytes of `ApplicationReservedData` leave the EnumResponse in one
    /// datagram.
    pub(crate) fn fits_enum_response(&self, reserved: &[u8]) -> bool {
        self.enum_room_with(reserved.len()).is_some()
    }

    /// We host, and DPNSESSION_NOENUMS is not set.
    fn answers_enums(&self) -> bool {
        self.phase == Phase::Host
            && self.desc.as_ref().is_some_and(|d| !d.flags.contains(ApplicationDescFlags::NOENUMS))
    }

    fn send_enum_response(&mut self, to: SocketAddr, enum_payload: u16, reply: &[u8]) {
        let Some(desc) = self.desc.as_ref() else { return };
        let response = EnumResponse {
            enum_payload,
            application_desc_flags: ApplicationDescFlags::from_bits_retain(desc.flags.bits()),
            max_players: desc.max_players,
            current_players: u32::try_from(self.table.len()).unwrap_or(u32::MAX),
            session_name: Some(WideString::new(&desc.session_name)),
            password: None,
            reserved_data: None,
            application_reserved_data: (!desc.application_reserved_data.is_empty())
                .then(|| Blob::new(&desc.application_reserved_data)),
            application_instance_guid: desc.instance,
            application_guid: self.cfg.application_guid,
            application_data: (!reply.is_empty()).then(|| Blob::new(reply)),
        };
        if let Ok(bytes) = EnumMessage::Response(response).to_vec() {
            self.stats.enum_responses_sent += 1;
            self.ep.send_unowned(to, bytes);
        }
    }

    /// EnumResponse: reported when it echoes one of our EnumPayload values (MC-DPLHP 3.1.5).
    fn on_enum_response(&mut self, from: SocketAddr, r: EnumResponse) {
        let matches = self.seeker.as_ref().is_some_and(|s| {
            s.payloads.contains(&r.enum_payload) && s.application_guid.is_none_or(|g| g == r.application_guid)
        });
        if !matches {
            return self.stats.drop(DropReason::EnumUnmatched);
        }
        self.events.push_back(Event::HostFound { from, response: Box::new(r) });
    }
}

#[cfg(test)]
mod tests;
