//! Unit tests of the transcript model (`model.rs`).

use super::*;
use serde_json::json;

fn run(events: &[Value]) -> Vec<Block> {
    let mut m = Model::new();
    for e in events {
        m.event(e);
    }
    m.finish();
    m.drain().collect()
}

#[test]
fn a_tool_update_s_input_shows_on_the_call_s_next_block() {
    // ACP: the call comes with a title only, its command in a later update.
    let b = run(&[
        json!({"event":"tool_invocation","sessionId":"s","callId":"c","toolName":"Bash","kind":"execute","title":"Terminal"}),
        json!({"event":"tool_update","sessionId":"s","callId":"c","input":{"command":"rm -rf .cache"}}),
        json!({"event":"tool_completion","sessionId":"s","callId":"c","status":"failed"}),
    ]);
    let Some(Block::ToolEnd { card, .. }) = b.iter().find(|x| matches!(x, Block::ToolEnd { .. }))
    else {
        panic!("{b:?}")
    };
    assert_eq!(card.head.salient, "rm -rf .cache");
    // The head waited for the command: one card, drawn with it.
    assert!(card.attached);
    let starts: Vec<&str> = b
        .iter()
        .filter_map(|x| match x {
            Block::ToolStart { head, .. } => Some(head.salient.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(starts, ["rm -rf .cache"]);
}

#[test]
fn a_turn_s_cumulative_diffs_are_shown_once_for_paths_no_call_showed() {
    let diff = |path: &str, d: &str, cumulative: bool| {
        json!({"event":"file_change","sessionId":"s","path":path,"changeKind":"modify",
               "diff":d,"cumulative":cumulative})
    };
    let b = run(&[
        json!({"event":"tool_invocation","sessionId":"s","callId":"c","toolName":"apply_patch","kind":"edit"}),
        json!({"event":"file_change","sessionId":"s","callId":"c","path":"a","changeKind":"modify","diff":"+a1"}),
        diff("a", "+a1", true),
        diff("b", "+b1", true),
        diff("b", "+b1\n+b2", true),
        json!({"event":"turn_complete","sessionId":"s"}),
    ]);
    let diffs: Vec<(&str, Option<&str>)> = b
        .iter()
        .filter_map(|x| match x {
            Block::Diff { path, diff, .. } => Some((path.as_str(), diff.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(diffs, [("a", Some("+a1")), ("b", Some("+b1\n+b2"))]);
}

#[test]
fn deltas_followed_by_their_text_are_not_shown() {
    let b = run(&[
        json!({"event":"stream_delta","kind":"messageStart","messageId":"m"}),
        json!({"event":"stream_delta","kind":"text","textDelta":"Hel","blockIndex":0}),
        json!({"event":"stream_delta","kind":"text","textDelta":"lo","blockIndex":0}),
        json!({"event":"text","kind":"text","text":"Hello","messageId":"m"}),
    ]);
    assert_eq!(
        b,
        [Block::Text {
            depth: 0,
            text: "Hello".into()
        }]
    );
}

#[test]
fn deltas_without_their_text_are_shown_once_at_the_end() {
    let b = run(&[
        json!({"event":"stream_delta","kind":"messageStart","messageId":"m"}),
        json!({"event":"stream_delta","kind":"text","textDelta":"Hel","blockIndex":0}),
        json!({"event":"stream_delta","kind":"text","textDelta":"lo","blockIndex":0}),
    ]);
    assert_eq!(
        b,
        [Block::Partial {
            depth: 0,
            kind: PartialKind::Text,
            text: "Hello".into()
        }]
    );
}

#[test]
fn delta_only_streams_are_the_text_in_their_place() {
    // ACP and Gemini stream text as deltas only, without a final `text` event.
    let b = run(&[
        json!({"event":"stream_delta","kind":"thinking","textDelta":"Hm","messageId":"m1"}),
        json!({"event":"stream_delta","kind":"text","textDelta":"I'll ","messageId":"m1"}),
        json!({"event":"stream_delta","kind":"text","textDelta":"look.","messageId":"m1"}),
        json!({"event":"tool_invocation","callId":"c","kind":"read","toolName":"Read","input":{}}),
        json!({"event":"tool_completion","callId":"c","status":"completed"}),
        json!({"event":"stream_delta","kind":"text","textDelta":"Done.","messageId":"m2"}),
        json!({"event":"turn_complete"}),
    ]);
    let kinds: Vec<String> = b
        .iter()
        .map(|b| match b {
            Block::Thinking { text, .. } => format!("thinking {text}"),
            Block::Text { text, .. } => format!("text {text}"),
            Block::ToolStart { .. } => "start".into(),
            Block::ToolEnd { .. } => "end".into(),
            Block::Footer(_) => "footer".into(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "thinking Hm",
            "text I'll look.",
            "start",
            "end",
            "text Done.",
            "footer"
        ]
    );
}

#[test]
fn a_final_text_after_its_deltas_were_shown_is_not_repeated() {
    // A prompt queued mid-stream ends the stream early; the final text comes after.
    let b = run(&[
        json!({"event":"stream_delta","kind":"messageStart","messageId":"m"}),
        json!({"event":"stream_delta","kind":"text","textDelta":"Hello","blockIndex":0}),
        json!({"event":"user_input","text":"and then?"}),
        json!({"event":"text","kind":"text","text":"Hello","messageId":"m"}),
    ]);
    let texts = b.iter().filter(|b| matches!(b, Block::Text { .. })).count();
    assert_eq!(texts, 1, "{b:?}");
}

/// The footers of a run, in order.
fn footers(events: &[Value]) -> Vec<Footer> {
    run(events)
        .into_iter()
        .filter_map(|b| match b {
            Block::Footer(f) => Some(f),
            _ => None,
        })
        .collect()
}

#[test]
fn turn_figures_are_running_totals_of_claude_and_each_prompt_s_own_on_acp() {
    // Claude Code's `result` reports its process's totals so far; ACP's answer to a prompt
    // that prompt's own (crate::event::running_turn_totals).
    let tc = |provider: &str, cost: f64, big: u64, small: u64| {
        json!({"event":"turn_complete","provider":provider,"costUsd":cost,
               "usage":{"inputTokens":1,"outputTokens":1},
               "modelUsage":{"big":{"inputTokens":big,"outputTokens":2,"costUsd":cost},
                             "small":{"inputTokens":small,"outputTokens":1}}})
    };
    let f = footers(&[tc("claude", 0.5, 10, 4), tc("claude", 0.75, 25, 4)]);
    assert_eq!((f[0].cost, f[0].session_cost), (Some(0.5), None));
    assert_eq!((f[1].cost, f[1].session_cost), (Some(0.25), Some(0.75)));
    assert_eq!(f[1].models[0].tokens, Some((15, 0)));
    assert_eq!(f[1].models[1].tokens, Some((0, 0)));
    assert_eq!(
        (f[1].models[0].cost, f[1].models[0].session_cost),
        (Some(0.25), Some(0.75))
    );
    // A lower report starts a new run (a resumed session in a new process): counted whole.
    let f = footers(&[
        tc("claude", 0.5, 10, 4),
        tc("claude", 0.75, 25, 4),
        tc("claude", 0.25, 3, 1),
    ]);
    assert_eq!((f[2].cost, f[2].session_cost), (Some(0.25), Some(1.0)));
    assert_eq!(f[2].models[0].tokens, Some((3, 2)));
    let f = footers(&[tc("acp", 0.5, 10, 4), tc("acp", 0.75, 25, 4)]);
    assert_eq!((f[1].cost, f[1].session_cost), (Some(0.75), None));
    assert_eq!(f[1].models[0].tokens, Some((25, 2)));
    assert_eq!(f[1].models[1].tokens, Some((4, 1)));
}

#[test]
fn usage_updates_are_not_added_up() {
    let u = json!({"event":"usage_update","stepUsage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1},"model":"m1","messageId":"x"});
    let b = run(&[
        u.clone(),
        u,
        json!({"event":"turn_complete","usage":{"inputTokens":10,"outputTokens":3},"modelUsage":{"m1[1m]":{"inputTokens":10,"outputTokens":3,"costUsd":0.5,"contextWindow":1000}}}),
    ]);
    let Block::Footer(f) = &b[0] else {
        panic!("{b:?}")
    };
    // 10 in, 90 cache read and the 1 output token now in the conversation.
    assert_eq!(f.models[0].context, Some((101, Some(1000))));
    assert_eq!(f.tokens.as_ref().unwrap().input, 10);
}

#[test]
fn the_context_acp_reports_is_shown_with_its_window() {
    // claude-agent-acp's usage_update `used` and `size`; its turn_complete has no
    // modelUsage.
    let b = footers(&[
        json!({"event":"usage_update","provider":"acp","stepUsage":{},"contextTokens":20126,"contextWindow":1000000}),
        json!({"event":"usage_update","provider":"acp","stepUsage":{},"contextTokens":20139}),
        json!({"event":"turn_complete","provider":"acp","usage":{"inputTokens":31,"outputTokens":36}}),
    ]);
    assert_eq!(b[0].models[0].context, Some((20139, Some(1000000))));
}

#[test]
fn a_denied_call_is_denied() {
    let b = run(&[
        json!({"event":"tool_invocation","callId":"c","kind":"edit","toolName":"Write","input":{"file_path":"/w/a.md"}}),
        json!({"event":"permission_request","requestId":"r","toolName":"Write","toolKind":"edit","toolInput":{},"toolUseId":"c"}),
        json!({"event":"permission_response","requestId":"r","decision":"deny","allowed":false}),
        json!({"event":"tool_completion","callId":"c","status":"failed","output":"no"}),
    ]);
    let Block::ToolEnd {
        status,
        card,
        errors,
        ..
    } = &b[3]
    else {
        panic!("{b:?}")
    };
    assert_eq!(*status, Status::Denied);
    assert!(card.attached);
    assert_eq!(errors, "no");
}

#[test]
fn subagent_traffic_is_nested_and_the_card_gets_one_end() {
    let b = run(&[
        json!({"event":"tool_invocation","callId":"a","kind":"think","toolName":"Agent","input":{"description":"Count","subagent_type":"general"}}),
        json!({"event":"subagent_spawn","callId":"a"}),
        json!({"event":"tool_invocation","callId":"b","parentCallId":"a","kind":"execute","toolName":"Bash","input":{"command":"ls"}}),
        json!({"event":"tool_completion","callId":"b","parentCallId":"a","status":"completed","output":"2"}),
        json!({"event":"tool_completion","callId":"a","status":"completed","output":{"content":[{"type":"text","text":"Two."}]}}),
        json!({"event":"subagent_complete","callId":"a","summary":"Two.","totalTokens":5}),
    ]);
    assert!(matches!(b[1], Block::ToolStart { depth: 1, .. }), "{b:?}");
    assert_eq!(b.len(), 4, "{b:?}");
    let Block::SubagentDone {
        card,
        summary,
        tokens,
        ..
    } = &b[3]
    else {
        panic!("{b:?}")
    };
    assert!(!card.attached);
    assert_eq!((summary.as_str(), *tokens), ("Two.", Some(5)));
}

#[test]
fn the_first_sdk_prompt_waits_for_the_header() {
    let b = run(&[
        json!({"event":"user_input","sessionId":"","text":"hi"}),
        json!({"event":"session_init","sessionId":"s","model":"m","cwd":"/w"}),
    ]);
    assert!(matches!(b[0], Block::Header(_)), "{b:?}");
    assert!(matches!(b[1], Block::Prompt { .. }), "{b:?}");
}

#[test]
fn salient_inputs() {
    let mut m = Model::new();
    m.event(&json!({"event":"session_init","sessionId":"s","cwd":"/w"}));
    let h = |input: Value| m.salient(&input);
    assert_eq!(h(json!({"command":"ls -l"})), "ls -l");
    let head = m.tool_head(
        "Bash",
        "execute",
        &json!({"command":"/bin/bash -lc 'uname -s'"}),
        Some("uname -s"),
    );
    assert_eq!((head.salient.as_str(), head.title), ("uname -s", None));
    assert_eq!(h(json!({"file_path":"/w/src/a.rs"})), "src/a.rs");
    assert_eq!(h(json!({"file_path":"/etc/passwd"})), "/etc/passwd");
    assert_eq!(
        h(json!({"pattern":"fn main","path":"/w/src"})),
        "fn main in src"
    );
    assert_eq!(h(json!({"url":"https://x"})), "https://x");
    assert_eq!(h(json!({"todos":[1,2]})), "2 items");
    assert_eq!(h(json!({"command":"a\u{1b}]52;c;eA==\u{7}b"})), "ab");
}

#[test]
fn outputs() {
    assert_eq!(
        output_text(&json!({"stdout":"a","stderr":"b","interrupted":false})),
        ("a".into(), "b".into())
    );
    assert_eq!(
        output_text(&json!({"type":"text","file":{"content":"x\ny"}})),
        ("x\ny".into(), String::new())
    );
    assert_eq!(
        output_text(&json!({"filePath":"a","structuredPatch":[]})),
        (String::new(), String::new())
    );
    assert_eq!(
        output_text(&json!([{"type":"text","text":"t"},{"type":"image"}])),
        ("t\n[image]".into(), String::new())
    );
    assert_eq!(
        output_text(&json!({"a":1,"b":[1,2]})),
        ("{\"a\": 1, \"b\": [1, 2]}".into(), String::new())
    );
}

#[test]
fn an_output_that_is_one_content_block_shows_its_text() {
    // Wire fact (testdata/acp-gemini/interrupt-sleep.jsonl, line 11): Gemini CLI over ACP
    // ends a shell call the client cancelled with a `tool_call_update` whose `content` is
    // one text block, `[{"type":"content","content":{"type":"text","text":"Command
    // cancelled by user."}}]`: the converter gives that block as the completion's
    // `output`.
    assert_eq!(
        output_text(&json!({"type":"text","text":"Command cancelled by user."})),
        ("Command cancelled by user.".into(), String::new())
    );
    assert_eq!(
        output_text(&json!({"type":"image","data":"…","mimeType":"image/png"})),
        ("[image]".into(), String::new())
    );
    // Not a block: another `type` with a message is shown as it is.
    assert_eq!(
        output_text(&json!({"type":"text","text":1})).0,
        "{\"type\": \"text\", \"text\": 1}"
    );
}
#[test]
fn a_subagent_s_call_asked_for_before_its_tool_use_is_nested() {
    // Claude's SDK: the `can_use_tool` request names no parent and can come before the
    // subagent's `tool_use`.
    let b = run(&[
        json!({"event":"tool_invocation","callId":"a","kind":"think","toolName":"Agent","input":{"description":"Count"}}),
        json!({"event":"subagent_spawn","callId":"a"}),
        json!({"event":"permission_request","requestId":"r","toolName":"Bash","toolKind":"execute","toolInput":{"command":"ls"},"toolUseId":"b"}),
        json!({"event":"permission_response","requestId":"r","decision":"allow","toolUseId":"b"}),
        json!({"event":"tool_invocation","callId":"b","parentCallId":"a","kind":"execute","toolName":"Bash","input":{"command":"ls"}}),
        json!({"event":"tool_completion","callId":"b","parentCallId":"a","status":"completed","output":"2"}),
    ]);
    let depths: Vec<(String, usize)> = b
        .iter()
        .filter_map(|x| match x {
            Block::ToolStart { depth, head } => Some((head.name.clone(), *depth)),
            Block::Permission { depth, .. } => Some(("permission".into(), *depth)),
            Block::Decision { depth, .. } => Some(("decision".into(), *depth)),
            Block::ToolEnd { depth, card, .. } => Some((card.head.name.clone(), *depth)),
            _ => None,
        })
        .collect();
    let want = [
        ("Agent", 0),
        ("Bash", 1),
        ("permission", 1),
        ("decision", 1),
        ("Bash", 1),
        ("Agent", 0),
    ];
    let want: Vec<(String, usize)> = want.iter().map(|(n, d)| (n.to_string(), *d)).collect();
    assert_eq!(depths, want, "{b:?}");
}

#[test]
fn a_change_of_several_files_names_them_all_and_echoes_no_json() {
    let b = run(&[
        json!({"event":"session_init","sessionId":"s","cwd":"/w"}),
        json!({"event":"tool_invocation","sessionId":"s","callId":"c","kind":"edit","toolName":"FileChange","title":"/w/a",
               "input":{"file_path":"/w/a","changes":[{"path":"/w/a","kind":"update"},{"path":"/w/b","kind":"add"}]}}),
        json!({"event":"tool_completion","sessionId":"s","callId":"c","status":"completed",
               "output":{"changes":[{"path":"/w/a","kind":"update"},{"path":"/w/b","kind":"add"}]}}),
    ]);
    let Some(Block::ToolStart { head, .. }) =
        b.iter().find(|x| matches!(x, Block::ToolStart { .. }))
    else {
        panic!("{b:?}")
    };
    assert_eq!(
        (head.salient.as_str(), head.title.as_deref()),
        ("a, b", None)
    );
    let Some(Block::ToolEnd { output, .. }) = b.iter().find(|x| matches!(x, Block::ToolEnd { .. }))
    else {
        panic!("{b:?}")
    };
    assert_eq!(output, "");
}

#[test]
fn diffs_name_files_under_the_session_s_directory_relative_to_it() {
    let b = run(&[
        json!({"event":"session_init","sessionId":"s","cwd":"/home/dev/work"}),
        json!({"event":"file_change","sessionId":"s","path":"/home/dev/work/a.txt","changeKind":"move","movePath":"/home/dev/work/b.txt",
               "diff":"diff --git a/home/dev/work/a.txt b/home/dev/work/b.txt\nrename from home/dev/work/a.txt\nrename to home/dev/work/b.txt\n--- a/home/dev/work/a.txt\n+++ b/home/dev/work/b.txt\n@@ -1 +1 @@\n--- a/home/dev/work/kept\n+x\n"}),
        json!({"event":"file_change","sessionId":"s","path":"/etc/x","changeKind":"update",
               "diff":"--- a/etc/x\n+++ b/etc/x\n@@ -1 +1 @@\n-a\n+b\n"}),
    ]);
    let diffs: Vec<&str> = b
        .iter()
        .filter_map(|x| match x {
            Block::Diff { diff, .. } => diff.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(
        diffs[0],
        "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n--- a/a.txt\n+++ b/b.txt\n@@ -1 +1 @@\n--- a/home/dev/work/kept\n+x\n",
        "headers relative, hunk lines kept"
    );
    assert_eq!(diffs[1], "--- a/etc/x\n+++ b/etc/x\n@@ -1 +1 @@\n-a\n+b\n");
}

#[test]
fn a_refused_change_shows_what_it_proposed_and_one_status() {
    for decision in ["deny", "cancelled"] {
        let b = run(&[
            json!({"event":"session_init","sessionId":"s","cwd":"/w"}),
            json!({"event":"tool_invocation","sessionId":"s","callId":"c","kind":"edit","toolName":"FileChange",
                   "input":{"file_path":"/w/a","changes":[{"path":"/w/a","kind":"update","diff":"@@ -1 +1 @@\n-x\n+y\n"},{"path":"/w/n","kind":"add","diff":"new\n"}]}}),
            json!({"event":"permission_request","sessionId":"s","requestId":"0","toolName":"FileChange","toolKind":"edit","toolUseId":"c"}),
            json!({"event":"permission_response","sessionId":"s","requestId":"0","decision":decision,"toolUseId":"c"}),
            json!({"event":"tool_completion","sessionId":"s","callId":"c","status": if decision == "deny" {"failed"} else {"cancelled"}}),
        ]);
        let proposed: Vec<(&str, &str, bool)> = b
            .iter()
            .filter_map(|x| match x {
                Block::Diff {
                    path,
                    change,
                    diff,
                    proposed,
                    ..
                } => Some((path.as_str(), change.as_str(), *proposed && diff.is_some())),
                _ => None,
            })
            .collect();
        assert_eq!(
            proposed,
            [("a", "update", true), ("n", "add", true)],
            "{decision}"
        );
        let Some(Block::ToolEnd { decided, .. }) =
            b.iter().find(|x| matches!(x, Block::ToolEnd { .. }))
        else {
            panic!("{b:?}")
        };
        assert!(decided, "{decision}: the decision is the call's one status");
    }
    // Claude's Write: its content.
    let b = run(&[
        json!({"event":"tool_invocation","callId":"w","kind":"edit","toolName":"Write","input":{"file_path":"/w/n.md","content":"# N\n"}}),
        json!({"event":"permission_request","requestId":"1","toolName":"Write","toolKind":"edit","toolUseId":"w"}),
        json!({"event":"permission_response","requestId":"1","decision":"deny","toolUseId":"w"}),
    ]);
    assert!(
        b.iter().any(
            |x| matches!(x, Block::Diff { proposed: true, diff: Some(d), .. } if d.contains("+# N"))
        ),
        "{b:?}"
    );
}

#[test]
fn a_background_task_that_ends_after_its_turn_is_drawn_where_it_ends() {
    let b = run(&[
        json!({"event":"tool_invocation","callId":"c","kind":"execute","toolName":"Bash","input":{"command":"sleep 99","run_in_background":true}}),
        json!({"event":"tool_completion","callId":"c","status":"completed","output":"Command running in background with ID: b1"}),
        json!({"event":"task_update","taskId":"b1","phase":"started","callId":"c","description":"sleep 99"}),
        json!({"event":"turn_complete"}),
        json!({"event":"task_update","taskId":"b1","phase":"updated","callId":"c","status":"killed"}),
        json!({"event":"task_update","taskId":"b1","phase":"notification","callId":"c","status":"stopped","summary":"sleep 99"}),
    ]);
    let ends: Vec<Status> = b
        .iter()
        .filter_map(|x| match x {
            Block::ToolEnd { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [Status::Background, Status::Cancelled], "{b:?}");
    assert!(
        matches!(b.last(), Some(Block::ToolEnd { .. })),
        "after the footer: {b:?}"
    );
}

#[test]
fn an_acp_call_whose_input_comes_later_has_one_card() {
    let b = run(&[
        json!({"event":"tool_invocation","callId":"c","kind":"edit","toolName":"Edit","title":"Edit","input":{}}),
        json!({"event":"usage_update","stepUsage":{}}),
        json!({"event":"tool_update","callId":"c","title":"Edit a.md","input":{"file_path":"a.md","old_string":"x","new_string":"y"}}),
        json!({"event":"tool_completion","callId":"c","status":"completed"}),
    ]);
    let heads: Vec<(&str, bool)> = b
        .iter()
        .filter_map(|x| match x {
            Block::ToolStart { head, .. } => Some((head.salient.as_str(), true)),
            Block::ToolEnd { card, .. } => Some((card.head.salient.as_str(), card.attached)),
            _ => None,
        })
        .collect();
    assert_eq!(heads, [("a.md", true), ("a.md", true)], "{b:?}");
}

#[test]
fn notices_about_the_protocol_are_left_out() {
    let b = run(&[
        json!({"event":"notice","subtype":"thread/started","message":"announced by the thread/start answer","extensions":{"codex.alreadyAnnounced":true}}),
        json!({"event":"notice","subtype":"stream.heartbeat","message":"thinking"}),
        json!({"event":"notice","subtype":"control_response/initialize","message":"kept"}),
        json!({"event":"notice","subtype":"session/set_mode","message":"mode plan requested"}),
    ]);
    assert_eq!(b.len(), 1, "{b:?}");
}
