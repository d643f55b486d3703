//! An axum service that numbers orders with mongo-seq: one `Sequences` in the application's
//! state, shared by every request; each store's orders numbered 1, 2, 3, … with a formatted
//! code (`ORD-000042`), one round trip per order; bad input answered 400 with the error's code.
//!
//! ```sh
//! MONGODB_URI=mongodb://127.0.0.1:27017 cargo run -p mongo-seq-example-orders
//! curl -X POST localhost:3000/orders -H 'content-type: application/json' \
//!      -d '{"store": "paris", "item": "book", "quantity": 2}'
//! # {"id":"…","store":"paris","number":1,"code":"ORD-000001"}
//! curl localhost:3000/orders/paris/1
//! ```

use std::net::SocketAddr;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use mongo_seq::{InsertOptions, Sequence, SequenceOptions, Sequences};
use mongodb::bson::{doc, oid::ObjectId};
use mongodb::{Client, Collection};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// An order as stored: the caller's fields, its number in its store and the formatted code.
#[derive(Debug, Serialize, Deserialize)]
struct Order {
    #[serde(rename = "_id", skip_serializing_if = "Option::is_none")]
    id: Option<ObjectId>,
    store: String,
    item: String,
    quantity: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    number: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
}

/// What `POST /orders` takes.
#[derive(Deserialize)]
struct NewOrder {
    store: String,
    item: String,
    quantity: u32,
}

/// The application's state: cheap to clone (handles), shared by every request.
#[derive(Clone)]
struct App {
    seqs: Sequences,
    /// Orders numbered per store: one counter per `store` value (`orders/store=paris`).
    numbers: Sequence,
    orders: Collection<Order>,
}

async fn create(State(app): State<App>, Json(new): Json<NewOrder>) -> Result<Response, AppError> {
    let order = Order {
        id: None,
        store: new.store,
        item: new.item,
        quantity: new.quantity,
        number: None,
        code: None,
    };
    let options = InsertOptions::new(&app.numbers)
        .field("number")
        .format_field("code");
    let inserted = app.seqs.insert_one(&app.orders, &order, options).await?;
    let body = json!({
        "id": inserted.inserted_id.as_object_id().map(|id| id.to_hex()),
        "store": order.store,
        "number": inserted.value,
        "code": inserted.formatted,
    });
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

async fn show(
    State(app): State<App>,
    Path((store, number)): Path<(String, i64)>,
) -> Result<Response, AppError> {
    let found = app
        .orders
        .find_one(doc! { "store": &store, "number": number })
        .await
        .map_err(mongo_seq::Error::from)?;
    Ok(match found {
        Some(order) => Json(json!({
            "store": order.store,
            "item": order.item,
            "quantity": order.quantity,
            "number": order.number,
            "code": order.code,
        }))
        .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({ "error": "no such order" })),
        )
            .into_response(),
    })
}

/// A mongo-seq error as an HTTP answer: the caller's mistakes are 400 with the stable code,
/// an exhausted sequence 409, MongoDB's failures 503.
struct AppError(mongo_seq::Error);

impl From<mongo_seq::Error> for AppError {
    fn from(error: mongo_seq::Error) -> Self {
        Self(error)
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = match self.0.code() {
            Some("SEQUENCE_EXHAUSTED" | "OVERFLOW") => StatusCode::CONFLICT,
            Some(
                "INVALID_ARGUMENT"
                | "INVALID_SCOPE_VALUE"
                | "MISSING_SCOPE_FIELD"
                | "INVALID_OPTION",
            ) => StatusCode::BAD_REQUEST,
            Some(_) => StatusCode::INTERNAL_SERVER_ERROR,
            None => StatusCode::SERVICE_UNAVAILABLE, // MongoDB: network, authorization, …
        };
        let body = json!({ "error": self.0.to_string(), "code": self.0.code() });
        (status, Json(body)).into_response()
    }
}

fn router(app: App) -> Router {
    Router::new()
        .route("/orders", post(create))
        .route("/orders/{store}/{number}", get(show))
        .with_state(app)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let uri = std::env::var("MONGODB_URI").unwrap_or_else(|_| "mongodb://127.0.0.1:27017".into());
    let db_name = std::env::var("EXAMPLE_DB").unwrap_or_else(|_| "mongo_seq_example".into());
    let bind: SocketAddr = std::env::var("BIND")
        .unwrap_or_else(|_| "127.0.0.1:3000".into())
        .parse()?;

    let db = Client::with_uri_str(&uri).await?.database(&db_name);
    let seqs = Sequences::new(&db);
    let numbers = seqs.sequence(
        "orders",
        SequenceOptions::new()
            .scope(["store"])
            .format("ORD-{seq:06}"),
    )?;
    let app = App {
        seqs,
        numbers,
        orders: db.collection("orders"),
    };

    let listener = tokio::net::TcpListener::bind(bind).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, router(app))
        .with_graceful_shutdown(shutdown())
        .await?;
    println!("stopped");
    Ok(())
}

/// Ctrl-C, or SIGTERM (a container stopping).
async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler");
        tokio::select! {
            biased;
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}
