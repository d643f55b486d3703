//! The operators' commands of the built `mongo-seq` (`check`, `counters`, `set-next`, `void`,
//! `retry`, `import`, `rewind`, `adopt`, `health`, `--version`, `completions`) against a
//! database the test prepared, some beside a running sidecar.

mod any_sequence;
mod check;
mod counters;
mod date_order;
mod dead_letters;
mod definitions;
mod ledger;
mod operator_cli;
mod report;
mod report_page;
mod seal;
mod seal_pages;
mod seal_written;
mod sequence_flags;

use crate::common::{config_toml, run_bin, test_db};
use mongodb::bson::{doc, Document};
use mongodb::Collection;
use serde_json::Value;

/// Runs the binary with `args` on the counters collection `ns` of `uri`: exit code, stdout, stderr.
fn on_counters(args: &[&str], uri: &str, ns: &str) -> (i32, String, String) {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--uri", uri, "--counters", ns]);
    run_bin(&all, &[])
}

/// `check` of the yearly series `inv` numbered in `number` of `db.invoices` on `uri`, with
/// `extra` flags: exit code, stdout, stderr.
fn check_yearly_invoices(uri: &str, db: &str, extra: &[&str]) -> (i32, String, String) {
    on_yearly_invoices("check", uri, db, extra)
}

/// `command` (`check`, `report`) of the yearly series `inv` numbered in `number` of
/// `db.invoices` on `uri`, with `extra` flags: exit code, stdout, stderr.
fn on_yearly_invoices(command: &str, uri: &str, db: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        command,
        "--uri",
        uri,
        "--db",
        db,
        "--collection",
        "invoices",
        "--field",
        "number",
        "--sequence",
        "inv",
        "--reset",
        "yearly",
    ];
    args.extend_from_slice(extra);
    run_bin(&args, &[])
}

/// The counters of `counters`, in `_id` order.
async fn all_counters(counters: &Collection<Document>) -> Vec<Document> {
    let mut found = Vec::new();
    let mut cursor = counters
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .unwrap();
    while cursor.advance().await.unwrap() {
        found.push(cursor.deserialize_current().unwrap());
    }
    found
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// A yearly series `inv` in a fresh database: `orders` holds `numbers` of 2026 in `field` (and
/// their ids, `INV-2026-000001`, in `invoiceNo`); the counter `inv/2026` is at the last one.
async fn series_2026(label: &str, field: &str, numbers: &[i64]) -> (String, mongodb::Client) {
    let (db, plain, coll) = test_db(label).await;
    let period = format!("{field}Period");
    let documents = numbers.iter().map(|n| {
        doc! { field: n, &period: "2026", "invoiceNo": format!("INV-2026-{n:06}") }
    });
    coll.insert_many(documents).await.unwrap();
    let last = numbers.last().copied().unwrap_or_default();
    plain
        .database(&db)
        .collection("counters")
        .insert_one(doc! { "_id": "inv/2026", "seq": last })
        .await
        .unwrap();
    (db, plain)
}

/// A config whose trigger numbers `db.orders` per tenant with step 10 from sequence `orders`.
fn stepped_config(db: &str) -> String {
    config_toml(
        db,
        "sequence = \"orders\"\nscope = [\"tenantId\"]\nstep = 10\nmatch = { type = \"order\" }",
        "",
    )
}
