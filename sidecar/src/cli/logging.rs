//! Logging: the format and the filter of the log lines on standard error (`--log-format`,
//! `--log-level`). A filter is checked before anything runs: a typo would otherwise be read
//! as a target name and filter every line out.

use clap::ValueEnum;

use crate::redact::RedactingWriter;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Human,
    Json,
}

/// The levels a `--log-level` directive may name.
pub const LOG_LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// `--log-level` as given, when every comma-separated directive is a level or
/// `target=level` (a target is a module path such as `mongo_seq_sidecar::trigger`, or a prefix
/// of one: `mongo_seq` takes the library's and the sidecar's); else why not, with the accepted
/// forms.
pub fn parse_filter(text: &str) -> Result<String, String> {
    let level = |word: &str| LOG_LEVELS.contains(&word.trim().to_ascii_lowercase().as_str());
    let target = |word: &str| {
        !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-'))
    };
    for directive in text.split(',').map(str::trim) {
        let ok = match directive.split_once('=') {
            None => level(directive),
            Some((name, lvl)) => target(name.trim()) && level(lvl),
        };
        if !ok {
            return Err(format!(
                "unknown log level or directive `{directive}`: accepted are a level ({}) or comma-separated `target=level` directives, e.g. `info,mongo_seq=debug`",
                LOG_LEVELS.join(", ")
            ));
        }
    }
    Ok(text.to_owned())
}

/// Logs to standard error, passwords masked; `RUST_LOG` wins over `level` when set.
pub(super) fn init(format: LogFormat, level: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let writer = || RedactingWriter(std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false);
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::parse_filter;

    #[test]
    fn levels_and_target_directives_pass_and_typos_are_refused() {
        for ok in [
            "info",
            "DEBUG",
            "off",
            "info,mongo_seq=debug",
            "mongo_seq_sidecar::trigger=trace",
            " warn , mongodb=error",
        ] {
            assert_eq!(parse_filter(ok).as_deref(), Ok(ok), "{ok}");
        }
        for bad in [
            "inf",
            "",
            "info,",
            "mongo_seq=verbose",
            "=debug",
            "a b=info",
            "info;debug",
        ] {
            let err = parse_filter(bad).expect_err(bad);
            assert!(
                err.contains("off, error, warn, info, debug, trace"),
                "{err}"
            );
        }
    }
}
