//! A trigger as written (a `[[trigger]]`, or a tool's flags) → validated [`TriggerSpec`]: its
//! namespace, its sequence (the core's `SequenceSpec::parse_trigger`: the JS package's schema
//! and messages), its numbering (`NumberingSpec::new`), its `match`. An error names the key the
//! core's `option_name` points at, as the file or the flags spell it.
//!
//! `on = "match"` makes the trigger's `match` the numbering's condition (the core's
//! `NumberingSpec::with_condition`): every first number is then written only where the document
//! still matches and has none.

use mongo_seq_core::sequence::field::check_field_path;
use mongo_seq_core::{NumberingSpec, SeqError, SequenceSpec};
use serde_json::{Map, Value};

use super::error::{invalid, ConfigError, Key};
use super::filter::validate_match;
use super::namespace::Namespace;
use super::raw::RawTrigger;

#[derive(Debug, Clone)]
pub struct TriggerSpec {
    /// Stable id: `name`, or `<db>.<collection>.<field>`; the key of the trigger's state document.
    pub id: String,
    pub ns: Namespace,
    /// The sequence, the numbered field, the formatted id's field, the mode (gapless or not).
    pub numbering: NumberingSpec,
    /// The `match` expression on the document's fields (Extended JSON).
    pub filter: Option<Map<String, Value>>,
    /// When a document is numbered: when inserted, or when it comes to match `filter`.
    pub on: On,
    /// The backfill's order: this field, then `_id` (`None`: `_id` alone).
    pub backfill_sort: Option<String>,
    /// Deleted documents' numbers are recorded in the ledger (`record_deletions`, gapless only,
    /// on by default there): the stream also brings deletes, with pre-images.
    pub record_deletions: bool,
    /// With `on = "match"`: updates bring their post-image (exact issue order).
    pub post_images: bool,
    /// The unique index on the number is created (`unique_index`, default `true`). `false`: the
    /// collection is sharded on a key the index cannot start with (checked at each session
    /// start from the cluster's catalog): numbers stay unique, but one written by hand or by
    /// another tool is not refused.
    pub unique_index: bool,
}

/// When a trigger numbers a document (the `on` key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum On {
    /// When it is inserted (and matches `match`, if any); later changes are not watched.
    #[default]
    Insert,
    /// When an insert, an update or a replace makes it match `match` (numbering on issue).
    Match,
}

impl On {
    /// The key's value as written.
    fn parse(value: Option<&str>, key: Key) -> Result<Self, ConfigError> {
        match value {
            None | Some("insert") => Ok(Self::Insert),
            Some("match") => Ok(Self::Match),
            Some(other) => Err(invalid(
                key,
                format!("must be \"insert\" or \"match\", got {other:?}"),
            )),
        }
    }
}

/// How a trigger's keys are named in errors.
#[derive(Debug, Clone, Copy)]
pub enum Keys {
    /// The file's `[[trigger]]` number `index`: `trigger[0].step`.
    File { index: usize },
    /// A tool's flags: `--step` (`--db` for `database`).
    Flags,
}

impl Keys {
    /// The key `name` (as the file spells it: `format_field`).
    pub fn key(self, name: &str) -> Key {
        match self {
            Self::File { index } => Key::File(format!("trigger[{index}].{name}")),
            Self::Flags => Key::Flag(match name {
                "database" => "--db".to_owned(),
                other => format!("--{}", other.replace('_', "-")),
            }),
        }
    }

    /// The trigger as a whole.
    pub fn whole(self) -> Key {
        match self {
            Self::File { index } => Key::File(format!("trigger[{index}]")),
            Self::Flags => Key::Flags,
        }
    }

    /// A core error, named by the key its `option_name` points at.
    fn core(self, e: &SeqError) -> ConfigError {
        self.core_as_key(self.core_key(e), e)
    }

    /// A core error about the sidecar's own key `name`.
    fn core_as(self, name: &str, e: &SeqError) -> ConfigError {
        self.core_as_key(self.key(name), e)
    }

    fn core_key(self, e: &SeqError) -> Key {
        match e.option_name() {
            Some("name") => self.key("sequence"),
            Some("formatField") => self.key("format_field"),
            Some("dateField") => self.key("date_field"),
            Some("condition") => self.key("match"),
            Some(option) => match SequenceSpec::option(option) {
                Some(option) => self.key(option.snake),
                None => self.key(option),
            },
            None => self.whole(),
        }
    }

    fn core_as_key(self, key: Key, e: &SeqError) -> ConfigError {
        let reason = match e {
            SeqError::InvalidOption { reason, .. } | SeqError::InvalidArgument { reason, .. } => {
                reason.clone()
            }
            other => other.to_string(),
        };
        invalid(key, format!("{reason} ({})", e.code()))
    }
}

/// A trigger as written → validated; errors name its keys as `keys` says.
pub fn validate_trigger(t: RawTrigger, keys: Keys) -> Result<TriggerSpec, ConfigError> {
    let ns = Namespace::checked(
        (&t.database, keys.key("database")),
        (&t.collection, keys.key("collection")),
    )?;
    let sequence = validate_sequence(&t, &ns.to_string(), keys)?;
    let numbering = NumberingSpec::new(
        sequence,
        &t.field,
        t.format_field.as_deref(),
        t.gapless.unwrap_or(false),
    )
    .map_err(|e| keys.core(&e))?;
    let filter = match t.filter {
        None => None,
        Some(filter) => Some(validate_match(filter, keys.key("match"))?),
    };
    let on = On::parse(t.on.as_deref(), keys.key("on"))?;
    let numbering = match (on, &filter) {
        (On::Insert, _) => numbering,
        (On::Match, Some(filter)) => numbering
            .with_condition(Value::Object(filter.clone()))
            .map_err(|e| keys.core(&e))?,
        (On::Match, None) => {
            return Err(invalid(
                keys.key("match"),
                "required with on = \"match\": the condition that numbers a document (e.g. { status = \"issued\" })",
            ))
        }
    };
    let numbering = match &t.date_field {
        Some(date_field) => numbering
            .with_date_field(date_field)
            .map_err(|e| keys.core(&e))?,
        None => numbering,
    };
    if let Some(sort) = &t.backfill_sort {
        check_field_path("backfillSort", sort).map_err(|e| keys.core_as("backfill_sort", &e))?;
    }
    let gapless = numbering.gapless();
    let record_deletions = t.record_deletions.unwrap_or(gapless);
    if record_deletions && !gapless {
        return Err(invalid(
            keys.key("record_deletions"),
            "needs gapless = true (a default-mode series has gaps anyway; `check` lists them)",
        ));
    }
    let post_images = t.post_images.unwrap_or(false);
    if post_images && on != On::Match {
        return Err(invalid(
            keys.key("post_images"),
            "needs on = \"match\" (a trigger numbering inserts reads no update)",
        ));
    }
    let id = match t.name {
        Some(name) if name.is_empty() || name.chars().any(char::is_control) => {
            return Err(invalid(
                keys.key("name"),
                "must be a non-empty string without control characters",
            ))
        }
        Some(name) => name,
        None => format!("{ns}.{}", t.field),
    };
    Ok(TriggerSpec {
        id,
        ns,
        numbering,
        filter,
        on,
        backfill_sort: t.backfill_sort,
        record_deletions,
        post_images,
        unique_index: t.unique_index.unwrap_or(true),
    })
}

/// A trigger's sequence keys as written (`sequence`, and the core's `SequenceSpec::trigger_options`
/// by their snake_case spellings) → the core's `SequenceSpec`, named `default_name` unless the
/// keys name it.
pub fn validate_sequence(
    raw: &RawTrigger,
    default_name: &str,
    keys: Keys,
) -> Result<SequenceSpec, ConfigError> {
    let name = raw.sequence.as_deref().unwrap_or(default_name);
    let mut options = Map::new();
    for option in SequenceSpec::trigger_options() {
        if let Some(Some(value)) = raw.sequence_option(option.key) {
            options.insert(option.key.to_owned(), value.clone());
        }
    }
    let spec = SequenceSpec::parse_trigger(name, &options).map_err(|e| keys.core(&e))?;
    // The core checks the zone's syntax; whether it exists is the host's tz database's to say.
    mongo_seq::executor::check_time_zone(&spec).map_err(|e| keys.core(&e))?;
    Ok(spec)
}
