//! The optional collections of an [`Executor`]: the state collection (leases) and the ledger
//! (voided numbers, deleted documents' numbers).

use mongodb::bson::Document;
use mongodb::Collection;

use super::{Executor, Place};

impl Executor {
    /// `Collection::Leases` is `leases`.
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) {
    /// use mongo_seq::executor::Executor;
    ///
    /// let executor = Executor::new(db.collection("counters")).with_leases(db.collection("leases"));
    /// # let _ = executor;
    /// # }
    /// ```
    #[must_use]
    pub fn with_leases(mut self, leases: Collection<Document>) -> Self {
        self.leases = Some(Place::new(leases));
        self
    }

    /// `Collection::Ledger` is `ledger` (voided numbers, deleted documents' numbers).
    ///
    /// ```no_run
    /// # fn example(db: mongodb::Database) {
    /// use mongo_seq::executor::Executor;
    ///
    /// let executor = Executor::new(db.collection("counters")).with_ledger(db.collection("mongo_seq_ledger"));
    /// # let _ = executor;
    /// # }
    /// ```
    #[must_use]
    pub fn with_ledger(mut self, ledger: Collection<Document>) -> Self {
        self.ledger = Some(Place::new(ledger));
        self
    }
}
