//! GUIDs in JSON: braced upper-case text, as Windows and the specs print them
//! (`{61EF80DA-691B-4247-9ADD-1C7BED2BC13E}`). On the wire they use the Windows byte layout
//! (`Reader::guid`, `Writer::guid`).

use uuid::Uuid;

/// Formats a GUID the Windows way.
pub fn braced_upper(guid: &Uuid) -> String {
    format!("{{{}}}", guid.hyphenated().to_string().to_uppercase())
}

/// `serialize_with` for a GUID field.
pub(crate) fn serialize<S: serde::Serializer>(guid: &Uuid, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&braced_upper(guid))
}

/// `serialize_with` for an optional GUID field.
#[allow(clippy::ref_option)] // the signature serde's `serialize_with` requires
pub(crate) fn serialize_opt<S: serde::Serializer>(guid: &Option<Uuid>, s: S) -> Result<S::Ok, S::Error> {
    match guid {
        Some(g) => s.serialize_some(&braced_upper(g)),
        None => s.serialize_none(),
    }
}
