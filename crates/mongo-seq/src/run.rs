//! The one loop that runs a core plan: command → reply → next command, until the plan is done.
//! Every plan of this crate runs here, and so does every plan of the `mongo-seq` sidecar (its
//! lease fence is its [`Execute`] implementation, asked before each write). The npm package's
//! loop is `js/src/run-plan.js`.

use std::future::Future;

use mongo_seq_core::{Command, Note, Plan, Reply, SeqError, Step};

/// What runs a plan's commands: one command at a time, in order. Implemented by this crate over
/// the [`Executor`](crate::executor::Executor), by the sidecar over its `Mongo` interface (with
/// its lease fence), and by tests that script the server's replies.
///
/// ```
/// use mongo_seq::{run_plan, Execute};
/// use mongo_seq_core::{Command, CurrentValue, Reply, SeqError, SequenceSpec};
/// use serde_json::json;
///
/// /// Answers every command with the counter `{ _id: "orders", seq: 41 }`.
/// struct Scripted;
///
/// impl Execute for Scripted {
///     type Error = SeqError;
///     async fn execute(&mut self, _command: Command) -> Result<Reply, SeqError> {
///         Ok(Reply::Document { document: json!({ "_id": "orders", "seq": 41 }) })
///     }
/// }
///
/// # tokio_test_block_on(async {
/// let spec = SequenceSpec::parse(&json!({ "name": "orders" }))?;
/// let state = run_plan(&mut CurrentValue::new(&spec, "orders")?, &mut Scripted).await?;
/// assert_eq!((state.last, state.next), (Some(41), Some(42)));
/// # Ok::<(), SeqError>(()) }).unwrap();
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
pub trait Execute {
    /// What a failed command (or the plan, through `From<SeqError>`) ends the loop with.
    type Error: From<SeqError>;

    /// Runs `command` and returns its reply.
    fn execute(
        &mut self,
        command: Command,
    ) -> impl Future<Output = Result<Reply, Self::Error>> + Send;

    /// A note the plan recorded (for logs and metrics), as it is recorded, also when the plan
    /// then fails. Ignored unless implemented.
    fn note(&mut self, note: Note) {
        let _ = note;
    }
}

/// Runs `plan` to its end through `executor` and returns its output. A core error ends it as
/// `E::Error::from(error)`, keeping its variant.
///
/// Dropping the future stops the loop between commands or during one: the plan is left where
/// it was (see each plan's docs for what a half-run plan leaves on the server; every counter
/// write is one atomic command).
///
/// ```no_run
/// # async fn example(db: mongodb::Database) -> Result<(), mongo_seq::executor::ExecuteError> {
/// use mongo_seq::core::{Command, Reply, SeqError, SequenceSpec, SetNext};
/// use mongo_seq::executor::{ExecuteError, Executor};
/// use mongo_seq::{run_plan, Execute};
///
/// /// Runs the commands with the driver.
/// struct Driver(Executor);
///
/// impl Execute for Driver {
///     type Error = ExecuteError;
///     async fn execute(&mut self, command: Command) -> Result<Reply, ExecuteError> {
///         self.0.execute(command).await
///     }
/// }
///
/// let spec = SequenceSpec::parse(&serde_json::json!({ "name": "orders" }))?;
/// let mut driver = Driver(Executor::new(db.collection("counters")));
/// let outcome = run_plan(&mut SetNext::new(&spec, "orders", 5000, false)?, &mut driver).await?;
/// println!("orders continue at {}", outcome.next);
/// # let _: Option<SeqError> = None;
/// # Ok(()) }
/// ```
pub async fn run_plan<P, E>(plan: &mut P, executor: &mut E) -> Result<P::Output, E::Error>
where
    P: Plan + Send,
    E: Execute + Send,
{
    for note in plan.drain_notes() {
        executor.note(note);
    }
    // Each command is handed over, not copied: the plan keeps what reading its reply needs.
    let mut step = plan.take_step();
    loop {
        match step? {
            Step::Done(output) => return Ok(output),
            Step::Command(command) => {
                let reply = executor.execute(command).await?;
                step = plan.feed_and_take(reply);
                for note in plan.drain_notes() {
                    executor.note(note);
                }
            }
        }
    }
}
