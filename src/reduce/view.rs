//! A borrowed, read-only view of one InsightsEvent line: the union of every member the reducer
//! reads, whatever the event type. Members are only ever InsightsEvent fields (see
//! `src/event.rs`), never a provider's wire fields; `extensions` and `raw` are not read at all.
//! Arbitrary JSON (tool input, output, plan entries, …) stays unparsed as `&RawValue` until the
//! reducer decides to keep it.

use crate::event::Pairs;
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

pub type S<'a> = Option<Cow<'a, str>>;
pub type J<'a> = Option<&'a RawValue>;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Ev<'a> {
    #[serde(borrow)]
    pub event: Cow<'a, str>,
    pub seq: Option<u64>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub timestamp: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub provider: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub session_id: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub turn_id: S<'a>,

    // Members several types share.
    #[serde(borrow, deserialize_with = "borrowed")]
    pub text: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub kind: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub parent_call_id: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub model: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub message_id: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub call_id: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub tool_name: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub title: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub status: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub message: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub summary: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub description: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub agent_type: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub request_id: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub tool_use_id: S<'a>,
    #[serde(borrow)]
    pub input: J<'a>,
    #[serde(borrow)]
    pub output: J<'a>,
    #[serde(borrow)]
    pub content: J<'a>,
    #[serde(borrow)]
    pub locations: Option<Vec<Cow<'a, str>>>,
    pub is_error: bool,
    pub duration_ms: Option<u64>,
    #[serde(borrow)]
    pub usage: J<'a>,

    // user_input
    pub is_synthetic: bool,
    #[serde(borrow)]
    pub images: Option<Vec<&'a RawValue>>,

    // tool_invocation
    #[serde(borrow, deserialize_with = "borrowed")]
    pub mcp_server: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub mcp_tool: S<'a>,

    // session_init
    #[serde(borrow, deserialize_with = "borrowed")]
    pub reasoning_effort: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub cwd: S<'a>,
    #[serde(borrow)]
    pub available_tools: J<'a>,
    #[serde(borrow)]
    pub mcp_servers: J<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub permission_mode: S<'a>,
    #[serde(borrow)]
    pub account: J<'a>,
    #[serde(borrow)]
    pub slash_commands: J<'a>,
    #[serde(borrow)]
    pub available_models: J<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub version: S<'a>,
    #[serde(borrow)]
    pub agents: J<'a>,
    #[serde(borrow)]
    pub skills: J<'a>,

    // turn_complete
    #[serde(borrow, deserialize_with = "borrowed")]
    pub subtype: S<'a>,
    pub errors: Option<Vec<String>>,
    pub cost_usd: Option<f64>,
    pub duration_api_ms: Option<u64>,
    pub num_turns: Option<u64>,
    #[serde(borrow)]
    pub model_usage: Option<Pairs<'a, ModelUsage>>,
    #[serde(borrow)]
    pub permission_denials: Option<Vec<Denial<'a>>>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub stop_reason: S<'a>,

    // context_compaction
    #[serde(borrow, deserialize_with = "borrowed")]
    pub trigger: S<'a>,
    pub pre_tokens: Option<u64>,
    pub post_tokens: Option<u64>,

    // permission_request / permission_response
    #[serde(borrow, deserialize_with = "borrowed")]
    pub tool_kind: S<'a>,
    #[serde(borrow)]
    pub tool_input: J<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub reason: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub blocked_path: S<'a>,
    #[serde(borrow)]
    pub suggestions: J<'a>,
    #[serde(borrow)]
    pub options: J<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub decision: S<'a>,
    pub allowed: Option<bool>,
    pub interrupt: bool,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub option_id: S<'a>,

    // config_options, available_commands, session_mode
    #[serde(borrow)]
    pub config_options: J<'a>,
    #[serde(borrow)]
    pub available_commands: J<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub current_mode_id: S<'a>,
    #[serde(borrow)]
    pub available_modes: J<'a>,

    // stream_delta
    #[serde(borrow, deserialize_with = "borrowed")]
    pub text_delta: S<'a>,

    // usage_update
    pub step_usage: Option<StepUsage>,
    pub total: Option<TokenUsage>,
    pub context_window: Option<u64>,
    pub context_tokens: Option<u64>,

    // plan_update
    #[serde(borrow)]
    pub entries: J<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub explanation: S<'a>,

    // tool_update
    pub elapsed_ms: Option<u64>,

    // file_change
    #[serde(borrow, deserialize_with = "borrowed")]
    pub path: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub change_kind: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub move_path: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub diff: S<'a>,
    pub cumulative: bool,

    // error
    #[serde(borrow, deserialize_with = "borrowed")]
    pub severity: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub code: S<'a>,
    pub http_status: Option<u64>,
    pub will_retry: Option<bool>,
    pub attempt: Option<u64>,
    pub max_retries: Option<u64>,
    pub retry_delay_ms: Option<u64>,

    // task_update
    #[serde(borrow, deserialize_with = "borrowed")]
    pub task_id: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub phase: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub task_type: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub last_tool_name: S<'a>,

    // subagent_spawn / subagent_complete
    pub is_resume: bool,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub resume_agent_id: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub prompt: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub agent_id: S<'a>,
    pub total_tokens: Option<u64>,
    pub tool_use_count: Option<u64>,

    // rate_limit_update
    #[serde(borrow)]
    pub primary: J<'a>,
    #[serde(borrow)]
    pub secondary: J<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub plan_type: S<'a>,
    #[serde(borrow, deserialize_with = "borrowed")]
    pub rate_limit_type: S<'a>,

    /// The line itself (not a member): kept for events parked until their session is known.
    #[serde(skip)]
    pub line: &'a str,
}

/// `stepUsage`: the four keys the event model documents. Other keys are the provider's and
/// are not read.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct StepUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
}

impl StepUsage {
    pub fn is_empty(&self) -> bool {
        self.input_tokens.is_none()
            && self.output_tokens.is_none()
            && self.cache_read_input_tokens.is_none()
            && self.cache_creation_input_tokens.is_none()
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
    #[serde(borrow, deserialize_with = "borrowed")]
    pub tool_use_id: S<'a>,
}

impl<'a> Ev<'a> {
    /// Parses one InsightsEvent line.
    pub fn parse(line: &'a str) -> serde_json::Result<Ev<'a>> {
        let mut ev: Ev = serde_json::from_str(line)?;
        ev.line = line;
        Ok(ev)
    }

    /// The session id, `""` when the event names none.
    pub fn session(&self) -> &str {
        self.session_id.as_deref().unwrap_or("")
    }

    pub fn parent(&self) -> Option<&str> {
        self.parent_call_id.as_deref().filter(|p| !p.is_empty())
    }
}

/// An optional string member, borrowed from the line when it has no escapes. (serde's
/// `#[serde(borrow)]` borrows only a field whose type is literally `Cow<str>`; through
/// `Option` or an alias it would allocate every string.) Errors as `Option<String>` would.
fn borrowed<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<S<'a>, D::Error> {
    struct Str<'a>(Cow<'a, str>);
    impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_str(StrVisitor).map(Str)
        }
    }
    struct StrVisitor;
    impl<'a> Visitor<'a> for StrVisitor {
        type Value = Cow<'a, str>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'a str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v))
        }
    }
    Ok(Option::<Str<'a>>::deserialize(d)?.map(|s| s.0))
}

/// A borrowed string member as an owned `Option<String>`.
pub fn own(s: &S) -> Option<String> {
    s.as_deref().map(str::to_owned)
}
