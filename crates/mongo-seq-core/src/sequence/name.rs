//! Sequence name rules.
//!
//! A name becomes the counter document's `_id` (or its first segment when scoped), so it must
//! be a readable, stable string: 1..=200 bytes of UTF-8, no control characters, no `/`
//! (reserved as the scope separator, which keeps scoped ids injective), and no leading or
//! trailing whitespace (invisible differences would silently create a second counter).

use crate::error::SeqError;

/// Longest sequence name, in UTF-8 bytes.
pub const MAX_NAME_BYTES: usize = 200;

/// Longest counter `_id` (name plus encoded scope values), in UTF-8 bytes.
pub const MAX_COUNTER_ID_BYTES: usize = 1000;

/// Checks a sequence name against the rules above.
pub fn validate_name(name: &str) -> Result<(), SeqError> {
    let fail = |reason: &str| SeqError::InvalidName {
        name: Some(name.to_owned()),
        reason: reason.to_owned(),
    };
    if name.is_empty() {
        return Err(fail("must not be empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(fail("must be at most 200 bytes"));
    }
    if name.chars().any(char::is_control) {
        return Err(fail("must not contain control characters"));
    }
    if name.contains('/') {
        return Err(fail(
            "must not contain '/' (it separates scope values in counter ids)",
        ));
    }
    if name.starts_with(char::is_whitespace) || name.ends_with(char::is_whitespace) {
        return Err(fail("must not start or end with whitespace"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(validate_name("orders").is_ok());
        assert!(validate_name("Bestellungen 2024 ü").is_ok());
        assert!(validate_name(&"x".repeat(200)).is_ok());
        for bad in ["", " a", "a ", "a/b", "a\nb", "a\u{7f}"] {
            assert_eq!(
                validate_name(bad).map_err(|e| e.code()),
                Err("INVALID_NAME"),
                "{bad:?}"
            );
        }
        assert!(validate_name(&"x".repeat(201)).is_err());
    }
}
