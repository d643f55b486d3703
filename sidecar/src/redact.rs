//! Secrets never reach a log line or an error message: connection-string passwords are found
//! here (the one parser of where a password is in a connection string) and masked, and every
//! line the logger writes goes through [`RedactingWriter`].

use std::io::{self, Write};
use std::ops::Range;

/// Masks the password of every `scheme://user:password@host` in `text` (`user:****@host`).
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        // In free text a connection string also ends at whitespace or a quote.
        let end = tail
            .find(|c: char| matches!(c, '"' | '\'' | '<' | '>') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = authority(&tail[..end]);
        match password_in(authority) {
            Some(password) => {
                out.push_str(&authority[..password.start]);
                out.push_str("****");
                out.push_str(&authority[password.end..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[authority.len()..];
    }
    out.push_str(rest);
    out
}

/// The password of the connection string `uri`, if it has a non-empty one.
pub fn password_of(uri: &str) -> Option<&str> {
    let authority = authority(&uri[uri.find("://")? + 3..]);
    let password = &authority[password_in(authority)?];
    (!password.is_empty()).then_some(password)
}

/// A message about the connection string `uri` without its password: every connection string
/// in it redacted, and the password masked wherever the message quotes it on its own (a driver
/// quotes the part of the string it refused).
pub fn redact_message(uri: &str, message: &str) -> String {
    let message = redact(message);
    match password_of(uri) {
        Some(password) => mask_word(&message, password),
        None => message,
    }
}

/// A connection string's user information and hosts, in the text right after its `://`: they
/// end at the first `/`, `?` or `#` (delimiters that a user name or password must
/// percent-encode, by the connection string specification).
fn authority(after_scheme: &str) -> &str {
    &after_scheme[..after_scheme
        .find(['/', '?', '#'])
        .unwrap_or(after_scheme.len())]
}

/// Where the password is in an authority `user:password@hosts`, if it has one.
fn password_in(authority: &str) -> Option<Range<usize>> {
    let at = authority.rfind('@')?;
    let colon = authority[..at].find(':')?;
    Some(colon + 1..at)
}

/// `text` with every occurrence of `word` that stands alone (not inside a longer word) masked:
/// a password quoted by the driver goes, the letters of a one-letter password stay.
fn mask_word(text: &str, word: &str) -> String {
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let (before, after) = (
            rest[..at].chars().last(),
            rest[at + word.len()..].chars().next(),
        );
        out.push_str(&rest[..at]);
        out.push_str(if is_word(before) || is_word(after) {
            word
        } else {
            "****"
        });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// Wraps a writer so that whatever is written has its connection-string passwords masked.
/// The log formatter writes each event with one call, so URIs are never split across calls.
pub struct RedactingWriter<W: Write>(pub W);

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_passwords_only() {
        assert_eq!(
            redact("mongodb://u:p%40ss@h:27017/db?x=1"),
            "mongodb://u:****@h:27017/db?x=1"
        );
        assert_eq!(
            redact("uri=\"mongodb+srv://admin:s3cr3t@cluster.example.net\" ok"),
            "uri=\"mongodb+srv://admin:****@cluster.example.net\" ok"
        );
        assert_eq!(
            redact("mongodb://h1,h2/?replicaSet=rs0"),
            "mongodb://h1,h2/?replicaSet=rs0"
        );
        assert_eq!(redact("mongodb://user@h"), "mongodb://user@h");
        assert_eq!(
            redact("a mongodb://a:b@h and mongodb://c:d@h"),
            "a mongodb://a:****@h and mongodb://c:****@h"
        );
        assert_eq!(redact("no uri here"), "no uri here");
        // A connection string in the query of another is redacted too.
        assert_eq!(
            redact("mongodb://h/?x=mongodb://a:b@c"),
            "mongodb://h/?x=mongodb://a:****@c"
        );
    }

    #[test]
    fn a_password_quoted_in_a_message_is_masked_only_where_it_stands_alone() {
        assert_eq!(
            mask_word("bad p in key-password", "p"),
            "bad **** in key-password"
        );
        assert_eq!(
            mask_word("s3cret: 's3cret' rejected", "s3cret"),
            "****: '****' rejected"
        );
        assert_eq!(password_of("mongodb://u:p%40ss@h/?x=1"), Some("p%40ss"));
        assert_eq!(password_of("mongodb://u@h/"), None);
        assert_eq!(password_of("mongodb://u:@h/"), None);
        assert_eq!(
            redact_message(
                "mongodb://u:s3cret@h/",
                "s3cret in mongodb://u:s3cret@h/ refused"
            ),
            "**** in mongodb://u:****@h/ refused"
        );
    }
}
