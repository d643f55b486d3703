//! Secrets never reach a log line: connection-string passwords are masked here, and every line
//! the logger writes goes through [`RedactingWriter`].

use std::io::{self, Write};

/// Masks the password of every `scheme://user:password@host` in `text` (`user:****@host`).
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        // The authority ends at the first '/', '?', '#', whitespace or quote.
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                match userinfo.find(':') {
                    Some(colon) => {
                        out.push_str(&userinfo[..colon]);
                        out.push_str(":****");
                    }
                    None => out.push_str(userinfo),
                }
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
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
    use super::redact;

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
    }
}
