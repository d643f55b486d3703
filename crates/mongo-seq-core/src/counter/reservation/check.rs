//! The conflict path of a [`Reservation`]: the `findOne` after a refused update and what
//! follows it (the definition checked or recorded, the room, the legacy double's
//! compare-and-set, the insert of a missing counter); see the parent module's docs.

use super::*;

impl ReservationMachine {
    /// Sets a counter stored as an integral double (`stored`, read as `last`) to `last + n·step`
    /// as an int64, only while it still holds `stored` (the value the room was checked against).
    fn compare_and_increment(
        &mut self,
        stored: &Value,
        last: i64,
    ) -> Result<Step<ReservedRange>, SeqError> {
        self.retries.bump("reserve", &self.request.counter_id)?;
        let next = last
            .checked_add(self.increment()?)
            .ok_or_else(|| SeqError::overflow(format!("counter {last} + {}", self.count)))?;
        let mut filter = self.spec.id_filter(self.counter_id());
        let mut unchanged = Map::new();
        unchanged.insert("$eq".to_owned(), stored.clone());
        unchanged.insert("$not".to_owned(), not_an_array());
        filter.insert(
            self.spec.counter_field().to_owned(),
            Value::Object(unchanged),
        );
        filter.extend(self.request.extra_filter.clone());
        // A write that sets the counter records the definition too.
        self.recording = true;
        self.add_definition_condition(&mut filter);
        let mut set = self.set_fields(true);
        set.insert(self.spec.counter_field().to_owned(), ejson::long(next));
        let mut update = Map::new();
        update.insert("$set".to_owned(), Value::Object(set));
        self.phase = Phase::CompareAndIncrement;
        Ok(Step::Command(Command::FindOneAndUpdate {
            collection: Collection::Counters,
            filter: Value::Object(filter),
            update: Value::Object(update),
            options: UpdateOptions {
                upsert: false,
                return_document: ReturnDocument::After,
            },
        }))
    }

    pub(super) fn on_compare_and_increment(
        &mut self,
        reply: Reply,
    ) -> Result<Step<ReservedRange>, SeqError> {
        match reply {
            Reply::Document { document } => self.reserved(&document),
            // Changed since we read it: read it again.
            Reply::None => {
                self.phase = Phase::Check;
                Ok(Step::Command(self.check_command()))
            }
            other => Err(unexpected(&other, "findOneAndUpdate")),
        }
    }

    pub(super) fn on_check(&mut self, reply: Reply) -> Result<Step<ReservedRange>, SeqError> {
        match reply {
            Reply::Document { document } => {
                // Ours or none: a counter the digest did not admit is recorded from now on.
                let unrecorded = match self.checked_definition() {
                    Some(definition) => {
                        definition.check(self.counter_id(), &document)?;
                        !self.recording && !definition.digest_recorded(&document)
                    }
                    None => false,
                };
                self.recording |= unrecorded;
                let last = read_spec_counter(&self.spec, &document, self.counter_id())?;
                let last = self.spec.check_counter(self.counter_id(), last)?;
                let legacy_double = document
                    .get(self.spec.counter_field())
                    .filter(|seq| ejson::is_double(seq));
                let available = self.spec.available_after(last);
                if available >= self.count {
                    if let Some(stored) = legacy_double {
                        return self.compare_and_increment(stored, last);
                    }
                    if unrecorded {
                        return self.restart(); // the digest refused it: record it
                    }
                    if !self.request.extra_filter.is_empty() {
                        return Err(SeqError::ConditionNotMet {
                            counter_id: self.request.counter_id.clone(),
                        });
                    }
                    self.restart() // the counter moved between our update and find
                } else if available >= self.min_count {
                    self.count = available;
                    match legacy_double {
                        Some(stored) => self.compare_and_increment(stored, last),
                        None => self.restart(),
                    }
                } else {
                    Err(self.refused(Some(last)))
                }
            }
            Reply::None => {
                let initial = self.spec.initial_counter();
                let count = self.count.min(self.spec.available_after(initial));
                if count < self.min_count {
                    return Err(self.refused(None));
                }
                self.count = count;
                let offset = i64::try_from(count)
                    .ok()
                    .and_then(|c| c.checked_mul(self.spec.step()))
                    .and_then(|inc| initial.checked_add(inc))
                    .ok_or_else(|| SeqError::overflow("initial counter value"))?;
                let range = ReservedRange::ending_at(offset, self.spec.step(), count)?;
                let mut document = self.spec.id_filter(self.counter_id());
                document.insert(self.spec.counter_field().to_owned(), ejson::long(offset));
                document.extend(self.set_fields(true));
                self.phase = Phase::Insert(range);
                Ok(Step::Command(Command::InsertOne {
                    collection: Collection::Counters,
                    document: Value::Object(document),
                }))
            }
            other => Err(unexpected(&other, "findOne")),
        }
    }

    pub(super) fn on_insert(
        &mut self,
        range: ReservedRange,
        reply: Reply,
    ) -> Result<Step<ReservedRange>, SeqError> {
        match reply {
            Reply::Inserted => Ok(Step::Done(range)),
            Reply::DuplicateKey => self.restart(), // created concurrently: take the $inc path
            other => Err(unexpected(&other, "insertOne")),
        }
    }
}
