//! The rule engine: the protocol's rules, each with a stable id and a level, checked event by
//! event over one log.
//!
//! A [`Checker`] sees the events of one log in order ([`Checker::event`]) and reports what breaks
//! a rule to a [`Findings`] list, which applies `--allow` and `--deny` ([`Policy`]). Its memory is
//! the open state (tools, permissions, subagents, turns and streamed blocks not finished yet), plus
//! what finds duplicates: the hash and line of every event id (17 to 18 bytes, see
//! [`IdSet`]) and an 8-byte hash of every finished call.

use crate::ids::{hash64, hash_pair, Hash64, IdSet, Prehashed, Repeat};
use serde_json::{Map, Value};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Warning,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

macro_rules! rules {
    ($($variant:ident = $id:literal, $level:ident, $about:literal;)*) => {
        /// A rule of the protocol. The ids are stable: `--allow`, `--deny` and CI scripts name them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule { $($variant,)* }

        impl Rule {
            /// Every rule, in the order the documentation lists them.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// The stable id.
            pub fn id(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            /// The level a finding has unless `--deny` raises it.
            pub fn level(self) -> Level {
                match self { $(Rule::$variant => Level::$level,)* }
            }

            /// What breaks the rule, in a few words (the README and the man page say it in full).
            pub fn about(self) -> &'static str {
                match self { $(Rule::$variant => $about,)* }
            }
        }
    };
}

rules! {
    UnreadableLine = "unreadable-line", Error,
        "not a JSON object (bad UTF-8 or JSON, or too long)";
    Schema = "schema", Error,
        "does not follow the InsightsEvent schema";
    TooDeep = "too-deep", Warning,
        "nested over 128 levels deep, so not checked";
    SeqOrder = "seq-order", Error,
        "seq not greater than the previous event's";
    IdUnique = "id-unique", Error,
        "an id used twice in the log";
    SessionInitFirst = "session-init-first", Error,
        "an event of a session before its session_init";
    ToolUnknownCall = "tool-unknown-call", Error,
        "completion or update of a call never invoked";
    ToolInvokedTwice = "tool-invoked-twice", Error,
        "a callId invoked twice";
    ToolCompletedTwice = "tool-completed-twice", Error,
        "a call completed twice";
    ToolOpenAtEnd = "tool-open-at-end", Warning,
        "a call not completed by the end of the log";
    PermissionUnknownRequest = "permission-unknown-request", Error,
        "an answer to a permission request never made";
    PermissionAnsweredTwice = "permission-answered-twice", Error,
        "a permission request answered twice";
    PermissionUnanswered = "permission-unanswered", Warning,
        "a permission request not answered by the end";
    SubagentUnknown = "subagent-unknown", Error,
        "completion of, or event in, a subagent never spawned";
    SubagentCompletedTwice = "subagent-completed-twice", Error,
        "a subagent completed twice";
    SubagentOpenAtEnd = "subagent-open-at-end", Warning,
        "a subagent not completed by the end of the log";
    TurnUnstarted = "turn-unstarted", Error,
        "turn_complete without an open turn_start";
    TurnOpenAtEnd = "turn-open-at-end", Warning,
        "a turn_start without turn_complete by the end";
    DiffUnified = "diff-unified", Error,
        "a file_change diff that git apply would not take";
    SessionInitAnonymous = "session-init-anonymous", Error,
        "a session_init without a sessionId";
    StreamUnfinished = "stream-unfinished", Error,
        "streamed block without its final text or tool call";
    StreamOpenAtEnd = "stream-open-at-end", Warning,
        "a block still streaming at the end of the log";
    RawEvent = "raw-event", Warning,
        "a raw event: input that no provider could map";
    MostlyRaw = "mostly-raw", Error,
        "most lines fell back to raw events: wrong --from, or not an agent's output";
}

impl Rule {
    pub fn by_id(id: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|r| r.id() == id)
    }

    fn bit(self) -> u64 {
        1 << (self as u32)
    }
}

/// `--allow` and `--deny`, resolved once.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    allowed: u64,
    denied: u64,
}

impl Policy {
    /// `allow` and `deny` hold rule ids or the word `warnings` (every warning rule).
    pub fn new(allow: &[String], deny: &[String]) -> anyhow::Result<Policy> {
        let mask = |names: &[String]| -> anyhow::Result<u64> {
            let mut m = 0;
            for n in names {
                if n == "warnings" {
                    m |= Rule::ALL
                        .iter()
                        .filter(|r| r.level() == Level::Warning)
                        .fold(0, |m, r| m | r.bit());
                } else {
                    let r = Rule::by_id(n).ok_or_else(|| anyhow::anyhow!("unknown rule {n:?}"))?;
                    m |= r.bit();
                }
            }
            Ok(m)
        };
        Ok(Policy {
            allowed: mask(allow)?,
            denied: mask(deny)?,
        })
    }

    /// The level findings of `rule` get, `None` when the rule is allowed (silenced). `--allow`
    /// wins over `--deny`.
    pub fn level(&self, rule: Rule) -> Option<Level> {
        if self.allowed & rule.bit() != 0 {
            None
        } else if self.denied & rule.bit() != 0 {
            Some(Level::Error)
        } else {
            Some(rule.level())
        }
    }
}

/// One broken rule, at a line of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub line: u64,
    /// For `unreadable-line`: the column (1-based, in bytes) where reading failed.
    pub column: Option<u64>,
    pub rule: Rule,
    pub level: Level,
    /// For `schema`: the JSON pointer into the event (`""` is the whole event); `message` does
    /// not repeat it.
    pub pointer: Option<String>,
    pub message: String,
}

impl Finding {
    /// The message as people read it: after the JSON pointer, if there is one.
    pub fn text(&self) -> String {
        match self.pointer.as_deref() {
            Some(p) if !p.is_empty() => format!("{p}: {}", self.message),
            _ => self.message.clone(),
        }
    }
}

/// At most this many findings of one rule are kept per log; the rest are only counted.
pub const KEEP_PER_RULE: u64 = 1000;

/// The findings of one log, under a policy.
#[derive(Debug)]
pub struct Findings<'p> {
    policy: &'p Policy,
    pub list: Vec<Finding>,
    pub errors: u64,
    pub warnings: u64,
    /// All findings by rule, including those not kept in `list`.
    pub by_rule: BTreeMap<Rule, u64>,
}

impl<'p> Findings<'p> {
    pub fn new(policy: &'p Policy) -> Self {
        Findings {
            policy,
            list: Vec::new(),
            errors: 0,
            warnings: 0,
            by_rule: BTreeMap::new(),
        }
    }

    /// A finding of `rule` at `line`; the message is made only if the finding is kept.
    pub fn push(&mut self, rule: Rule, line: u64, message: impl FnOnce() -> String) {
        self.push_lazy(rule, line, None, None, message);
    }

    pub fn push_at(
        &mut self,
        rule: Rule,
        line: u64,
        column: Option<u64>,
        pointer: Option<String>,
        message: String,
    ) {
        self.push_lazy(rule, line, column, pointer, || message);
    }

    fn push_lazy(
        &mut self,
        rule: Rule,
        line: u64,
        column: Option<u64>,
        pointer: Option<String>,
        message: impl FnOnce() -> String,
    ) {
        let Some(level) = self.policy.level(rule) else {
            return;
        };
        match level {
            Level::Error => self.errors += 1,
            Level::Warning => self.warnings += 1,
        }
        let n = self.by_rule.entry(rule).or_default();
        *n += 1;
        if *n <= KEEP_PER_RULE {
            self.list.push(Finding {
                line,
                column,
                rule,
                level,
                pointer,
                message: message(),
            });
        }
    }

    /// Findings made after the fact (at the end of the log), each with the length `list` had
    /// when it would have been made at once, in order of that length: they are counted as if
    /// pushed now, and those kept go to their places in `list`.
    pub fn insert_late<F: FnOnce() -> String>(
        &mut self,
        late: impl IntoIterator<Item = (usize, Rule, u64, F)>,
    ) {
        let mut kept = Vec::new();
        for (pos, rule, line, message) in late {
            let len = self.list.len();
            self.push_lazy(rule, line, None, None, message);
            if self.list.len() > len {
                kept.extend(self.list.pop().map(|f| (pos, f)));
            }
        }
        if kept.is_empty() {
            return;
        }
        let early = std::mem::take(&mut self.list);
        self.list.reserve(early.len() + kept.len());
        let mut kept = kept.into_iter().peekable();
        for (i, f) in early.into_iter().enumerate() {
            while let Some((_, k)) = kept.next_if(|(pos, _)| *pos <= i) {
                self.list.push(k);
            }
            self.list.push(f);
        }
        self.list.extend(kept.map(|(_, k)| k));
    }

    /// Findings counted but not kept, by rule.
    pub fn omitted(&self) -> impl Iterator<Item = (Rule, u64)> + '_ {
        self.by_rule
            .iter()
            .filter(|(_, &n)| n > KEEP_PER_RULE)
            .map(|(&r, &n)| (r, n - KEEP_PER_RULE))
    }
}

/// What the rules read from one event. Members that are missing or of the wrong type are
/// `None` (the schema reports them).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Facts<'a> {
    pub event: &'a str,
    pub id: Option<&'a str>,
    pub seq: Option<u64>,
    pub session: &'a str,
    pub turn_id: Option<&'a str>,
    pub call_id: Option<&'a str>,
    pub parent_call_id: Option<&'a str>,
    pub request_id: Option<&'a str>,
    /// The call a `permission_request` asks about.
    pub tool_use_id: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub status: Option<&'a str>,
    pub block_index: Option<u64>,
    pub is_error: bool,
    pub provider: &'a str,
    pub reason: Option<&'a str>,
    /// A `file_change`'s unified diff.
    pub diff: Option<&'a str>,
}

impl<'a> Facts<'a> {
    pub fn of(m: &'a Map<String, Value>) -> Facts<'a> {
        let s = |k: &str| m.get(k).and_then(Value::as_str);
        let n = |k: &str| m.get(k).and_then(Value::as_u64);
        Facts {
            event: s("event").unwrap_or(""),
            id: s("id"),
            seq: n("seq"),
            session: s("sessionId").unwrap_or(""),
            turn_id: s("turnId"),
            call_id: s("callId"),
            parent_call_id: s("parentCallId"),
            request_id: s("requestId"),
            tool_use_id: s("toolUseId"),
            kind: s("kind"),
            status: s("status"),
            block_index: n("blockIndex"),
            is_error: m.get("isError").and_then(Value::as_bool) == Some(true),
            provider: s("provider").unwrap_or(""),
            reason: s("reason"),
            diff: s("diff"),
        }
    }
}

/// [`Facts`] whose strings were copied into a buffer that travels with them: what the reading
/// stage hands to the judging stage.
#[derive(Debug, Clone)]
pub struct StoredFacts {
    /// Where each string of [`Facts`] is in the buffer; `u32::MAX` for `None`.
    spans: [(u32, u32); 13],
    seq: Option<u64>,
    block_index: Option<u64>,
    is_error: bool,
}

impl StoredFacts {
    /// Copies the strings of `f` to the end of `buf`.
    pub fn store(f: &Facts, buf: &mut String) -> StoredFacts {
        let strs = [
            Some(f.event),
            f.id,
            Some(f.session),
            f.turn_id,
            f.call_id,
            f.parent_call_id,
            f.request_id,
            f.kind,
            f.status,
            Some(f.provider),
            f.reason,
            f.tool_use_id,
            f.diff,
        ];
        let mut spans = [(u32::MAX, 0); 13];
        for (span, s) in spans.iter_mut().zip(strs) {
            if let Some(s) = s {
                *span = (buf.len() as u32, s.len() as u32);
                buf.push_str(s);
            }
        }
        StoredFacts {
            spans,
            seq: f.seq,
            block_index: f.block_index,
            is_error: f.is_error,
        }
    }

    /// The facts, with `buf` the buffer they were stored in.
    pub fn facts<'a>(&self, buf: &'a str) -> Facts<'a> {
        let s = |i: usize| -> Option<&'a str> {
            let (at, len) = self.spans[i];
            (at != u32::MAX).then(|| &buf[at as usize..(at + len) as usize])
        };
        Facts {
            event: s(0).unwrap_or(""),
            id: s(1),
            seq: self.seq,
            session: s(2).unwrap_or(""),
            turn_id: s(3),
            call_id: s(4),
            parent_call_id: s(5),
            request_id: s(6),
            kind: s(7),
            status: s(8),
            block_index: self.block_index,
            is_error: self.is_error,
            provider: s(9).unwrap_or(""),
            reason: s(10),
            tool_use_id: s(11),
            diff: s(12),
        }
    }
}

type HashSet64 = HashSet<u64, BuildHasherDefault<Prehashed>>;
type HashMap64<V> = HashMap<u64, V, BuildHasherDefault<Prehashed>>;

/// A map keyed by strings, hashed with [`Hash64`].
type StrMap<V> = HashMap<String, V, BuildHasherDefault<Hash64>>;
/// A set of strings, hashed with [`Hash64`].
type StrSet = HashSet<String, BuildHasherDefault<Hash64>>;

/// Something open in a [`Ledger`].
struct Open {
    /// The session, then the key.
    text: String,
    /// Where the key starts in `text`.
    split: usize,
    /// The line that opened it.
    line: u64,
    /// An interruption excuses it from being closed.
    excused: bool,
}

impl Open {
    fn new(session: &str, key: &str, line: u64) -> Open {
        let mut text = String::with_capacity(session.len() + key.len());
        text.push_str(session);
        text.push_str(key);
        Open {
            text,
            split: session.len(),
            line,
            excused: false,
        }
    }

    fn session(&self) -> &str {
        &self.text[..self.split]
    }

    fn key(&self) -> &str {
        &self.text[self.split..]
    }

    fn is(&self, session: &str, key: &str) -> bool {
        self.split == session.len() && self.session() == session && self.key() == key
    }
}

/// Things that are opened once and closed once: tool calls, permission requests, subagents.
/// Open ones are kept whole; closed ones only as a hash.
#[derive(Default)]
struct Ledger {
    /// What is open, by [`hash_pair`] of session and key.
    open: HashMap64<Open>,
    /// What is open but whose hash another open entry of `open` has already (almost never).
    collided: Vec<(u64, Open)>,
    /// [`hash_pair`] of what was closed.
    closed: HashSet64,
}

enum Close {
    Closed,
    Unknown,
    Twice,
}

impl Ledger {
    /// Whether `session` and `key`, of hash `h`, are open.
    fn is_open(&self, h: u64, session: &str, key: &str) -> bool {
        self.open.get(&h).is_some_and(|o| o.is(session, key))
            || self
                .collided
                .iter()
                .any(|(c, o)| *c == h && o.is(session, key))
    }

    /// Removes `session` and `key`, of hash `h`, from what is open; `false` if it was not.
    fn remove_open(&mut self, h: u64, session: &str, key: &str) -> bool {
        if self.open.get(&h).is_some_and(|o| o.is(session, key)) {
            self.open.remove(&h);
            return true;
        }
        match self
            .collided
            .iter()
            .position(|(c, o)| *c == h && o.is(session, key))
        {
            Some(i) => {
                self.collided.remove(i);
                true
            }
            None => false,
        }
    }

    /// Opens `key`; `false` if it was opened before.
    fn open(&mut self, session: &str, key: &str, line: u64) -> bool {
        let h = hash_pair(session, key);
        if self.closed.contains(&h) || self.is_open(h, session, key) {
            return false;
        }
        let o = Open::new(session, key, line);
        match self.open.entry(h) {
            Entry::Occupied(_) => self.collided.push((h, o)),
            Entry::Vacant(v) => {
                v.insert(o);
            }
        }
        true
    }

    fn close(&mut self, session: &str, key: &str) -> Close {
        let h = hash_pair(session, key);
        if self.remove_open(h, session, key) {
            self.closed.insert(h);
            Close::Closed
        } else if self.closed.contains(&h) {
            Close::Twice
        } else {
            Close::Unknown
        }
    }

    /// Opened at some point (open now or closed).
    fn known(&self, session: &str, key: &str) -> bool {
        let h = hash_pair(session, key);
        self.is_open(h, session, key) || self.closed.contains(&h)
    }

    /// What is open in `session` (everywhere when `None`) need not be closed any more.
    fn excuse(&mut self, session: Option<&str>) {
        let open = self.open.values_mut();
        for o in open.chain(self.collided.iter_mut().map(|(_, o)| o)) {
            if session.is_none_or(|x| x == o.session()) {
                o.excused = true;
            }
        }
    }

    /// Opened and closed.
    fn closed(&self, session: &str, key: &str) -> bool {
        self.closed.contains(&hash_pair(session, key))
    }

    /// What is still open, by the line that opened it.
    fn take_open(&mut self) -> Vec<(u64, String, String)> {
        let collided = std::mem::take(&mut self.collided);
        let mut v: Vec<_> = self
            .open
            .drain()
            .chain(collided)
            .filter(|(_, o)| !o.excused)
            .map(|(_, o)| (o.line, o.session().to_owned(), o.key().to_owned()))
            .collect();
        v.sort();
        v
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeltaKind {
    Text,
    Thinking,
    ToolInput,
}

impl DeltaKind {
    fn of(kind: &str) -> Option<DeltaKind> {
        match kind {
            "text" => Some(DeltaKind::Text),
            "thinking" => Some(DeltaKind::Thinking),
            "toolInput" => Some(DeltaKind::ToolInput),
            _ => None,
        }
    }

    fn final_event(self) -> &'static str {
        match self {
            DeltaKind::Text => "a text event of kind text",
            DeltaKind::Thinking => "a text event of kind thinking",
            DeltaKind::ToolInput => "a tool_invocation",
        }
    }

    fn name(self) -> &'static str {
        match self {
            DeltaKind::Text => "text",
            DeltaKind::Thinking => "thinking",
            DeltaKind::ToolInput => "toolInput",
        }
    }
}

/// A content block of a streamed message.
struct Block {
    index: Option<u64>,
    call_id: Option<String>,
    /// A `blockStart` opened it.
    opened: bool,
    /// The kind of its deltas and the line of the first; `None` until a delta arrives.
    deltas: Option<(DeltaKind, u64)>,
    finished: bool,
}

impl Block {
    fn pending(&self) -> Option<(DeltaKind, u64)> {
        self.deltas.filter(|_| !self.finished)
    }
}

/// One stream of messages: a session's main agent, or one of its subagents.
///
/// Only *framed* blocks are tracked: those opened by a `blockStart`, or streamed inside a
/// message opened by `messageStart` (Claude Code, Qwen Code, Codex). Their provider sends the
/// final event of each block. Bare deltas, with neither, are how delta-only providers stream
/// (Gemini, ACP, Cursor's thinking, AceClaw): the deltas are the whole content and nothing
/// final follows, so they are not tracked.
#[derive(Default)]
struct Stream {
    /// A `messageStart` opened the current message.
    framed: bool,
    blocks: Vec<Block>,
}

impl Stream {
    fn block(&mut self, index: Option<u64>) -> &mut Block {
        match self.blocks.iter().rposition(|b| b.index == index) {
            Some(i) => &mut self.blocks[i],
            None => {
                self.blocks.push(Block {
                    index,
                    call_id: None,
                    opened: false,
                    deltas: None,
                    finished: false,
                });
                self.blocks.last_mut().expect("just pushed")
            }
        }
    }
}

/// A turn started and not completed yet.
struct OpenTurn {
    id: Option<String>,
    /// The line of its turn_start.
    line: u64,
    /// Its session was interrupted while it ran: it need not complete.
    excused: bool,
}

#[derive(Default)]
struct Turns {
    /// Whether the session has had a turn_start at all.
    started: bool,
    /// The open turns, in order.
    open: Vec<OpenTurn>,
}

/// The protocol state of one log.
#[derive(Default)]
pub struct Checker {
    last_seq: Option<(u64, u64)>,
    ids: IdSet,
    /// Sessions whose session_init has been seen.
    sessions: StrSet,
    /// Sessions without a session_init so far: the line and type of their first event.
    early: StrMap<(u64, String)>,
    tools: Ledger,
    permissions: Ledger,
    subagents: Ledger,
    turns: StrMap<Turns>,
    /// By session, then parentCallId.
    streams: StrMap<StrMap<Stream>>,
    /// The session scope of the current event (kept to reuse its allocation).
    scope: String,
}

impl Checker {
    pub fn new() -> Self {
        Checker::default()
    }

    /// Checks one event, made from input line `line`. `normalized`: the line was an
    /// InsightsEvent already, so its `seq` is the log's own (for converted lines the converter
    /// numbers events, and there is nothing to check).
    pub fn event(&mut self, f: &Facts, line: u64, normalized: bool, out: &mut Findings) {
        if normalized {
            self.seq(f, line, out);
        }
        self.id(f, line, out);
        // Sessions are told apart by provider too: a log may mix agents, and events without a
        // session (`sessionId` "") of different providers have nothing to do with each other.
        let mut scope = std::mem::take(&mut self.scope);
        scope.clear();
        scope.push_str(f.provider);
        scope.push('\u{0}');
        scope.push_str(f.session);
        self.event_in(f, &scope, line, out);
        self.scope = scope;
    }

    fn event_in(&mut self, f: &Facts, s: &str, line: u64, out: &mut Findings) {
        self.session_init(f, s, line, out);
        if let Some(p) = f.parent_call_id {
            if !self.subagents.known(s, p) {
                out.push(
                    Rule::SubagentUnknown,
                    line,
                    || format!(
                        "{} has parentCallId {p:?}, but no earlier subagent_spawn of the session has that callId",
                        f.event
                    ),
                );
            }
        }
        match f.event {
            "tool_invocation" => {
                if let Some(c) = f.call_id {
                    if !self.tools.open(s, c, line) {
                        out.push(Rule::ToolInvokedTwice, line, || {
                            format!("tool_invocation repeats callId {c:?}")
                        });
                    }
                    self.stream_finished(f, s, DeltaKind::ToolInput);
                }
            }
            "tool_completion" => {
                if let Some(c) = f.call_id {
                    match self.tools.close(s, c) {
                        Close::Closed => {}
                        Close::Unknown => out.push(
                            Rule::ToolUnknownCall,
                            line,
                            || format!("tool_completion for callId {c:?}, which no earlier tool_invocation of the session has"),
                        ),
                        Close::Twice => out.push(
                            Rule::ToolCompletedTwice,
                            line,
                            || format!("callId {c:?} was completed before"),
                        ),
                    }
                }
            }
            "tool_update" => {
                if let Some(c) = f.call_id {
                    if !self.tools.known(s, c) {
                        out.push(
                            Rule::ToolUnknownCall,
                            line,
                            || format!("tool_update for callId {c:?}, which no earlier tool_invocation of the session has"),
                        );
                    }
                }
            }
            "permission_request" => {
                if let Some(r) = f.request_id {
                    // A repeated request is answered by the same response: nothing to add.
                    self.permissions.open("", r, line);
                }
            }
            "permission_response" => {
                if let Some(r) = f.request_id {
                    match self.permissions.close("", r) {
                        Close::Closed => {}
                        Close::Unknown => out.push(
                            Rule::PermissionUnknownRequest,
                            line,
                            || format!("permission_response to requestId {r:?}, which no earlier permission_request has"),
                        ),
                        Close::Twice => out.push(
                            Rule::PermissionAnsweredTwice,
                            line,
                            || format!("requestId {r:?} was answered before"),
                        ),
                    }
                }
            }
            "subagent_spawn" => {
                if let Some(c) = f.call_id {
                    // A resumed subagent may be spawned again by a later call; a repeated
                    // callId is the tool's problem (tool-invoked-twice).
                    self.subagents.open(s, c, line);
                }
            }
            "subagent_complete" => {
                if let Some(c) = f.call_id {
                    match self.subagents.close(s, c) {
                        Close::Closed => {}
                        Close::Unknown => out.push(
                            Rule::SubagentUnknown,
                            line,
                            || format!("subagent_complete for callId {c:?}, which no earlier subagent_spawn of the session has"),
                        ),
                        Close::Twice => out.push(
                            Rule::SubagentCompletedTwice,
                            line,
                            || format!("the subagent of callId {c:?} was completed before"),
                        ),
                    }
                }
            }
            "turn_start" => {
                if !self.turns.contains_key(s) {
                    self.turns.insert(s.to_owned(), Turns::default());
                }
                let t = self.turns.get_mut(s).expect("just inserted");
                t.started = true;
                t.open.push(OpenTurn {
                    id: f.turn_id.map(str::to_owned),
                    line,
                    excused: false,
                });
            }
            "turn_complete" => {
                self.turn_complete(f, s, line, out);
                self.end_streams(Some(s), !f.is_error, out);
            }
            "session_status" if f.status == Some("interrupted") => {
                // An interrupted stream need not be finished, nor a running call completed
                // (ACP leaves marking them cancelled to the client). Control messages carry no
                // session.
                let only = (!f.session.is_empty()).then_some(s);
                self.end_streams(only, false, out);
                self.tools.excuse(only);
                self.excuse_turns(only);
            }
            "session_init" if f.session.is_empty() => {
                out.push(Rule::SessionInitAnonymous, line, || {
                    "session_init without a sessionId: its events cannot be told from those of other sessions".to_owned()
                });
            }
            "file_change" => {
                if let Some(d) = f.diff {
                    if let Err(p) = super::unified::check(d) {
                        out.push(Rule::DiffUnified, line, || {
                            format!("the diff is not a unified diff: {p}")
                        });
                    }
                }
            }
            "stream_delta" => self.stream_delta(f, s, line, out),
            "text" => {
                if let Some(k) = f.kind.and_then(DeltaKind::of) {
                    self.stream_finished(f, s, k);
                }
            }
            "raw" => out.push(Rule::RawEvent, line, || {
                format!(
                    "unmapped input (provider {}): {}",
                    f.provider,
                    f.reason.unwrap_or("no reason given")
                )
            }),
            _ => {}
        }
    }

    fn seq(&mut self, f: &Facts, line: u64, out: &mut Findings) {
        let Some(seq) = f.seq else { return };
        if let Some((prev, prev_line)) = self.last_seq {
            if seq <= prev {
                out.push(Rule::SeqOrder, line, || {
                    format!("seq {seq} is not greater than seq {prev} on line {prev_line}")
                });
            }
        }
        self.last_seq = Some((seq, line));
    }

    fn id(&mut self, f: &Facts, line: u64, out: &mut Findings) {
        let Some(id) = f.id else { return };
        // A repeat is found later (at the end of the log, or when the set's notes are many),
        // and its finding goes where it would have gone now (see `IdSet`).
        self.ids.insert(hash64(id), id, line, out.list.len());
        if self.ids.due() {
            self.report_repeats(out);
        }
    }

    fn report_repeats(&mut self, out: &mut Findings) {
        out.insert_late(self.ids.repeats().into_iter().map(|r| {
            let Repeat {
                id,
                line,
                before,
                pos,
            } = r;
            (pos, Rule::IdUnique, line, move || {
                format!("id {id:?} was used before, on line {before}")
            })
        }));
    }

    fn session_init(&mut self, f: &Facts, s: &str, line: u64, out: &mut Findings) {
        if f.session.is_empty() || self.sessions.contains(s) {
            return;
        }
        match f.event {
            "session_init" => {
                self.sessions.insert(s.to_owned());
                if let Some((first, ev)) = self.early.remove(s) {
                    out.push(
                        Rule::SessionInitFirst,
                        first,
                        || format!(
                            "{ev} of session {:?} came before the session's session_init (line {line})",
                            f.session
                        ),
                    );
                }
            }
            // Claude Code runs SessionStart hooks before it reports the session.
            "hook" => {}
            // Until the session_init comes, if it does: some providers (OpenCode) report no
            // session start at all.
            ev => {
                if !self.early.contains_key(s) {
                    self.early.insert(s.to_owned(), (line, ev.to_owned()));
                }
            }
        }
    }

    fn turn_complete(&mut self, f: &Facts, s: &str, line: u64, out: &mut Findings) {
        let Some(t) = self.turns.get_mut(s) else {
            return;
        };
        if !t.started {
            return;
        }
        let pos = match f.turn_id {
            Some(id) => t.open.iter().position(|o| o.id.as_deref() == Some(id)),
            None => (!t.open.is_empty()).then_some(0),
        }
        .or_else(|| t.open.iter().position(|o| o.id.is_none()));
        match pos {
            Some(i) => {
                t.open.remove(i);
            }
            None => out.push(Rule::TurnUnstarted, line, || match f.turn_id {
                Some(id) => format!("turn_complete of turnId {id:?} without its turn_start"),
                None => "turn_complete without an open turn_start".to_owned(),
            }),
        }
    }

    /// The turns open in session scope `s` (everywhere when `None`) need not complete any more:
    /// as for calls, an interruption ends them without a word.
    fn excuse_turns(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                if let Some(t) = self.turns.get_mut(s) {
                    t.open.iter_mut().for_each(|o| o.excused = true);
                }
            }
            None => self
                .turns
                .values_mut()
                .flat_map(|t| t.open.iter_mut())
                .for_each(|o| o.excused = true),
        }
    }

    /// The streams of session scope `s`.
    fn session_streams(&mut self, s: &str) -> &mut StrMap<Stream> {
        if !self.streams.contains_key(s) {
            self.streams.insert(s.to_owned(), StrMap::default());
        }
        self.streams.get_mut(s).expect("just inserted")
    }

    /// The stream of the event's agent (`parentCallId`) in session scope `s`, if it has one.
    fn stream(&mut self, f: &Facts, s: &str) -> Option<&mut Stream> {
        let parent = f.parent_call_id.unwrap_or("");
        self.streams.get_mut(s)?.get_mut(parent)
    }

    fn stream_delta(&mut self, f: &Facts, s: &str, line: u64, out: &mut Findings) {
        let parent = f.parent_call_id.unwrap_or("");
        match f.kind {
            Some("messageStart") => {
                let streams = self.session_streams(s);
                let stream = Stream {
                    framed: true,
                    blocks: Vec::new(),
                };
                match streams.get_mut(parent) {
                    Some(old) => {
                        let old = std::mem::replace(old, stream);
                        Checker::report_unfinished(&old, "before the next message", true, out);
                    }
                    None => {
                        streams.insert(parent.to_owned(), stream);
                    }
                }
            }
            Some("blockStart") => {
                let streams = self.session_streams(s);
                if !streams.contains_key(parent) {
                    streams.insert(parent.to_owned(), Stream::default());
                }
                let stream = streams.get_mut(parent).expect("just inserted");
                // A block of the same index that is done, or never streamed, is over: this
                // starts a new one (Codex gives its items no index).
                stream
                    .blocks
                    .retain(|b| b.index != f.block_index || b.pending().is_some());
                let b = stream.block(f.block_index);
                b.opened = true;
                if let Some(c) = f.call_id {
                    b.call_id = Some(c.to_owned());
                }
            }
            Some(k) => {
                let Some(k) = DeltaKind::of(k) else { return };
                let Some(stream) = self.stream(f, s) else {
                    return; // a bare delta: see Stream
                };
                if !stream.framed && !stream.blocks.iter().any(|b| b.index == f.block_index) {
                    return; // a bare delta: see Stream
                }
                let b = stream.block(f.block_index);
                if b.deltas.is_none() {
                    b.deltas = Some((k, line));
                }
                if b.call_id.is_none() {
                    b.call_id = f.call_id.map(str::to_owned);
                }
            }
            None => {}
        }
    }

    /// A final event of `kind` arrived: it finishes the first unfinished streamed block of its
    /// kind (for a tool, the block of its callId).
    fn stream_finished(&mut self, f: &Facts, scope: &str, kind: DeltaKind) {
        let Some(s) = self.stream(f, scope) else {
            return;
        };
        let mut pending = s
            .blocks
            .iter_mut()
            .filter(|b| b.pending().is_some_and(|(k, _)| k == kind));
        let b = if kind == DeltaKind::ToolInput {
            let mut by_call = None;
            let mut first_anonymous = None;
            for b in pending {
                match (&b.call_id, f.call_id) {
                    (Some(a), Some(c)) if a == c => {
                        by_call = Some(b);
                        break;
                    }
                    (None, _) if first_anonymous.is_none() => first_anonymous = Some(b),
                    _ => {}
                }
            }
            by_call.or(first_anonymous)
        } else {
            pending.next()
        };
        if let Some(b) = b {
            b.finished = true;
        }
    }

    /// Streams of `session` (all streams when `None`) end: at a turn_complete (`check`), or
    /// after an interruption or a failed turn (no check).
    fn end_streams(&mut self, session: Option<&str>, check: bool, out: &mut Findings) {
        let ended: Vec<StrMap<Stream>> = match session {
            // The session's entry stays, empty, for its next message.
            Some(s) => self
                .streams
                .get_mut(s)
                .map(std::mem::take)
                .into_iter()
                .collect(),
            None => {
                let mut all: Vec<_> = self.streams.drain().collect();
                all.sort_by(|a, b| a.0.cmp(&b.0));
                all.into_iter().map(|(_, m)| m).collect()
            }
        };
        if !check {
            return;
        }
        for streams in ended {
            let mut streams: Vec<_> = streams.into_iter().collect();
            streams.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, s) in streams {
                Checker::report_unfinished(&s, "before turn_complete", true, out);
            }
        }
    }

    fn report_unfinished(s: &Stream, when: &str, error: bool, out: &mut Findings) {
        for b in &s.blocks {
            let Some((kind, line)) = b.pending() else {
                continue;
            };
            let block = match b.index {
                Some(i) => format!("block {i}"),
                None => "a block".to_owned(),
            };
            let rule = if error {
                Rule::StreamUnfinished
            } else {
                Rule::StreamOpenAtEnd
            };
            out.push(rule, line, || {
                format!(
                    "{} deltas of {block} were not followed by {} {when}",
                    kind.name(),
                    kind.final_event()
                )
            });
        }
    }

    /// The log ended: what is still open.
    pub fn finish(mut self, out: &mut Findings) {
        self.report_repeats(out);
        for (line, s, c) in self.tools.take_open() {
            let s = session_of(&s);
            out.push(Rule::ToolOpenAtEnd, line, || {
                format!("tool call {c:?} of session {s:?} was never completed")
            });
        }
        for (line, _, r) in self.permissions.take_open() {
            out.push(Rule::PermissionUnanswered, line, || {
                format!("permission request {r:?} was never answered")
            });
        }
        for (line, s, c) in self.subagents.take_open() {
            // The call that spawned it completed, so the subagent is over, even without a
            // subagent_complete (which Amp's output gives no ground for, and CC-Insights never
            // builds).
            if self.tools.closed(&s, &c) {
                continue;
            }
            let s = session_of(&s);
            out.push(Rule::SubagentOpenAtEnd, line, || {
                format!("the subagent of callId {c:?} of session {s:?} never completed")
            });
        }
        let mut turns: Vec<_> = self
            .turns
            .iter()
            .flat_map(|(s, t)| t.open.iter().map(move |o| (o.line, s, o)))
            .filter(|(_, _, o)| !o.excused)
            .collect();
        turns.sort_by_key(|(line, _, _)| *line);
        for (line, s, o) in turns {
            let s = session_of(s);
            out.push(Rule::TurnOpenAtEnd, line, || match &o.id {
                Some(id) => format!("turn {id:?} of session {s:?} has no turn_complete"),
                None => format!("a turn of session {s:?} has no turn_complete"),
            });
        }
        let mut streams: Vec<_> = self
            .streams
            .into_iter()
            .flat_map(|(s, m)| m.into_iter().map(move |(p, st)| ((s.clone(), p), st)))
            .collect();
        streams.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, s) in streams {
            Checker::report_unfinished(&s, "before the log ended", false, out);
        }
    }
}

/// The `sessionId` part of a session scope (`provider \0 sessionId`).
fn session_of(scope: &str) -> &str {
    scope.split_once('\0').map_or(scope, |(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Runs the rules over events given as JSON values (all normalized, line = position): the
    /// findings kept, and the errors and warnings counted.
    fn run(events: &[Value], policy: &Policy) -> (Vec<Finding>, u64, u64) {
        let mut out = Findings::new(policy);
        let mut c = Checker::new();
        for (i, ev) in events.iter().enumerate() {
            let m = ev.as_object().expect("an object");
            c.event(&Facts::of(m), i as u64 + 1, true, &mut out);
        }
        c.finish(&mut out);
        (out.list, out.errors, out.warnings)
    }

    /// [`run`]'s findings: line, rule and level.
    fn check(events: &[Value], policy: &Policy) -> Vec<(u64, &'static str, Level)> {
        run(events, policy)
            .0
            .iter()
            .map(|f| (f.line, f.rule.id(), f.level))
            .collect()
    }

    fn ev(n: u64, event: &str, extra: Value) -> Value {
        let mut v = json!({"event": event, "id": format!("u{n}:0"), "seq": n, "sessionId": "s"});
        v.as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        v
    }

    fn init() -> Value {
        init_at(1)
    }

    fn init_at(n: u64) -> Value {
        ev(n, "session_init", json!({}))
    }

    #[test]
    fn a_clean_tool_call_has_no_findings() {
        let evs = [
            ev(1, "session_init", json!({})),
            ev(2, "tool_invocation", json!({"callId": "t1"})),
            ev(3, "tool_update", json!({"callId": "t1"})),
            ev(4, "tool_completion", json!({"callId": "t1"})),
            ev(5, "turn_complete", json!({})),
        ];
        assert_eq!(check(&evs, &Policy::default()), []);
    }

    #[test]
    fn seq_and_ids() {
        let mut evs = vec![
            ev(1, "session_init", json!({})),
            ev(3, "notice", json!({})),
            ev(2, "notice", json!({})),
        ];
        evs.push(evs[1].clone());
        evs[3]["seq"] = json!(9);
        let got = check(&evs, &Policy::default());
        assert_eq!(
            got,
            [
                (3, "seq-order", Level::Error),
                (4, "id-unique", Level::Error)
            ]
        );
    }

    /// Repeats are found at the end of the log, but listed where they were made: after the
    /// line's seq-order, before what later lines and the end of the log find.
    #[test]
    fn a_repeated_id_is_listed_at_its_line() {
        let mut evs = vec![
            ev(1, "session_init", json!({})),
            ev(2, "tool_invocation", json!({"callId": "open"})),
            ev(3, "notice", json!({})),
        ];
        evs.push(evs[2].clone());
        evs[3]["seq"] = json!(1);
        evs.push(ev(5, "raw", json!({"provider": "claude"})));
        evs.push(evs[1].clone());
        evs[5]["seq"] = json!(6);
        let (list, errors, warnings) = run(&evs, &Policy::default());
        let got: Vec<_> = list.iter().map(|f| (f.line, f.rule.id())).collect();
        assert_eq!(
            got,
            [
                (4, "seq-order"),
                (4, "id-unique"),
                (5, "raw-event"),
                (6, "id-unique"),
                (6, "tool-invoked-twice"),
                (2, "tool-open-at-end"),
            ]
        );
        assert_eq!((errors, warnings), (4, 2));
        assert_eq!(list[1].message, r#"id "u3:0" was used before, on line 3"#);
        assert_eq!(list[3].message, r#"id "u2:0" was used before, on line 2"#);
    }

    #[test]
    fn tools_complete_once_and_must_be_known() {
        let evs = [
            ev(1, "session_init", json!({})),
            ev(2, "tool_completion", json!({"callId": "x"})),
            ev(3, "tool_invocation", json!({"callId": "t"})),
            ev(4, "tool_completion", json!({"callId": "t"})),
            ev(5, "tool_completion", json!({"callId": "t"})),
            ev(6, "tool_invocation", json!({"callId": "t"})),
            ev(7, "tool_invocation", json!({"callId": "open"})),
            ev(8, "tool_update", json!({"callId": "y"})),
        ];
        let ids: Vec<_> = check(&evs, &Policy::default())
            .into_iter()
            .map(|(l, r, _)| (l, r))
            .collect();
        assert_eq!(
            ids,
            [
                (2, "tool-unknown-call"),
                (5, "tool-completed-twice"),
                (6, "tool-invoked-twice"),
                (8, "tool-unknown-call"),
                (7, "tool-open-at-end"),
            ]
        );
    }

    /// A permission request does not invoke the call it names: converters invoke every call
    /// (ACP makes the `tool_invocation` of a call Gemini CLI names only in its permission
    /// request from the request itself), so an update or completion of a call only asked
    /// about is of a call never invoked.
    #[test]
    fn a_call_named_only_by_a_permission_request_is_unknown() {
        let ask = |n, call: &str| {
            ev(
                n,
                "permission_request",
                json!({"requestId": format!("r{n}"), "toolUseId": call}),
            )
        };
        let evs = [
            ev(1, "session_init", json!({})),
            ask(2, "a"),
            ev(3, "tool_update", json!({"callId": "a"})),
            ev(4, "tool_completion", json!({"callId": "a"})),
            // Asked, then invoked, then completed: fine.
            ask(5, "b"),
            ev(6, "tool_invocation", json!({"callId": "b"})),
            ev(7, "tool_completion", json!({"callId": "b"})),
            // Asked and never heard of again (denied): nothing is owed at the end.
            ask(8, "c"),
            // Asked and invoked but never completed: open at the end.
            ask(9, "e"),
            ev(10, "tool_invocation", json!({"callId": "e"})),
        ];
        let ids: Vec<_> = check(&evs, &Policy::default())
            .into_iter()
            .map(|(l, r, _)| (l, r))
            .filter(|(_, r)| r.starts_with("tool-"))
            .collect();
        assert_eq!(
            ids,
            [
                (3, "tool-unknown-call"),
                (4, "tool-unknown-call"),
                (10, "tool-open-at-end"),
            ]
        );
    }

    #[test]
    fn a_completion_in_another_session_is_unknown() {
        let mut other = ev(3, "tool_completion", json!({"callId": "t"}));
        other["sessionId"] = json!("other");
        let mut other_init = ev(2, "session_init", json!({}));
        other_init["sessionId"] = json!("other");
        let evs = [
            ev(1, "session_init", json!({})),
            ev(4, "tool_invocation", json!({"callId": "t"})),
            other_init,
            other,
        ];
        let got = check(&evs, &Policy::default());
        assert!(
            got.contains(&(4, "tool-unknown-call", Level::Error)),
            "{got:?}"
        );
    }

    #[test]
    fn permissions() {
        let evs = [
            init(),
            ev(2, "permission_request", json!({"requestId": "r1"})),
            ev(3, "permission_response", json!({"requestId": "r1"})),
            ev(4, "permission_response", json!({"requestId": "r1"})),
            ev(5, "permission_response", json!({"requestId": "r2"})),
            ev(6, "permission_request", json!({"requestId": "r3"})),
        ];
        let got = check(&evs, &Policy::default());
        assert_eq!(
            got,
            [
                (4, "permission-answered-twice", Level::Error),
                (5, "permission-unknown-request", Level::Error),
                (6, "permission-unanswered", Level::Warning),
            ]
        );
    }

    #[test]
    fn subagents() {
        let evs = [
            init(),
            ev(2, "subagent_spawn", json!({"callId": "a"})),
            ev(3, "text", json!({"kind": "text", "parentCallId": "a"})),
            ev(4, "text", json!({"kind": "text", "parentCallId": "nobody"})),
            ev(5, "subagent_complete", json!({"callId": "a"})),
            ev(6, "subagent_complete", json!({"callId": "a"})),
            ev(7, "subagent_complete", json!({"callId": "b"})),
            ev(8, "subagent_spawn", json!({"callId": "c"})),
        ];
        let got: Vec<_> = check(&evs, &Policy::default())
            .into_iter()
            .map(|(l, r, _)| (l, r))
            .collect();
        assert_eq!(
            got,
            [
                (4, "subagent-unknown"),
                (6, "subagent-completed-twice"),
                (7, "subagent-unknown"),
                (8, "subagent-open-at-end"),
            ]
        );
    }

    #[test]
    fn a_subagent_whose_call_completed_is_over() {
        // Amp: the Task call completes, and no subagent_complete follows.
        let evs = [
            init(),
            ev(2, "tool_invocation", json!({"callId": "a"})),
            ev(3, "subagent_spawn", json!({"callId": "a"})),
            ev(
                4,
                "tool_invocation",
                json!({"callId": "b", "parentCallId": "a"}),
            ),
            ev(
                5,
                "tool_completion",
                json!({"callId": "b", "parentCallId": "a"}),
            ),
            ev(6, "tool_completion", json!({"callId": "a"})),
            ev(7, "tool_invocation", json!({"callId": "c"})),
            ev(8, "subagent_spawn", json!({"callId": "c"})),
        ];
        let got: Vec<_> = check(&evs, &Policy::default())
            .into_iter()
            .map(|(l, r, _)| (l, r))
            .collect();
        assert_eq!(got, [(7, "tool-open-at-end"), (8, "subagent-open-at-end")]);
    }

    #[test]
    fn an_interruption_excuses_running_calls() {
        let interrupt = ev(4, "session_status", json!({"status": "interrupted"}));
        let mut other = ev(5, "tool_invocation", json!({"callId": "u"}));
        other["sessionId"] = json!("other");
        let evs = [
            init(),
            ev(2, "tool_invocation", json!({"callId": "t"})),
            ev(3, "tool_invocation", json!({"callId": "done"})),
            interrupt,
            other,
            ev(6, "tool_completion", json!({"callId": "done"})),
            ev(7, "tool_invocation", json!({"callId": "later"})),
        ];
        let got: Vec<_> = check(&evs, &Policy::default())
            .into_iter()
            .map(|(l, r, _)| (l, r))
            .collect();
        assert_eq!(got, [(5, "tool-open-at-end"), (7, "tool-open-at-end")]);
    }

    #[test]
    fn turns_only_where_starts_are_present() {
        let no_starts = [init(), ev(2, "turn_complete", json!({}))];
        assert_eq!(check(&no_starts, &Policy::default()), []);
        let evs = [
            init(),
            ev(2, "turn_start", json!({"turnId": "t1"})),
            ev(3, "turn_complete", json!({"turnId": "t1"})),
            ev(4, "turn_complete", json!({"turnId": "t1"})),
            ev(5, "turn_start", json!({})),
            ev(6, "turn_complete", json!({})),
        ];
        assert_eq!(
            check(&evs, &Policy::default()),
            [(4, "turn-unstarted", Level::Error)]
        );
    }

    #[test]
    fn a_turn_must_complete_by_the_end() {
        let mut other = ev(5, "turn_start", json!({"turnId": "o1"}));
        other["sessionId"] = json!("other");
        let evs = [
            init(),
            ev(2, "turn_start", json!({"turnId": "t1"})),
            ev(3, "turn_complete", json!({"turnId": "t1", "isError": true})),
            ev(4, "turn_start", json!({"turnId": "t2"})),
            other,
            ev(6, "turn_start", json!({"turnId": "t3"})),
            ev(7, "turn_complete", json!({"turnId": "t3"})),
        ];
        assert_eq!(
            check(&evs, &Policy::default()),
            [
                (4, "turn-open-at-end", Level::Warning),
                (5, "turn-open-at-end", Level::Warning)
            ]
        );
        // A session without turn_start events has no turns to complete.
        let no_starts = [init(), ev(2, "text", json!({"kind": "text"}))];
        assert_eq!(check(&no_starts, &Policy::default()), []);
    }

    /// As for calls: turns running when their session is interrupted need not complete; turns
    /// started after the interruption, or in another session, still do.
    #[test]
    fn an_interruption_excuses_running_turns() {
        let mut other = ev(4, "turn_start", json!({"turnId": "o1"}));
        other["sessionId"] = json!("other");
        let evs = [
            init(),
            ev(2, "turn_start", json!({"turnId": "t1"})),
            ev(3, "session_status", json!({"status": "interrupted"})),
            other,
            ev(5, "turn_start", json!({"turnId": "t2"})),
        ];
        let got: Vec<_> = check(&evs, &Policy::default())
            .into_iter()
            .map(|(l, r, _)| (l, r))
            .collect();
        assert_eq!(got, [(4, "turn-open-at-end"), (5, "turn-open-at-end")]);
        // An interruption without a session (a control message) excuses every session's turns.
        let mut control = ev(4, "session_status", json!({"status": "interrupted"}));
        control["sessionId"] = json!("");
        let evs = [
            init(),
            ev(2, "turn_start", json!({"turnId": "t1"})),
            ev(3, "turn_start", json!({"turnId": "t2"})),
            control,
        ];
        assert_eq!(check(&evs, &Policy::default()), []);
    }

    #[test]
    fn a_session_init_needs_a_session_id() {
        let mut empty = init();
        empty["sessionId"] = json!("");
        let mut missing = init_at(2);
        missing.as_object_mut().expect("object").remove("sessionId");
        let evs = [empty, missing, init_at(3)];
        assert_eq!(
            check(&evs, &Policy::default()),
            [
                (1, "session-init-anonymous", Level::Error),
                (2, "session-init-anonymous", Level::Error)
            ]
        );
    }

    #[test]
    fn a_file_change_diff_must_be_unified() {
        let good = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
        let evs = [
            init(),
            ev(
                2,
                "file_change",
                json!({"path": "f", "changeKind": "update", "diff": good}),
            ),
            ev(
                3,
                "file_change",
                json!({"path": "f", "changeKind": "update"}),
            ),
            ev(
                4,
                "file_change",
                json!({"path": "f", "changeKind": "update", "diff": "@@ -1 +1 @@\n-a\n+b\n"}),
            ),
            ev(
                5,
                "file_change",
                json!({"path": "f", "changeKind": "add", "diff": "new content\n"}),
            ),
            // Only file_change diffs are checked.
            ev(6, "notice", json!({"diff": "not a diff"})),
        ];
        let (found, errors, _) = run(&evs, &Policy::default());
        let got: Vec<_> = found
            .iter()
            .map(|f| (f.line, f.rule.id(), f.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (4, "diff-unified", "the diff is not a unified diff: line 1: a hunk before the `--- ` and `+++ ` lines"),
                (5, "diff-unified", "the diff is not a unified diff: line 1: no `--- ` and `+++ ` lines"),
            ]
        );
        assert_eq!(errors, 2);
    }

    #[test]
    fn session_init_comes_first_except_for_hooks() {
        let mut control = ev(2, "notice", json!({}));
        control["sessionId"] = json!("");
        let evs = [
            control,
            ev(3, "hook", json!({})),
            ev(4, "text", json!({"kind": "text"})),
            ev(5, "text", json!({"kind": "text"})),
            ev(6, "session_init", json!({})),
        ];
        assert_eq!(
            check(&evs, &Policy::default()),
            [(3, "session-init-first", Level::Error)]
        );
    }

    #[test]
    fn a_session_that_never_reports_its_start_is_fine() {
        // OpenCode's output has no session start: nothing to come first.
        let evs = [
            ev(1, "stream_delta", json!({"kind": "messageStart"})),
            ev(2, "text", json!({"kind": "text"})),
            ev(3, "turn_complete", json!({})),
        ];
        assert_eq!(check(&evs, &Policy::default()), []);
        // Codex app-server: an event of the session, then its session_init. Reported once, at
        // the first early event.
        let evs = [
            ev(1, "session_mode", json!({"currentModeId": "never"})),
            ev(2, "config_options", json!({})),
            init_at(3),
            ev(4, "notice", json!({})),
        ];
        assert_eq!(
            check(&evs, &Policy::default()),
            [(1, "session-init-first", Level::Error)]
        );
    }

    fn delta(n: u64, kind: &str, extra: Value) -> Value {
        let mut e = ev(n, "stream_delta", extra);
        e["kind"] = json!(kind);
        e
    }

    #[test]
    fn streamed_blocks_need_their_final_event() {
        let good = [
            init(),
            delta(2, "messageStart", json!({"messageId": "m"})),
            delta(3, "thinking", json!({"blockIndex": 0})),
            ev(4, "text", json!({"kind": "thinking"})),
            delta(5, "blockStart", json!({"blockIndex": 1, "callId": "t"})),
            delta(6, "toolInput", json!({"blockIndex": 1})),
            ev(7, "tool_invocation", json!({"callId": "t"})),
            ev(8, "tool_completion", json!({"callId": "t"})),
            ev(9, "turn_complete", json!({})),
        ];
        assert_eq!(check(&good, &Policy::default()), []);
        let bad = [
            init(),
            delta(2, "messageStart", json!({"messageId": "m"})),
            delta(3, "text", json!({"blockIndex": 0})),
            delta(4, "messageStart", json!({"messageId": "m2"})),
            delta(5, "text", json!({"blockIndex": 0})),
            ev(6, "turn_complete", json!({})),
            delta(7, "messageStart", json!({"messageId": "m3"})),
            delta(8, "thinking", json!({"blockIndex": 0})),
        ];
        assert_eq!(
            check(&bad, &Policy::default()),
            [
                (3, "stream-unfinished", Level::Error),
                (5, "stream-unfinished", Level::Error),
                (8, "stream-open-at-end", Level::Warning),
            ]
        );
    }

    #[test]
    fn bare_deltas_need_no_final_event() {
        // Gemini, ACP, AceClaw: deltas with neither messageStart nor blockStart are the whole
        // content; a turn_complete (or the log's end) comes and nothing else.
        let bare = [
            init(),
            delta(2, "text", json!({})),
            delta(3, "thinking", json!({})),
            ev(4, "turn_complete", json!({})),
            delta(5, "text", json!({})),
        ];
        assert_eq!(check(&bare, &Policy::default()), []);
        // Cursor: a blockStop ends bare thinking deltas.
        let cursor = [
            init(),
            delta(2, "thinking", json!({})),
            delta(3, "blockStop", json!({})),
            ev(4, "text", json!({"kind": "text"})),
            ev(5, "turn_complete", json!({})),
        ];
        assert_eq!(check(&cursor, &Policy::default()), []);
    }

    #[test]
    fn blocks_opened_by_block_start_need_their_final_event() {
        // Codex: blockStart without messageStart or index; each item is a new block.
        let good = [
            init(),
            delta(2, "blockStart", json!({})),
            delta(3, "text", json!({})),
            ev(4, "text", json!({"kind": "text"})),
            delta(5, "blockStart", json!({})),
            delta(6, "text", json!({})),
            ev(7, "text", json!({"kind": "text"})),
            ev(8, "turn_complete", json!({})),
        ];
        assert_eq!(check(&good, &Policy::default()), []);
        let bad = [
            init(),
            delta(2, "blockStart", json!({})),
            delta(3, "text", json!({})),
            ev(4, "text", json!({"kind": "text"})),
            delta(5, "blockStart", json!({})),
            delta(6, "text", json!({})),
            ev(7, "turn_complete", json!({})),
            delta(8, "blockStart", json!({"blockIndex": 0})),
            delta(9, "thinking", json!({"blockIndex": 0})),
        ];
        assert_eq!(
            check(&bad, &Policy::default()),
            [
                (6, "stream-unfinished", Level::Error),
                (9, "stream-open-at-end", Level::Warning),
            ]
        );
    }

    #[test]
    fn an_interruption_excuses_unfinished_streams() {
        let mut interrupt = ev(4, "session_status", json!({"status": "interrupted"}));
        interrupt["sessionId"] = json!("");
        let evs = [
            init(),
            delta(2, "messageStart", json!({"messageId": "m"})),
            delta(3, "text", json!({"blockIndex": 0})),
            interrupt,
            ev(5, "turn_complete", json!({})),
        ];
        assert_eq!(check(&evs, &Policy::default()), []);
    }

    #[test]
    fn providers_do_not_share_sessions() {
        let mut a = ev(2, "turn_start", json!({"provider": "codex"}));
        a["sessionId"] = json!("");
        let mut b = ev(3, "turn_complete", json!({"provider": "codex"}));
        b["sessionId"] = json!("");
        let mut c = ev(4, "turn_complete", json!({"provider": "gemini"}));
        c["sessionId"] = json!("");
        let mut d = ev(
            5,
            "tool_completion",
            json!({"provider": "gemini", "callId": "t"}),
        );
        d["sessionId"] = json!("");
        let mut e = ev(
            1,
            "tool_invocation",
            json!({"provider": "codex", "callId": "t"}),
        );
        e["sessionId"] = json!("");
        let got: Vec<_> = check(&[e, a, b, c, d], &Policy::default())
            .into_iter()
            .map(|(l, r, _)| (l, r))
            .collect();
        assert_eq!(got, [(5, "tool-unknown-call"), (1, "tool-open-at-end")]);
    }

    #[test]
    fn allow_and_deny() {
        let evs = [
            init(),
            ev(2, "raw", json!({"reason": "why"})),
            ev(3, "tool_invocation", json!({"callId": "t"})),
        ];
        let deny = Policy::new(&[], &["warnings".into()]).unwrap();
        assert_eq!(
            check(&evs, &deny),
            [
                (2, "raw-event", Level::Error),
                (3, "tool-open-at-end", Level::Error)
            ]
        );
        let allow = Policy::new(&["raw-event".into()], &["warnings".into()]).unwrap();
        assert_eq!(check(&evs, &allow), [(3, "tool-open-at-end", Level::Error)]);
        let one = Policy::new(&[], &["raw-event".into()]).unwrap();
        assert_eq!(
            check(&evs, &one),
            [
                (2, "raw-event", Level::Error),
                (3, "tool-open-at-end", Level::Warning)
            ]
        );
        assert!(Policy::new(&["nope".into()], &[]).is_err());
    }

    #[test]
    fn findings_beyond_the_cap_are_counted_not_kept() {
        let policy = Policy::default();
        let mut out = Findings::new(&policy);
        for i in 0..KEEP_PER_RULE + 5 {
            out.push(Rule::SeqOrder, i, String::new);
        }
        assert_eq!(out.list.len() as u64, KEEP_PER_RULE);
        assert_eq!(out.errors, KEEP_PER_RULE + 5);
        assert_eq!(out.omitted().collect::<Vec<_>>(), [(Rule::SeqOrder, 5)]);
    }

    #[test]
    fn the_hash_tells_pairs_apart_and_is_stable() {
        assert_ne!(hash_pair("ab", "c"), hash_pair("a", "bc"));
        assert_ne!(hash_pair("a", ""), hash_pair("", "a"));
        assert_ne!(hash64("a"), hash64("a\0"));
        assert_ne!(hash64(""), hash64("\0"));
        // The same in every run and on every machine (computed once, by hand).
        assert_eq!(hash_pair("ab", "c"), 0x4cfc_d5b3_ac44_8468);
        assert_eq!(hash_pair("a", "bc"), 0x819b_6f8a_0ac7_4af4);
        assert_eq!(hash64(""), 0xe184_8576_4ba0_3644);
        assert_eq!(hash64("toolu_01ABCDEFGHIJ"), 0x1759_a195_e59f_c3d9);
        assert_eq!(hash_pair("codex\0s", "call_1"), 0xb3e2_e7b7_58d2_806c);
    }

    #[test]
    fn a_ledger_tells_keys_of_the_same_hash_apart() {
        // Two keys forced into the same slot: the second goes to `collided`.
        let mut l = Ledger::default();
        assert!(l.open("s", "a", 1));
        let h = hash_pair("s", "b");
        let a = l.open.remove(&hash_pair("s", "a")).expect("open");
        l.open.insert(h, a);
        // Now `open[h]` holds ("s", "a") under the hash of ("s", "b").
        assert!(!l.is_open(h, "s", "b"));
        assert!(l.is_open(h, "s", "a"));
        l.collided.push((h, Open::new("s", "b", 2)));
        assert!(l.is_open(h, "s", "b"));
        assert!(l.remove_open(h, "s", "b"));
        assert!(!l.is_open(h, "s", "b"));
        assert!(l.is_open(h, "s", "a"));
        assert!(l.remove_open(h, "s", "a"));
        assert!(!l.remove_open(h, "s", "a"));
        assert!(l.open.is_empty() && l.collided.is_empty());
        // Opening a key whose slot is taken by another goes to `collided`, and is reported.
        let mut l = Ledger::default();
        l.open.insert(hash_pair("s", "x"), Open::new("s", "y", 1));
        assert!(l.open("s", "x", 2));
        assert!(!l.open("s", "x", 3));
        assert_eq!(l.collided.len(), 1);
        l.excuse(Some("s"));
        assert!(l.take_open().is_empty());
        let mut l = Ledger::default();
        l.open.insert(hash_pair("s", "x"), Open::new("s", "y", 1));
        assert!(l.open("s", "x", 2));
        assert!(matches!(l.close("s", "y"), Close::Unknown));
        assert_eq!(
            l.take_open(),
            [
                (1, "s".to_owned(), "y".to_owned()),
                (2, "s".to_owned(), "x".to_owned())
            ]
        );
    }

    #[test]
    fn rule_ids_are_unique_and_fit_the_mask() {
        assert!(Rule::ALL.len() <= 64);
        for (i, r) in Rule::ALL.iter().enumerate() {
            assert_eq!(Rule::by_id(r.id()), Some(*r));
            assert!(Rule::ALL[i + 1..].iter().all(|q| q.id() != r.id()));
        }
    }
}
