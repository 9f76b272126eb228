//! What the voice tests over simulated sessions share.

use dplay_wire::voice::{Dvid, VoiceMessage};

/// Of `heard` ((receiver, message) pairs, drained), the receivers of SPEECHWITHFROM from
/// `source`, with counts, by receiver.
pub(crate) fn speech_from(heard: &mut Vec<(usize, VoiceMessage)>, source: Dvid) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (to, m) in heard.drain(..) {
        if let VoiceMessage::SpeechWithFrom(s) = m
            && s.source == source
        {
            match out.iter_mut().find(|(t, _)| *t == to) {
                Some((_, n)) => *n += 1,
                None => out.push((to, 1)),
            }
        }
    }
    out.sort();
    out
}
