//! Hooks and message queues: the points where an application steers a run.
//!
//! `before_tool_call`, `after_tool_call` and `transform_context` may be
//! plain functions ([`BeforeToolCallHook::new`], …), called on the loop's
//! task, or return futures ([`BeforeToolCallHook::new_async`], …), which
//! the loop awaits as Pi awaits its async hooks (an approval a human
//! answers, a compaction that calls a model). The futures are `'static`
//! (they own what they need of the call) and [`MaybeSend`].

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::future::Future;

use serde_json::{Map, Value};

use super::maybe_send::{BoxFuture, MaybeSend, MaybeSync};
use super::tool::ToolOutput;
use crate::message::{
    AssistantMessage, Context, Message, SharedMessage, ToolCall, ToolResultMessage,
};
use crate::model::ApiKey;

/// What `before_tool_call` decides about a call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolCallDecision {
    /// Run the call as it is.
    Allow,
    /// Do not run it; its result is an error with this text.
    Block(String),
    /// Run it with these arguments instead (validated like the model's).
    Rewrite(Map<String, Value>),
}

/// A hook's answer: ready now (a plain function) or a future (an async
/// hook).
pub(crate) enum HookCall<T> {
    Ready(T),
    Pending(BoxFuture<'static, T>),
}

impl<T> HookCall<T> {
    pub(crate) async fn get(self) -> T {
        match self {
            Self::Ready(value) => value,
            Self::Pending(future) => future.await,
        }
    }
}

trait BeforeFn: MaybeSend + MaybeSync {
    fn call(&self, call: &ToolCall) -> HookCall<ToolCallDecision>;
}
trait AfterFn: MaybeSend + MaybeSync {
    fn call(&self, call: &ToolCall, output: ToolOutput) -> HookCall<ToolOutput>;
}
trait TransformFn: MaybeSend + MaybeSync {
    /// `Some`: the future of the transformed context (the copy was moved
    /// into it); `None`: transformed in place.
    fn call(&self, context: &mut Context) -> Option<BoxFuture<'static, Context>>;
}

struct Plain<F>(F);
struct Async<F>(F);

impl<F: Fn(&ToolCall) -> ToolCallDecision + MaybeSend + MaybeSync> BeforeFn for Plain<F> {
    fn call(&self, call: &ToolCall) -> HookCall<ToolCallDecision> {
        HookCall::Ready((self.0)(call))
    }
}
impl<F, Fut> BeforeFn for Async<F>
where
    F: Fn(&ToolCall) -> Fut + MaybeSend + MaybeSync,
    Fut: Future<Output = ToolCallDecision> + MaybeSend + 'static,
{
    fn call(&self, call: &ToolCall) -> HookCall<ToolCallDecision> {
        HookCall::Pending(Box::pin((self.0)(call)))
    }
}
impl<F: Fn(&ToolCall, ToolOutput) -> ToolOutput + MaybeSend + MaybeSync> AfterFn for Plain<F> {
    fn call(&self, call: &ToolCall, output: ToolOutput) -> HookCall<ToolOutput> {
        HookCall::Ready((self.0)(call, output))
    }
}
impl<F, Fut> AfterFn for Async<F>
where
    F: Fn(&ToolCall, ToolOutput) -> Fut + MaybeSend + MaybeSync,
    Fut: Future<Output = ToolOutput> + MaybeSend + 'static,
{
    fn call(&self, call: &ToolCall, output: ToolOutput) -> HookCall<ToolOutput> {
        HookCall::Pending(Box::pin((self.0)(call, output)))
    }
}
impl<F: Fn(&mut Context) + MaybeSend + MaybeSync> TransformFn for Plain<F> {
    fn call(&self, context: &mut Context) -> Option<BoxFuture<'static, Context>> {
        (self.0)(context);
        None
    }
}
impl<F, Fut> TransformFn for Async<F>
where
    F: Fn(Context) -> Fut + MaybeSend + MaybeSync,
    Fut: Future<Output = Context> + MaybeSend + 'static,
{
    fn call(&self, context: &mut Context) -> Option<BoxFuture<'static, Context>> {
        Some(Box::pin((self.0)(core::mem::take(context))))
    }
}

/// Called before each call runs (after the tool is found): allows, blocks
/// or rewrites it.
///
/// ```
/// use agentstream::agent::{AgentHooks, BeforeToolCallHook, ToolCallDecision};
///
/// // A plain function…
/// let plain = BeforeToolCallHook::new(|call| {
///     if call.name == "rm" { ToolCallDecision::Block("not allowed".into()) }
///     else { ToolCallDecision::Allow }
/// });
/// // …or one that returns a future (a human approves).
/// let asking = BeforeToolCallHook::new_async(|call| {
///     let name = call.name.clone();
///     async move {
///         if name == "rm" { ToolCallDecision::Block("denied".into()) } else { ToolCallDecision::Allow }
///     }
/// });
/// let hooks = AgentHooks::default().with_before_tool_call(asking);
/// # let _ = plain;
/// # let _ = hooks;
/// ```
#[derive(Clone)]
pub struct BeforeToolCallHook(Arc<dyn BeforeFn>);

impl BeforeToolCallHook {
    /// A hook that is a plain function.
    pub fn new(
        f: impl Fn(&ToolCall) -> ToolCallDecision + MaybeSend + MaybeSync + 'static,
    ) -> Self {
        Self(Arc::new(Plain(f)))
    }

    /// A hook that returns a future, awaited before the call runs.
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(&ToolCall) -> Fut + MaybeSend + MaybeSync + 'static,
        Fut: Future<Output = ToolCallDecision> + MaybeSend + 'static,
    {
        Self(Arc::new(Async(f)))
    }

    pub(crate) fn call(&self, call: &ToolCall) -> HookCall<ToolCallDecision> {
        self.0.call(call)
    }
}

/// Called with each call's output (of a tool that ran); returns the
/// output to keep.
#[derive(Clone)]
pub struct AfterToolCallHook(Arc<dyn AfterFn>);

impl AfterToolCallHook {
    /// A hook that is a plain function.
    pub fn new(
        f: impl Fn(&ToolCall, ToolOutput) -> ToolOutput + MaybeSend + MaybeSync + 'static,
    ) -> Self {
        Self(Arc::new(Plain(f)))
    }

    /// A hook that returns a future, awaited before the call's end is
    /// reported.
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(&ToolCall, ToolOutput) -> Fut + MaybeSend + MaybeSync + 'static,
        Fut: Future<Output = ToolOutput> + MaybeSend + 'static,
    {
        Self(Arc::new(Async(f)))
    }

    pub(crate) fn call(&self, call: &ToolCall, output: ToolOutput) -> HookCall<ToolOutput> {
        self.0.call(call, output)
    }
}

/// Called on a copy of the context before every model call, for pruning or
/// compaction; the run's history is not changed.
#[derive(Clone)]
pub struct TransformContextHook(Arc<dyn TransformFn>);

impl TransformContextHook {
    /// A hook that is a plain function, changing the copy in place.
    pub fn new(f: impl Fn(&mut Context) + MaybeSend + MaybeSync + 'static) -> Self {
        Self(Arc::new(Plain(f)))
    }

    /// A hook that returns a future of the context to send (a compaction
    /// that calls a model, for example).
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn(Context) -> Fut + MaybeSend + MaybeSync + 'static,
        Fut: Future<Output = Context> + MaybeSend + 'static,
    {
        Self(Arc::new(Async(f)))
    }

    /// Transforms `context` (a copy of the run's).
    pub(crate) async fn apply(&self, context: &mut Context) {
        if let Some(future) = self.0.call(context) {
            *context = future.await;
        }
    }
}

/// What `should_stop_after_turn` is shown of a finished turn (Pi's
/// `ShouldStopAfterTurnContext`).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct TurnSummary<'a> {
    /// The turn's assistant message.
    pub message: &'a AssistantMessage,
    /// Its calls' results, in call order.
    pub tool_results: &'a [Arc<ToolResultMessage>],
    /// The history as the next model call would see it (before any
    /// steering message is added).
    pub context: &'a Context,
    /// The messages the run added so far, prompts included.
    pub new_messages: &'a [SharedMessage],
}

/// Called after every turn that did not fail, right after its `turn_end`
/// (Pi's `shouldStopAfterTurn`): `true` ends the run there, with
/// `agent_end`, before steering or follow-up messages are polled; the
/// outcome's stop is [`AgentStop::StoppedAfterTurn`](super::AgentStop).
/// Pi's hook is async; this one is a plain function (it decides from what
/// it is shown).
///
/// ```
/// use agentstream::agent::{AgentHooks, StopAfterTurnHook};
///
/// // Stop once a turn produced a result of the `submit` tool.
/// let hook = StopAfterTurnHook::new(|turn| {
///     turn.tool_results.iter().any(|result| result.tool_name == "submit")
/// });
/// let hooks = AgentHooks::default().with_should_stop_after_turn(hook);
/// # let _ = hooks;
/// ```
#[derive(Clone)]
pub struct StopAfterTurnHook(Arc<dyn Fn(&TurnSummary<'_>) -> bool + Send + Sync>);

impl StopAfterTurnHook {
    /// A hook of this function.
    pub fn new(f: impl Fn(&TurnSummary<'_>) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    pub(crate) fn call(&self, turn: &TurnSummary<'_>) -> bool {
        (self.0)(turn)
    }
}

trait KeyFn: MaybeSend + MaybeSync {
    fn call(&self) -> HookCall<Option<ApiKey>>;
}
impl<F: Fn() -> Option<ApiKey> + MaybeSend + MaybeSync> KeyFn for Plain<F> {
    fn call(&self) -> HookCall<Option<ApiKey>> {
        HookCall::Ready((self.0)())
    }
}
impl<F, Fut> KeyFn for Async<F>
where
    F: Fn() -> Fut + MaybeSend + MaybeSync,
    Fut: Future<Output = Option<ApiKey>> + MaybeSend + 'static,
{
    fn call(&self) -> HookCall<Option<ApiKey>> {
        HookCall::Pending(Box::pin((self.0)()))
    }
}

/// Resolves the API key before every model call (Pi's `getApiKey`, for
/// short-lived tokens): the key it gives becomes that call's
/// [`StreamOptions::api_key`](crate::model::StreamOptions::api_key), which
/// the wire crate's models use in place of their configured key. `None`
/// (or an empty key) keeps the run's own
/// [`stream`](super::AgentOptions::stream) options' key, or else the
/// model's, as Pi falls back to its `apiKey`. Pi passes the model's
/// provider name; here the hook is the application's for one model and
/// knows it.
///
/// ```
/// use agentstream::agent::{AgentHooks, ApiKeyHook};
/// use agentstream::model::ApiKey;
///
/// let refresh = ApiKeyHook::new_async(|| async { Some(ApiKey::from("fresh-token")) });
/// let hooks = AgentHooks::default().with_api_key(refresh);
/// # let _ = hooks;
/// ```
#[derive(Clone)]
pub struct ApiKeyHook(Arc<dyn KeyFn>);

impl ApiKeyHook {
    /// A hook that is a plain function.
    pub fn new(f: impl Fn() -> Option<ApiKey> + MaybeSend + MaybeSync + 'static) -> Self {
        Self(Arc::new(Plain(f)))
    }

    /// A hook that returns a future (a token refresh), awaited before
    /// each model call.
    pub fn new_async<F, Fut>(f: F) -> Self
    where
        F: Fn() -> Fut + MaybeSend + MaybeSync + 'static,
        Fut: Future<Output = Option<ApiKey>> + MaybeSend + 'static,
    {
        Self(Arc::new(Async(f)))
    }

    /// The key for the next call; `None` for none or an empty one.
    pub(crate) async fn resolve(&self) -> Option<ApiKey> {
        self.0
            .call()
            .get()
            .await
            .filter(|key| !key.as_str().is_empty())
    }
}

/// Drains messages queued by the application (steering or follow-up).
pub type MessageSource = Arc<dyn Fn() -> Vec<Message> + Send + Sync>;

/// When steering messages land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SteeringMode {
    /// After the current tool batch has finished, at the start of the next
    /// turn (Pi 0.73).
    #[default]
    AfterBatch,
    /// As soon as a call finishes: the remaining calls of the turn are
    /// skipped with error results reading [`SKIPPED_MESSAGE`] (Pi 0.58).
    /// The calls then run one after the other, since a queued message can
    /// only skip calls that have not started.
    Interrupt,
}

/// The result text of a call skipped by an interrupting steering message.
pub const SKIPPED_MESSAGE: &str = "Skipped due to queued user message.";

/// The hooks and queues of a run; every one is optional.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct AgentHooks {
    /// Allows, blocks or rewrites a call before it runs.
    pub before_tool_call: Option<BeforeToolCallHook>,
    /// Rewrites a call's output.
    pub after_tool_call: Option<AfterToolCallHook>,
    /// Transforms the context sent to the model.
    pub transform_context: Option<TransformContextHook>,
    /// Messages that steer the running agent.
    pub steering: Option<MessageSource>,
    /// Messages that start a new turn when the run would otherwise end.
    pub follow_up: Option<MessageSource>,
    /// When steering messages land.
    pub steering_mode: SteeringMode,
    /// Ends the run after a turn (Pi's `shouldStopAfterTurn`).
    pub should_stop_after_turn: Option<StopAfterTurnHook>,
    /// Resolves the API key before every model call (Pi's `getApiKey`).
    pub api_key: Option<ApiKeyHook>,
}

impl AgentHooks {
    /// The same hooks with `before_tool_call` set.
    pub fn with_before_tool_call(mut self, hook: BeforeToolCallHook) -> Self {
        self.before_tool_call = Some(hook);
        self
    }

    /// The same hooks with `after_tool_call` set.
    pub fn with_after_tool_call(mut self, hook: AfterToolCallHook) -> Self {
        self.after_tool_call = Some(hook);
        self
    }

    /// The same hooks with `transform_context` set.
    pub fn with_transform_context(mut self, hook: TransformContextHook) -> Self {
        self.transform_context = Some(hook);
        self
    }

    /// The same hooks with the steering queue set.
    pub fn with_steering(mut self, source: MessageSource) -> Self {
        self.steering = Some(source);
        self
    }

    /// The same hooks with the follow-up queue set.
    pub fn with_follow_up(mut self, source: MessageSource) -> Self {
        self.follow_up = Some(source);
        self
    }

    /// The same hooks with `should_stop_after_turn` set.
    pub fn with_should_stop_after_turn(mut self, hook: StopAfterTurnHook) -> Self {
        self.should_stop_after_turn = Some(hook);
        self
    }

    /// The same hooks with the `api_key` resolver set.
    pub fn with_api_key(mut self, hook: ApiKeyHook) -> Self {
        self.api_key = Some(hook);
        self
    }

    /// The same hooks with `steering_mode` set.
    pub fn with_steering_mode(mut self, mode: SteeringMode) -> Self {
        self.steering_mode = mode;
        self
    }

    pub(crate) fn steering(&self) -> Vec<Message> {
        self.steering.as_ref().map(|f| f()).unwrap_or_default()
    }

    pub(crate) fn follow_up(&self) -> Vec<Message> {
        self.follow_up.as_ref().map(|f| f()).unwrap_or_default()
    }
}

impl core::fmt::Debug for AgentHooks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AgentHooks")
            .field("before_tool_call", &self.before_tool_call.is_some())
            .field("after_tool_call", &self.after_tool_call.is_some())
            .field("transform_context", &self.transform_context.is_some())
            .field("steering", &self.steering.is_some())
            .field("follow_up", &self.follow_up.is_some())
            .field("steering_mode", &self.steering_mode)
            .field(
                "should_stop_after_turn",
                &self.should_stop_after_turn.is_some(),
            )
            .field("api_key", &self.api_key.is_some())
            .finish()
    }
}

macro_rules! opaque_debug {
    ($($name:ident),*) => {$(
        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }
    )*};
}
opaque_debug!(
    BeforeToolCallHook,
    AfterToolCallHook,
    TransformContextHook,
    StopAfterTurnHook,
    ApiKeyHook
);
