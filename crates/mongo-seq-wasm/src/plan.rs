//! One JS class for every core plan: `start()` and `feed(reply)` return the next step,
//! `{ command }` or `{ done }`, as plain JS values (see `convert`).

use mongo_seq_core::{Plan, Reply};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::args;
use crate::convert::to_js;
use crate::error::IntoJsResult;

/// A core plan with its output type erased to "something serializable".
trait ErasedPlan {
    fn start_js(&self) -> Result<JsValue, JsValue>;
    fn feed_js(&mut self, reply: Reply) -> Result<JsValue, JsValue>;
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
}
