//! The connection string: which one (the first set of the places it may come from, in the
//! caller's order) and whether the driver can read it.

use super::error::{invalid, ConfigError, Key};

/// Environment variable that overrides `[mongodb].uri` (and that the tools read without `--uri`).
pub const URI_ENV: &str = "MONGO_SEQ_URI";
/// Used when neither `MONGO_SEQ_URI` nor `[mongodb].uri` (a tool's `--uri`) is set.
pub const FALLBACK_URI_ENV: &str = "MONGODB_URI";

/// The first connection string of `candidates` that is set, checked like the driver reads it
/// (an error names where it came from); `None` when none is set.
pub fn resolve_uri(
    candidates: impl IntoIterator<Item = (Option<String>, Key)>,
) -> Result<Option<String>, ConfigError> {
    let Some((uri, key)) = candidates
        .into_iter()
        .find_map(|(uri, key)| uri.map(|uri| (uri, key)))
    else {
        return Ok(None);
    };
    check_uri(&uri).map_err(|reason| invalid(key, reason))?;
    Ok(Some(uri))
}

/// Checks a connection string the way the driver reads it at startup (scheme, hosts, ports,
/// options and their combinations), without any network access: `mongodb+srv://` hosts are
/// looked up only when the sidecar connects. The TLS files it names (`tlsCAFile`,
/// `tlsCertificateKeyFile`) are read now, so a missing or unreadable one is refused with its
/// path before anything connects (the driver would read them only at the first connection).
/// The reason never contains the password.
pub fn check_uri(uri: &str) -> Result<(), String> {
    use futures_util::FutureExt;
    use mongodb::options::{ClientOptions, ConnectionString};
    use std::future::IntoFuture;

    if !(uri.starts_with("mongodb://") || uri.starts_with("mongodb+srv://")) {
        return Err("must start with mongodb:// or mongodb+srv://".to_owned());
    }
    let parsed = ConnectionString::parse(uri).map_err(|e| uri_reason(uri, &e))?;
    if let Some(mongodb::options::Tls::Enabled(tls)) = &parsed.tls {
        check_tls_file("tlsCAFile", tls.ca_file_path.as_deref())?;
        check_tls_file("tlsCertificateKeyFile", tls.cert_key_file_path.as_deref())?;
    }
    if uri.starts_with("mongodb://") {
        // Without SRV the driver's full parse does no I/O: it is ready at the first poll.
        if let Some(Err(e)) = ClientOptions::parse(parsed).into_future().now_or_never() {
            return Err(uri_reason(uri, &e));
        }
    }
    Ok(())
}

/// What the driver says is wrong, without its debug fields or the password.
fn uri_reason(uri: &str, e: &mongodb::error::Error) -> String {
    let message = match e.kind.as_ref() {
        mongodb::error::ErrorKind::InvalidArgument { message, .. } => message.clone(),
        other => other.to_string(),
    };
    format!(
        "invalid connection string: {}",
        crate::redact::redact_message(uri, &message)
    )
}

/// A TLS file the connection string names: it must be readable and hold a PEM block (the
/// driver reads PEM only).
fn check_tls_file(option: &str, path: Option<&std::path::Path>) -> Result<(), String> {
    let Some(path) = path else {
        return Ok(());
    };
    let text = std::fs::read(path)
        .map_err(|e| format!("{option} {} cannot be read: {e}", path.display()))?;
    if !text.windows(11).any(|w| w == b"-----BEGIN ") {
        return Err(format!(
            "{option} {} is not PEM (no `-----BEGIN` line): the driver reads PEM files only",
            path.display()
        ));
    }
    Ok(())
}
