//! The published contract, `schemas/insights-event.schema.json`: it is valid draft 2020-12, has
//! a branch for every event type, is what `insights schema` prints, and every golden file (and
//! the output of the other modes) follows it. Also: `--compat cc-insights` output meets the
//! consumer checklist of CC-Insights (`InsightsEvent.fromJson`), checked here independently of
//! the schema.

use crate::golden::{captures, golden_of};
use crate::util::{root, run};
use jsonschema::{Draft, Validator};
use serde_json::{json, Map, Value};
use std::path::Path;

const SCHEMA_FILE: &str = "schemas/insights-event.schema.json";

fn schema_text() -> String {
    std::fs::read_to_string(root().join(SCHEMA_FILE)).expect("read the schema")
}

fn schema() -> Value {
    serde_json::from_str(&schema_text()).expect("the schema is JSON")
}

/// The schema compiled as a draft 2020-12 validator that also checks `format`s.
fn validator() -> Validator {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(&schema())
        .unwrap_or_else(|e| panic!("{SCHEMA_FILE} does not compile: {e}"))
}

/// Every error the schema reports for `instance`, one per line: instance path, message,
/// schema path.
fn problems(v: &Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("{at}: {e} (schema {})", e.schema_path())
        })
        .collect()
}

/// Validates every line of a JSONL text; failures are `what:line: path: message`.
fn check_jsonl(v: &Validator, what: &str, text: &str, failures: &mut Vec<String>) -> usize {
    let mut n = 0;
    for (i, l) in text.lines().enumerate() {
        let ev: Value = match serde_json::from_str(l) {
            Ok(ev) => ev,
            Err(e) => {
                failures.push(format!("{what}:{}: not JSON: {e}", i + 1));
                continue;
            }
        };
        for p in problems(v, &ev) {
            failures.push(format!("{what}:{}: {p}", i + 1));
        }
        n += 1;
    }
    n
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

fn fail_if_any(what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{what}: {} problems\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn schema_is_valid_draft_2020_12() {
    let s = schema();
    assert_eq!(
        s["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "$schema"
    );
    assert_eq!(
        s["$id"], "https://insights.dev/schemas/insights-event.schema.json",
        "$id"
    );
    assert!(s["title"].is_string() && s["description"].is_string());
    if let Err(e) = jsonschema::draft202012::meta::validate(&s) {
        panic!(
            "{SCHEMA_FILE} is not a valid draft 2020-12 schema: {}: {e}",
            e.instance_path()
        );
    }
    assert!(jsonschema::meta::is_valid(&s));
    jsonschema::validator_for(&s).expect("validator_for compiles the schema");
    validator();
}

#[test]
fn golden_files_follow_the_schema() {
    let v = validator();
    let mut failures = Vec::new();
    let mut checked = 0;
    for cap in captures() {
        let golden = golden_of(&cap);
        let text = std::fs::read_to_string(&golden)
            .unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
        checked += check_jsonl(&v, &rel(&golden), &text, &mut failures);
    }
    assert!(checked > 0, "no golden events");
    fail_if_any("golden files against the schema", &failures);
}

#[test]
fn other_output_modes_follow_the_schema() {
    // Timestamps (from the input or the clock), `--raw`, `--compat cc-insights`, and `raw`
    // events for lines no provider knows.
    let v = validator();
    let mut failures = Vec::new();
    let modes: &[&[&str]] = &[&[], &["--raw"], &["--compat", "cc-insights"]];
    for cap in captures() {
        let cap = rel(&cap);
        for mode in modes {
            let mut args = mode.to_vec();
            args.push(&cap);
            let out = run(&args, b"");
            assert!(out.status.success(), "insights {args:?}: {:?}", out.status);
            let text = String::from_utf8(out.stdout).expect("utf-8 output");
            check_jsonl(
                &v,
                &format!("insights {}", args.join(" ")),
                &text,
                &mut failures,
            );
        }
    }
    let unknown = b"{\"hello\":1}\n{\"type\":\"assistant\",\"message\":{\"content\":\"x\"}}\n";
    let out = run(&[], unknown);
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    let n = check_jsonl(&v, "<unknown lines>", &text, &mut failures);
    assert_eq!(n, 2, "raw events: {text}");
    assert!(
        text.lines().all(|l| l.starts_with("{\"event\":\"raw\"")),
        "{text}"
    );
    fail_if_any("output modes against the schema", &failures);
}

#[test]
fn schema_command_prints_the_schema_file() {
    let out = run(&["schema"], b"");
    assert!(out.status.success(), "insights schema: {:?}", out.status);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::fs::read(root().join(SCHEMA_FILE)).expect("read the schema");
    assert!(
        out.stdout == file,
        "`insights schema` differs from {SCHEMA_FILE} (rebuild?)"
    );
}

#[test]
fn schema_command_prints_the_command_schema_file() {
    let file = std::fs::read(root().join("schemas/insights-command.schema.json"))
        .expect("read the command schema");
    for args in [&["schema", "--commands"][..], &["schema", "command"]] {
        let out = run(args, b"");
        assert!(out.status.success(), "insights {args:?}: {:?}", out.status);
        assert!(
            out.stdout == file,
            "`insights {args:?}` differs from the file"
        );
    }
}

/// The event type names of the `bodies! { … }` invocation in src/event.rs, in order.
fn event_types_in_source() -> Vec<String> {
    let src = std::fs::read_to_string(root().join("src/event.rs")).expect("read src/event.rs");
    let mut lines = src.lines().skip_while(|l| !l.starts_with("bodies! {"));
    assert!(lines.next().is_some(), "no `bodies! {{` in src/event.rs");
    let names: Vec<String> = lines
        .take_while(|l| l.trim() != "}")
        .filter_map(|l| {
            let (_, rest) = l.split_once("= \"")?;
            let (name, tail) = rest.split_once('"')?;
            (tail.trim() == ",").then(|| name.to_owned())
        })
        .collect();
    assert!(names.len() >= 27, "bodies! scan found only {names:?}");
    names
}

#[test]
fn schema_has_a_branch_per_event_type() {
    let types = event_types_in_source();
    let s = schema();
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .expect("an array")
            .iter()
            .map(|x| x.as_str().expect("a string").to_owned())
            .collect()
    };
    assert_eq!(
        strs(&s["properties"]["event"]["enum"]),
        types,
        "properties.event.enum vs the bodies! list of src/event.rs"
    );
    let branches: Vec<String> = s["allOf"]
        .as_array()
        .expect("allOf")
        .iter()
        .map(|b| {
            let name = b["if"]["properties"]["event"]["const"]
                .as_str()
                .expect("allOf[].if.properties.event.const")
                .to_owned();
            assert_eq!(b["if"]["required"], json!(["event"]), "{name}: if");
            assert_eq!(b["then"]["$ref"], format!("#/$defs/{name}"), "{name}: then");
            name
        })
        .collect();
    assert_eq!(branches, types, "allOf if/then branches");
    let defs = s["$defs"].as_object().expect("$defs");
    for t in &types {
        let d = &defs.get(t).unwrap_or_else(|| panic!("no $defs/{t}"));
        assert_eq!(d["properties"]["event"]["const"], **t, "$defs/{t}");
        assert_eq!(d["$ref"], "#/$defs/envelope", "$defs/{t}");
        assert_eq!(d["unevaluatedProperties"], false, "$defs/{t}");
        assert!(d["description"].is_string(), "$defs/{t}: description");
    }
    // No branch for a type the converter does not know.
    let with_const: Vec<&String> = defs
        .iter()
        .filter(|(_, d)| d["properties"]["event"]["const"].is_string())
        .map(|(k, _)| k)
        .collect();
    assert_eq!(with_const.len(), types.len(), "{with_const:?}");
}

#[test]
fn schema_rejects_invalid_events() {
    let v = validator();
    let text = json!({"event": "text", "id": "u:0", "seq": 1, "line": 1,
        "timestamp": "2026-11-22T02:19:59.933Z", "provider": "claude", "sessionId": "s",
        "text": "hi", "kind": "text"});
    let delta = json!({"event": "stream_delta", "id": "u:0", "seq": 1, "line": 1,
        "provider": "claude", "sessionId": "", "kind": "text", "blockIndex": 1,
        "textDelta": "h"});
    let tool = json!({"event": "tool_invocation", "id": "u:0", "seq": 2, "line": 1,
        "provider": "claude", "sessionId": "s", "callId": "t", "kind": "execute",
        "toolName": "Bash", "input": {"command": "ls"}});
    let done = json!({"event": "tool_completion", "id": "u:1", "seq": 3, "line": 2,
        "provider": "claude", "sessionId": "s", "callId": "t", "status": "completed",
        "output": "x", "content": [{"type": "text", "text": "x"}]});
    let turn = json!({"event": "turn_complete", "id": "u:1", "seq": 3, "line": 2,
        "provider": "claude", "sessionId": "s", "usage": {"inputTokens": 1, "outputTokens": 2},
        "modelUsage": {"m": {"inputTokens": 1, "outputTokens": 2, "costUsd": 0.5}}});
    let raw = json!({"event": "raw", "id": "h0:0", "seq": 1, "line": 1,
        "provider": "unknown", "sessionId": "", "reason": "?", "raw": {"hello": 1}});
    for ok in [&text, &delta, &tool, &done, &turn, &raw] {
        let p = problems(&v, ok);
        assert!(p.is_empty(), "valid event rejected: {ok}\n{}", p.join("\n"));
    }

    let with = |base: &Value, key: &str, value: Value| {
        let mut e = base.clone();
        e[key] = value;
        e
    };
    let without = |base: &Value, key: &str| {
        let mut e = base.clone();
        e.as_object_mut().expect("object").remove(key);
        e
    };
    let cases: Vec<(&str, Value)> = vec![
        ("unknown event type", with(&text, "event", json!("texts"))),
        ("no event", without(&text, "event")),
        ("no sessionId", without(&text, "sessionId")),
        ("no id", without(&tool, "id")),
        ("sessionId null", with(&text, "sessionId", Value::Null)),
        ("blockIndex 1.5", with(&delta, "blockIndex", json!(1.5))),
        ("blockIndex -1", with(&delta, "blockIndex", json!(-1))),
        ("seq 0", with(&text, "seq", json!(0))),
        ("extra top-level member", with(&text, "foo", json!(1))),
        ("member of another type", with(&text, "callId", json!("t"))),
        ("input a string", with(&tool, "input", json!("ls"))),
        (
            "tool kind off the enum",
            with(&tool, "kind", json!("shell")),
        ),
        ("text kind off the enum", with(&text, "kind", json!("poem"))),
        ("no text", without(&text, "text")),
        (
            "timestamp not RFC 3339",
            with(&text, "timestamp", json!("yesterday")),
        ),
        (
            "timestamp without a zone",
            with(&text, "timestamp", json!("2026-11-22T02:19:59.933")),
        ),
        (
            "provider off the enum",
            with(&text, "provider", json!("gpt")),
        ),
        (
            "content block without type",
            with(&done, "content", json!([{"text": "x"}])),
        ),
        ("content not blocks", with(&done, "content", json!("x"))),
        (
            "usage without outputTokens",
            with(&turn, "usage", json!({"inputTokens": 1})),
        ),
        (
            "unknown member in usage",
            with(
                &turn,
                "usage",
                json!({"inputTokens": 1, "outputTokens": 2, "input_tokens": 1}),
            ),
        ),
        (
            "modelUsage entry not an object",
            with(&turn, "modelUsage", json!({"m": 3})),
        ),
        ("raw event without raw", without(&raw, "raw")),
        ("raw a string", with(&raw, "raw", json!("line"))),
        (
            "extensions not an object",
            with(&text, "extensions", json!([])),
        ),
    ];
    let accepted: Vec<String> = cases
        .iter()
        .filter(|(_, e)| v.is_valid(e))
        .map(|(what, e)| format!("{what}: {e}"))
        .collect();
    assert!(
        accepted.is_empty(),
        "invalid events accepted:\n{}",
        accepted.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// CC-Insights' consumer checklist (/work/shared/formats/insights-event-json.md §6, from
// `agent_sdk_core/lib/src/types/insights_events.dart` at zafnz/cc-insights 670a8d651e7d).

#[derive(Clone, Copy, Debug)]
enum T {
    Str,
    Int,
    Num,
    Bool,
    Obj,
    /// An array of strings.
    Strs,
    /// An array of objects.
    Objs,
    Enum(&'static [&'static str]),
}

const PROVIDERS: &[&str] = &["claude", "codex", "gemini", "acp"];
const SESSION_STATUS: &[&str] = &["compacting", "resuming", "interrupted", "ended", "error"];
const TEXT_KIND: &[&str] = &["text", "thinking", "plan", "error"];
const TOOL_CALL_STATUS: &[&str] = &["completed", "failed", "cancelled"];
const COMPACTION_TRIGGER: &[&str] = &["auto", "manual", "cleared"];
const STREAM_DELTA_KIND: &[&str] = &[
    "text",
    "thinking",
    "toolInput",
    "messageStart",
    "messageStop",
    "blockStart",
    "blockStop",
];
const TOOL_KIND: &[&str] = &[
    "execute", "read", "edit", "delete", "move", "search", "fetch", "browse", "think", "ask",
    "memory", "mcp", "other",
];
const MCP_STATUS: &[&str] = &["connected", "failed", "needs-auth", "pending"];

/// Members every event needs (§1, §6).
const ENVELOPE: &[(&str, T)] = &[
    ("event", T::Str),
    ("id", T::Str),
    ("timestamp", T::Str),
    ("provider", T::Enum(PROVIDERS)),
];

/// §6: the members each of the 17 types requires.
const CHECKLIST: &[(&str, &[(&str, T)])] = &[
    ("session_init", &[("sessionId", T::Str)]),
    (
        "session_status",
        &[("sessionId", T::Str), ("status", T::Enum(SESSION_STATUS))],
    ),
    (
        "text",
        &[
            ("sessionId", T::Str),
            ("text", T::Str),
            ("kind", T::Enum(TEXT_KIND)),
        ],
    ),
    ("user_input", &[("sessionId", T::Str), ("text", T::Str)]),
    (
        "tool_invocation",
        &[
            ("callId", T::Str),
            ("sessionId", T::Str),
            ("kind", T::Enum(TOOL_KIND)),
            ("toolName", T::Str),
            ("input", T::Obj),
        ],
    ),
    (
        "tool_completion",
        &[
            ("callId", T::Str),
            ("sessionId", T::Str),
            ("status", T::Enum(TOOL_CALL_STATUS)),
        ],
    ),
    (
        "subagent_spawn",
        &[("sessionId", T::Str), ("callId", T::Str)],
    ),
    (
        "subagent_complete",
        &[("sessionId", T::Str), ("callId", T::Str)],
    ),
    ("turn_complete", &[("sessionId", T::Str)]),
    (
        "context_compaction",
        &[
            ("sessionId", T::Str),
            ("trigger", T::Enum(COMPACTION_TRIGGER)),
        ],
    ),
    (
        "permission_request",
        &[
            ("sessionId", T::Str),
            ("requestId", T::Str),
            ("toolName", T::Str),
            ("toolKind", T::Enum(TOOL_KIND)),
            ("toolInput", T::Obj),
        ],
    ),
    ("config_options", &[("sessionId", T::Str)]),
    ("available_commands", &[("sessionId", T::Str)]),
    (
        "session_mode",
        &[("sessionId", T::Str), ("currentModeId", T::Str)],
    ),
    (
        "stream_delta",
        &[("sessionId", T::Str), ("kind", T::Enum(STREAM_DELTA_KIND))],
    ),
    ("usage_update", &[("sessionId", T::Str)]),
    ("rate_limit_update", &[("sessionId", T::Str)]),
];

/// §1a and §6's strictness rules: the type a member must have when present, whatever the
/// event (Dart casts optional members too: `as int?`, `as String?`, `as Map?`).
const WHEN_PRESENT: &[(&str, T)] = &[
    ("raw", T::Obj),
    ("extensions", T::Obj),
    ("model", T::Str),
    ("reasoningEffort", T::Str),
    ("cwd", T::Str),
    ("permissionMode", T::Str),
    ("message", T::Str),
    ("parentCallId", T::Str),
    ("title", T::Str),
    ("agentType", T::Str),
    ("description", T::Str),
    ("resumeAgentId", T::Str),
    ("agentId", T::Str),
    ("status", T::Str),
    ("summary", T::Str),
    ("subtype", T::Str),
    ("result", T::Str),
    ("toolUseId", T::Str),
    ("reason", T::Str),
    ("blockedPath", T::Str),
    ("textDelta", T::Str),
    ("jsonDelta", T::Str),
    ("callId", T::Str),
    ("planType", T::Str),
    ("isError", T::Bool),
    ("isSynthetic", T::Bool),
    ("isResume", T::Bool),
    ("costUsd", T::Num),
    ("durationMs", T::Int),
    ("durationApiMs", T::Int),
    ("numTurns", T::Int),
    ("preTokens", T::Int),
    ("blockIndex", T::Int),
    ("input", T::Obj),
    ("toolInput", T::Obj),
    ("stepUsage", T::Obj),
    ("usage", T::Obj),
    ("account", T::Obj),
    ("modelUsage", T::Obj),
    ("primary", T::Obj),
    ("secondary", T::Obj),
    ("credits", T::Obj),
    ("availableTools", T::Strs),
    ("locations", T::Strs),
    ("errors", T::Strs),
    ("mcpServers", T::Objs),
    ("slashCommands", T::Objs),
    ("availableModels", T::Objs),
    ("images", T::Objs),
    ("content", T::Objs),
    ("suggestions", T::Objs),
    ("permissionDenials", T::Objs),
    ("configOptions", T::Objs),
    ("availableCommands", T::Objs),
    ("availableModes", T::Objs),
];

/// Nested shapes (§1a "Nested shapes"): members that must have a type when present.
const TOKEN_USAGE: &[(&str, T)] = &[
    ("inputTokens", T::Int),
    ("outputTokens", T::Int),
    ("cacheReadTokens", T::Int),
    ("cacheCreationTokens", T::Int),
];
const MODEL_TOKEN_USAGE: &[(&str, T)] = &[
    ("inputTokens", T::Int),
    ("outputTokens", T::Int),
    ("cacheReadTokens", T::Int),
    ("cacheCreationTokens", T::Int),
    ("costUsd", T::Num),
    ("contextWindow", T::Int),
    ("webSearchRequests", T::Int),
];
const STEP_USAGE: &[(&str, T)] = &[
    ("input_tokens", T::Int),
    ("output_tokens", T::Int),
    ("cache_creation_input_tokens", T::Int),
    ("cache_read_input_tokens", T::Int),
];
const RATE_LIMIT_WINDOW: &[(&str, T)] = &[
    ("usedPercent", T::Int),
    ("windowDurationMins", T::Int),
    ("resetsAt", T::Num),
];
const RATE_LIMIT_CREDITS: &[(&str, T)] = &[
    ("hasCredits", T::Bool),
    ("unlimited", T::Bool),
    ("balance", T::Str),
];
const MCP_SERVER: &[(&str, T)] = &[
    ("name", T::Str),
    ("status", T::Enum(MCP_STATUS)),
    ("serverInfo", T::Obj),
];
const ACCOUNT: &[(&str, T)] = &[
    ("email", T::Str),
    ("organization", T::Str),
    ("subscriptionType", T::Str),
    ("tokenSource", T::Str),
    ("apiKeySource", T::Str),
];
const SLASH_COMMAND: &[(&str, T)] = &[
    ("name", T::Str),
    ("description", T::Str),
    ("argumentHint", T::Str),
];
const MODEL_INFO: &[(&str, T)] = &[
    ("value", T::Str),
    ("displayName", T::Str),
    ("description", T::Str),
];
const IMAGE_DATA: &[(&str, T)] = &[("mediaType", T::Str), ("data", T::Str)];
const PERMISSION_DENIAL: &[(&str, T)] = &[
    ("tool_name", T::Str),
    ("tool_use_id", T::Str),
    ("tool_input", T::Obj),
];
const SUGGESTION: &[(&str, T)] = &[
    ("toolName", T::Str),
    ("directory", T::Str),
    ("mode", T::Str),
];
const SUGGESTION_REQUIRED: &[(&str, T)] = &[("type", T::Str), ("description", T::Str)];
const CONTENT_BLOCK_REQUIRED: &[(&str, T)] = &[("type", T::Str)];

fn has_type(v: &Value, t: T) -> bool {
    match t {
        T::Str => v.is_string(),
        // `5.0` is a double in Dart: only JSON integers pass `as int`.
        T::Int => v.is_i64() || v.is_u64(),
        T::Num => v.is_number(),
        T::Bool => v.is_boolean(),
        T::Obj => v.is_object(),
        T::Strs => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        T::Objs => v.as_array().is_some_and(|a| a.iter().all(Value::is_object)),
        T::Enum(values) => v.as_str().is_some_and(|s| values.contains(&s)),
    }
}

/// Checks `fields` of `obj`; `required` ones must be present. Problems are `path.key: why`.
fn check_fields(
    obj: &Map<String, Value>,
    path: &str,
    fields: &[(&str, T)],
    required: bool,
    out: &mut Vec<String>,
) {
    for (key, t) in fields {
        match obj.get(*key) {
            None if required => out.push(format!("{path}{key}: missing ({t:?})")),
            None => {}
            Some(v) if !has_type(v, *t) => out.push(format!("{path}{key}: not {t:?}: {v}")),
            Some(_) => {}
        }
    }
}

/// Checks a nested object member, or each object of an array member, against `fields`.
fn check_nested(
    ev: &Map<String, Value>,
    key: &str,
    fields: &[(&str, T)],
    required: bool,
    out: &mut Vec<String>,
) {
    match ev.get(key) {
        Some(Value::Object(o)) => check_fields(o, &format!("{key}."), fields, required, out),
        Some(Value::Array(a)) => {
            for (i, item) in a.iter().enumerate() {
                if let Some(o) = item.as_object() {
                    check_fields(o, &format!("{key}[{i}]."), fields, required, out);
                }
            }
        }
        _ => {}
    }
}

/// Everything CC-Insights' `InsightsEvent.fromJson` would throw on (or choke on later).
fn cc_insights_problems(ev: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(obj) = ev.as_object() else {
        return vec!["not an object".into()];
    };
    check_fields(obj, "", ENVELOPE, true, &mut out);
    let kind = obj.get("event").and_then(Value::as_str).unwrap_or("");
    match CHECKLIST.iter().find(|(name, _)| *name == kind) {
        Some((_, fields)) => check_fields(obj, "", fields, true, &mut out),
        None => out.push(format!("event: {kind:?} is not a CC-Insights type")),
    }
    check_fields(obj, "", WHEN_PRESENT, false, &mut out);
    check_nested(obj, "usage", TOKEN_USAGE, false, &mut out);
    check_nested(obj, "stepUsage", STEP_USAGE, false, &mut out);
    check_nested(obj, "primary", RATE_LIMIT_WINDOW, false, &mut out);
    check_nested(obj, "secondary", RATE_LIMIT_WINDOW, false, &mut out);
    check_nested(obj, "credits", RATE_LIMIT_CREDITS, false, &mut out);
    check_nested(obj, "mcpServers", MCP_SERVER, false, &mut out);
    check_nested(obj, "account", ACCOUNT, false, &mut out);
    check_nested(obj, "slashCommands", SLASH_COMMAND, false, &mut out);
    check_nested(obj, "availableModels", MODEL_INFO, false, &mut out);
    check_nested(obj, "images", IMAGE_DATA, false, &mut out);
    check_nested(obj, "permissionDenials", PERMISSION_DENIAL, false, &mut out);
    check_nested(obj, "suggestions", SUGGESTION, false, &mut out);
    check_nested(obj, "suggestions", SUGGESTION_REQUIRED, true, &mut out);
    check_nested(obj, "content", CONTENT_BLOCK_REQUIRED, true, &mut out);
    if let Some(Value::Object(per_model)) = obj.get("modelUsage") {
        for (model, u) in per_model {
            match u.as_object() {
                Some(u) => check_fields(
                    u,
                    &format!("modelUsage[{model:?}]."),
                    MODEL_TOKEN_USAGE,
                    false,
                    &mut out,
                ),
                None => out.push(format!("modelUsage[{model:?}]: not an object: {u}")),
            }
        }
    }
    out
}

#[test]
fn compat_output_meets_the_cc_insights_checklist() {
    let mut failures = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for cap in captures() {
        let cap = rel(&cap);
        // With timestamps: CC-Insights requires them.
        let out = run(&["--compat", "cc-insights", &cap], b"");
        assert!(
            out.status.success(),
            "{cap}: exit {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8 output");
        for (i, l) in text.lines().enumerate() {
            let ev: Value = serde_json::from_str(l).expect("output line is JSON");
            seen.insert(ev["event"].as_str().unwrap_or("").to_owned());
            // Every event names its session (the SDK's first prompt waits for it). Not the
            // AceClaw notifications of the mixed file: it has them without the client's
            // `agent.prompt` that names their session (testdata/mixed/README.md).
            if ev["sessionId"] == "" && !cap.starts_with("testdata/mixed/") {
                failures.push(format!(
                    "insights --compat cc-insights {cap}: event {}: sessionId is empty",
                    i + 1
                ));
            }
            for p in cc_insights_problems(&ev) {
                failures.push(format!(
                    "insights --compat cc-insights {cap}: event {}: {p}",
                    i + 1
                ));
            }
        }
    }
    assert!(!seen.is_empty(), "no events");
    fail_if_any("the CC-Insights consumer checklist", &failures);
}

#[test]
fn checklist_catches_what_cc_insights_rejects() {
    // The checker above must not pass everything.
    let good = json!({"event": "stream_delta", "id": "u:0", "timestamp": "2026-11-22T02:19:59Z",
        "provider": "claude", "sessionId": "", "kind": "text", "blockIndex": 0});
    assert_eq!(cc_insights_problems(&good), Vec::<String>::new());
    let bad = [
        json!({"event": "notice", "id": "u:0", "timestamp": "t", "provider": "claude",
            "sessionId": "", "subtype": "x"}),
        json!({"event": "stream_delta", "id": "u:0", "provider": "claude", "sessionId": "",
            "kind": "text"}),
        json!({"event": "stream_delta", "id": "u:0", "timestamp": "t", "provider": "unknown",
            "sessionId": "", "kind": "text"}),
        json!({"event": "stream_delta", "id": "u:0", "timestamp": "t", "provider": "claude",
            "sessionId": "", "kind": "text", "blockIndex": 1.0}),
        json!({"event": "tool_completion", "id": "u:0", "timestamp": "t", "provider": "claude",
            "sessionId": "", "callId": "c", "status": "completed", "content": [{"text": "x"}]}),
        json!({"event": "session_status", "id": "u:0", "timestamp": "t", "provider": "claude",
            "sessionId": "", "status": "idle"}),
        json!({"event": "usage_update", "id": "u:0", "timestamp": "t", "provider": "claude",
            "stepUsage": {}}),
    ];
    for ev in bad {
        assert!(!cc_insights_problems(&ev).is_empty(), "passed: {ev}");
    }
}
