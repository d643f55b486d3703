//! A sealed series' ledger entries (voids, recorded deletions) as links of its chain: sealed
//! after the head and appended by moving it, the entries kept in the counter's `seal.records`
//! until they are written (see [`crate::numbering::sealing`]).

use serde_json::{json, Map, Value};

use crate::error::SeqError;
use crate::ledger::entry::LedgerEntry;
use crate::numbering::sealing::{CounterSeal, FIELD};
use crate::protocol::command::{Collection, Command, ReturnDocument, UpdateOptions};
use crate::sequence::options::SequenceSpec;

/// Seals ledger entries (voids, deletions: `fields` per entry, the values each link seals) in
/// the order given, the first after `head`.
pub fn seal_entries(
    spec: &SequenceSpec,
    counter_id: &str,
    head: Option<&str>,
    entries: &mut [LedgerEntry],
    fields: &[Map<String, Value>],
) -> Result<(), SeqError> {
    let period = spec.period_of_counter_id(counter_id).map(|p| p.text());
    let mut previous = head.map(str::to_owned);
    for (index, entry) in entries.iter_mut().enumerate() {
        let link = entry.link(
            period.clone(),
            fields.get(index).cloned().unwrap_or_default(),
        );
        let seal = link.seal(previous.as_deref())?;
        previous = Some(seal.hash.clone());
        entry.seal = Some(seal);
    }
    Ok(())
}

/// Moves the head over sealed `entries` (compare-and-set on the head as read, and only while
/// no intent is pending: the intent's numbers are not final) and stores them in
/// `seal.records` until they are written.
pub fn append_command(
    spec: &SequenceSpec,
    counter_id: &str,
    counter: &CounterSeal,
    entries: &[LedgerEntry],
) -> Command {
    let mut filter = spec.id_filter(counter_id);
    filter.insert("intent".to_owned(), json!({ "$exists": false }));
    counter.add_condition(&mut filter);
    let last = entries
        .iter()
        .rev()
        .find_map(|e| e.seal.as_ref().map(|s| s.hash.clone()))
        .or_else(|| counter.head.clone());
    let records: Vec<Value> = entries.iter().map(LedgerEntry::to_document).collect();
    Command::FindOneAndUpdate {
        collection: Collection::Counters,
        filter: Value::Object(filter),
        update: json!({
            "$set": { format!("{FIELD}.hash"): last },
            "$push": { format!("{FIELD}.records"): { "$each": records } },
        }),
        options: UpdateOptions {
            upsert: false,
            return_document: ReturnDocument::After,
        },
    }
}
