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

/// The meaning of a DN_ADDRESSING_URL (MC-DPL8CS 2.2.8): typed key/value pairs and user data.
///
/// Keys keep their spelling and order; unknown keys are kept so they re-emit. When written,
/// `provider` comes first as the spec asks, keys and values are percent-encoded, and the user
/// data follows `#`, percent-encoded too.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DirectPlayUrl {
    /// `key=value` pairs, values typed by [`UrlValue::from_url`].
    pub pairs: Vec<(String, UrlValue)>,
    /// The bytes after `#`, percent-decoded, which the protocol ignores (MS-DPDX 2.2.34).
    pub user_data: Option<Vec<u8>>,
}

impl DirectPlayUrl {
    /// A URL naming the service provider `provider` (the `provider` key, first).
    pub fn new(provider: Uuid) -> Self {
        Self::default().with_value(KEY_PROVIDER, UrlValue::Guid(provider))
    }

    /// The URL of an IP address: the IP provider, `hostname` and `port`, as Windows writes it
    /// (MC-DPL8CS 4).
    pub fn ip(hostname: &str, port: u16) -> Self {
        Self::new(CLSID_DP8SP_TCPIP)
            .with_value(KEY_HOSTNAME, UrlValue::String(hostname.to_owned()))
            .with_value(KEY_PORT, UrlValue::Dword(port.into()))
    }

    /// Adds a pair whose value is written as in a URL, typed by [`UrlValue::from_url`].
    pub fn with(self, key: &str, value: &str) -> Self {
        let value = UrlValue::from_url(key, value.as_bytes().to_vec());
        self.with_value(key, value)
    }

    /// Adds a typed pair.
    pub fn with_value(mut self, key: &str, value: UrlValue) -> Self {
        self.pairs.push((key.to_owned(), value));
        self
    }

    /// Sets `key` to `value`: replaces the first pair of that key in place, or appends one.
    pub fn set(&mut self, key: &str, value: UrlValue) {
        match self.pairs.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
            Some((_, v)) => *v = value,
            None => self.pairs.push((key.to_owned(), value)),
        }
    }

    /// The first value of `key` (keys compare without regard to ASCII case).
    pub fn value(&self, key: &str) -> Option<&UrlValue> {
        self.pairs.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v)
    }

    /// The first value of `key` when it is a string.
    pub fn get(&self, key: &str) -> Option<&str> {
        match self.value(key)? {
            UrlValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The first value of `key` when it is a GUID.
    pub fn guid(&self, key: &str) -> Option<Uuid> {
        match self.value(key)? {
            UrlValue::Guid(g) => Some(*g),
            _ => None,
        }
    }

    /// The `provider` GUID.
    pub fn provider(&self) -> Option<Uuid> {
        self.guid(KEY_PROVIDER)
    }

    /// The `device` GUID (the local adapter).
    pub fn device(&self) -> Option<Uuid> {
        self.guid(KEY_DEVICE)
    }

    /// The `hostname` value.
    pub fn hostname(&self) -> Option<&str> {
        self.get(KEY_HOSTNAME)
    }

    /// The `port` value, when it is a number up to 65535.
    pub fn port(&self) -> Option<u16> {
        match self.value(KEY_PORT)? {
            UrlValue::Dword(n) => u16::try_from(*n).ok(),
            _ => None,
        }
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
            Some((d, u)) => {
                (d, Some(percent_decode(u).ok_or(bad(text.len() - u.len(), "bad percent escape"))?))
            }
            None => (rest, None),
        };
        let mut pairs = Vec::new();
        let mut at = URL_PREFIX.len();
        for part in data.split(';') {
            if !part.is_empty() {
                let (key, value) = part.split_once('=').ok_or(bad(at, "a pair without '='"))?;
                let key = percent_decode(key).and_then(|k| String::from_utf8(k).ok());
                let key = key.ok_or(bad(at, "bad percent escape or non-UTF-8 in a key"))?;
                let value = percent_decode(value).ok_or(bad(at, "bad percent escape"))?;
                let value = UrlValue::from_url(&key, value);
                pairs.push((key, value));
            }
            at += part.len() + 1;
        }
        Ok(Self { pairs, user_data })
    }
}

impl fmt::Display for DirectPlayUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(URL_PREFIX)?;
        let is_provider = |k: &str| k.eq_ignore_ascii_case(KEY_PROVIDER);
        let providers = self.pairs.iter().filter(|(k, _)| is_provider(k));
        let others = self.pairs.iter().filter(|(k, _)| !is_provider(k));
        for (i, (key, value)) in providers.chain(others).enumerate() {
            if i > 0 {
                f.write_char(';')?;
            }
            percent_encode(key.as_bytes(), f)?;
            f.write_char('=')?;
            percent_encode(&value.url_bytes(), f)?;
        }
        if let Some(user) = &self.user_data {
            f.write_char('#')?;
            percent_encode(user, f)?;
        }
        Ok(())
    }
}

/// Serialized as its URL text, like [`AddressingUrl`].
impl serde::Serialize for DirectPlayUrl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `provider`: the service provider's GUID (MC-DPL8CS 2.2.8).
pub const KEY_PROVIDER: &str = "provider";
/// `device`: the local adapter's GUID.
pub const KEY_DEVICE: &str = "device";
/// `hostname`: a host name or dotted address.
pub const KEY_HOSTNAME: &str = "hostname";
/// `port`: a port number up to 65535.
pub const KEY_PORT: &str = "port";

/// The type of a component value (`dpaddr.h` `DPNA_DATATYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `DPNA_DATATYPE_STRING` (and `STRING_ANSI`, stored as a string).
    String,
    /// `DPNA_DATATYPE_DWORD`.
    Dword,
    /// `DPNA_DATATYPE_GUID`.
    Guid,
    /// `DPNA_DATATYPE_BINARY`.
    Binary,
}

/// The type each predefined key's value has (MC-DPL8CS 2.2.8's table; `dpaddr.h` names the
/// keys); `None` for any other key. The DirectX 9 keys `nameinfo`, `processor` and
/// `traversalmode` follow the SDK documentation (decisions.md, "dpnet.dll: address values").
pub fn key_kind(key: &str) -> Option<ValueKind> {
    const KINDS: &[(&str, ValueKind)] = &[
        ("applicationinstance", ValueKind::Guid),
        ("program", ValueKind::Guid),
        (KEY_PROVIDER, ValueKind::Guid),
        (KEY_DEVICE, ValueKind::Guid),
        ("baud", ValueKind::Dword),
        (KEY_PORT, ValueKind::Dword),
        ("processor", ValueKind::Dword),
        ("traversalmode", ValueKind::Dword),
        (KEY_HOSTNAME, ValueKind::String),
        ("phonenumber", ValueKind::String),
        ("flowcontrol", ValueKind::String),
        ("parity", ValueKind::String),
        ("stopbits", ValueKind::String),
        ("nameinfo", ValueKind::String),
    ];
    KINDS.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|&(_, kind)| kind)
}

/// A component's value with its type, as the address API holds it (`dpaddr.h`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlValue {
    /// A string.
    String(String),
    /// A 32-bit number, written in decimal.
    Dword(u32),
    /// A GUID, written `{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}` (braces escaped).
    Guid(Uuid),
    /// Raw bytes, each escaped as the URL syntax needs.
    Binary(Vec<u8>),
}

impl UrlValue {
    /// Types a value read from a URL (the text after percent-decoding). The URL itself carries
    /// no types (MC-DPL8CS 2.2.8), so: a predefined key's value takes its key's type when it
    /// fits it ([`key_kind`]); any other value is a GUID when it is a braced GUID, a DWORD when
    /// it is decimal digits that fit 32 bits, a string when it is UTF-8, and binary otherwise
    /// (decisions.md, "dpnet.dll: address values").
    pub fn from_url(key: &str, bytes: Vec<u8>) -> Self {
        let text = std::str::from_utf8(&bytes).ok();
        let guid = |t: &str, braced_only: bool| {
            let braced = t.len() == 38 && t.starts_with('{') && t.ends_with('}');
            (braced || !braced_only).then(|| Uuid::parse_str(t).ok()).flatten()
        };
        let dword = |t: &str| t.bytes().all(|b| b.is_ascii_digit()).then(|| t.parse().ok()).flatten();
        let typed = match (key_kind(key), text) {
            (Some(ValueKind::Guid), Some(t)) => guid(t, false).map(Self::Guid),
            (Some(ValueKind::Dword), Some(t)) => dword(t).map(Self::Dword),
            (Some(ValueKind::String), Some(t)) => Some(Self::String(t.to_owned())),
            (_, Some(t)) => guid(t, true).map(Self::Guid).or_else(|| dword(t).map(Self::Dword)),
            (_, None) => None,
        };
        typed.unwrap_or_else(|| match String::from_utf8(bytes) {
            Ok(s) => Self::String(s),
            Err(e) => Self::Binary(e.into_bytes()),
        })
    }

    /// The value's type.
    pub fn kind(&self) -> ValueKind {
        match self {
            Self::String(_) => ValueKind::String,
            Self::Dword(_) => ValueKind::Dword,
            Self::Guid(_) => ValueKind::Guid,
            Self::Binary(_) => ValueKind::Binary,
        }
    }

    /// The value as the URL writes it, before percent-encoding.
    pub fn url_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            Self::String(s) => s.as_bytes().into(),
            Self::Dword(n) => n.to_string().into_bytes().into(),
            Self::Guid(g) => braced(g).into_bytes().into(),
            Self::Binary(b) => b.as_slice().into(),
        }
    }
}

/// `{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}` in upper case, as GUIDs appear in URLs.
fn braced(g: &Uuid) -> String {
    format!("{{{}}}", g.hyphenated().to_string().to_uppercase())
}

/// Escapes what the URL syntax reserves (MC-DPL8CS 2.2.8), non-ASCII and control bytes.
fn percent_encode(bytes: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for &b in bytes {
        let plain = b.is_ascii_graphic() && !b"%;/?:@=&#{}".contains(&b);
        if plain { f.write_char(char::from(b))? } else { write!(f, "%{b:02X}")? }
    }
    Ok(())
}

/// Undoes [`percent_encode`]: `None` for a `%` without two hex digits after it.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hi = char::from(bytes.next()?).to_digit(16)?;
            let lo = char::from(bytes.next()?).to_digit(16)?;
            out.push(u8::try_from(hi * 16 + lo).ok()?);
        } else {
            out.push(b);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

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
        assert_eq!(url.get("stopbits"), Some("1"));
        assert_eq!(url.value("baud"), Some(&UrlValue::Dword(57600)));
        assert_eq!(url.user_data.as_deref(), Some(&b"SerialUserData"[..]));
        assert_eq!(url.to_string(), text);
    }

    #[test]
    fn provider_is_written_first() {
        let url = DirectPlayUrl::default().with("port", "1").with("provider", "{X}");
        assert_eq!(url.to_string(), "x-directplay:/provider=%7BX%7D;port=1");
    }

    /// The URL has no types; each value gets its key's type, or one inferred from its text.
    #[test]
    fn values_are_typed_by_key_then_by_text() {
        let text = "x-directplay:/provider=%7BEBFE7BA0-628D-11D2-AE0F-006097B01411%7D;\
                    port=0000230034;hostname=1234;mine=%7B6733C6E8-A0D6-450E-8C18-CEACF331DC27%7D;\
                    n=42;big=4294967296;s=abc;b=%FF%00;e=;port2=-1";
        let url = DirectPlayUrl::parse(text).unwrap();
        let kinds: Vec<_> = url.pairs.iter().map(|(_, v)| v.kind()).collect();
        use ValueKind::*;
        assert_eq!(kinds, [Guid, Dword, String, Guid, Dword, String, String, Binary, String, String]);
        assert_eq!(url.value("port"), Some(&UrlValue::Dword(230034)));
        assert_eq!(url.port(), None, "230034 is no port");
        assert_eq!(url.get("hostname"), Some("1234"));
        assert_eq!(url.value("b"), Some(&UrlValue::Binary(vec![0xFF, 0])));
        // A predefined key whose value does not fit its type keeps the text.
        let url = DirectPlayUrl::parse("x-directplay:/port=http;provider=IP").unwrap();
        assert_eq!((url.get("port"), url.get("provider")), (Some("http"), Some("IP")));
    }

    /// Keys, values and user data with reserved, control and non-ASCII bytes survive.
    #[test]
    fn escapes_keys_values_and_user_data() {
        let url = DirectPlayUrl::default()
            .with_value("a=b;c", UrlValue::String("x#y z\u{e9}".into()))
            .with_value("bin", UrlValue::Binary(vec![0, 0x80, b'%']));
        let url = DirectPlayUrl { user_data: Some(b"#\0;".to_vec()), ..url };
        let text = url.to_string();
        assert_eq!(text, "x-directplay:/a%3Db%3Bc=x%23y%20z%C3%A9;bin=%00%80%25#%23%00%3B");
        assert_eq!(DirectPlayUrl::parse(&text).unwrap(), url);
    }

    #[test]
    fn set_replaces_in_place() {
        let mut url = DirectPlayUrl::ip("a", 1);
        url.set("PORT", UrlValue::Dword(2));
        url.set("device", UrlValue::Guid(Uuid::nil()));
        assert_eq!(url.port(), Some(2));
        assert_eq!(url.pairs[2].0, "port");
        assert_eq!(url.device(), Some(Uuid::nil()));
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
        assert!(DirectPlayUrl::parse("x-directplay:/a=b#%4").is_err());
        assert!(DirectPlayUrl::parse("x-directplay:/%FF=b").is_err());
    }

    fn any_value() -> impl Strategy<Value = UrlValue> {
        prop_oneof![
            ".*".prop_map(UrlValue::String),
            any::<u32>().prop_map(UrlValue::Dword),
            any::<u128>().prop_map(|g| UrlValue::Guid(Uuid::from_u128(g))),
            proptest::collection::vec(any::<u8>(), 0..16).prop_map(UrlValue::Binary),
        ]
    }

    proptest! {
        /// Hostile text never panics the parser.
        #[test]
        fn parse_never_panics(text in "(x-directplay:/)?[a-z=;#%0-9A-F{}/\\PC]{0,64}") {
            let _ = DirectPlayUrl::parse(&text);
        }

        /// What we write, we read back with the same text; values read back with the type the
        /// reading rules give their text.
        #[test]
        fn written_urls_read_back(
            pairs in proptest::collection::vec(("[a-z]{1,8}", any_value()), 0..6),
            user in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..16)),
        ) {
            let url = DirectPlayUrl { pairs, user_data: user };
            let text = url.to_string();
            let back = DirectPlayUrl::parse(&text).unwrap();
            prop_assert_eq!(back.to_string(), text);
            prop_assert_eq!(back.user_data, url.user_data);
            for ((k, v), (k2, v2)) in url.pairs.iter().filter(|(k, _)| k == "provider")
                .chain(url.pairs.iter().filter(|(k, _)| k != "provider")).zip(&back.pairs) {
                prop_assert_eq!(k, k2);
                prop_assert_eq!(v2, &UrlValue::from_url(k, v.url_bytes().into_owned()));
            }
        }
    }
}
