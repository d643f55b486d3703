//! The watched collections of the simulated world and their triggers: `orders` (default
//! mode) and `ledger` (gapless) number inserted documents; `invoices` and `credits` number
//! documents on issue (`on = "match"`, series that reset in Paris); `ledger` and `credits` are sealed. Both the sidecars'
//! processes ([`crate::triggers`]) and the clerk issuing documents ([`crate::issuing`]) read
//! them here.

use mongo_seq_core::{NumberingSpec, SequenceSpec};
use mongo_seq_sidecar::config::{Namespace, On, TriggerSpec};
use serde_json::{json, Map, Value};

use crate::executor::PlanContext;
use crate::world::World;

/// The numbered field.
pub const FIELD: &str = "seq";
pub const DB: &str = "app";
/// The sidecars' counters.
pub const COUNTERS: &str = "app.sidecar_counters";
/// The triggers' state documents (leases, resume tokens, dead letters).
pub const STATE: &str = "app.mongo_seq_state";
/// The sidecars' ledger (deletion records, the clerk's voids).
pub const LEDGER: &str = "app.mongo_seq_ledger";

/// One watched collection and its trigger.
#[derive(Debug, Clone)]
pub struct Watched {
    pub collection: &'static str,
    pub gapless: bool,
    /// A trigger that numbers on issue (`on = "match"`, a periodic series), or on insert.
    pub issue: Option<Issue>,
    /// A sealed series' fields (`sealFields`; empty: not sealed).
    pub seal_fields: &'static [&'static str],
}

/// How an `on = "match"` trigger numbers (`crate::issuing`): documents matching
/// `{status: "issued"}`, in a series that resets in `Europe/Paris`.
#[derive(Debug, Clone)]
pub struct Issue {
    /// The sequence's options beside its name.
    pub reset: &'static str,
    pub format: Option<(&'static str, &'static str)>,
    /// The document's date field that places it in a period; else the event's `wallTime`.
    pub date_field: Option<&'static str>,
}

/// The zone of the issue triggers' series.
pub const TIME_ZONE: &str = "Europe/Paris";

/// The triggers' `match`, which `on = "match"` makes the numbering's condition.
pub fn condition() -> Map<String, Value> {
    let mut condition = Map::new();
    condition.insert("status".to_owned(), Value::from("issued"));
    condition
}

pub const WATCHED: [Watched; 4] = [
    Watched {
        collection: "orders",
        seal_fields: &[],
        gapless: false,
        issue: None,
    },
    Watched {
        collection: "ledger",
        seal_fields: &["by"],
        gapless: true,
        issue: None,
    },
    Watched {
        collection: "invoices",
        seal_fields: &[],
        gapless: false,
        issue: Some(Issue {
            reset: "yearly",
            format: Some(("INV-{yyyy}-{seq:06}", "invoiceNo")),
            date_field: Some("issuedAt"),
        }),
    },
    Watched {
        collection: "credits",
        seal_fields: &["issuedAt"],
        gapless: true,
        issue: Some(Issue {
            reset: "monthly",
            format: None,
            date_field: None,
        }),
    },
];

/// The watched collections of this schedule: the insert triggers, and the issue triggers when
/// the schedule issues documents.
pub fn watched(world: &World) -> &'static [Watched] {
    if world.with(|w| w.config.issuing) {
        &WATCHED
    } else {
        &WATCHED[..2]
    }
}

impl Watched {
    pub fn ns(&self) -> String {
        format!("{DB}.{}", self.collection)
    }

    pub(crate) fn spec(&self) -> TriggerSpec {
        let mut options = json!({ "name": self.collection });
        let mut format_field = None;
        if let Some(issue) = &self.issue {
            options["reset"] = json!(issue.reset);
            options["timeZone"] = json!(TIME_ZONE);
            if let Some((format, field)) = issue.format {
                options["format"] = json!(format);
                format_field = Some(field);
            }
        }
        if !self.seal_fields.is_empty() {
            options["sealFields"] = json!(self.seal_fields);
        }
        let sequence = SequenceSpec::parse(&options).expect("a sequence");
        let mut numbering =
            NumberingSpec::new(sequence, FIELD, format_field, self.gapless).expect("a numbering");
        let mut filter = None;
        let mut on = On::Insert;
        if let Some(issue) = &self.issue {
            let condition = condition();
            numbering = numbering
                .with_condition(serde_json::Value::Object(condition.clone()))
                .expect("a condition");
            if let Some(date_field) = issue.date_field {
                numbering = numbering.with_date_field(date_field).expect("a date field");
            }
            filter = Some(condition);
            on = On::Match;
        }
        TriggerSpec {
            id: format!("{DB}.{}.{FIELD}", self.collection),
            ns: Namespace {
                db: DB.to_owned(),
                coll: self.collection.to_owned(),
            },
            numbering,
            filter,
            on,
            backfill_sort: None,
            // The product's default (gapless: on); `start` turns it off in schedules without
            // the ledger (`Config::ledger`).
            record_deletions: self.gapless,
            // The model's update events have lookups, not post-images (those are tested against
            // the test server: `post_images`).
            post_images: false,
            unique_index: true,
        }
    }

    pub(crate) fn context(&self) -> PlanContext {
        PlanContext {
            counters: COUNTERS.to_owned(),
            documents: self.ns(),
            leases: STATE.to_owned(),
            ledger: LEDGER.to_owned(),
            ..PlanContext::default()
        }
    }
}
