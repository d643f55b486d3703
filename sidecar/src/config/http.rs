//! `[http]`: where `/healthz` and `/metrics` are served.

use std::net::{IpAddr, SocketAddr};

use super::error::{invalid, ConfigError, Key};
use super::raw::RawHttp;

/// Environment variable that overrides `[http].port`: several sidecars on one host with one
/// config file.
pub const HTTP_PORT_ENV: &str = "MONGO_SEQ_HTTP_PORT";
/// Environment variable that overrides `[http].bind` (a container image sets `0.0.0.0`).
pub const HTTP_BIND_ENV: &str = "MONGO_SEQ_HTTP_BIND";

/// `[http]` → where `/healthz` and `/metrics` are served; `None` when disabled.
pub(super) fn http_addr(
    raw: &RawHttp,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<SocketAddr>, ConfigError> {
    if !raw.enabled.unwrap_or(true) {
        return Ok(None);
    }
    let (bind, key) = match env(HTTP_BIND_ENV) {
        Some(bind) => (
            bind,
            Key::Env {
                key: "http.bind".to_owned(),
                var: HTTP_BIND_ENV,
            },
        ),
        None => (
            raw.bind.clone().unwrap_or_else(|| "127.0.0.1".to_owned()),
            Key::file("http.bind"),
        ),
    };
    let ip: IpAddr = bind
        .trim()
        .parse()
        .map_err(|_| invalid(key, format!("{bind:?} is not an IP address")))?;
    let port = match env(HTTP_PORT_ENV) {
        Some(text) => text.trim().parse::<u16>().map_err(|_| {
            invalid(
                Key::Env {
                    key: "http.port".to_owned(),
                    var: HTTP_PORT_ENV,
                },
                format!("must be a port number 0..=65535, got {text:?}"),
            )
        })?,
        None => raw.port.unwrap_or(9464),
    };
    Ok(Some(SocketAddr::new(ip, port)))
}
