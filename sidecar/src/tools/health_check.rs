//! `mongo-seq health`: asks a running sidecar's `/healthz`, so a container image without a shell
//! or curl still has a health check. One HTTP/1.1 GET (hyper), bounded by a timeout and a body
//! size limit (whatever answers on that port may not be a sidecar).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper::header::HOST;
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::Value;

/// The largest `/healthz` body read (it is a few hundred bytes per trigger).
const MAX_BODY: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum HealthCheckError {
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("no answer from {url} within {timeout:?}")]
    Timeout { url: String, timeout: Duration },
    #[error("{url} answered {status} with a body that is not /healthz JSON: {reason}")]
    NotHealthz {
        url: String,
        status: u16,
        reason: String,
    },
}

/// What `/healthz` said.
#[derive(Debug, Clone)]
pub struct HealthReply {
    pub url: String,
    /// 200 when every trigger is healthy, 503 otherwise.
    pub status: u16,
    pub body: Value,
}

impl HealthReply {
    pub fn healthy(&self) -> bool {
        // `degraded`: documents wait as dead letters, the others are numbered (not down).
        let status = self.body.get("status").and_then(Value::as_str);
        self.status == 200 && matches!(status, Some("ok" | "degraded"))
    }

    /// One line: the verdict, then each trigger's state (and error when unhealthy).
    pub fn summary(&self) -> String {
        let triggers = self
            .body
            .get("triggers")
            .and_then(Value::as_object)
            .map(|triggers| {
                triggers
                    .iter()
                    .map(|(id, t)| {
                        let state = t.get("state").and_then(Value::as_str).unwrap_or("?");
                        if t.get("healthy").and_then(Value::as_bool) == Some(false) {
                            let code = t.get("last_error_code").and_then(Value::as_str);
                            let error = t.get("last_error").and_then(Value::as_str);
                            format!(
                                "{id} {state} ({}: {})",
                                code.unwrap_or("no code"),
                                error.unwrap_or("no message")
                            )
                        } else {
                            match t.get("dead_letters").and_then(Value::as_u64) {
                                Some(n) if n > 0 => format!("{id} {state} ({n} dead letters)"),
                                _ => format!("{id} {state}"),
                            }
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        format!(
            "{}: {} ({} trigger{}{}{})",
            if !self.healthy() {
                "unhealthy"
            } else if self.body.get("status").and_then(Value::as_str) == Some("degraded") {
                "degraded"
            } else if self.healthy() {
                "healthy"
            } else {
                "unhealthy"
            },
            self.url,
            triggers.len(),
            if triggers.len() == 1 { "" } else { "s" },
            if triggers.is_empty() { "" } else { ": " },
            triggers.join(", ")
        )
    }
}

/// GETs `http://{addr}/healthz`, within `timeout` from connecting to the last body byte. An
/// unspecified address (a sidecar bound to `0.0.0.0` or `::`) is asked on loopback.
pub async fn healthz(addr: SocketAddr, timeout: Duration) -> Result<HealthReply, HealthCheckError> {
    let addr = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), addr.port())
        }
        _ => addr,
    };
    let url = format!("http://{addr}/healthz");
    match tokio::time::timeout(timeout, get(addr, &url)).await {
        Ok(result) => result,
        Err(_) => Err(HealthCheckError::Timeout { url, timeout }),
    }
}

async fn get(addr: SocketAddr, url: &str) -> Result<HealthReply, HealthCheckError> {
    let unreachable = |reason: String| HealthCheckError::Unreachable {
        url: url.to_owned(),
        reason,
    };
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    // The connection is driven by its own task; it ends with the exchange (or the timeout).
    let connection_task = tokio::spawn(connection);
    let request = Request::get("/healthz")
        .header(HOST, addr.to_string())
        .body(Empty::<Bytes>::new())
        .map_err(|e| unreachable(e.to_string()))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let status = response.status().as_u16();
    let not_healthz = |reason: String| HealthCheckError::NotHealthz {
        url: url.to_owned(),
        status,
        reason,
    };
    let body = Limited::new(response.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| not_healthz(e.to_string()))?
        .to_bytes();
    connection_task.abort();
    let body: Value = serde_json::from_slice(&body).map_err(|e| not_healthz(e.to_string()))?;
    if body.get("status").and_then(Value::as_str).is_none() {
        return Err(not_healthz("no `status` field".to_owned()));
    }
    Ok(HealthReply {
        url: url.to_owned(),
        status,
        body,
    })
}
