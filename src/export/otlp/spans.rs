//! The spans of a conversation, per the OpenTelemetry GenAI semantic conventions (semconv
//! v1.41, the last release that holds them; `docs/fleet.md`), built from the state `reduce`
//! made (its turns tree, entries and totals): nothing is derived from the events again.
//!
//! | span | kind | parent | from |
//! |---|---|---|---|
//! | `invoke_agent {agent}` | internal | none (the root of the turn's trace) | a turn that ended |
//! | `chat {model}` | client | the agent's span | the entries of one model request (one `messageId`) |
//! | `execute_tool {tool}` | internal | the agent's span | a tool call |
//! | `invoke_agent {subagent}` | internal | the call's span | a call that started a subagent |
//!
//! A turn is a trace of its own; every id is a hash of the session id, the turn's index and the
//! call id or message id ([`Ids`]), so the same log exported twice gives the same ids.
//! Prompts, outputs, tool arguments and results are left out unless [`Options::content`].

use crate::ids::Hash64;
use crate::reduce::state::{
    Body, Entry, Node, Role, SessionNode, State, ToolCall, ToolStatus, Turn, TurnStatus,
};
use std::hash::Hasher;

use super::proto::{
    AnyValue, KeyValue, Span, Status, Value, SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL,
    STATUS_CODE_ERROR,
};

/// What goes into the spans besides the conventions' required and recommended attributes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// The conventions' opt-in content: `gen_ai.input.messages`, `gen_ai.output.messages`,
    /// `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`.
    pub content: bool,
    /// Mask secrets in every string value ([`crate::redact`]).
    pub redact: bool,
}

/// The trace flags of every span: sampled (W3C bit 0), and the parent known to be local
/// (`SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK` set, `..._IS_REMOTE_MASK` not).
const FLAGS: u32 = 0x01 | 0x100;

/// Exports the turns of a state as they end: each turn once, in order, per session.
#[derive(Debug, Default)]
pub struct Exporter {
    /// Per session of the tree (by position): the turns exported, a prefix of its turns.
    next: Vec<usize>,
    /// Per session: the last time known before its next turn (the end of the one exported
    /// last), for a turn whose events carry none.
    last_ns: Vec<u64>,
    /// Per session: the turns it had before it was let go and came back ([`Exporter::let_go`]),
    /// added to its turns' indexes, so that they keep their ids.
    before: Vec<u32>,
    /// The sessions let go: their turns then, and the last time known.
    gone: std::collections::HashMap<String, (u32, u64)>,
    /// Turns exported so far.
    pub turns: u64,
    /// Spans made so far.
    pub spans: u64,
}

impl Exporter {
    /// Appends to `out` the spans of every turn of `st` that ended and was not exported yet;
    /// a turn still running, and those after it, wait.
    pub fn ended_turns(&mut self, st: &State, opts: &Options, out: &mut Vec<Span>) {
        self.sync(st);
        for s in 0..st.tree.sessions.len() {
            self.session_turns(st, s, opts, out);
        }
    }

    /// Notes the sessions the state has gained since the last call.
    fn sync(&mut self, st: &State) {
        for sess in &st.tree.sessions[self.next.len().min(st.tree.sessions.len())..] {
            let (before, last_ns) = self.gone.remove(&sess.session_id).unwrap_or((0, 0));
            self.next.push(0);
            self.last_ns.push(last_ns);
            self.before.push(before);
        }
    }

    /// [`Exporter::ended_turns`] of the session at position `s`.
    fn session_turns(&mut self, st: &State, s: usize, opts: &Options, out: &mut Vec<Span>) {
        let sess = &st.tree.sessions[s];
        while let Some(turn) = sess.turns.get(self.next[s]) {
            if turn.status == TurnStatus::Running {
                break;
            }
            let before = out.len();
            let index = turn.index.saturating_add(self.before[s]);
            let end = TurnSpans {
                st,
                sess,
                turn,
                index,
                opts,
                out,
                ids: Ids::new(&sess.session_id, index),
            }
            .build(self.last_ns[s]);
            self.last_ns[s] = end;
            self.next[s] += 1;
            self.turns += 1;
            self.spans += (out.len() - before) as u64;
        }
    }

    /// Lets go the sessions of `st` but the `keep` that changed last: the spans of their
    /// ended turns are appended to `out`, and they are removed from the state
    /// ([`State::forget_sessions`]), so that a reader of many sessions holds those still going.
    /// A turn still running in a session let go (one the input left open, or one that more
    /// than `keep` other sessions changed since) is not exported, as at the end of the input.
    /// A session that comes back afterwards goes on with the next turn's index (the same ids
    /// as read whole), from a state without its earlier events.
    pub fn let_go(
        &mut self,
        st: &mut State,
        keep: usize,
        opts: &Options,
        out: &mut Vec<Span>,
    ) -> anyhow::Result<()> {
        self.sync(st);
        let n = st.tree.sessions.len();
        if n <= keep {
            return Ok(());
        }
        // The `seq` of the last event that changed a session, as far as the state tells: its
        // first, its last turn's start or end, the last entry of each agent's running turn.
        let last_change = |s: usize| {
            let sess = &st.tree.sessions[s];
            let turn = sess
                .turns
                .last()
                .map_or(0, |t| t.end_seq.unwrap_or(0).max(t.start_seq));
            let entries = st.cursor.sessions.get(s).map_or(0, |c| {
                c.scopes
                    .iter()
                    .filter_map(|sc| st.entries.get(sc.last_entry? as usize))
                    .map(|e| e.updated_seq.unwrap_or(0).max(e.seq))
                    .max()
                    .unwrap_or(0)
            });
            sess.first_seq.max(turn).max(entries)
        };
        let mut order: Vec<(u64, usize)> = (0..n).map(|s| (last_change(s), s)).collect();
        // The most recently changed stay.
        order.sort_unstable_by(|a, b| b.cmp(a));
        let mut gone = vec![false; n];
        for &(_, s) in &order[keep..] {
            gone[s] = true;
        }
        // Their turns that ended, which no later event changes now.
        for s in (0..gone.len()).filter(|&s| gone[s]) {
            self.session_turns(st, s, opts, out);
        }
        let left: Vec<(String, u32)> = st
            .tree
            .sessions
            .iter()
            .map(|sess| (sess.session_id.clone(), sess.turns.len() as u32))
            .collect();
        let gone = st.forget_sessions(&gone)?;
        let mut k = 0;
        for (s, (id, turns)) in left.into_iter().enumerate() {
            if gone[s] {
                let had = self.before[s].saturating_add(turns);
                self.gone.insert(id, (had, self.last_ns[s]));
            } else {
                self.next[k] = self.next[s];
                self.last_ns[k] = self.last_ns[s];
                self.before[k] = self.before[s];
                k += 1;
            }
        }
        self.next.truncate(k);
        self.last_ns.truncate(k);
        self.before.truncate(k);
        Ok(())
    }
}

/// The ids of one turn's trace.
struct Ids {
    session: String,
    turn: u32,
    trace: Vec<u8>,
}

impl Ids {
    fn new(session: &str, turn: u32) -> Ids {
        let hi = key(&["trace", session], turn, "");
        let lo = key(&["trace-low", session], turn, "");
        let mut trace = Vec::with_capacity(16);
        trace.extend_from_slice(&nonzero(hi).to_be_bytes());
        trace.extend_from_slice(&lo.to_be_bytes());
        Ids {
            session: session.to_owned(),
            turn,
            trace,
        }
    }

    /// The id of a span of kind `what` about `of` (a call or message id; "" for the turn).
    fn span(&self, what: &str, scope: &str, of: &str) -> Vec<u8> {
        let mut h = Hash64::default();
        h.write(what.as_bytes());
        h.write(scope.as_bytes());
        nonzero(key(&[&self.session, &hex8(h.finish())], self.turn, of))
            .to_be_bytes()
            .to_vec()
    }
}

/// A stable 64-bit hash of `parts`, a turn index and `of` ([`crate::ids::Hash64`]: the same
/// in every run and on every machine).
fn key(parts: &[&str], turn: u32, of: &str) -> u64 {
    let mut h = Hash64::default();
    for p in parts {
        h.write(p.as_bytes());
    }
    h.write(&turn.to_le_bytes());
    h.write(of.as_bytes());
    h.finish()
}

/// All-zero ids are invalid in OTLP.
fn nonzero(n: u64) -> u64 {
    n.max(1)
}

fn hex8(n: u64) -> String {
    format!("{n:016x}")
}

/// Nanoseconds since the Unix epoch of an RFC 3339 time.
fn nanos(t: Option<&str>) -> Option<u64> {
    let ms = crate::time::millis(t?)?;
    u64::try_from(ms).ok()?.checked_mul(1_000_000)
}

/// `gen_ai.provider.name`: the conventions' well-known value for the model's maker, known by
/// the model's name, else by the agent (its provider in `insights providers`); the agent's
/// name when neither tells.
pub fn provider_name(model: Option<&str>, agent: &str) -> String {
    let m = model.unwrap_or("").to_ascii_lowercase();
    let by_model = if m.starts_with("claude") || m.contains("anthropic") {
        Some("anthropic")
    } else if m.starts_with("gpt")
        || m.starts_with("o1")
        || m.starts_with("o3")
        || m.starts_with("o4")
        || m.contains("codex")
        || m.contains("openai")
    {
        Some("openai")
    } else if m.starts_with("gemini") || m.contains("google") {
        Some("gcp.gemini")
    } else if m.starts_with("deepseek") {
        Some("deepseek")
    } else if m.starts_with("mistral") || m.starts_with("codestral") {
        Some("mistral_ai")
    } else if m.starts_with("grok") {
        Some("x_ai")
    } else {
        None
    };
    if let Some(p) = by_model {
        return p.to_owned();
    }
    let by_agent = match agent {
        a if a.contains("claude") => "anthropic",
        a if a.contains("codex") => "openai",
        a if a.contains("gemini") => "gcp.gemini",
        a => a,
    };
    by_agent.to_owned()
}

/// Builds the spans of one turn.
struct TurnSpans<'a> {
    st: &'a State,
    sess: &'a SessionNode,
    turn: &'a Turn,
    /// The turn's index in its session (its own, after those of the session before it was
    /// let go).
    index: u32,
    opts: &'a Options,
    out: &'a mut Vec<Span>,
    ids: Ids,
}

/// Times of a span, nanoseconds since the epoch.
#[derive(Clone, Copy)]
struct Times {
    start: u64,
    end: u64,
}

impl<'a> TurnSpans<'a> {
    /// Makes the turn's spans; returns the turn's end time.
    fn build(mut self, before: u64) -> u64 {
        let turn = self.turn;
        let agent = self.sess.provider.clone().unwrap_or_else(|| "agent".into());
        let times = self.turn_times(before);
        let span_id = self.ids.span("turn", "", "");
        let model = turn.model.clone().or_else(|| self.sess.model.clone());
        let response_model = self.last_model(&turn.children).or_else(|| model.clone());
        let provider = provider_name(
            response_model.as_deref().or(model.as_deref()),
            agent.as_str(),
        );
        let mut attrs = Vec::with_capacity(20);
        self.str(&mut attrs, "gen_ai.operation.name", "invoke_agent");
        self.str(&mut attrs, "gen_ai.provider.name", &provider);
        self.str(&mut attrs, "gen_ai.agent.name", &agent);
        self.str(&mut attrs, "gen_ai.conversation.id", &self.sess.session_id);
        if let Some(m) = &model {
            self.str(&mut attrs, "gen_ai.request.model", m);
        }
        if let Some(m) = &response_model {
            self.str(&mut attrs, "gen_ai.response.model", m);
        }
        if let Some(id) = &turn.turn_id {
            self.str(&mut attrs, "insights.turn.id", id);
        }
        let t = &turn.tokens;
        // The conventions' input tokens include the cached ones; insights counts them apart.
        let input = t.input_tokens + t.cache_read_tokens + t.cache_creation_tokens;
        int(&mut attrs, "gen_ai.usage.input_tokens", input);
        int(&mut attrs, "gen_ai.usage.output_tokens", t.output_tokens);
        int(
            &mut attrs,
            "gen_ai.usage.cache_read.input_tokens",
            t.cache_read_tokens,
        );
        int(
            &mut attrs,
            "gen_ai.usage.cache_creation.input_tokens",
            t.cache_creation_tokens,
        );
        if t.reasoning_tokens > 0 {
            int(
                &mut attrs,
                "gen_ai.usage.reasoning.output_tokens",
                t.reasoning_tokens,
            );
        }
        self.str(&mut attrs, "insights.provider", &agent);
        int(&mut attrs, "insights.turn.index", u64::from(self.index));
        self.str(&mut attrs, "insights.turn.status", turn_status(turn.status));
        int(&mut attrs, "insights.turn.tools", turn.tools);
        if let Some(c) = turn.cost_usd {
            attrs.push(kv("insights.cost_usd", Value::DoubleValue(c)));
        }
        if let Some(r) = &turn.stop_reason {
            self.str(&mut attrs, "insights.turn.stop_reason", r);
        }
        let mut status = None;
        if turn.status == TurnStatus::Failed {
            let ty = turn
                .subtype
                .as_deref()
                .filter(|s| !s.is_empty() && *s != "success")
                .unwrap_or("_OTHER");
            self.str(&mut attrs, "error.type", ty);
            let message = turn
                .errors
                .as_ref()
                .and_then(|e| e.first())
                .map_or(ty, String::as_str);
            status = Some(Status {
                message: self.text(message),
                code: STATUS_CODE_ERROR,
            });
        }
        if self.opts.content {
            let (input, output) = self.turn_messages(&turn.children);
            if let Some(i) = input {
                self.str(&mut attrs, "gen_ai.input.messages", &i);
            }
            if let Some(o) = output {
                self.str(&mut attrs, "gen_ai.output.messages", &o);
            }
        }
        self.push(
            span_id.clone(),
            &[],
            format!("invoke_agent {agent}"),
            SPAN_KIND_INTERNAL,
            times,
            attrs,
            status,
        );
        self.agent_children(
            &turn.children,
            "",
            &span_id,
            times,
            &provider,
            model.as_deref(),
        );
        times.end
    }

    /// The turn's times: its own, else those of its entries, else `before` (the session's
    /// last known time).
    fn turn_times(&self, before: u64) -> Times {
        let turn = self.turn;
        let (lo, hi) = self.entry_range(&turn.children);
        let start = nanos(turn.started_at.as_deref())
            .or(lo)
            .or_else(|| nanos(self.sess.started_at.as_deref()).filter(|_| self.index == 1))
            .unwrap_or(before);
        let by_duration = turn
            .duration_ms
            .map(|d| start.saturating_add(d.saturating_mul(1_000_000)));
        let end = nanos(turn.ended_at.as_deref())
            .or(by_duration)
            .into_iter()
            .chain(hi)
            .max()
            .unwrap_or(start)
            .max(start);
        Times { start, end }
    }

    /// The earliest and latest times of the entries under `nodes` (subagents' included).
    fn entry_range(&self, nodes: &[Node]) -> (Option<u64>, Option<u64>) {
        let mut lo: Option<u64> = None;
        let mut hi: Option<u64> = None;
        let mut see = |t: Option<u64>| {
            if let Some(t) = t {
                lo = Some(lo.map_or(t, |l| l.min(t)));
                hi = Some(hi.map_or(t, |h| h.max(t)));
            }
        };
        walk(nodes, &mut |node| {
            let Some(e) = self.entry(node) else { return };
            see(nanos(e.timestamp.as_deref()));
            if let Body::ToolCall(c) = &e.body {
                see(nanos(c.started_at.as_deref()));
                see(nanos(c.ended_at.as_deref()));
            }
        });
        (lo, hi)
    }

    fn entry(&self, node: &Node) -> Option<&'a Entry> {
        self.st.entries.get(node.entry as usize)
    }

    /// The model of the agent's last request under `nodes` (not a subagent's).
    fn last_model(&self, nodes: &[Node]) -> Option<String> {
        nodes.iter().rev().find_map(|n| {
            let e = self.entry(n)?;
            match &e.body {
                Body::Message(m) if m.role == Role::Assistant => m.model.clone(),
                Body::Thought(t) => t.model.clone(),
                Body::ToolCall(c) => c.model.clone(),
                _ => None,
            }
        })
    }

    /// The spans under an agent's span: its model requests and its tool calls (and under
    /// those, the subagents). `scope` is the subagent's call id, "" for the main agent.
    fn agent_children(
        &mut self,
        nodes: &[Node],
        scope: &str,
        parent: &[u8],
        within: Times,
        provider: &str,
        model: Option<&str>,
    ) {
        self.chats(nodes, scope, parent, within, provider, model);
        for node in nodes {
            let Some(e) = self.entry(node) else { continue };
            if let Body::ToolCall(call) = &e.body {
                self.tool(node, e, call, parent, within, provider, model);
            }
        }
    }

    /// One `chat {model}` span per model request the entries show (the entries of one
    /// `messageId`: text, thinking, tool calls), in the order they began.
    fn chats(
        &mut self,
        nodes: &[Node],
        scope: &str,
        parent: &[u8],
        within: Times,
        provider: &str,
        model: Option<&str>,
    ) {
        // (message id, entries) in order of appearance; a turn has a few requests.
        let mut requests: Vec<(&'a str, Vec<&'a Entry>)> = Vec::new();
        for node in nodes {
            let Some(e) = self.entry(node) else { continue };
            let id = match &e.body {
                Body::Message(m) if m.role == Role::Assistant => m.message_id.as_deref(),
                Body::Thought(t) => t.message_id.as_deref(),
                Body::ToolCall(c) => c.message_id.as_deref(),
                _ => None,
            };
            let Some(id) = id.filter(|id| !id.is_empty()) else {
                continue;
            };
            match requests.iter_mut().find(|(m, _)| *m == id) {
                Some((_, list)) => list.push(e),
                None => requests.push((id, vec![e])),
            }
        }
        for (id, entries) in requests {
            let req_model = entries
                .iter()
                .find_map(|e| match &e.body {
                    Body::Message(m) => m.model.as_deref(),
                    Body::Thought(t) => t.model.as_deref(),
                    Body::ToolCall(c) => c.model.as_deref(),
                    _ => None,
                })
                .or(model);
            let ts = entries
                .iter()
                .filter_map(|e| nanos(e.timestamp.as_deref()))
                .collect::<Vec<_>>();
            let start = ts.iter().copied().min().unwrap_or(within.start);
            let end = ts.iter().copied().max().unwrap_or(within.end).max(start);
            let mut attrs = Vec::with_capacity(8);
            self.str(&mut attrs, "gen_ai.operation.name", "chat");
            self.str(&mut attrs, "gen_ai.provider.name", provider);
            self.str(&mut attrs, "gen_ai.conversation.id", &self.ids.session);
            if let Some(m) = req_model {
                self.str(&mut attrs, "gen_ai.request.model", m);
                self.str(&mut attrs, "gen_ai.response.model", m);
            }
            self.str(&mut attrs, "gen_ai.response.id", id);
            if self.opts.content {
                let parts: Vec<serde_json::Value> = entries
                    .iter()
                    .filter_map(|e| match &e.body {
                        Body::Message(m) => Some(serde_json::json!({
                            "type": "text", "content": m.content
                        })),
                        Body::Thought(t) => Some(serde_json::json!({
                            "type": "reasoning", "content": t.content
                        })),
                        Body::ToolCall(c) => Some(serde_json::json!({
                            "type": "tool_call",
                            "id": c.call_id,
                            "name": c.tool_name,
                            "arguments": c.input.as_ref().and_then(|i| {
                                serde_json::from_str::<serde_json::Value>(i.get()).ok()
                            }),
                        })),
                        _ => None,
                    })
                    .collect();
                let msg = serde_json::json!([{
                    "role": "assistant",
                    "parts": parts,
                    "finish_reason": if entries.iter().any(|e| matches!(e.body, Body::ToolCall(_))) {
                        "tool_call"
                    } else {
                        "stop"
                    },
                }]);
                self.str(&mut attrs, "gen_ai.output.messages", &msg.to_string());
            }
            let name = match req_model {
                Some(m) => format!("chat {m}"),
                None => "chat".to_owned(),
            };
            let span_id = self.ids.span("chat", scope, id);
            let times = Times { start, end };
            self.push(span_id, parent, name, SPAN_KIND_CLIENT, times, attrs, None);
        }
    }

    /// The `execute_tool` span of a call, and the subagent it started under it.
    #[allow(clippy::too_many_arguments)]
    fn tool(
        &mut self,
        node: &Node,
        entry: &Entry,
        call: &ToolCall,
        parent: &[u8],
        within: Times,
        provider: &str,
        model: Option<&str>,
    ) {
        let start = nanos(call.started_at.as_deref())
            .or_else(|| nanos(entry.timestamp.as_deref()))
            .or_else(|| {
                let end = nanos(call.ended_at.as_deref())?;
                Some(end.saturating_sub(call.duration_ms? * 1_000_000))
            })
            .unwrap_or(within.start);
        let end = nanos(call.ended_at.as_deref())
            .or_else(|| {
                call.duration_ms
                    .map(|d| start.saturating_add(d.saturating_mul(1_000_000)))
            })
            .unwrap_or(start)
            .max(start);
        let times = Times { start, end };
        let name = call
            .tool_name
            .as_deref()
            .or(call.kind.as_deref())
            .unwrap_or("tool");
        let span_id = self.ids.span("call", "", &call.call_id);
        let mut attrs = Vec::with_capacity(12);
        self.str(&mut attrs, "gen_ai.operation.name", "execute_tool");
        self.str(&mut attrs, "gen_ai.tool.name", name);
        self.str(&mut attrs, "gen_ai.tool.call.id", &call.call_id);
        // Executed by the agent on the user's machine, from arguments the model wrote.
        self.str(&mut attrs, "gen_ai.tool.type", "function");
        self.str(&mut attrs, "gen_ai.conversation.id", &self.ids.session);
        self.str(&mut attrs, "insights.tool.status", tool_status(call.status));
        if let Some(k) = &call.kind {
            self.str(&mut attrs, "insights.tool.kind", k);
        }
        if let Some(s) = &call.mcp_server {
            self.str(&mut attrs, "insights.tool.mcp_server", s);
        }
        if call.parallel {
            attrs.push(kv("insights.tool.parallel", Value::BoolValue(true)));
        }
        if call.denied {
            attrs.push(kv("insights.tool.denied", Value::BoolValue(true)));
        }
        let mut status = None;
        if call.status == ToolStatus::Failed {
            let ty = if call.denied {
                "permission_denied"
            } else {
                "tool_error"
            };
            self.str(&mut attrs, "error.type", ty);
            status = Some(Status {
                message: String::new(),
                code: STATUS_CODE_ERROR,
            });
        }
        if self.opts.content {
            if let Some(t) = &call.title {
                self.str(&mut attrs, "gen_ai.tool.description", t);
            }
            if let Some(i) = &call.input {
                self.str(&mut attrs, "gen_ai.tool.call.arguments", i.get());
            }
            if let Some(o) = call.output.as_ref().or(call.content.as_ref()) {
                self.str(&mut attrs, "gen_ai.tool.call.result", o.get());
            }
        }
        self.push(
            span_id.clone(),
            parent,
            format!("execute_tool {name}"),
            SPAN_KIND_INTERNAL,
            times,
            attrs,
            status,
        );
        if call.subagent.is_some() || !node.children.is_empty() {
            self.subagent(node, call, &span_id, times, provider, model);
        }
    }

    /// The `invoke_agent` span of the subagent a call started, under the call's span, and
    /// the subagent's own spans under it.
    fn subagent(
        &mut self,
        node: &Node,
        call: &ToolCall,
        parent: &[u8],
        times: Times,
        provider: &str,
        model: Option<&str>,
    ) {
        let sub = call.subagent.as_deref();
        let name = sub
            .and_then(|s| s.agent_type.as_deref())
            .unwrap_or("subagent");
        let span_id = self.ids.span("agent", "", &call.call_id);
        let sub_model = self.last_model(&node.children);
        let sub_model = sub_model.as_deref().or(model);
        let mut attrs = Vec::with_capacity(10);
        self.str(&mut attrs, "gen_ai.operation.name", "invoke_agent");
        self.str(&mut attrs, "gen_ai.provider.name", provider);
        self.str(&mut attrs, "gen_ai.agent.name", name);
        self.str(&mut attrs, "gen_ai.conversation.id", &self.ids.session);
        if let Some(id) = sub.and_then(|s| s.agent_id.as_deref()) {
            self.str(&mut attrs, "gen_ai.agent.id", id);
        }
        if let Some(m) = sub_model {
            self.str(&mut attrs, "gen_ai.request.model", m);
        }
        if let Some(n) = sub.and_then(|s| s.total_tokens) {
            int(&mut attrs, "insights.subagent.total_tokens", n);
        }
        let failed = sub
            .and_then(|s| s.status.as_deref())
            .is_some_and(|s| s == "failed" || s == "error");
        let mut status = None;
        if failed {
            self.str(&mut attrs, "error.type", "_OTHER");
            status = Some(Status {
                message: String::new(),
                code: STATUS_CODE_ERROR,
            });
        }
        if self.opts.content {
            if let Some(p) = sub.and_then(|s| s.prompt.as_deref().or(s.description.as_deref())) {
                let msg = serde_json::json!([{
                    "role": "user", "parts": [{"type": "text", "content": p}]
                }]);
                self.str(&mut attrs, "gen_ai.input.messages", &msg.to_string());
            }
            if let Some(s) = sub.and_then(|s| s.summary.as_deref()) {
                let msg = serde_json::json!([{
                    "role": "assistant",
                    "parts": [{"type": "text", "content": s}],
                    "finish_reason": "stop",
                }]);
                self.str(&mut attrs, "gen_ai.output.messages", &msg.to_string());
            }
        }
        self.push(
            span_id.clone(),
            parent,
            format!("invoke_agent {name}"),
            SPAN_KIND_INTERNAL,
            times,
            attrs,
            status,
        );
        self.agent_children(
            &node.children,
            &call.call_id,
            &span_id,
            times,
            provider,
            sub_model,
        );
    }

    /// The turn's prompt (its user messages) and answer (the main agent's last text), as
    /// the conventions' input and output messages (JSON).
    fn turn_messages(&self, nodes: &[Node]) -> (Option<String>, Option<String>) {
        let mut prompts = Vec::new();
        let mut answer = None;
        for n in nodes {
            let Some(e) = self.entry(n) else { continue };
            if let Body::Message(m) = &e.body {
                match m.role {
                    Role::User => prompts.push(serde_json::json!({
                        "role": "user",
                        "parts": [{"type": "text", "content": m.content}],
                    })),
                    Role::Assistant => answer = Some(m.content.as_str()),
                }
            }
        }
        let input = (!prompts.is_empty()).then(|| serde_json::Value::Array(prompts).to_string());
        let output = answer.map(|a| {
            serde_json::json!([{
                "role": "assistant",
                "parts": [{"type": "text", "content": a}],
                "finish_reason": self.turn.stop_reason.as_deref().unwrap_or("stop"),
            }])
            .to_string()
        });
        (input, output)
    }

    /// Adds a span of the turn's trace.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        span_id: Vec<u8>,
        parent: &[u8],
        name: String,
        kind: i32,
        times: Times,
        attributes: Vec<KeyValue>,
        status: Option<Status>,
    ) {
        self.out.push(Span {
            trace_id: self.ids.trace.clone(),
            span_id,
            parent_span_id: parent.to_vec(),
            flags: FLAGS,
            name,
            kind,
            start_time_unix_nano: times.start,
            end_time_unix_nano: times.end,
            attributes,
            status,
        });
    }

    /// A string attribute, redacted when asked.
    fn str(&self, attrs: &mut Vec<KeyValue>, key: &str, value: &str) {
        attrs.push(kv(key, Value::StringValue(self.text(value))));
    }

    fn text(&self, value: &str) -> String {
        if self.opts.redact {
            redact_str(value)
        } else {
            value.to_owned()
        }
    }
}

/// Visits every node under `nodes`, depth first.
fn walk(nodes: &[Node], f: &mut dyn FnMut(&Node)) {
    for n in nodes {
        f(n);
        walk(&n.children, f);
    }
}

fn kv(key: &str, value: Value) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(value) }),
    }
}

fn int(attrs: &mut Vec<KeyValue>, key: &str, n: u64) {
    attrs.push(kv(
        key,
        Value::IntValue(i64::try_from(n).unwrap_or(i64::MAX)),
    ));
}

fn turn_status(s: TurnStatus) -> &'static str {
    match s {
        TurnStatus::Running => "running",
        TurnStatus::Completed => "completed",
        TurnStatus::Failed => "failed",
        TurnStatus::Cancelled => "cancelled",
        TurnStatus::Incomplete => "incomplete",
    }
}

fn tool_status(s: ToolStatus) -> &'static str {
    match s {
        ToolStatus::Running => "running",
        ToolStatus::Completed => "completed",
        ToolStatus::Failed => "failed",
        ToolStatus::Cancelled => "cancelled",
    }
}

/// `--redact` on one string: [`crate::redact`] works on JSON text, so the string is written
/// as a JSON string, redacted and read back.
pub fn redact_str(s: &str) -> String {
    let Ok(json) = serde_json::to_string(s) else {
        return s.to_owned();
    };
    match crate::redact::redact(json.as_bytes()) {
        std::borrow::Cow::Borrowed(_) => s.to_owned(),
        std::borrow::Cow::Owned(out) => {
            serde_json::from_slice::<String>(&out).unwrap_or_else(|_| s.to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_masks_secrets_in_a_string_and_keeps_the_rest() {
        let s = "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz \"quoted\"\n";
        let r = redact_str(s);
        assert!(!r.contains("abcdefghijklmnop"), "{r}");
        assert!(r.contains("[REDACTED:"), "{r}");
        assert!(r.ends_with(" \"quoted\"\n"), "{r}");
        assert_eq!(redact_str("nothing here"), "nothing here");
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let a = Ids::new("s", 1);
        assert_eq!(a.trace, Ids::new("s", 1).trace);
        assert_ne!(a.trace, Ids::new("s", 2).trace);
        assert_ne!(a.trace, Ids::new("t", 1).trace);
        assert_eq!(a.trace.len(), 16);
        let call = a.span("call", "", "c1");
        assert_eq!(call, Ids::new("s", 1).span("call", "", "c1"));
        assert_ne!(call, a.span("agent", "", "c1"));
        assert_ne!(call, a.span("call", "", "c2"));
        assert_ne!(a.span("chat", "", "m"), a.span("chat", "c1", "m"));
        // Fixed values: a change of the hash would change every id a backend already has.
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(hex(&a.trace), "c11d831952749d0102ae77fd23f16e05");
        assert_eq!(hex(&call), "67f74dd6c7363a8f");
    }

    #[test]
    fn provider_names_follow_the_conventions() {
        assert_eq!(provider_name(Some("claude-opus-4-8"), "acp"), "anthropic");
        assert_eq!(provider_name(Some("gpt-5.5-codex"), "codex"), "openai");
        assert_eq!(provider_name(Some("gemini-3-pro"), "acp"), "gcp.gemini");
        assert_eq!(provider_name(None, "codex"), "openai");
        assert_eq!(provider_name(Some("qwen3-coder"), "qwen"), "qwen");
    }
}
