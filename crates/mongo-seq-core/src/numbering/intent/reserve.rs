//! [`GaplessReserve`]: reserves one number per document id and records the intent in the same
//! update (the diagram is in the parent module's docs).

use super::*;
use crate::numbering::sealing::CounterSeal;

/// Outcome of [`GaplessReserve`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum GaplessReservation {
    /// The numbers are reserved and the intent recorded.
    Reserved {
        range: ReservedRange,
        intent: Intent,
        /// A sealed series' counter seal as the reservation left it (the intent keeps every
        /// other writer of the head away until it is cleared).
        #[serde(skip)]
        seal: Option<CounterSeal>,
    },
    /// An earlier intent is pending: complete it, then reserve again.
    Pending { intent: Intent },
    /// A later lease holder (epoch `counterEpoch`) touched the counter: stop.
    #[serde(rename_all = "camelCase")]
    Fenced { counter_epoch: i64 },
}

#[derive(Debug, Clone)]
enum ReservePhase {
    Read,
    Update(ReservedRange),
    Insert(ReservedRange),
}

/// Reserves one number per id and records the intent atomically; see the module docs.
pub type GaplessReserve = MachinePlan<GaplessReserveMachine>;

/// The state of a [`GaplessReserve`].
#[derive(Debug, Clone)]
pub struct GaplessReserveMachine {
    spec: SequenceSpec,
    counter_id: String,
    ids: Vec<Value>,
    epoch: i64,
    /// Checked on the read that starts the reservation, and in the write's filter.
    definition: CounterDefinition,
    phase: ReservePhase,
    retries: Retries,
}

/// The read of one counter document (`majority`: see [`crate::protocol::concern`]), by its
/// `_id` (the `counterId` option's, when the sequence has one).
pub(crate) fn read_command(spec: &SequenceSpec, counter_id: &str) -> Command {
    Command::FindOne {
        collection: Collection::Counters,
        filter: Value::Object(spec.id_filter(counter_id)),
        options: None,
    }
}

impl GaplessReserve {
    pub fn new(
        spec: &SequenceSpec,
        counter_id: &str,
        ids: Vec<Value>,
        epoch: i64,
    ) -> Result<Self, SeqError> {
        spec.check_counter_id(counter_id)?;
        if ids.is_empty() {
            return Err(SeqError::invalid_argument(
                "ids",
                "at least one document id",
            ));
        }
        // The gapless protocol numbers this counter: its definition says so.
        let spec = spec.clone().with_gapless(true);
        let machine = GaplessReserveMachine {
            definition: CounterDefinition::of(&spec),
            spec: spec.clone(),
            counter_id: counter_id.to_owned(),
            ids,
            epoch,
            phase: ReservePhase::Read,
            retries: Retries::default(),
        };
        Ok(MachinePlan::begin(
            machine,
            Ok(Step::Command(read_command(&spec, counter_id))),
        ))
    }
}

impl GaplessReserveMachine {
    fn count(&self) -> u64 {
        self.ids.len() as u64
    }

    fn intent(&self, range: &ReservedRange) -> Intent {
        Intent {
            first: range.first,
            count: range.count,
            ids: self.ids.clone(),
            epoch: self.epoch,
        }
    }

    /// The range after `last`, or the exhaustion error (whole batch or nothing).
    fn range_after(&self, last: Option<i64>) -> Result<ReservedRange, SeqError> {
        let base = last.unwrap_or_else(|| self.spec.initial_counter());
        if self.spec.available_after(base) < self.count() {
            return Err(self.spec.exhausted(&self.counter_id, last, self.count()));
        }
        let end = i64::try_from(self.count())
            .ok()
            .and_then(|n| n.checked_mul(self.spec.step()))
            .and_then(|inc| base.checked_add(inc))
            .ok_or_else(|| SeqError::overflow("gapless reservation"))?;
        ReservedRange::ending_at(end, self.spec.step(), self.count())
    }

    fn on_read(&mut self, reply: Reply) -> Result<Step<GaplessReservation>, SeqError> {
        match reply {
            Reply::None => {
                let range = self.range_after(None)?;
                let mut document = self.spec.id_filter(&self.counter_id);
                document.insert(
                    self.spec.counter_field().to_owned(),
                    ejson::long(range.last),
                );
                document.insert("epoch".to_owned(), ejson::long(self.epoch));
                document.insert("intent".to_owned(), self.intent(&range).to_document());
                self.definition.add_to(&mut document);
                self.phase = ReservePhase::Insert(range);
                Ok(Step::Command(Command::InsertOne {
                    collection: Collection::Counters,
                    document: Value::Object(document),
                }))
            }
            Reply::Document { document } => {
                self.definition.check(&self.counter_id, &document)?;
                let last = read_spec_counter(&self.spec, &document, &self.counter_id)?;
                // A counter outside the sequence's range would hand out numbers outside it.
                let last = self.spec.check_counter(&self.counter_id, last)?;
                let (counter_epoch, intent) = read_counter_extras(&document, &self.counter_id)?;
                if counter_epoch > self.epoch {
                    return Ok(Step::Done(GaplessReservation::Fenced { counter_epoch }));
                }
                // Mutant (simulator only): reserve over a pending intent.
                let skip = crate::mutants::active(crate::mutants::Mutant::SkipPendingIntent);
                if let Some(intent) = intent.filter(|_| !skip) {
                    return Ok(Step::Done(GaplessReservation::Pending { intent }));
                }
                let range = self.range_after(Some(last))?;
                let mut filter = self.spec.id_filter(&self.counter_id);
                // The counter as read, exactly: its value, and not an array (`seq: 40` alone
                // would also match an array holding 40).
                let stored = document
                    .get(self.spec.counter_field())
                    .cloned()
                    .unwrap_or_else(|| ejson::long(last));
                filter.insert(
                    self.spec.counter_field().to_owned(),
                    json!({ "$eq": stored, "$not": not_an_array() }),
                );
                if !skip {
                    filter.insert("intent".to_owned(), json!({ "$exists": false }));
                }
                filter.insert("epoch".to_owned(), epoch_condition(self.epoch));
                self.definition.add_condition(&mut filter);
                let mut set = Map::new();
                set.insert(
                    self.spec.counter_field().to_owned(),
                    ejson::long(range.last),
                );
                set.insert("epoch".to_owned(), ejson::long(self.epoch));
                set.insert("intent".to_owned(), self.intent(&range).to_document());
                self.definition.add_to(&mut set);
                let update = json!({ "$set": set });
                self.phase = ReservePhase::Update(range);
                Ok(Step::Command(Command::FindOneAndUpdate {
                    collection: Collection::Counters,
                    filter: Value::Object(filter),
                    update,
                    options: UpdateOptions {
                        upsert: false,
                        return_document: ReturnDocument::After,
                    },
                }))
            }
            other => Err(unexpected(&other, "findOne")),
        }
    }

    fn again(&mut self) -> Result<Step<GaplessReservation>, SeqError> {
        self.retries.bump("gapless reserve", &self.counter_id)?;
        self.phase = ReservePhase::Read;
        Ok(Step::Command(read_command(&self.spec, &self.counter_id)))
    }
}

impl Machine for GaplessReserveMachine {
    type Output = GaplessReservation;

    fn on_reply(&mut self, reply: Reply) -> Result<Step<GaplessReservation>, SeqError> {
        match (self.phase.clone(), reply) {
            (ReservePhase::Read, reply) => self.on_read(reply),
            (ReservePhase::Update(range), Reply::Document { document }) => {
                let last = read_spec_counter(&self.spec, &document, &self.counter_id)?;
                if last != range.last {
                    return Err(SeqError::unexpected_reply(
                        "the updated counter does not hold the value just set",
                    ));
                }
                let intent = self.intent(&range);
                let seal = if self.spec.sealed() {
                    Some(CounterSeal::read(&document, &self.counter_id)?)
                } else {
                    None
                };
                Ok(Step::Done(GaplessReservation::Reserved {
                    range,
                    intent,
                    seal,
                }))
            }
            (ReservePhase::Update(_), Reply::None) => self.again(),
            (ReservePhase::Insert(range), Reply::Inserted) => {
                let intent = self.intent(&range);
                // A new counter: it has sealed nothing.
                let seal = self.spec.sealed().then(CounterSeal::default);
                Ok(Step::Done(GaplessReservation::Reserved {
                    range,
                    intent,
                    seal,
                }))
            }
            (ReservePhase::Insert(_), Reply::DuplicateKey) => self.again(),
            (_, other) => Err(unexpected(&other, "a gapless reservation command")),
        }
    }
}
