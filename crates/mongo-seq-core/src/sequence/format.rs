//! Formatted ids such as `INV-000042`, produced beside the number.
//!
//! Grammar (checked when options are validated, so a bad template fails early):
//!
//! ```text
//! template    = { literal | "{{" | "}}" | placeholder }   ; at most 200 bytes
//! placeholder = "{seq}" | "{seq:0" width "}"               ; width = 1..=20 (decimal)
//! ```
//!
//! At least one placeholder is required (otherwise every id would be the same string).
//! `{{` and `}}` produce literal braces; any other `{` or `}` is an error. `{seq:0N}` pads the
//! digits with zeros to at least N; a negative number gets its `-` in front of the padded
//! digits (`{seq:04}` of -42 is `-0042`). Numbers wider than N are never cut.

use serde::{Serialize, Serializer};

use crate::error::SeqError;

/// Longest accepted template, in bytes.
pub const MAX_TEMPLATE_BYTES: usize = 200;
/// Widest accepted zero padding (i64 has at most 19 digits).
pub const MAX_WIDTH: usize = 20;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Seq { width: usize },
}

/// A parsed, valid template. Serializes as its source text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatTemplate {
    source: String,
    segments: Vec<Segment>,
}

impl FormatTemplate {
    /// Parses and validates a template.
    pub fn parse(template: &str) -> Result<Self, SeqError> {
        let fail = |position: usize, reason: &str| SeqError::InvalidFormat {
            template: template.to_owned(),
            position,
            reason: reason.to_owned(),
        };
        if template.len() > MAX_TEMPLATE_BYTES {
            return Err(fail(MAX_TEMPLATE_BYTES, "template longer than 200 bytes"));
        }
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut chars = template.char_indices().peekable();
        while let Some((position, ch)) = chars.next() {
            match ch {
                '{' if chars.peek().map(|&(_, c)| c) == Some('{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().map(|&(_, c)| c) == Some('}') => {
                    chars.next();
                    literal.push('}');
                }
                '}' => {
                    return Err(fail(
                        position,
                        "unmatched '}' (write '}}' for a literal brace)",
                    ))
                }
                '{' => {
                    let rest = template.get(position..).unwrap_or("");
                    let Some(close) = rest.find('}') else {
                        return Err(fail(
                            position,
                            "unclosed '{' (write '{{' for a literal brace)",
                        ));
                    };
                    let inner = rest.get(1..close).unwrap_or("");
                    let width =
                        parse_placeholder(inner).map_err(|reason| fail(position, &reason))?;
                    if !literal.is_empty() {
                        segments.push(Segment::Literal(std::mem::take(&mut literal)));
                    }
                    segments.push(Segment::Seq { width });
                    // Skip the placeholder body; `close` is a byte offset of an ASCII '}'.
                    while let Some(&(next, _)) = chars.peek() {
                        if next > position.saturating_add(close) {
                            break;
                        }
                        chars.next();
                    }
                }
                other => literal.push(other),
            }
        }
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        if !segments.iter().any(|s| matches!(s, Segment::Seq { .. })) {
            return Err(fail(0, "template must contain {seq} or {seq:0N}"));
        }
        Ok(Self {
            source: template.to_owned(),
            segments,
        })
    }

    /// The template text as given.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Renders `value` through the template. Infallible: every i64 has a rendering.
    pub fn apply(&self, value: i64) -> String {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Seq { width } => push_padded(&mut out, value, *width),
            }
        }
        out
    }
}

/// Returns the zero-padding width of a placeholder body (`seq` → 0, `seq:07` → 7).
fn parse_placeholder(inner: &str) -> Result<usize, String> {
    if inner == "seq" {
        return Ok(0);
    }
    let Some(spec) = inner.strip_prefix("seq:") else {
        return Err(format!(
            "unknown placeholder {{{inner}}} (only {{seq}} and {{seq:0N}} exist)"
        ));
    };
    let Some(digits) = spec.strip_prefix('0') else {
        return Err(format!(
            "unsupported spec {} in {{{inner}}}: use {{seq:0N}} for zero padding",
            crate::ejson::quoted(spec)
        ));
    };
    let width =
        if !digits.is_empty() && digits.len() <= 2 && digits.bytes().all(|b| b.is_ascii_digit()) {
            digits.parse::<usize>().ok()
        } else {
            None
        };
    match width {
        Some(width @ 1..=MAX_WIDTH) => Ok(width),
        _ => Err(format!("width in {{{inner}}} must be 1..=20")),
    }
}

fn push_padded(out: &mut String, value: i64, width: usize) {
    let digits = value.unsigned_abs().to_string();
    if value < 0 {
        out.push('-');
    }
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(&digits);
}

impl Serialize for FormatTemplate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

/// Formats `value` with `template` in one call (parse + apply).
pub fn format_seq(template: &str, value: i64) -> Result<String, SeqError> {
    Ok(FormatTemplate::parse(template)?.apply(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders() {
        assert_eq!(format_seq("INV-{seq:06}", 42).as_deref(), Ok("INV-000042"));
        assert_eq!(format_seq("{seq}", -7).as_deref(), Ok("-7"));
        assert_eq!(format_seq("{seq:04}", -42).as_deref(), Ok("-0042"));
        assert_eq!(format_seq("{{{seq}}}", 1).as_deref(), Ok("{1}"));
        assert_eq!(format_seq("ü{seq:02}ß", 1234).as_deref(), Ok("ü1234ß"));
        assert_eq!(
            format_seq("{seq:020}", i64::MIN).as_deref(),
            Ok("-09223372036854775808")
        );
        assert_eq!(format_seq("a{seq}b{seq:03}", 5).as_deref(), Ok("a5b005"));
    }

    #[test]
    fn rejects() {
        for bad in [
            "",
            "INV",
            "{",
            "}",
            "{seq",
            "{seq:6}",
            "{seq:00}",
            "{seq:021}",
            "{seq:0x}",
            "{id}",
            "{seq:}",
            "{}",
        ] {
            assert_eq!(
                format_seq(bad, 1).map_err(|e| e.code()),
                Err("INVALID_FORMAT"),
                "{bad:?}"
            );
        }
    }
}
