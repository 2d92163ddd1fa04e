//! Providers: one file per agent wire format, each with a detection rule and a converter.
//!
//! Adding a provider is one new file here plus one line in [`PROVIDERS`] (and one in
//! [`Memory`] if it remembers anything). A converter maps one line at a time; what it needs
//! from earlier lines of the stream (a request for its answer, a call for its update) it keeps
//! in its own memory ([`memo`]), bounded and the same on any number of threads.

use crate::detect::Probe;
use crate::event::{Body, Extensions, Str};
use std::borrow::Cow;

pub mod aceclaw;
pub mod acp;
pub mod amp;
pub mod claude;
pub mod codex;
pub mod codex_rollout;
pub mod cursor;
pub mod edits;
pub mod gemini;
pub mod gemini_chat;
pub mod held;
pub mod jsonrpc;
pub mod memo;
pub mod models;
pub mod opencode;
pub mod opencode_db;
pub mod qwen;
pub mod qwen_chat;
pub mod talk;
pub mod turns;
pub mod whole;

/// One supported wire format.
pub struct Provider {
    /// The `provider` value of the events (and the `--from` name).
    pub name: &'static str,
    /// The agent's name for people (`replay`).
    pub display: &'static str,
    /// The provider name CC-Insights knows that this format follows (`--compat cc-insights`):
    /// `claude` for the Claude-compatible formats, `acp` for the others it has no name for.
    pub cc_name: &'static str,
    /// What `--help` says about it.
    pub about: &'static str,
    /// Whether it speaks JSON-RPC (see detection rule 2b).
    pub jsonrpc: bool,
    /// Whether a line (already known to be a JSON object) is this provider's, by its shape.
    pub sniff: fn(&Probe) -> bool,
    /// Maps one line to events, or says why it cannot.
    pub convert: for<'a> fn(&'a str, &Probe<'a>, &mut Cx<'a>) -> Result<(), Unmapped>,
    /// What `reduce` and `replay` must know of the format that its events do not say.
    pub reading: Reading,
    /// What the wire format carries that `insights` maps to typed events.
    pub caps: Capabilities,
    /// Whether its turns' starts are inferred ([`turns`]): the format ends turns but does
    /// not start them.
    pub infers_turns: bool,
    /// Whether its messages come as deltas only, never whole ([`whole`]): the converter
    /// writes each message's whole text, inferred, where it ends.
    pub whole_messages: bool,
    /// Ends what an input left open, after its last line ([`crate::convert::Converter::close_input`]):
    /// a format whose last turn no line ends (Gemini CLI's chat files). Called with the
    /// stream's memory and the input's last line number in [`Cx::line`], it pushes the events
    /// that end one session's open part and forgets it, setting the `Cx`'s session, time and
    /// anchor (the events' ids are `anchor:N`: it must be unique in the stream); it is called
    /// again until it pushes nothing. `None` for the formats whose lines end all they open.
    pub at_end: Option<AtEnd>,
    /// How `insights run` drives it ([`talk`]); `None` for formats it only reads.
    pub talk: Option<&'static talk::Speaker>,
}

/// A provider's [`Provider::at_end`].
pub type AtEnd = for<'a> fn(&mut Cx<'a>);

/// How the commands that read events (`reduce`, `replay`) must read a provider's: the few
/// things its events do not say themselves. Declared on the provider, so that no command names
/// one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// Its events carry a position in its own stream (`extensions`, `reduce`'s cursor) and the
    /// plan-step extensions, which `reduce` reads (AceClaw's bridge numbers its events).
    pub event_cursor: bool,
    /// Its subagents are announced by no call: the events between `subagent_spawn` and
    /// `subagent_complete` are the subagent's by their place (AceClaw).
    pub positional_subagents: bool,
    /// Its thinking may carry the extension that marks raw reasoning apart from the summary
    /// (Codex).
    pub raw_reasoning: bool,
    /// Its `turn_complete` cost, `modelUsage` and `durationApiMs` are running totals of the
    /// agent process, a turn's share being their increase; when false they are the turn's own
    /// and add up (ACP answers each prompt with that prompt's usage).
    pub running_turn_totals: bool,
}

impl Reading {
    /// What most providers are: nothing special, running totals on `turn_complete`.
    pub const PLAIN: Reading = Reading {
        event_cursor: false,
        positional_subagents: false,
        raw_reasoning: false,
        running_turn_totals: true,
    };
}

/// How to read the events of `provider` (a provider's `name`); [`Reading::PLAIN`] for a name
/// no provider has.
pub fn reading(provider: &str) -> Reading {
    by_name(provider).map_or(Reading::PLAIN, |p| p.reading)
}

/// A provider's capability matrix (the adapter contract's list), as `insights providers`
/// prints it. Each entry says that the wire format carries the thing and that `insights`
/// maps it to typed events, not that every run of the agent produces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// Pieces of a message while it is written (`stream_delta`).
    pub streaming_deltas: bool,
    /// Tool calls (`tool_invocation`).
    pub tool_calls: bool,
    /// Tool results (`tool_completion`).
    pub tool_results: bool,
    /// The model's reasoning (`text` kind thinking, thinking deltas).
    pub reasoning: bool,
    /// The agent's state as it works (`session_status`: running, idle, compacting, …).
    pub status_updates: bool,
    /// Permission requests or answers (`permission_request`, `permission_response`).
    pub permissions: bool,
    /// Questions to the user (tool kind `ask`, user-input requests).
    pub questions: bool,
    /// Files added, changed or deleted (`file_change`).
    pub file_changes: bool,
    /// Shell commands (tool kind `execute`).
    pub command_exec: bool,
    /// MCP tools (tool kind `mcp`).
    pub mcp: bool,
    /// Token counts (`usage_update`, `turn_complete` usage).
    pub usage: bool,
    /// Money spent.
    pub cost: bool,
    /// Subagents (`subagent_spawn`, `subagent_complete`).
    pub subagents: bool,
    /// Plans and todo lists (`plan_update`).
    pub plans: bool,
}

impl Capabilities {
    /// The entries in table order: label, JSON key, value.
    pub fn entries(&self) -> [(&'static str, &'static str, bool); 14] {
        [
            ("streaming deltas", "streamingDeltas", self.streaming_deltas),
            ("tool calls", "toolCalls", self.tool_calls),
            ("tool results", "toolResults", self.tool_results),
            ("reasoning", "reasoning", self.reasoning),
            ("status updates", "statusUpdates", self.status_updates),
            ("permissions", "permissions", self.permissions),
            ("questions", "questions", self.questions),
            ("file changes", "fileChanges", self.file_changes),
            ("command exec", "commandExec", self.command_exec),
            ("MCP", "mcp", self.mcp),
            ("usage", "usage", self.usage),
            ("cost", "cost", self.cost),
            ("subagents", "subagents", self.subagents),
            ("plans", "plans", self.plans),
        ]
    }
}

/// The registry, in detection order: the first provider whose `sniff` accepts a line wins.
pub static PROVIDERS: &[Provider] = &[
    // The Claude-like formats before Claude, each with a narrow rule of its own.
    qwen::PROVIDER,
    amp::PROVIDER,
    cursor::PROVIDER,
    opencode::PROVIDER,
    claude::PROVIDER,
    codex::PROVIDER,
    gemini::PROVIDER,
    // Before ACP: the answer to `agent.prompt` has ACP's `stopReason` too.
    aceclaw::PROVIDER,
    acp::PROVIDER,
];

/// The `provider` of events made from lines no provider recognised.
pub const UNKNOWN: &str = "unknown";

pub fn by_name(name: &str) -> Option<&'static Provider> {
    PROVIDERS.iter().find(|p| p.name == name)
}

/// Why a line that parsed as JSON became a `raw` event.
#[derive(Debug)]
pub struct Unmapped(pub String);

impl From<serde_json::Error> for Unmapped {
    fn from(e: serde_json::Error) -> Self {
        Unmapped(format!(
            "unexpected shape: {}",
            crate::wire::without_position(&e)
        ))
    }
}

/// The events one input line produced, and what they share.
#[derive(Default)]
pub struct Cx<'a> {
    pub session_id: Option<Str<'a>>,
    /// The provider's own time for the line (RFC 3339), if it carries one.
    pub timestamp: Option<Str<'a>>,
    /// The provider's time for the line when it is not an RFC 3339 date-time (set by
    /// [`Cx::wire_time`]): kept in each event's extensions as `insights.invalidTimestamp`.
    pub bad_time: Option<Str<'a>>,
    pub turn_id: Option<Str<'a>>,
    /// The turn of some of the line's events where it is not `turn_id`: `(index in events,
    /// turn id)`, in ascending order. A line that records several turns has them (a Codex
    /// `thread/resume` answer, whose history is the thread's turns).
    pub event_turns: Vec<(usize, Str<'a>)>,
    /// A provider id unique to this line (Claude's `uuid`); event ids are built from it.
    pub anchor: Option<Str<'a>>,
    pub events: Vec<(Body<'a>, Extensions<'a>)>,
    /// The input line's number (what [`memo::Memo::insert`] records).
    pub line: u64,
    /// What the providers remember of the stream ([`Cx::memory`]).
    pub memory: Option<Box<Memory>>,
    /// The line's converter starts and ends its turns itself, though its provider's turn
    /// starts are inferred ([`Provider::infers_turns`]): Gemini CLI's chat files, read by the
    /// `gemini` provider, whose header names the session lines before the first prompt
    /// starts a turn. [`turns::infer`] leaves such a line alone.
    pub own_turns: bool,
    /// Which of the first 64 events [`turns::infer`] added (bit `i` for `events[i]`): they
    /// take no number in the line's event ids.
    pub inserted: u64,
}

crate::providers::memo::remember! {
    /// What each provider remembers of the stream: one field per provider that keeps
    /// anything, its type declared in the provider's own module.
    pub struct Memory {
        pub acp: acp::Memory,
        pub aceclaw: aceclaw::Memory,
        pub claude: claude::Memory,
        pub codex: codex::Memory,
        pub codex_rollout: codex_rollout::Memory,
        pub gemini: gemini::Memory,
        pub gemini_chat: gemini_chat::Memory,
        pub qwen: qwen::Memory,
        pub qwen_chat: qwen_chat::Memory,
        pub opencode: opencode::Memory,
        pub amp: amp::Memory,
        pub models: models::Memory,
        pub turns: turns::Memory,
        pub whole: whole::Memory,
        pub held: held::Held,
    }
}

impl<'a> Cx<'a> {
    /// What the providers remember of the stream.
    pub fn memory(&mut self) -> &mut Memory {
        self.memory.get_or_insert_with(Box::default)
    }

    /// Sets the line's time from the provider's time text: an RFC 3339 date-time
    /// ([`crate::time::parse`]) becomes the events' `timestamp`; any other text (an impossible
    /// date such as `2026-02-31`) is not passed off as one: the events get the time the line
    /// was read (unless `--no-timestamp`) and the text in `insights.invalidTimestamp`.
    pub fn wire_time(&mut self, t: Option<Str<'a>>) {
        match t {
            Some(t) if crate::time::looks_rfc3339(&t) => self.timestamp = Some(t),
            other => self.bad_time = other,
        }
    }

    /// Adds an event; returns its extensions for the caller to fill.
    pub fn push(&mut self, body: impl Into<Body<'a>>) -> &mut Extensions<'a> {
        self.events.push((body.into(), Extensions::default()));
        &mut self.events.last_mut().expect("just pushed").1
    }
}

/// Inserts an event the converter inferred (`insights.inferred`) at `at` among a line's
/// `events`, and notes it in `inserted` ([`Cx::inserted`]): it takes no number in the line's
/// event ids, so the others keep theirs. Returns its extensions.
pub fn insert_inferred<'a, 'e>(
    events: &'e mut Vec<(Body<'a>, Extensions<'a>)>,
    inserted: &mut u64,
    at: usize,
    body: Body<'a>,
) -> &'e mut Extensions<'a> {
    events.insert(at, (body, Extensions::default()));
    if at < 64 {
        let low = *inserted & ((1u64 << at) - 1);
        *inserted = low | ((*inserted & !((1u64 << at) - 1)) << 1) | (1u64 << at);
    }
    let ext = &mut events[at].1;
    ext.put("insights.inferred", true);
    ext
}

/// Splits an MCP tool name `mcp__<server>__<tool>` into server and tool.
pub fn split_mcp(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    Some((server, tool))
}

/// An owned or borrowed sub-slice helper: keeps a borrow when the source is borrowed.
pub fn sub<'a>(s: &Str<'a>, f: impl Fn(&str) -> &str) -> Str<'a> {
    match s {
        Cow::Borrowed(b) => Cow::Borrowed(f(b)),
        Cow::Owned(o) => Cow::Owned(f(o).to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_names_split() {
        assert_eq!(
            split_mcp("mcp__probe__danger_note"),
            Some(("probe", "danger_note"))
        );
        assert_eq!(split_mcp("mcp__a__b__c"), Some(("a", "b__c")));
        assert_eq!(split_mcp("Bash"), None);
    }

    #[test]
    fn names_are_unique() {
        for (i, p) in PROVIDERS.iter().enumerate() {
            assert!(PROVIDERS[i + 1..].iter().all(|q| q.name != p.name));
            assert_ne!(p.name, UNKNOWN);
        }
    }
}
