//! The HTTP endpoint: `/healthz` (JSON, 200 when every trigger is healthy — `ok`, or `degraded`
//! when dead letters wait — else 503) and
//! `/metrics` (Prometheus text format).

use std::net::SocketAddr;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::health::{Health, Status};
use crate::metrics::Metrics;

#[derive(Clone)]
struct AppState {
    health: Health,
    metrics: Metrics,
}

async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    let verdict = state.health.status();
    let (_, triggers) = state.health.snapshot();
    let code = if verdict == Status::Unhealthy {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (
        code,
        Json(
            json!({ "status": verdict, "instance": state.health.instance(), "triggers": triggers }),
        ),
    )
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}

/// Binds `addr` (before anything else starts, so a busy port fails fast).
pub async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await
}

/// Serves until `shutdown` is cancelled.
pub async fn serve(
    listener: tokio::net::TcpListener,
    health: Health,
    metrics: Metrics,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(self::metrics))
        .with_state(AppState { health, metrics });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}
