//! One-time codes: what a chat user types to answer one request. Ten characters of Crockford's
//! base32 (lower case, no `i`, `l`, `o`, `u`): 50 bits from the operating system's CSPRNG
//! (`getrandom`), so a code cannot be guessed within its time to live.

use std::fmt;

use anyhow::{Context, Result};

/// The alphabet (Crockford's base32, lower case).
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Characters in a code.
pub const LEN: usize = 10;

/// Random bits in a code (at least 40, as the issue that asked for codes requires).
pub const BITS: usize = LEN * 5;
const _: () = assert!(BITS >= 40);

/// A one-time code, lower case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(String);

impl Code {
    /// A fresh code from the operating system's random source.
    ///
    /// # Errors
    /// When the operating system gives no random bytes.
    pub fn random() -> Result<Code> {
        let mut bytes = [0u8; LEN];
        getrandom::fill(&mut bytes)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .context("could not draw a random code")?;
        Ok(Code(
            bytes
                .iter()
                .map(|b| ALPHABET[usize::from(b & 31)] as char)
                .collect(),
        ))
    }

    /// Reads a code as a person types it: case and hyphens do not matter, and Crockford's look-alikes
    /// (`i`/`l` for `1`, `o` for `0`) are read as the digits. `None` when it is not a code.
    pub fn parse(s: &str) -> Option<Code> {
        let mut out = String::with_capacity(LEN);
        for c in s.chars().filter(|c| *c != '-') {
            let c = match c.to_ascii_lowercase() {
                'i' | 'l' => '1',
                'o' => '0',
                c => c,
            };
            if !c.is_ascii() || !ALPHABET.contains(&(c as u8)) {
                return None;
            }
            out.push(c);
        }
        (out.len() == LEN).then_some(Code(out))
    }

    /// The code as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_ten_characters_of_the_alphabet_and_differ() {
        let a = Code::random().unwrap();
        let b = Code::random().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), LEN);
        assert!(a.as_str().bytes().all(|c| ALPHABET.contains(&c)));
        assert_eq!(Code::parse(a.as_str()), Some(a));
    }

    #[test]
    fn typed_codes_are_read_forgivingly_and_nothing_else_is_a_code() {
        assert_eq!(
            Code::parse("AB12-CD34-EF").map(|c| c.to_string()),
            Some("ab12cd34ef".into())
        );
        assert_eq!(
            Code::parse("oi0l1abcde").map(|c| c.to_string()),
            Some("01011abcde".into())
        );
        for bad in [
            "",
            "abc",
            "ab12cd34efg",
            "ab12cd34eu",
            "ab12cd34é1",
            "ab12 cd34e",
        ] {
            assert_eq!(Code::parse(bad), None, "{bad}");
        }
    }
}
