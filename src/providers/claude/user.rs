//! `user` lines: tool results (with the subagents and file changes they end) and a person's
//! prompts.

use super::assistant::{http_status_of, is_api_error};
use super::{interrupted, Block, Dialect, Subagent};
use crate::event::*;
use crate::members::Line;
use crate::providers::{Cx, Unmapped};
use crate::wire::{count, is_null, is_object, raw_str, Count, OptStr};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Deserialize)]
struct User<'a> {
    #[serde(borrow)]
    message: UserMessage<'a>,
    parent_tool_use_id: OptStr<'a>,
    /// `toolUseResult` in Claude Code's own session files.
    #[serde(borrow, alias = "toolUseResult")]
    tool_use_result: Option<&'a RawValue>,
    #[serde(rename = "isSynthetic")]
    is_synthetic: Option<bool>,
    #[serde(rename = "isReplay")]
    is_replay: Option<bool>,
}

#[derive(Deserialize)]
struct UserMessage<'a> {
    #[serde(borrow)]
    content: &'a RawValue,
}

/// What Claude Code reports about a finished tool call (`tool_use_result`), the parts used here.
#[derive(Deserialize, Default)]
struct ToolUseResult<'a> {
    #[serde(rename = "agentId")]
    agent_id: OptStr<'a>,
    status: OptStr<'a>,
    #[serde(rename = "totalDurationMs")]
    total_duration_ms: Option<Count>,
    #[serde(rename = "totalTokens")]
    total_tokens: Option<Count>,
    #[serde(rename = "totalToolUseCount")]
    total_tool_use_count: Option<Count>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(rename = "filePath")]
    file_path: OptStr<'a>,
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    #[serde(rename = "structuredPatch", borrow)]
    structured_patch: Option<Vec<Hunk<'a>>>,
    /// NotebookEdit's result: the notebook, and its whole text before and after.
    #[serde(borrow)]
    notebook_path: OptStr<'a>,
    #[serde(borrow)]
    original_file: OptStr<'a>,
    #[serde(borrow)]
    updated_file: OptStr<'a>,
}

#[derive(Deserialize)]
struct Hunk<'a> {
    #[serde(rename = "oldStart")]
    old_start: Count,
    #[serde(rename = "oldLines")]
    old_lines: Count,
    #[serde(rename = "newStart")]
    new_start: Count,
    #[serde(rename = "newLines")]
    new_lines: Count,
    #[serde(borrow)]
    lines: Vec<Str<'a>>,
}

/// A unified diff from Claude Code's structured patch.
fn unified_diff(path: &str, hunks: &[Hunk], created: bool) -> String {
    let mut d = String::new();
    let old = if created {
        "/dev/null".to_string()
    } else {
        format!("a{}", slash(path))
    };
    d.push_str(&format!("--- {old}\n+++ b{}\n", slash(path)));
    for h in hunks {
        d.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            h.old_start.0, h.old_lines.0, h.new_start.0, h.new_lines.0
        ));
        for l in &h.lines {
            d.push_str(l);
            d.push('\n');
        }
    }
    d
}

/// A unified diff that creates a file with `content`.
pub(crate) fn creation_diff(path: &str, content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let mut d = format!("--- /dev/null\n+++ b{}\n", slash(path));
    if !lines.is_empty() {
        d.push_str(&format!("@@ -0,0 +1,{} @@\n", lines.len()));
        for l in lines {
            d.push('+');
            d.push_str(l);
            d.push('\n');
        }
    }
    d
}

fn slash(path: &str) -> Cow<'_, str> {
    if path.starts_with('/') {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(format!("/{path}"))
    }
}

/// A JSON object written as a string (`"{\"output\":\"ok\"}"`), decoded.
fn json_text(raw: &RawValue) -> Option<Json<'static>> {
    let text = raw_str(raw)?;
    let v: Value = serde_json::from_str(text.trim()).ok()?;
    v.is_object().then_some(Json::Value(v))
}

/// The text of a tool_result's or an Agent result's content: a string, or its text blocks.
/// A subagent's answer as its call's result gives it, without the CLI's footer (`agentId: …
/// (use SendMessage …)\n<usage>subagent_tokens: N\ntool_uses: N\nduration_ms: N</usage>`),
/// and the footer's figures: tokens, tool uses, duration.
/// A subagent's answer and its footer's figures (tokens, tool uses, duration) and agent id,
/// from the text of a result without `tool_use_result` (a subagent's own subagent).
fn subagent_answer(raw: &RawValue) -> (Option<String>, [Option<u64>; 3], Option<String>) {
    let Some(text) = content_text(raw) else {
        return (None, [None; 3], None);
    };
    let Some(at) = text
        .find("agentId: ")
        .filter(|&i| i == 0 || text[..i].ends_with('\n'))
    else {
        return (Some(text), [None; 3], None);
    };
    let footer = &text[at..];
    let agent = footer["agentId: ".len()..]
        .split(|c: char| c.is_whitespace() || c == '(' || c == ',')
        .next()
        .filter(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        .map(str::to_owned);
    let figure = |name: &str| {
        let rest = &footer[footer.find(name)? + name.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let figures = [
        figure("subagent_tokens: "),
        figure("tool_uses: "),
        figure("duration_ms: "),
    ];
    let answer = text[..at].trim_end_matches('\n');
    (
        (!answer.is_empty()).then(|| answer.to_owned()),
        figures,
        agent,
    )
}

pub(super) fn content_text(raw: &RawValue) -> Option<String> {
    if let Some(s) = raw_str(raw) {
        return Some(s.into_owned());
    }
    #[derive(Deserialize)]
    struct T<'a> {
        #[serde(rename = "type", borrow)]
        ty: OptStr<'a>,
        text: OptStr<'a>,
    }
    let blocks: Vec<T> = serde_json::from_str(raw.get()).ok()?;
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.ty.as_deref() == Some("text"))
        .filter_map(|b| b.text.as_deref())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The `user` texts Claude Code writes itself when an interrupt stops a turn.
pub(super) const INTERRUPT_TEXTS: &[&str] = &[
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use]",
];

/// How the other `user` texts Claude Code writes itself begin: a local command's output
/// (`/compact`, `!ls`) and the caveat it puts before such output.
const CLI_TEXT_STARTS: &[&str] = &[
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-stdout>",
    "<bash-stderr>",
    "Caveat: The messages below were generated by the user while running local commands",
];

/// Whether a `user` message's text is one Claude Code wrote itself (an interrupt notice, a
/// local command's output, its caveat), in the stream and in its session files alike: a
/// synthetic `user_input`, never a person's prompt.
pub(super) fn cli_text(text: &str) -> bool {
    INTERRUPT_TEXTS.contains(&text) || CLI_TEXT_STARTS.iter().any(|s| text.starts_with(s))
}

/// The result Claude Code writes when the host's permission callback threw "Tool use
/// aborted": claude-agent-acp throws it when the client answers `session/request_permission`
/// with `cancelled` or the prompt is cancelled while it asks. The call never ran, stopped by
/// a cancel, not denied (a refusal reads "User refused permission to run tool").
fn permission_aborted(meta: Option<&RawValue>) -> bool {
    meta.is_some_and(|m| {
        m.get() == r#""Error: Tool permission request failed: Error: Tool use aborted""#
    })
}

pub(super) fn user<'a>(
    line: Line<'a, '_>,
    cx: &mut Cx<'a>,
    d: &Dialect,
    file_parent: Option<Str<'a>>,
) -> Result<(), Unmapped> {
    let w: User = line.read()?;
    let parent = w.parent_tool_use_id.0.or(file_parent);
    let synthetic = w.is_synthetic.unwrap_or(false);
    let replay = w.is_replay.unwrap_or(false);
    let push_input = |cx: &mut Cx<'a>, text: Str<'a>, images: Option<Vec<ImageData<'a>>>| {
        // The CLI writes these itself (when an interrupt stops a turn, for a local
        // command): the person typed nothing. The line has no `isSynthetic`; the text is the
        // CLI's own.
        let by_cli = !synthetic && images.is_none() && cli_text(&text);
        let notice = by_cli && INTERRUPT_TEXTS.contains(&&*text);
        let ext = cx.push(UserInput {
            text,
            images,
            is_synthetic: synthetic || by_cli,
            parent_call_id: parent.clone(),
        });
        if replay {
            ext.put("isReplay", true);
        }
        if notice {
            ext.put("claude.interruptNotice", true);
        }
    };
    if let Some(text) = raw_str(w.message.content) {
        push_input(cx, text, None);
        return Ok(());
    }
    let blocks: Vec<Block> = serde_json::from_str(w.message.content.get())?;
    let mut texts: Vec<Str<'a>> = Vec::new();
    let mut images: Vec<ImageData<'a>> = Vec::new();
    let tool_results = blocks.iter().filter(|b| b.ty == "tool_result").count();
    for b in blocks {
        match &*b.ty {
            "tool_result" => {
                let call_id = b.tool_use_id.0.unwrap_or_default();
                let is_error = b.is_error.unwrap_or(false);
                // The line's tool_use_result describes its (only) tool_result.
                let meta = w.tool_use_result.filter(|_| tool_results == 1);
                let output = match (meta, b.content) {
                    (Some(m), _) if !is_null(m) => Some(Json::Raw(m)),
                    (_, Some(c)) if d.json_results => Some(json_text(c).unwrap_or(Json::Raw(c))),
                    (_, Some(c)) => Some(Json::Raw(c)),
                    _ => None,
                };
                // The result the model was given, as blocks: when `output` is the line's
                // `tool_use_result`, a text result is one text block (as the API reads it).
                let with_meta = meta.is_some_and(|m| !is_null(m));
                let content = b.content.and_then(|c| {
                    if c.get().starts_with('[') {
                        Some(Json::Raw(c))
                    } else if with_meta && c.get().starts_with('"') {
                        let text: Str<'a> = serde_json::from_str(c.get()).ok()?;
                        Some(Json::Array(vec![Json::Object(Pairs(vec![
                            (Cow::Borrowed("type"), Json::Str(Cow::Borrowed("text"))),
                            (Cow::Borrowed("text"), Json::Str(text)),
                        ]))]))
                    } else {
                        None
                    }
                });
                let call = cx.memory().claude.calls.remove(&call_id);
                if let Some(k) = call
                    .as_ref()
                    .and_then(|c| c.subagent.as_ref())
                    .and_then(|s| s.prompt_key.as_deref())
                {
                    cx.memory().claude.prompts.remove(k);
                }
                // An error result after an interrupt was asked for: the interrupt stopped
                // the call ("User rejected tool use"); or the permission request was
                // cancelled before it was answered.
                let stopped = is_error && (interrupted(cx) || permission_aborted(meta));
                let info: ToolUseResult = match meta {
                    Some(m) if is_object(m) => serde_json::from_str(m.get()).unwrap_or_default(),
                    _ => ToolUseResult::default(),
                };
                // The subagent the call ran, when its result ends it, and the status the
                // wire gave it (the result's, else the task's).
                let mut ended = None;
                let mut wire_status = None;
                let sub = call.as_ref().and_then(|c| c.subagent.clone());
                if info.agent_id.is_some() || sub.is_some() {
                    let sub = sub.unwrap_or_default();
                    wire_status = info
                        .status
                        .0
                        .clone()
                        .or_else(|| sub.status.clone().map(Cow::Owned));
                    // The wire's status, else the result's own verdict.
                    let status = wire_status.clone().unwrap_or(Cow::Borrowed(if stopped {
                        "cancelled"
                    } else if is_error {
                        "failed"
                    } else {
                        "completed"
                    }));
                    let agent_id = info
                        .agent_id
                        .0
                        .clone()
                        .or(sub.agent_id.clone().map(Cow::Owned));
                    // The call answered as its subagent started, and the task has not ended:
                    // its end is the task's (Qwen's agent tool; qwen.rs maps it).
                    let at_launch = info.status.is_none()
                        && info.agent_id.is_none()
                        && !is_error
                        && sub.agent_id.is_some()
                        && sub.status.is_none();
                    if at_launch {
                        // Nothing to end yet.
                    } else if status.starts_with("async") {
                        // A background subagent: launched, it ends with its notification.
                        if let Some(mut c) = call.clone() {
                            let s = c.subagent.get_or_insert_with(Subagent::default);
                            s.launched = true;
                            s.agent_id = agent_id.as_deref().map(str::to_owned);
                            let line = cx.line;
                            cx.memory().claude.calls.insert(&call_id, c, line);
                        }
                    } else {
                        // Without `tool_use_result` (a subagent's own subagent), the answer
                        // and its figures are in the result's text.
                        let (answer, [tokens, uses, duration], text_agent) =
                            b.content.map_or((None, [None; 3], None), subagent_answer);
                        ended = Some(SubagentComplete {
                            call_id: call_id.clone(),
                            agent_id: agent_id.or(text_agent.map(Cow::Owned)),
                            status: Some(status),
                            summary: info
                                .content
                                .and_then(content_text)
                                .or(answer)
                                .map(Cow::Owned),
                            duration_ms: count(info.total_duration_ms).or(duration),
                            total_tokens: count(info.total_tokens).or(tokens),
                            tool_use_count: count(info.total_tool_use_count).or(uses),
                            parent_call_id: parent.clone(),
                        });
                    }
                }
                // A subagent whose answer is the CLI's message for a failed API call
                // (`API Error: 529 …`) ended on that error: the error is the subagent's, and
                // the subagent failed, although the CLI says `completed`. The call itself
                // returned that answer as its result, as the wire says.
                let api_error = ended
                    .as_ref()
                    .and_then(|e| e.summary.as_deref())
                    .filter(|s| is_api_error(s))
                    .map(str::to_owned);
                let mut overridden = None;
                if let (Some(end), Some(message)) = (ended.as_mut(), api_error) {
                    if end.status.as_deref() == Some("completed") {
                        end.status = Some(Cow::Borrowed("failed"));
                        overridden = wire_status;
                    }
                    cx.push(ErrorEvent {
                        http_status: http_status_of(&message),
                        message: Cow::Owned(message),
                        severity: Severity::Error,
                        code: None,
                        will_retry: Some(false),
                        attempt: None,
                        max_retries: None,
                        retry_delay_ms: None,
                        request_id: None,
                        parent_call_id: Some(call_id.clone()),
                    });
                }
                cx.push(ToolCompletion {
                    call_id: call_id.clone(),
                    status: if stopped {
                        ToolCallStatus::Cancelled
                    } else if is_error {
                        ToolCallStatus::Failed
                    } else {
                        ToolCallStatus::Completed
                    },
                    duration_ms: None,
                    output,
                    is_error,
                    content,
                    locations: None,
                    parent_call_id: parent.clone(),
                });
                if let Some(end) = ended {
                    let ext = cx.push(end);
                    ext.put_opt("claude.status", overridden);
                }
                let mut changed = false;
                if !is_error {
                    if let (Some(path), Some(hunks)) = (&info.file_path.0, &info.structured_patch) {
                        changed = true;
                        let created = info.ty.as_deref() == Some("create");
                        let diff = if !hunks.is_empty() {
                            Some(unified_diff(path, hunks, created))
                        } else if created {
                            info.content
                                .and_then(raw_str)
                                .map(|c| creation_diff(path, &c))
                        } else {
                            None
                        };
                        cx.push(FileChange {
                            path: path.clone(),
                            change_kind: if created {
                                ChangeKind::Add
                            } else {
                                ChangeKind::Update
                            },
                            move_path: None,
                            diff: diff.map(Cow::Owned),
                            cumulative: false,
                            call_id: Some(call_id.clone()),
                            parent_call_id: parent.clone(),
                        });
                    } else if let (Some(path), Some(after)) =
                        (&info.notebook_path.0, &info.updated_file.0)
                    {
                        // A notebook edit states the whole file before and after.
                        changed = true;
                        let before = info.original_file.as_deref().filter(|b| !b.is_empty());
                        cx.push(FileChange {
                            path: path.clone(),
                            change_kind: if before.is_none() {
                                ChangeKind::Add
                            } else {
                                ChangeKind::Update
                            },
                            move_path: None,
                            diff: Some(Cow::Owned(crate::diff::unified(path, before, after))),
                            cumulative: false,
                            call_id: Some(call_id.clone()),
                            parent_call_id: parent.clone(),
                        });
                    }
                }
                // A result that carries no change (a subagent's): the change the call's
                // input asked for.
                if let (false, false, Some(edit)) = (is_error, changed, call.and_then(|c| c.edit)) {
                    let said = b.content.and_then(content_text);
                    let created = edit.content.is_some()
                        && said
                            .as_deref()
                            .is_some_and(|t| t.starts_with("File created"));
                    let diff = match (&edit.content, created) {
                        (Some(c), true) => Some(Cow::Owned(creation_diff(&edit.path, c))),
                        _ => None,
                    };
                    let ext = cx.push(FileChange {
                        path: Cow::Owned(edit.path),
                        change_kind: if created {
                            ChangeKind::Add
                        } else {
                            ChangeKind::Update
                        },
                        move_path: None,
                        diff,
                        cumulative: false,
                        call_id: Some(call_id),
                        parent_call_id: parent.clone(),
                    });
                    ext.put("claude.fromInput", true);
                }
            }
            "text" => texts.extend(b.text.0),
            "image" => {
                if let Some(src) = b.source {
                    images.push(ImageData {
                        media_type: src.media_type.0.unwrap_or_default(),
                        data: src.data.0.or(src.url.0).unwrap_or_default(),
                    });
                }
            }
            _ => {}
        }
    }
    if !texts.is_empty() || !images.is_empty() {
        let text = if texts.len() == 1 {
            texts.pop().unwrap_or_default()
        } else {
            Cow::Owned(texts.join("\n"))
        };
        push_input(cx, text, (!images.is_empty()).then_some(images));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{conv, stream, INIT};
    use super::*;
    use crate::test_support::{kinds, of_kind};

    #[test]
    fn a_subagent_answer_loses_the_footer_and_keeps_its_figures() {
        let raw: Box<RawValue> = serde_json::from_str(
            r#"[{"type":"text","text":"There are 2 files."},{"type":"text","text":"agentId: a1 (use SendMessage with to: 'a1' to continue this agent)\n<usage>subagent_tokens: 11790\ntool_uses: 1\nduration_ms: 134</usage>"}]"#,
        )
        .unwrap();
        let (answer, figures, agent) = subagent_answer(&raw);
        assert_eq!(answer.as_deref(), Some("There are 2 files."));
        assert_eq!(figures, [Some(11790), Some(1), Some(134)]);
        assert_eq!(agent.as_deref(), Some("a1"));
        let raw: Box<RawValue> = serde_json::from_str(r#""no footer""#).unwrap();
        assert_eq!(
            subagent_answer(&raw),
            (Some("no footer".into()), [None; 3], None)
        );
    }

    /// claude/subagent-api-529.jsonl (Claude Code 2.1.197): the mock answered each of the
    /// subagent's requests with HTTP 529, and the Agent call's result (line 8) is the CLI's
    /// API error message, which the CLI calls `completed`.
    const SUBAGENT_529: [&str; 5] = [
        r#"{"type":"system","subtype":"init","cwd":"/home/dev-r2/work","session_id":"cf90ca2c-71f3-4974-a0cb-7487bd4a1025","model":"claude-opus-4-8[1m]","permissionMode":"default","claude_code_version":"2.1.197","uuid":"8b3eed93-2d8b-4e05-9c8e-c39529bdded1"}"#,
        r#"{"type":"assistant","message":{"id":"msg_01pJ2BZdAqDsgOA0kFRBLRA9","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_01pfT2IfPppNAit2dhy4Z4st","name":"Agent","input":{"description":"Summarise README","prompt":"Read README.md and summarise it in one line.","subagent_type":"general-purpose"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":19063,"cache_read_input_tokens":0,"output_tokens":1,"cache_creation":{"ephemeral_5m_input_tokens":19063,"ephemeral_1h_input_tokens":0}},"context_management":null},"parent_tool_use_id":null,"session_id":"cf90ca2c-71f3-4974-a0cb-7487bd4a1025","uuid":"44dea772-b5b7-4712-aeca-8bc0a4dbbd4c","request_id":"req_011yJjWWKbyXMIToN7F1Fk57iPq"}"#,
        r#"{"type":"system","subtype":"task_started","task_id":"a7d3ed785f5951bd7","tool_use_id":"toolu_01pfT2IfPppNAit2dhy4Z4st","description":"Summarise README","subagent_type":"general-purpose","task_type":"local_agent","prompt":"Read README.md and summarise it in one line.","uuid":"5d63646f-7426-44d2-887d-8f6e9a56b93a","session_id":"cf90ca2c-71f3-4974-a0cb-7487bd4a1025"}"#,
        r#"{"type":"system","subtype":"task_notification","task_id":"a7d3ed785f5951bd7","tool_use_id":"toolu_01pfT2IfPppNAit2dhy4Z4st","status":"completed","output_file":"","summary":"Summarise README","usage":{"total_tokens":0,"tool_uses":0,"duration_ms":1575},"uuid":"dc6075be-ee89-4439-ae01-a6d93a9980ea","session_id":"cf90ca2c-71f3-4974-a0cb-7487bd4a1025"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01pfT2IfPppNAit2dhy4Z4st","type":"tool_result","content":[{"type":"text","text":"API Error: 529 Overloaded (scripted). This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:33439)."},{"type":"text","text":"agentId: a7d3ed785f5951bd7 (use SendMessage with to: 'a7d3ed785f5951bd7', summary: '<5-10 word recap>' to continue this agent)\n<usage>subagent_tokens: 0\ntool_uses: 0\nduration_ms: 1575</usage>"}]}]},"parent_tool_use_id":null,"session_id":"cf90ca2c-71f3-4974-a0cb-7487bd4a1025","uuid":"97203fb8-1ea5-45d1-ab7b-5a96c1b3b3b5","timestamp":"2026-11-27T01:36:04.368Z","tool_use_result":{"status":"completed","prompt":"Read README.md and summarise it in one line.","agentId":"a7d3ed785f5951bd7","agentType":"general-purpose","content":[{"type":"text","text":"API Error: 529 Overloaded (scripted). This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:33439)."}],"resolvedModel":"claude-opus-4-8[1m]","totalDurationMs":1575,"totalTokens":0,"totalToolUseCount":0,"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":null,"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":null,"iterations":null,"speed":null}}}"#,
    ];

    #[test]
    fn a_subagent_ended_by_an_api_error_failed_and_states_the_error() {
        let ev = stream(&SUBAGENT_529);
        let at_result = &ev[ev.len() - 3..];
        assert_eq!(
            kinds(at_result),
            ["error", "tool_completion", "subagent_complete"]
        );
        let errors = of_kind(&ev, "error");
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0]["httpStatus"], 529);
        assert_eq!(errors[0]["severity"], "error");
        assert_eq!(errors[0]["parentCallId"], "toolu_01pfT2IfPppNAit2dhy4Z4st");
        assert!(errors[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("API Error: 529 Overloaded"));
        // The call returned the error as its result, not as an error result: it completed.
        let done = of_kind(&ev, "tool_completion")[0];
        assert_eq!(done["status"], "completed");
        assert!(done.get("isError").is_none());
        // The subagent failed; the CLI's word is kept.
        let sub = of_kind(&ev, "subagent_complete")[0];
        assert_eq!(sub["status"], "failed");
        assert_eq!(sub["extensions"]["claude.status"], "completed");
        assert_eq!(sub["agentId"], "a7d3ed785f5951bd7");
        assert_eq!(sub["totalTokens"], 0);

        // The same result with an answer: completed, and no error.
        let answered = SUBAGENT_529[4].replace(
            "API Error: 529 Overloaded (scripted)",
            "README.md: a demo project (API Error: 529 is not its text)",
        );
        let mut lines = SUBAGENT_529;
        lines[4] = &answered;
        let ev = stream(&lines);
        assert!(of_kind(&ev, "error").is_empty());
        let sub = of_kind(&ev, "subagent_complete")[0];
        assert_eq!(sub["status"], "completed");
        assert!(sub.get("extensions").is_none());
    }

    #[test]
    fn the_cli_s_interrupt_lines_are_synthetic_user_input() {
        // claude-sdk/interrupt.jsonl line 10: the CLI's text after an interrupt.
        for text in INTERRUPT_TEXTS {
            let ev = conv(&format!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}}]}},"parent_tool_use_id":null,"session_id":"s"}}"#
            ));
            assert_eq!(ev[0]["event"], "user_input");
            assert_eq!(ev[0]["isSynthetic"], true);
            assert_eq!(ev[0]["extensions"]["claude.interruptNotice"], true);
            let ev = conv(&format!(
                r#"{{"type":"user","message":{{"role":"user","content":"{text}"}}}}"#
            ));
            assert_eq!(ev[0]["isSynthetic"], true);
        }
        // A person who types something else is a person.
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":"[Request interrupted by user] no, go on"}}"#,
        );
        assert!(ev[0].get("isSynthetic").is_none());
        // claude-sdk/compact.jsonl line 21: a local command's output, the CLI's too.
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":"<local-command-stdout>Compacted </local-command-stdout>"},"isReplay":true}"#,
        );
        assert_eq!(ev[0]["isSynthetic"], true);
        assert!(ev[0]["extensions"].get("claude.interruptNotice").is_none());
    }

    #[test]
    fn user_string_content_is_user_input() {
        let ev =
            conv(r#"{"type":"user","message":{"role":"user","content":"hi"},"isReplay":true}"#);
        assert_eq!(ev[0]["event"], "user_input");
        assert_eq!(ev[0]["text"], "hi");
        assert_eq!(ev[0]["extensions"]["isReplay"], true);
    }

    #[test]
    fn a_prompt_with_an_image_is_user_input_with_its_image() {
        // The SDK's input with an image block, as the stream-json format documents it.
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}}"#,
        );
        assert_eq!(ev.len(), 1, "{ev:?}");
        assert_eq!(ev[0]["event"], "user_input");
        assert_eq!(ev[0]["text"], "hi");
        assert_eq!(ev[0]["images"][0]["mediaType"], "image/png");
        assert_eq!(ev[0]["images"][0]["data"], "iVBORw0KGgo=");
        assert!(ev[0].get("isSynthetic").is_none());
    }

    #[test]
    fn tool_result_error_string() {
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"<tool_use_error>File does not exist.</tool_use_error>","is_error":true,"tool_use_id":"toolu_123"}]},"tool_use_result":"Error: File does not exist."}"#,
        );
        assert_eq!(ev[0]["event"], "tool_completion");
        assert_eq!(ev[0]["status"], "failed");
        assert_eq!(ev[0]["isError"], true);
        assert_eq!(ev[0]["output"], "Error: File does not exist.");
    }

    #[test]
    fn a_cancelled_permission_request_cancels_the_call_and_a_refusal_fails_it() {
        // session-files/acp-claude/bash-cancelled line 8: the client answered claude-agent-acp's
        // permission request `cancelled`, its callback threw "Tool use aborted"; bash-denied
        // line 8: the client chose `reject`.
        let line = |text: &str| {
            conv(&format!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"toolu_1","type":"tool_result","content":"{text}","is_error":true}}]}},"tool_use_result":"Error: {text}"}}"#
            ))
        };
        let ev = line("Tool permission request failed: Error: Tool use aborted");
        assert_eq!(ev[0]["event"], "tool_completion");
        assert_eq!(ev[0]["status"], "cancelled");
        assert_eq!(ev[0]["isError"], true);
        let ev = line("User refused permission to run tool");
        assert_eq!(ev[0]["status"], "failed");
    }

    #[test]
    fn the_text_the_model_was_given_stays_beside_the_tool_use_result() {
        // Claude Code 2.1.197 (a recording): a Write's result.
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"File created successfully at: /w/c.ini"}]},"tool_use_result":{"type":"create","filePath":"/w/c.ini","content":"x\n","structuredPatch":[]}}"#,
        );
        assert_eq!(ev[0]["output"]["filePath"], "/w/c.ini");
        assert_eq!(
            ev[0]["content"],
            serde_json::json!([{"type": "text", "text": "File created successfully at: /w/c.ini"}])
        );
        // Without `tool_use_result` the text is the output, once.
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"ok"}]}}"#,
        );
        assert_eq!(ev[0]["output"], "ok");
        assert!(ev[0].get("content").is_none());
    }

    #[test]
    fn a_notebook_edit_changes_its_notebook() {
        // Claude Code 2.1.197 (a recording): NotebookEdit's result states the whole file.
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"Updated cell c1"}]},"tool_use_result":{"new_source":"b","cell_id":"c1","notebook_path":"/w/nb.ipynb","original_file":"{\n \"source\": \"a\"\n}\n","updated_file":"{\n \"source\": \"b\"\n}\n"}}"#,
        );
        let fc = &ev[1];
        assert_eq!(fc["event"], "file_change");
        assert_eq!(fc["path"], "/w/nb.ipynb");
        assert_eq!(fc["changeKind"], "update");
        assert_eq!(
            fc["diff"],
            "--- a/w/nb.ipynb\n+++ b/w/nb.ipynb\n@@ -1,3 +1,3 @@\n {\n- \"source\": \"a\"\n+ \"source\": \"b\"\n }\n"
        );
        assert!(fc.get("extensions").is_none());
    }

    #[test]
    fn edit_result_gives_file_change_with_diff() {
        let ev = conv(
            r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"ok"}]},"tool_use_result":{"filePath":"/p/f.py","oldString":"a","newString":"b","structuredPatch":[{"oldStart":3,"oldLines":1,"newStart":3,"newLines":1,"lines":["-a","+b"]}]}}"#,
        );
        assert_eq!(ev[1]["event"], "file_change");
        assert_eq!(ev[1]["changeKind"], "update");
        assert_eq!(
            ev[1]["diff"],
            "--- a/p/f.py\n+++ b/p/f.py\n@@ -3,1 +3,1 @@\n-a\n+b\n"
        );
    }

    #[test]
    fn created_file_diff_from_content() {
        let ev = conv(
            r##"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"ok"}]},"tool_use_result":{"type":"create","filePath":"/w/n.md","content":"# N\nx\n","structuredPatch":[]}}"##,
        );
        assert_eq!(ev[1]["changeKind"], "add");
        assert_eq!(
            ev[1]["diff"],
            "--- /dev/null\n+++ b/w/n.md\n@@ -0,0 +1,2 @@\n+# N\n+x\n"
        );
    }

    #[test]
    fn a_subagent_write_without_result_metadata_changes_its_file() {
        let ev = stream(&[
            INIT,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a1","name":"Agent","input":{"description":"d","prompt":"p"}}]},"session_id":"s1"}"#,
            r##"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"w1","name":"Write","input":{"file_path":"/w/n.md","content":"# N\n"}}]},"parent_tool_use_id":"a1","session_id":"s1"}"##,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"w1","content":"File created successfully at: /w/n.md"}]},"parent_tool_use_id":"a1","session_id":"s1"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"e1","name":"Edit","input":{"file_path":"/w/m.md","old_string":"a","new_string":"b"}}]},"parent_tool_use_id":"a1","session_id":"s1"}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"e1","is_error":true,"content":"File has not been read yet."}]},"parent_tool_use_id":"a1","session_id":"s1"}"#,
        ]);
        let changes = of_kind(&ev, "file_change");
        assert_eq!(changes.len(), 1, "a failed edit changes nothing");
        assert_eq!(changes[0]["path"], "/w/n.md");
        assert_eq!(changes[0]["changeKind"], "add");
        assert_eq!(
            changes[0]["diff"],
            "--- /dev/null\n+++ b/w/n.md\n@@ -0,0 +1,1 @@\n+# N\n"
        );
        assert_eq!(changes[0]["parentCallId"], "a1");
    }
}
