//! `--view summary`: a table per session, for people.

use super::state::*;
use std::fmt::Write as _;

fn cost(c: Option<f64>) -> String {
    match c {
        Some(c) => format!("${c:.4}"),
        None => "-".into(),
    }
}

fn duration(ms: Option<u64>) -> String {
    match ms {
        None => "-".into(),
        Some(ms) if ms < 1000 => format!("{ms} ms"),
        Some(ms) if ms < 60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        Some(ms) => format!("{}m {:02}s", ms / 60_000, ms / 1000 % 60),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Lays out rows: the first column left-aligned, the others right-aligned, two spaces apart.
fn table(rows: &[Vec<String>], out: &mut String) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in rows {
        let mut line = String::from(" ");
        for (c, cell) in r.iter().enumerate() {
            let pad = width[c] - cell.chars().count();
            line.push(' ');
            if c == 0 || c == 1 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The summary of every session, in order of appearance.
pub fn render(st: &State) -> String {
    let mut out = String::new();
    if st.tree.sessions.is_empty() {
        out.push_str("no sessions\n");
        return out;
    }
    for (s, sess) in st.tree.sessions.iter().enumerate() {
        let t = &st.totals.sessions[s];
        let p = &st.pending.sessions[s];
        if s > 0 {
            out.push('\n');
        }
        let id = if sess.session_id.is_empty() {
            "(no session id)"
        } else {
            &sess.session_id
        };
        let _ = writeln!(out, "session {id}");
        let about: Vec<&str> = [&sess.provider, &sess.model, &sess.cwd]
            .into_iter()
            .filter_map(|x| x.as_deref())
            .collect();
        if !about.is_empty() {
            let _ = writeln!(out, "  {}", about.join(" · "));
        }
        let mut rows = vec![[
            "turn",
            "status",
            "tools",
            "input",
            "output",
            "cache read",
            "cache write",
            "cost",
            "time",
        ]
        .map(String::from)
        .to_vec()];
        for turn in &sess.turns {
            let mut status = format!("{:?}", turn.status).to_lowercase();
            if turn.interrupted && turn.status != TurnStatus::Cancelled {
                status.push_str(" (interrupted)");
            }
            rows.push(vec![
                turn.index.to_string(),
                status,
                turn.tools.to_string(),
                turn.tokens.input_tokens.to_string(),
                turn.tokens.output_tokens.to_string(),
                turn.tokens.cache_read_tokens.to_string(),
                turn.tokens.cache_creation_tokens.to_string(),
                cost(turn.cost_usd),
                duration(turn.duration_ms),
            ]);
        }
        let c = &t.counts;
        let mut turns = plural(c.turns, "turn", "turns");
        if c.failed_turns > 0 {
            let _ = write!(turns, " ({} failed)", c.failed_turns);
        }
        rows.push(vec![
            "total".into(),
            turns,
            c.tools.to_string(),
            c.tokens.input_tokens.to_string(),
            c.tokens.output_tokens.to_string(),
            c.tokens.cache_read_tokens.to_string(),
            c.tokens.cache_creation_tokens.to_string(),
            cost(c.cost_usd),
            duration(Some(c.duration_ms)),
        ]);
        table(&rows, &mut out);
        let kinds: Vec<String> = c
            .tools_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let mut tools = plural(c.tools, "tool call", "tool calls");
        if !kinds.is_empty() {
            let _ = write!(tools, " ({})", kinds.join(", "));
        }
        let _ = writeln!(
            out,
            "  {tools}; {} parallel, {} failed, {} cancelled; {}",
            c.parallel_tools,
            c.failed_tools,
            c.cancelled_tools,
            plural(c.subagents, "subagent", "subagents"),
        );
        let _ = writeln!(
            out,
            "  {}, {}; {} ({} denied); {}",
            plural(c.errors, "error", "errors"),
            plural(c.warnings, "warning", "warnings"),
            plural(
                c.permission_requests,
                "permission request",
                "permission requests"
            ),
            c.permission_denials,
            plural(c.compactions, "compaction", "compactions"),
        );
        if let Some(ctx) = &t.context {
            match ctx.window_tokens {
                Some(w) if w > 0 => {
                    let pct = ctx.used_tokens as f64 * 100.0 / w as f64;
                    let _ = writeln!(
                        out,
                        "  context: {} of {} tokens ({pct:.1}%)",
                        ctx.used_tokens, w
                    );
                }
                _ => {
                    let _ = writeln!(out, "  context: {} tokens", ctx.used_tokens);
                }
            }
        }
        let mut pending = Vec::new();
        if let Some(k) = p.turn {
            pending.push(format!("turn {k} running"));
        }
        let names = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(", ");
        if !p.tools.is_empty() {
            pending.push(format!(
                "{} ({})",
                plural(p.tools.len() as u64, "tool running", "tools running"),
                names(
                    &mut p
                        .tools
                        .iter()
                        .map(|x| { x.tool_name.clone().unwrap_or_else(|| x.call_id.clone()) })
                )
            ));
        }
        if !p.permissions.is_empty() {
            pending.push(format!(
                "{} ({})",
                plural(
                    p.permissions.len() as u64,
                    "permission request unanswered",
                    "permission requests unanswered"
                ),
                names(&mut p.permissions.iter().map(|x| x.tool_name.clone()))
            ));
        }
        if !pending.is_empty() {
            let _ = writeln!(out, "  pending: {}", pending.join("; "));
        }
        let mut now = Vec::new();
        if let Some(m) = &p.model {
            now.push(format!("model {m}"));
        }
        if let Some(m) = &p.mode {
            now.push(format!("mode {m}"));
        }
        if let Some(plan) = &p.plan {
            if let Ok(items) = serde_json::from_str::<Vec<serde_json::Value>>(plan.entries.get()) {
                let done = items.iter().filter(|i| i["status"] == "completed").count();
                match &plan.status {
                    Some(st) => now.push(format!("plan {done}/{} done, {st}", items.len())),
                    None => now.push(format!("plan {done}/{} done", items.len())),
                }
            }
        }
        if !now.is_empty() {
            let _ = writeln!(out, "  now: {}", now.join(", "));
        }
    }
    if st.tree.sessions.len() > 1 {
        let a = &st.totals.all;
        let _ = writeln!(
            out,
            "\n{} sessions: {}, {}, {} input / {} output tokens, cost {}",
            st.tree.sessions.len(),
            plural(a.turns, "turn", "turns"),
            plural(a.tools, "tool call", "tool calls"),
            a.tokens.input_tokens,
            a.tokens.output_tokens,
            cost(a.cost_usd)
        );
    }
    out
}
