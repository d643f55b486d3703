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
use crate::convert::to_js;
use crate::error::{to_js_error, IntoJsResult};

/// A core plan with its output type erased to "something serializable".
trait ErasedPlan {
    fn start_js(&self) -> Result<JsValue, JsValue>;
    fn feed_js(&mut self, reply: Reply) -> Result<JsValue, JsValue>;
    fn start_text(&self) -> Result<Option<String>, SeqError>;
    fn feed_command(&mut self, reply: Reply) -> Result<Option<Command>, SeqError>;
}

impl<P> ErasedPlan for P
where
    P: Plan,
    P::Output: Serialize,
{
    fn start_js(&self) -> Result<JsValue, JsValue> {
        to_js(&self.start().js()?)
    }

    fn feed_js(&mut self, reply: Reply) -> Result<JsValue, JsValue> {
        to_js(&self.feed(reply).js()?)
    }

    fn start_text(&self) -> Result<Option<String>, SeqError> {
        // Serialized where it is kept: no copy of the command.
        match self.pending_command() {
            Some(command) => Ok(Some(text_of(command))),
            None => self
                .start()
                .map(|step| command_of(step).as_ref().map(text_of)),
        }
    }

    fn feed_command(&mut self, reply: Reply) -> Result<Option<Command>, SeqError> {
        self.feed(reply).map(command_of)
    }
}

fn command_of<T>(step: Step<T>) -> Option<Command> {
    match step {
        Step::Command(command) => Some(command),
        Step::Done(_) => None,
    }
}

/// A command as JSON text (commands are plain data: serializing cannot fail).
fn text_of(command: &Command) -> String {
    serde_json::to_string(command).unwrap_or_default()
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
    /// The pending step: the first command, or the result/error once finished.
    #[wasm_bindgen(unchecked_return_type = "PlanStep")]
    pub fn start(&self) -> Result<JsValue, JsValue> {
        self.0.start_js()
    }

    /// Feeds the reply to the last command; returns the next step.
    #[wasm_bindgen(unchecked_return_type = "PlanStep")]
    pub fn feed(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Reply")] reply: JsValue,
    ) -> Result<JsValue, JsValue> {
        let reply = Reply::from_json(&args::reply(&reply)?).js()?;
        self.0.feed_js(reply)
    }

    /// The pending command as canonical Extended JSON text, or `undefined` once the plan is
    /// done (`start()` then gives `{ done }`); throws the error that ended it.
    #[wasm_bindgen(js_name = commandJson)]
    pub fn command_json(&self) -> Result<Option<String>, JsValue> {
        self.0.start_text().js()
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
        Ok(self.0.feed_command(reply).js()?.as_ref().map(text_of))
    }
}
