//! Claude Code's own session files (`~/.claude/projects/<project>/<session>.jsonl`): what the
//! converter infers from their lines (the session's announcement, its turns, the call a
//! subagent's file belongs to), and what `insights usage` and `insights sessions` read of a line.

use super::user::{cli_text, content_text, INTERRUPT_TEXTS};
use super::{session_key, turn_mut, Agent, FileTurn, WireUsage};
use crate::event::*;
use crate::providers::Cx;
use crate::wire::OptStr;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// What a session file's line says beyond the wire's members.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct FileMeta<'a> {
    is_sidechain: Option<bool>,
    is_meta: Option<bool>,
    is_compact_summary: Option<bool>,
    is_api_error_message: Option<bool>,
    agent_id: OptStr<'a>,
    cwd: OptStr<'a>,
    version: OptStr<'a>,
    git_branch: OptStr<'a>,
    #[serde(borrow, default)]
    message: Option<FileMessage<'a>>,
    #[serde(borrow, default)]
    tool_use_result: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct FileMessage<'a> {
    id: OptStr<'a>,
    stop_reason: OptStr<'a>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

impl FileMeta<'_> {
    fn sidechain(&self) -> bool {
        self.is_sidechain.unwrap_or(false)
    }

    /// The text of a user line that is a message, not a tool's result and not one the CLI
    /// adds (`isMeta`, a compaction summary): empty for images alone.
    fn said(&self) -> Option<String> {
        let c = self.message.as_ref().and_then(|m| m.content)?;
        let t = c.get();
        let message = t.starts_with('"') || (t.starts_with('[') && !t.contains(r#""tool_result""#));
        if !message || self.is_meta.unwrap_or(false) || self.is_compact_summary.unwrap_or(false) {
            return None;
        }
        Some(content_text(c).unwrap_or_default())
    }

    /// A prompt a person wrote: a user line of text, not a tool's result, not one the CLI
    /// adds or writes itself (`isMeta`, a compaction summary, an interrupt notice, a local
    /// command's output).
    fn prompt(&self) -> bool {
        self.said().is_some_and(|t| !cli_text(&t))
    }

    /// A call's result that says the person stopped it (`toolUseResult` "User rejected tool
    /// use", written when an interrupt stops a running call; a denied permission says "Error:
    /// The user denied this tool use.").
    fn rejected_by_user(&self) -> bool {
        self.tool_use_result
            .is_some_and(|r| r.get() == r#""User rejected tool use""#)
    }

    /// The CLI's notice that an interrupt stopped the turn.
    fn interrupt(&self) -> bool {
        self.said()
            .is_some_and(|t| INTERRUPT_TEXTS.contains(&t.as_str()))
    }

    /// A user line the CLI added itself (`isMeta`: a skill's or command's expansion, a
    /// caveat; a compaction summary), which the stream would not show as a person's.
    fn added_by_cli(&self) -> bool {
        self.is_meta.unwrap_or(false) || self.is_compact_summary.unwrap_or(false)
    }
}

/// Stop reasons after which the model waits for the person.
const TURN_ENDS: &[&str] = &["end_turn", "stop_sequence", "max_tokens", "refusal"];

/// Before a session file's line is mapped: the session's announcement the first time the
/// stream meets it, the end of a turn whose last message is complete, a new turn at a
/// person's prompt. Returns the call a subagent's line belongs to, where the stream has
/// seen the result that names the subagent.
pub(super) fn file_before<'a>(f: &FileMeta<'a>, ty: &str, cx: &mut Cx<'a>) -> Option<Str<'a>> {
    let key = session_key(cx);
    let line = cx.line;
    if !cx.memory().claude.files.contains(&key) {
        cx.memory()
            .claude
            .files
            .insert(&key, FileTurn::default(), line);
        let ext = cx.push(SessionInit {
            cwd: f.cwd.0.clone(),
            version: f.version.0.clone(),
            ..SessionInit::default()
        });
        ext.put_opt("claude.gitBranch", f.git_branch.0.clone());
        ext.put("insights.inferred", true);
    }
    if f.rejected_by_user() {
        // The file's trace of an interrupt during a call (the stream has the `interrupt`
        // request): the call was stopped, as `interrupted` reads it.
        turn_mut(cx).interrupted = true;
    }
    if f.sidechain() {
        let id = f.agent_id.as_deref()?;
        let agent = agent_key(&key, id);
        if let Some(a) = cx.memory().claude.agents.get(&agent) {
            return Some(Cow::Owned(a.call.clone()));
        }
        // Read in time order (a session file with its subagents' files), the subagent's
        // first line, its prompt, comes while its call runs and before the result that
        // names it: the call is the one that gave this prompt.
        let said = if ty == "user" { f.said() } else { None }?;
        let call = cx
            .memory()
            .claude
            .prompts
            .remove(&prompt_key(&key, &said))?;
        let a = Agent {
            call: call.clone(),
            api_error: None,
        };
        cx.memory().claude.agents.insert(&agent, a, line);
        return Some(Cow::Owned(call));
    }
    let turn = cx
        .memory()
        .claude
        .files
        .get(&key)
        .cloned()
        .unwrap_or_default();
    if let Some((msg, reason)) = &turn.ending {
        let same = ty == "assistant"
            && f.message.as_ref().and_then(|m| m.id.as_deref()) == Some(msg.as_str());
        if !same {
            let ext = cx.push(TurnComplete {
                subtype: Some(Cow::Borrowed("success")),
                stop_reason: Some(Cow::Owned(reason.clone())),
                ..TurnComplete::default()
            });
            ext.put("insights.inferred", true);
            set_file_turn(cx, &key, FileTurn::default());
        }
    }
    if ty == "user" && f.prompt() {
        if cx.memory().claude.files.get(&key).is_some_and(|t| t.open) {
            // The file says nothing of how the turn before ended.
            let ext = cx.push(TurnComplete::default());
            ext.put("insights.inferred", true);
        }
        let ext = cx.push(TurnStart { model: None });
        ext.put("insights.inferred", true);
        set_file_turn(
            cx,
            &key,
            FileTurn {
                open: true,
                ending: None,
            },
        );
    }
    None
}

/// After a session file's line is mapped: an interrupt or an API error ends the turn; a
/// message that stops for good ends it once its last block is written; a result that
/// names a subagent links the subagent's own file to the call.
pub(super) fn file_after<'a>(
    f: &FileMeta<'a>,
    ty: &str,
    text: &'a str,
    parent: Option<Str<'a>>,
    cx: &mut Cx<'a>,
) {
    if f.sidechain() && parent.is_none() {
        for (_, ext) in cx.events.iter_mut() {
            ext.put_opt("claude.agentId", f.agent_id.0.clone());
        }
    }
    if ty == "user" {
        link_subagents(text, cx);
        if f.added_by_cli() {
            for (b, _) in cx.events.iter_mut() {
                if let Body::UserInput(u) = b {
                    u.is_synthetic = true;
                }
            }
        }
    }
    if f.sidechain() {
        drop_reported_error(f, cx);
        return;
    }
    let key = session_key(cx);
    if ty == "user" && f.interrupt() {
        // As the wire's result says of an interrupted turn.
        let ext = cx.push(TurnComplete {
            is_error: true,
            subtype: Some(Cow::Borrowed("interrupted")),
            stop_reason: Some(Cow::Borrowed("interrupted")),
            ..TurnComplete::default()
        });
        ext.put("insights.inferred", true);
        set_file_turn(cx, &key, FileTurn::default());
    } else if ty == "assistant" && f.is_api_error_message.unwrap_or(false) {
        let ext = cx.push(TurnComplete {
            is_error: true,
            subtype: Some(Cow::Borrowed("error")),
            ..TurnComplete::default()
        });
        ext.put("insights.inferred", true);
        set_file_turn(cx, &key, FileTurn::default());
    } else if ty == "assistant" {
        let m = f.message.as_ref();
        let reason = m.and_then(|m| m.stop_reason.as_deref());
        if let (Some(id), Some(r)) = (m.and_then(|m| m.id.as_deref()), reason) {
            if TURN_ENDS.contains(&r) {
                set_file_turn(
                    cx,
                    &key,
                    FileTurn {
                        open: true,
                        ending: Some((id.to_owned(), r.to_owned())),
                    },
                );
            }
        }
    }
}

fn set_file_turn(cx: &mut Cx<'_>, key: &str, t: FileTurn) {
    let line = cx.line;
    if !t.open {
        // What the stream's turn state said (an interrupt) ends with the turn.
        cx.memory().claude.turns.remove(key);
    }
    let files = &mut cx.memory().claude.files;
    if files.get(key) != Some(&t) {
        files.insert(key, t, line);
    }
}

/// Remembers each subagent a tool result names (`toolUseResult.agentId`): the call that
/// started it, and the API error the result ended it on.
fn link_subagents<'a>(text: &'a str, cx: &mut Cx<'a>) {
    if !text.contains(r#""agentId""#) {
        return;
    }
    let line = cx.line;
    let error_of = |call: &str| {
        cx.events.iter().find_map(|(b, _)| match b {
            Body::Error(e) if e.parent_call_id.as_deref() == Some(call) => {
                Some(e.message.to_string())
            }
            _ => None,
        })
    };
    let links: Vec<(String, Agent)> = cx
        .events
        .iter()
        .filter_map(|(b, _)| match b {
            Body::SubagentComplete(s) => Some((
                s.agent_id.as_deref()?.to_owned(),
                Agent {
                    call: s.call_id.to_string(),
                    api_error: error_of(&s.call_id),
                },
            )),
            _ => None,
        })
        .collect();
    let session = session_key(cx);
    for (agent, a) in links {
        cx.memory()
            .claude
            .agents
            .insert(&agent_key(&session, &agent), a, line);
    }
}

/// A subagent's own file ends with the CLI's message for the API error that ended it; when
/// its call's result, read before, stated that error, the message's `error` is not made
/// twice.
fn drop_reported_error(f: &FileMeta<'_>, cx: &mut Cx<'_>) {
    if !f.is_api_error_message.unwrap_or(false) {
        return;
    }
    let Some(agent) = f.agent_id.as_deref() else {
        return;
    };
    let key = agent_key(&session_key(cx), agent);
    let Some(reported) = cx
        .memory()
        .claude
        .agents
        .get(&key)
        .and_then(|a| a.api_error.clone())
    else {
        return;
    };
    cx.events
        .retain(|(b, _)| !matches!(b, Body::Error(e) if e.message == reported));
}

/// A subagent call's key in [`Memory::prompts`]: its session and the prompt it gave.
///
/// [`Memory::prompts`]: super::Memory::prompts
pub(super) fn prompt_key(session: &str, prompt: &str) -> String {
    format!("{session}\0{prompt}")
}

/// A subagent's key in [`Memory::agents`]: agent ids are the session's own.
///
/// [`Memory::agents`]: super::Memory::agents
fn agent_key(session: &str, agent: &str) -> String {
    format!("{session}/{agent}")
}

// ---------------------------------------------------------------------------------------------
// usage and sessions

/// A session file's line as `insights usage` and `insights sessions` read it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FactsLine<'a> {
    #[serde(rename = "type")]
    ty: OptStr<'a>,
    timestamp: OptStr<'a>,
    session_id: OptStr<'a>,
    cwd: OptStr<'a>,
    request_id: OptStr<'a>,
    /// Older Claude Code versions wrote each response's cost.
    #[serde(rename = "costUSD")]
    cost_usd: Option<f64>,
    is_meta: Option<bool>,
    is_sidechain: Option<bool>,
    is_compact_summary: Option<bool>,
    #[serde(borrow)]
    message: Option<FactsMessage<'a>>,
}

#[derive(Deserialize)]
struct FactsMessage<'a> {
    id: OptStr<'a>,
    model: OptStr<'a>,
    #[serde(borrow)]
    usage: Option<WireUsage<'a>>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

/// Whether a session file's line may tell `usage` anything `wanted`: [`line_facts`] reads
/// only the lines this takes, those with a usage or (for turns) of a person. Most of a session
/// file's bytes are other lines (`attachment`s, tools' results), rejected by their bytes
/// alone: a tool's result is a `user` line whose content holds `"type":"tool_result"`, which
/// no text can hold unescaped, and which Claude Code writes nowhere else. A `user` line that
/// may name a usage anyhow (`"usage"`, or a `\u` escape, which a key spelled otherwise needs)
/// is read.
pub(crate) fn line_wanted(line: &[u8], wanted: crate::usage::Wanted) -> bool {
    use crate::usage::{Marks, Wanted};
    static USAGE: Marks = Marks::new(&[r#""usage":{"#]);
    static USER: Marks = Marks::new(&[r#""type":"user""#]);
    static RESULT: Marks = Marks::new(&[r#""type":"tool_result""#]);
    static NAMED: Marks = Marks::new(&[r#""usage""#, r"\u"]);
    let prompt = |line: &[u8]| wanted == Wanted::ResponsesAndTurns && !RESULT.any_in(line);
    USAGE.any_in(line) || (USER.any_in(line) && (prompt(line) || NAMED.any_in(line)))
}

/// What a line of a Claude Code session file (`~/.claude/projects/…/*.jsonl`) tells
/// `usage` and `sessions`: an assistant line's tokens (the same `usage` the events carry),
/// keyed by message id and request id, since Claude Code writes one line per content block
/// of a message and a resumed session repeats earlier messages; a person's prompt. It reads
/// a line [`line_wanted`] took.
pub(crate) fn line_facts<'a>(line: &'a str) -> Option<crate::usage::LineFacts<'a>> {
    let w: FactsLine = serde_json::from_str(line).ok()?;
    let mut f = crate::usage::LineFacts {
        time: w.timestamp.as_deref().and_then(crate::time::millis),
        session: w.session_id.0,
        cwd: w.cwd.0,
        cost_usd: w.cost_usd,
        ..Default::default()
    };
    let msg = w.message?;
    match (w.ty.as_deref(), msg.usage) {
        (_, Some(u)) => {
            let tokens = u.tokens();
            // API errors are written as messages of the model `<synthetic>`, with no tokens.
            if tokens.is_zero() || msg.model.as_deref() == Some("<synthetic>") {
                return None;
            }
            f.model = match (msg.model.0, u.speed.as_deref()) {
                (Some(m), Some("fast")) => Some(Cow::Owned(format!("{m}-fast"))),
                (m, _) => m,
            };
            f.response = msg
                .id
                .as_deref()
                .map(|id| crate::ids::hash_pair(id, w.request_id.as_deref().unwrap_or("")));
            f.usage = Some(tokens);
        }
        (Some("user"), None) => {
            let content = msg.content?.get();
            let person = match content.as_bytes().first() {
                Some(b'"' | b'[') if !content.contains(r#""tool_result""#) => msg
                    .content
                    .and_then(content_text)
                    .is_none_or(|t| !cli_text(&t)),
                _ => false,
            };
            f.turn = person
                && !w.is_meta.unwrap_or(false)
                && !w.is_sidechain.unwrap_or(false)
                && !w.is_compact_summary.unwrap_or(false);
            if !f.turn {
                return None;
            }
        }
        _ => return None,
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::super::tests::stream;
    use crate::test_support::of_kind;

    /// The session files of a recording of claude/subagent-api-529 (Claude Code 2.1.197),
    /// cut down: the main file's Agent call and its result (the CLI's API error message, the
    /// subagent `completed`), then the subagent's own file: its prompt, and the CLI's
    /// synthetic message for the API error that ended it.
    const MAIN: [&str; 2] = [
        r#"{"isSidechain":false,"message":{"id":"msg_01pJ2BZdAqDsgOA0kFRBLRA9","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_01pfT2IfPppNAit2dhy4Z4st","name":"Agent","input":{"description":"Summarise README","prompt":"Read README.md and summarise it in one line.","subagent_type":"general-purpose"}}],"stop_reason":"tool_use"},"requestId":"req_011yJjWWKbyXMIToN7F1Fk57iPq","type":"assistant","uuid":"10b41c9a-41f1-4833-a406-a58ed05e9885","timestamp":"2026-11-27T01:48:01.461Z","cwd":"/home/dev/work","sessionId":"d27cbbff-f99e-4008-99d5-4d476bd8ce85","version":"2.1.197"}"#,
        r#"{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01pfT2IfPppNAit2dhy4Z4st","type":"tool_result","content":[{"type":"text","text":"API Error: 529 Overloaded (scripted). This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:35175)."},{"type":"text","text":"agentId: a598c8bae7c5a66c7 (use SendMessage with to: 'a598c8bae7c5a66c7', summary: '<5-10 word recap>' to continue this agent)\n<usage>subagent_tokens: 0\ntool_uses: 0\nduration_ms: 1918</usage>"}]}]},"uuid":"1cea5565-04a9-4927-b6aa-f277bbfb2db8","timestamp":"2026-11-27T01:48:03.386Z","toolUseResult":{"status":"completed","agentId":"a598c8bae7c5a66c7","agentType":"general-purpose","content":[{"type":"text","text":"API Error: 529 Overloaded (scripted). This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:35175)."}],"totalDurationMs":1918,"totalTokens":0,"totalToolUseCount":0},"cwd":"/home/dev/work","sessionId":"d27cbbff-f99e-4008-99d5-4d476bd8ce85","version":"2.1.197"}"#,
    ];
    const SUBAGENT: [&str; 2] = [
        r#"{"isSidechain":true,"agentId":"a598c8bae7c5a66c7","type":"user","message":{"role":"user","content":"Read README.md and summarise it in one line."},"uuid":"6f7b8e10-584c-4793-b43b-abd340bf6148","timestamp":"2026-11-27T01:48:01.467Z","cwd":"/home/dev/work","sessionId":"d27cbbff-f99e-4008-99d5-4d476bd8ce85","version":"2.1.197"}"#,
        r#"{"isSidechain":true,"agentId":"a598c8bae7c5a66c7","type":"assistant","uuid":"3e53a8f9-e950-4abc-811d-e38bc75256e0","timestamp":"2026-11-27T01:48:03.374Z","message":{"id":"217db081-1d7e-460b-9560-7748d7011d4a","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","type":"message","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"content":[{"type":"text","text":"API Error: 529 Overloaded (scripted). This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:35175)."}]},"requestId":"req_011L7UHipNTxguUP1u3YFvt2ARD","error":"server_error","isApiErrorMessage":true,"apiErrorStatus":529,"cwd":"/home/dev/work","sessionId":"d27cbbff-f99e-4008-99d5-4d476bd8ce85","version":"2.1.197"}"#,
    ];

    /// `usage` reads the lines with a usage and a person's prompts; a tool's result, which
    /// tells it nothing, is rejected by its bytes.
    #[test]
    fn usage_takes_responses_and_prompts() {
        let wanted =
            |l: &str| super::line_wanted(l.as_bytes(), crate::usage::Wanted::ResponsesAndTurns);
        assert!(wanted(MAIN[0]) == MAIN[0].contains(r#""usage":{"#));
        assert!(!wanted(MAIN[1]));
        assert!(super::line_facts(MAIN[1]).is_none());
        assert!(wanted(SUBAGENT[0]));
        assert!(wanted(SUBAGENT[1]));
        let prompt = r#"{"type":"user","message":{"role":"user","content":"Say \"type\":\"tool_result\"."},"sessionId":"s1","timestamp":"2026-11-27T01:48:01.461Z"}"#;
        assert!(wanted(prompt));
        assert!(super::line_facts(prompt).is_some_and(|f| f.turn));
        // A tool's result that names a usage (written with a space here) is read.
        let counted = MAIN[1].replace(
            r#""toolUseResult":{"#,
            r#""usage": {"input_tokens":7},"toolUseResult":{"#,
        );
        assert!(wanted(&counted));
    }

    /// The CLI's own user texts are no prompts for `sessions`, and synthetic in the events.
    #[test]
    fn the_cli_s_own_user_texts_are_no_prompts() {
        let line = |content: &str, extra: &str| {
            format!(
                r#"{{"type":"user","message":{{"role":"user","content":{content}}},"sessionId":"s1","timestamp":"2026-11-27T01:48:01.461Z"{extra}}}"#
            )
        };
        let texts = [
            r#""[Request interrupted by user]""#,
            r#"[{"type":"text","text":"[Request interrupted by user for tool use]"}]"#,
            r#""<local-command-stdout>Compacted </local-command-stdout>""#,
            r#""<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>""#,
        ];
        for t in texts {
            let l = line(t, "");
            assert!(super::line_facts(&l).is_none(), "{l}");
            let ev = stream(&[&l]);
            let input = of_kind(&ev, "user_input");
            assert_eq!(input[0]["isSynthetic"], true, "{l}");
            assert!(of_kind(&ev, "turn_start").is_empty(), "{l}");
        }
        // What the CLI adds itself (`isMeta`) is synthetic too.
        let l = line(
            r#""Base directory for this skill: /x""#,
            r#","isMeta":true"#,
        );
        assert!(super::line_facts(&l).is_none());
        assert_eq!(
            of_kind(&stream(&[&l]), "user_input")[0]["isSynthetic"],
            true
        );
        // A person's prompt is one.
        let l = line(r#""Say hello.""#, "");
        assert!(super::line_facts(&l).is_some_and(|f| f.turn));
        let ev = stream(&[&l]);
        assert_eq!(of_kind(&ev, "turn_start").len(), 1);
        assert!(of_kind(&ev, "user_input")[0].get("isSynthetic").is_none());
    }

    #[test]
    fn a_subagent_s_api_error_is_stated_once_across_its_files() {
        // A directory is read main file first.
        let lines: Vec<&str> = MAIN.iter().chain(&SUBAGENT).copied().collect();
        let ev = stream(&lines);
        let errors = of_kind(&ev, "error");
        assert_eq!(errors.len(), 1, "{ev:#?}");
        assert_eq!(errors[0]["httpStatus"], 529);
        assert_eq!(errors[0]["parentCallId"], "toolu_01pfT2IfPppNAit2dhy4Z4st");
        assert_eq!(of_kind(&ev, "subagent_complete")[0]["status"], "failed");
        // The synthetic message still gives its usage, the subagent's.
        let last = ev.last().unwrap();
        assert_eq!(last["event"], "usage_update");
        assert_eq!(last["parentCallId"], "toolu_01pfT2IfPppNAit2dhy4Z4st");
        // The subagent's file alone states its error.
        let ev = stream(&SUBAGENT);
        let errors = of_kind(&ev, "error");
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0]["code"], "server_error");
        assert_eq!(
            errors[0]["extensions"]["claude.agentId"],
            "a598c8bae7c5a66c7"
        );
    }
}
