//! The InsightsEvent model: what `insights` writes, one JSON object per line.
//!
//! # Overview
//! Every event is a flat JSON object whose `event` member names its type. The 17 types of the
//! CC-Insights protocol (`session_init` … `rate_limit_update`) keep that project's field names,
//! spellings and enums, so a client written against it reads our output. The types after them
//! (`turn_start`, `plan_update`, `permission_response`, `tool_update`, `file_change`, `error`,
//! `task_update`, `hook`, `notice`, `raw`) are additions; `--compat cc-insights` folds them away.
//!
//! # Encoding
//! UTF-8 JSON, one event per line, `\n` terminated. Field names are camelCase. Optional fields are
//! omitted rather than written as `null`. Integers are JSON integers.
//!
//! # Wire format
//! Base members, in this order: `event`, `id`, `seq`, `line`, `timestamp`, `provider`,
//! `sessionId`, `turnId`; then the type's own fields; then `raw` and `extensions`.
//! `schemas/insights-event.schema.json` is the contract; a test validates every golden file.
//!
//! The list of types may grow: consumers must ignore event types and fields they do not know.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

pub type Str<'a> = Cow<'a, str>;

/// Any JSON value, borrowed from the input line when it passes through unchanged.
#[derive(Debug, Clone)]
pub enum Json<'a> {
    Raw(&'a RawValue),
    /// JSON text a converter kept from an earlier line, written as it is.
    RawOwned(Box<RawValue>),
    Value(Value),
    Str(Str<'a>),
    U64(u64),
    Bool(bool),
    /// An object a converter builds, its members written as they are: raw JSON in them
    /// passes through untouched (a `Value` cannot hold every JSON text).
    Object(Pairs<'a, Json<'a>>),
    /// An array a converter builds, written the same way.
    Array(Vec<Json<'a>>),
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Raw(r) => r.serialize(s),
            Json::RawOwned(r) => r.serialize(s),
            Json::Value(v) => v.serialize(s),
            Json::Str(v) => s.serialize_str(v),
            Json::U64(v) => s.serialize_u64(*v),
            Json::Bool(v) => s.serialize_bool(*v),
            Json::Object(v) => v.serialize(s),
            Json::Array(v) => s.collect_seq(v),
        }
    }
}

impl<'a> From<&'a RawValue> for Json<'a> {
    fn from(r: &'a RawValue) -> Self {
        Json::Raw(r)
    }
}
impl From<Box<RawValue>> for Json<'_> {
    fn from(r: Box<RawValue>) -> Self {
        Json::RawOwned(r)
    }
}
impl From<Value> for Json<'_> {
    fn from(v: Value) -> Self {
        Json::Value(v)
    }
}
impl<'a> From<Str<'a>> for Json<'a> {
    fn from(v: Str<'a>) -> Self {
        Json::Str(v)
    }
}
impl From<String> for Json<'_> {
    fn from(v: String) -> Self {
        Json::Str(Cow::Owned(v))
    }
}
impl From<&'static str> for Json<'_> {
    fn from(v: &'static str) -> Self {
        Json::Str(Cow::Borrowed(v))
    }
}
impl From<u64> for Json<'_> {
    fn from(v: u64) -> Self {
        Json::U64(v)
    }
}
impl From<bool> for Json<'_> {
    fn from(v: bool) -> Self {
        Json::Bool(v)
    }
}

/// The open `extensions` object: keys in insertion order, values any JSON.
pub type Extensions<'a> = Pairs<'a, Json<'a>>;

/// An object written from key/value pairs, keeping their order.
#[derive(Debug, Clone)]
pub struct Pairs<'a, V>(pub Vec<(Str<'a>, V)>);

impl<V> Default for Pairs<'_, V> {
    fn default() -> Self {
        Pairs(Vec::new())
    }
}

impl<V: Serialize> Serialize for Pairs<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'a, V> Pairs<'a, V> {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a> Pairs<'a, Json<'a>> {
    pub fn put(&mut self, key: impl Into<Str<'a>>, value: impl Into<Json<'a>>) {
        self.0.push((key.into(), value.into()));
    }
    /// Adds the pair only when there is a value.
    pub fn put_opt<V: Into<Json<'a>>>(&mut self, key: impl Into<Str<'a>>, value: Option<V>) {
        if let Some(v) = value {
            self.put(key, v);
        }
    }
}

/// One normalized event: the base members, the type's own (`body`), then `raw` and
/// `extensions`, serialized as one flat object ([`Serialize`] below).
#[derive(Debug)]
pub struct Event<'a> {
    pub event: &'static str,
    pub id: Str<'a>,
    pub seq: u64,
    pub line: u64,
    pub timestamp: Option<Str<'a>>,
    pub provider: &'static str,
    pub session_id: Str<'a>,
    pub turn_id: Option<Str<'a>>,
    pub body: Body<'a>,
    pub raw: Option<&'a RawValue>,
    pub extensions: Extensions<'a>,
}

/// What `#[serde(flatten)]` of the body would write, as one struct rather than a map: member
/// names stay `&'static str`, which [`crate::json_writer`] writes without an escape scan (a
/// flattened body goes through `serialize_map`, whose keys are searched like any string).
impl Serialize for Event<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // The length is a hint only; never 0, which serde_json takes for `{}` already closed.
        let mut st = s.serialize_struct("Event", 12)?;
        st.serialize_field("event", self.event)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("seq", &self.seq)?;
        st.serialize_field("line", &self.line)?;
        match &self.timestamp {
            Some(t) => st.serialize_field("timestamp", t)?,
            None => st.skip_field("timestamp")?,
        }
        st.serialize_field("provider", self.provider)?;
        st.serialize_field("sessionId", &self.session_id)?;
        match &self.turn_id {
            Some(t) => st.serialize_field("turnId", t)?,
            None => st.skip_field("turnId")?,
        }
        self.body.serialize(BodyMembers(&mut st))?;
        match self.raw {
            Some(r) => st.serialize_field("raw", r)?,
            None => st.skip_field("raw")?,
        }
        if self.extensions.is_empty() {
            st.skip_field("extensions")?;
        } else {
            st.serialize_field("extensions", &self.extensions)?;
        }
        st.end()
    }
}

/// Serializes a body (a struct) as members of the event's struct `.0`.
struct BodyMembers<'s, T>(&'s mut T);

fn body_not_a_struct<E: serde::ser::Error>() -> E {
    E::custom("internal error: an event body that is not a struct")
}

impl<T: serde::ser::SerializeStruct> serde::ser::SerializeStruct for BodyMembers<'_, T> {
    type Ok = ();
    type Error = T::Error;
    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &V,
    ) -> Result<(), T::Error> {
        self.0.serialize_field(key, v)
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), T::Error> {
        self.0.skip_field(key)
    }
    fn end(self) -> Result<(), T::Error> {
        Ok(())
    }
}

impl<'s, T: serde::ser::SerializeStruct> Serializer for BodyMembers<'s, T> {
    type Ok = ();
    type Error = T::Error;
    type SerializeSeq = serde::ser::Impossible<(), T::Error>;
    type SerializeTuple = serde::ser::Impossible<(), T::Error>;
    type SerializeTupleStruct = serde::ser::Impossible<(), T::Error>;
    type SerializeTupleVariant = serde::ser::Impossible<(), T::Error>;
    type SerializeMap = serde::ser::Impossible<(), T::Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = serde::ser::Impossible<(), T::Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, T::Error> {
        Ok(self)
    }
    crate::json_writer::refuse_values!(body_not_a_struct();
        bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 char str bytes
        none some unit unit_struct unit_variant);
    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &V,
    ) -> Result<(), T::Error> {
        v.serialize(self)
    }
    crate::json_writer::refuse_values!(body_not_a_struct();
        newtype_variant seq tuple tuple_struct tuple_variant map struct_variant);
}

macro_rules! bodies {
    ($($variant:ident($ty:ident) = $name:literal,)*) => {
        /// The type-specific part of an event; the variant decides `event`.
        #[derive(Debug, Serialize)]
        #[serde(untagged)]
        pub enum Body<'a> { $($variant($ty<'a>),)* }

        impl Body<'_> {
            /// The value of the `event` discriminator.
            pub fn kind(&self) -> &'static str {
                match self { $(Body::$variant(_) => $name,)* }
            }
        }

        /// Every event type `insights` writes, in schema order.
        pub const EVENT_TYPES: &[&str] = &[$($name,)*];

        $(impl<'a> From<$ty<'a>> for Body<'a> {
            fn from(b: $ty<'a>) -> Self { Body::$variant(b) }
        })*
    };
}

bodies! {
    SessionInit(SessionInit) = "session_init",
    SessionStatus(SessionStatus) = "session_status",
    Text(Text) = "text",
    UserInput(UserInput) = "user_input",
    ToolInvocation(ToolInvocation) = "tool_invocation",
    ToolCompletion(ToolCompletion) = "tool_completion",
    SubagentSpawn(SubagentSpawn) = "subagent_spawn",
    SubagentComplete(SubagentComplete) = "subagent_complete",
    TurnComplete(TurnComplete) = "turn_complete",
    ContextCompaction(ContextCompaction) = "context_compaction",
    PermissionRequest(PermissionRequest) = "permission_request",
    ConfigOptions(ConfigOptions) = "config_options",
    AvailableCommands(AvailableCommands) = "available_commands",
    SessionMode(SessionMode) = "session_mode",
    StreamDelta(StreamDelta) = "stream_delta",
    UsageUpdate(UsageUpdate) = "usage_update",
    RateLimitUpdate(RateLimitUpdate) = "rate_limit_update",
    TurnStart(TurnStart) = "turn_start",
    PlanUpdate(PlanUpdate) = "plan_update",
    PermissionResponse(PermissionResponse) = "permission_response",
    ToolUpdate(ToolUpdate) = "tool_update",
    FileChange(FileChange) = "file_change",
    Error(ErrorEvent) = "error",
    TaskUpdate(TaskUpdate) = "task_update",
    Hook(Hook) = "hook",
    Notice(Notice) = "notice",
    SessionInfo(SessionInfo) = "session_info",
    Raw(RawEvent) = "raw",
}

/// The 17 event types of the CC-Insights protocol.
pub const CC_INSIGHTS_TYPES: &[&str] = &[
    "session_init",
    "session_status",
    "text",
    "user_input",
    "tool_invocation",
    "tool_completion",
    "subagent_spawn",
    "subagent_complete",
    "turn_complete",
    "context_compaction",
    "permission_request",
    "config_options",
    "available_commands",
    "session_mode",
    "stream_delta",
    "usage_update",
    "rate_limit_update",
];

macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
        #[allow(dead_code)] // the vocabulary is the schema's; not every provider uses all of it
        pub enum $name { $(#[serde(rename = $s)] $variant,)* }
        #[allow(dead_code)]
        impl $name {
            pub const ALL: &'static [&'static str] = &[$($s,)*];
            pub fn as_str(self) -> &'static str { match self { $($name::$variant => $s,)* } }
        }
    };
}

string_enum!(
    /// CC-Insights' SessionStatus, plus the states newer agents report.
    SessionStatusKind {
        Compacting = "compacting",
        Resuming = "resuming",
        Interrupted = "interrupted",
        Ended = "ended",
        Error = "error",
        Idle = "idle",
        Requesting = "requesting",
        Running = "running",
        RequiresAction = "requires_action",
    }
);

impl SessionStatusKind {
    /// For each value of `ALL`, whether CC-Insights' enum has it.
    pub const CC: &'static [bool] = &[true, true, true, true, true, false, false, false, false];
}

string_enum!(TextKind {
    Text = "text",
    Thinking = "thinking",
    Plan = "plan",
    Error = "error",
});

string_enum!(ToolCallStatus {
    Completed = "completed",
    Failed = "failed",
    Cancelled = "cancelled",
});

string_enum!(CompactionTrigger {
    Auto = "auto",
    Manual = "manual",
    Cleared = "cleared",
});

string_enum!(StreamDeltaKind {
    Text = "text",
    Thinking = "thinking",
    ToolInput = "toolInput",
    MessageStart = "messageStart",
    MessageStop = "messageStop",
    BlockStart = "blockStart",
    BlockStop = "blockStop",
    ToolOutput = "toolOutput",
});

string_enum!(
    /// ACP's tool kinds, as CC-Insights uses them.
    ToolKind {
        Execute = "execute",
        Read = "read",
        Edit = "edit",
        Delete = "delete",
        Move = "move",
        Search = "search",
        Fetch = "fetch",
        Browse = "browse",
        Think = "think",
        Ask = "ask",
        Memory = "memory",
        Mcp = "mcp",
        Other = "other",
    }
);

string_enum!(McpStatus {
    Connected = "connected",
    Failed = "failed",
    NeedsAuth = "needs-auth",
    Pending = "pending",
});

string_enum!(PlanStatus {
    Pending = "pending",
    InProgress = "in_progress",
    Completed = "completed",
});

string_enum!(PlanPriority {
    High = "high",
    Medium = "medium",
    Low = "low",
});

string_enum!(
    /// How a permission request was answered.
    Decision {
        Allow = "allow",
        AllowAlways = "allow_always",
        Deny = "deny",
        DenyAlways = "deny_always",
        Cancelled = "cancelled",
        Unknown = "unknown",
    }
);

string_enum!(ChangeKind {
    Add = "add",
    Update = "update",
    Delete = "delete",
    Move = "move",
});

string_enum!(Severity {
    Error = "error",
    Warning = "warning",
});

string_enum!(TaskPhase {
    Started = "started",
    Progress = "progress",
    Updated = "updated",
    Notification = "notification",
});

string_enum!(HookPhase {
    Started = "started",
    Progress = "progress",
    Response = "response",
});

fn is_false(b: &bool) -> bool {
    !*b
}

// ---------------------------------------------------------------------------------------------
// The 17 CC-Insights types.

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInit<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_tools: Option<Vec<Str<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<McpServer<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<Account<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slash_commands: Option<Vec<SlashCommand<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_models: Option<Vec<Json<'a>>>,
    /// Agent program version (`claude_code_version`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<Str<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<Str<'a>>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServer<'a> {
    pub name: Str<'a>,
    pub status: McpStatus,
    /// The agent's own status word when it is not one of `status`'s four.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_detail: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Json<'a>>,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Account<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscription_type: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_source: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_source: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlashCommand<'a> {
    pub name: Str<'a>,
    pub description: Str<'a>,
    pub argument_hint: Str<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus<'a> {
    pub status: SessionStatusKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Text<'a> {
    pub text: Str<'a>,
    pub kind: TextKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Str<'a>>,
    /// The provider's message id; blocks of one message share it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInput<'a> {
    pub text: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<ImageData<'a>>>,
    #[serde(skip_serializing_if = "is_false")]
    pub is_synthetic: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageData<'a> {
    pub media_type: Str<'a>,
    pub data: Str<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInvocation<'a> {
    pub call_id: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
    pub kind: ToolKind,
    pub tool_name: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<Str<'a>>,
    pub input: Json<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<Str<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_tool: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCompletion<'a> {
    pub call_id: Str<'a>,
    pub status: ToolCallStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Json<'a>>,
    #[serde(skip_serializing_if = "is_false")]
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Json<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<Str<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
}

impl<'a> ToolCompletion<'a> {
    /// The end of a call the wire leaves open when its turn ends (an interrupt): `cancelled`,
    /// nothing else known. The caller marks it `insights.inferred`.
    pub fn cancelled(call_id: Str<'a>) -> Self {
        ToolCompletion {
            call_id,
            status: ToolCallStatus::Cancelled,
            duration_ms: None,
            output: None,
            is_error: false,
            content: None,
            locations: None,
            parent_call_id: None,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentSpawn<'a> {
    pub call_id: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<Str<'a>>,
    #[serde(skip_serializing_if = "is_false")]
    pub is_resume: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_agent_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentComplete<'a> {
    pub call_id: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnComplete<'a> {
    #[serde(skip_serializing_if = "is_false")]
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtype: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<Str<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_api_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_usage: Option<Pairs<'a, ModelTokenUsage>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_denials: Option<Vec<Json<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<Str<'a>>,
}

/// How a turn an interrupt or a cancel ended says so: the word of its `turn_complete`'s
/// `stopReason` or `subtype` (Claude and Codex `interrupted`, ACP `cancelled`; either case, as
/// the Codex event reference spells `"Interrupted"`). Such a turn
/// was cancelled, not failed, even where the wire flags it as an error (Claude's
/// `error_during_execution`). `reduce`, `replay` and the facts tests read turns by this rule.
pub fn cancelled_turn<'s>(
    stop_reason: Option<&'s str>,
    subtype: Option<&'s str>,
) -> Option<&'s str> {
    [stop_reason, subtype]
        .into_iter()
        .flatten()
        .find(|w| w.eq_ignore_ascii_case("interrupted") || w.eq_ignore_ascii_case("cancelled"))
}

/// Whether a `turn_start` of `provider` ends the plan of the turns before it.
///
/// A Codex plan (`turn/plan/updated`, the `update_plan` tool) is its turn's: the app-server
/// event reference has `turn/started` reset the plan, reasoning and status state. A Claude
/// todo list or an ACP plan lasts across prompts until the agent replaces it. `reduce` reads
/// turn_start by this rule.
pub fn turn_start_ends_plan(provider: &str) -> bool {
    provider == "codex"
}

/// Whether a `turn_complete` of `provider` reports running totals of the agent process in
/// `costUsd`, `modelUsage` and `durationApiMs`, rather than the turn's own figures.
///
/// Claude Code's `result` reports the process's totals so far (`total_cost_usd`, `modelUsage`,
/// `duration_api_ms`), and the formats that follow it do the same: a turn's share is the
/// increase since the previous report. ACP's answer to a prompt reports that prompt's own usage
/// (claude-agent-acp's PromptResponse `usage`; Gemini CLI's `_meta.quota`, whose per-model
/// `model_usage` is `modelUsage`: in a Gemini CLI session of three prompts, the second
/// cancelled, the answers report 11,556 and then 11,649 input tokens, the second a request
/// whose context holds the first prompt, not their sum), so provider `acp`'s figures are the
/// turn's own; so are Codex's (provider `codex`: `modelUsage` is the turn's `usage` under the
/// thread's model), and OpenCode's (its `costUsd` is the sum of the turn's own steps). `usage`
/// is always the turn's own. `reduce` and `replay` read turn_complete by
/// this rule, which each provider declares ([`crate::providers::Reading::running_turn_totals`]).
pub fn running_turn_totals(provider: &str) -> bool {
    crate::providers::reading(provider).running_turn_totals
}

/// The context in use that a main agent's `usage_update` tells, by the one definition `reduce`
/// (`context.usedTokens`) and `replay` (the footer's "context") share: the provider's own
/// figure, `contextTokens`, where it reports one; else the size of the request's context as
/// its `stepUsage` counts it (input, cache read and cache creation tokens) plus its output,
/// which the conversation now holds as well. ACP's figure counts the output so:
/// claude-agent-acp's `used` rises by a request's output while it streams (20,026 when its
/// first request starts, 20,047 when it ends: `testdata/acp-claude/bash-cancelled.jsonl`,
/// lines 7 and 14). `None` when the event tells nothing of it (a request of no tokens: an API
/// error). A subagent's requests are its own context, not the main agent's: callers take
/// only events without a `parentCallId`. After a `context_compaction` of the main agent, the
/// context in use is its `postTokens` until the next request.
pub fn context_in_use(
    context_tokens: Option<u64>,
    input: Option<u64>,
    cache_read: Option<u64>,
    cache_creation: Option<u64>,
    output: Option<u64>,
) -> Option<u64> {
    context_tokens.or_else(|| {
        let n = [input, cache_read, cache_creation, output]
            .into_iter()
            .flatten()
            .fold(0u64, u64::saturating_add);
        (n > 0).then_some(n)
    })
}

/// Token counts; the first two are always written, as CC-Insights reads them with defaults.
#[derive(Debug, Default, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_creation_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

#[derive(Debug, Default, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelTokenUsage {
    #[serde(flatten)]
    pub tokens: TokenUsage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web_search_requests: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompaction<'a> {
    pub trigger: CompactionTrigger,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest<'a> {
    pub request_id: Str<'a>,
    pub tool_name: Str<'a>,
    pub tool_kind: ToolKind,
    pub tool_input: Json<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_path: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestions: Option<Vec<PermissionSuggestion<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
    /// The answers offered (ACP's permission options).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<PermissionOption<'a>>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption<'a> {
    pub option_id: Str<'a>,
    pub name: Str<'a>,
    /// `allow_once`, `allow_always`, `reject_once`, `reject_always`, or the agent's own word.
    pub kind: Str<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionSuggestion<'a> {
    #[serde(rename = "type")]
    pub kind: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Str<'a>>,
    pub description: Str<'a>,
    /// The suggestion as the agent sent it.
    pub detail: Json<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOptions<'a> {
    pub config_options: Vec<Json<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailableCommands<'a> {
    pub available_commands: Vec<Json<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMode<'a> {
    pub current_mode_id: Str<'a>,
    pub available_modes: Vec<Json<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamDelta<'a> {
    pub kind: StreamDeltaKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_delta: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_delta: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_index: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageUpdate<'a> {
    /// The provider's per-step usage, snake_case keys as CC-Insights reads them.
    pub step_usage: Json<'a>,
    /// Running totals of the session, when the provider reports them (Codex).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<TokenUsage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Tokens in the context now (ACP's `used`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// The session's cost so far, in US dollars (ACP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<Str<'a>>,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitUpdate<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary: Option<RateLimitWindow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secondary: Option<RateLimitWindow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_type: Option<Str<'a>>,
    /// The provider's verdict (`allowed`, `allowed_warning`, `rejected`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit_type: Option<Str<'a>>,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitWindow {
    /// Absent when the provider states no usage (a rejected limit without `utilization`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_percent: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_duration_mins: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<u64>,
}

// ---------------------------------------------------------------------------------------------
// Additions.

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStart<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanUpdate<'a> {
    /// The whole plan: each update replaces the one before.
    pub entries: Vec<PlanEntry<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry<'a> {
    pub content: Str<'a>,
    pub status: PlanStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<PlanPriority>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_form: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionResponse<'a> {
    pub request_id: Str<'a>,
    pub decision: Decision,
    /// Whether the call may run; left out when the decision is `unknown`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Json<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_permissions: Option<Json<'a>>,
    #[serde(skip_serializing_if = "is_false")]
    pub interrupt: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_id: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUpdate<'a> {
    pub call_id: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Json<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
    /// A new title for the call, when the provider refines it (ACP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<Str<'a>>,
    /// The call's input, when the provider sends it only after the call began (ACP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Json<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<Str<'a>>>,
    /// The call's kind, when the line that announces it comes after the call began (ACP's
    /// `tool_call` after its own `tool_call_update`); the update is then the announcement, and
    /// its `toolName` the call's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange<'a> {
    pub path: Str<'a>,
    pub change_kind: ChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_path: Option<Str<'a>>,
    /// Unified diff of the change, when the provider reports one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<Str<'a>>,
    /// The diff covers the whole turn so far and replaces earlier cumulative diffs of the
    /// path (Codex `turn/diff/updated`), rather than adding one change.
    #[serde(skip_serializing_if = "is_false")]
    pub cumulative: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorEvent<'a> {
    pub message: Str<'a>,
    pub severity: Severity,
    /// The provider's error code or class (`rate_limit`, `overloaded`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub will_retry: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_delay_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<Str<'a>>,
}

impl<'a> ErrorEvent<'a> {
    /// An error with only its message, severity and code.
    pub fn new(message: Str<'a>, severity: Severity, code: Option<Str<'a>>) -> Self {
        ErrorEvent {
            message,
            severity,
            code,
            http_status: None,
            will_retry: None,
            attempt: None,
            max_retries: None,
            retry_delay_ms: None,
            request_id: None,
            parent_call_id: None,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskUpdate<'a> {
    pub task_id: Str<'a>,
    pub phase: TaskPhase,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_type: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_tool_name: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Json<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hook<'a> {
    pub hook_id: Str<'a>,
    pub phase: HookPhase,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_name: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_event: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Str<'a>>,
}

/// A provider message with meaning but no structure of its own here; its data is in
/// `extensions`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Notice<'a> {
    /// The provider's own name for the message (`system/notification`, `keep_alive`, …).
    pub subtype: Str<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Str<'a>>,
}

/// The session's title or other descriptive data changed (ACP `session_info_update`).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<Str<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Str<'a>>,
}

/// Input the converter could not map: the original object is in `raw`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RawEvent<'a> {
    pub reason: Str<'a>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_serializes_in_documented_order() {
        let ev = Event {
            event: "text",
            id: "u1:0".into(),
            seq: 1,
            line: 3,
            timestamp: None,
            provider: "claude",
            session_id: "s".into(),
            turn_id: None,
            body: Text {
                text: "hi".into(),
                kind: TextKind::Text,
                parent_call_id: None,
                model: None,
                message_id: None,
            }
            .into(),
            raw: None,
            extensions: Extensions::default(),
        };
        assert_eq!(
            serde_json::to_string(&ev).unwrap(),
            r#"{"event":"text","id":"u1:0","seq":1,"line":3,"provider":"claude","sessionId":"s","text":"hi","kind":"text"}"#
        );
    }

    #[test]
    fn cc_types_are_a_prefix_of_all_types() {
        assert_eq!(&EVENT_TYPES[..CC_INSIGHTS_TYPES.len()], CC_INSIGHTS_TYPES);
    }
}
