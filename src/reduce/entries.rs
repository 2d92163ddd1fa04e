//! The entry rules (RULE 1–12 of `acp-entry-processing-rules.md`) over InsightsEvents, for
//! every provider. Session-level rules (7, 10, 11, 12) are in `apply.rs`.

use super::apply::touch;
use super::state::*;
use super::view::{own, Ev};

/// The `taskType` of a plan step's events.
const PLAN_STEP: &str = "plan_step";
/// The `taskType` of a plan's own events (replanned, escalated, completed).
const PLAN: &str = "plan";

/// `steps` (a plan's entries) with the step at `index` (from 1), or else the one whose
/// `stepId` is `step_id`, given `status` (when some) and `stepId` (when some); `None` when no
/// step is found or nothing changes. The other steps are kept as written.
fn set_step(
    steps: &RawJson,
    index: Option<u64>,
    step_id: Option<&str>,
    status: Option<&str>,
) -> Option<RawJson> {
    use serde_json::value::RawValue;
    use serde_json::{Map, Value};
    let mut list: Vec<Box<RawValue>> = serde_json::from_str(steps.get()).ok()?;
    let read = |r: &RawValue| serde_json::from_str::<Map<String, Value>>(r.get()).ok();
    let at = match index {
        Some(n) => usize::try_from(n).ok()?.checked_sub(1)?,
        None => {
            let id = step_id?;
            list.iter().position(|r| {
                read(r).is_some_and(|m| m.get("stepId").and_then(Value::as_str) == Some(id))
            })?
        }
    };
    let mut step = read(list.get(at)?)?;
    let before = step.clone();
    if let Some(st) = status {
        step.insert("status".into(), Value::from(st));
    }
    if let Some(id) = step_id {
        step.insert("stepId".into(), Value::from(id));
    }
    if step == before {
        return None;
    }
    list[at] = serde_json::value::to_raw_value(&step).ok()?;
    serde_json::value::to_raw_value(&list).ok().map(RawJson)
}

/// RULE 1's `extractNewContent`: what `chunk` adds to `existing`, `None` when nothing, and
/// whether the chunk showed the stream to be cumulative (it resent the text so far and
/// extended it).
///
/// The seed calls a chunk a duplicate when it "matches the end of the current content or is a
/// cumulative prefix". Taken literally that drops real deltas: "A. ", "B", "B" would be
/// "A. B", and "ha", "ha", "ha" would be "ha". What is a duplicate here: a chunk that begins
/// with the whole text so far and extends it is cumulative (only the rest is new); once a
/// stream is `cumulative`, a chunk equal to the whole text so far is a resend and adds nothing.
/// Any other chunk is a delta and is appended whole, a repeat included; an event delivered
/// twice is recognised by its `id` instead (it is not applied again).
pub fn extract_new_content<'a>(
    existing: &str,
    chunk: &'a str,
    cumulative: bool,
) -> (Option<&'a str>, bool) {
    if chunk.is_empty() {
        return (None, cumulative);
    }
    if existing.is_empty() {
        return (Some(chunk), cumulative);
    }
    if chunk == existing {
        return (if cumulative { None } else { Some(chunk) }, cumulative);
    }
    match chunk.strip_prefix(existing) {
        Some(rest) => (Some(rest), true),
        None => (Some(chunk), cumulative),
    }
}

/// Whether two message ids can name the same message (either unknown, or equal).
fn same_message(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// The text of a message or thought entry, when it is of the kind a chunk or a final text of
/// kind `thought` continues: an assistant message of ordinary text, or a thought.
fn continued(
    e: &mut Entry,
    thought: bool,
) -> Option<(&mut String, &mut Option<String>, &mut bool)> {
    match (&mut e.body, thought) {
        (Body::Message(m), false) if m.role == Role::Assistant && m.kind.is_none() => {
            Some((&mut m.content, &mut m.message_id, &mut m.streaming))
        }
        (Body::Thought(t), true) => Some((&mut t.content, &mut t.message_id, &mut t.streaming)),
        _ => None,
    }
}

impl State {
    /// RULE 1 (messages) and RULE 9 (thoughts): a chunk continues the agent's last entry in
    /// this turn when that entry is of the same kind and of the same message (the chunk's own
    /// `messageId`, as ACP's carry, or the one its `messageStart` named); otherwise it starts
    /// a new, streaming entry.
    fn chunk(&mut self, s: usize, ev: &Ev, seq: u64, thought: bool, text: &str) {
        let parent = ev.parent();
        let sc = self.scope(s, parent);
        if let Some(id) = ev.message_id.as_deref() {
            let scope = &mut self.cursor.sessions[s].scopes[sc];
            if scope.message_id.as_deref() != Some(id) {
                scope.message_id = Some(id.to_owned());
            }
        }
        let scope = &self.cursor.sessions[s].scopes[sc];
        let (streaming, start, msg, cumulative) = (
            scope.streaming,
            scope.stream_start as usize,
            scope.message_id.as_deref(),
            scope.streaming && scope.cumulative,
        );
        if let Some(last) = scope.last_entry {
            let e = &mut self.entries[last as usize];
            if let Some((content, message_id, flag)) = continued(e, thought) {
                if same_message(message_id.as_deref(), msg) {
                    let base = if streaming { start } else { content.len() };
                    let (new, cumulative) = extract_new_content(&content[base..], text, cumulative);
                    if let Some(new) = new {
                        content.push_str(new);
                    }
                    *flag = true;
                    if message_id.is_none() {
                        *message_id = msg.map(str::to_owned);
                    }
                    touch(e, seq);
                    let scope = &mut self.cursor.sessions[s].scopes[sc];
                    scope.cumulative = cumulative;
                    if !streaming {
                        scope.streaming = true;
                        scope.stream_start = base as u64;
                    }
                    return;
                }
            }
        }
        if text.is_empty() {
            return;
        }
        let msg = msg.map(str::to_owned);
        let body = if thought {
            Body::Thought(Thought {
                content: text.to_owned(),
                raw_content: None,
                message_id: msg,
                model: None,
                streaming: true,
            })
        } else {
            Body::Message(Message {
                role: Role::Assistant,
                content: text.to_owned(),
                kind: None,
                message_id: msg,
                model: None,
                streaming: true,
                synthetic: false,
                images: None,
            })
        };
        self.push_entry(s, parent, ev, seq, body, true);
        let scope = &mut self.cursor.sessions[s].scopes[sc];
        scope.streaming = true;
        scope.stream_start = 0;
        scope.cumulative = false;
    }

    pub(super) fn stream_delta(&mut self, s: usize, ev: &Ev, seq: u64) {
        match ev.kind.as_deref() {
            Some("text") => {
                if let Some(t) = ev.text_delta.as_deref() {
                    self.chunk(s, ev, seq, false, t);
                }
            }
            Some("thinking") => {
                if let Some(t) = ev.text_delta.as_deref() {
                    if ev.ext.raw_reasoning {
                        self.raw_reasoning(s, ev, seq, t, false);
                    } else {
                        self.chunk(s, ev, seq, true, t);
                    }
                }
            }
            Some("messageStart") => {
                // A new message: the last one's streaming is over (RULE 2).
                let sc = self.scope(s, ev.parent());
                self.end_stream(s, sc);
                self.cursor.sessions[s].scopes[sc].message_id = own(&ev.message_id);
            }
            _ => {}
        }
    }

    /// A complete block of text. Final text replaces the text streamed for it; a further block
    /// of the same message continues it (RULE 1); anything else is a new entry.
    pub(super) fn text(&mut self, s: usize, ev: &Ev, seq: u64) {
        let text = ev.text.as_deref().unwrap_or("");
        let kind = ev.kind.as_deref().unwrap_or("text");
        let thought = match kind {
            "text" => false,
            "thinking" if ev.ext.raw_reasoning => {
                return self.raw_reasoning(s, ev, seq, text, true);
            }
            "thinking" => true,
            other => {
                // The final text of a block streamed as text deltas (Codex streams its plan
                // item as `item/plan/delta`) is that block: the entry its deltas made, when
                // they are all it holds, becomes the one entry of this kind, not an assistant
                // message beside it.
                let sc = self.scope(s, ev.parent());
                let scope = &self.cursor.sessions[s].scopes[sc];
                let whole = scope.streaming && scope.stream_start == 0;
                if let (Some(last), Some(id), true) =
                    (scope.last_entry, ev.message_id.as_deref(), whole)
                {
                    let e = &mut self.entries[last as usize];
                    if let Body::Message(m) = &mut e.body {
                        if m.role == Role::Assistant
                            && m.kind.is_none()
                            && m.message_id.as_deref() == Some(id)
                        {
                            m.content.clear();
                            m.content.push_str(text);
                            m.kind = Some(other.to_owned());
                            m.streaming = false;
                            if m.model.is_none() {
                                m.model = own(&ev.model);
                            }
                            touch(e, seq);
                            let scope = &mut self.cursor.sessions[s].scopes[sc];
                            scope.streaming = false;
                            scope.stream_start = 0;
                            return;
                        }
                    }
                }
                let body = Body::Message(Message {
                    role: Role::Assistant,
                    content: text.to_owned(),
                    kind: Some(other.to_owned()),
                    message_id: own(&ev.message_id),
                    model: own(&ev.model),
                    streaming: false,
                    synthetic: false,
                    images: None,
                });
                self.push_entry(s, ev.parent(), ev, seq, body, true);
                return;
            }
        };
        let parent = ev.parent();
        let sc = self.scope(s, parent);
        let scope = &self.cursor.sessions[s].scopes[sc];
        let (streaming, start) = (scope.streaming, scope.stream_start as usize);
        if let Some(last) = scope.last_entry {
            let e = &mut self.entries[last as usize];
            // A thought that has only the raw reasoning so far (Codex's, given apart) takes
            // the summary of the same reasoning.
            let raw_only = matches!(&e.body, Body::Thought(t)
                if t.content.is_empty() && t.raw_content.is_some());
            if let Some((content, message_id, flag)) = continued(e, thought) {
                let mine = message_id.as_deref();
                let theirs = ev.message_id.as_deref();
                // The converter's whole text of a message that ended whole already: a snapshot
                // wrote it at the end of its input, and the log read again from its start ends
                // the message again. Nothing is new.
                if !streaming && ev.ext.inferred && *content == text && same_message(mine, theirs) {
                    return;
                }
                let done = if raw_only && same_message(mine, theirs) {
                    content.push_str(text);
                    *flag = false;
                    true
                } else if streaming && same_message(mine, theirs) {
                    // A whole text longer than what streamed since the stream began, which
                    // the content already ends with, is a message taken up again: a snapshot
                    // wrote its first part whole at the end of its input (the converter's
                    // inferred whole text), and the log read again from its start streamed
                    // the rest onto it. The content is the whole already.
                    let taken_up = text.len() > content.len() - start && content.ends_with(text);
                    if !taken_up {
                        content.truncate(start);
                        content.push_str(text);
                    }
                    *flag = false;
                    true
                } else if !streaming && mine.is_some() && mine == theirs {
                    // A further block of the message: one that repeats it whole adds nothing.
                    if let Some(new) = extract_new_content(content, text, true).0 {
                        content.push_str(new);
                    }
                    true
                } else {
                    false
                };
                if done {
                    if message_id.is_none() {
                        *message_id = own(&ev.message_id);
                    }
                    match &mut e.body {
                        Body::Message(m) if m.model.is_none() => m.model = own(&ev.model),
                        Body::Thought(t) if t.model.is_none() => t.model = own(&ev.model),
                        _ => {}
                    }
                    touch(e, seq);
                    let scope = &mut self.cursor.sessions[s].scopes[sc];
                    scope.streaming = false;
                    scope.stream_start = 0;
                    return;
                }
            }
        }
        let body = if thought {
            Body::Thought(Thought {
                content: text.to_owned(),
                raw_content: None,
                message_id: own(&ev.message_id),
                model: own(&ev.model),
                streaming: false,
            })
        } else {
            Body::Message(Message {
                role: Role::Assistant,
                content: text.to_owned(),
                kind: None,
                message_id: own(&ev.message_id),
                model: own(&ev.model),
                streaming: false,
                synthetic: false,
                images: None,
            })
        };
        self.push_entry(s, parent, ev, seq, body, true);
    }

    /// Raw reasoning (Codex's, marked `codex.rawReasoning`): kept in the `rawContent` of the
    /// thought of the same reasoning (the agent's last entry in this turn when it is a thought
    /// of the same message), whose `content` stays the summary; else a new thought with an
    /// empty `content`. A chunk is appended (RULE 1's cumulative rule applies); the final
    /// text (`whole`) replaces what its chunks gave, and ends the thought's streaming when no
    /// summary is streaming in it.
    fn raw_reasoning(&mut self, s: usize, ev: &Ev, seq: u64, text: &str, whole: bool) {
        let parent = ev.parent();
        let sc = self.scope(s, parent);
        if !whole {
            if let Some(id) = ev.message_id.as_deref() {
                let scope = &mut self.cursor.sessions[s].scopes[sc];
                if scope.message_id.as_deref() != Some(id) {
                    scope.message_id = Some(id.to_owned());
                }
            }
        }
        let scope = &self.cursor.sessions[s].scopes[sc];
        let (streaming, start) = (scope.streaming, scope.stream_start as usize);
        let msg = if whole {
            ev.message_id.as_deref()
        } else {
            scope.message_id.as_deref()
        };
        if let Some(last) = scope.last_entry {
            let e = &mut self.entries[last as usize];
            if let Body::Thought(t) = &mut e.body {
                let mine = t.message_id.as_deref();
                // Without ids on both sides, only a thought with no raw reasoning yet, or
                // one streaming it, is the same reasoning.
                let fits = match (mine, msg) {
                    (Some(a), Some(b)) => a == b,
                    _ => t.raw_content.is_none() || streaming,
                };
                if fits {
                    let raw = t.raw_content.get_or_insert_with(String::new);
                    if whole {
                        raw.clear();
                        raw.push_str(text);
                    } else if let Some(new) = extract_new_content(raw, text, false).0 {
                        raw.push_str(new);
                    }
                    if t.message_id.is_none() {
                        t.message_id = msg.map(str::to_owned);
                    }
                    if t.model.is_none() {
                        t.model = own(&ev.model);
                    }
                    // The summary streamed nothing since the stream began: the thought's
                    // streaming is the raw reasoning's.
                    let summary_idle = !streaming || start >= t.content.len();
                    let now = if whole { !summary_idle } else { true };
                    t.streaming = now;
                    let content_len = t.content.len() as u64;
                    touch(e, seq);
                    let scope = &mut self.cursor.sessions[s].scopes[sc];
                    if whole && summary_idle {
                        scope.streaming = false;
                        scope.stream_start = 0;
                    } else if !whole && !streaming {
                        scope.streaming = true;
                        scope.stream_start = content_len;
                    }
                    return;
                }
            }
        }
        if text.is_empty() {
            return;
        }
        let body = Body::Thought(Thought {
            content: String::new(),
            raw_content: Some(text.to_owned()),
            message_id: msg.map(str::to_owned),
            model: own(&ev.model),
            streaming: !whole,
        });
        self.push_entry(s, parent, ev, seq, body, true);
        let scope = &mut self.cursor.sessions[s].scopes[sc];
        scope.streaming = !whole;
        scope.stream_start = 0;
    }

    /// RULE 8: every prompt is an entry of its own.
    pub(super) fn user_input(&mut self, s: usize, ev: &Ev, seq: u64) {
        if ev.is_synthetic {
            self.compaction_summary(s, ev, seq);
        }
        let body = Body::Message(Message {
            role: Role::User,
            content: own(&ev.text).unwrap_or_default(),
            kind: None,
            message_id: None,
            model: None,
            streaming: false,
            synthetic: ev.is_synthetic,
            images: ev.images.filter(|&n| n > 0),
        });
        self.push_entry(s, ev.parent(), ev, seq, body, true);
    }

    /// A compaction's summary is the synthetic user text that comes right after it (Claude
    /// Code's "This session is being continued…" message, `isCompactSummary` in its session
    /// file): the wire's `context_compaction` never has it (the converter cannot hold the
    /// compaction until it comes). The text stays a message of its own as well: it is what
    /// the model is given.
    fn compaction_summary(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(text) = ev.text.as_deref().filter(|t| !t.is_empty()) else {
            return;
        };
        let sc = self.scope(s, ev.parent());
        let Some(i) = self.cursor.sessions[s].scopes[sc].last_entry else {
            return;
        };
        let e = &mut self.entries[i as usize];
        if let Body::Compaction(c) = &mut e.body {
            if c.summary.is_none() {
                c.summary = Some(text.to_owned());
                touch(e, seq);
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Tool calls.

    /// RULE 3: a new tool_call entry (a repeated invocation of a known call updates it, and
    /// one known from a later event, RULE 4, takes what the invocation says).
    pub(super) fn tool_invocation(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(call_id) = ev.call_id.as_deref() else {
            return;
        };
        match self.idx.per[s].calls.get(call_id) {
            Some(&i) => self.update_call(s, i, seq, |t| fill_call(t, ev)),
            None => {
                self.start_call(s, ev, seq, call_id);
            }
        }
    }

    /// A tool_call entry for `call_id`, started (running) by `ev`: counted, pending, and
    /// parallel when another call of the same agent is running.
    fn start_call(&mut self, s: usize, ev: &Ev, seq: u64, call_id: &str) -> u32 {
        let mut t = ToolCall::new(call_id.to_owned());
        self.apply_request(s, &mut t);
        fill_call(&mut t, ev);
        t.started_at = own(&ev.timestamp);
        let (tool_name, kind) = (t.tool_name.clone(), t.kind.clone());
        let i = self.new_call(s, ev, seq, t);
        let parent = ev.parent();
        // Parallel detection, then the call joins the running ones.
        let running: Vec<u32> = self.pending.sessions[s]
            .tools
            .iter()
            .filter(|t| t.parent_call_id.as_deref() == parent)
            .map(|t| t.entry)
            .collect();
        if !running.is_empty() {
            for e in running.into_iter().chain([i]) {
                if let Body::ToolCall(t) = &mut self.entries[e as usize].body {
                    if !t.parallel {
                        t.parallel = true;
                        self.totals.sessions[s].counts.parallel_tools += 1;
                    }
                }
            }
        }
        let ask = kind.as_deref() == Some("ask");
        let pt = PendingTool {
            call_id: call_id.to_owned(),
            tool_name,
            kind,
            parent_call_id: parent.map(str::to_owned),
            entry: i,
            seq,
        };
        let p = &mut self.pending.sessions[s];
        if ask {
            // A question its permission request asked before the call began is now the
            // call's: it stays pending until the call completes.
            match p.questions.iter_mut().find(|q| q.call_id == call_id) {
                Some(q) => *q = pt.clone(),
                None => push_small(&mut p.questions, pt.clone()),
            }
        }
        push_small(&mut p.tools, pt);
        i
    }

    /// Adds the entry of call `t` (made by `ev`) and counts it, in the session's tool calls
    /// by kind and the turn's: every call once, whichever event about it came first.
    fn new_call(&mut self, s: usize, ev: &Ev, seq: u64, t: ToolCall) -> u32 {
        let c = &mut self.totals.sessions[s].counts;
        c.tools += 1;
        count_kind(&mut c.tools_by_kind, t.kind.as_deref(), 1);
        let call_id = t.call_id.clone();
        let i = self.push_entry(s, ev.parent(), ev, seq, Body::ToolCall(Box::new(t)), true);
        self.idx.per[s].calls.insert(call_id, i);
        if let Some(t) = self.entries[i as usize].turn {
            self.tree.sessions[s].turns[t as usize - 1].tools += 1;
        }
        i
    }

    /// The tool_call entry of `call_id`, made (not running) for a call seen first by an
    /// event that is not its start.
    fn call_entry(&mut self, s: usize, ev: &Ev, seq: u64, call_id: &str) -> u32 {
        match self.idx.per[s].calls.get(call_id) {
            Some(&i) => i,
            None => {
                let mut t = ToolCall::new(call_id.to_owned());
                set_tool_name(&mut t, &ev.tool_name);
                self.apply_request(s, &mut t);
                self.new_call(s, ev, seq, t)
            }
        }
    }

    /// Changes call entry `i` (event `seq` changed it), keeping the count of calls by kind
    /// in step when its kind changes.
    fn update_call(&mut self, s: usize, i: u32, seq: u64, f: impl FnOnce(&mut ToolCall)) {
        let t = self.call_mut(i, seq);
        let before = t.kind.clone();
        f(t);
        if t.kind != before {
            let after = t.kind.clone();
            let by_kind = &mut self.totals.sessions[s].counts.tools_by_kind;
            count_kind(by_kind, before.as_deref(), -1);
            count_kind(by_kind, after.as_deref(), 1);
        }
    }

    /// What a permission request that came before the call says about it (ACP agents may ask
    /// before they announce the call, or never announce it).
    fn apply_request(&self, s: usize, t: &mut ToolCall) {
        // The latest request for the call (the index is a hash map: pick by position).
        let req = self.idx.per[s]
            .requests
            .values()
            .filter(|&&i| {
                matches!(&self.entries[i as usize].body,
                    Body::PermissionRequest(p) if p.call_id.as_deref() == Some(&t.call_id))
            })
            .max()
            .and_then(|&i| match &self.entries[i as usize].body {
                Body::PermissionRequest(p) => Some(p),
                _ => None,
            });
        if let Some(p) = req {
            let (name, server) = clean_tool_name(&p.tool_name);
            t.tool_name = Some(name.to_owned());
            if let Some(server) = server {
                t.mcp_server.get_or_insert_with(|| server.to_owned());
                t.mcp_tool.get_or_insert_with(|| name.to_owned());
            }
            t.kind.clone_from(&p.tool_kind);
            t.title.clone_from(&p.title);
            t.input.clone_from(&p.input);
            t.permission = Some(ToolPermission {
                request_id: p.request_id.clone(),
                decision: p.response.as_ref().map(|r| r.decision.clone()),
                allowed: p.response.as_ref().map(|r| r.allowed),
            });
            // Refused before the call was announced (Codex 0.100 asks first): the refusal
            // was counted when it came.
            if p.response.as_ref().is_some_and(|r| denies(&r.decision)) {
                t.denied = true;
            }
        }
    }

    fn call_mut(&mut self, i: u32, seq: u64) -> &mut ToolCall {
        let e = &mut self.entries[i as usize];
        touch(e, seq);
        match &mut e.body {
            Body::ToolCall(t) => t,
            _ => unreachable!("the call index points at tool_call entries"),
        }
    }

    /// RULE 4: the call's status and output.
    pub(super) fn tool_completion(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(call_id) = ev.call_id.as_deref() else {
            return;
        };
        let i = self.call_entry(s, ev, seq, call_id);
        let status = ToolStatus::of(ev.status.as_deref().unwrap_or("completed"));
        let t = self.call_mut(i, seq);
        let was_running = t.status == ToolStatus::Running;
        t.status = if status == ToolStatus::Running {
            ToolStatus::Completed
        } else {
            status
        };
        // RULE 4: a later, emptier completion (a status alone) keeps what an earlier one gave.
        if let Some(o) = ev.output.as_deref() {
            t.output = Some(RawJson::of(o));
        }
        if let Some(c) = ev.content.as_deref() {
            t.content = Some(RawJson::of(c));
        }
        t.is_error |= ev.is_error;
        if let Some(l) = &ev.locations {
            t.locations = Some(l.iter().map(|x| x.to_string()).collect());
        }
        if ev.timestamp.is_some() {
            t.ended_at = own(&ev.timestamp);
        }
        t.completed_seq = Some(seq);
        t.duration_ms = ev.duration_ms.or_else(|| span_ms(t)).or(t.duration_ms);
        let status = t.status;
        let p = &mut self.pending.sessions[s];
        p.tools.retain(|x| x.call_id != call_id);
        p.questions.retain(|x| x.call_id != call_id);
        free(&mut p.tools);
        free(&mut p.questions);
        if was_running {
            let c = &mut self.totals.sessions[s].counts;
            match status {
                ToolStatus::Failed => c.failed_tools += 1,
                ToolStatus::Cancelled => c.cancelled_tools += 1,
                _ => {}
            }
        }
    }

    /// A running call's progress; one not announced yet (RULE 4: an update may come before
    /// its call) is started by it.
    pub(super) fn tool_update(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(call_id) = ev.call_id.as_deref() else {
            return;
        };
        let i = match self.idx.per[s].calls.get(call_id) {
            Some(&i) => i,
            None => self.start_call(s, ev, seq, call_id),
        };
        self.update_call(s, i, seq, |t| {
            if ev.elapsed_ms.is_some() {
                t.elapsed_ms = ev.elapsed_ms;
            }
            if ev.status.is_some() {
                t.progress = own(&ev.status);
            }
            // The call's own announcement after it began (ACP's `tool_call` after its own
            // `tool_call_update`: the update that carries a kind) names it (RULE 3); the name
            // the first line gave was a placeholder.
            if t.tool_name.is_none() || ev.kind.is_some() {
                set_tool_name(t, &ev.tool_name);
            }
            // A kind the call's own announcement brings after it began (ACP) replaces the
            // `other` the first line that named it gave.
            if t.kind.is_none() || t.kind.as_deref() == Some("other") {
                set(&mut t.kind, &ev.kind);
            }
            // ACP sends a call's title, input and locations after it began.
            set(&mut t.title, &ev.title);
            if let Some(i) = ev.input.as_deref() {
                t.input = Some(RawJson::of(i));
            }
            if let Some(l) = &ev.locations {
                t.locations = Some(l.iter().map(|x| x.to_string()).collect());
            }
        });
    }

    pub(super) fn subagent_spawn(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(call_id) = ev.call_id.as_deref() else {
            return;
        };
        // AceClaw's subagents are announced by no call (the wire names none; the converter
        // takes the agent type for `callId`): the events until its end are its by their place.
        let positional = crate::providers::reading(ev.provider.as_deref().unwrap_or(""))
            .positional_subagents
            && !self.idx.per[s].calls.contains_key(call_id);
        let i = self.call_entry(s, ev, seq, call_id);
        if positional {
            push_small(&mut self.cursor.sessions[s].subagents, call_id.to_owned());
        }
        let t = self.call_mut(i, seq);
        if positional && t.started_at.is_none() {
            t.started_at = own(&ev.timestamp);
        }
        let first = t.subagent.is_none();
        let a = t.subagent.get_or_insert_with(Box::default);
        set(&mut a.agent_type, &ev.agent_type);
        set(&mut a.description, &ev.description);
        set(&mut a.prompt, &ev.prompt);
        a.is_resume |= ev.is_resume;
        set(&mut a.resume_agent_id, &ev.resume_agent_id);
        if first {
            self.totals.sessions[s].counts.subagents += 1;
        }
    }

    pub(super) fn subagent_complete(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(call_id) = ev.call_id.as_deref() else {
            return;
        };
        let i = self.call_entry(s, ev, seq, call_id);
        // A subagent no call announced ends here, and its call with it (completed, unless
        // the end says otherwise), as would a call's completion; so do those it started.
        let open = &mut self.cursor.sessions[s].subagents;
        let positional = match open.iter().rposition(|c| c == call_id) {
            Some(k) => {
                open.truncate(k);
                free(open);
                true
            }
            None => false,
        };
        let t = self.call_mut(i, seq);
        if positional {
            if t.status == ToolStatus::Running {
                t.status = ToolStatus::Completed;
            }
            if ev.timestamp.is_some() {
                t.ended_at = own(&ev.timestamp);
            }
            t.completed_seq = Some(seq);
            t.duration_ms = ev.duration_ms.or_else(|| span_ms(t)).or(t.duration_ms);
        }
        let a = t.subagent.get_or_insert_with(Box::default);
        if positional && ev.status.is_none() && a.status.is_none() {
            a.status = Some("completed".to_owned());
        }
        set(&mut a.agent_id, &ev.agent_id);
        set(&mut a.status, &ev.status);
        set(&mut a.summary, &ev.summary);
        a.duration_ms = ev.duration_ms.or(a.duration_ms);
        a.total_tokens = ev.total_tokens.or(a.total_tokens);
        a.tool_use_count = ev.tool_use_count.or(a.tool_use_count);
    }

    /// A background task's progress, on the call that started it (found by `taskId` when the
    /// event names no call).
    pub(super) fn task_update(&mut self, s: usize, ev: &Ev, seq: u64) {
        if matches!(ev.task_type.as_deref(), Some(PLAN_STEP | PLAN)) {
            return self.plan_event(s, ev, seq);
        }
        let Some(task_id) = ev.task_id.as_deref() else {
            return;
        };
        let per = &self.idx.per[s];
        let call = match ev.call_id.as_deref() {
            Some(c) => c.to_owned(),
            None => match per.tasks.get(task_id) {
                Some(c) => c.clone(),
                None => return,
            },
        };
        let Some(&i) = per.calls.get(&call) else {
            return;
        };
        // The index maps a task to its call only through the call's entry (as rebuilt after
        // loading a snapshot): a call names one task, the latest.
        let t = self.call_mut(i, seq);
        let old = match &t.task {
            Some(task) if task.task_id != task_id => Some(task.task_id.clone()),
            _ => None,
        };
        if old.is_some() || t.task.is_none() {
            t.task = Some(Box::new(Task {
                task_id: task_id.to_owned(),
                ..Task::default()
            }));
        }
        let task = t.task.as_mut().expect("set above");
        set(&mut task.task_type, &ev.task_type);
        set(&mut task.phase, &ev.phase);
        set(&mut task.status, &ev.status);
        set(&mut task.description, &ev.description);
        set(&mut task.summary, &ev.summary);
        set(&mut task.last_tool_name, &ev.last_tool_name);
        if let Some(u) = ev.usage.as_deref() {
            task.usage = Some(RawJson::of(u));
        }
        let per = &mut self.idx.per[s];
        if let Some(old) = old {
            per.tasks.remove(&old);
        }
        per.tasks.insert(task_id.to_owned(), call);
    }

    /// A plan event (AceClaw's): a step's progress (`plan_step_*`, a `task_update` of
    /// `taskType` `plan_step` whose `taskId` is the step's id and `aceclaw.planId` its plan)
    /// or the plan's own (`plan_replanned`, `_escalated`, `_completed`: `taskType` `plan`, the
    /// plan's id as `taskId`). It changes the plan it names (the latest plan entry of that
    /// `planId`), or, naming none, the session's latest plan. Naming a plan the session has
    /// not had yet, it is held (RULE 4: its order against `plan_created` does not matter) and
    /// applied when a plan of that id arrives ([`State::apply_held_plan_events`]); never to
    /// another plan. Naming none before any plan, it changes nothing.
    fn plan_event(&mut self, s: usize, ev: &Ev, seq: u64) {
        let step = ev.task_type.as_deref() == Some(PLAN_STEP);
        let nonempty = |x: &Option<std::borrow::Cow<str>>| {
            x.as_deref().filter(|t| !t.is_empty()).map(str::to_owned)
        };
        let (plan_id, held_step) = if step {
            let at = HeldStep {
                step_id: nonempty(&ev.task_id),
                step_index: ev.ext.step_index,
            };
            (nonempty(&ev.ext.plan_id), Some(at))
        } else {
            (nonempty(&ev.task_id), None)
        };
        let held = HeldPlanEvent {
            seq,
            plan_id: plan_id.unwrap_or_default(),
            step: held_step,
            status: own(&ev.status),
        };
        let target = if held.plan_id.is_empty() {
            self.pending.sessions[s].plan.as_ref().map(|p| p.entry)
        } else {
            self.idx.per[s].plans.get(&held.plan_id).copied()
        };
        match target {
            Some(i) if self.change_plan(s, i, &held) => touch(&mut self.entries[i as usize], seq),
            Some(_) => {}
            None if !held.plan_id.is_empty() => {
                let list = &mut self.cursor.sessions[s].plan_events;
                if list.len() >= MAX_HELD_PLAN_EVENTS {
                    list.remove(0);
                }
                list.push(held);
            }
            None => {}
        }
    }

    /// Applies the held plan events that name `plan_id` to plan entry `i` (just made), in the
    /// order they came, and forgets them.
    pub(super) fn apply_held_plan_events(&mut self, s: usize, plan_id: &str, i: u32) {
        let list = &mut self.cursor.sessions[s].plan_events;
        if !list.iter().any(|h| h.plan_id == plan_id) {
            return;
        }
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(list)
            .into_iter()
            .partition(|h| h.plan_id == plan_id);
        self.cursor.sessions[s].plan_events = rest;
        for h in &mine {
            self.change_plan(s, i, h);
        }
    }

    /// Applies plan event `h` to plan entry `i` of session `s` (and to `pending.plan` when it
    /// is that entry): a step event's step at its index (from 1, the order of the plan's
    /// steps), else the one that already has its id, gets that id as `stepId` and its status
    /// (when it has one; steps are never found by their text); a plan-level event sets the
    /// plan's `status`. Whether anything changed.
    fn change_plan(&mut self, s: usize, i: u32, h: &HeldPlanEvent) -> bool {
        let Some(Entry {
            body: Body::Plan(plan),
            ..
        }) = self.entries.get_mut(i as usize)
        else {
            return false;
        };
        let pending = self.pending.sessions[s]
            .plan
            .as_mut()
            .filter(|p| p.entry == i);
        match &h.step {
            Some(step) => {
                let Some(steps) = set_step(
                    &plan.entries,
                    step.step_index,
                    step.step_id.as_deref(),
                    h.status.as_deref(),
                ) else {
                    return false;
                };
                if let Some(p) = pending {
                    p.entries = steps.clone();
                }
                plan.entries = steps;
            }
            None => {
                let Some(status) = h.status.as_deref() else {
                    return false;
                };
                if plan.status.as_deref() == Some(status) {
                    return false;
                }
                plan.status = Some(status.to_owned());
                if let Some(p) = pending {
                    p.status = Some(status.to_owned());
                }
            }
        }
        true
    }

    /// A file change, on its call when known, else on the turn. A cumulative diff replaces the
    /// earlier cumulative diff of the same path; it restates the changes its turn's calls
    /// made (Codex's `turn/diff/updated`), so it is not counted as a change of its own.
    pub(super) fn file_change(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(path) = ev.path.as_deref() else {
            return;
        };
        let mut rec = FileChangeRec {
            path: path.to_owned(),
            change_kind: own(&ev.change_kind).unwrap_or_default(),
            move_path: own(&ev.move_path),
            diff: own(&ev.diff),
            call_id: None,
            cumulative: ev.cumulative,
            seq,
        };
        let call = ev
            .call_id
            .as_deref()
            .and_then(|c| self.idx.per[s].calls.get(c).copied());
        let list = match call {
            Some(i) => &mut self.call_mut(i, seq).file_changes,
            None => {
                let t = match self.open_turn_pos(s) {
                    Some(t) => t,
                    None if !self.tree.sessions[s].turns.is_empty() => {
                        self.tree.sessions[s].turns.len() - 1
                    }
                    None => return,
                };
                rec.call_id = own(&ev.call_id);
                &mut self.tree.sessions[s].turns[t].file_changes
            }
        };
        if rec.cumulative {
            if let Some(old) = list.iter_mut().find(|c| c.cumulative && c.path == rec.path) {
                *old = rec;
                return;
            }
        }
        let counted = !rec.cumulative;
        push_small(list, rec);
        self.totals.sessions[s].counts.file_changes += u64::from(counted);
    }

    // -----------------------------------------------------------------------------------------
    // Permissions.

    /// RULE 5: a permission_request entry, attached to its call.
    pub(super) fn permission_request(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(req) = ev.request_id.as_deref() else {
            return;
        };
        let call = ev.tool_use_id.as_deref();
        let call_entry = call.and_then(|c| self.idx.per[s].calls.get(c).copied());
        let parent = ev
            .parent()
            .map(str::to_owned)
            .or_else(|| call_entry.and_then(|i| self.entries[i as usize].parent_call_id.clone()));
        let tool_name = own(&ev.tool_name).unwrap_or_default();
        let body = Body::PermissionRequest(Box::new(PermissionEntry {
            request_id: req.to_owned(),
            tool_name: tool_name.clone(),
            tool_kind: own(&ev.tool_kind),
            call_id: call.map(str::to_owned),
            title: own(&ev.title),
            reason: own(&ev.reason),
            blocked_path: own(&ev.blocked_path),
            input: ev.tool_input.as_deref().map(RawJson::of),
            suggestions: ev.suggestions.as_deref().map(RawJson::of),
            options: ev.options.as_deref().map(RawJson::of),
            response: None,
        }));
        let i = self.push_entry(s, parent.as_deref(), ev, seq, body, false);
        if let Some(c) = call_entry {
            self.entries[i as usize].turn = self.entries[c as usize].turn;
            self.call_mut(c, seq).permission = Some(ToolPermission {
                request_id: req.to_owned(),
                decision: None,
                allowed: None,
            });
        }
        self.idx.per[s].requests.insert(req.to_owned(), i);
        // A question asked by a request alone (Codex's `item/tool/requestUserInput`: no call
        // of its own) is a pending question until it is answered; one about a call of kind
        // `ask` (Claude's AskUserQuestion) is pending with its call already.
        let asked = call.unwrap_or(req);
        let p = &mut self.pending.sessions[s];
        if ev.tool_kind.as_deref() == Some("ask") && !p.questions.iter().any(|q| q.call_id == asked)
        {
            push_small(
                &mut p.questions,
                PendingTool {
                    call_id: asked.to_owned(),
                    tool_name: Some(tool_name.clone()),
                    kind: Some("ask".to_owned()),
                    parent_call_id: parent.clone(),
                    entry: i,
                    seq,
                },
            );
        }
        push_small(
            &mut self.pending.sessions[s].permissions,
            PendingPermission {
                request_id: req.to_owned(),
                tool_name,
                call_id: call.map(str::to_owned),
                entry: i,
                seq,
            },
        );
        self.totals.sessions[s].counts.permission_requests += 1;
    }

    /// RULE 6: the answer, on the request entry and on the call.
    pub(super) fn permission_response(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(req) = ev.request_id.as_deref() else {
            return;
        };
        let decision = own(&ev.decision).unwrap_or_default();
        let allowed = ev.allowed.unwrap_or(false);
        let mut call = own(&ev.tool_use_id);
        // A request answered "deny" twice is one denial.
        let mut denied_before = false;
        if let Some(&i) = self.idx.per[s].requests.get(req) {
            let e = &mut self.entries[i as usize];
            touch(e, seq);
            if let Body::PermissionRequest(p) = &mut e.body {
                denied_before = p.response.as_ref().is_some_and(|r| denies(&r.decision));
                p.response = Some(PermissionAnswer {
                    decision: decision.clone(),
                    allowed,
                    message: own(&ev.message),
                    interrupt: ev.interrupt,
                    option_id: own(&ev.option_id),
                    seq,
                    timestamp: own(&ev.timestamp),
                });
                if call.is_none() {
                    call.clone_from(&p.call_id);
                }
            }
        }
        let pending = &mut self.pending.sessions[s].permissions;
        pending.retain(|p| p.request_id != req);
        free(pending);
        // The answer resolves a question the request asked on its own.
        if let Some(&i) = self.idx.per[s].requests.get(req) {
            let questions = &mut self.pending.sessions[s].questions;
            questions.retain(|q| q.entry != i);
            free(questions);
        }
        if let Some(c) = call.as_deref() {
            if let Some(&i) = self.idx.per[s].calls.get(c) {
                let t = self.call_mut(i, seq);
                let p = t.permission.get_or_insert_with(|| ToolPermission {
                    request_id: req.to_owned(),
                    decision: None,
                    allowed: None,
                });
                p.decision = Some(decision.clone());
                p.allowed = Some(allowed);
            }
        }
        if denies(&decision) && !denied_before {
            self.deny(s, call.as_deref());
        }
    }

    /// A refused call, counted once however many events report it (the answer to the request
    /// and the turn's `permissionDenials`).
    pub(super) fn deny(&mut self, s: usize, call: Option<&str>) {
        if let Some(&i) = call.and_then(|c| self.idx.per[s].calls.get(c)) {
            if let Body::ToolCall(t) = &mut self.entries[i as usize].body {
                if t.denied {
                    return;
                }
                t.denied = true;
            }
        }
        self.totals.sessions[s].counts.permission_denials += 1;
    }
}

/// A call's duration from its start and end times, when it has both.
fn span_ms(t: &ToolCall) -> Option<u64> {
    let start = crate::time::millis(t.started_at.as_deref()?)?;
    let end = crate::time::millis(t.ended_at.as_deref()?)?;
    u64::try_from(end - start).ok()
}

/// RULE 6: whether a decision refuses the call. Denials are counted from the decision the
/// answer carries (`deny`, `deny_always`), never from `allowed` or the option picked.
fn denies(decision: &str) -> bool {
    matches!(decision, "deny" | "deny_always")
}

/// The members of a tool_invocation, overwriting what is known (what it lacks is kept).
fn fill_call(t: &mut ToolCall, ev: &Ev) {
    set_tool_name(t, &ev.tool_name);
    set(&mut t.kind, &ev.kind);
    set(&mut t.title, &ev.title);
    if let Some(i) = ev.input.as_deref() {
        t.input = Some(RawJson::of(i));
    }
    if let Some(l) = &ev.locations {
        t.locations = Some(l.iter().map(|x| x.to_string()).collect());
    }
    set(&mut t.mcp_server, &ev.mcp_server);
    set(&mut t.mcp_tool, &ev.mcp_tool);
    set(&mut t.message_id, &ev.message_id);
    set(&mut t.model, &ev.model);
}

/// Overwrites `into` when the event carries the member.
fn set(into: &mut Option<String>, v: &super::view::S) {
    if v.is_some() {
        *into = own(v);
    }
}

/// RULE 3: a tool name without its MCP prefix (`mcp__acp__Read` is `Read`), and the server
/// (and tool) it names, when it has one.
pub(super) fn clean_tool_name(name: &str) -> (&str, Option<&str>) {
    match crate::providers::split_mcp(name) {
        Some((server, tool)) if !tool.is_empty() => (tool, Some(server)),
        _ => (name, None),
    }
}

/// Sets the call's tool name, when the event carries one, cleaned (RULE 3); the server of a
/// prefixed name is kept apart, in `mcpServer` and `mcpTool`, unless the event names them.
fn set_tool_name(t: &mut ToolCall, v: &super::view::S) {
    let Some(name) = v.as_deref() else {
        return;
    };
    let (name, server) = clean_tool_name(name);
    t.tool_name = Some(name.to_owned());
    if let Some(server) = server {
        t.mcp_server.get_or_insert_with(|| server.to_owned());
        t.mcp_tool.get_or_insert_with(|| name.to_owned());
    }
}

/// Adds `n` to the count of calls of `kind` (`other` when unknown), dropping a count of 0.
fn count_kind(by_kind: &mut std::collections::BTreeMap<String, u64>, kind: Option<&str>, n: i64) {
    let kind = kind.unwrap_or("other");
    match by_kind.get_mut(kind) {
        Some(c) => {
            *c = c.saturating_add_signed(n);
            if *c == 0 {
                by_kind.remove(kind);
            }
        }
        None if n > 0 => {
            by_kind.insert(kind.to_owned(), n as u64);
        }
        None => {}
    }
}
