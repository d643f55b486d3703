//! `mongo-seq import`: adopts the counters of mongoose-sequence or mongoose-auto-increment /
//! @typegoose/auto-increment, running the core's `ImportCounters` plan (which decides
//! everything: what a counter is, its sequence, what to write, never backwards) through the
//! tools' connection. A dry run unless `--apply`; prints what it found and did.

use mongo_seq_core::{ImportAction, ImportCounters, ImportReport, ImportRequest};
use serde_json::{json, Map, Value};

use super::{runtime, CliError, UriArg};
use crate::config::{Key, Namespace};
use crate::connection::Connection;
use crate::run_plan::run_tool_plan;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Source {
    /// mongoose-sequence: `{ id, reference_value, seq }` (collection `counters`).
    MongooseSequence,
    /// mongoose-auto-increment, @typegoose/auto-increment: `{ model, field, count }`
    /// (collection `identitycounters`).
    AutoIncrement,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "A dry run by default: reads the plugin's counters and mongo-seq's, \
prints what --apply would do, writes nothing. --apply moves each mongo-seq counter behind its \
source past it with $max (never backwards; safe while applications run). Sequences are named \
after mongoose-sequence's `id`, or `<model>.<field>` for auto-increment counters (rename with \
--name; `--name invoice_2026=invoices/2026` makes it the 2026 counter of a yearly series). Imported in place (--counters = --source, both `counters` by default), \
mongoose-sequence's unique index {id, reference_value}, which admits one document without \
those fields, is replaced by one over its own documents only, so mongo-seq's counters fit \
beside them. The auto-increment plugins' collection is never mongo-seq's. Exit status: 0 \
done, 1 failure or, with --apply, nothing to import (no counters found, or every one \
skipped: the reasons are printed), 2 usage error."
)]
pub struct ImportArgs {
    /// The plugin whose counters to adopt.
    #[arg(long, value_enum)]
    pub from: Source,
    #[command(flatten)]
    pub uri: UriArg,
    /// The database holding both collections.
    #[arg(long)]
    pub db: String,
    /// The plugin's collection [default: counters for mongoose-sequence, identitycounters for auto-increment].
    #[arg(long)]
    pub source: Option<String>,
    /// mongo-seq's counters collection [default: counters].
    #[arg(long)]
    pub counters: Option<String>,
    /// Name a sequence: `<source key>=<name>`, the key being mongoose-sequence's `id` or
    /// `<model>.<field>`; a key that matches no source counter is refused. Repeatable. A name
    /// ending with a period adopts the counter as that period's of a series that resets
    /// (`invoice_2026=invoices/2026`: counter `invoices/2026` of the yearly series `invoices`;
    /// `tickets/2026-05` monthly, `…/2026-05-17` daily; after the scope of a mongoose-sequence
    /// `reference_value`: `invoices/tenant=acme/2026`).
    #[arg(long = "name", value_name = "KEY=NAME")]
    pub names: Vec<String>,
    /// The number field of mongo-seq's counters (default `seq`; see the sequence option counterField).
    #[arg(long)]
    pub counter_field: Option<String>,
    /// Write: move mongo-seq's counters past the plugin's.
    #[arg(long)]
    pub apply: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The core's request from the arguments (a usage error when the core refuses them).
fn request(args: &ImportArgs) -> Result<ImportRequest, CliError> {
    let mut names = Map::new();
    for pair in &args.names {
        let Some((key, name)) = pair.split_once('=') else {
            return Err(CliError::usage(anyhow::anyhow!(
                "--name {pair:?}: expected <source key>=<sequence name>"
            )));
        };
        if let Some(first) = names.get(key) {
            return Err(CliError::usage(anyhow::anyhow!(
                "--name {pair:?}: source key `{key}` is already named {first} by an earlier --name (give each key once)"
            )));
        }
        names.insert(key.to_owned(), json!(name));
    }
    let raw = json!({
        "from": match args.from { Source::MongooseSequence => "mongoose-sequence", Source::AutoIncrement => "auto-increment" },
        "apply": args.apply,
        "source": args.source,
        "counters": args.counters,
        "names": names,
        "counterField": args.counter_field,
    });
    ImportRequest::from_json(&raw).map_err(|e| {
        // Name the flag, not the core's option.
        let flag = match e.option_name() {
            Some("counterField") => "--counter-field".to_owned(),
            Some(option) => format!("--{option}"),
            None => "import".to_owned(),
        };
        CliError::usage(anyhow::anyhow!("{flag}: {e} ({})", e.code()))
    })
}

pub(super) fn run(args: &ImportArgs) -> Result<(), CliError> {
    let request = request(args)?;
    // Checked before connecting: a bad name is a usage error, and nothing is read or written.
    let db = (args.db.as_str(), Key::flag("--db"));
    let source = Namespace::checked(db.clone(), (&request.source, Key::flag("--source")))?;
    let counters = Namespace::checked(db, (&request.counters, Key::flag("--counters")))?;
    let uri = args.uri.resolve()?;
    let report: ImportReport = runtime()?.block_on(async {
        let client = crate::server::connect(&uri)
            .await
            .map_err(CliError::runtime)?;
        // The plugin's collection is the plan's `documents` collection.
        let mongo = Connection::for_tool(&client, Some(&source), &counters);
        run_tool_plan(&mongo, &mut ImportCounters::new(&request))
            .await
            .map_err(CliError::runtime)
    })?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        print!("{}", summary(&report, &request));
    }
    match nothing_imported(&report, &request) {
        Some(why) if args.apply => Err(CliError::runtime(anyhow::anyhow!("{why}"))),
        _ => Ok(()),
    }
}

/// Why an import found nothing to adopt (`--apply` then exits 1: a wrong `--db`, `--source` or
/// `--from` is the likely cause, and a script must not go on as if it had imported).
fn nothing_imported(report: &ImportReport, request: &ImportRequest) -> Option<String> {
    if !report.counters.is_empty() {
        return None;
    }
    Some(if report.skipped.is_empty() {
        format!(
            "nothing imported: `{}` holds no counters of {} (check --db, --source and --from)",
            request.source,
            from_name(request)
        )
    } else {
        format!(
            "nothing imported: every one of the {} document(s) of `{}` was skipped (the reasons are listed above; --json has them whole)",
            report.skipped.len(),
            request.source
        )
    })
}

fn from_name(request: &ImportRequest) -> &'static str {
    match request.from {
        mongo_seq_core::CounterSource::MongooseSequence => "mongoose-sequence",
        mongo_seq_core::CounterSource::AutoIncrement => "auto-increment",
    }
}

/// The report for a terminal: one line per counter, then what was skipped and why.
fn summary(report: &ImportReport, request: &ImportRequest) -> String {
    let mut out = format!(
        "{} from {} into {}\n",
        if report.applied {
            "imported"
        } else {
            "dry run (nothing written; --apply to write):"
        },
        request.source,
        request.counters
    );
    let width = report
        .counters
        .iter()
        .map(|c| c.counter_id.len())
        .max()
        .unwrap_or(0);
    let number = |n: Option<i64>| n.map_or_else(|| "none".to_owned(), |n| n.to_string());
    for counter in &report.counters {
        let what = match (counter.action, report.applied) {
            (ImportAction::Keep, _) => "kept (already past the source)".to_owned(),
            (ImportAction::Create, false) => "would be created".to_owned(),
            (ImportAction::Advance, false) => "would be advanced".to_owned(),
            (ImportAction::Create, true) => "created".to_owned(),
            (ImportAction::Advance, true) => "advanced".to_owned(),
        };
        let after = if report.applied {
            format!(" -> {}", number(counter.after))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {:width$}  source {}  mongo-seq {}{after}  {what}\n",
            counter.counter_id,
            counter.source_last,
            number(counter.before),
        ));
    }
    if report.counters.is_empty() {
        out.push_str(if report.skipped.is_empty() {
            "  no counters found\n"
        } else {
            "  no counters to import (all skipped)\n"
        });
    }
    if let Some(index) = &report.index {
        let verb = if index.applied {
            "replaced"
        } else {
            "would replace"
        };
        out.push_str(&format!(
            "  {verb} index {} with {} (unique over mongoose-sequence's documents only), so mongo-seq's counters fit in `{}`\n",
            index.dropped, index.created, request.counters
        ));
    }
    for skipped in &report.skipped {
        // A source key may be as large as a document: one terminal line each (--json has it whole).
        out.push_str(&format!(
            "  skipped {}: {}\n",
            mongo_seq_core::ejson::truncate_to(&Value::to_string(&skipped.source), 200),
            skipped.reason
        ));
    }
    out
}
