//! The state `reduce` builds, as it is written (`schemas/insights-state.schema.json`).
//!
//! Serialized with serde; read back (`--from-state`) into the same types, after which the
//! lookup index (`Index`, not serialized) is rebuilt from the entries and the tree. Everything
//! later events depend on is in the JSON, in `cursor` where it is bookkeeping rather than
//! something to show, so reducing a log in one go and in two parts gives the same state.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::collections::{BTreeMap, HashMap};

/// The version of the state's layout; `--from-state` refuses any other. Version 2 keeps the
/// ids of the events applied (`cursor.ids`), which version 1 resumed by `seq` instead.
pub const STATE_VERSION: u32 = 2;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Appends to a list that usually stays short. Its capacity grows 1, 2, 4, … where `push`
/// starts at 4: a state of many sessions holds tens of thousands of one- or two-element lists
/// (turns, models, nodes), and that spare room was most of its memory.
pub fn push_small<T>(list: &mut Vec<T>, x: T) {
    if list.len() == list.capacity() {
        list.reserve_exact(list.len().max(1));
    }
    list.push(x);
}

/// Empties a list and frees its room: a session's scratch lists (running calls, agents of the
/// turn, per-request usage) are empty most of the time.
pub fn free<T>(list: &mut Vec<T>) {
    if list.is_empty() && list.capacity() > 0 {
        *list = Vec::new();
    }
}

/// Any JSON value kept as the event carried it (tool input and output, plan entries, …).
/// Written verbatim and read back verbatim, as raw JSON text: never through
/// `serde_json::Value`, which cannot hold every value an event may carry (members given twice,
/// a lone surrogate escape `"\ud800"`, a number beyond `f64`, nesting deeper than 128), so a
/// state reads back as it was written. A re-formatted snapshot still loads, its values as
/// re-formatted.
#[derive(Debug, Clone)]
pub struct RawJson(pub Box<RawValue>);

impl RawJson {
    pub fn of(raw: &RawValue) -> RawJson {
        RawJson(raw.to_owned())
    }
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(d).map(RawJson)
    }
}

/// Numbers read back exactly: serde_json's default float parsing may be one unit in the last
/// place off, and a resumed state must continue with the very values it was written with.
mod exact {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer};
    use serde_json::value::RawValue;

    pub fn opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let raw: Option<Box<RawValue>> = Option::deserialize(d)?;
        raw.map(|r| r.get().parse::<f64>().map_err(D::Error::custom))
            .transpose()
    }

    pub fn one<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        raw.get().parse::<f64>().map_err(D::Error::custom)
    }
}

/// The whole state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// [`STATE_VERSION`].
    pub version: u32,
    /// The `seq` of the last event applied; 0 before any.
    pub last_seq: u64,
    pub events: EventCounts,
    pub pending: Pending,
    pub totals: Totals,
    pub tree: Tree,
    pub entries: Vec<Entry>,
    pub cursor: Cursor,
    #[serde(skip)]
    pub(super) idx: Index,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventCounts {
    /// Events applied.
    pub applied: u64,
    /// Events applied, by type.
    pub by_type: BTreeMap<String, u64>,
}

// ---------------------------------------------------------------------------------------------
// Entries.

/// One entry of the conversation, as a UI lists it (the entry rules of the ACP seed).
#[derive(Debug, Clone)]
pub struct Entry {
    pub session_id: String,
    /// The turn (from 1, within the session) it belongs to; none outside turns.
    pub turn: Option<u32>,
    /// The subagent call it belongs to; none for the main agent.
    pub parent_call_id: Option<String>,
    /// The plan step it is the work of (AceClaw's `parentStepId`: the `stepId` of a step of
    /// the plan); none when the event that created it names none.
    pub parent_step_id: Option<String>,
    /// The event that created it.
    pub seq: u64,
    /// The last event that changed it, when not the one that created it.
    pub updated_seq: Option<u64>,
    pub timestamp: Option<String>,
    pub body: Body,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryType {
    Meta,
    Message,
    Thought,
    ToolCall,
    PermissionRequest,
    Plan,
    ModeChange,
    Error,
    Compaction,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Body {
    Meta(Box<Meta>),
    Message(Message),
    Thought(Thought),
    ToolCall(Box<ToolCall>),
    PermissionRequest(Box<PermissionEntry>),
    Plan(Plan),
    ModeChange(ModeChange),
    Error(Box<ErrorEntry>),
    Compaction(Compaction),
}

impl Body {
    pub fn ty(&self) -> EntryType {
        match self {
            Body::Meta(_) => EntryType::Meta,
            Body::Message(_) => EntryType::Message,
            Body::Thought(_) => EntryType::Thought,
            Body::ToolCall(_) => EntryType::ToolCall,
            Body::PermissionRequest(_) => EntryType::PermissionRequest,
            Body::Plan(_) => EntryType::Plan,
            Body::ModeChange(_) => EntryType::ModeChange,
            Body::Error(_) => EntryType::Error,
            Body::Compaction(_) => EntryType::Compaction,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EntryHead {
    #[serde(rename = "type")]
    ty: EntryType,
    session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    turn: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent_step_id: Option<String>,
    seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    updated_seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// [`EntryHead`] borrowed, then the body.
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Out<'a> {
            #[serde(rename = "type")]
            ty: EntryType,
            session_id: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            turn: Option<u32>,
            #[serde(skip_serializing_if = "Option::is_none")]
            parent_call_id: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            parent_step_id: Option<&'a str>,
            seq: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            updated_seq: Option<u64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            timestamp: Option<&'a str>,
            #[serde(flatten)]
            body: &'a Body,
        }
        Out {
            ty: self.body.ty(),
            session_id: &self.session_id,
            turn: self.turn,
            parent_call_id: self.parent_call_id.as_deref(),
            parent_step_id: self.parent_step_id.as_deref(),
            seq: self.seq,
            updated_seq: self.updated_seq,
            timestamp: self.timestamp.as_deref(),
            body: &self.body,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The entry is read twice, head and body, from its raw text: a `Value` in between
        // would not hold every kept value (see [`RawJson`]).
        let raw = Box::<RawValue>::deserialize(d)?;
        let v = raw.get();
        fn of<T: serde::de::DeserializeOwned, E: serde::de::Error>(v: &str) -> Result<T, E> {
            serde_json::from_str(v).map_err(|e| E::custom(crate::wire::without_position(&e)))
        }
        let head: EntryHead = of(v)?;
        let body = match head.ty {
            EntryType::Meta => Body::Meta(Box::new(of(v)?)),
            EntryType::Message => Body::Message(of(v)?),
            EntryType::Thought => Body::Thought(of(v)?),
            EntryType::ToolCall => Body::ToolCall(Box::new(of(v)?)),
            EntryType::PermissionRequest => Body::PermissionRequest(Box::new(of(v)?)),
            EntryType::Plan => Body::Plan(of(v)?),
            EntryType::ModeChange => Body::ModeChange(of(v)?),
            EntryType::Error => Body::Error(Box::new(of(v)?)),
            EntryType::Compaction => Body::Compaction(of(v)?),
        };
        Ok(Entry {
            session_id: head.session_id,
            turn: head.turn,
            parent_call_id: head.parent_call_id,
            parent_step_id: head.parent_step_id,
            seq: head.seq,
            updated_seq: head.updated_seq,
            timestamp: head.timestamp,
            body,
        })
    }
}

/// RULE 7: the session's capabilities. Each member is overwritten by the events that carry it;
/// a new meta entry is made only when something changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_mode_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_modes: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_models: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_tools: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_commands: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_options: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slash_commands: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<RawJson>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// RULE 1 and RULE 8: user or assistant text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// `plan` or `error` for assistant text of those kinds; absent for ordinary text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Chunks are still being appended (RULE 2: no final text yet).
    #[serde(default, skip_serializing_if = "is_false")]
    pub streaming: bool,
    /// Text the agent wrote on the user's behalf (`isSynthetic`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub synthetic: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<u64>,
}

/// RULE 9: reasoning. `content` is what the provider shows of it (for Codex, the summary);
/// `rawContent` the raw reasoning where the provider gives it apart (Codex's, marked
/// `codex.rawReasoning`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Thought {
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub streaming: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl ToolStatus {
    pub fn of(s: &str) -> ToolStatus {
        match s {
            "completed" => ToolStatus::Completed,
            "failed" => ToolStatus::Failed,
            "cancelled" => ToolStatus::Cancelled,
            _ => ToolStatus::Running,
        }
    }
}

/// RULE 3 and RULE 4: a tool call, with everything later events say about it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub call_id: String,
    /// Absent when the call was only seen completing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<RawJson>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Started while another call of the same agent was running.
    #[serde(default, skip_serializing_if = "is_false")]
    pub parallel: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// The provider's duration, or `endedAt - startedAt` when both are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The last `tool_update`: time so far and status word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// The `seq` of the `tool_completion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<ToolPermission>,
    /// A permission for the call was refused (counted once in the totals).
    #[serde(default, skip_serializing_if = "is_false")]
    pub denied: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_changes: Vec<FileChangeRec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<Box<Subagent>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Box<Task>>,
}

impl ToolCall {
    pub fn new(call_id: String) -> ToolCall {
        ToolCall {
            call_id,
            tool_name: None,
            kind: None,
            title: None,
            status: ToolStatus::Running,
            input: None,
            output: None,
            content: None,
            is_error: false,
            locations: None,
            mcp_server: None,
            mcp_tool: None,
            message_id: None,
            model: None,
            parallel: false,
            started_at: None,
            ended_at: None,
            duration_ms: None,
            elapsed_ms: None,
            progress: None,
            completed_seq: None,
            permission: None,
            denied: false,
            file_changes: Vec::new(),
            subagent: None,
            task: None,
        }
    }
}

/// The permission request of a call and how it was answered.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolPermission {
    pub request_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRec {
    pub path: String,
    pub change_kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Only on turn-level changes (those no call is known for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The diff covers the turn so far and replaced earlier cumulative diffs of the path.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cumulative: bool,
    pub seq: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subagent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_resume: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_count: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<RawJson>,
}

/// RULE 5 and RULE 6: a permission prompt and its answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionEntry {
    pub request_id: String,
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestions: Option<RawJson>,
    /// The answers offered (ACP `options`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<RawJson>,
    /// Absent while unanswered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<PermissionAnswer>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionAnswer {
    pub decision: String,
    pub allowed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupt: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_id: Option<String>,
    pub seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// RULE 10: one plan, whole (each update is a new entry; the latest is in `pending`). Plan
/// step events (AceClaw's) update the plan they name in place: a step's `status` and
/// `stepId`; the plan's own events its `status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub entries: RawJson,
    /// The provider's id of the plan (AceClaw's `planId`): step events of another plan leave
    /// this one as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// The plan's own status, as its latest plan-level event said it (AceClaw's
    /// `stream.plan_replanned`, `_escalated`, `_completed`: `replanned`, `escalated`,
    /// `completed` or `failed`); absent until one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

/// RULE 11.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModeChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_mode_id: Option<String>,
    pub new_mode_id: String,
}

/// An `error` event (API error, retry).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorEntry {
    pub message: String,
    pub severity: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub will_retry: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delay_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A `context_compaction`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    pub trigger: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

// ---------------------------------------------------------------------------------------------
// The tree.

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tree {
    pub sessions: Vec<SessionNode>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNode {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The last `session_status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The title `session_info` gave it last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub first_seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    Running,
    Completed,
    Failed,
    /// An interrupt or a cancel ended it ([`crate::event::cancelled_turn`]).
    Cancelled,
    /// A new turn began before this one completed.
    Incomplete,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// From 1 within the session.
    pub index: u32,
    pub status: TurnStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub start_seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_seq: Option<u64>,
    /// The first time carried by an event of the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The time of its `turn_complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_api_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<u64>,
    /// The turn's share of the session's cost.
    #[serde(
        default,
        deserialize_with = "exact::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub cost_usd: Option<f64>,
    /// The turn's tokens (see the totals rules); an estimate while it runs.
    pub tokens: Tokens,
    /// Tool calls made in the turn, subagents' included.
    pub tools: u64,
    pub children: Vec<Node>,
    /// File changes no call is known for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_changes: Vec<FileChangeRec>,
}

/// A node of the tree: an entry, and for a call that started a subagent, the subagent's nodes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// Index into `entries`.
    pub entry: u32,
    #[serde(rename = "type")]
    pub ty: EntryType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "children"
    )]
    pub children: Vec<Node>,
}

/// A node's children, each read from its raw text by a parse of its own: subagents nest
/// without limit, and a single parse stops at 128 levels (a tree 60 subagents deep).
fn children<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Node>, D::Error> {
    let raw: Vec<Box<RawValue>> = Vec::deserialize(d)?;
    raw.iter()
        .map(|r| {
            serde_json::from_str(r.get())
                .map_err(|e| serde::de::Error::custom(crate::wire::without_position(&e)))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Totals.

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub reasoning_tokens: u64,
}

impl Tokens {
    pub fn add(&mut self, o: &Tokens) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cache_creation_tokens += o.cache_creation_tokens;
        self.reasoning_tokens += o.reasoning_tokens;
    }
    pub fn plus(mut self, o: &Tokens) -> Tokens {
        self.add(o);
        self
    }
    pub fn minus(&self, o: &Tokens) -> Tokens {
        Tokens {
            input_tokens: self.input_tokens.saturating_sub(o.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(o.output_tokens),
            cache_read_tokens: self.cache_read_tokens.saturating_sub(o.cache_read_tokens),
            cache_creation_tokens: self
                .cache_creation_tokens
                .saturating_sub(o.cache_creation_tokens),
            reasoning_tokens: self.reasoning_tokens.saturating_sub(o.reasoning_tokens),
        }
    }
    /// Whether any count is below `o`'s (a running total that went back: a new run).
    pub fn below(&self, o: &Tokens) -> bool {
        self.input_tokens < o.input_tokens
            || self.output_tokens < o.output_tokens
            || self.cache_read_tokens < o.cache_read_tokens
            || self.cache_creation_tokens < o.cache_creation_tokens
            || self.reasoning_tokens < o.reasoning_tokens
    }
    pub fn is_zero(&self) -> bool {
        *self == Tokens::default()
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Every session together.
    pub all: Counts,
    pub sessions: Vec<SessionTotals>,
    /// Every session together, by model.
    pub models: Vec<ModelTotals>,
}

/// What is counted per session (and for all sessions together).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Turns completed (`turn_complete`).
    pub turns: u64,
    pub failed_turns: u64,
    #[serde(flatten)]
    pub tokens: Tokens,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub duration_ms: u64,
    pub duration_api_ms: u64,
    pub tools: u64,
    pub tools_by_kind: BTreeMap<String, u64>,
    pub failed_tools: u64,
    pub cancelled_tools: u64,
    pub parallel_tools: u64,
    pub subagents: u64,
    pub errors: u64,
    pub warnings: u64,
    pub permission_requests: u64,
    pub permission_denials: u64,
    pub compactions: u64,
    pub file_changes: u64,
    pub hooks: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.turns += o.turns;
        self.failed_turns += o.failed_turns;
        self.tokens.add(&o.tokens);
        self.cost_usd = add_cost(self.cost_usd, o.cost_usd);
        self.duration_ms += o.duration_ms;
        self.duration_api_ms += o.duration_api_ms;
        self.tools += o.tools;
        for (k, n) in &o.tools_by_kind {
            *self.tools_by_kind.entry(k.clone()).or_default() += n;
        }
        self.failed_tools += o.failed_tools;
        self.cancelled_tools += o.cancelled_tools;
        self.parallel_tools += o.parallel_tools;
        self.subagents += o.subagents;
        self.errors += o.errors;
        self.warnings += o.warnings;
        self.permission_requests += o.permission_requests;
        self.permission_denials += o.permission_denials;
        self.compactions += o.compactions;
        self.file_changes += o.file_changes;
        self.hooks += o.hooks;
    }
}

pub fn add_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTotals {
    pub session_id: String,
    #[serde(flatten)]
    pub counts: Counts,
    pub models: Vec<ModelTotals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Context>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ModelTotals {
    pub model: String,
    #[serde(flatten)]
    pub tokens: Tokens,
    #[serde(
        default,
        deserialize_with = "exact::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub web_search_requests: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
}

/// Context window use: the size of the last main-agent request, and the window when known.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    pub used_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_tokens: Option<u64>,
    pub seq: u64,
}

// ---------------------------------------------------------------------------------------------
// Pending.

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub sessions: Vec<SessionPending>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPending {
    pub session_id: String,
    /// The index of the turn still running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PendingPlan>,
    /// Tool calls started and not completed.
    pub tools: Vec<PendingTool>,
    /// Permission requests not answered.
    pub permissions: Vec<PendingPermission>,
    /// Questions to the user not answered: running calls of tool kind `ask`, and permission
    /// requests of kind `ask` that no such call made (Codex's `requestUserInput`), until their
    /// answer (`callId` is the request's `toolUseId`, else its `requestId`).
    pub questions: Vec<PendingTool>,
    /// The last `rate_limit_update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingPlan {
    pub entry: u32,
    pub entries: RawJson,
    /// The plan entry's `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingTool {
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
    pub entry: u32,
    pub seq: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingPermission {
    pub request_id: String,
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub entry: u32,
    pub seq: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secondary: Option<RawJson>,
    pub seq: u64,
}

// ---------------------------------------------------------------------------------------------
// Bookkeeping.

/// What later events depend on that is not for display: kept so that a snapshot resumes
/// exactly.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cursor {
    /// The session events without a `sessionId` are attributed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Events without a `sessionId` waiting for the next session to name itself (a prompt read
    /// before the agent answered with its session id).
    pub unattributed: Vec<Parked>,
    pub sessions: Vec<SessionCursor>,
    /// The ids of the events applied, so that none is applied twice.
    #[serde(default)]
    pub ids: Ids,
}

/// The ids of the events applied, kept as their 64-bit hashes ([`crate::ids::Applied`]) and
/// written as those hashes sorted, in base64 ([`crate::ids::to_base64`]): 10.7 characters an
/// event, the same text however the events were fed.
#[derive(Debug, Clone, Default)]
pub struct Ids(pub crate::ids::Applied);

impl Serialize for Ids {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::ids::to_base64(&self.0.sorted()))
    }
}

impl<'de> Deserialize<'de> for Ids {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        let hashes = crate::ids::from_base64(&text)
            .ok_or_else(|| serde::de::Error::custom("ids: not the base64 of 8-byte hashes"))?;
        Ok(Ids(crate::ids::Applied::from_hashes(hashes)))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parked {
    pub seq: u64,
    pub event: RawJson,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCursor {
    pub session_id: String,
    /// Per agent (main agent, each subagent): the last entry of the current turn, for RULE 1.
    pub scopes: Vec<Scope>,
    pub account: Account,
    /// The provider's own position of the last event applied (AceClaw's bridge `eventId`):
    /// events of the session at or before it are skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_id: Option<u64>,
    /// Of the events of `lastEventId`'s line, the index (in their `id`) of the last applied.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub last_event_part: u32,
    /// The subagents running that no call announced (AceClaw's `stream.subagent.start`
    /// names none: its nesting is positional), outermost first, by `callId`: the session's
    /// events without a `parentCallId` are the last one's until its `subagent_complete`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<String>,
    /// Plan events that name a plan the session has not had yet (RULE 4: AceClaw's step and
    /// plan events before their `plan_created`), oldest first, at most
    /// [`MAX_HELD_PLAN_EVENTS`]: applied, in order, when a plan of their `planId` arrives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan_events: Vec<HeldPlanEvent>,
    /// The running turn was started by a `turn_start` (its own or an inferred one), not opened
    /// by its first event: a resumed converter infers no other start for it
    /// ([`super::converter_start`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub turn_started: bool,
}

/// Plan events held per session at most; one more drops the oldest.
pub const MAX_HELD_PLAN_EVENTS: usize = 64;

/// A plan event held until its plan arrives: what it changes, nothing else.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HeldPlanEvent {
    pub seq: u64,
    /// The plan it names.
    pub plan_id: String,
    /// The step it is about (`task_update` `taskType` `plan_step`); absent for the plan's own
    /// event (`taskType` `plan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<HeldStep>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// The step a held step event names: by index (from 1), else by its id.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HeldStep {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_index: Option<u64>,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// RULE 1/2/9 state of one agent in the current turn.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
    /// The last entry of this agent in the current turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_entry: Option<u32>,
    /// The last entry is receiving chunks; they start at byte `streamStart` of its content.
    #[serde(default, skip_serializing_if = "is_false")]
    pub streaming: bool,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stream_start: u64,
    /// The streamed entry's chunks are cumulative: one resent the text so far and extended it.
    /// Only then is a chunk equal to the text so far a resend (RULE 1); in a stream of deltas
    /// it is more text ("ha", "ha", "ha" is "hahaha").
    #[serde(default, skip_serializing_if = "is_false")]
    pub cumulative: bool,
    /// The message being streamed (`stream_delta` messageStart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

/// Token and cost accounting of one session (see the totals rules in `totals.rs`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    /// turn_complete `costUsd`: the current run's last report, and earlier runs' sum.
    #[serde(
        default,
        deserialize_with = "exact::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub run_cost: Option<f64>,
    #[serde(default, deserialize_with = "exact::one")]
    pub base_cost: f64,
    /// turn_complete `durationApiMs`: the current run's last report (Claude Code's is the
    /// API time of its process so far, not the turn's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_api_ms: Option<u64>,
    /// Increases of the cost during the running turn.
    #[serde(
        default,
        deserialize_with = "exact::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub turn_cost: Option<f64>,
    /// turn_complete `modelUsage`: the current run's last report, and earlier runs' sums.
    pub run_models: Vec<ModelTotals>,
    pub base_models: Vec<ModelTotals>,
    /// usage_update `total`: the current run's last report, and earlier runs' sum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_total: Option<Tokens>,
    pub base_total: Tokens,
    /// Turns counted from their own usage (no running totals reported).
    pub extra: Tokens,
    /// Per-model attribution of `extra` and of `total` increments.
    pub extra_models: Vec<ModelTotals>,
    /// Increments of `total` during the open turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_total: Option<Tokens>,
    /// Per-request usage since the last turn_complete, one per `messageId`.
    pub live: Vec<LiveUsage>,
    /// The cost of turns counted from their requests' own costs (`stepUsage.cost`: no
    /// running total of the cost reported).
    #[serde(
        default,
        deserialize_with = "exact::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub extra_cost: Option<f64>,
    /// The shipped price of the open turn's `total` increments, when no cost is reported.
    #[serde(
        default,
        deserialize_with = "exact::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub turn_priced: Option<f64>,
    /// The model of the last request, when events name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_model: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveUsage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    pub tokens: Tokens,
    /// The request's own cost (`stepUsage.cost`), when reported.
    #[serde(
        default,
        deserialize_with = "exact::opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub cost_usd: Option<f64>,
}

// ---------------------------------------------------------------------------------------------
// The index: lookups by id, rebuilt from the entries and the tree after loading.

#[derive(Debug, Clone, Default)]
pub struct Index {
    pub sessions: HashMap<String, usize>,
    pub per: Vec<SessionIndex>,
    /// The last session looked up: most events name the same one as the event before.
    pub last: Option<(String, usize)>,
}

#[derive(Debug, Clone, Default)]
pub struct SessionIndex {
    /// callId → tool_call entry.
    pub calls: HashMap<String, u32>,
    /// requestId → permission_request entry.
    pub requests: HashMap<String, u32>,
    /// taskId → callId.
    pub tasks: HashMap<String, String>,
    /// callId → where its node is: turn position and the path of child positions.
    pub nodes: HashMap<String, (u32, Vec<u32>)>,
    /// The latest meta entry.
    pub meta: Option<u32>,
    /// planId → the latest plan entry of that id.
    pub plans: HashMap<String, u32>,
}

impl State {
    /// The turn of session `session` that the event numbered `seq` ended, if it ended one.
    pub fn turn_ended_at(&self, session: &str, seq: u64) -> Option<&Turn> {
        let s = *self.idx.sessions.get(session)?;
        self.tree.sessions[s]
            .turns
            .iter()
            .rev()
            .find(|t| t.end_seq == Some(seq))
    }

    pub fn new() -> State {
        State {
            version: STATE_VERSION,
            ..State::default()
        }
    }

    /// Reads a snapshot written by `reduce`.
    pub fn from_json(text: &str) -> anyhow::Result<State> {
        let mut st: State = serde_json::from_str(text)?;
        if st.version != STATE_VERSION {
            anyhow::bail!(
                "state version {} is not supported (this insights writes version {STATE_VERSION})",
                st.version
            );
        }
        st.rebuild_index()?;
        Ok(st)
    }

    /// Rebuilds the lookup index from the entries and the tree.
    pub fn rebuild_index(&mut self) -> anyhow::Result<()> {
        let n = self.tree.sessions.len();
        let ids = |v: Vec<&String>| v.into_iter().cloned().collect::<Vec<_>>();
        let tree: Vec<_> = ids(self.tree.sessions.iter().map(|s| &s.session_id).collect());
        let totals = ids(self.totals.sessions.iter().map(|s| &s.session_id).collect());
        let pending = ids(self
            .pending
            .sessions
            .iter()
            .map(|s| &s.session_id)
            .collect());
        let cursor = ids(self.cursor.sessions.iter().map(|s| &s.session_id).collect());
        if totals != tree || pending != tree || cursor != tree {
            anyhow::bail!("the sessions of tree, totals, pending and cursor differ");
        }
        let mut idx = Index {
            per: vec![SessionIndex::default(); n],
            ..Index::default()
        };
        for (i, id) in tree.into_iter().enumerate() {
            idx.sessions.insert(id, i);
        }
        for (i, e) in self.entries.iter().enumerate() {
            let Some(&s) = idx.sessions.get(&e.session_id) else {
                anyhow::bail!("entry {i} names a session the tree does not have");
            };
            let per = &mut idx.per[s];
            match &e.body {
                Body::ToolCall(t) => {
                    per.calls.insert(t.call_id.clone(), i as u32);
                    if let Some(task) = &t.task {
                        per.tasks.insert(task.task_id.clone(), t.call_id.clone());
                    }
                }
                Body::PermissionRequest(p) => {
                    per.requests.insert(p.request_id.clone(), i as u32);
                }
                Body::Meta(_) => per.meta = Some(i as u32),
                Body::Plan(Plan {
                    plan_id: Some(id), ..
                }) => {
                    per.plans.insert(id.clone(), i as u32);
                }
                _ => {}
            }
        }
        fn walk(nodes: &[Node], turn: u32, path: &mut Vec<u32>, out: &mut SessionIndex) {
            for (k, node) in nodes.iter().enumerate() {
                path.push(k as u32);
                if let Some(c) = &node.call_id {
                    out.nodes.insert(c.clone(), (turn, path.clone()));
                }
                walk(&node.children, turn, path, out);
                path.pop();
            }
        }
        for (s, sess) in self.tree.sessions.iter().enumerate() {
            for (t, turn) in sess.turns.iter().enumerate() {
                walk(&turn.children, t as u32, &mut Vec::new(), &mut idx.per[s]);
            }
        }
        let max = self.entries.len() as u32;
        let bad = |e: u32| e >= max;
        for p in &self.pending.sessions {
            if p.tools.iter().any(|t| bad(t.entry))
                || p.permissions.iter().any(|r| bad(r.entry))
                || p.plan.as_ref().is_some_and(|x| bad(x.entry))
            {
                anyhow::bail!("pending names an entry the state does not have");
            }
        }
        self.idx = idx;
        Ok(())
    }
}
