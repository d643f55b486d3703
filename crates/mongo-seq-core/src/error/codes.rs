//! Every code [`SeqError::code`](super::SeqError::code) returns, in the order of the variants,
//! with what it means: [`SeqError::ERROR_CODES`](super::SeqError::ERROR_CODES), the one list.
//! The Wasm shim's `errorCodes()`, the Rust crate's `Error::codes()` and the vectors'
//! one-case-per-code check read it, and the error tables of the core's and the npm package's
//! READMEs are generated from it (a tidy test, `tests/tidy/src/error_tables.rs`, fails when a
//! table differs from this list).
//!
//! A meaning is host-neutral: it names operations in words (a rewind, a void), not by one
//! shell's spelling, and `details` keys as every shell gives them (camelCase).

/// One error code and what it means (Markdown, one line: a row of the generated tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode {
    pub code: &'static str,
    pub meaning: &'static str,
}

const fn code(code: &'static str, meaning: &'static str) -> ErrorCode {
    ErrorCode { code, meaning }
}

pub(super) const ERROR_CODES: &[ErrorCode] = &[
    code("UNKNOWN_OPTION", "an option key is unknown (`details.key`)"),
    code("INVALID_OPTION", "an option has the wrong type or an unusable value, or the options are not an object (`details.option`, in the caller's spelling); a time zone the host does not know"),
    code("INVALID_STEP", "`step` is 0"),
    code("INVALID_BOUNDS", "`min > max`, or `start` outside `[min, max]`"),
    code("INVALID_NAME", "the sequence name is missing, not a string, or breaks the naming rules"),
    code("INVALID_SCOPE", "a `scope` entry is not a valid field path, or is listed twice"),
    code("INVALID_FORMAT", "the `format` template breaks the grammar (`details.position`)"),
    code("MISSING_SCOPE_FIELD", "a document lacks a scope field, or it is null (`details.field`)"),
    code("INVALID_SCOPE_VALUE", "a scope value cannot name a counter: an array, a sub-document, a fraction (`details.field`)"),
    code("INVALID_ARGUMENT", "a bad argument of an operation (`details.argument`): a count beyond the limits, a document that is not one, a field that cannot be written, a value that is not an exact 64-bit integer, a period missing or of another kind than the sequence's, a filter or sort that is not a document, a sequence named as existing that has no counter"),
    code("INVALID_DATE", "a date cannot place a number in a period: an instant outside 0001-01-02 … 9999-12-29 (UTC), a document's date field missing, null or not a date, a fiscal year beyond 9999 (`details.argument`, `details.index` in a batch)"),
    code("SEQUENCE_EXHAUSTED", "not enough numbers left before the bound (`details.requested`, `details.available`: the caller's count and what is left for it; the numbers already in hand are kept)"),
    code("OUT_OF_BOUNDS", "a value set as the next number, or seeded, lies outside `[min, max]`"),
    code("OVERFLOW", "64-bit arithmetic would overflow (no bound set, and the 64-bit limit reached)"),
    code("MALFORMED_COUNTER", "a counter's number is not an integer (a string, a fraction, an array), names another `_id`, or lies outside what the sequence's counter can hold; the counter is left as it is"),
    code("MALFORMED_DOCUMENT", "a number field read back from a document holds a non-integer"),
    code("UNEXPECTED_REPLY", "a reply of the wrong kind or shape, or a reply to a finished plan (an internal protocol check: should not happen)"),
    code("BACKWARDS_REFUSED", "setting the next number would move the counter backwards, without force"),
    code("TOO_MANY_RETRIES", "more than 10 lost races in one operation, or the optimistic insert lost `maxAttempts` races"),
    code("CONDITION_NOT_MET", "the counter exists but an extra filter's conditions do not match (an internal protocol check)"),
    code("MALFORMED_LEASE", "a lease document is not `{lease: {owner, epoch ≥ 1, expiresAt}}`; it is left untouched"),
    code("FENCED", "a later lease holder touched the counter (its epoch is above the caller's): the caller must stop"),
    code("WRITE_FAILED", "a statement of a write command failed with a server error the plan does not handle"),
    code("WRITE_CONCERN_FAILED", "the server could not satisfy a write command's write concern"),
    code("UNIQUE_INDEX_CONFLICT", "a unique index other than `_id` refused a counter (`details.index`, `details.collection`): another tool's counters share the collection (mongoose-sequence's `{id, reference_value}`); the message names the plugin whose index it is and what to do (import its counters, or give mongo-seq its own collection); not retried"),
    code("REWIND_REFUSED", "a rewind found a gapless sequence's counters, a pending gapless intent, or (the mode unknown) counters a sidecar keeps (a lease `epoch`); nothing written; force rewinds anyway (`details.name`, `details.counters`)"),
    code("GAPLESS_REFUSED", "a number taken on purpose (the mongoose plugin's `doc.setNext()`) for a sequence whose counters a sidecar keeps, by the rule a rewind applies; nothing reserved; force numbers anyway (`details.name`, `details.counters`)"),
    code("UNSUPPORTED_SHARD_KEY", "the counters collection is sharded on a key other than `_id` (`details.collection`, `details.key`): the server refused a counter write by `_id` (code 61 or 31025); keep the counters unsharded or shard them on `_id`; nothing written"),
    code("SEQUENCE_CONFLICT", "a counter records another definition than the sequence's options, or a process defined the sequence again with other options (`details.counterId`, `details.option`: the first that differs, `details.ours`, `details.stored`); nothing reserved or written"),
    code("ALREADY_VOIDED", "a void named a number the ledger has already (voided, or its document's deletion recorded: the message says which; `details.counterId`, `details.number`); nothing written, unless another void took the number between this call's checks and its writes: then `details.voided` lists what this call had voided"),
    code("INTENT_PENDING", "a void while a gapless intent is pending on the counter (its numbers are not final yet); nothing written; try again"),
    code("NUMBER_HELD", "a void named a number a document of that counter holds (the message names the document); nothing written"),
    code("NUMBER_NOT_ISSUED", "a void named a number the counter has not issued, or a counter that does not exist; nothing written"),
];

#[cfg(test)]
mod tests {
    use super::ERROR_CODES;
    use crate::error::SeqError;

    #[test]
    fn every_code_is_listed_once_with_a_meaning_in_one_table_cell() {
        let mut seen = std::collections::BTreeSet::new();
        for entry in ERROR_CODES {
            assert!(seen.insert(entry.code), "{} listed twice", entry.code);
            assert!(
                !entry.meaning.is_empty() && !entry.meaning.contains(['\n', '|']),
                "{}: a meaning is one table cell",
                entry.code
            );
        }
        assert_eq!(SeqError::codes().count(), ERROR_CODES.len());
    }
}
