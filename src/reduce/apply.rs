//! `State::apply`: one event in, the state updated. Sessions, turns and the routing of events
//! without a session id are here; the entry rules are in `entries.rs`, the accounting in
//! `totals.rs`.

use super::state::*;
use super::view::{own, Ev};

/// Parked events beyond this many are attributed at once (a stream that never names a
/// session must not grow the state without bound).
const MAX_PARKED: usize = 256;

/// Events that never move events without a session id out of the parking area: they carry no
/// agent output, so they say nothing about which session the parked events belong to.
fn quiet(event: &str) -> bool {
    matches!(
        event,
        "session_init"
            | "session_status"
            | "session_mode"
            | "config_options"
            | "session_info"
            | "available_commands"
            | "rate_limit_update"
            | "hook"
            | "user_input"
            | "turn_start"
    )
}

/// Whether an event may be parked (its line kept until its session is known): one without a
/// session id that is [`quiet`]. `reduce --jobs` keeps the line of these only.
pub fn may_park(ev: &Ev) -> bool {
    ev.session().is_empty() && quiet(&ev.event)
}

/// Events that open a turn when none is open (top-level ones only: a subagent's events belong
/// to the turn of the call that started it). Not a `session_init`: the converter begins each
/// turn with a `turn_start` (inferred where the wire has none), and a session announced
/// without a prompt (an agent's session file that was never used) has no turn.
fn opens_turn(ev: &Ev) -> bool {
    if ev.parent().is_some() {
        return false;
    }
    match ev.event.as_ref() {
        "user_input" | "text" | "stream_delta" | "tool_invocation" | "subagent_spawn"
        | "permission_request" | "plan_update" => true,
        _ => false,
    }
}

/// A parked event's line with the `seq` it was applied at: a line the converter wrote carries
/// the converter's count, which depends on where the reading started (`reduce --from-state`
/// reading a log again), not the log's.
fn with_seq(line: Box<serde_json::value::RawValue>, seq: u64) -> Box<serde_json::value::RawValue> {
    use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
    use serde_json::value::{to_raw_value, RawValue};
    /// An object's members as written (numbers beyond f64 too), in their order.
    struct Members(Vec<(String, Box<RawValue>)>);
    impl<'de> Deserialize<'de> for Members {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Members;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Members, A::Error> {
                    let mut v = Vec::new();
                    while let Some(kv) = m.next_entry()? {
                        v.push(kv);
                    }
                    Ok(Members(v))
                }
            }
            d.deserialize_map(V)
        }
    }
    impl serde::Serialize for Members {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
        }
    }
    let (Ok(mut members), Ok(n)) = (
        serde_json::from_str::<Members>(line.get()),
        to_raw_value(&seq),
    ) else {
        return line;
    };
    match members.0.iter_mut().find(|(k, _)| k == "seq") {
        Some((_, v)) if v.get() == n.get() => return line,
        Some((_, v)) => *v = n,
        None => members.0.push(("seq".into(), n)),
    }
    to_raw_value(&members).unwrap_or(line)
}

impl State {
    /// Applies one event. `ev.seq` must be set (the caller numbers events that lack it).
    /// Inside a subagent that no call announced, an event without a `parentCallId` is applied
    /// as the subagent's ([`State::positional_parent`]); `ev` is as it was when this returns.
    pub fn apply(&mut self, ev: &mut Ev) {
        let seq = ev.seq.unwrap_or(self.last_seq + 1);
        self.last_seq = seq;
        self.events.applied += 1;
        match self.events.by_type.get_mut(ev.event.as_ref()) {
            Some(n) => *n += 1,
            None => {
                self.events.by_type.insert(ev.event.to_string(), 1);
            }
        }
        // These change nothing but the counts.
        if matches!(ev.event.as_ref(), "notice" | "raw") {
            return;
        }
        if let Some(s) = self.route(ev, seq) {
            match self.positional_parent(s, ev) {
                Some(p) => {
                    ev.parent_call_id = Some(std::borrow::Cow::Owned(p));
                    self.apply_to(s, ev, seq);
                    ev.parent_call_id = None;
                }
                None => self.apply_to(s, ev, seq),
            }
        }
    }

    /// The subagent an event without a `parentCallId` belongs to by its place: the innermost
    /// running subagent of session `s` that no call announced (AceClaw's, whose events name
    /// no parent), for the events that make or change the agent's entries. Its own
    /// `subagent_complete` is not inside it. `None` at once when no such subagent runs.
    fn positional_parent(&self, s: usize, ev: &Ev) -> Option<String> {
        let top = self.cursor.sessions[s].subagents.last()?;
        if ev.parent().is_some() {
            return None;
        }
        let inside = match ev.event.as_ref() {
            "text" | "stream_delta" | "tool_invocation" | "tool_update" | "tool_completion"
            | "permission_request" | "error" | "plan_update" | "subagent_spawn" => true,
            "subagent_complete" => ev.call_id.as_deref() != Some(top),
            _ => false,
        };
        inside.then(|| top.clone())
    }

    /// Which session an event belongs to; `None` when it was parked.
    fn route(&mut self, ev: &Ev, seq: u64) -> Option<usize> {
        let id = ev.session();
        if !id.is_empty() {
            let s = self.session(id, ev, seq);
            if self.cursor.session.as_deref() != Some(id) {
                self.cursor.session = Some(id.to_owned());
            }
            self.unpark(s);
            return Some(s);
        }
        let opener =
            matches!(ev.event.as_ref(), "user_input" | "turn_start") && ev.parent().is_none();
        let current = self
            .cursor
            .session
            .as_deref()
            .and_then(|c| self.idx.sessions.get(c).copied());
        // An opener is quiet: whatever is parked may park.
        let park = may_park(ev)
            && match current {
                Some(s) => {
                    (opener && self.open_turn_pos(s).is_none())
                        || !self.cursor.unattributed.is_empty()
                }
                None => true,
            };
        if park && self.cursor.unattributed.len() < MAX_PARKED {
            if let Some(line) = ev.line_json() {
                self.cursor.unattributed.push(Parked {
                    seq,
                    event: RawJson(with_seq(line, seq)),
                });
                return None;
            }
        }
        let s = match current {
            Some(s) => s,
            None => {
                self.cursor.session = Some(String::new());
                self.session("", ev, seq)
            }
        };
        self.unpark(s);
        Some(s)
    }

    /// Applies the parked events to session `s`, in order.
    fn unpark(&mut self, s: usize) {
        if self.cursor.unattributed.is_empty() {
            return;
        }
        for p in std::mem::take(&mut self.cursor.unattributed) {
            // Parked lines were parsed once already.
            if let Ok(mut ev) = Ev::parse(p.event.get()) {
                ev.seq = Some(p.seq);
                self.apply_to(s, &ev, p.seq);
            }
        }
    }

    /// The position of session `id`, created on first sight.
    pub(super) fn session(&mut self, id: &str, ev: &Ev, seq: u64) -> usize {
        if let Some((last, s)) = &self.idx.last {
            if last == id {
                return *s;
            }
        }
        let s = match self.idx.sessions.get(id) {
            Some(&s) => s,
            None => {
                let s = self.tree.sessions.len();
                self.tree.sessions.push(SessionNode {
                    session_id: id.to_owned(),
                    provider: own(&ev.provider),
                    first_seq: seq,
                    ..SessionNode::default()
                });
                self.totals.sessions.push(SessionTotals {
                    session_id: id.to_owned(),
                    ..SessionTotals::default()
                });
                self.pending.sessions.push(SessionPending {
                    session_id: id.to_owned(),
                    ..SessionPending::default()
                });
                self.cursor.sessions.push(SessionCursor {
                    session_id: id.to_owned(),
                    ..SessionCursor::default()
                });
                self.idx.per.push(SessionIndex::default());
                self.idx.sessions.insert(id.to_owned(), s);
                s
            }
        };
        self.idx.last = Some((id.to_owned(), s));
        s
    }

    /// The position (in `turns`) of the turn still running in session `s`.
    pub(super) fn open_turn_pos(&self, s: usize) -> Option<usize> {
        self.pending.sessions[s].turn.map(|t| t as usize - 1)
    }

    fn apply_to(&mut self, s: usize, ev: &Ev, seq: u64) {
        self.messages_end(s, ev);
        if self.tree.sessions[s].provider.is_none() {
            self.tree.sessions[s].provider = own(&ev.provider);
        }
        if self.tree.sessions[s].started_at.is_none() {
            self.tree.sessions[s].started_at = own(&ev.timestamp);
        }
        if ev.event == "turn_start" {
            self.turn_start(s, ev, seq);
        } else if opens_turn(ev) && self.open_turn_pos(s).is_none() {
            self.open_turn(s, ev, seq);
        }
        if let Some(t) = self.open_turn_pos(s) {
            let turn = &mut self.tree.sessions[s].turns[t];
            if turn.started_at.is_none() && ev.timestamp.is_some() {
                turn.started_at = own(&ev.timestamp);
            }
        }
        match ev.event.as_ref() {
            "session_init" => self.session_init(s, ev, seq),
            "session_status" => self.session_status(s, ev),
            "session_info" if ev.title.is_some() => {
                self.tree.sessions[s].title = own(&ev.title);
            }
            "text" => self.text(s, ev, seq),
            "user_input" => self.user_input(s, ev, seq),
            "tool_invocation" => self.tool_invocation(s, ev, seq),
            "tool_completion" => self.tool_completion(s, ev, seq),
            "tool_update" => self.tool_update(s, ev, seq),
            "subagent_spawn" => self.subagent_spawn(s, ev, seq),
            "subagent_complete" => self.subagent_complete(s, ev, seq),
            "turn_complete" => self.turn_complete(s, ev, seq),
            "context_compaction" => self.context_compaction(s, ev, seq),
            "permission_request" => self.permission_request(s, ev, seq),
            "permission_response" => self.permission_response(s, ev, seq),
            "config_options" | "available_commands" => self.commands(s, ev, seq),
            "session_mode" => self.session_mode(s, ev, seq),
            "stream_delta" => self.stream_delta(s, ev, seq),
            "usage_update" => self.usage_update(s, ev, seq),
            "rate_limit_update" => self.rate_limit(s, ev, seq),
            "plan_update" => self.plan_update(s, ev, seq),
            "file_change" => self.file_change(s, ev, seq),
            "error" => self.error(s, ev, seq),
            "task_update" => self.task_update(s, ev, seq),
            "hook" if ev.phase.as_deref() == Some("response") => {
                self.totals.sessions[s].counts.hooks += 1;
            }
            // turn_start is handled above; unknown types are ignored.
            _ => {}
        }
    }

    // -----------------------------------------------------------------------------------------
    // Turns.

    fn open_turn(&mut self, s: usize, ev: &Ev, seq: u64) {
        self.end_scopes(s);
        self.status_at_boundary(s, true);
        let sess = &mut self.tree.sessions[s];
        let index = sess.turns.len() as u32 + 1;
        push_small(
            &mut sess.turns,
            Turn {
                index,
                status: TurnStatus::Running,
                turn_id: own(&ev.turn_id),
                model: self.pending.sessions[s].model.clone(),
                start_seq: seq,
                end_seq: None,
                started_at: own(&ev.timestamp),
                ended_at: None,
                interrupted: false,
                is_error: false,
                subtype: None,
                stop_reason: None,
                errors: None,
                duration_ms: None,
                duration_api_ms: None,
                num_turns: None,
                cost_usd: None,
                tokens: Tokens::default(),
                tools: 0,
                children: Vec::new(),
                file_changes: Vec::new(),
            },
        );
        self.pending.sessions[s].turn = Some(index);
        self.cursor.sessions[s].turn_started = false;
    }

    /// A turn still running with nothing from the agent yet: only its prompt, if any, and
    /// what is about the session rather than the turn (a mode change the client made before
    /// the prompt: ACP's `session/set_mode` before the first `session/prompt`).
    fn fresh(&self, s: usize, t: usize) -> bool {
        let turn = &self.tree.sessions[s].turns[t];
        turn.tools == 0
            && turn
                .children
                .iter()
                .all(|n| match &self.entries[n.entry as usize].body {
                    Body::Message(m) => m.role == Role::User,
                    Body::ModeChange(_) => true,
                    _ => false,
                })
    }

    /// turn_start: a new turn, unless the running one has nothing from the agent yet (it was
    /// opened by its prompt or session_init, and session-level events since do not count),
    /// which it then names.
    fn turn_start(&mut self, s: usize, ev: &Ev, seq: u64) {
        match self.open_turn_pos(s) {
            Some(t) if self.fresh(s, t) => {}
            Some(t) => {
                let (tokens, cost) = self.cursor.sessions[s].account.settle_incomplete();
                let turn = &mut self.tree.sessions[s].turns[t];
                turn.status = TurnStatus::Incomplete;
                turn.tokens = tokens;
                turn.cost_usd = cost;
                self.close_turn(s, t, seq);
                self.open_turn(s, ev, seq);
            }
            None => self.open_turn(s, ev, seq),
        }
        self.cursor.sessions[s].turn_started = true;
        let t = self.open_turn_pos(s).expect("a turn is open");
        let turn = &mut self.tree.sessions[s].turns[t];
        if ev.turn_id.is_some() {
            turn.turn_id = own(&ev.turn_id);
        }
        if ev.model.is_some() {
            turn.model = own(&ev.model);
            self.pending.sessions[s].model = own(&ev.model);
        }
        if crate::event::turn_start_ends_plan(ev.provider.as_deref().unwrap_or("")) {
            self.pending.sessions[s].plan = None;
        }
    }

    fn close_turn(&mut self, s: usize, t: usize, seq: u64) {
        self.end_scopes(s);
        self.status_at_boundary(s, false);
        // A subagent no call announced does not outlive its turn.
        self.cursor.sessions[s].subagents = Vec::new();
        let turn = &mut self.tree.sessions[s].turns[t];
        turn.end_seq = Some(seq);
        if self.pending.sessions[s].turn == Some(turn.index) {
            self.pending.sessions[s].turn = None;
            self.cursor.sessions[s].turn_started = false;
        }
    }

    fn turn_complete(&mut self, s: usize, ev: &Ev, seq: u64) {
        let t = match self.open_turn_pos(s) {
            Some(t) => t,
            None => {
                self.open_turn(s, ev, seq);
                self.open_turn_pos(s).expect("a turn is open")
            }
        };
        let session_model = self.tree.sessions[s].model.clone();
        let turn_model = self.tree.sessions[s].turns[t].model.clone();
        let (tokens, cost) = self.cursor.sessions[s]
            .account
            .turn_complete(ev, turn_model.as_deref().or(session_model.as_deref()));
        let running = crate::event::running_turn_totals(ev.provider.as_deref().unwrap_or(""));
        let api_ms = self.cursor.sessions[s]
            .account
            .report_api_ms(ev.duration_api_ms, running);
        self.window_from_models(s, ev, seq);
        let turn = &mut self.tree.sessions[s].turns[t];
        let cancelled =
            crate::event::cancelled_turn(ev.stop_reason.as_deref(), ev.subtype.as_deref())
                .is_some();
        turn.interrupted |= cancelled;
        let failed = ev.is_error && !cancelled;
        turn.status = if cancelled {
            TurnStatus::Cancelled
        } else if failed {
            TurnStatus::Failed
        } else {
            TurnStatus::Completed
        };
        turn.ended_at = own(&ev.timestamp);
        turn.is_error = ev.is_error;
        turn.subtype = own(&ev.subtype);
        turn.stop_reason = own(&ev.stop_reason);
        turn.errors = ev.errors.clone().filter(|e| !e.is_empty());
        turn.duration_ms = ev.duration_ms;
        turn.duration_api_ms = api_ms;
        turn.num_turns = ev.num_turns;
        turn.cost_usd = cost;
        turn.tokens = tokens;
        let c = &mut self.totals.sessions[s].counts;
        c.turns += 1;
        c.failed_turns += u64::from(failed);
        c.duration_ms += ev.duration_ms.unwrap_or(0);
        c.duration_api_ms += api_ms.unwrap_or(0);
        for d in ev.permission_denials.iter().flatten() {
            self.deny(s, d.tool_use_id.as_deref());
        }
        // A turn that ended interrupted or failed stopped the calls still running in it.
        if self.tree.sessions[s].turns[t].interrupted || ev.is_error {
            self.cancel_running(s, t as u32 + 1, seq);
        }
        self.close_turn(s, t, seq);
    }

    /// An interrupted or failed turn ended: its calls still running were cancelled.
    fn cancel_running(&mut self, s: usize, turn: u32, seq: u64) {
        let p = &mut self.pending.sessions[s];
        let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut p.tools)
            .into_iter()
            .partition(|x| self.entries[x.entry as usize].turn == Some(turn));
        p.tools = kept;
        p.questions
            .retain(|q| !gone.iter().any(|g| g.call_id == q.call_id));
        free(&mut p.tools);
        free(&mut p.questions);
        for g in gone {
            let e = &mut self.entries[g.entry as usize];
            touch(e, seq);
            if let Body::ToolCall(t) = &mut e.body {
                t.status = ToolStatus::Cancelled;
            }
            self.totals.sessions[s].counts.cancelled_tools += 1;
        }
    }

    // -----------------------------------------------------------------------------------------
    // Session facts.

    fn session_init(&mut self, s: usize, ev: &Ev, seq: u64) {
        if ev.model.is_some() {
            // The running turn's model too, when the agent has done nothing in it yet or it
            // has none: Claude names its model after it reads the prompt, in the session_init
            // that opens the turn (`-p`) or follows the prompt that did (the SDK).
            if let Some(t) = self.open_turn_pos(s) {
                if self.fresh(s, t) || self.tree.sessions[s].turns[t].model.is_none() {
                    self.tree.sessions[s].turns[t].model = own(&ev.model);
                }
            }
            self.tree.sessions[s].model = own(&ev.model);
            self.pending.sessions[s].model = own(&ev.model);
        }
        let node = &mut self.tree.sessions[s];
        if ev.cwd.is_some() {
            node.cwd = own(&ev.cwd);
        }
        if ev.version.is_some() {
            node.version = own(&ev.version);
        }
        // RULE 7: a new meta entry when the capabilities changed. They are compared as the
        // event carries them, and copied only when they changed (they are most of the line).
        let none = Meta::default();
        let latest = self.idx.per[s]
            .meta
            .map(|i| match &self.entries[i as usize].body {
                Body::Meta(m) => &**m,
                _ => &none,
            });
        let str_new = |have: &Option<String>, v: &super::view::S| {
            v.as_deref().is_some_and(|v| have.as_deref() != Some(v))
        };
        let raw_new = |have: &Option<RawJson>, v: Option<&serde_json::value::RawValue>| {
            v.is_some_and(|v| have.as_ref().map(RawJson::get) != Some(v.get()))
        };
        let changed = latest.is_none_or(|m| {
            str_new(&m.model, &ev.model)
                || str_new(&m.reasoning_effort, &ev.reasoning_effort)
                || str_new(&m.cwd, &ev.cwd)
                || str_new(&m.version, &ev.version)
                || str_new(&m.current_mode_id, &ev.permission_mode)
                || raw_new(&m.available_models, ev.available_models.as_deref())
                || raw_new(&m.available_tools, ev.available_tools.as_deref())
                || raw_new(&m.slash_commands, ev.slash_commands.as_deref())
                || raw_new(&m.mcp_servers, ev.mcp_servers.as_deref())
                || raw_new(&m.agents, ev.agents.as_deref())
                || raw_new(&m.skills, ev.skills.as_deref())
                || raw_new(&m.account, ev.account.as_deref())
        });
        if changed {
            let mut meta = latest.cloned().unwrap_or_default();
            let raw = |r: Option<&serde_json::value::RawValue>, into: &mut Option<RawJson>| {
                if let Some(r) = r {
                    *into = Some(RawJson::of(r));
                }
            };
            let str = |v: &super::view::S, into: &mut Option<String>| {
                if v.is_some() {
                    *into = own(v);
                }
            };
            str(&ev.model, &mut meta.model);
            str(&ev.reasoning_effort, &mut meta.reasoning_effort);
            str(&ev.cwd, &mut meta.cwd);
            str(&ev.version, &mut meta.version);
            str(&ev.permission_mode, &mut meta.current_mode_id);
            raw(ev.available_models.as_deref(), &mut meta.available_models);
            raw(ev.available_tools.as_deref(), &mut meta.available_tools);
            raw(ev.slash_commands.as_deref(), &mut meta.slash_commands);
            raw(ev.mcp_servers.as_deref(), &mut meta.mcp_servers);
            raw(ev.agents.as_deref(), &mut meta.agents);
            raw(ev.skills.as_deref(), &mut meta.skills);
            raw(ev.account.as_deref(), &mut meta.account);
            let i = self.push_entry(s, None, ev, seq, Body::Meta(Box::new(meta)), false);
            self.idx.per[s].meta = Some(i);
        }
        if let Some(mode) = ev.permission_mode.as_deref() {
            self.set_mode(s, mode, ev, seq);
        }
    }

    /// RULE 11: the current mode; a mode_change entry when it changes (not when first known).
    fn set_mode(&mut self, s: usize, mode: &str, ev: &Ev, seq: u64) {
        let prev = self.pending.sessions[s].mode.clone();
        if prev.as_deref() == Some(mode) {
            return;
        }
        self.pending.sessions[s].mode = Some(mode.to_owned());
        if prev.is_some() {
            let body = Body::ModeChange(ModeChange {
                previous_mode_id: prev,
                new_mode_id: mode.to_owned(),
            });
            self.push_entry(s, None, ev, seq, body, true);
        }
    }

    /// RULE 11 for the current mode, and RULE 7 for a mode list (only a `session/new` or
    /// `session/load` answer carries one; a mode update's list is empty). The first list
    /// fills in the meta entry its answer's session_init made, with the current mode; a list
    /// or current mode that differs from the latest meta entry's later is a new meta entry (a
    /// copy of the latest with the new modes), so that the history is kept. A mode update
    /// alone changes no meta entry: it is a mode_change entry and `pending.mode`.
    fn session_mode(&mut self, s: usize, ev: &Ev, seq: u64) {
        if let Some(mode) = ev.current_mode_id.as_deref() {
            self.set_mode(s, mode, ev, seq);
        }
        let Some(modes) = ev.available_modes.as_deref().filter(|m| m.get() != "[]") else {
            return;
        };
        let current = ev.current_mode_id.as_deref().filter(|m| !m.is_empty());
        let latest = self.idx.per[s]
            .meta
            .and_then(|i| match &self.entries[i as usize].body {
                Body::Meta(m) => Some(&**m),
                _ => None,
            });
        let set = |m: &mut Meta| {
            m.available_modes = Some(RawJson::of(modes));
            if let Some(c) = current {
                m.current_mode_id = Some(c.to_owned());
            }
        };
        match latest {
            Some(m)
                if m.available_modes.as_ref().is_some_and(|have| {
                    have.get() != modes.get()
                        || current.is_some_and(|c| m.current_mode_id.as_deref() != Some(c))
                }) =>
            {
                let mut meta = m.clone();
                set(&mut meta);
                let i = self.push_entry(s, None, ev, seq, Body::Meta(Box::new(meta)), false);
                self.idx.per[s].meta = Some(i);
            }
            _ => self.update_meta(s, ev, seq, set),
        }
    }

    /// RULE 12: commands and configuration options update the latest meta entry in place.
    fn commands(&mut self, s: usize, ev: &Ev, seq: u64) {
        if let Some(c) = ev.available_commands.as_deref() {
            self.update_meta(s, ev, seq, |m| m.available_commands = Some(RawJson::of(c)));
        }
        if let Some(c) = ev.config_options.as_deref() {
            self.update_meta(s, ev, seq, |m| m.config_options = Some(RawJson::of(c)));
        }
    }

    fn update_meta(&mut self, s: usize, ev: &Ev, seq: u64, f: impl FnOnce(&mut Meta)) {
        match self.idx.per[s].meta {
            Some(i) => {
                let e = &mut self.entries[i as usize];
                if let Body::Meta(m) = &mut e.body {
                    f(m);
                }
                touch(e, seq);
            }
            None => {
                let mut m = Meta::default();
                f(&mut m);
                let i = self.push_entry(s, None, ev, seq, Body::Meta(Box::new(m)), false);
                self.idx.per[s].meta = Some(i);
            }
        }
    }

    /// A session's `status` is its last session_status while that holds: a turn boundary ends
    /// the statuses about the other side of it. A turn that opens (`opening`) ends those about
    /// the time between turns: `idle`, and `interrupted`, which told how an earlier turn was
    /// stopped (ACP's `session/cancel`, Claude's interrupt). A turn that ends ends those about
    /// its work: `running`, `requesting`, `compacting`, `requires_action`. Others (`error`,
    /// `ended`, …) last until the next session_status. Once its status has ended, the session
    /// has none until the next.
    fn status_at_boundary(&mut self, s: usize, opening: bool) {
        let node = &mut self.tree.sessions[s];
        let ends = match node.status.as_deref() {
            Some("idle" | "interrupted") => opening,
            Some("running" | "requesting" | "compacting" | "requires_action") => !opening,
            _ => false,
        };
        if ends {
            node.status = None;
        }
    }

    fn session_status(&mut self, s: usize, ev: &Ev) {
        let Some(status) = ev.status.as_deref() else {
            return;
        };
        self.tree.sessions[s].status = Some(status.to_owned());
        if status == "interrupted" {
            if let Some(t) = self.open_turn_pos(s) {
                self.tree.sessions[s].turns[t].interrupted = true;
            }
        }
    }

    fn rate_limit(&mut self, s: usize, ev: &Ev, seq: u64) {
        self.pending.sessions[s].rate_limit = Some(RateLimit {
            status: own(&ev.status),
            rate_limit_type: own(&ev.rate_limit_type),
            plan_type: own(&ev.plan_type),
            primary: ev.primary.as_deref().map(RawJson::of),
            secondary: ev.secondary.as_deref().map(RawJson::of),
            seq,
        });
    }

    fn context_compaction(&mut self, s: usize, ev: &Ev, seq: u64) {
        let body = Body::Compaction(Compaction {
            trigger: own(&ev.trigger).unwrap_or_default(),
            pre_tokens: ev.pre_tokens,
            post_tokens: ev.post_tokens,
            summary: own(&ev.summary),
            duration_ms: ev.duration_ms,
        });
        self.push_entry(s, ev.parent(), ev, seq, body, true);
        let t = &mut self.totals.sessions[s];
        t.counts.compactions += 1;
        // The main agent's context is what the compaction left, until its next request.
        if let (None, Some(post)) = (ev.parent(), ev.post_tokens) {
            let c = t.context.get_or_insert_with(Context::default);
            c.used_tokens = post;
            c.seq = seq;
        }
    }

    fn error(&mut self, s: usize, ev: &Ev, seq: u64) {
        let severity = own(&ev.severity).unwrap_or_else(|| "error".into());
        let c = &mut self.totals.sessions[s].counts;
        if severity == "warning" {
            c.warnings += 1;
        } else {
            c.errors += 1;
        }
        let body = Body::Error(Box::new(ErrorEntry {
            message: own(&ev.message).unwrap_or_default(),
            severity,
            code: own(&ev.code),
            http_status: ev.http_status,
            will_retry: ev.will_retry,
            attempt: ev.attempt,
            max_retries: ev.max_retries,
            retry_delay_ms: ev.retry_delay_ms,
            request_id: own(&ev.request_id),
        }));
        self.push_entry(s, ev.parent(), ev, seq, body, true);
    }

    fn plan_update(&mut self, s: usize, ev: &Ev, seq: u64) {
        let Some(entries) = ev.entries.as_deref() else {
            return;
        };
        let plan_id = ev.ext.plan_id.as_deref().filter(|p| !p.is_empty());
        let body = Body::Plan(Plan {
            entries: RawJson::of(entries),
            plan_id: plan_id.map(str::to_owned),
            status: None,
            call_id: own(&ev.call_id),
            explanation: own(&ev.explanation),
        });
        let i = self.push_entry(s, ev.parent(), ev, seq, body, true);
        // RULE 10: history in the entries, the latest here.
        self.pending.sessions[s].plan = Some(PendingPlan {
            entry: i,
            entries: RawJson::of(entries),
            status: None,
        });
        if let Some(id) = plan_id {
            self.idx.per[s].plans.insert(id.to_owned(), i);
            // RULE 4: its events that came first.
            self.apply_held_plan_events(s, id, i);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Entries and the tree.

    /// Appends an entry for agent `parent` of session `s` (RULE 2: the agent's previous entry
    /// stops streaming) and, with `node`, its node in the tree. Returns its index.
    pub(super) fn push_entry(
        &mut self,
        s: usize,
        parent: Option<&str>,
        ev: &Ev,
        seq: u64,
        body: Body,
        node: bool,
    ) -> u32 {
        let i = self.entries.len() as u32;
        let ty = body.ty();
        let call_id = match &body {
            Body::ToolCall(t) => Some(t.call_id.clone()),
            _ => None,
        };
        let turn = if node {
            self.place_node(
                s,
                parent,
                Node {
                    entry: i,
                    ty,
                    call_id,
                    children: Vec::new(),
                },
            )
        } else {
            self.open_turn_pos(s).map(|t| t as u32)
        };
        self.entries.push(Entry {
            session_id: self.tree.sessions[s].session_id.clone(),
            turn: turn.map(|t| t + 1),
            parent_call_id: parent.map(str::to_owned),
            parent_step_id: own(&ev.ext.parent_step_id),
            seq,
            updated_seq: None,
            timestamp: own(&ev.timestamp),
            body,
        });
        let sc = self.scope(s, parent);
        self.end_stream(s, sc);
        self.cursor.sessions[s].scopes[sc].last_entry = Some(i);
        i
    }

    /// Puts a node under the node of call `parent` when there is one, else at the top of the
    /// running turn. Returns the turn position, `None` when the node has no place (no turn).
    fn place_node(&mut self, s: usize, parent: Option<&str>, node: Node) -> Option<u32> {
        let per = &mut self.idx.per[s];
        let at = parent.and_then(|p| per.nodes.get(p).cloned());
        let (t, mut path) = match at {
            Some((t, path)) => (t, path),
            None => (self.pending.sessions[s].turn? - 1, Vec::new()),
        };
        let turn = &mut self.tree.sessions[s].turns[t as usize];
        let mut list = &mut turn.children;
        for &k in &path {
            list = &mut list[k as usize].children;
        }
        path.push(list.len() as u32);
        if let Some(c) = &node.call_id {
            per.nodes.insert(c.clone(), (t, path));
        }
        push_small(list, node);
        Some(t)
    }

    /// The position of agent `parent`'s scope in session `s`, created on first use.
    pub(super) fn scope(&mut self, s: usize, parent: Option<&str>) -> usize {
        let scopes = &mut self.cursor.sessions[s].scopes;
        match scopes
            .iter()
            .position(|sc| sc.parent_call_id.as_deref() == parent)
        {
            Some(i) => i,
            None => {
                push_small(
                    scopes,
                    Scope {
                        parent_call_id: parent.map(str::to_owned),
                        ..Scope::default()
                    },
                );
                scopes.len() - 1
            }
        }
    }

    /// RULE 2: the scope's last entry is no longer streaming.
    pub(super) fn end_stream(&mut self, s: usize, sc: usize) {
        let scope = &mut self.cursor.sessions[s].scopes[sc];
        if !scope.streaming {
            return;
        }
        scope.streaming = false;
        scope.stream_start = 0;
        if let Some(i) = scope.last_entry {
            match &mut self.entries[i as usize].body {
                Body::Message(m) => m.streaming = false,
                Body::Thought(t) => t.streaming = false,
                _ => {}
            }
        }
    }

    /// RULE 2 and RULE 9: a message (or thought) has ended when an event of its session
    /// arrives that is not a chunk or the final text of an agent's message (those continue
    /// their agent's own and end the others'). Its entry stops `streaming`; the agent's
    /// scope still knows where the streamed text began, so that a chunk or final text of the
    /// same message that comes later (Claude writes usage lines between chunks) continues it,
    /// streaming again.
    fn messages_end(&mut self, s: usize, ev: &Ev) {
        let scopes = &self.cursor.sessions[s].scopes;
        if !scopes.iter().any(|sc| sc.streaming) {
            return;
        }
        let continues = match ev.event.as_ref() {
            "stream_delta" => matches!(ev.kind.as_deref(), Some("text" | "thinking")),
            "text" => true,
            _ => false,
        };
        let own = continues
            .then(|| {
                let parent = ev.parent();
                scopes
                    .iter()
                    .position(|sc| sc.parent_call_id.as_deref() == parent)
            })
            .flatten();
        for (k, sc) in scopes.iter().enumerate() {
            if !sc.streaming || Some(k) == own {
                continue;
            }
            let Some(i) = sc.last_entry else { continue };
            match &mut self.entries[i as usize].body {
                Body::Message(m) => m.streaming = false,
                Body::Thought(t) => t.streaming = false,
                _ => {}
            }
        }
    }

    /// A turn boundary: every agent's streaming ends and no entry is continued across it.
    fn end_scopes(&mut self, s: usize) {
        for sc in 0..self.cursor.sessions[s].scopes.len() {
            self.end_stream(s, sc);
        }
        self.cursor.sessions[s].scopes = Vec::new();
    }
}

/// Records that event `seq` changed entry `e`.
pub(super) fn touch(e: &mut Entry, seq: u64) {
    if seq != e.seq {
        e.updated_seq = Some(seq);
    }
}
