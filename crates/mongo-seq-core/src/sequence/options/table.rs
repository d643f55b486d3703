//! The option table: every option key with its spellings and a one-line description, in the
//! order of the module's table ([`SequenceSpec::OPTIONS`]). [`SequenceSpec::KEYS`] is its first
//! column; the sidecar builds its `[[trigger]]` keys and its tools' flags from it.

use super::SequenceSpec;

/// What an option's value is, as a flag or a file's key writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionValue {
    /// An integer (JSON, Extended JSON, or a flag's digits; negative ones too).
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A string.
    Text,
    /// Field paths (a flag: comma-separated).
    Fields,
    /// A counter's `_id`: a string, or a document (a flag: JSON).
    CounterId,
}

/// One option key: its spellings and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceOption {
    /// The package's and the options JSON's spelling (`counterField`).
    pub key: &'static str,
    /// A `[[trigger]]` key's and a Rust builder method's spelling (`counter_field`).
    pub snake: &'static str,
    /// A command-line flag's name, without the dashes (`counter-field`).
    pub flag: &'static str,
    pub value: OptionValue,
    /// What it is, in one line (with its default).
    pub doc: &'static str,
}

const fn option(
    key: &'static str,
    snake: &'static str,
    flag: &'static str,
    value: OptionValue,
    doc: &'static str,
) -> SequenceOption {
    SequenceOption {
        key,
        snake,
        flag,
        value,
        doc,
    }
}

impl SequenceSpec {
    /// Every option, in the order of the module's table: the one list of them.
    pub const OPTIONS: [SequenceOption; 16] = [
        option("name", "name", "sequence", OptionValue::Text, "The sequence's name (its counter's `_id` unless scoped, periodic or given a counter id)."),
        option("start", "start", "start", OptionValue::Integer, "First number of the sequence [default: 1]."),
        option("step", "step", "step", OptionValue::Integer, "Step between numbers, negative to count down [default: 1]."),
        option("min", "min", "min", OptionValue::Integer, "Lowest number ever issued (the bound when counting down)."),
        option("max", "max", "max", OptionValue::Integer, "Highest number ever issued (the bound when counting up)."),
        option("block", "block", "block", OptionValue::Integer, "Numbers one process reserves per round trip, 1 to 1,000,000 [default: 1]."),
        option("refillAhead", "refill_ahead", "refill-ahead", OptionValue::Boolean, "Reserve the next block when half the block is left [default: false]."),
        option("maxBlock", "max_block", "max-block", OptionValue::Integer, "The most a refill reserves as the block grows under load [default: 10 x block]."),
        option("scope", "scope", "scope", OptionValue::Fields, "Scope fields: one counter per combination of their values."),
        option("format", "format", "format", OptionValue::Text, "The formatted id's template, e.g. `INV-{yyyy}-{seq:06}`."),
        option("reset", "reset", "reset", OptionValue::Text, "A series that starts again every period: never, yearly, monthly or daily [default: never]; one counter per period, the period last in its id (`invoices/2026`)."),
        option("timeZone", "time_zone", "time-zone", OptionValue::Text, "The IANA time zone whose local dates place numbers in periods, e.g. Europe/Paris [default: UTC]."),
        option("yearStart", "year_start", "year-start", OptionValue::Integer, "The month (1-12) a yearly series' fiscal year starts in, named after the calendar year it ends in [default: 1]."),
        option("counterField", "counter_field", "counter-field", OptionValue::Text, "The counter documents' number field [default: seq] (`seq_value` for the Atlas recipe's)."),
        option("counterId", "counter_id", "counter-id", OptionValue::CounterId, "The counter's `_id` when it is not the sequence name: a string, or a document such as {\"db\": \"shop\", \"coll\": \"orders\"}."),
        option("sealFields", "seal_fields", "seal-fields", OptionValue::Fields, "A sealed series: the fields each number's SHA-256 seal chains to the one before, besides its number, period and series (a gapless trigger only)."),
    ];

    /// The options a trigger (the sidecar's `[[trigger]]`, a tool's flags) may set: see
    /// [`SequenceSpec::trigger_keys`].
    pub fn trigger_options() -> impl Iterator<Item = &'static SequenceOption> {
        Self::OPTIONS
            .iter()
            .filter(|option| !Self::NOT_FOR_TRIGGERS.contains(&option.key))
    }

    /// The option whose camelCase key is `key`.
    pub fn option(key: &str) -> Option<&'static SequenceOption> {
        Self::OPTIONS.iter().find(|option| option.key == key)
    }
}

/// The first column of `options` (evaluated at compile time).
pub(super) const fn keys_of<const N: usize>(options: &[SequenceOption; N]) -> [&'static str; N] {
    let mut keys = [""; N];
    let mut rest: &[SequenceOption] = options;
    let mut out: &mut [&'static str] = &mut keys;
    while let ([option, tail @ ..], [key, others @ ..]) = (rest, out) {
        *key = option.key;
        rest = tail;
        out = others;
    }
    keys
}
