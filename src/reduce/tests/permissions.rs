//! Rules 5 and 6: permission requests and answers, and the calls they announce.

use super::*;

#[test]
fn rule5_and_rule6_permission_request_and_answer() {
    let req = json!({"event": "permission_request", "requestId": "r1", "toolName": "Write",
                     "toolKind": "edit", "toolInput": {"file_path": "n.md"}, "toolUseId": "c1",
                     "options": [{"optionId": "allow"}]});
    let st = reduce(&[call("c1"), req.clone()]);
    let j = js(&st);
    assert_eq!(j["entries"][1]["type"], "permission_request");
    assert!(j["entries"][1].get("response").is_none());
    assert_eq!(j["entries"][1]["options"][0]["optionId"], "allow");
    assert_eq!(
        j["pending"]["sessions"][0]["permissions"][0]["requestId"],
        "r1"
    );
    assert_eq!(j["entries"][0]["permission"], json!({"requestId": "r1"}));

    let st = reduce(&[
        call("c1"),
        req,
        json!({"event": "permission_response", "requestId": "r1", "decision": "deny",
               "allowed": false, "message": "no"}),
        json!({"event": "tool_completion", "callId": "c1", "status": "failed", "isError": true}),
        // the turn reports the same denial again: counted once
        json!({"event": "turn_complete", "permissionDenials": [{"tool_use_id": "c1"}]}),
    ]);
    let j = js(&st);
    let answer = &j["entries"][1]["response"];
    assert_eq!(
        (answer["decision"].clone(), answer["allowed"].clone()),
        (json!("deny"), json!(false))
    );
    assert_eq!(answer["seq"], 3);
    assert!(j["pending"]["sessions"][0]["permissions"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(j["entries"][0]["permission"]["decision"], "deny");
    assert_eq!(j["entries"][0]["denied"], true);
    let t = &j["totals"]["sessions"][0];
    assert_eq!(
        (
            t["permissionRequests"].clone(),
            t["permissionDenials"].clone()
        ),
        (json!(1), json!(1))
    );
}

#[test]
fn rule6_denials_come_from_the_decision_and_count_once() {
    let req = |r: &str, c: &str| {
        json!({"event": "permission_request", "requestId": r, "toolName": "Write",
               "toolKind": "edit", "toolInput": {}, "toolUseId": c})
    };
    let answer = |r: &str, d: &str, allowed: bool| json!({"event": "permission_response", "requestId": r, "decision": d, "allowed": allowed});
    let st = reduce(&[
        call("c1"),
        req("r1", "c1"),
        answer("r1", "deny_always", false),
        // The same denial again, and the turn's list of them: one denial.
        answer("r1", "deny", false),
        call("c2"),
        req("r2", "c2"),
        // Withdrawn, and a refusal the decision does not state: not denials.
        answer("r2", "cancelled", false),
        req("r3", "none"),
        answer("r3", "allow", false),
        // A request of no known call, denied twice: one denial.
        req("r4", "ghost"),
        answer("r4", "deny", false),
        answer("r4", "deny", false),
        json!({"event": "turn_complete", "permissionDenials": [{"tool_use_id": "c1"}]}),
    ]);
    let j = js(&st);
    let t = &j["totals"]["sessions"][0];
    assert_eq!(t["permissionRequests"], 4);
    assert_eq!(t["permissionDenials"], 2);
    assert_eq!(j["entries"][0]["denied"], true);
    assert!(j["entries"][2].get("denied").is_none());
}

#[test]
fn rule3_tool_names_lose_their_mcp_prefix_and_keep_the_server_apart() {
    let st = reduce(&[
        json!({"event": "tool_invocation", "callId": "c1", "kind": "read", "toolName": "mcp__acp__Read", "input": {}}),
        json!({"event": "tool_invocation", "callId": "c2", "kind": "mcp", "toolName": "mcp__docs__search",
               "mcpServer": "docs", "mcpTool": "search", "input": {}}),
        json!({"event": "permission_request", "requestId": "r", "toolName": "mcp__acp__Write",
               "toolKind": "edit", "toolInput": {}, "toolUseId": "c3"}),
        done("c3"),
        json!({"event": "tool_invocation", "callId": "c4", "kind": "execute", "toolName": "Bash", "input": {}}),
    ]);
    let e = entries(&st);
    assert_eq!(
        (&e[0]["toolName"], &e[0]["mcpServer"], &e[0]["mcpTool"]),
        (&json!("Read"), &json!("acp"), &json!("Read"))
    );
    assert_eq!(
        (&e[1]["toolName"], &e[1]["mcpServer"]),
        (&json!("search"), &json!("docs"))
    );
    // RULE 5 keeps the request's name as the agent gave it; its call takes it cleaned.
    assert_eq!(e[2]["toolName"], "mcp__acp__Write");
    let c3 = e
        .iter()
        .find(|x| x["type"] == "tool_call" && x["callId"] == "c3")
        .unwrap();
    assert_eq!(
        (&c3["toolName"], &c3["mcpServer"]),
        (&json!("Write"), &json!("acp"))
    );
    assert_eq!(e[4]["toolName"], "Bash");
    assert!(e[4].get("mcpServer").is_none());
    let p = &js(&st)["pending"]["sessions"][0]["tools"];
    assert_eq!(p[0]["toolName"], "Read");
}

#[test]
fn rule4_whatever_the_order_nothing_is_lost() {
    let invoke = json!({"event": "tool_invocation", "callId": "c", "kind": "edit", "toolName": "Write",
                        "title": "notes.md", "input": {"file_path": "notes.md"}});
    let update = json!({"event": "tool_update", "callId": "c", "status": "writing", "elapsedMs": 4,
                        "locations": ["notes.md"]});
    let complete = json!({"event": "tool_completion", "callId": "c", "status": "completed",
                          "output": "ok", "timestamp": "2026-01-01T00:00:02Z", "durationMs": 7});
    // A later, emptier completion: a status alone.
    let again = json!({"event": "tool_completion", "callId": "c", "status": "completed"});
    let orders = [
        vec![
            invoke.clone(),
            update.clone(),
            complete.clone(),
            again.clone(),
        ],
        vec![
            update.clone(),
            invoke.clone(),
            complete.clone(),
            again.clone(),
        ],
        vec![
            complete.clone(),
            update.clone(),
            invoke.clone(),
            again.clone(),
        ],
        vec![
            update.clone(),
            complete.clone(),
            again.clone(),
            invoke.clone(),
        ],
    ];
    for (n, order) in orders.into_iter().enumerate() {
        let st = reduce(&order);
        let e = entries(&st);
        assert_eq!(e.len(), 1, "order {n}");
        let c = &e[0];
        for (k, v) in [
            ("toolName", json!("Write")),
            ("kind", json!("edit")),
            ("title", json!("notes.md")),
            ("input", json!({"file_path": "notes.md"})),
            ("status", json!("completed")),
            ("output", json!("ok")),
            ("locations", json!(["notes.md"])),
            ("elapsedMs", json!(4)),
            ("progress", json!("writing")),
            ("endedAt", json!("2026-01-01T00:00:02Z")),
            ("durationMs", json!(7)),
        ] {
            assert_eq!(c[k], v, "order {n}: {k}");
        }
        let t = &js(&st)["totals"]["sessions"][0];
        assert_eq!(t["tools"], 1, "order {n}: counted once");
        assert_eq!(t["toolsByKind"], json!({"edit": 1}), "order {n}");
        assert!(js(&st)["pending"]["sessions"][0]["tools"]
            .as_array()
            .unwrap()
            .is_empty());
    }
    // A permission before its call: the call takes what the request says of it.
    let st = reduce(&[
        json!({"event": "permission_request", "requestId": "r", "toolName": "Write", "toolKind": "edit",
               "toolInput": {"file_path": "a"}, "toolUseId": "c", "title": "Write a"}),
        json!({"event": "permission_response", "requestId": "r", "decision": "allow", "allowed": true}),
        json!({"event": "tool_invocation", "callId": "c", "toolName": "Write", "kind": "edit", "input": {"file_path": "a"}}),
    ]);
    let c = entries(&st)
        .into_iter()
        .find(|x| x["type"] == "tool_call")
        .unwrap();
    assert_eq!(
        c["permission"],
        json!({"requestId": "r", "decision": "allow", "allowed": true})
    );
    assert_eq!(c["title"], "Write a");
}

#[test]
fn a_call_announced_only_by_its_permission_request_takes_its_name() {
    let st = reduce(&[
        json!({"event": "permission_request", "requestId": "0", "toolName": "run_shell_command",
               "toolKind": "execute", "toolInput": {}, "toolUseId": "c9", "title": "date"}),
        json!({"event": "permission_response", "requestId": "0", "decision": "allow", "allowed": true}),
        done("c9"),
    ]);
    let e = &entries(&st)[1];
    assert_eq!(e["toolName"], "run_shell_command");
    assert_eq!(e["kind"], "execute");
    assert_eq!(
        e["permission"],
        json!({"requestId": "0", "decision": "allow", "allowed": true})
    );
}
