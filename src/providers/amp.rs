//! Amp (Sourcegraph) `amp --execute --stream-json`.
//!
//! Amp writes a subset of Claude Code's stream-json (`system/init`, `assistant`, `user`,
//! `result`; no `stream_event`, no cost), so lines map through the Claude converter
//! ([`claude::convert_as`]) with Amp's tool names ([`AMP`]). Built from the Amp SDK's type
//! definitions (`@sourcegraph/amp-sdk` `dist/types.d.ts`, "compatible with the Amp CLI
//! --stream-json output") and `../shared/formats/others.md`; not checked against a recording
//! (Amp needs its own service and cannot run against a local model). What differs:
//!
//! | line | difference | events |
//! |---|---|---|
//! | tools `Bash {cmd}`, `edit_file`, `create_file`, `read_file`/`Read {path}`, `glob {filePattern}`, `Grep`, `list_directory`, `todo_write`, `Task`, `oracle`, `codebase_search_agent`, `read_web_page`, `web_search`, `undo_edit`, `mermaid`, … | Amp's names and inputs | kinds, titles, locations, subagents and plans as for the Claude tool they correspond to |
//! | `user` tool results | Bash results are often a JSON object in a string (`{"output":…,"exitCode":0}`) | `tool_completion` whose `output` is that object |
//! | `result` with `error` (a string) | where Claude has `errors: [string]` | `turn_complete` with `errors` |
//! | `result` `permission_denials` | tool names (strings), where Claude has objects | `turn_complete` `permissionDenials` as `{tool_name}` objects |
//!
//! **Detection.** Amp's session ids are thread ids, `T-<uuid>`, where Claude Code's are bare
//! UUIDs: a Claude-shaped line whose `session_id` starts with `T-` is Amp's, and so is a
//! `result` whose `error` is a string. Other lines are read as Claude's; use `--from amp`.
//! Amp may repeat an assistant message cumulatively; as with every provider, the events
//! pass on as they come (`reduce` folds repeats).

use super::claude::{self, Dialect};
use super::edits::{self, Edit};
use super::memo::Memo;
use super::{Capabilities, Cx, Provider, Unmapped};
use crate::detect::Probe;
use crate::event::*;
use crate::wire::raw_str;
use serde::Deserialize;
use serde_json::value::RawValue;

pub const PROVIDER: Provider = Provider {
    name: "amp",
    display: "Amp",
    cc_name: "claude",
    about: "Amp --execute --stream-json; Claude-compatible",
    jsonrpc: false,
    sniff,
    convert,
    reading: super::Reading::PLAIN,
    caps: Capabilities {
        streaming_deltas: false,
        tool_calls: true,
        tool_results: true,
        status_updates: false,
        reasoning: true,
        permissions: false,
        questions: false,
        file_changes: true,
        command_exec: true,
        mcp: true,
        usage: true,
        cost: false,
        subagents: true,
        plans: true,
    },
    infers_turns: true,
    whole_messages: false,
    at_end: None,
    talk: None,
};

/// Amp's tools, by the Claude Code tool they correspond to.
pub(crate) const AMP: Dialect = Dialect {
    canonical,
    tool_kind,
    json_results: true,
};

crate::providers::memo::remember! {
    /// What Amp lines need of earlier lines of the stream.
    pub struct Memory {
        /// The change each write or edit call asked for, by call id, until its result: the
        /// results carry no change ([`super::edits`]).
        pub edits: Memo<Edit>,
    }
}

fn edits_memo<'r>(cx: &'r mut Cx<'_>) -> &'r mut Memo<Edit> {
    &mut cx.memory().amp.edits
}

/// Which tools write a file (`Some((whole file, creates))`).
fn edit_kind(name: &str) -> Option<(bool, bool)> {
    match name {
        "create_file" => Some((true, true)),
        "edit_file" | "edit" => Some((false, false)),
        _ => None,
    }
}

fn canonical(name: &str) -> &str {
    match name {
        "bash" => "Bash",
        "read_file" | "read" => "Read",
        "create_file" => "Write",
        "edit_file" | "edit" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        "list_directory" | "ls" => "LS",
        "read_web_page" => "WebFetch",
        "web_search" => "WebSearch",
        "task" => "Task",
        "todo_write" => "TodoWrite",
        other => other,
    }
}

fn tool_kind(name: &str) -> ToolKind {
    match name {
        "undo_edit" => ToolKind::Edit,
        "todo_read" => ToolKind::Memory,
        "codebase_search_agent" => ToolKind::Search,
        "oracle" => ToolKind::Think,
        n => claude::tool_kind(canonical(n)),
    }
}

/// The `type`s of Amp's stream-json.
const TYPES: &[&str] = &["system", "assistant", "user", "result"];

fn sniff(p: &Probe) -> bool {
    let Some(t) = p.ty().filter(|t| TYPES.contains(t)) else {
        return false;
    };
    // An Amp thread id (`T-…`, as in the Amp SDK's tests) where Claude has a bare UUID.
    let thread = p.session_id.is_some_and(|s| s.get().starts_with("\"T-"));
    // ErrorResultMessage: `error: string` (Claude: `errors: string[]`; Qwen: an object).
    let error_string = t == "result" && p.error.is_some_and(|e| e.get().starts_with('"'));
    thread || error_string
}

#[derive(Deserialize)]
struct ResultExtra<'a> {
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow)]
    permission_denials: Option<Vec<&'a RawValue>>,
}

fn convert<'a>(line: &'a str, probe: &Probe<'a>, cx: &mut Cx<'a>) -> Result<(), Unmapped> {
    claude::convert_as(line, probe, cx, &AMP)?;
    if matches!(probe.ty(), Some("assistant" | "user")) {
        edits::follow(cx, edits_memo, edit_kind);
    }
    // The result names no model; the turn's assistant messages do.
    match probe.ty() {
        Some("assistant") => super::models::note(cx, PROVIDER.name),
        Some("result") => super::models::price(cx),
        _ => {}
    }
    if probe.ty() == Some("result") {
        let w: ResultExtra = crate::members::read(line, probe.members())?;
        if let Some((Body::TurnComplete(tc), _)) = cx.events.last_mut() {
            if let Some(e) = w.error.and_then(raw_str) {
                tc.errors.get_or_insert_with(Vec::new).push(e);
            }
            // Amp lists the refused tools by name; a denial is an object with `tool_name`.
            let names: Vec<Json<'a>> = w
                .permission_denials
                .unwrap_or_default()
                .into_iter()
                .filter_map(raw_str)
                .map(|n| Json::Value(serde_json::json!({ "tool_name": n })))
                .collect();
            if !names.is_empty() {
                tc.permission_denials
                    .get_or_insert_with(Vec::new)
                    .extend(names);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;
    use serde_json::Value;

    /// One line's events, converted as `--from` does.
    fn conv(line: &str) -> Vec<Value> {
        test_support::convert_line(&PROVIDER, line)
    }

    fn sniffs(line: &str) -> bool {
        test_support::sniffs(&PROVIDER, line)
    }

    #[test]
    fn thread_ids_and_error_strings_are_amp() {
        assert!(sniffs(
            r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"T-1","tools":[],"mcp_servers":[]}"#
        ));
        assert!(sniffs(
            r#"{"type":"result","subtype":"error_during_execution","is_error":true,"error":"boom"}"#
        ));
        assert!(!sniffs(
            r#"{"type":"assistant","message":{"content":[]},"session_id":"e4891bcf-aa3b-4d25-9087-ea61fb347cb9"}"#
        ));
        assert!(!sniffs(r#"{"type":"thread.started","session_id":"T-1"}"#));
    }

    #[test]
    fn bash_cmd_is_the_title_and_json_results_are_objects() {
        let ev = conv(
            r#"{"type":"assistant","message":{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"cmd":"ls"}}]},"parent_tool_use_id":null,"session_id":"T-1"}"#,
        );
        assert_eq!(ev[0]["kind"], "execute");
        assert_eq!(ev[0]["title"], "ls");
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"{\"output\":\"a\\n\",\"exitCode\":0}","is_error":false}]},"parent_tool_use_id":null,"session_id":"T-1"}"#,
        );
        assert_eq!(ev[0]["output"]["exitCode"], 0);
        assert_eq!(ev[0]["output"]["output"], "a\n");
    }

    #[test]
    fn edit_and_glob_inputs() {
        let ev = conv(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"e","name":"edit_file","input":{"path":"/w/a.py","old_str":"a","new_str":"b"}},{"type":"tool_use","id":"g","name":"glob","input":{"filePattern":"**/*.rs"}}]},"session_id":"T-1"}"#,
        );
        assert_eq!(ev[0]["kind"], "edit");
        assert_eq!(ev[0]["title"], "/w/a.py");
        assert_eq!(ev[0]["locations"][0], "/w/a.py");
        assert_eq!(ev[1]["kind"], "search");
        assert_eq!(ev[1]["title"], "**/*.rs");
    }

    #[test]
    fn result_error_and_denials() {
        let ev = conv(
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"duration_ms":5,"num_turns":9,"error":"too many turns","permission_denials":["Bash"],"session_id":"T-1"}"#,
        );
        assert_eq!(ev[0]["errors"][0], "too many turns");
        assert_eq!(ev[0]["permissionDenials"][0]["tool_name"], "Bash");
    }
}
