//! Rules 1, 2 and 9: streamed and final text and thinking, and how messages start and end.

use super::*;

#[test]
fn extract_new_content_cases() {
    assert_eq!(extract_new_content("", "Hel", false), (Some("Hel"), false));
    assert_eq!(extract_new_content("Hel", "lo", false), (Some("lo"), false));
    // cumulative: the chunk repeats everything so far
    assert_eq!(
        extract_new_content("Hel", "Hello", false),
        (Some("lo"), true)
    );
    assert_eq!(extract_new_content("Hello", "Hello", true), (None, true));
    assert_eq!(extract_new_content("Hello", "", false), (None, false));
    // a delta that happens to equal the end of the text is still new text
    assert_eq!(extract_new_content("Wait.", ".", false), (Some("."), false));
}

#[test]
fn rule1_delta_chunks_append_to_the_last_assistant_message() {
    let st = reduce(&[text("Hel"), text("lo, "), text("world")]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["type"], "message");
    assert_eq!(e[0]["role"], "assistant");
    assert_eq!(e[0]["content"], "Hello, world");
    assert_eq!(e[0]["streaming"], true, "no final text yet (RULE 2)");
    assert_eq!(e[0]["updatedSeq"], 3);
}

#[test]
fn rule1_cumulative_chunks_are_deduplicated() {
    let st = reduce(&[
        text("Hel"),
        text("Hello"),
        text("Hello, world"),
        text("Hello, world"),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["content"], "Hello, world");
}

#[test]
fn rule1_a_chunk_after_another_entry_starts_a_new_message() {
    let st = reduce(&[text("before"), call("c1"), text("after")]);
    let e = entries(&st);
    let types: Vec<_> = e.iter().map(|x| x["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["message", "tool_call", "message"]);
    assert_eq!(e[0]["content"], "before");
    assert!(
        e[0].get("streaming").is_none(),
        "RULE 2: finalized by the tool call"
    );
    assert_eq!(e[2]["content"], "after");
}

#[test]
fn rule1_no_message_continues_across_a_turn() {
    let st = reduce(&[text("one"), json!({"event": "turn_complete"}), text("two")]);
    let e = entries(&st);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0]["turn"], 1);
    assert_eq!(e[1]["turn"], 2);
}

#[test]
fn rule1_a_new_message_id_starts_a_new_message() {
    let st = reduce(&[
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m1"}),
        text("first"),
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m2"}),
        text("second"),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 2);
    assert_eq!(
        (e[0]["messageId"].clone(), e[1]["messageId"].clone()),
        (json!("m1"), json!("m2"))
    );
    assert!(e[0].get("streaming").is_none());
}

#[test]
fn rule1_a_chunk_seen_twice_is_appended_once() {
    // The same event (same id) again: skipped. Another event with equal text: appended.
    let mut log = lines(&[text("Hel"), text("lo")]);
    log.push(log[1].clone());
    log.extend(
        lines(&[text("Hel"), text("lo"), text("lo")])
            .into_iter()
            .skip(2)
            .map(|l| l.replace("\"id\":\"e3\"", "\"id\":\"x3\"")),
    );
    let st = reduce_lines(&log);
    assert_eq!(entries(&st)[0]["content"], "Hellolo");
    assert_eq!(st.events.applied, 3);
}

#[test]
fn rule1_chunks_of_another_message_id_start_a_new_message() {
    // ACP: chunks carry their message's id, and no messageStart comes first.
    let chunk = |t: &str, m: &str| json!({"event": "stream_delta", "kind": "text", "textDelta": t, "messageId": m});
    let st = reduce(&[
        chunk("one", "m1"),
        chunk(" more", "m1"),
        chunk("two", "m2"),
        text(" and on"),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 2);
    assert_eq!(
        (&e[0]["content"], &e[0]["messageId"]),
        (&json!("one more"), &json!("m1"))
    );
    assert_eq!(
        (&e[1]["content"], &e[1]["messageId"]),
        (&json!("two and on"), &json!("m2"))
    );
    assert!(e[0].get("streaming").is_none());
    assert_eq!(e[1]["streaming"], true);
}

#[test]
fn rule2_and_rule9_a_message_ends_at_any_later_event_that_is_not_its_chunk() {
    for (after, what) in [
        (
            json!({"event": "usage_update", "stepUsage": {"input_tokens": 1}}),
            "usage",
        ),
        (
            json!({"event": "session_status", "status": "idle"}),
            "status",
        ),
        (
            json!({"event": "rate_limit_update", "status": "allowed"}),
            "rate limit",
        ),
        (
            json!({"event": "available_commands", "availableCommands": []}),
            "commands",
        ),
        (thinking("hmm"), "a thought"),
    ] {
        let st = reduce(&[text("Hello"), after]);
        let e = entries(&st);
        assert!(e[0].get("streaming").is_none(), "ended by {what}");
    }
    // A chunk of another agent's message ends it too, and its own next chunk continues it.
    let mut sub = text("inner");
    sub["parentCallId"] = json!("A");
    let st = reduce(&[
        json!({"event": "tool_invocation", "callId": "A", "kind": "think", "toolName": "Task", "input": {}}),
        text("Hello"),
        sub,
        text(" again"),
    ]);
    let e = entries(&st);
    let main: Vec<_> = e
        .iter()
        .filter(|x| x.get("parentCallId").is_none() && x["type"] == "message")
        .collect();
    assert_eq!(main.len(), 1);
    assert_eq!(main[0]["content"], "Hello again");
    assert_eq!(main[0]["streaming"], true);
    let inner = e.iter().find(|x| x["content"] == "inner").unwrap();
    assert!(inner.get("streaming").is_none());
    // Ended, then continued and completed by its final text: the streamed text is replaced.
    let st = reduce(&[
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m1"}),
        text("Helo"),
        json!({"event": "usage_update", "stepUsage": {"input_tokens": 1}, "messageId": "m1"}),
        text(" wrld"),
        json!({"event": "text", "kind": "text", "text": "Hello world", "messageId": "m1"}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["content"], "Hello world");
}

#[test]
fn rule2_final_text_replaces_the_streamed_text() {
    let st = reduce(&[
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m1"}),
        text("Helo "),
        text("wrld"),
        json!({"event": "text", "kind": "text", "text": "Hello world", "messageId": "m1", "model": "x"}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["content"], "Hello world");
    assert!(e[0].get("streaming").is_none());
    assert_eq!(e[0]["model"], "x");
}

#[test]
fn rule2_further_blocks_of_a_message_continue_it() {
    // Two text blocks of one message (streamed, then final each), as Claude writes them.
    let st = reduce(&[
        json!({"event": "stream_delta", "kind": "messageStart", "messageId": "m1"}),
        text("A"),
        json!({"event": "text", "kind": "text", "text": "A.", "messageId": "m1"}),
        text("B"),
        json!({"event": "text", "kind": "text", "text": "B.", "messageId": "m1"}),
        // the same block delivered again adds nothing
        json!({"event": "text", "kind": "text", "text": "A.B.", "messageId": "m1"}),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["content"], "A.B.");
}

#[test]
fn rule2_complete_texts_of_different_messages_are_separate() {
    let st = reduce(&[
        json!({"event": "text", "kind": "text", "text": "one", "messageId": "m1"}),
        json!({"event": "text", "kind": "text", "text": "two", "messageId": "m2"}),
        json!({"event": "text", "kind": "text", "text": "three"}),
    ]);
    assert_eq!(entries(&st).len(), 3);
}

#[test]
fn rule9_thought_chunks_and_message_chunks_do_not_mix() {
    let st = reduce(&[
        thinking("Let me "),
        thinking("think."),
        // usage lines between chunks do not end the thought (Claude writes token estimates)
        json!({"event": "usage_update", "stepUsage": {}}),
        thinking(" Done."),
        text("Answer"),
        thinking("More?"),
    ]);
    let e = entries(&st);
    let kinds: Vec<_> = e.iter().map(|x| x["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["thought", "message", "thought"]);
    assert_eq!(e[0]["content"], "Let me think. Done.");
    assert!(e[0].get("streaming").is_none(), "ended by the message");
    assert_eq!(e[2]["streaming"], true);
}

#[test]
fn text_of_kind_plan_or_error_is_its_own_message() {
    let st = reduce(&[
        text("a"),
        json!({"event": "text", "kind": "plan", "text": "1. do it"}),
        text("b"),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 3);
    assert_eq!(e[1]["kind"], "plan");
}

#[test]
fn codex_raw_reasoning_is_kept_apart_from_the_summary() {
    // What the Codex converter makes of a reasoning item streamed with summary deltas
    // (item/reasoning/summaryTextDelta) and raw deltas (item/reasoning/textDelta, marked
    // codex.rawReasoning), then its item/completed (the summary, then the raw content).
    let codex = |mut v: Value, raw: bool| {
        v["provider"] = json!("codex");
        if raw {
            v["extensions"] = json!({"codex.rawReasoning": true});
        }
        v
    };
    let d = |t: &str, raw: bool| {
        codex(
            json!({"event": "stream_delta", "kind": "thinking", "textDelta": t,
                   "messageId": "rs1"}),
            raw,
        )
    };
    let fin = |t: &str, raw: bool| {
        codex(
            json!({"event": "text", "kind": "thinking", "text": t, "messageId": "rs1"}),
            raw,
        )
    };
    let events = vec![
        codex(json!({"event": "turn_start"}), false),
        codex(
            json!({"event": "stream_delta", "kind": "blockStart", "messageId": "rs1"}),
            false,
        ),
        d("The user ", true),
        d("**Plan**", false),
        d("wants uname.", true),
        d(" Run it.", false),
    ];
    let mid = reduce(&events);
    let e = entries(&mid);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (
            e[0]["type"].clone(),
            e[0]["content"].clone(),
            e[0]["rawContent"].clone(),
            e[0]["streaming"].clone()
        ),
        (
            json!("thought"),
            json!("**Plan** Run it."),
            json!("The user wants uname."),
            json!(true)
        )
    );
    let mut all = events.clone();
    all.push(fin("**Plan** Run it.", false));
    all.push(fin("The user wants uname.", true));
    all.push(codex(
        json!({"event": "text", "kind": "text", "text": "Linux", "messageId": "m1"}),
        false,
    ));
    all.push(codex(json!({"event": "turn_complete"}), false));
    let log = lines(&all);
    let st = reduce_lines(&log);
    let e = entries(&st);
    assert_eq!(e.len(), 2, "{e:?}");
    assert_eq!(e[0]["content"], "**Plan** Run it.");
    assert_eq!(e[0]["rawContent"], "The user wants uname.");
    assert!(e[0].get("streaming").is_none());
    assert_eq!(e[1]["content"], "Linux");
    for k in 0..=log.len() {
        same(
            &format!("cut after {k}"),
            &st,
            &resumed(&log, k, &log[k..], false),
        );
    }

    // Raw reasoning alone (OSS models): content empty, rawContent the text; the summary of
    // the same item, final or streamed after it, fills content.
    let st = reduce(&[
        d("raw ", true),
        d("only", true),
        fin("raw only", true),
        fin("A summary", false),
    ]);
    let e = entries(&st);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (e[0]["content"].clone(), e[0]["rawContent"].clone()),
        (json!("A summary"), json!("raw only"))
    );
    // Without any streaming: the two final texts, either order, are one thought.
    for order in [[false, true], [true, false]] {
        let evs: Vec<Value> = order
            .iter()
            .map(|&raw| fin(if raw { "raw" } else { "sum" }, raw))
            .collect();
        let e = entries(&reduce(&evs));
        assert_eq!(e.len(), 1, "{order:?}: {e:?}");
        assert_eq!(
            (e[0]["content"].clone(), e[0]["rawContent"].clone()),
            (json!("sum"), json!("raw"))
        );
    }
    // The mark is Codex's: another provider's thinking with it is ordinary thinking.
    let mut other = fin("thinking", true);
    other["provider"] = json!("claude");
    let e = entries(&reduce(&[other]));
    assert_eq!(e[0]["content"], "thinking");
    assert!(e[0].get("rawContent").is_none());
}

/// The converter writes the whole text of a message streamed only as chunks where it ends, or
/// at the end of its input (`providers::whole`). A snapshot taken of a log cut in the middle
/// of a message has that part whole; the log read again from its start skips the chunks
/// applied, streams the rest onto the message, and ends it with the whole text: the message
/// is the whole once, not its first part twice.
#[test]
fn a_message_taken_up_again_after_a_snapshot_s_whole_text_is_whole_once() {
    let id = |mut v: Value, id: &str| {
        v["id"] = json!(id);
        v
    };
    let whole = |t: &str, id_: &str| {
        id(
            json!({"event": "text", "kind": "text", "text": t,
                   "extensions": {"insights.inferred": true}}),
            id_,
        )
    };
    let head = lines(&[
        id(text("Hello, "), "1:0"),
        id(text("world"), "2:0"),
        whole("Hello, world", "end-2-:text"),
    ]);
    let log = lines(&[
        id(text("Hello, "), "1:0"),
        id(text("world"), "2:0"),
        id(text("."), "3:0"),
        whole("Hello, world.", "4:text"),
        id(json!({"event": "turn_complete"}), "4:0"),
    ]);
    let st = resumed(&head, head.len(), &log, false);
    let e = entries(&st);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0]["content"], "Hello, world.");
    assert!(e[0].get("streaming").is_none());
    // A final text that differs from the streamed text still replaces it.
    let st = reduce(&[text("Helo"), whole("Hello", "x")]);
    assert_eq!(entries(&st)[0]["content"], "Hello");
}
