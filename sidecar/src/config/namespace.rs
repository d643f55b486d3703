//! `database.collection`: the names MongoDB accepts, checked before anything connects.

use super::error::{invalid, ConfigError, Key};

/// `database.collection`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    pub db: String,
    pub coll: String,
}

impl Namespace {
    /// A namespace from its two names, each checked and named by where it was given.
    pub fn checked(db: (&str, Key), coll: (&str, Key)) -> Result<Self, ConfigError> {
        check_db_name(db.1, db.0)?;
        check_coll_name(coll.1, db.0, coll.0)?;
        Ok(Self {
            db: db.0.to_owned(),
            coll: coll.0.to_owned(),
        })
    }

    /// `database.collection`, or `collection` in `default_db`; errors name `key`.
    pub fn parse(key: &Key, value: &str, default_db: Option<&str>) -> Result<Self, ConfigError> {
        let (db, coll) = match value.split_once('.') {
            Some(names) => names,
            None => match default_db {
                Some(db) => (db, value),
                None => {
                    return Err(invalid(
                        key.clone(),
                        "no database: write `database.collection` or set mongodb.database (triggers use several databases)",
                    ))
                }
            },
        };
        Self::checked((db, key.clone()), (coll, key.clone()))
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.db, self.coll)
    }
}

pub(super) fn check_db_name(key: Key, name: &str) -> Result<(), ConfigError> {
    if name.is_empty() || name.len() > 63 {
        return Err(invalid(
            key,
            format!("database name {name:?} must be 1..=63 bytes"),
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| "/\\. \"$*<>:|?".contains(*c) || c.is_control())
    {
        return Err(invalid(
            key,
            format!("database name {name:?} must not contain {c:?}"),
        ));
    }
    Ok(())
}

/// The core's collection-name rule (the package's `collection`/`counters` options use it
/// too), with the database it lives in: `$`, NUL, `system.*`, the 255-byte namespace.
fn check_coll_name(key: Key, db: &str, name: &str) -> Result<(), ConfigError> {
    mongo_seq_core::sequence::name::check_collection_name("collection", name, Some(db)).map_err(
        |error| {
            let reason = match error {
                mongo_seq_core::SeqError::InvalidOption { reason, .. } => reason,
                other => other.to_string(),
            };
            invalid(key, format!("invalid collection name: {reason}"))
        },
    )
}
