//! Usage accounting: tokens counted once, running totals, costs, API time, the context in use.

use super::*;

fn usage(msg: &str, input: u64) -> Value {
    json!({"event": "usage_update", "messageId": msg, "model": "m",
           "stepUsage": {"input_tokens": input, "output_tokens": 1,
                         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}})
}

#[test]
fn usage_repeated_on_every_block_of_a_message_counts_once() {
    let st = reduce(&[
        usage("m1", 10),
        usage("m1", 10),
        usage("m1", 10),
        usage("m2", 5),
    ]);
    let j = js(&st);
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 15);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"].as_array().map(Vec::len),
        Some(0),
        "usage opens no turn"
    );
    assert_eq!(j["totals"]["sessions"][0]["context"]["usedTokens"], 6);
}

#[test]
fn reduce_and_replay_agree_on_the_context_in_use() {
    // Wire fact: the context after a request is its whole prompt (input, cache read, cache
    // creation) plus its output, which the next request reads back; claude-agent-acp's own
    // `used` counts it so (testdata/acp-claude/bash-cancelled.jsonl: 20,026 when its first
    // request starts, 20,047 when it ends). Claude's stream-json gives the parts
    // (testdata/claude/*: `message.usage` of each assistant line).
    let claude = [
        json!({"event": "session_init", "model": "opus"}),
        json!({"event": "usage_update", "messageId": "m1", "model": "opus",
               "stepUsage": {"input_tokens": 15, "cache_creation_input_tokens": 19063,
                             "cache_read_input_tokens": 0, "output_tokens": 1}}),
        json!({"event": "usage_update", "messageId": "m2", "model": "opus",
               "stepUsage": {"input_tokens": 11, "cache_creation_input_tokens": 65,
                             "cache_read_input_tokens": 19159, "output_tokens": 1}}),
        // A subagent's request is its own context.
        json!({"event": "usage_update", "messageId": "s1", "parentCallId": "A",
               "stepUsage": {"input_tokens": 5, "output_tokens": 1}, "contextTokens": 6}),
        // An API error's usage of no tokens tells nothing.
        json!({"event": "usage_update", "messageId": "m3", "stepUsage": {"input_tokens": 0, "output_tokens": 0}}),
        json!({"event": "turn_complete", "usage": {"inputTokens": 26, "outputTokens": 2},
               "modelUsage": {"opus": {"inputTokens": 26, "outputTokens": 2, "contextWindow": 1000000}}}),
    ];
    let acp = [
        json!({"event": "usage_update", "provider": "acp", "stepUsage": {}, "contextTokens": 20026, "contextWindow": 1000000}),
        json!({"event": "usage_update", "provider": "acp", "stepUsage": {}, "contextTokens": 20047}),
        json!({"event": "turn_complete", "provider": "acp", "usage": {"inputTokens": 31, "outputTokens": 36}}),
    ];
    // After a compaction (Claude's `compact_boundary`, testdata/claude-sdk/compact.jsonl), what
    // it left, until the next request.
    let compacted = [
        json!({"event": "usage_update", "messageId": "m1", "model": "opus",
               "stepUsage": {"input_tokens": 21900, "output_tokens": 16}}),
        json!({"event": "context_compaction", "trigger": "manual", "preTokens": 21916, "postTokens": 578}),
        json!({"event": "turn_complete", "usage": {"inputTokens": 0, "outputTokens": 0},
               "modelUsage": {"opus": {"inputTokens": 21900, "outputTokens": 16, "contextWindow": 1000000}}}),
    ];
    for (log, used) in [
        (&claude[..], 19236),
        (&acp[..], 20047),
        (&compacted[..], 578),
    ] {
        let c = &js(&reduce(log))["totals"]["sessions"][0]["context"];
        assert_eq!(
            (&c["usedTokens"], &c["windowTokens"]),
            (&json!(used), &json!(1000000))
        );
        let mut m = crate::replay::model::Model::new();
        for e in lines(log) {
            m.event(&serde_json::from_str(&e).unwrap());
        }
        m.finish();
        let footer = m
            .drain()
            .find_map(|b| match b {
                crate::replay::model::Block::Footer(f) => Some(f),
                _ => None,
            })
            .expect("a footer");
        assert_eq!(footer.models[0].context, Some((used, Some(1000000))));
    }
}

#[test]
fn turn_complete_totals_are_authoritative() {
    let st = reduce(&[
        text("x"),
        usage("m1", 10),
        usage("m1", 10),
        json!({"event": "turn_complete", "usage": {"inputTokens": 12, "outputTokens": 40}}),
    ]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["tokens"]["inputTokens"],
        12
    );
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 12);
    assert_eq!(j["totals"]["sessions"][0]["outputTokens"], 40);
    assert_eq!(j["totals"]["models"][0]["model"], "m");
}

#[test]
fn running_totals_of_cost_and_models_are_not_summed() {
    // Claude's total_cost_usd and modelUsage grow over the turns of one process.
    let tc = |cost: f64, input: u64| {
        json!({"event": "turn_complete", "costUsd": cost, "usage": {"inputTokens": 1, "outputTokens": 1},
               "modelUsage": {"big": {"inputTokens": input, "outputTokens": 2, "costUsd": cost, "contextWindow": 1000}}})
    };
    let st = reduce(&[
        text("a"),
        tc(0.5, 10),
        text("b"),
        tc(0.75, 25),
        text("c"),
        tc(0.25, 4),
    ]);
    let j = js(&st);
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(turns[0]["costUsd"], 0.5);
    assert_eq!(turns[1]["costUsd"], 0.25);
    assert_eq!(turns[1]["tokens"]["inputTokens"], 15);
    // the third report is lower: a new run, counted whole
    assert_eq!(turns[2]["costUsd"], 0.25);
    assert_eq!(turns[2]["tokens"]["inputTokens"], 4);
    let t = &j["totals"]["sessions"][0];
    assert_eq!(t["costUsd"], 1.0);
    assert_eq!(t["inputTokens"], 29);
    assert_eq!(t["models"][0]["costUsd"], 1.0);
    assert_eq!(t["context"]["windowTokens"], 1000);
}

#[test]
fn acp_turn_figures_are_each_prompt_s_own() {
    // Wire fact: ACP's answer to a prompt reports that prompt's usage (claude-agent-acp's
    // PromptResponse `usage`, Gemini CLI's `_meta.quota` per model). A Gemini CLI session of
    // three prompts, the second cancelled: the answers report 11,556 / 5 and then 11,649 / 12,
    // the third a request whose context already holds the first prompt, not a running total.
    let tc = |input: u64, output: u64| {
        json!({"event": "turn_complete", "provider": "acp", "subtype": "end_turn", "stopReason": "end_turn",
               "usage": {"inputTokens": input, "outputTokens": output},
               "modelUsage": {"gemini-3.8-flash": {"inputTokens": input, "outputTokens": output}}})
    };
    let log = |provider: &str| {
        let mut log = vec![
            json!({"event": "turn_start"}),
            text("Hi."),
            tc(11556, 5),
            json!({"event": "turn_start"}),
            json!({"event": "turn_complete", "subtype": "cancelled", "stopReason": "cancelled"}),
            json!({"event": "turn_start"}),
            text("Yes."),
            tc(11649, 12),
        ];
        for e in &mut log {
            e["provider"] = json!(provider);
        }
        log
    };
    let j = js(&reduce(&log("acp")));
    let turns = &j["tree"]["sessions"][0]["turns"];
    let io = |t: &Value| (t["inputTokens"].clone(), t["outputTokens"].clone());
    assert_eq!(io(&turns[0]["tokens"]), (json!(11556), json!(5)));
    assert_eq!(io(&turns[1]["tokens"]), (json!(0), json!(0)));
    assert_eq!(io(&turns[2]["tokens"]), (json!(11649), json!(12)));
    let t = &j["totals"]["sessions"][0];
    assert_eq!(io(t), (json!(23205), json!(17)));
    assert_eq!(t["models"][0]["model"], "gemini-3.8-flash");
    assert_eq!(io(&t["models"][0]), (json!(23205), json!(17)));
    assert_eq!(io(&j["totals"]["all"]), (json!(23205), json!(17)));
    // The same figures from Claude Code are running totals of its process.
    let j = js(&reduce(&log("claude")));
    assert_eq!(
        io(&j["tree"]["sessions"][0]["turns"][2]["tokens"]),
        (json!(93), json!(7))
    );
    assert_eq!(io(&j["totals"]["all"]), (json!(11649), json!(12)));
}

#[test]
fn an_acp_turn_s_own_cost_and_api_time_are_not_differences() {
    // The rule covers all of a turn_complete's figures: an own cost adds up, and so does an
    // own API time.
    let tc = |cost: f64, api: u64| json!({"event": "turn_complete", "provider": "acp", "costUsd": cost, "durationApiMs": api});
    let j = js(&reduce(&[
        text("a"),
        tc(0.5, 300),
        text("b"),
        tc(0.25, 200),
    ]));
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(
        (&turns[1]["costUsd"], &turns[1]["durationApiMs"]),
        (&json!(0.25), &json!(200))
    );
    assert_eq!(j["totals"]["all"]["costUsd"], 0.75);
    assert_eq!(j["totals"]["all"]["durationApiMs"], 500);
}

#[test]
fn session_running_token_totals_count_once() {
    // Codex repeats the same usage line; `total` is the session's running total.
    let u = |i: u64, total: u64| json!({"event": "usage_update", "stepUsage": {"input_tokens": i}, "total": {"inputTokens": total, "outputTokens": 0}, "contextWindow": 100});
    let st = reduce(&[
        json!({"event": "turn_start", "model": "gpt"}),
        u(10, 10),
        u(10, 10),
        u(7, 17),
        json!({"event": "turn_complete"}),
        json!({"event": "turn_start"}),
        u(5, 22),
        json!({"event": "turn_complete"}),
    ]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["tokens"]["inputTokens"],
        17
    );
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][1]["tokens"]["inputTokens"],
        5
    );
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 22);
    assert_eq!(
        j["totals"]["models"][0],
        json!({"model": "gpt", "inputTokens": 22, "outputTokens": 0, "cacheReadTokens": 0, "cacheCreationTokens": 0, "reasoningTokens": 0})
    );
}

#[test]
fn a_codex_turn_s_own_model_usage_counts_once_beside_the_running_total() {
    // Codex's turn_complete `modelUsage` is the turn's own usage under its model
    // (testdata/codex-app-server/two-prompts.jsonl): the running `total` of its usage_update
    // counts the same tokens, which must not count twice; the turn's model is the one named.
    let u = |i: u64, total: u64| json!({"event": "usage_update", "provider": "codex", "stepUsage": {"input_tokens": i}, "total": {"inputTokens": total, "outputTokens": 1}});
    let tc = |input: u64| json!({"event": "turn_complete", "provider": "codex", "usage": {"inputTokens": input, "outputTokens": 1}, "modelUsage": {"gpt-5.5": {"inputTokens": input, "outputTokens": 1}}});
    let j = js(&reduce(&[
        json!({"event": "session_init", "provider": "codex", "model": "gpt-5.5"}),
        json!({"event": "turn_start", "provider": "codex"}),
        u(10, 10),
        tc(10),
        json!({"event": "turn_start", "provider": "codex"}),
        u(7, 17),
        tc(7),
    ]));
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(turns[0]["tokens"]["inputTokens"], 10);
    assert_eq!(turns[1]["tokens"]["inputTokens"], 7);
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 17);
    assert_eq!(j["totals"]["all"]["inputTokens"], 17);
    let models = j["totals"]["models"].as_array().unwrap();
    assert_eq!(models.len(), 1, "{models:?}");
    assert_eq!(
        (&models[0]["model"], &models[0]["inputTokens"]),
        (&json!("gpt-5.5"), &json!(17))
    );
    // Without a running total (a session file that reports none), the turns' own add up.
    let j = js(&reduce(&[
        json!({"event": "turn_start", "provider": "codex"}),
        tc(10),
        json!({"event": "turn_start", "provider": "codex"}),
        tc(7),
    ]));
    assert_eq!(j["totals"]["all"]["inputTokens"], 17);
    assert_eq!(j["totals"]["models"][0]["inputTokens"], 17);
}

#[test]
fn requests_own_costs_add_up_when_no_running_total_is_reported() {
    // OpenCode: each step's cost, one per message (a repeated line counts once, its last).
    let step = |m: &str, cost: f64| {
        json!({"event": "usage_update", "messageId": m,
               "stepUsage": {"input_tokens": 1, "output_tokens": 2, "cost": cost}})
    };
    let st = reduce(&[
        text("a"),
        step("m1", 0.25),
        step("m1", 0.5),
        step("m2", 0.125),
    ]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["costUsd"], 0.625,
        "the running turn"
    );
    assert_eq!(j["totals"]["sessions"][0]["costUsd"], 0.625);
    let st = reduce(&[
        text("a"),
        step("m1", 0.5),
        step("m2", 0.125),
        json!({"event": "turn_complete"}),
        text("b"),
        step("m3", 1.0),
        json!({"event": "turn_complete"}),
    ]);
    let j = js(&st);
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(
        (&turns[0]["costUsd"], &turns[1]["costUsd"]),
        (&json!(0.625), &json!(1.0))
    );
    assert_eq!(j["totals"]["all"]["costUsd"], 1.625);
    // A running total of the cost, when reported, is the turn's cost.
    let st = reduce(&[
        text("a"),
        step("m1", 0.5),
        json!({"event": "turn_complete", "costUsd": 0.75}),
    ]);
    assert_eq!(js(&st)["totals"]["all"]["costUsd"], 0.75);
}

#[test]
fn a_subagents_usage_counts_once() {
    // Its requests belong to the turn; Claude's per-model running totals include them.
    let sub = |m: &str, n: u64| {
        json!({"event": "usage_update", "messageId": m, "parentCallId": "A",
               "stepUsage": {"input_tokens": n, "output_tokens": 1}})
    };
    let log = [
        json!({"event": "tool_invocation", "callId": "A", "kind": "think", "toolName": "Task", "input": {}}),
        usage("m1", 10),
        sub("s1", 5),
        sub("s1", 5),
        json!({"event": "subagent_complete", "callId": "A", "totalTokens": 999}),
    ];
    let st = reduce(&log);
    assert_eq!(
        js(&st)["totals"]["all"]["inputTokens"],
        15,
        "while the turn runs"
    );
    let mut done = log.to_vec();
    done.push(
        json!({"event": "turn_complete", "usage": {"inputTokens": 10, "outputTokens": 1},
                     "modelUsage": {"m": {"inputTokens": 15, "outputTokens": 2}}}),
    );
    let j = js(&reduce(&done));
    assert_eq!(j["totals"]["all"]["inputTokens"], 15);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["tokens"]["inputTokens"],
        15
    );
}

#[test]
fn the_running_turn_shows_its_estimate() {
    let st = reduce(&[text("x"), usage("m1", 10), usage("m2", 3)]);
    let j = js(&st);
    assert_eq!(
        j["tree"]["sessions"][0]["turns"][0]["tokens"]["inputTokens"],
        13
    );
    assert_eq!(j["totals"]["sessions"][0]["inputTokens"], 13);
}

#[test]
fn api_time_is_a_running_total_of_the_run() {
    // Recorded: Claude Code reports 37 ms, then 73 ms (= 37 + 36) for the second prompt.
    let j = js(&reduce_capture("claude-sdk/two-prompts.events.jsonl"));
    let turns = &j["tree"]["sessions"][0]["turns"];
    assert_eq!(turns[0]["durationApiMs"], 37);
    assert_eq!(turns[1]["durationApiMs"], 36);
    assert_eq!(j["totals"]["all"]["durationApiMs"], 73);
    // A lower report starts a new run, counted whole.
    let tc = |ms: u64| json!({"event": "turn_complete", "durationApiMs": ms});
    let j = js(&reduce(&[
        text("a"),
        tc(50),
        text("b"),
        tc(80),
        text("c"),
        tc(20),
    ]));
    let own: Vec<&Value> = (0..3)
        .map(|i| &j["tree"]["sessions"][0]["turns"][i]["durationApiMs"])
        .collect();
    assert_eq!(own, [&json!(50), &json!(30), &json!(20)]);
    assert_eq!(j["totals"]["all"]["durationApiMs"], 100);
}
