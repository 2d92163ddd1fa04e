//! A borrowed, read-only view of one InsightsEvent line: the union of every member the reducer
//! reads, whatever the event type. Members are only ever InsightsEvent fields (see
//! `src/event.rs`), never a provider's wire fields; `raw` is not read at all, and of
//! `extensions` only the few keys [`Exts`] names: AceClaw's, on AceClaw's events only, and
//! Codex's mark of raw reasoning, on Codex's `text` and `stream_delta` events only.
//! Arbitrary JSON (tool input, output, plan entries, …) stays unparsed as `&RawValue` until the
//! reducer decides to keep it.

use super::handover::{Cargo, Carry, Unpack};
use crate::event::{Event, Pairs};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

pub type S<'a> = Option<Cow<'a, str>>;
/// A JSON value as written: borrowed from the line, or serialized from an event handed over
/// without a line (see `from_event.rs`).
pub type J<'a> = Option<Cow<'a, RawValue>>;

/// The type a member is read as: its field's own, or the one after `=>`.
macro_rules! read_as {
    ($ty:ty) => {
        $ty
    };
    ($ty:ty, $via:ty) => {
        $via
    };
}

/// Declares [`Ev`], one field per member (`"name" field: Type`, or `=> Via` to read it as
/// `Via` and convert), and its reader: [`Field`], [`KEYS`] and `Ev::member`.
macro_rules! view {
    ($($key:literal $field:ident: $ty:ty $(=> $via:ty)?,)*) => {
        #[derive(Debug, Default)]
        pub struct Ev<'a> {
            $(pub $field: $ty,)*
            /// The line itself (not a member): kept for events parked until their session is
            /// known.
            pub line: &'a str,
            /// The event, when it was handed over without a line: its line is written only
            /// if the event is parked ([`Ev::line_json`]).
            pub source: Option<&'a Event<'a>>,
        }

        /// A member the view reads.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Field {
            $($field,)*
        }

        /// Every field, in declaration order, and its member name.
        const FIELDS: &[Field] = &[$(Field::$field,)*];
        const KEYS: &[&str] = &[$($key,)*];

        impl<'a> Ev<'a> {
            /// Reads the value of member `f`.
            fn member<A: MapAccess<'a>>(&mut self, f: Field, map: &mut A) -> Result<(), A::Error> {
                match f {
                    $(Field::$field => {
                        self.$field = map.next_value::<read_as!($ty $(, $via)?)>()?.into();
                    })*
                }
                Ok(())
            }

            /// Packs the members that are there: which ones (two words), then each one.
            pub(super) fn pack(&self, c: &mut Cargo) {
                let mut there = 0u128;
                $(there |= u128::from(Carry::is_set(&self.$field)) << (Field::$field as u32);)*
                there.put(c);
                while there != 0 {
                    let i = there.trailing_zeros() as usize;
                    there &= there - 1;
                    match FIELDS.get(i) {
                        $(Some(Field::$field) => Carry::put_set(&self.$field, c),)*
                        None => {}
                    }
                }
            }

            /// The next view [`Ev::pack`] packed (without its line) into `self`, which is
            /// empty; which members it set, or `None` if the words do not read as a view.
            pub(super) fn unpack(&mut self, r: &mut Unpack<'a>) -> Option<u128> {
                let there = u128::take(r)?;
                let mut left = there;
                while left != 0 {
                    let f = *FIELDS.get(left.trailing_zeros() as usize)?;
                    left &= left - 1;
                    match f {
                        $(Field::$field => self.$field = Carry::take_set(r)?,)*
                    }
                }
                Some(there)
            }

            /// Sets the members `there` says back to their defaults, and `seq`, the line and
            /// the source.
            pub(super) fn empty(&mut self, mut there: u128) {
                there |= 1 << (Field::seq as u32);
                while there != 0 {
                    let i = there.trailing_zeros() as usize;
                    there &= there - 1;
                    match FIELDS.get(i) {
                        $(Some(Field::$field) => self.$field = Default::default(),)*
                        None => {}
                    }
                }
                self.line = "";
                self.source = None;
            }
        }
    };
}

view! {
    "event" event: Cow<'a, str> => Str<'a>,
    "id" id: S<'a> => OptStr<'a>,
    "seq" seq: Option<u64>,
    "timestamp" timestamp: S<'a> => OptStr<'a>,
    "provider" provider: S<'a> => OptStr<'a>,
    "sessionId" session_id: S<'a> => OptStr<'a>,
    "turnId" turn_id: S<'a> => OptStr<'a>,

    // Members several types share.
    "text" text: S<'a> => OptStr<'a>,
    "kind" kind: S<'a> => OptStr<'a>,
    "parentCallId" parent_call_id: S<'a> => OptStr<'a>,
    "model" model: S<'a> => OptStr<'a>,
    "messageId" message_id: S<'a> => OptStr<'a>,
    "callId" call_id: S<'a> => OptStr<'a>,
    "toolName" tool_name: S<'a> => OptStr<'a>,
    "title" title: S<'a> => OptStr<'a>,
    "status" status: S<'a> => OptStr<'a>,
    "message" message: S<'a> => OptStr<'a>,
    "summary" summary: S<'a> => OptStr<'a>,
    "description" description: S<'a> => OptStr<'a>,
    "agentType" agent_type: S<'a> => OptStr<'a>,
    "requestId" request_id: S<'a> => OptStr<'a>,
    "toolUseId" tool_use_id: S<'a> => OptStr<'a>,
    "input" input: J<'a> => OptRaw<'a>,
    "output" output: J<'a> => OptRaw<'a>,
    "content" content: J<'a> => OptRaw<'a>,
    "locations" locations: Option<Vec<Cow<'a, str>>>,
    "isError" is_error: bool,
    "durationMs" duration_ms: Option<u64>,
    "usage" usage: J<'a> => OptRaw<'a>,

    // user_input
    "isSynthetic" is_synthetic: bool,
    "images" images: Option<u64> => OptCount,

    // tool_invocation
    "mcpServer" mcp_server: S<'a> => OptStr<'a>,
    "mcpTool" mcp_tool: S<'a> => OptStr<'a>,

    // session_init
    "reasoningEffort" reasoning_effort: S<'a> => OptStr<'a>,
    "cwd" cwd: S<'a> => OptStr<'a>,
    "availableTools" available_tools: J<'a> => OptRaw<'a>,
    "mcpServers" mcp_servers: J<'a> => OptRaw<'a>,
    "permissionMode" permission_mode: S<'a> => OptStr<'a>,
    "account" account: J<'a> => OptRaw<'a>,
    "slashCommands" slash_commands: J<'a> => OptRaw<'a>,
    "availableModels" available_models: J<'a> => OptRaw<'a>,
    "version" version: S<'a> => OptStr<'a>,
    "agents" agents: J<'a> => OptRaw<'a>,
    "skills" skills: J<'a> => OptRaw<'a>,

    // turn_complete
    "subtype" subtype: S<'a> => OptStr<'a>,
    "errors" errors: Option<Vec<String>>,
    "costUsd" cost_usd: Option<f64>,
    "durationApiMs" duration_api_ms: Option<u64>,
    "numTurns" num_turns: Option<u64>,
    "modelUsage" model_usage: Option<Pairs<'a, ModelUsage>>,
    "permissionDenials" permission_denials: Option<Vec<Denial<'a>>>,
    "stopReason" stop_reason: S<'a> => OptStr<'a>,

    // context_compaction
    "trigger" trigger: S<'a> => OptStr<'a>,
    "preTokens" pre_tokens: Option<u64>,
    "postTokens" post_tokens: Option<u64>,

    // permission_request / permission_response
    "toolKind" tool_kind: S<'a> => OptStr<'a>,
    "toolInput" tool_input: J<'a> => OptRaw<'a>,
    "reason" reason: S<'a> => OptStr<'a>,
    "blockedPath" blocked_path: S<'a> => OptStr<'a>,
    "suggestions" suggestions: J<'a> => OptRaw<'a>,
    "options" options: J<'a> => OptRaw<'a>,
    "decision" decision: S<'a> => OptStr<'a>,
    "allowed" allowed: Option<bool>,
    "interrupt" interrupt: bool,
    "optionId" option_id: S<'a> => OptStr<'a>,

    // config_options, available_commands, session_mode
    "configOptions" config_options: J<'a> => OptRaw<'a>,
    "availableCommands" available_commands: J<'a> => OptRaw<'a>,
    "currentModeId" current_mode_id: S<'a> => OptStr<'a>,
    "availableModes" available_modes: J<'a> => OptRaw<'a>,

    // stream_delta
    "textDelta" text_delta: S<'a> => OptStr<'a>,

    // usage_update
    "stepUsage" step_usage: Option<StepUsage>,
    "total" total: Option<TokenUsage>,
    "contextWindow" context_window: Option<u64>,
    "contextTokens" context_tokens: Option<u64>,

    // plan_update
    "entries" entries: J<'a> => OptRaw<'a>,
    "explanation" explanation: S<'a> => OptStr<'a>,

    // tool_update
    "elapsedMs" elapsed_ms: Option<u64>,

    // file_change
    "path" path: S<'a> => OptStr<'a>,
    "changeKind" change_kind: S<'a> => OptStr<'a>,
    "movePath" move_path: S<'a> => OptStr<'a>,
    "diff" diff: S<'a> => OptStr<'a>,
    "cumulative" cumulative: bool,

    // error
    "severity" severity: S<'a> => OptStr<'a>,
    "code" code: S<'a> => OptStr<'a>,
    "httpStatus" http_status: Option<u64>,
    "willRetry" will_retry: Option<bool>,
    "attempt" attempt: Option<u64>,
    "maxRetries" max_retries: Option<u64>,
    "retryDelayMs" retry_delay_ms: Option<u64>,

    // task_update
    "taskId" task_id: S<'a> => OptStr<'a>,
    "phase" phase: S<'a> => OptStr<'a>,
    "taskType" task_type: S<'a> => OptStr<'a>,
    "lastToolName" last_tool_name: S<'a> => OptStr<'a>,

    // subagent_spawn / subagent_complete
    "isResume" is_resume: bool,
    "resumeAgentId" resume_agent_id: S<'a> => OptStr<'a>,
    "prompt" prompt: S<'a> => OptStr<'a>,
    "agentId" agent_id: S<'a> => OptStr<'a>,
    "totalTokens" total_tokens: Option<u64>,
    "toolUseCount" tool_use_count: Option<u64>,

    // rate_limit_update
    "primary" primary: J<'a> => OptRaw<'a>,
    "secondary" secondary: J<'a> => OptRaw<'a>,
    "planType" plan_type: S<'a> => OptStr<'a>,
    "rateLimitType" rate_limit_type: S<'a> => OptStr<'a>,

    // Of `extensions`, only the few the reducer needs ([`Exts`]).
    "extensions" ext: Exts<'a>,
}

/// The extension that carries a provider's own position in its stream: AceClaw's bridge
/// numbers its events (`eventId`), and `reduce` resumes after the last one a session applied.
pub const CURSOR_KEY: &str = "aceclaw.eventId";
/// The extension naming the plan a plan or plan step event is about.
pub const PLAN_ID_KEY: &str = "aceclaw.planId";
/// The extension giving a plan step's index (from 1, the order of the plan's steps).
pub const STEP_INDEX_KEY: &str = "aceclaw.stepIndex";
/// The extension naming the plan step an event's work belongs to (the wire's `parentStepId`).
pub const PARENT_STEP_KEY: &str = "aceclaw.parentStepId";
/// The extension (`true`) that marks Codex's raw reasoning (the `content` of a reasoning item,
/// `item/reasoning/textDelta`, `agent_reasoning_raw_content*`): its thinking without it is the
/// reasoning's summary.
pub const RAW_REASONING_KEY: &str = "codex.rawReasoning";
/// The extension (`true`) that marks an event the converter inferred.
pub const INFERRED_KEY: &str = "insights.inferred";

/// Whether the view reads the `extensions` of an event of `provider` and type `event`: the
/// provider says ([`crate::providers::Reading`]) whether its events carry [`CURSOR_KEY`] and the
/// other plan keys [`Exts`] reads, or its thinking [`RAW_REASONING_KEY`], or its texts
/// [`INFERRED_KEY`] (the whole texts the converter writes of messages streamed as chunks only,
/// [`crate::providers::whole`]).
pub fn reads_extensions(provider: &str, event: &str) -> bool {
    let p = crate::providers::by_name(provider);
    let r = p.map_or(crate::providers::Reading::PLAIN, |p| p.reading);
    r.event_cursor
        || r.raw_reasoning && matches!(event, "text" | "stream_delta")
        || event == "text" && p.is_some_and(|p| p.whole_messages)
}

/// `extensions` as the view reads it, only where [`reads_extensions`] says: AceClaw's cursor
/// ([`CURSOR_KEY`], a non-negative integer), the plan ([`PLAN_ID_KEY`], a string), the step's
/// index ([`STEP_INDEX_KEY`], a non-negative integer) and the step the work belongs to
/// ([`PARENT_STEP_KEY`], a string), and Codex's mark of raw reasoning ([`RAW_REASONING_KEY`],
/// `true`). A key given twice is its last value, as a reader of the line gets it. Anything
/// else (other members, other values, `extensions` not an object) is none: the reducer reads
/// no other extension.
#[derive(Debug, Default, Clone)]
pub struct Exts<'a> {
    pub event_id: Option<u64>,
    pub plan_id: S<'a>,
    pub step_index: Option<u64>,
    pub parent_step_id: S<'a>,
    pub raw_reasoning: bool,
    /// Marked [`INFERRED_KEY`].
    pub inferred: bool,
}

impl Exts<'_> {
    pub fn is_empty(&self) -> bool {
        self.event_id.is_none()
            && self.plan_id.is_none()
            && self.step_index.is_none()
            && self.parent_step_id.is_none()
            && !self.raw_reasoning
            && !self.inferred
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Exts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Any<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Any<'a> {
            type Value = Exts<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Exts<'a>, A::Error> {
                let mut found = Exts::default();
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    let number = |r: &RawValue| r.get().parse::<u64>().ok();
                    // A string as written, borrowed when it has no escapes; none if not one.
                    let string = |r: &'de RawValue| -> S<'a> {
                        serde_json::from_str::<Str<'a>>(r.get()).ok().map(|s| s.0)
                    };
                    match key.0.as_ref() {
                        CURSOR_KEY => found.event_id = number(map.next_value()?),
                        PLAN_ID_KEY => found.plan_id = string(map.next_value()?),
                        STEP_INDEX_KEY => found.step_index = number(map.next_value()?),
                        PARENT_STEP_KEY => found.parent_step_id = string(map.next_value()?),
                        RAW_REASONING_KEY => {
                            found.raw_reasoning = map.next_value::<&RawValue>()?.get() == "true";
                        }
                        INFERRED_KEY => {
                            found.inferred = map.next_value::<&RawValue>()?.get() == "true";
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(found)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Exts<'a>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Exts::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Exts<'a>, E> {
                Ok(Exts::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Exts<'a>, E> {
                Ok(Exts::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Exts<'a>, E> {
                Ok(Exts::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Exts<'a>, E> {
                Ok(Exts::default())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Exts<'a>, E> {
                Ok(Exts::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<Exts<'a>, E> {
                Ok(Exts::default())
            }
        }
        d.deserialize_any(Any(std::marker::PhantomData))
    }
}

/// A string member, borrowed from the line when it has no escapes. (serde's
/// `#[serde(borrow)]` borrows only a field whose type is literally `Cow<str>`; through
/// `Option` or an alias it allocates every string.) Errors as `String` would.
pub struct Str<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(crate::wire::CowStr).map(Str)
    }
}

impl<'a> From<Str<'a>> for Cow<'a, str> {
    fn from(s: Str<'a>) -> Self {
        s.0
    }
}

/// An optional string member (`null` is none), borrowed as [`Str`] is.
pub struct OptStr<'a>(S<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for OptStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(OptStr(Option::<Str>::deserialize(d)?.map(|s| s.0)))
    }
}

impl<'a> From<OptStr<'a>> for S<'a> {
    fn from(s: OptStr<'a>) -> Self {
        s.0
    }
}

/// An optional JSON value (`null` is none), borrowed from the line.
pub struct OptRaw<'a>(J<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for OptRaw<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(OptRaw(
            Option::<&RawValue>::deserialize(d)?.map(Cow::Borrowed),
        ))
    }
}

impl<'a> From<OptRaw<'a>> for J<'a> {
    fn from(r: OptRaw<'a>) -> Self {
        r.0
    }
}

/// The length of an optional array (`null` is none): what the reducer keeps of `images`.
/// Errors as `Option<Vec<_>>` would.
pub struct OptCount(Option<u64>);

impl<'de> Deserialize<'de> for OptCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Count;
        impl<'de> Visitor<'de> for Count {
            type Value = u64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(n)
            }
        }
        // Read as an Option of a sequence, so that `null` and errors are those of `Option<Vec>`.
        struct Len(u64);
        impl<'de> Deserialize<'de> for Len {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_seq(Count).map(Len)
            }
        }
        Ok(OptCount(Option::<Len>::deserialize(d)?.map(|l| l.0)))
    }
}

impl From<OptCount> for Option<u64> {
    fn from(c: OptCount) -> Self {
        c.0
    }
}

/// Member name → position in [`KEYS`]: an open-addressing hash table built at compile time
/// (one hash and usually one comparison per member, where a `match` compares up to all).
const SLOTS: usize = 256;
const EMPTY: u8 = u8::MAX;
static TABLE: [u8; SLOTS] = {
    let mut t = [EMPTY; SLOTS];
    let mut i = 0;
    while i < KEYS.len() {
        let mut h = slot(KEYS[i]);
        while t[h] != EMPTY {
            h = (h + 1) % SLOTS;
        }
        t[h] = i as u8;
        i += 1;
    }
    t
};

/// FNV-1a of the name, folded to a slot.
const fn slot(key: &str) -> usize {
    let b = key.as_bytes();
    let mut h: u32 = 0x811c_9dc5;
    let mut i = 0;
    while i < b.len() {
        h ^= b[i] as u32;
        h = h.wrapping_mul(0x0100_0193);
        i += 1;
    }
    ((h ^ (h >> 16)) as usize) % SLOTS
}

fn field(key: &str) -> Option<Field> {
    let mut h = slot(key);
    loop {
        let i = TABLE[h];
        if i == EMPTY {
            return None;
        }
        if KEYS[i as usize] == key {
            return Some(FIELDS[i as usize]);
        }
        h = (h + 1) % SLOTS;
    }
}

/// A member name, looked up as it is read.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<Field>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Key {
    type Value = Option<Field>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(field(v))
    }
}

/// Reads an event object into an [`Ev`] in place, as `#[derive(Deserialize)]` with
/// `#[serde(default)]` would (unknown members skipped, a member given twice an error), without
/// building the whole struct on the stack and moving it out.
struct Fill<'r, 'a>(&'r mut Ev<'a>);

impl<'a> Visitor<'a> for Fill<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Ev")
    }
    fn visit_map<A: MapAccess<'a>>(self, mut map: A) -> Result<(), A::Error> {
        const _: () = assert!(KEYS.len() <= 128, "`seen` has 128 bits");
        let mut seen = 0u128;
        while let Some(key) = map.next_key_seed(Key)? {
            match key {
                // `extensions` is read only where [`reads_extensions`] says (the type and
                // provider come first in the lines `insights` writes): the others' are skipped
                // as a whole, which is much quicker than reading them member by member.
                Some(Field::ext)
                    if !reads_extensions(
                        self.0.provider.as_deref().unwrap_or(""),
                        &self.0.event,
                    ) =>
                {
                    let bit = 1u128 << (Field::ext as u32);
                    if seen & bit != 0 {
                        return Err(de::Error::duplicate_field(KEYS[Field::ext as usize]));
                    }
                    seen |= bit;
                    map.next_value::<IgnoredAny>()?;
                }
                Some(f) => {
                    let bit = 1u128 << (f as u32);
                    if seen & bit != 0 {
                        return Err(de::Error::duplicate_field(KEYS[f as usize]));
                    }
                    seen |= bit;
                    self.0.member(f, &mut map)?;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `stepUsage`: the four keys the event model documents, and the request's cost in US dollars
/// where the provider reports one (OpenCode's `cost`). Other keys are the provider's and are
/// not read.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct StepUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
    pub cost: Option<f64>,
    /// Anthropic's split of the cache written (`cache_creation`), which prices differently.
    pub cache_creation: Option<CacheCreation>,
}

/// `stepUsage.cache_creation`: the tokens written to the cache for an hour.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct CacheCreation {
    pub ephemeral_1h_input_tokens: Option<u64>,
}

impl StepUsage {
    pub fn is_empty(&self) -> bool {
        self.input_tokens.is_none()
            && self.output_tokens.is_none()
            && self.cache_read_input_tokens.is_none()
            && self.cache_creation_input_tokens.is_none()
            && self.cost.is_none()
    }
}

/// `TokenUsage` (turn_complete `usage`, usage_update `total`).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub reasoning_tokens: u64,
}

/// `ModelTokenUsage` (one value of turn_complete `modelUsage`).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub reasoning_tokens: u64,
    pub cost_usd: Option<f64>,
    pub context_window: Option<u64>,
    pub context_tokens: Option<u64>,
    pub web_search_requests: Option<u64>,
    pub max_output_tokens: Option<u64>,
}

impl ModelUsage {
    pub fn tokens(&self) -> TokenUsage {
        TokenUsage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens,
            cache_creation_tokens: self.cache_creation_tokens,
            reasoning_tokens: self.reasoning_tokens,
        }
    }
}

/// One of turn_complete `permissionDenials` (snake_case, as the event model has it).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Denial<'a> {
    #[serde(borrow, deserialize_with = "crate::wire::opt_str")]
    pub tool_use_id: S<'a>,
}

impl<'a> Ev<'a> {
    /// Parses one InsightsEvent line.
    pub fn parse(line: &'a str) -> serde_json::Result<Ev<'a>> {
        let mut ev = Ev::default();
        ev.read(line)?;
        Ok(ev)
    }

    /// Parses one InsightsEvent line into `self`, which must be `Ev::default()`; after an
    /// error it holds part of the line and is to be dropped.
    pub fn read(&mut self, line: &'a str) -> serde_json::Result<()> {
        let mut r = crate::json_reader::Reader::new(line);
        let read = de::Deserializer::deserialize_map(&mut r, Fill(self)).and_then(|()| r.end());
        if read.is_err() {
            // What the reader is not sure of, serde_json reads, or says what is wrong with.
            *self = Ev::default();
            let mut de = serde_json::Deserializer::from_str(line);
            de::Deserializer::deserialize_map(&mut de, Fill(self))?;
            de.end()?;
        }
        self.line = line;
        Ok(())
    }

    /// The event's line: the one read, or the one `insights` writes for an event handed over
    /// without one. `None` only if that event cannot be written as JSON.
    pub fn line_json(&self) -> Option<Box<RawValue>> {
        match self.source {
            Some(e) => serde_json::value::to_raw_value(e).ok(),
            None => RawValue::from_string(self.line.to_owned()).ok(),
        }
    }

    /// The session id, `""` when the event names none.
    pub fn session(&self) -> &str {
        self.session_id.as_deref().unwrap_or("")
    }

    pub fn parent(&self) -> Option<&str> {
        self.parent_call_id.as_deref().filter(|p| !p.is_empty())
    }
}

/// A borrowed string member as an owned `Option<String>`.
pub fn own(s: &S) -> Option<String> {
    s.as_deref().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_name_finds_its_field() {
        for (k, f) in KEYS.iter().zip(FIELDS) {
            assert_eq!(field(k), Some(*f), "{k}");
        }
        for k in ["", "ids", "line", "raw", "Event", "events", "textdelta"] {
            assert_eq!(field(k), None, "{k}");
        }
    }

    #[test]
    fn members_read_as_derive_reads_them() {
        let line = r#"{"event":"text","t\u0065xt":"a\"b","kind":null,"x":{"y":[1]},"seq":3,"sessionId":"s","input":{"a":1}}"#;
        let ev = Ev::parse(line).unwrap();
        assert_eq!(ev.event, "text");
        assert_eq!(ev.text.as_deref(), Some("a\"b"));
        assert_eq!(ev.kind, None);
        assert_eq!(ev.seq, Some(3));
        assert!(matches!(ev.session_id, Some(Cow::Borrowed("s"))));
        assert_eq!(ev.input.as_deref().map(RawValue::get), Some(r#"{"a":1}"#));
        assert_eq!(ev.line, line);
        let err = |l: &str| Ev::parse(l).unwrap_err().to_string();
        assert!(err(r#"{"event":"x","text":"a","text":"b"}"#).contains("duplicate field `text`"));
        assert!(err(r#"{"event":"x","isError":null}"#).contains("invalid type: null"));
        assert!(err(r#"{"event":"x","text":5}"#).contains("expected a string"));
        assert!(err(r#"{"event":"x"} {}"#).contains("trailing characters"));
        assert!(Ev::parse(r#"{"event":"x","y":1,"y":2}"#).is_ok());
    }

    #[test]
    fn of_extensions_only_aceclaws_few_keys_are_read_and_only_on_its_events() {
        let ext = r#"{"aceclaw.eventId":7,"aceclaw.planId":"p","aceclaw.stepIndex":2,"aceclaw.parentStepId":"p-s\u0032","aceclaw.other":{"a":[1]},"aceclaw.eventId":8}"#;
        let line = format!(r#"{{"event":"x","provider":"aceclaw","extensions":{ext}}}"#);
        let ev = Ev::parse(&line).unwrap();
        assert_eq!(ev.ext.event_id, Some(8), "the last value of a key");
        assert_eq!(ev.ext.plan_id.as_deref(), Some("p"));
        assert!(matches!(ev.ext.plan_id, Some(Cow::Borrowed(_))));
        assert_eq!(ev.ext.step_index, Some(2));
        assert_eq!(ev.ext.parent_step_id.as_deref(), Some("p-s2"));
        // Values of another type are none, not errors.
        let odd = r#"{"event":"x","provider":"aceclaw","extensions":{"aceclaw.planId":3,"aceclaw.stepIndex":"2","aceclaw.parentStepId":null,"aceclaw.eventId":-1}}"#;
        assert!(Ev::parse(odd).unwrap().ext.is_empty());
        // Another provider's extensions are skipped whole.
        let line = format!(r#"{{"event":"x","provider":"claude","extensions":{ext}}}"#);
        let other = Ev::parse(&line).unwrap();
        assert!(other.ext.is_empty());
    }
}
