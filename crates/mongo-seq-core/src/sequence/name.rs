//! Name rules: sequence names and collection names.
//!
//! A sequence name becomes the counter document's `_id` (or its first segment when scoped), so
//! it must be a readable, stable string: 1..=200 bytes of UTF-8, no control characters, no `/`
//! (reserved as the scope separator, which keeps scoped ids injective), and no leading or
//! trailing whitespace (invisible differences would silently create a second counter).
//!
//! A collection name (the counters collection, an import's source, a trigger's collection) is
//! checked as the server would check it, before any command, so a bad one is the caller's
//! option error rather than a server error after other writes: not empty, no `$` (the server
//! refuses it), no NUL or other control character, not `system.*` (reserved), not starting with
//! `.`, and the namespace `<database>.<collection>` within MongoDB's 255 bytes.

use crate::ejson;
use crate::error::SeqError;

/// MongoDB's limit on a namespace, `<database>.<collection>`, in UTF-8 bytes.
pub const MAX_NAMESPACE_BYTES: usize = 255;

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

/// Checks a collection name against the rules above; `database`, when the caller knows it,
/// bounds the namespace exactly (else the name must leave room for a one-byte database).
/// `INVALID_OPTION` naming `option`.
pub fn check_collection_name(
    option: &str,
    name: &str,
    database: Option<&str>,
) -> Result<(), SeqError> {
    let reason = if name.is_empty() {
        "must not be empty".to_owned()
    } else if name.contains('$') {
        "must not contain `$` (MongoDB refuses it in collection names)".to_owned()
    } else if name.chars().any(char::is_control) {
        "must not contain NUL or other control characters".to_owned()
    } else if name.starts_with("system.") {
        "must not start with `system.` (MongoDB reserves those collections)".to_owned()
    } else if name.starts_with('.') {
        "must not start with `.`".to_owned()
    } else {
        let namespace = database
            .map_or(2, str::len)
            .saturating_add(1)
            .saturating_add(name.len());
        if namespace <= MAX_NAMESPACE_BYTES {
            return Ok(());
        }
        match database {
            Some(database) => format!(
                "is {} bytes: the namespace `{}.…` would be {namespace} bytes, over MongoDB's {MAX_NAMESPACE_BYTES}",
                name.len(),
                ejson::truncate(database)
            ),
            None => format!(
                "is {} bytes: with its database the namespace would be over MongoDB's {MAX_NAMESPACE_BYTES} bytes",
                name.len()
            ),
        }
    };
    Err(SeqError::InvalidOption {
        option: option.to_owned(),
        reason: format!("{reason}, got {}", ejson::quoted(&ejson::truncate(name))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_names() {
        let check = |name: &str, db: Option<&str>| check_collection_name("collection", name, db);
        for good in ["counters", "my.counters", "Zähler", "_x"] {
            assert_eq!(check(good, Some("app")), Ok(()), "{good:?}");
        }
        assert_eq!(check(&"c".repeat(251), Some("app")), Ok(()));
        assert_eq!(check(&"c".repeat(252), None), Ok(()));
        for bad in ["", "a$b", "$cmd", "a\0b", "a\nb", "system.profile", ".x"] {
            let error = check(bad, Some("app")).unwrap_err();
            assert_eq!(
                (error.code(), error.option_name()),
                ("INVALID_OPTION", Some("collection")),
                "{bad:?}"
            );
        }
        let long = check(&"c".repeat(252), Some("app")).unwrap_err();
        assert!(
            long.to_string().contains("256 bytes, over MongoDB's 255"),
            "{long}"
        );
        assert!(check(&"c".repeat(253), None).is_err());
        let message = check("system.x", None).unwrap_err().to_string();
        assert!(
            message.contains("`collection`") && message.contains("system."),
            "{message}"
        );
    }

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
