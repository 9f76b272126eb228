//! What a session tells its application, and why commands fail.

use std::net::SocketAddr;

use dplay_dframe::SigningMode;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::enumeration::EnumResponse;
use dplay_wire::dp8::session::{ApplicationDescFlags, DestroyReason, ResultCode};

/// The most characters of a refused joiner's name a [`Event::JoinRefused`] (or the DP4 one)
/// carries: enough to recognise it, never the whole of a hostile one.
pub const REFUSED_NAME_CHARS: usize = 256;

/// `name` cut to [`REFUSED_NAME_CHARS`] characters.
pub(crate) fn refused_name(name: String) -> String {
    if name.chars().count() <= REFUSED_NAME_CHARS {
        name
    } else {
        name.chars().take(REFUSED_NAME_CHARS).collect()
    }
}

/// Something the application should know; drain with [`crate::Session::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// An EnumResponse matched one of our EnumQuery messages (MC-DPLHP 3.1.5).
    HostFound {
        /// Who answered.
        from: SocketAddr,
        /// The session it describes.
        response: Box<EnumResponse>,
    },
    /// We are in the session: as host once it is created, as a joiner once the host's
    /// DN_INSTRUCT_CONNECT arrived and every older peer identified itself (MC-DPL8CS 3.1.5.2).
    Joined {
        /// Our DPNID.
        local: Dpnid,
        /// The host's DPNID.
        host: Dpnid,
        /// The session's `dwFlags` (MC-DPL8CS 2.2.1.4): `CLIENT_SERVER` for a client/server
        /// session (then `host` is the server), `FAST_SIGNED`, `MIGRATE_HOST` ...
        flags: ApplicationDescFlags,
    },
    /// Joining: the host answered with the name table (DN_SEND_CONNECT_INFO) but we are not in
    /// yet: its DN_INSTRUCT_CONNECT has not come, or older peers have not connected to us
    /// (MC-DPL8CS 3.1.5.2 steps 5-6). Reported each time what we wait for changes.
    JoinPending {
        /// Our DPNID, as the host gave it.
        local: Dpnid,
        /// The host's DPNID.
        host: Dpnid,
        /// The host's DN_INSTRUCT_CONNECT for us has not come yet.
        awaiting_instruction: bool,
        /// Older peers that have not connected to us yet.
        awaiting_peers: Vec<Dpnid>,
    },
    /// A player entered the name table.
    PlayerAdded {
        /// Its DPNID.
        dpnid: Dpnid,
        /// Its name.
        name: String,
    },
    /// A player left the name table.
    PlayerRemoved {
        /// Its DPNID.
        dpnid: Dpnid,
        /// Why (MC-DPL8CS 2.2.2.2).
        reason: DestroyReason,
    },
    /// The host changed (MC-DPL8CS 3.2.5.4), reported once HOST_MIGRATE_COMPLETE arrives (or,
    /// on the new host, once it sent it).
    HostMigrated {
        /// The new host.
        new_host: Dpnid,
    },
    /// Application data (MC-DPL8CS 2.2.3.1). Data a member sent us before we were joined is
    /// reported right after [`Event::Joined`], in arrival order (MC-DPL8CS 3.1.5.2; bounded by
    /// [`crate::EARLY_DATA_MESSAGES`] and [`crate::EARLY_DATA_BYTES`]).
    Message {
        /// The sender.
        from: Dpnid,
        /// The bytes as sent.
        data: Vec<u8>,
        /// Sent reliably.
        reliable: bool,
        /// Sent sequentially.
        sequential: bool,
        /// The sender asked to hear when we have processed it (DN_REQ_PROCESS_COMPLETION,
        /// MC-DPL8CS 2.2.3.2) and the answer waits for the application
        /// (`SessionConfig::defer_process_completion`): hand it to
        /// [`crate::Session::processed`] once done. `None` when nothing waits (not asked,
        /// or answered on arrival).
        process_token: Option<ProcessToken>,
    },
    /// A DirectPlay Voice message: a DFRAME with `PACKET_COMMAND_USER_2` (MC-DPLVP 2.1), for
    /// the voice layer above (`dplay-voice`).
    Voice {
        /// The sender: its DVID (MC-DPLVP 3.1.5.1.3 <1>).
        from: Dpnid,
        /// The voice message's bytes.
        data: Vec<u8>,
    },
    /// A DXDiag chat message, TRANS_USERDATA_SEND_MESSAGE (MS-DPDX 3.1.5.7).
    Chat {
        /// The sender.
        from: Dpnid,
        /// The text.
        text: String,
    },
    /// A group, a membership or an entry's information changed (MC-DPL8CS 2.2.4, 2.2.5, 3.4,
    /// 3.5), by a name-table operation of the host (or made by us as host).
    NameTable(TableChange),
    /// One of our operations that waits for an answer ended: a group or information request
    /// (MC-DPL8CS 3.4, 3.5: the host's operation echoed its `dwPacketContext`) or a send with
    /// completion (MC-DPL8CS 3.3: DN_PROCESS_COMPLETION came back).
    Completed {
        /// The context the command returned.
        context: u32,
        /// Done, or why not.
        result: Result<(), CompletionError>,
    },
    /// An application message sent with [`crate::Session::send_to_tracked`] (or the group and
    /// everyone forms, one per copy) is done with.
    SendDone {
        /// The `Tracked::id` it was sent with.
        id: u64,
        /// Acknowledged, sent, timed out or cancelled unsent, or lost with its connection.
        outcome: dplay_dframe::SendOutcome,
        /// Reliable and acknowledged: how its first frame went.
        first_frame: Option<dplay_dframe::FirstFrame>,
    },
    /// Host: a joiner was refused with DN_CONNECT_FAILED (MC-DPL8CS 3.1.5.1 step 2): banned,
    /// a wrong password, the session full, a name over its limit ... One a refused
    /// PLAYER_CONNECT_INFO; joiners dropped at a deadline or past a cap are not reported here.
    JoinRefused {
        /// Where the joiner's connection came from.
        from: SocketAddr,
        /// The name it asked for, if it sent one, cut to [`REFUSED_NAME_CHARS`] characters (a
        /// refused name may be of any length the datagrams allow).
        name: Option<String>,
        /// The `hResultCode` it was sent (MC-DPL8CS 2.2.1.3).
        code: ResultCode,
    },
    /// Host with `indicate_connect`: a joiner passed the checks and waits for
    /// [`crate::Session::answer_join`] (DPN_MSGID_INDICATE_CONNECT). It is held until answered,
    /// or until its join deadline drops it ([`Event::JoinAborted`]).
    JoinRequest {
        /// Where the joiner's connection comes from (the answer names it).
        from: SocketAddr,
        /// The name it asked for, cut to [`REFUSED_NAME_CHARS`] characters.
        name: Option<String>,
        /// Its `connectData` (MC-DPL8CS 2.2.1.2).
        connect_data: Vec<u8>,
    },
    /// Host with `indicate_enum`: an EnumQuery for our session (MC-DPLHP 2.2.1, 3.2.5) waits
    /// for [`crate::Session::answer_enum`]; unanswered, no EnumResponse goes out. Nothing is
    /// held for it.
    EnumQuery {
        /// Where it came from (the answer goes there).
        from: SocketAddr,
        /// Its `EnumPayload`, which the answer echoes.
        enum_payload: u16,
        /// Its `ApplicationPayload`: the enumerating application's data.
        data: Vec<u8>,
        /// The most reply data the EnumResponse carries in one datagram of the transport's
        /// `max_datagram` (MC-DPLHP 2.2.2: 92 bytes and the session name before it).
        room: usize,
    },
    /// Host: a joiner of an [`Event::JoinRequest`] left, or was dropped at its deadline, before
    /// it was admitted (DPN_MSGID_INDICATED_CONNECT_ABORTED when the application accepted it).
    JoinAborted {
        /// Where its connection came from.
        from: SocketAddr,
    },
    /// The host's DN_TERMINATE_SESSION carried data (MC-DPL8CS 2.2.2.1: DestroyPeer's or
    /// TerminateSession's on a Windows host): [`Event::SessionEnded`] with
    /// [`EndReason::Terminated`] follows at once. Not reported when it carried none.
    TerminateData {
        /// Its `TerminateData`, as sent (also [`crate::Session::terminate_data`]).
        data: Vec<u8>,
    },
    /// We are out of the session; nothing more comes.
    SessionEnded {
        /// Why.
        reason: EndReason,
    },
}

/// A received DN_REQ_PROCESS_COMPLETION whose answer waits for the application
/// ([`crate::Session::processed`]); unique within its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProcessToken(pub(crate) u64);

/// A change of the name table's groups or information (MC-DPL8CS 2.2.4, 2.2.5).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableChange {
    /// DN_CREATE_GROUP.
    GroupCreated {
        /// The new group.
        group: Dpnid,
        /// Its name.
        name: String,
        /// The player that asked for it (`dpnidRequesting`).
        requested_by: Dpnid,
    },
    /// DN_DESTROY_GROUP: the group and its memberships are gone.
    GroupDestroyed {
        /// The group.
        group: Dpnid,
    },
    /// DN_ADD_PLAYER_TO_GROUP.
    MemberAdded {
        /// The group.
        group: Dpnid,
        /// The player.
        player: Dpnid,
    },
    /// DN_DELETE_PLAYER_FROM_GROUP, or the player left the session (MC-DPL8CS 3.4.1).
    MemberRemoved {
        /// The group.
        group: Dpnid,
        /// The player.
        player: Dpnid,
    },
    /// DN_UPDATE_INFO: a player's or group's name or data.
    InfoUpdated {
        /// The player or group.
        dpnid: Dpnid,
        /// True for a group.
        group: bool,
        /// The new name, when DPNINFO_NAME was set.
        name: Option<String>,
        /// The new data, when DPNINFO_DATA was set.
        data: Option<Vec<u8>>,
    },
}

/// Why an operation that waited for an answer failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum CompletionError {
    /// The connection to the peer (or to the host we asked) ended first (MC-DPL8CS 3.3).
    #[error("DPNERR_CONNECTIONLOST: the connection ended before the answer came")]
    ConnectionLost,
}

/// Why the local participant is no longer in a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum EndReason {
    /// We left ([`crate::Session::leave`]).
    #[error("left")]
    Left,
    /// The host sent DN_TERMINATE_SESSION (MC-DPL8CS 3.2.5.1-3.2.5.3).
    #[error("terminated by the host")]
    Terminated,
    /// The host refused the join with DN_CONNECT_FAILED (MC-DPL8CS 3.1.5.1).
    #[error("the host refused the join with {0}")]
    Refused(ResultCode),
    /// The host answered, but the existing peer `peer` could not connect to us: the host sent
    /// DN_CONNECT_ATTEMPT_FAILED naming it (MC-DPL8CS 3.1.5.2 step 8).
    #[error("the host answered, but peer {peer} never connected to us")]
    ConnectAttemptFailed {
        /// The peer that could not connect.
        peer: Dpnid,
    },
    /// Nothing answered our transport CONNECT to the host (MC-DPL8R 3.1.6.1).
    #[error("no answer from the host")]
    NoAnswer,
    /// The host's transport answered with CONNECTED_SIGNED asking for a signing mode we do not
    /// use: fast signing when we were not told to sign, or full signing, which we do not
    /// implement (MC-DPL8R 3.1.5.1.3; docs/decisions.md).
    #[error("the host requires {0}")]
    SigningRequired(SigningMode),
    /// The connection to the host failed or ended, and no migration took over.
    #[error("connection to the host lost")]
    HostLost,
    /// The name table our host sent (DN_SEND_CONNECT_INFO, or a DN_ADD_PLAYER or other
    /// operation after it, MC-DPL8CS 2.2.1.4, 2.2.6) would take what we hold past our memory
    /// budget (`Limits::memory_budget`): we left rather than hold it (docs/limits.md).
    #[error("DPNERR_OUTOFMEMORY: the host's name table is over our memory budget")]
    OutOfMemory,
}

/// Why a command was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// Not possible in the current state (already hosting or joined, not in a session ...).
    #[error("not possible in the current state")]
    WrongState,
    /// The DPNID is not a connected member we can reach.
    #[error("unknown or unreachable player")]
    UnknownPlayer,
    /// The DPNID is not a group of the name table (or the player is not, or already is, in it).
    #[error("DPNERR_INVALIDGROUP: unknown group or membership")]
    InvalidGroup,
    /// Too many operations already wait for an answer.
    #[error("too many operations wait for an answer")]
    Busy,
    /// A name or data of our own configuration is over its limit (DPNERR_INVALIDPARAM;
    /// [`crate::Limits`]).
    #[error("a name or data is over its limit (DPNERR_INVALIDPARAM)")]
    InvalidParam,
    /// The transport refused the message.
    #[error("transport: {0}")]
    Transport(#[from] dplay_dframe::SendError),
}

/// How application data is sent (MS-DPDX 1.3): the transport's delivery categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SendFlags {
    /// Retried until acknowledged.
    pub reliable: bool,
    /// Delivered in send order.
    pub sequential: bool,
    /// DPNSEND_NOLOOPBACK: a send to a group we are a member of is not delivered to ourselves
    /// (by default it is, as DirectPlay 8's SendTo does).
    pub no_loopback: bool,
}

impl SendFlags {
    /// Reliable and sequential.
    pub const RELIABLE_SEQUENTIAL: Self = Self { reliable: true, sequential: true, no_loopback: false };
    /// Reliable, any order.
    pub const RELIABLE: Self = Self { reliable: true, sequential: false, no_loopback: false };
    /// Unreliable, any order.
    pub const DATAGRAM: Self = Self { reliable: false, sequential: false, no_loopback: false };

    /// The same, with DPNSEND_NOLOOPBACK set.
    pub const fn without_loopback(self) -> Self {
        Self { no_loopback: true, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hostile name is carried cut (by characters, not bytes), a normal one whole.
    #[test]
    fn refused_names_are_cut() {
        assert_eq!(refused_name("ace".into()), "ace");
        let long = "é".repeat(100_000);
        assert_eq!(refused_name(long).chars().count(), REFUSED_NAME_CHARS);
    }
}
