//! A configuration problem, naming where the value at fault was given: a key of the file, an
//! environment variable, or a tool's flag. Exit code 2.

use std::fmt;

/// Where a value was given, as an error names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// A key of the configuration file, e.g. `trigger[0].step`.
    File(String),
    /// A key of the file whose value came from an environment variable.
    Env { key: String, var: &'static str },
    /// A tool's flag, e.g. `--step`.
    Flag(String),
    /// An environment variable a tool read in place of a flag, e.g. `MONGO_SEQ_URI`.
    Var(&'static str),
    /// A tool's flags as a whole (a refusal no single flag is to blame for).
    Flags,
}

impl Key {
    /// A key of the configuration file.
    pub fn file(key: impl Into<String>) -> Self {
        Self::File(key.into())
    }

    /// A tool's flag.
    pub fn flag(flag: impl Into<String>) -> Self {
        Self::Flag(flag.into())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Parse { path: String, message: String },
    #[error("{}", Invalid(key, reason))]
    Invalid { key: Key, reason: String },
}

/// `key` refused a value, for `reason`.
pub fn invalid(key: Key, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key,
        reason: reason.into(),
    }
}

/// A file's `key` refused a value, for `reason`.
pub(super) fn invalid_key(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    invalid(Key::file(key), reason)
}

/// The message of [`ConfigError::Invalid`].
struct Invalid<'a>(&'a Key, &'a String);

impl fmt::Display for Invalid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self(key, reason) = self;
        match key {
            Key::File(key) => write!(f, "config key `{key}`: {reason}"),
            Key::Env { key, var } => write!(
                f,
                "config key `{key}` (set by the environment variable {var}): {reason}"
            ),
            Key::Flag(flag) => write!(f, "{flag}: {reason}"),
            Key::Var(var) => write!(f, "{var}: {reason}"),
            Key::Flags => write!(f, "{reason}"),
        }
    }
}
