//! DirectPlay Voice (MC-DPLVP) above a DirectPlay session, sans-IO: voice messages, the
//! sender's DVID and `now` in; voice messages for DVIDs, events and counters out.
//!
//! * [`VoiceServer`]: the voice server of the forwarding and echo session types (1.3.5,
//!   1.3.6), which need no codec: speech bytes are copied and the sender's DVID added
//!   (3.2.5.5.2, 3.2.5.6.2). Mixing (1.3.4) is refused: its server decodes, mixes and
//!   re-encodes speech, which needs the codecs. Peer (1.3.3) is refused too, though its server
//!   handles no speech: its clients talk to each other and elect a new server among themselves
//!   (1.3.3.1), which this stack does not do (docs/decisions.md, "DirectPlay Voice").
//! * [`VoiceClient`]: enough of a voice client (3.1) to check a host's voice: it connects,
//!   sends frames and measures their round trip.
//!
//! The session layer carries the bytes: over DirectPlay 8 as DFRAMEs with
//! `PACKET_COMMAND_USER_2`, over DirectPlay 4 as DPSP_MSG_VOICE; a DVID is the player's DPNID
//! or DirectPlay 4 player id (3.1.5.1.3 <1>). Speech goes unreliable and unordered, everything
//! else reliable and ordered ([`Outgoing::reliable`]).

mod client;
mod limits;
mod server;
mod stats;

pub use client::{CONNECT_RETRY, CONNECT_TIMEOUT, ClientEvent, RoundTrips, VoiceClient, VoiceClientConfig};
pub use limits::{MAX_SPEECH_DATA, SPEECH_BURST, SPEECH_PER_SECOND};
pub use server::{ClientGone, ServerEvent, Talker, VoiceServer, VoiceServerConfig};
pub use stats::{VoiceDrop, VoiceStats};

use dplay_wire::voice::Dvid;

/// A voice message to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The player it goes to.
    pub to: Dvid,
    /// The message's bytes.
    pub bytes: Vec<u8>,
    /// Guaranteed and ordered (every message but speech, MC-DPLVP 2.2).
    pub reliable: bool,
}
