//! [`Ev`] from an [`Event`] the converter hands over, without writing its line and reading it
//! back: raw provider output is reduced as its converted events, but the JSON text in between
//! cost as much as the conversion itself.
//!
//! The view is exactly the one [`Ev::read`] makes of the event's line (a test compares the
//! two on every capture): every member the line would have, as the line would have it.
//! Strings are borrowed from the event; JSON values are borrowed when the event carries them
//! as raw text, and otherwise written on their own (as they would be in the line). Members
//! the reader parses further (`stepUsage`, `permissionDenials`) are read from that text, and
//! numbers with a fraction go through text too, so that they are the very `f64`s a reader of
//! the line gets. When one of those cannot be read, `None`: the caller then reads the line,
//! which reports why.

use super::view::{Denial, Ev, ModelUsage, StepUsage, TokenUsage, J, S};
use crate::event::{self as e, Body, Event, Json, Pairs};
use serde::Serialize;
use std::borrow::Cow;

/// A string member.
fn s<'a>(v: &'a Option<Cow<'a, str>>) -> S<'a> {
    v.as_deref().map(Cow::Borrowed)
}

/// A required string member.
fn r<'a>(v: &'a str) -> S<'a> {
    Some(Cow::Borrowed(v))
}

/// Any value as the line would carry it; `null` is none, as the reader has it. Written by the
/// program's writer, the line's own ([`crate::json_writer`]; serde_json's escaping of the
/// strings of a Claude session's lists of commands and tools was a tenth of `export --to
/// otlp`), into a buffer kept from call to call ([`TEXT`]), and taken as a `RawValue` of its
/// exact size without being read again.
fn ser<T: Serialize + ?Sized>(v: &T) -> Option<J<'static>> {
    TEXT.with(|cell| {
        let mut text = cell.try_borrow_mut().ok()?;
        text.clear();
        let raw = match crate::json_writer::write(&mut text, v) {
            Ok(()) if *text == *b"null" => Some(None),
            Ok(()) => std::str::from_utf8(&text)
                .ok()
                .and_then(crate::json_reader::raw_value)
                .map(|r| Some(Cow::Owned(r.to_owned()))),
            Err(_) => None,
        };
        if text.capacity() > TEXT_KEPT {
            *text = Vec::new();
        }
        raw
    })
}

thread_local! {
    /// [`ser`]'s text. A session's lists (tools, commands) are kilobytes: written into a
    /// buffer grown anew each time, every step past a kilobyte had the allocator sort its
    /// free chunks (`malloc_consolidate`).
    static TEXT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The largest [`TEXT`] kept after a value (a tool's input can be megabytes).
const TEXT_KEPT: usize = 1 << 20;

/// A JSON value as the line would carry it: raw text borrowed, anything else written.
fn json<'a>(v: &'a Json<'a>) -> Option<J<'a>> {
    match v {
        Json::Raw(r) => Some((r.get() != "null").then_some(Cow::Borrowed(*r))),
        _ => ser(v),
    }
}

fn opt_json<'a>(v: &'a Option<Json<'a>>) -> Option<J<'a>> {
    match v {
        Some(v) => json(v),
        None => Some(None),
    }
}

fn opt_ser<T: Serialize>(v: &Option<T>) -> Option<J<'static>> {
    match v {
        Some(v) => ser(v),
        None => Some(None),
    }
}

/// A number as a reader of the line gets it (serde_json's parsing may be one unit in the last
/// place off the number written).
fn float(v: Option<f64>) -> Option<Option<f64>> {
    match v {
        Some(x) => {
            let text = serde_json::to_string(&x).ok()?;
            serde_json::from_str::<Option<f64>>(&text).ok()
        }
        None => Some(None),
    }
}

fn strs<'a>(v: &'a Option<Vec<Cow<'a, str>>>) -> Option<Vec<Cow<'a, str>>> {
    v.as_ref()
        .map(|l| l.iter().map(|x| Cow::Borrowed(x.as_ref())).collect())
}

fn tokens(u: &e::TokenUsage) -> TokenUsage {
    TokenUsage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cache_read_tokens: u.cache_read_tokens.unwrap_or(0),
        cache_creation_tokens: u.cache_creation_tokens.unwrap_or(0),
        reasoning_tokens: u.reasoning_tokens.unwrap_or(0),
    }
}

/// The extensions [`super::view::Exts`] reads, as a reader of the line gets them (the last
/// value of a key): numbers when non-negative integers, strings when strings, else none.
fn exts<'a>(ext: &'a e::Extensions<'a>) -> super::view::Exts<'a> {
    use super::view::{
        CURSOR_KEY, INFERRED_KEY, PARENT_STEP_KEY, PLAN_ID_KEY, RAW_REASONING_KEY, STEP_INDEX_KEY,
    };
    let last = |key: &str| ext.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
    let number = |key| match last(key)? {
        Json::U64(n) => Some(*n),
        Json::Raw(r) => r.get().parse().ok(),
        Json::RawOwned(r) => r.get().parse().ok(),
        Json::Value(serde_json::Value::Number(n)) => n.as_u64(),
        Json::Str(_) | Json::Bool(_) | Json::Value(_) | Json::Object(_) | Json::Array(_) => None,
    };
    let string = |key| match last(key)? {
        Json::Str(t) => Some(Cow::Borrowed(t.as_ref())),
        Json::Raw(r) => serde_json::from_str::<String>(r.get()).ok().map(Cow::Owned),
        Json::RawOwned(r) => serde_json::from_str::<String>(r.get()).ok().map(Cow::Owned),
        Json::Value(serde_json::Value::String(t)) => Some(Cow::Borrowed(t.as_str())),
        Json::U64(_) | Json::Bool(_) | Json::Value(_) | Json::Object(_) | Json::Array(_) => None,
    };
    let yes = |key| match last(key) {
        Some(Json::Bool(b)) => *b,
        Some(Json::Value(serde_json::Value::Bool(b))) => *b,
        Some(Json::Raw(r)) => r.get() == "true",
        Some(Json::RawOwned(r)) => r.get() == "true",
        _ => false,
    };
    super::view::Exts {
        event_id: number(CURSOR_KEY),
        plan_id: string(PLAN_ID_KEY),
        step_index: number(STEP_INDEX_KEY),
        parent_step_id: string(PARENT_STEP_KEY),
        raw_reasoning: yes(RAW_REASONING_KEY),
        inferred: yes(INFERRED_KEY),
    }
}

impl<'a> Ev<'a> {
    /// The view of `ev`, as [`Ev::read`] reads its line; `None` when only reading the line
    /// tells (a member the reader parses further cannot be read).
    #[cfg(test)]
    pub fn from_event(ev: &'a Event<'a>) -> Option<Ev<'a>> {
        let mut v = Ev::default();
        v.fill_from(ev)?;
        Some(v)
    }

    /// The view of an event the converter made, into `self`, a default view: from the event
    /// ([`Ev::fill_from`]), or, when only its line tells, read from its line, written into
    /// `line`. `Ok(Err(why))` when that line cannot be read either; `Err` if the event cannot
    /// be written.
    pub fn fill_from_event_or_line(
        &mut self,
        ev: &'a Event<'a>,
        line: &'a mut String,
    ) -> std::io::Result<serde_json::Result<()>> {
        if self.fill_from(ev).is_some() {
            return Ok(Ok(()));
        }
        *line = serde_json::to_string(ev)?;
        let line: &'a String = line;
        *self = Ev::default();
        Ok(self.read(line))
    }

    /// The view of `ev`, as [`Ev::read`] reads its line, into `self`, which must be
    /// `Ev::default()`: not built elsewhere and moved (it is a hundred members, and `reduce`
    /// makes one per event). `None` when only reading the line tells (a member the reader
    /// parses further cannot be read); `self` then holds part of the view and is to be dropped.
    pub fn fill_from(&mut self, ev: &'a Event<'a>) -> Option<()> {
        let v = self;
        v.event = Cow::Borrowed(ev.event);
        v.id = r(&ev.id);
        v.seq = Some(ev.seq);
        v.timestamp = s(&ev.timestamp);
        v.provider = r(ev.provider);
        v.session_id = r(&ev.session_id);
        v.turn_id = s(&ev.turn_id);
        v.source = Some(ev);
        if super::view::reads_extensions(ev.provider, ev.event) {
            v.ext = exts(&ev.extensions);
        }
        match &ev.body {
            Body::SessionInit(b) => {
                v.model = s(&b.model);
                v.reasoning_effort = s(&b.reasoning_effort);
                v.cwd = s(&b.cwd);
                v.available_tools = opt_ser(&b.available_tools)?;
                v.mcp_servers = opt_ser(&b.mcp_servers)?;
                v.permission_mode = s(&b.permission_mode);
                v.account = opt_ser(&b.account)?;
                v.slash_commands = opt_ser(&b.slash_commands)?;
                v.available_models = opt_ser(&b.available_models)?;
                v.version = s(&b.version);
                v.agents = opt_ser(&b.agents)?;
                v.skills = opt_ser(&b.skills)?;
            }
            Body::SessionStatus(b) => {
                v.status = r(b.status.as_str());
                v.message = s(&b.message);
            }
            Body::Text(b) => {
                v.text = r(&b.text);
                v.kind = r(b.kind.as_str());
                v.parent_call_id = s(&b.parent_call_id);
                v.model = s(&b.model);
                v.message_id = s(&b.message_id);
            }
            Body::UserInput(b) => {
                v.text = r(&b.text);
                v.images = b.images.as_ref().map(|i| i.len() as u64);
                v.is_synthetic = b.is_synthetic;
                v.parent_call_id = s(&b.parent_call_id);
            }
            Body::ToolInvocation(b) => {
                v.call_id = r(&b.call_id);
                v.parent_call_id = s(&b.parent_call_id);
                v.kind = r(b.kind.as_str());
                v.tool_name = r(&b.tool_name);
                v.title = s(&b.title);
                v.input = json(&b.input)?;
                v.locations = strs(&b.locations);
                v.model = s(&b.model);
                v.mcp_server = s(&b.mcp_server);
                v.mcp_tool = s(&b.mcp_tool);
                v.message_id = s(&b.message_id);
            }
            Body::ToolCompletion(b) => {
                v.call_id = r(&b.call_id);
                v.status = r(b.status.as_str());
                v.duration_ms = b.duration_ms;
                v.output = opt_json(&b.output)?;
                v.is_error = b.is_error;
                v.content = opt_json(&b.content)?;
                v.locations = strs(&b.locations);
                v.parent_call_id = s(&b.parent_call_id);
            }
            Body::SubagentSpawn(b) => {
                v.call_id = r(&b.call_id);
                v.agent_type = s(&b.agent_type);
                v.description = s(&b.description);
                v.is_resume = b.is_resume;
                v.resume_agent_id = s(&b.resume_agent_id);
                v.prompt = s(&b.prompt);
                v.parent_call_id = s(&b.parent_call_id);
            }
            Body::SubagentComplete(b) => {
                v.call_id = r(&b.call_id);
                v.agent_id = s(&b.agent_id);
                v.status = s(&b.status);
                v.summary = s(&b.summary);
                v.duration_ms = b.duration_ms;
                v.total_tokens = b.total_tokens;
                v.tool_use_count = b.tool_use_count;
                v.parent_call_id = s(&b.parent_call_id);
            }
            Body::TurnComplete(b) => {
                v.is_error = b.is_error;
                v.subtype = s(&b.subtype);
                v.errors = b
                    .errors
                    .as_ref()
                    .map(|l| l.iter().map(|x| x.to_string()).collect());
                v.cost_usd = float(b.cost_usd)?;
                v.duration_ms = b.duration_ms;
                v.duration_api_ms = b.duration_api_ms;
                v.num_turns = b.num_turns;
                v.usage = opt_ser(&b.usage)?;
                v.model_usage = match &b.model_usage {
                    Some(p) => Some(Pairs(
                        p.0.iter()
                            .map(|(k, u)| {
                                Some((
                                    Cow::Borrowed(k.as_ref()),
                                    ModelUsage {
                                        input_tokens: u.tokens.input_tokens,
                                        output_tokens: u.tokens.output_tokens,
                                        cache_read_tokens: u.tokens.cache_read_tokens.unwrap_or(0),
                                        cache_creation_tokens: u
                                            .tokens
                                            .cache_creation_tokens
                                            .unwrap_or(0),
                                        reasoning_tokens: u.tokens.reasoning_tokens.unwrap_or(0),
                                        cost_usd: float(u.cost_usd)?,
                                        context_window: u.context_window,
                                        context_tokens: None,
                                        web_search_requests: u.web_search_requests,
                                        max_output_tokens: u.max_output_tokens,
                                    },
                                ))
                            })
                            .collect::<Option<Vec<_>>>()?,
                    )),
                    None => None,
                };
                v.permission_denials = match &b.permission_denials {
                    Some(l) => Some(l.iter().map(denial).collect::<Option<Vec<Denial<'a>>>>()?),
                    None => None,
                };
                v.stop_reason = s(&b.stop_reason);
            }
            Body::ContextCompaction(b) => {
                v.trigger = r(b.trigger.as_str());
                v.pre_tokens = b.pre_tokens;
                v.post_tokens = b.post_tokens;
                v.summary = s(&b.summary);
                v.duration_ms = b.duration_ms;
            }
            Body::PermissionRequest(b) => {
                v.request_id = r(&b.request_id);
                v.tool_name = r(&b.tool_name);
                v.tool_kind = r(b.tool_kind.as_str());
                v.tool_input = json(&b.tool_input)?;
                v.tool_use_id = s(&b.tool_use_id);
                v.reason = s(&b.reason);
                v.blocked_path = s(&b.blocked_path);
                v.suggestions = opt_ser(&b.suggestions)?;
                v.title = s(&b.title);
                v.parent_call_id = s(&b.parent_call_id);
                v.options = opt_ser(&b.options)?;
            }
            Body::ConfigOptions(b) => v.config_options = ser(&b.config_options)?,
            Body::AvailableCommands(b) => v.available_commands = ser(&b.available_commands)?,
            Body::SessionMode(b) => {
                v.current_mode_id = r(&b.current_mode_id);
                v.available_modes = ser(&b.available_modes)?;
            }
            Body::StreamDelta(b) => {
                v.kind = r(b.kind.as_str());
                v.parent_call_id = s(&b.parent_call_id);
                v.text_delta = s(&b.text_delta);
                v.call_id = s(&b.call_id);
                v.message_id = s(&b.message_id);
            }
            Body::UsageUpdate(b) => {
                v.step_usage = step_usage(&b.step_usage)?;
                v.total = b.total.as_ref().map(tokens);
                v.context_window = b.context_window;
                v.context_tokens = b.context_tokens;
                v.cost_usd = float(b.cost_usd)?;
                v.parent_call_id = s(&b.parent_call_id);
                v.model = s(&b.model);
                v.message_id = s(&b.message_id);
            }
            Body::RateLimitUpdate(b) => {
                v.primary = opt_ser(&b.primary)?;
                v.secondary = opt_ser(&b.secondary)?;
                v.plan_type = s(&b.plan_type);
                v.status = s(&b.status);
                v.rate_limit_type = s(&b.rate_limit_type);
            }
            Body::TurnStart(b) => v.model = s(&b.model),
            Body::PlanUpdate(b) => {
                v.entries = ser(&b.entries)?;
                v.call_id = s(&b.call_id);
                v.parent_call_id = s(&b.parent_call_id);
                v.explanation = s(&b.explanation);
            }
            Body::PermissionResponse(b) => {
                v.request_id = r(&b.request_id);
                v.decision = r(b.decision.as_str());
                v.allowed = b.allowed;
                v.message = s(&b.message);
                v.interrupt = b.interrupt;
                v.tool_use_id = s(&b.tool_use_id);
                v.option_id = s(&b.option_id);
            }
            Body::ToolUpdate(b) => {
                v.call_id = r(&b.call_id);
                v.status = s(&b.status);
                v.tool_name = s(&b.tool_name);
                v.output = opt_json(&b.output)?;
                v.elapsed_ms = b.elapsed_ms;
                v.parent_call_id = s(&b.parent_call_id);
                v.title = s(&b.title);
                v.input = opt_json(&b.input)?;
                v.locations = strs(&b.locations);
                if let Some(k) = b.kind {
                    v.kind = r(k.as_str());
                }
            }
            Body::FileChange(b) => {
                v.path = r(&b.path);
                v.change_kind = r(b.change_kind.as_str());
                v.move_path = s(&b.move_path);
                v.diff = s(&b.diff);
                v.cumulative = b.cumulative;
                v.call_id = s(&b.call_id);
                v.parent_call_id = s(&b.parent_call_id);
            }
            Body::Error(b) => {
                v.message = r(&b.message);
                v.severity = r(b.severity.as_str());
                v.code = s(&b.code);
                v.http_status = b.http_status;
                v.will_retry = b.will_retry;
                v.attempt = b.attempt;
                v.max_retries = b.max_retries;
                v.retry_delay_ms = b.retry_delay_ms;
                v.request_id = s(&b.request_id);
                v.parent_call_id = s(&b.parent_call_id);
            }
            Body::TaskUpdate(b) => {
                v.task_id = r(&b.task_id);
                v.phase = r(b.phase.as_str());
                v.call_id = s(&b.call_id);
                v.status = s(&b.status);
                v.description = s(&b.description);
                v.agent_type = s(&b.agent_type);
                v.task_type = s(&b.task_type);
                v.summary = s(&b.summary);
                v.last_tool_name = s(&b.last_tool_name);
                v.usage = opt_json(&b.usage)?;
            }
            Body::Hook(b) => {
                v.phase = r(b.phase.as_str());
                v.output = opt_ser(&b.output)?;
            }
            Body::Notice(b) => {
                v.subtype = r(&b.subtype);
                v.message = s(&b.message);
            }
            Body::SessionInfo(b) => v.title = s(&b.title),
            Body::Raw(b) => v.reason = r(&b.reason),
        }
        Some(())
    }
}

/// `stepUsage` as the reader parses it.
fn step_usage(v: &Json) -> Option<Option<StepUsage>> {
    let text = match v {
        Json::Raw(r) => Cow::Borrowed(r.get()),
        _ => Cow::Owned(serde_json::to_string(v).ok()?),
    };
    serde_json::from_str(&text).ok()
}

/// One of `permissionDenials` as the reader parses it (only its `tool_use_id` is kept).
fn denial<'a>(v: &'a Json<'a>) -> Option<Denial<'a>> {
    match v {
        Json::Raw(r) => serde_json::from_str(r.get()).ok(),
        _ => {
            let text = serde_json::to_string(v).ok()?;
            let d: Denial = serde_json::from_str(&text).ok()?;
            Some(Denial {
                tool_use_id: d.tool_use_id.map(|t| Cow::Owned(t.into_owned())),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{Converter, Options};
    use crate::diag::Diag;
    use crate::output::Out;
    use crate::reduce::handover::Cargo;
    use std::path::Path;

    /// The view with what may differ between the two ways of making it blanked: where it
    /// came from.
    fn shown(mut ev: Ev) -> String {
        ev.line = "";
        ev.source = None;
        format!("{ev:?}")
    }

    /// Converts a file's lines and compares, for every event, the view made from the event
    /// with the one read from its line; returns how many events were compared.
    fn compare(path: &Path) -> u64 {
        let opts = Options::for_tests(64 << 20);
        let mut n = 0;
        let mut tap = |event: &Event| {
            let line = serde_json::to_string(event).unwrap();
            let read = Ev::parse(&line).map(shown);
            match Ev::from_event(event) {
                Some(ev) => {
                    // And as `reduce --jobs` hands it over.
                    let mut cargo = Cargo::default();
                    cargo.pack(&ev, None);
                    let mut back = Ev::default();
                    cargo.unpack().next_into(&mut back).unwrap();
                    assert_eq!(shown(back), read.as_ref().unwrap().clone());
                    assert_eq!(shown(ev), read.unwrap(), "{}: {line}", path.display());
                    assert_eq!(
                        Ev::from_event(event).unwrap().line_json().unwrap().get(),
                        line
                    );
                }
                // Only what the line's reader refuses is left to it.
                None => assert!(read.is_err(), "{}: {line}", path.display()),
            }
            n += 1;
            Ok(())
        };
        let mut out = Out::new(Vec::new());
        let mut conv = Converter::new(&opts, &mut out);
        conv.tap(&mut tap);
        let mut diag = Diag::new(false);
        let file = std::fs::File::open(path).unwrap();
        conv.run_reader(file, "<test>", &mut diag).unwrap();
        n
    }

    fn inputs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for f in std::fs::read_dir(dir).unwrap().flatten() {
            let p = f.path();
            if p.is_dir() {
                inputs(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl")
                && !p.to_string_lossy().ends_with(".events.jsonl")
            {
                out.push(p);
            }
        }
    }

    #[test]
    fn the_view_of_an_event_is_the_view_of_its_line() {
        let mut files = Vec::new();
        inputs(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"),
            &mut files,
        );
        // More input, say a large capture: INSIGHTS_FROM_EVENT_INPUTS=a.jsonl:b.jsonl
        if let Some(more) = std::env::var_os("INSIGHTS_FROM_EVENT_INPUTS") {
            files.extend(std::env::split_paths(&more));
        }
        let n: u64 = files.iter().map(|f| compare(f)).sum();
        assert!(n > 1000, "only {n} events compared");
    }

    #[test]
    fn members_parsed_further_fall_back_to_the_line() {
        let bad = Json::Value(serde_json::json!({"input_tokens": -1}));
        assert!(step_usage(&bad).is_none());
        let good = Json::Value(serde_json::json!({"input_tokens": 3, "x": [1]}));
        assert_eq!(step_usage(&good).flatten().unwrap().input_tokens, Some(3));
        assert!(matches!(
            step_usage(&Json::Value(serde_json::Value::Null)),
            Some(None)
        ));
        assert!(denial(&Json::Value(serde_json::json!(5))).is_none());
        assert_eq!(float(Some(f64::NAN)), Some(None));
        assert_eq!(float(Some(0.1)), Some(Some(0.1)));
    }
}
