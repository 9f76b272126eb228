//! DN_ADDRESSING_URL: DirectPlay 8 addresses as `x-directplay:/key=value;...#userdata`
//! (MC-DPL8CS 2.2.8; MS-DPDX 2.2.34).
//!
//! [`AddressingUrl`] is the wire form, an 8-bit string with a terminating NUL, kept byte for
//! byte. [`DirectPlayUrl`] is its meaning: the key/value pairs (unknown keys kept, values
//! percent-decoded) and the user data after `#`.

use std::fmt::{self, Write};

use uuid::Uuid;

use crate::WireError;
use crate::codec::Writer;

/// The scheme and its separator. "://" is invalid (MC-DPL8CS 2.2.8).
pub const URL_PREFIX: &str = "x-directplay:/";
/// Service provider GUID of the IP provider, the `provider` key's usual value (INDEX B.11).
pub const CLSID_DP8SP_TCPIP: Uuid = Uuid::from_u128(0xEBFE7BA0_628D_11D2_AE0F_006097B01411);

/// A DN_ADDRESSING_URL as carried on the wire, without its NUL (MC-DPL8CS 2.2.8).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct AddressingUrl(Vec<u8>);

impl AddressingUrl {
    /// Wraps URL bytes (without a NUL); fails if they contain a NUL.
    pub fn new(bytes: &[u8]) -> Result<Self, WireError> {
        match bytes.iter().position(|&b| b == 0) {
            Some(at) => Err(WireError::BadString { field: "url", offset: at, reason: "NUL inside the URL" }),
            None => Ok(Self(bytes.to_vec())),
        }
    }

    /// Decodes a sized `url` field: the bytes end with the one NUL the size counts.
    pub fn parse_nul(field: &'static str, offset: usize, bytes: &[u8]) -> Result<Self, WireError> {
        let bad = |reason| WireError::BadString { field, offset, reason };
        match bytes.split_last() {
            Some((0, text)) if !text.contains(&0) => Ok(Self(text.to_vec())),
            Some((0, _)) => Err(bad("NUL inside the URL")),
            Some(_) => Err(bad("missing terminating NUL")),
            None => Err(bad("empty; the size must count the NUL")),
        }
    }

    /// The URL bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Bytes on the wire: the text and its NUL.
    pub fn wire_len(&self) -> usize {
        self.0.len() + 1
    }

    /// Writes the text and the NUL.
    pub fn write_nul(&self, w: &mut Writer<'_>) {
        w.bytes(&self.0);
        w.u8(0);
    }

    /// Interprets the URL.
    pub fn url(&self) -> Result<DirectPlayUrl, WireError> {
        let text = std::str::from_utf8(&self.0).map_err(|e| WireError::BadString {
            field: "url",
            offset: e.valid_up_to(),
            reason: "not ASCII/UTF-8",
        })?;
        DirectPlayUrl::parse(text)
    }
}

impl fmt::Debug for AddressingUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(&self.0), f)
    }
}

impl serde::Serialize for AddressingUrl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&String::from_utf8_lossy(&self.0))
    }
}

impl From<&DirectPlayUrl> for AddressingUrl {
    fn from(url: &DirectPlayUrl) -> Self {
        // Display never writes a NUL: values are percent-encoded.
        Self(url.to_string().into_bytes())
    }
}

/// The meaning of a DN_ADDRESSING_URL (MC-DPL8CS 2.2.8): key/value pairs and user data.
///
/// Keys keep their spelling and order; unknown keys are kept so they re-emit. When written,
/// `provider` comes first as the spec asks, values are percent-encoded, and `#userdata`
/// follows unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct DirectPlayUrl {
    /// `key=value` pairs, values percent-decoded.
    pub pairs: Vec<(String, String)>,
    /// Everything after `#`, which the protocol ignores (MS-DPDX 2.2.34).
    pub user_data: Option<String>,
}

impl DirectPlayUrl {
    /// A URL naming the service provider `provider` (the `provider` key, first).
    pub fn new(provider: Uuid) -> Self {
        Self { pairs: Vec::new(), user_data: None }.with("provider", &braced(&provider))
    }

    /// The URL of an IP address: the IP provider, `hostname` and `port`, as Windows writes it
    /// (MC-DPL8CS 4).
    pub fn ip(hostname: &str, port: u16) -> Self {
        Self::new(CLSID_DP8SP_TCPIP).with("hostname", hostname).with("port", &port.to_string())
    }

    /// Adds a pair.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.pairs.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The first value of `key` (keys compare without regard to ASCII case).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v.as_str())
    }

    /// The `provider` GUID.
    pub fn provider(&self) -> Option<Uuid> {
        self.get("provider").and_then(|v| Uuid::parse_str(v).ok())
    }

    /// The `hostname` value.
    pub fn hostname(&self) -> Option<&str> {
        self.get("hostname")
    }

    /// The `port` value, when it is a number up to 65535.
    pub fn port(&self) -> Option<u16> {
        self.get("port").and_then(|v| v.parse().ok())
    }

    /// Parses `x-directplay:/key=value;...#userdata`.
    pub fn parse(text: &str) -> Result<Self, WireError> {
        let bad = |offset, reason| WireError::BadString { field: "url", offset, reason };
        let scheme = text.get(..URL_PREFIX.len()).filter(|s| s.eq_ignore_ascii_case(URL_PREFIX));
        let Some(_) = scheme else {
            return Err(bad(0, "must start with x-directplay:/ (MC-DPL8CS 2.2.8)"));
        };
        let rest = text.get(URL_PREFIX.len()..).unwrap_or_default();
        if rest.starts_with('/') {
            return Err(bad(URL_PREFIX.len(), "\"://\" is invalid (MC-DPL8CS 2.2.8)"));
        }
        let (data, user_data) = match rest.split_once('#') {
            Some((d, u)) => (d, Some(u.to_owned())),
            None => (rest, None),
        };
        let mut pairs = Vec::new();
        let mut at = URL_PREFIX.len();
        for part in data.split(';') {
            if !part.is_empty() {
                let (key, value) = part.split_once('=').ok_or(bad(at, "a pair without '='"))?;
                pairs.push((key.to_owned(), percent_decode(value).ok_or(bad(at, "bad percent escape"))?));
            }
            at += part.len() + 1;
        }
        Ok(Self { pairs, user_data })
    }
}

impl fmt::Display for DirectPlayUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(URL_PREFIX)?;
        let is_provider = |k: &str| k.eq_ignore_ascii_case("provider");
        let providers = self.pairs.iter().filter(|(k, _)| is_provider(k));
        let others = self.pairs.iter().filter(|(k, _)| !is_provider(k));
        for (i, (key, value)) in providers.chain(others).enumerate() {
            if i > 0 {
                f.write_char(';')?;
            }
            write!(f, "{key}=")?;
            percent_encode(value, f)?;
        }
        if let Some(user) = &self.user_data {
            write!(f, "#{user}")?;
        }
        Ok(())
    }
}

/// `{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}` in upper case, as GUIDs appear in URLs.
fn braced(g: &Uuid) -> String {
    format!("{{{}}}", g.hyphenated().to_string().to_uppercase())
}

/// Escapes what the URL syntax reserves (MC-DPL8CS 2.2.8), non-ASCII and control bytes.
fn percent_encode(value: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for b in value.bytes() {
        let plain = b.is_ascii_graphic() && !b"%;/?:@=&#{}".contains(&b);
        if plain { f.write_char(char::from(b))? } else { write!(f, "%{b:02X}")? }
    }
    Ok(())
}

fn percent_decode(value: &str) -> Option<String> {
    let mut out = Vec::with_capacity(value.len());
    let mut bytes = value.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hi = char::from(bytes.next()?).to_digit(16)?;
            let lo = char::from(bytes.next()?).to_digit(16)?;
            out.push(u8::try_from(hi * 16 + lo).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;\
                           hostname=65.52.239.61;port=2302";

    /// MC-DPL8CS 4: the joiner's URL, 98 bytes with its NUL.
    #[test]
    fn mc_dpl8cs_4_url() {
        let url = DirectPlayUrl::parse(EXAMPLE).unwrap();
        assert_eq!(url.provider(), Some(CLSID_DP8SP_TCPIP));
        assert_eq!(url.hostname(), Some("65.52.239.61"));
        assert_eq!(url.port(), Some(2302));
        assert_eq!(url.to_string(), EXAMPLE);
        assert_eq!(DirectPlayUrl::ip("65.52.239.61", 2302).to_string(), EXAMPLE);
        assert_eq!(AddressingUrl::from(&url).wire_len(), 98);
    }

    /// MC-DPL8CS 2.2.8: the serial example, with user data and an unknown key kept.
    #[test]
    fn keeps_unknown_keys_and_user_data() {
        let text = "x-directplay:/provider=%7B743B5D60-628D-11D2-AE0F-006097B01411%7D;baud=57600;\
                    stopbits=1;parity=NONE;flowcontrol=RTSDTR;x-mine=a%3Bb#SerialUserData";
        let url = DirectPlayUrl::parse(text).unwrap();
        assert_eq!(url.get("x-mine"), Some("a;b"));
        assert_eq!(url.user_data.as_deref(), Some("SerialUserData"));
        assert_eq!(url.to_string(), text);
    }

    #[test]
    fn provider_is_written_first() {
        let url = DirectPlayUrl::default().with("port", "1").with("provider", "{X}");
        assert_eq!(url.to_string(), "x-directplay:/provider=%7BX%7D;port=1");
    }

    #[test]
    fn rejects_bad_urls() {
        assert!(DirectPlayUrl::parse("x-directplay://provider=1").is_err());
        assert!(DirectPlayUrl::parse("http:/provider=1").is_err());
        assert!(DirectPlayUrl::parse("x-directplay:/provider").is_err());
        assert!(DirectPlayUrl::parse("x-directplay:/port=%G0").is_err());
        assert!(AddressingUrl::parse_nul("url", 0, b"x-directplay:/").is_err());
        assert!(AddressingUrl::parse_nul("url", 0, b"x-dir\0ectplay:/\0").is_err());
        assert!(AddressingUrl::parse_nul("url", 0, b"").is_err());
        assert!(AddressingUrl::new(b"a\0").is_err());
    }
}
