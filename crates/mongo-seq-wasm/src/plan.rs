//! One JS class for every core plan: `start()` and `feed(reply)` return the next step,
//! `{ command }` or `{ done }`, as plain JS values (see `convert`). The package's own loop
//! uses the text forms, `commandJson()` and `feedJson(reply)`: the command as canonical
//! Extended JSON text (which the driver's EJSON parser turns into BSON values in one pass)
//! and the reply as JSON text, so no document is walked property by property across the
//! boundary.

use mongo_seq_core::{Command, Plan, Reply, SeqError, Step};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::args;
use crate::convert::json_to_js;
use crate::error::{to_js_error, IntoJsResult};

/// A step with the plan's output already as JSON text: what every method of [`JsPlan`] needs,
/// so only [`ErasedPlan`]'s few methods exist once per plan type.
// Handed over, not kept (as the core's `Step`): boxing the command would allocate per command.
#[allow(clippy::large_enum_variant)]
enum ErasedStep {
    Command(Command),
    Done(String),
}

/// A core plan with its output type erased to its JSON text.
trait ErasedPlan {
    fn step_erased(&self) -> Result<ErasedStep, SeqError>;
    fn feed_erased(&mut self, reply: Reply) -> Result<ErasedStep, SeqError>;
    /// The command the plan waits for, borrowed where it is kept (no copy).
    fn pending(&self) -> Option<&Command>;
}

impl<P> ErasedPlan for P
where
    P: Plan,
    P::Output: Serialize,
{
    fn step_erased(&self) -> Result<ErasedStep, SeqError> {
        self.current_step().map(erase)
    }

    fn feed_erased(&mut self, reply: Reply) -> Result<ErasedStep, SeqError> {
        self.feed(reply).map(erase)
    }

    fn pending(&self) -> Option<&Command> {
        self.pending_command()
    }
}

fn erase<T: Serialize>(step: Step<T>) -> ErasedStep {
    match step {
        Step::Command(command) => ErasedStep::Command(command),
        // Outputs are plain data (maps with string keys, integers, strings): this cannot fail.
        Step::Done(output) => ErasedStep::Done(serde_json::to_string(&output).unwrap_or_default()),
    }
}

/// A command as JSON text (commands are plain data: serializing cannot fail).
fn text_of(command: &Command) -> String {
    serde_json::to_string(command).unwrap_or_default()
}

impl ErasedStep {
    /// `{ command }` or `{ done }` as a JS value.
    fn to_js(&self) -> JsValue {
        let (key, value) = match self {
            Self::Command(command) => ("command", command.to_json()),
            Self::Done(text) => ("done", serde_json::from_str(text).unwrap_or(Value::Null)),
        };
        json_to_js(&mongo_seq_core::ejson::object([(key, value)]))
    }

    /// The command as JSON text (commands are plain data: serializing cannot fail), or `None`
    /// once the plan is done.
    fn command_text(self) -> Option<String> {
        match self {
            Self::Command(command) => Some(text_of(&command)),
            Self::Done(_) => None,
        }
    }
}

/// A multi-step operation of the core. The caller runs each command with its driver and
/// feeds the reply back until the step is `{ done }`.
#[wasm_bindgen(js_name = Plan)]
pub struct JsPlan(Box<dyn ErasedPlan>);

impl JsPlan {
    pub fn wrap<P>(plan: P) -> Self
    where
        P: Plan + 'static,
        P::Output: Serialize,
    {
        Self(Box::new(plan))
    }
}

#[wasm_bindgen(js_class = Plan)]
impl JsPlan {
    /// The current step, as often as asked: the command waiting for its reply (the first one
    /// before any reply), or the result (the error) once finished. The core's
    /// `Plan::current_step`; `start` in JS, the name the package has always exported.
    #[wasm_bindgen(unchecked_return_type = "PlanStep")]
    pub fn start(&self) -> Result<JsValue, JsValue> {
        Ok(self.0.step_erased().js()?.to_js())
    }

    /// Feeds the reply to the last command; returns the next step.
    #[wasm_bindgen(unchecked_return_type = "PlanStep")]
    pub fn feed(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Reply")] reply: JsValue,
    ) -> Result<JsValue, JsValue> {
        let reply = Reply::from_json(&args::reply(&reply)?).js()?;
        Ok(self.0.feed_erased(reply).js()?.to_js())
    }

    /// The pending command as canonical Extended JSON text, or `undefined` once the plan is
    /// done (`start()` then gives `{ done }`); throws the error that ended it.
    #[wasm_bindgen(js_name = commandJson)]
    pub fn command_json(&self) -> Result<Option<String>, JsValue> {
        match self.0.pending() {
            Some(command) => Ok(Some(text_of(command))),
            None => Ok(self.0.step_erased().js()?.command_text()),
        }
    }

    /// `feed` with the reply as JSON text; returns the next command as text, or `undefined`
    /// once the plan is done.
    #[wasm_bindgen(js_name = feedJson)]
    pub fn feed_json(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] reply: JsValue,
    ) -> Result<Option<String>, JsValue> {
        let text = args::string("reply", &reply)?;
        let raw: Value = serde_json::from_str(&text).map_err(|error| {
            to_js_error(&SeqError::UnexpectedReply {
                reason: format!(
                    "the reply is not JSON text (line {}, column {})",
                    error.line(),
                    error.column()
                ),
            })
        })?;
        let reply = Reply::from_json(&raw).js()?;
        Ok(self.0.feed_erased(reply).js()?.command_text())
    }

    /// Whether the plan handles a duplicate-key error (11000) its pending command got, from
    /// what the server said about the index (`errmsg`; `keyPattern` when the server sent one):
    /// then feed it the `duplicateKey` reply (`insertDocuments`: the write result). `false`:
    /// the error is the caller's own (a unique index of the application's that does not hold
    /// the field the command numbers): throw the driver's error as it is.
    #[wasm_bindgen(js_name = handlesDuplicateKey)]
    pub fn handles_duplicate_key(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string | undefined")] errmsg: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Record<string, unknown> | undefined")]
        key_pattern: JsValue,
    ) -> Result<bool, JsValue> {
        let errmsg = args::optional_string("errmsg", &errmsg)?;
        let key_pattern = args::document("keyPattern", &key_pattern)?;
        let handles = |command: &Command| {
            command.plan_handles_duplicate_key(errmsg.as_deref(), key_pattern.as_ref())
        };
        Ok(match self.0.pending() {
            Some(command) => handles(command),
            None => match self.0.step_erased().js()? {
                ErasedStep::Command(command) => handles(&command),
                ErasedStep::Done(_) => false,
            },
        })
    }
}
