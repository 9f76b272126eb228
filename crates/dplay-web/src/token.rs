//! The admin token: random unless given, required as `Authorization: Bearer TOKEN` by every
//! command (docs/decisions.md, "Web dashboard").

use std::io::Read;

/// A new token: 128 bits from the operating system's generator, as 32 hex digits.
pub fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `given` is `expected`, taking the same time wherever they differ.
pub(crate) fn matches(expected: &str, given: &str) -> bool {
    let (a, b) = (expected.as_bytes(), given.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_tokens_differ_and_match_themselves() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(matches(&a, &a.clone()));
        assert!(!matches(&a, &b));
        assert!(!matches(&a, ""));
        assert!(!matches(&a, &a[..31]));
    }
}
