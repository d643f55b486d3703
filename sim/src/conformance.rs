//! The drivers' unified-format spec tests (the files the conformance run reads against the
//! embedded server, `tests/conformance/`) run against the model: the same initial data, the
//! operations the model claims to model, the same expected results and collection contents.
//!
//! Each test is **passed**, **simplified** (the model answers otherwise on purpose: listed in
//! [`SIMPLIFIED`] with the reason, and in docs/simulation.md), **skipped** (it uses something the
//! model does not model, or the spec's own requirements exclude it), or **failed** (anything
//! else: a disagreement nobody explained). Command events are not checked: the model answers
//! commands and has no wire, no driver.

use std::collections::BTreeMap;

use bson::{Bson, Document};

use crate::model::error::ModelError;
use crate::model::stream::{self, Position};
use crate::model::value::{equal, number};
use crate::model::{
    execute, Cluster, IndexSpec, Operation, ReadLevel, Request, Response, Statement,
};

/// Tests where the model answers otherwise on purpose: (file, test, why).
pub const SIMPLIFIED: &[(&str, &str, &str)] = &[
    (
        "crud/unified/findOneAndUpdate-errorResponse.json",
        "findOneAndUpdate DuplicateKey error is accessible",
        "a duplicate-key error carries `keyPattern` (its fields) but no `keyValue`: the core reads the index from `keyPattern` only",
    ),
    (
        "change_streams/unified/change-streams-disambiguatedPaths.json",
        "disambiguatedPaths is not present when showExpandedEvents is false/unset",
        "update events carry no `updateDescription`: the model keeps whole documents (`Op::Put`), the product reads `fullDocument` only",
    ),
];

/// One test's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Simplified(String),
    Skipped(String),
    Failed(String),
}

/// Why a value is not what the spec expects.
type Mismatch = String;

fn skip(reason: impl Into<String>) -> Verdict {
    Verdict::Skipped(reason.into())
}

/// The numeric value of a BSON number.
fn numeric(value: &Bson) -> Option<f64> {
    match value {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(n) => Some(*n),
        _ => None,
    }
}

/// The unified format's matching (root documents may hold more fields; numbers by value).
pub fn matches(
    expected: &Bson,
    actual: Option<&Bson>,
    root: bool,
    path: &str,
) -> Result<(), Mismatch> {
    if let Bson::Document(e) = expected {
        if e.len() == 1 {
            let (op, spec) = e.iter().next().expect("one field");
            match op.as_str() {
                "$$unsetOrMatches" => {
                    return match actual {
                        None | Some(Bson::Null) if root => Ok(()),
                        None => Ok(()),
                        Some(_) => matches(spec, actual, root, path),
                    }
                }
                "$$exists" => {
                    return match (spec.as_bool(), actual.is_some()) {
                        (Some(want), got) if want == got => Ok(()),
                        _ => Err(format!("{path}: $$exists {spec}")),
                    }
                }
                "$$type" => {
                    let aliases: Vec<&str> = match spec {
                        Bson::Array(a) => a.iter().filter_map(Bson::as_str).collect(),
                        other => other.as_str().into_iter().collect(),
                    };
                    let Some(value) = actual else {
                        return Err(format!("{path}: missing (expected $$type {spec})"));
                    };
                    let ok = aliases.iter().any(|alias| match *alias {
                        "int" => matches!(value, Bson::Int32(_)),
                        "long" => matches!(value, Bson::Int64(_)),
                        "double" => matches!(value, Bson::Double(_)),
                        "number" => number(value).is_some(),
                        "string" => matches!(value, Bson::String(_)),
                        "object" => matches!(value, Bson::Document(_)),
                        "array" => matches!(value, Bson::Array(_)),
                        "objectId" => matches!(value, Bson::ObjectId(_)),
                        "timestamp" => matches!(value, Bson::Timestamp(_)),
                        "date" => matches!(value, Bson::DateTime(_)),
                        "bool" => matches!(value, Bson::Boolean(_)),
                        "null" => matches!(value, Bson::Null),
                        _ => false,
                    });
                    return if ok {
                        Ok(())
                    } else {
                        Err(format!("{path}: {value} is not {spec}"))
                    };
                }
                other if other.starts_with("$$") => {
                    return Err(format!(
                        "{path}: operator {other} not supported by the adapter"
                    ))
                }
                _ => {}
            }
        }
    }
    let Some(actual) = actual else {
        return Err(format!("{path}: missing (expected {expected})"));
    };
    match (expected, actual) {
        (Bson::Document(e), Bson::Document(a)) => {
            for (key, value) in e {
                matches(value, a.get(key), false, &format!("{path}.{key}"))?;
            }
            if !root {
                let extra: Vec<&String> =
                    a.keys().filter(|k| !e.contains_key(k.as_str())).collect();
                if !extra.is_empty() {
                    return Err(format!("{path}: unexpected fields {extra:?} in {a}"));
                }
            }
            Ok(())
        }
        (Bson::Array(e), Bson::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{path}: expected {} elements, got {}: {actual}",
                    e.len(),
                    a.len()
                ));
            }
            for (i, (x, y)) in e.iter().zip(a).enumerate() {
                matches(
                    x,
                    Some(y),
                    root && matches!(x, Bson::Document(_)),
                    &format!("{path}[{i}]"),
                )?;
            }
            Ok(())
        }
        (e, a) => match (numeric(e), numeric(a)) {
            (Some(x), Some(y)) if x == y => Ok(()),
            (Some(_), _) | (_, Some(_)) => Err(format!("{path}: expected {e}, got {a}")),
            _ if e == a
                || equal(e, a) && std::mem::discriminant(e) == std::mem::discriminant(a) =>
            {
                Ok(())
            }
            _ => Err(format!("{path}: expected {e}, got {a}")),
        },
    }
}

/// A test's world: one member, the primary, whose every write is committed at once.
struct World {
    cluster: Cluster,
    /// Entity id → (database, collection) of the file's collection entities.
    collections: BTreeMap<String, (String, String)>,
    /// Open change streams: entity id → (namespace, pipeline, position, lookup).
    streams: BTreeMap<String, (String, Vec<Document>, Position, bool)>,
}

impl World {
    fn run(&mut self, db: &str, operation: Operation) -> Result<Response, ModelError> {
        let request = Request {
            db: db.to_owned(),
            operation,
            read_concern: ReadLevel::Local,
            after_cluster_time: None,
            secondary_ok: false,
            max_time_ms: None,
            session: None,
        };
        let executed = execute(&mut self.cluster, 0, &request)?;
        self.cluster.update_commit_point()?;
        Ok(executed.response)
    }

    /// The `_id`s of a collection's documents.
    fn ids(&self, db: &str, collection: &str) -> Vec<Bson> {
        self.cluster
            .node(0)
            .data
            .collection(&format!("{db}.{collection}"))
            .map(|c| {
                c.documents()
                    .filter_map(|d| d.get("_id").cloned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `_id` of the document an upsert inserted (the one not there `before`).
    fn upserted(&self, db: &str, collection: &str, before: &[Bson]) -> Option<Bson> {
        self.ids(db, collection)
            .into_iter()
            .find(|id| !before.contains(id))
    }
}

fn doc(args: &Document, key: &str) -> Document {
    args.get_document(key).cloned().unwrap_or_default()
}

/// The arguments the model interprets, per operation; any other is "not modelled".
fn modelled(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "insertOne" => &["document"],
        "insertMany" => &["documents", "ordered"],
        "updateOne" | "updateMany" => &["filter", "update", "upsert"],
        "deleteOne" | "deleteMany" => &["filter"],
        "findOneAndUpdate" => &["filter", "update", "upsert", "returnDocument", "sort"],
        "find" => &["filter", "sort", "limit", "projection", "batchSize"],
        "aggregate" => &["pipeline", "batchSize"],
        "bulkWrite" => &["requests", "ordered"],
        "createIndex" => &["keys", "name", "unique"],
        "createChangeStream" => &["pipeline", "fullDocument"],
        "iterateUntilDocumentOrError" => &[],
        _ => return None,
    })
}

/// Why the model cannot run this test (None: it can try).
fn unmodelled(test: &Document) -> Option<String> {
    for operation in test
        .get_array("operations")
        .ok()?
        .iter()
        .filter_map(Bson::as_document)
    {
        let name = operation.get_str("name").unwrap_or_default();
        let object = operation.get_str("object").unwrap_or_default();
        let Some(allowed) = modelled(name) else {
            return Some(format!("the model does not model {name}"));
        };
        if name == "createChangeStream" && !object.starts_with("collection") {
            return Some("the model's change streams are of one collection".into());
        }
        let args = operation
            .get_document("arguments")
            .cloned()
            .unwrap_or_default();
        if let Some(key) = args.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Some(format!("the model does not model {name} with {key}"));
        }
        if let Ok(requests) = args.get_array("requests") {
            for request in requests.iter().filter_map(Bson::as_document) {
                let (kind, model) = request.iter().next()?;
                let model = model.as_document()?;
                let known = match kind.as_str() {
                    "insertOne" => &["document"][..],
                    "updateOne" | "updateMany" => &["filter", "update", "upsert"][..],
                    "deleteOne" | "deleteMany" => &["filter"][..],
                    _ => return Some(format!("the model does not model bulkWrite {kind}")),
                };
                if let Some(key) = model.keys().find(|k| !known.contains(&k.as_str())) {
                    return Some(format!(
                        "the model does not model bulkWrite {kind} with {key}"
                    ));
                }
                if matches!(model.get("update"), Some(Bson::Array(_))) {
                    return Some("the model does not model pipeline updates".into());
                }
            }
        }
        if matches!(args.get("update"), Some(Bson::Array(_))) {
            return Some("the model does not model pipeline updates".into());
        }
        if operation.contains_key("expectError") {
            let expected = operation.get_document("expectError").ok()?;
            if expected.get_bool("isClientError") == Ok(true) {
                return Some("a driver-side error: the model has no driver".into());
            }
        }
    }
    None
}

/// Runs one operation: its result as the spec's expectResult sees it.
fn operate(world: &mut World, operation: &Document) -> Result<Option<Bson>, ModelError> {
    let name = operation.get_str("name").unwrap_or_default();
    let object = operation.get_str("object").unwrap_or_default();
    let args = operation
        .get_document("arguments")
        .cloned()
        .unwrap_or_default();
    if name == "iterateUntilDocumentOrError" {
        let (ns, pipeline, position, lookup) = world
            .streams
            .get(object)
            .cloned()
            .ok_or_else(|| ModelError::unsupported(format!("no stream {object}")))?;
        let mut rng = crate::rng::SimRng::new(0);
        let batch = stream::read(
            world.cluster.node(0),
            &ns,
            &pipeline,
            position,
            1,
            lookup.then_some(&mut rng),
        )?;
        // No event: a test that expects one fails on the missing result.
        let Some(event) = batch.events.first().cloned() else {
            return Ok(None);
        };
        let next = Position::from_token(
            event
                .get_document("_id")
                .map_err(|_| ModelError::unsupported("event without token"))?,
        )?;
        world
            .streams
            .insert(object.to_owned(), (ns, pipeline, next, lookup));
        return Ok(Some(Bson::Document(event)));
    }
    let (db, collection) = world
        .collections
        .get(object)
        .cloned()
        .ok_or_else(|| ModelError::unsupported(format!("{name} on {object}")))?;
    let statement = |args: &Document, multi: bool| Statement {
        filter: doc(args, "filter"),
        update: doc(args, "update"),
        multi,
        upsert: args.get_bool("upsert").unwrap_or(false),
    };
    let result = match name {
        "insertOne" | "insertMany" => {
            let documents: Vec<Document> = if name == "insertOne" {
                vec![doc(&args, "document")]
            } else {
                args.get_array("documents")
                    .map(|a| a.iter().filter_map(|d| d.as_document().cloned()).collect())
                    .unwrap_or_default()
            };
            let ordered = args.get_bool("ordered").unwrap_or(true);
            let response = world.run(
                &db,
                Operation::Insert {
                    collection,
                    documents: documents.clone(),
                    ordered,
                },
            )?;
            write_errors(&response)?;
            let mut ids = Document::new();
            for (i, d) in documents.iter().enumerate() {
                if let Some(id) = d.get("_id") {
                    ids.insert(i.to_string(), id.clone());
                }
            }
            if name == "insertOne" {
                Bson::Document(
                    bson::doc! { "insertedId": ids.get("0").cloned().unwrap_or(Bson::Null) },
                )
            } else {
                Bson::Document(bson::doc! { "insertedIds": ids })
            }
        }
        "updateOne" | "updateMany" => {
            let before = world.ids(&db, &collection);
            let response = world.run(
                &db,
                Operation::Update {
                    collection: collection.clone(),
                    statements: vec![statement(&args, name == "updateMany")],
                    ordered: true,
                },
            )?;
            write_errors(&response)?;
            let Response::Write { n, n_modified, .. } = response else {
                return Err(ModelError::unsupported("update reply"));
            };
            let upserted = world.upserted(&db, &collection, &before);
            let count = u64::from(upserted.is_some());
            let mut result = bson::doc! { "matchedCount": (n - count) as i64, "modifiedCount": n_modified as i64, "upsertedCount": count as i64 };
            if let Some(id) = upserted {
                result.insert("upsertedId", id);
            }
            Bson::Document(result)
        }
        "deleteOne" | "deleteMany" => {
            let response = world.run(
                &db,
                Operation::Delete {
                    collection,
                    filter: doc(&args, "filter"),
                    multi: name == "deleteMany",
                },
            )?;
            let Response::Write { n, .. } = response else {
                return Err(ModelError::unsupported("delete reply"));
            };
            Bson::Document(bson::doc! { "deletedCount": n as i64 })
        }
        "findOneAndUpdate" => {
            let new = args
                .get_str("returnDocument")
                .is_ok_and(|r| r.eq_ignore_ascii_case("after"));
            let response = world.run(
                &db,
                Operation::FindAndModify {
                    collection,
                    filter: doc(&args, "filter"),
                    update: doc(&args, "update"),
                    upsert: args.get_bool("upsert").unwrap_or(false),
                    new,
                    sort: args.get_document("sort").ok().cloned(),
                },
            )?;
            match response {
                Response::Value(Some(d)) => Bson::Document(d),
                _ => Bson::Null,
            }
        }
        "find" | "aggregate" => {
            let operation = if name == "find" {
                Operation::Find {
                    collection,
                    filter: doc(&args, "filter"),
                    projection: args.get_document("projection").ok().cloned(),
                    sort: args.get_document("sort").ok().cloned(),
                    limit: args.get("limit").and_then(numeric).map(|n| n as u64),
                }
            } else {
                let pipeline = args
                    .get_array("pipeline")
                    .map(|a| a.iter().filter_map(|d| d.as_document().cloned()).collect())
                    .unwrap_or_default();
                Operation::Aggregate {
                    collection,
                    pipeline,
                }
            };
            match world.run(&db, operation)? {
                Response::Documents(d) => Bson::Array(d.into_iter().map(Bson::Document).collect()),
                _ => return Err(ModelError::unsupported("read reply")),
            }
        }
        "bulkWrite" => bulk_write(world, &db, &collection, &args)?,
        "createIndex" => {
            let keys = doc(&args, "keys")
                .iter()
                .map(|(k, v)| (k.clone(), numeric(v).unwrap_or(1.0) as i32))
                .collect::<Vec<_>>();
            let name = args.get_str("name").map(str::to_owned).unwrap_or_else(|_| {
                keys.iter()
                    .map(|(k, v)| format!("{k}_{v}"))
                    .collect::<Vec<_>>()
                    .join("_")
            });
            world.run(
                &db,
                Operation::CreateIndex {
                    collection,
                    spec: IndexSpec {
                        name: name.clone(),
                        keys,
                        unique: args.get_bool("unique").unwrap_or(false),
                        partial: None,
                    },
                },
            )?;
            Bson::String(name)
        }
        "createChangeStream" => {
            let pipeline: Vec<Document> = args
                .get_array("pipeline")
                .map(|a| a.iter().filter_map(|d| d.as_document().cloned()).collect())
                .unwrap_or_default();
            let lookup = args.get_str("fullDocument") == Ok("updateLookup");
            let start = stream::start_now(world.cluster.node(0));
            // The stages are checked when the stream opens, as a server checks the aggregate.
            stream::read(
                world.cluster.node(0),
                &format!("{db}.{collection}"),
                &pipeline,
                start,
                0,
                None,
            )?;
            let id = operation
                .get_str("saveResultAsEntity")
                .unwrap_or_default()
                .to_owned();
            world
                .streams
                .insert(id, (format!("{db}.{collection}"), pipeline, start, lookup));
            return Ok(None);
        }
        other => return Err(ModelError::unsupported(other.to_owned())),
    };
    Ok(Some(result))
}

/// A reply's first write error, as the error it is to the caller.
fn write_errors(response: &Response) -> Result<(), ModelError> {
    if let Response::Write { write_errors, .. } = response {
        if let Some(e) = write_errors.first() {
            return Err(ModelError::server(e.code, "WriteError", e.message.clone()));
        }
    }
    Ok(())
}

/// A bulk write as consecutive commands of one kind each (as drivers batch it).
fn bulk_write(
    world: &mut World,
    db: &str,
    collection: &str,
    args: &Document,
) -> Result<Bson, ModelError> {
    let ordered = args.get_bool("ordered").unwrap_or(true);
    let (mut inserted, mut matched, mut modified, mut deleted, mut upserted) =
        (0i64, 0i64, 0i64, 0i64, 0i64);
    let mut first_error = None;
    let mut upserted_ids = Document::new();
    for (index, request) in args
        .get_array("requests")
        .map(|a| a.to_vec())
        .unwrap_or_default()
        .iter()
        .filter_map(Bson::as_document)
        .enumerate()
    {
        let (kind, model) = request
            .iter()
            .next()
            .ok_or_else(|| ModelError::unsupported("empty request"))?;
        let model = model.as_document().cloned().unwrap_or_default();
        let before = world.ids(db, collection);
        let response = match kind.as_str() {
            "insertOne" => world.run(
                db,
                Operation::Insert {
                    collection: collection.to_owned(),
                    documents: vec![doc(&model, "document")],
                    ordered: true,
                },
            )?,
            "updateOne" | "updateMany" => world.run(
                db,
                Operation::Update {
                    collection: collection.to_owned(),
                    statements: vec![Statement {
                        filter: doc(&model, "filter"),
                        update: doc(&model, "update"),
                        multi: kind == "updateMany",
                        upsert: model.get_bool("upsert").unwrap_or(false),
                    }],
                    ordered: true,
                },
            )?,
            "deleteOne" | "deleteMany" => world.run(
                db,
                Operation::Delete {
                    collection: collection.to_owned(),
                    filter: doc(&model, "filter"),
                    multi: kind == "deleteMany",
                },
            )?,
            other => return Err(ModelError::unsupported(format!("bulkWrite {other}"))),
        };
        if let Err(e) = write_errors(&response) {
            first_error.get_or_insert(e);
            if ordered {
                break;
            }
            continue;
        }
        let Response::Write { n, n_modified, .. } = response else {
            continue;
        };
        let (n, n_modified) = (n as i64, n_modified as i64);
        match kind.as_str() {
            "insertOne" => inserted += n,
            "deleteOne" | "deleteMany" => deleted += n,
            _ => {
                let id = world.upserted(db, collection, &before);
                let up = i64::from(id.is_some());
                if let Some(id) = id {
                    upserted_ids.insert(index.to_string(), id);
                }
                upserted += up;
                matched += n - up;
                modified += n_modified;
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(Bson::Document(bson::doc! {
        "insertedCount": inserted, "matchedCount": matched, "modifiedCount": modified,
        "deletedCount": deleted, "upsertedCount": upserted, "upsertedIds": upserted_ids,
    }))
}

/// Whole files about what mongo-seq never sends (as the conformance run on the server skips them).
const UNUSED_FILES: &[(&str, &str)] = &[
    (
        "dots_and_dollars",
        "field names with dots or dollars, which mongo-seq never sends",
    ),
    (
        "unacknowledged",
        "unacknowledged writes, which mongo-seq never sends",
    ),
    (
        "-validation.json",
        "update documents the driver refuses (no server involved)",
    ),
];

/// Runs one test of `file` (a parsed spec file).
pub fn run_test(file_name: &str, file: &Document, test: &Document) -> Verdict {
    let description = test.get_str("description").unwrap_or_default();
    if let Some((_, why)) = UNUSED_FILES
        .iter()
        .find(|(part, _)| file_name.contains(part))
    {
        return skip(*why);
    }
    if let Some(reason) = unmodelled(test) {
        return skip(reason);
    }
    let mut world = World {
        cluster: Cluster::new(1, 0),
        collections: BTreeMap::new(),
        streams: BTreeMap::new(),
    };
    let mut databases = BTreeMap::new();
    for entity in file
        .get_array("createEntities")
        .map(|a| a.to_vec())
        .unwrap_or_default()
        .iter()
        .filter_map(Bson::as_document)
    {
        if let Ok(d) = entity.get_document("database") {
            databases.insert(
                d.get_str("id").unwrap_or_default().to_owned(),
                d.get_str("databaseName").unwrap_or_default().to_owned(),
            );
        }
        if let Ok(c) = entity.get_document("collection") {
            let db = databases
                .get(c.get_str("database").unwrap_or_default())
                .cloned()
                .unwrap_or_default();
            world.collections.insert(
                c.get_str("id").unwrap_or_default().to_owned(),
                (
                    db,
                    c.get_str("collectionName").unwrap_or_default().to_owned(),
                ),
            );
        }
    }
    for data in file
        .get_array("initialData")
        .map(|a| a.to_vec())
        .unwrap_or_default()
        .iter()
        .filter_map(Bson::as_document)
    {
        let db = data.get_str("databaseName").unwrap_or_default();
        let collection = data
            .get_str("collectionName")
            .unwrap_or_default()
            .to_owned();
        let documents: Vec<Document> = data
            .get_array("documents")
            .map(|a| a.iter().filter_map(|d| d.as_document().cloned()).collect())
            .unwrap_or_default();
        if let Err(e) = world.run(
            db,
            Operation::Insert {
                collection,
                documents,
                ordered: true,
            },
        ) {
            return Verdict::Failed(format!("initial data: {e}"));
        }
    }
    let outcome = (|| -> Result<(), String> {
        for operation in test
            .get_array("operations")
            .map_err(|e| e.to_string())?
            .iter()
            .filter_map(Bson::as_document)
        {
            let name = operation.get_str("name").unwrap_or_default();
            match operate(&mut world, operation) {
                Err(ModelError::Unsupported(what)) => return Err(format!("UNSUPPORTED {what}")),
                Err(ModelError::Server(error)) => {
                    let Ok(expected) = operation.get_document("expectError") else {
                        return Err(format!("{name}: {} ({})", error.message, error.code));
                    };
                    if let Some(code) = expected.get("errorCode").and_then(numeric) {
                        if f64::from(error.code) != code {
                            return Err(format!(
                                "{name}: error code {} ({}), expected {code}",
                                error.code, error.message
                            ));
                        }
                    }
                    if let Some(response) = expected.get("errorResponse") {
                        let mut actual = bson::doc! { "code": error.code, "codeName": error.name, "errmsg": error.message.clone() };
                        if let Some(fields) = &error.key_pattern {
                            actual.insert(
                                "keyPattern",
                                fields
                                    .iter()
                                    .map(|f| (f.clone(), Bson::Int32(1)))
                                    .collect::<Document>(),
                            );
                        }
                        matches(
                            response,
                            Some(&Bson::Document(actual)),
                            true,
                            &format!("{name} errorResponse"),
                        )?;
                    }
                }
                Ok(result) => {
                    if operation.contains_key("expectError") {
                        return Err(format!("{name}: expected an error, got {result:?}"));
                    }
                    if let Some(expected) = operation.get("expectResult") {
                        matches(expected, result.as_ref(), true, name)?;
                    }
                }
            }
        }
        for expected in test
            .get_array("outcome")
            .map(|a| a.to_vec())
            .unwrap_or_default()
            .iter()
            .filter_map(Bson::as_document)
        {
            let ns = format!(
                "{}.{}",
                expected.get_str("databaseName").unwrap_or_default(),
                expected.get_str("collectionName").unwrap_or_default()
            );
            let mut actual: Vec<Document> = world
                .cluster
                .node(0)
                .data
                .collection(&ns)
                .map(|c| c.documents().cloned().collect())
                .unwrap_or_default();
            crate::model::find::sort(&mut actual, &bson::doc! { "_id": 1 })
                .map_err(|e| e.to_string())?;
            let actual = Bson::Array(actual.into_iter().map(Bson::Document).collect());
            matches(
                &Bson::Array(expected.get_array("documents").cloned().unwrap_or_default()),
                Some(&actual),
                false,
                &format!("outcome {ns}"),
            )?;
        }
        Ok(())
    })();
    match outcome {
        Ok(()) => Verdict::Passed,
        Err(why) if why.starts_with("UNSUPPORTED ") => skip(format!(
            "outside the model: {}",
            &why["UNSUPPORTED ".len()..]
        )),
        Err(why) => match SIMPLIFIED
            .iter()
            .find(|(f, t, _)| *f == file_name && *t == description)
        {
            Some((_, _, reason)) => Verdict::Simplified(format!("{reason} ({why})")),
            None => Verdict::Failed(why),
        },
    }
}
