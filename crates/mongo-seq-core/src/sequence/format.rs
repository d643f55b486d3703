//! Formatted ids such as `INV-000042`, produced beside the number.
//!
//! Grammar (checked when options are validated, so a bad template fails early):
//!
//! ```text
//! template    = { literal | "{{" | "}}" | placeholder }   ; at most 200 bytes
//! placeholder = "{seq}" | "{seq:0" width "}"               ; width = 1..=20 (decimal)
//!             | "{yyyy}" | "{yy}" | "{mm}" | "{dd}"        ; the period's (see below)
//! ```
//!
//! `{seq}` is required (otherwise every id of a period would be the same string).
//! The period tokens write the number's period ([`crate::sequence::period`]): `{yyyy}` its
//! (fiscal) year in four digits, `{yy}` that year's last two digits, `{mm}` its month and `{dd}`
//! its day in two digits. A token needs a period that has it: `{yyyy}` and `{yy}` a sequence
//! that resets, `{mm}` one that resets monthly or daily, `{dd}` one that resets daily
//! (`INVALID_FORMAT` naming the token, checked with the options).
//! `{{` and `}}` produce literal braces; any other `{` or `}` is an error. `{seq:0N}` pads the
//! digits with zeros to at least N; a negative number gets its `-` in front of the padded
//! digits (`{seq:04}` of -42 is `-0042`). Numbers wider than N are never cut.

use serde::{Serialize, Serializer};

use crate::error::SeqError;
use crate::sequence::calendar::push_digits;
use crate::sequence::period::{Period, Reset};

/// Longest accepted template, in bytes.
pub const MAX_TEMPLATE_BYTES: usize = 200;
/// Widest accepted zero padding (i64 has at most 19 digits).
pub const MAX_WIDTH: usize = 20;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Seq {
        width: usize,
    },
    /// A period token, at byte `position` of the template.
    Period {
        token: PeriodToken,
        position: usize,
    },
}

/// A placeholder for a part of the period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PeriodToken {
    Year,
    ShortYear,
    Month,
    Day,
}

impl PeriodToken {
    fn name(self) -> &'static str {
        match self {
            Self::Year => "{yyyy}",
            Self::ShortYear => "{yy}",
            Self::Month => "{mm}",
            Self::Day => "{dd}",
        }
    }

    /// Whether a period of a sequence resetting `reset` has this part.
    fn fits(self, reset: Reset) -> bool {
        match self {
            Self::Year | Self::ShortYear => reset.is_periodic(),
            Self::Month => matches!(reset, Reset::Monthly | Reset::Daily),
            Self::Day => reset == Reset::Daily,
        }
    }

    /// What the token needs, for the error.
    fn needs(self) -> &'static str {
        match self {
            Self::Year | Self::ShortYear => {
                "a sequence that resets (reset yearly, monthly or daily): a sequence that never resets has no period"
            }
            Self::Month => "reset monthly or daily",
            Self::Day => "reset daily",
        }
    }

    /// Writes the token's part of `period`; nothing when the period lacks it (a template is
    /// only used with the periods of its sequence, checked when the options were).
    fn push(self, out: &mut String, period: Option<&Period>) {
        let Some(period) = period else { return };
        let year = u32::from(period.year_number());
        match self {
            Self::Year => push_digits(out, year, 4),
            Self::ShortYear => push_digits(out, year.checked_rem(100).unwrap_or(0), 2),
            Self::Month => {
                if let Some(month) = period.month() {
                    push_digits(out, u32::from(month), 2);
                }
            }
            Self::Day => {
                if let Some(day) = period.day() {
                    push_digits(out, u32::from(day), 2);
                }
            }
        }
    }
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
                    let segment = parse_placeholder(inner, position)
                        .map_err(|reason| fail(position, &reason))?;
                    if !literal.is_empty() {
                        segments.push(Segment::Literal(std::mem::take(&mut literal)));
                    }
                    segments.push(segment);
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

    /// Whether the template writes a part of the period.
    pub fn has_period_tokens(&self) -> bool {
        self.segments
            .iter()
            .any(|segment| matches!(segment, Segment::Period { .. }))
    }

    /// Checks that every period token has its part in the periods of a sequence resetting
    /// `reset`: `INVALID_FORMAT` naming the first that does not (`{mm}` needs reset monthly or
    /// daily; any token when the sequence never resets).
    pub fn check_period_tokens(&self, reset: Reset) -> Result<(), SeqError> {
        for segment in &self.segments {
            if let Segment::Period { token, position } = segment {
                if !token.fits(reset) {
                    return Err(SeqError::InvalidFormat {
                        template: self.source.clone(),
                        position: *position,
                        reason: format!("{} needs {}", token.name(), token.needs()),
                    });
                }
            }
        }
        Ok(())
    }

    /// Renders `value` in `period` through the template. Infallible: every i64 has a
    /// rendering; the period is the number's (see [`FormatTemplate::check_period_tokens`]).
    pub fn apply(&self, value: i64, period: Option<&Period>) -> String {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Seq { width } => push_padded(&mut out, value, *width),
                Segment::Period { token, .. } => token.push(&mut out, period),
            }
        }
        out
    }
}

/// The segment of a placeholder body at byte `position`: `seq` → width 0, `seq:07` → 7, a
/// period token.
fn parse_placeholder(inner: &str, position: usize) -> Result<Segment, String> {
    let token = match inner {
        "seq" => return Ok(Segment::Seq { width: 0 }),
        "yyyy" => Some(PeriodToken::Year),
        "yy" => Some(PeriodToken::ShortYear),
        "mm" => Some(PeriodToken::Month),
        "dd" => Some(PeriodToken::Day),
        _ => None,
    };
    if let Some(token) = token {
        return Ok(Segment::Period { token, position });
    }
    let Some(spec) = inner.strip_prefix("seq:") else {
        return Err(format!(
            "unknown placeholder {{{inner}}} (only {{seq}}, {{seq:0N}}, {{yyyy}}, {{yy}}, {{mm}} and {{dd}} exist)"
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
        Some(width @ 1..=MAX_WIDTH) => Ok(Segment::Seq { width }),
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

/// Formats `value` (of `period`, when the template has period tokens) with `template` in one
/// call (parse + check + apply): a period token the period lacks is `INVALID_FORMAT`.
pub fn format_seq(template: &str, value: i64, period: Option<&Period>) -> Result<String, SeqError> {
    let template = FormatTemplate::parse(template)?;
    template.check_period_tokens(period.map_or(Reset::Never, |p| p.reset()))?;
    Ok(template.apply(value, period))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(template: &str, value: i64) -> Result<String, SeqError> {
        format_seq(template, value, None)
    }

    #[test]
    fn renders() {
        assert_eq!(fmt("INV-{seq:06}", 42).as_deref(), Ok("INV-000042"));
        assert_eq!(fmt("{seq}", -7).as_deref(), Ok("-7"));
        assert_eq!(fmt("{seq:04}", -42).as_deref(), Ok("-0042"));
        assert_eq!(fmt("{{{seq}}}", 1).as_deref(), Ok("{1}"));
        assert_eq!(fmt("ü{seq:02}ß", 1234).as_deref(), Ok("ü1234ß"));
        assert_eq!(
            fmt("{seq:020}", i64::MIN).as_deref(),
            Ok("-09223372036854775808")
        );
        assert_eq!(fmt("a{seq}b{seq:03}", 5).as_deref(), Ok("a5b005"));
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
            "{yyyy}",
            "{YYYY}{seq}",
            "{yyy}{seq}",
        ] {
            assert_eq!(
                fmt(bad, 1).map_err(|e| e.code()),
                Err("INVALID_FORMAT"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn period_tokens() {
        let period = |text: &str| Period::parse(text).unwrap();
        let format = |template: &str, text: &str| format_seq(template, 7, Some(&period(text)));
        assert_eq!(
            format("INV-{yyyy}-{seq:06}", "2026").as_deref(),
            Ok("INV-2026-000007")
        );
        assert_eq!(format("{yy}{mm}/{seq}", "2026-05").as_deref(), Ok("2605/7"));
        assert_eq!(
            format("{yy}", "2007").map_err(|e| e.code()),
            Err("INVALID_FORMAT")
        );
        assert_eq!(
            format("{seq}-{dd}.{mm}.{yyyy}", "0009-01-02").as_deref(),
            Ok("7-02.01.0009")
        );
        assert_eq!(format("{yy}-{seq}", "2100").as_deref(), Ok("00-7"));
        let error = format("{yyyy}{mm}-{seq}", "2026").unwrap_err();
        assert_eq!(
            (error.code(), error.details()),
            (
                "INVALID_FORMAT",
                Some(serde_json::json!({"template": "{yyyy}{mm}-{seq}", "position": 6}))
            )
        );
        assert!(error
            .to_string()
            .contains("{mm} needs reset monthly or daily"));
        let error = format_seq("{yyyy}-{seq}", 1, None).unwrap_err();
        assert!(error.to_string().contains("never resets"), "{error}");
        assert_eq!(
            format("{dd}{seq}", "2026-05").map_err(|e| e.code()),
            Err("INVALID_FORMAT")
        );
        let template = FormatTemplate::parse("{{yyyy}}{seq}").unwrap();
        assert!(!template.has_period_tokens());
        assert_eq!(template.apply(1, None), "{yyyy}1");
    }
}
