//! `--format html`: one self-contained HTML page to read or share in a browser.
//!
//! Inline CSS, no script, nothing fetched. A summary of the sessions (agent, model, turns,
//! tokens, cost, duration) heads the page: it is written last, when it is known, and shown
//! first by the layout (`order`). Tool calls fold open on their output; diffs are coloured;
//! thinking is folded; a subagent's traffic is indented under its call; errors and denials
//! stand out. Everything the agent or a tool wrote is escaped: it is text, never markup.

use super::model::{Block, Card, Footer, Header, PartialKind, Status, Tokens, Tone, ToolHead};
use super::term::{agent_name, context, cost, decision_word, glyph, status_word, Layout};
use super::text::{duration, one_line, thousands};
use std::collections::BTreeSet;
use std::io::{self, Write};

/// Output lines shown before `… N more lines`, unless `--full` (the page folds them anyway).
const MAX_LINES: usize = 400;

const STYLE: &str = r#"
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--mute:#656d76;--line:#d0d7de;--box:#f6f8fa;
--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--add:#dafbe1;--del:#ffebe9;--hunk:#ddf4ff;--me:#eef6ff}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--mute:#8d96a0;--line:#30363d;
--box:#161b22;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--add:#12261e;--del:#25171c;--hunk:#121d2f;--me:#132030}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{display:flex;flex-direction:column;gap:.45rem;max-width:60rem;margin:0 auto;padding:1rem}
main>*,details,summary,pre,code,p,div{min-width:0;overflow-wrap:anywhere;word-break:break-word}
pre{margin:.25rem 0;padding:.5rem .65rem;background:var(--box);border:1px solid var(--line);border-radius:6px;
white-space:pre-wrap;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--box);padding:0 .25rem;border-radius:4px}
.summary{order:-1;border:1px solid var(--line);border-radius:8px;padding:.6rem .9rem;background:var(--box)}
.summary h1{font-size:1.15rem;margin:0 0 .3rem}
.summary dl{display:flex;flex-wrap:wrap;gap:.2rem 1.4rem;margin:0}.summary dt{color:var(--mute);font-size:.8rem}.summary dd{margin:0}
.session{border-top:2px solid var(--line);padding-top:.4rem;margin-top:.6rem}.session h2{font-size:1.05rem;margin:0}
.meta,.mute{color:var(--mute);font-size:.85rem}
.prompt{display:flex;gap:.5rem;background:var(--me);border-left:3px solid #0969da;border-radius:6px;padding:.35rem .6rem}
.prompt pre{margin:0;background:none;border:0;padding:0;font:inherit;white-space:pre-wrap}
.synth{font-size:.85rem}
.text{white-space:pre-wrap}
.tool{border:1px solid var(--line);border-radius:6px;padding:.3rem .6rem}
.head b{font-family:ui-monospace,monospace}.glyph{display:inline-block;min-width:1.2em;color:var(--mute)}
details>summary{cursor:pointer}
.ok{color:var(--ok)}.bad{color:var(--bad);font-weight:600}.warn{color:var(--warn)}
.error{border:1px solid var(--bad);border-left-width:4px;border-radius:6px;padding:.3rem .6rem;color:var(--bad)}
.error.warning{border-color:var(--warn);color:var(--warn)}
.diff .add{background:var(--add);display:block}.diff .del{background:var(--del);display:block}.diff .hunk{background:var(--hunk);display:block;color:var(--mute)}
.plan{margin:.2rem 0;padding-left:1.4rem}.plan .done{text-decoration:line-through;color:var(--mute)}.plan .now{font-weight:600}
.turn{border-top:1px dashed var(--line);padding-top:.35rem;font-size:.9rem}
.turn.failed{border-top:2px solid var(--bad)}.turn.cancelled{border-top:2px solid var(--warn)}
.nest{margin-left:calc(var(--d)*1.1rem);padding-left:.6rem;border-left:2px solid var(--line)}
.compact{text-align:center;color:var(--mute);font-size:.85rem}
"#;

#[derive(Default)]
struct Summary {
    agents: BTreeSet<String>,
    models: BTreeSet<String>,
    sessions: BTreeSet<String>,
    turns: u64,
    failed: u64,
    tokens: Tokens,
    /// The sum of the turns' costs (each turn's share of a running total).
    cost: Option<f64>,
    /// Turns that used tokens and have no cost (an agent that reports none, a model without a
    /// price): `cost` is then a lower bound, and says so.
    uncosted: u64,
    duration_ms: Option<u64>,
    tools: u64,
    errors: u64,
    denials: u64,
    /// Input lines that could not be read, `FILE:LINE:COL: why`.
    unreadable: Vec<String>,
    /// Approvals cancelled (not denied: nobody said no).
    cancels: u64,
}

pub struct Html<W: Write> {
    w: W,
    lay: Layout,
    started: bool,
    sum: Summary,
}

/// `s` as HTML text: no markup gets through.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

impl<W: Write> Html<W> {
    pub fn new(w: W, lay: Layout) -> Self {
        Html {
            w,
            lay,
            started: false,
            sum: Summary::default(),
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn begin(&mut self) -> io::Result<()> {
        if !self.started {
            self.started = true;
            write!(
                self.w,
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
                 <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
                 <title>insights transcript</title><style>{STYLE}</style></head>\n<body><main>\n"
            )?;
        }
        Ok(())
    }

    /// Writes an element at `depth`: a subagent's traffic is indented under its call.
    fn put(&mut self, depth: usize, html: &str) -> io::Result<()> {
        self.begin()?;
        if depth == 0 {
            writeln!(self.w, "{html}")
        } else {
            writeln!(
                self.w,
                "<div class=\"nest\" style=\"--d:{}\">{html}</div>",
                depth.min(8)
            )
        }
    }

    /// `text` in a `<pre>`, cut after [`MAX_LINES`] lines unless `--full`.
    fn pre(&self, class: &str, text: &str) -> String {
        let text = text.trim_matches('\n');
        let lines: Vec<&str> = text.split('\n').collect();
        let (shown, more) = if self.lay.full || lines.len() <= MAX_LINES + 1 {
            (lines.len(), 0)
        } else {
            (MAX_LINES, lines.len() - MAX_LINES)
        };
        let mut out = format!("<pre class=\"{class}\">");
        if class == "diff" {
            for l in &lines[..shown] {
                let c = match l.as_bytes().first() {
                    Some(b'+') if !l.starts_with("+++") => "add",
                    Some(b'-') if !l.starts_with("---") => "del",
                    Some(b'@') => "hunk",
                    _ => "",
                };
                if c.is_empty() {
                    out.push_str(&format!("{}\n", esc(l)));
                } else {
                    out.push_str(&format!("<span class=\"{c}\">{}</span>", esc(l)));
                }
            }
        } else {
            out.push_str(&esc(&lines[..shown].join("\n")));
        }
        out.push_str("</pre>");
        if more > 0 {
            out.push_str(&format!(
                "<p class=\"mute\">… {} more lines (--full shows all)</p>",
                thousands(more as u64)
            ));
        }
        out
    }

    fn head(&self, h: &ToolHead) -> String {
        let mut t = format!(
            "<span class=\"glyph\">{}</span><b>{}</b>",
            esc(glyph(&h.kind)),
            esc(&h.name)
        );
        let first = h.salient.split('\n').next().unwrap_or("");
        if !first.is_empty() {
            t.push_str(&format!(" <code>{}</code>", esc(first)));
            if h.salient.contains('\n') {
                t.push_str(" …");
            }
        }
        if let Some(title) = &h.title {
            t.push_str(&format!(" <i class=\"mute\">{}</i>", esc(&one_line(title))));
        }
        t
    }

    /// The call's head again when this block does not follow the call's previous one.
    fn card_head(&self, card: Option<&Card>) -> String {
        match card {
            Some(c) if !c.attached => {
                format!("<span class=\"head mute\">↳ {}</span> ", self.head(&c.head))
            }
            _ => String::new(),
        }
    }

    pub fn block(&mut self, b: &Block) -> io::Result<()> {
        match b {
            Block::Header(h) => self.header(h),
            Block::SessionChange { changes, .. } => {
                let t = format!("<p class=\"meta\">· {}</p>", esc(&changes.join(" · ")));
                self.put(0, &t)
            }
            Block::Prompt {
                depth,
                text,
                synthetic,
            } => {
                // A synthetic input is not the user's: a dimmed note that folds open, never a
                // `❯` prompt.
                let t = if *synthetic {
                    format!(
                        "<details class=\"synth mute\"><summary>· {}</summary>{}</details>",
                        esc(&super::text::truncate(&one_line(text), 100)),
                        self.pre("input", text)
                    )
                } else {
                    format!(
                        "<div class=\"prompt\"><span class=\"mute\">❯</span><pre>{}</pre></div>",
                        esc(text.trim_end())
                    )
                };
                self.put(*depth, &t)
            }
            Block::Text { depth, text } => {
                let t = format!("<div class=\"text\">{}</div>", esc(text.trim_end()));
                self.put(*depth, &t)
            }
            Block::Thinking { depth, text } => {
                let open = if self.lay.thinking { " open" } else { "" };
                let t = format!(
                    "<details class=\"thinking\"{open}><summary class=\"mute\">∴ Thinking</summary>{}</details>",
                    self.pre("thought", text)
                );
                self.put(*depth, &t)
            }
            Block::Partial { depth, kind, text } => {
                let what = match kind {
                    PartialKind::Text => "text".to_string(),
                    PartialKind::Thinking => "thinking".to_string(),
                    PartialKind::ToolInput(t) if t.is_empty() => "tool input".to_string(),
                    PartialKind::ToolInput(t) => format!("input for {t}"),
                };
                let t = format!(
                    "<div class=\"warn\">⋯ unfinished {} (the stream stopped here){}</div>",
                    esc(&what),
                    self.pre("partial", text)
                );
                self.put(*depth, &t)
            }
            Block::ToolStart { depth, head } => {
                self.sum.tools += 1;
                let mut t = format!(
                    "<div class=\"tool\"><div class=\"head\">{}</div>",
                    self.head(head)
                );
                if head.salient.contains('\n') {
                    t.push_str(&format!(
                        "<details><summary class=\"mute\">input</summary>{}</details>",
                        self.pre("input", &head.salient)
                    ));
                }
                t.push_str("</div>");
                self.put(*depth, &t)
            }
            Block::ToolEnd {
                depth,
                card,
                status,
                duration_ms,
                output,
                errors,
                decided,
            } => {
                let (g, w) = status_word(*status);
                let class = status_class(*status);
                let mut s = self.card_head(Some(card));
                if *decided {
                    s.push_str("<span class=\"mute\">output</span>");
                } else {
                    s.push_str(&format!("<span class=\"{class}\">{g} {w}</span>"));
                    if let Some(d) = duration_ms {
                        s.push_str(&format!(" · {}", duration(*d)));
                    }
                }
                let body = [output.trim_end(), errors.trim_end()]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                if body.trim().is_empty() && *decided {
                    return Ok(());
                }
                let t = if body.trim().is_empty() {
                    format!("<div class=\"result\">{s}</div>")
                } else {
                    let n = body.lines().count();
                    s.push_str(&format!(
                        " · <span class=\"mute\">{} line{}</span>",
                        thousands(n as u64),
                        if n == 1 { "" } else { "s" }
                    ));
                    let open = if *status == Status::Ok { "" } else { " open" };
                    format!(
                        "<details class=\"result\"{open}><summary>{s}</summary>{}</details>",
                        self.pre("output", &body)
                    )
                };
                self.put(*depth, &t)
            }
            Block::SubagentDone {
                depth,
                card,
                status,
                duration_ms,
                tokens,
                tool_uses,
                summary,
            } => {
                let (g, w) = status_word(*status);
                let mut s = format!(
                    "{}<span class=\"{}\">{g} subagent {}</span>",
                    self.card_head(Some(card)),
                    status_class(*status),
                    if *status == Status::Ok { "done" } else { w }
                );
                if let Some(d) = duration_ms {
                    s.push_str(&format!(" · {}", duration(*d)));
                }
                if let Some(n) = tokens {
                    s.push_str(&format!(" · {} tokens", thousands(*n)));
                }
                if let Some(n) = tool_uses {
                    s.push_str(&format!(
                        " · {n} tool use{}",
                        if *n == 1 { "" } else { "s" }
                    ));
                }
                let t = format!(
                    "<details class=\"result\"><summary>{s}</summary>{}</details>",
                    self.pre("output", summary)
                );
                self.put(*depth, &t)
            }
            Block::Diff {
                depth,
                card,
                path,
                change,
                move_path,
                diff,
                proposed,
            } => {
                let mut s = format!(
                    "{}± <code>{}</code>",
                    self.card_head(card.as_ref()),
                    esc(path)
                );
                if let Some(m) = move_path {
                    s.push_str(&format!(" → <code>{}</code>", esc(m)));
                }
                match change.as_str() {
                    "add" => s.push_str(" <span class=\"ok\">new file</span>"),
                    "delete" => s.push_str(" <span class=\"bad\">deleted</span>"),
                    _ => {}
                }
                if *proposed {
                    s.push_str(" <span class=\"warn\">proposed, not applied</span>");
                }
                let t = match diff {
                    Some(d) => format!(
                        "<details class=\"diff\" open><summary>{s}</summary>{}</details>",
                        self.pre("diff", d)
                    ),
                    None => format!("<div class=\"diff\">{s}</div>"),
                };
                self.put(*depth, &t)
            }
            Block::Permission {
                depth,
                card,
                reason,
                blocked_path,
                suggestions,
            } => {
                let mut s = format!(
                    "{}<span class=\"warn\">? permission requested</span>",
                    self.card_head(Some(card))
                );
                if let Some(r) = reason {
                    s.push_str(&format!(" · {}", esc(&one_line(r))));
                }
                if let Some(p) = blocked_path {
                    s.push_str(&format!(" · path <code>{}</code>", esc(p)));
                }
                for o in suggestions.iter().take(3) {
                    s.push_str(&format!(" · <i class=\"mute\">option: {}</i>", esc(o)));
                }
                self.put(*depth, &format!("<div class=\"perm\">{s}</div>"))
            }
            Block::Decision {
                depth,
                card,
                decision,
                message,
            } => {
                let (g, w, allowed) = decision_word(decision);
                if decision == "cancelled" {
                    self.sum.cancels += 1;
                } else if !allowed {
                    self.sum.denials += 1;
                }
                let class = if allowed { "ok" } else { "bad" };
                let word = if card.is_some() {
                    format!("{g} {w}")
                } else {
                    format!("{g} permission {w}")
                };
                let mut s = format!(
                    "{}<span class=\"{class}\">{}</span>",
                    self.card_head(card.as_ref()),
                    esc(&word)
                );
                if let Some(m) = message {
                    s.push_str(&format!(" · {}", esc(&one_line(m))));
                }
                self.put(*depth, &format!("<div class=\"decision\">{s}</div>"))
            }
            Block::Plan {
                depth,
                card,
                entries,
                explanation,
            } => {
                let mut t = format!("<div class=\"plan-box\">{}", self.card_head(card.as_ref()));
                if card.is_none() {
                    t.push_str("<b>☰ plan</b>");
                }
                if let Some(e) = explanation {
                    t.push_str(&format!("<div class=\"text\">{}</div>", esc(e)));
                }
                t.push_str("<ul class=\"plan\">");
                for (status, content) in entries {
                    let (class, mark) = match status.as_str() {
                        "completed" => ("done", "☑"),
                        "in_progress" => ("now", "▶"),
                        _ => ("", "☐"),
                    };
                    t.push_str(&format!(
                        "<li class=\"{class}\">{mark} {}</li>",
                        esc(content)
                    ));
                }
                t.push_str("</ul></div>");
                self.put(*depth, &t)
            }
            Block::Compaction {
                trigger,
                pre,
                post,
                duration_ms,
            } => {
                let mut t = if trigger == "cleared" {
                    "context cleared".to_string()
                } else {
                    format!("context compacted ({trigger})")
                };
                if let (Some(a), Some(b)) = (pre, post) {
                    t.push_str(&format!(" · {} → {} tokens", thousands(*a), thousands(*b)));
                }
                if let Some(d) = duration_ms {
                    t.push_str(&format!(" · {}", duration(*d)));
                }
                self.put(0, &format!("<p class=\"compact\">┄ {} ┄</p>", esc(&t)))
            }
            Block::Status {
                depth, tone, text, ..
            } => {
                let (class, g) = match tone {
                    Tone::Quiet => ("mute", "·"),
                    Tone::Warn => ("warn", "!"),
                    Tone::Bad => ("bad", "✗"),
                };
                self.put(
                    *depth,
                    &format!("<p class=\"{class}\">{g} {}</p>", esc(text)),
                )
            }
            Block::Error {
                depth,
                warning,
                message,
                details,
            } => {
                if !warning {
                    self.sum.errors += 1;
                }
                let (class, g) = if *warning {
                    ("error warning", "!")
                } else {
                    ("error", "✗")
                };
                let mut t = format!(
                    "<div class=\"{class}\"><b>{g} {}</b>",
                    esc(&one_line(message))
                );
                if !details.is_empty() {
                    t.push_str(&format!(" · <span>{}</span>", esc(&details.join(" · "))));
                }
                t.push_str("</div>");
                self.put(*depth, &t)
            }
            Block::Hook {
                depth,
                name,
                ok,
                outcome,
                output,
                ..
            } => {
                let class = if *ok { "mute" } else { "warn" };
                let mut t = format!(
                    "<div class=\"{class}\">↪ hook {} · {}",
                    esc(name),
                    esc(outcome)
                );
                if !output.trim().is_empty() {
                    t.push_str(&format!(
                        "<details><summary>output</summary>{}</details>",
                        self.pre("output", output)
                    ));
                }
                t.push_str("</div>");
                self.put(*depth, &t)
            }
            Block::Notice { depth, text } => self.put(
                *depth,
                &format!("<p class=\"mute\">· {}</p>", esc(&one_line(text))),
            ),
            Block::Footer(f) => self.footer(f),
        }
    }

    fn header(&mut self, h: &Header) -> io::Result<()> {
        let agent = agent_name(&h.provider).to_owned();
        if !agent.is_empty() {
            self.sum.agents.insert(agent.clone());
        }
        if let Some(m) = &h.model {
            self.sum.models.insert(m.clone());
        }
        if !h.session.is_empty() {
            self.sum.sessions.insert(h.session.clone());
        }
        let mut title = vec![esc(&agent)];
        if let Some(m) = &h.model {
            title.push(esc(m));
        }
        let mut facts = Vec::new();
        if let Some(c) = &h.cwd {
            facts.push(format!("<code>{}</code>", esc(c)));
        }
        if let Some(m) = &h.mode {
            facts.push(format!("permission mode {}", esc(m)));
        }
        if let Some(v) = &h.version {
            facts.push(esc(&format!("{agent} {v}")));
        }
        if !h.session.is_empty() {
            facts.push(format!("session <code>{}</code>", esc(&h.session)));
        }
        let t = format!(
            "<header class=\"session\"><h2>{}</h2><p class=\"meta\">{}</p></header>",
            title.join(" · "),
            facts.join(" · ")
        );
        self.put(0, &t)
    }

    fn footer(&mut self, f: &Footer) -> io::Result<()> {
        let s = &mut self.sum;
        s.turns += 1;
        if !f.ok && f.cancelled.is_none() {
            s.failed += 1;
        }
        if let Some(t) = &f.tokens {
            s.tokens.input += t.input;
            s.tokens.output += t.output;
            s.tokens.cache_read += t.cache_read;
            s.tokens.cache_write += t.cache_write;
        }
        if let Some(d) = f.duration_ms {
            s.duration_ms = Some(s.duration_ms.unwrap_or(0) + d);
        }
        // Each turn's cost is its share (of a running total too): they add up, over sessions.
        match f.cost {
            Some(c) => s.cost = Some(s.cost.unwrap_or(0.0) + c),
            None if f.tokens.as_ref().is_some_and(|t| *t != Tokens::default()) => s.uncosted += 1,
            None => {}
        }
        for m in &f.models {
            if !m.name.is_empty() {
                s.models.insert(m.name.clone());
            }
        }
        let (class, mark, look) = match (f.ok, &f.cancelled) {
            (true, _) => ("turn", "✓", "ok"),
            (false, Some(_)) => ("turn cancelled", "■", "warn"),
            (false, None) => ("turn failed", "✗", "bad"),
        };
        let mut title = format!("<b class=\"{look}\">{mark} Turn {}", f.turn);
        if let Some(w) = &f.cancelled {
            title.push_str(&format!(" {}", esc(w)));
        } else if !f.ok {
            title.push_str(&match &f.subtype {
                Some(st) => format!(" failed ({})", esc(st)),
                None => " failed".into(),
            });
        }
        title.push_str("</b>");
        if let Some(d) = f.duration_ms {
            title.push_str(&format!(" · {}", duration(d)));
        }
        if let Some(n) = f.steps.filter(|n| *n > 0) {
            title.push_str(&format!(" · {n} step{}", if n == 1 { "" } else { "s" }));
        }
        let mut lines = vec![title];
        if let Some(r) = &f.result {
            lines.push(format!("result: {}", esc(&one_line(r))));
        }
        for e in &f.errors {
            lines.push(format!(
                "<span class=\"bad\">✗ {}</span>",
                esc(&one_line(e))
            ));
        }
        for d in &f.denials {
            lines.push(format!(
                "<span class=\"bad\">⊘ permission denied: <code>{}</code></span>",
                esc(d)
            ));
        }
        if let Some(st) = &f.stop {
            lines.push(format!("stopped: {}", esc(st)));
        }
        if let Some(t) = f.tokens.as_ref().filter(|t| **t != Tokens::default()) {
            lines.push(format!("tokens {}", esc(&t.summary())));
        }
        for m in &f.models {
            let mut parts = Vec::new();
            if let Some(c) = cost(m.cost, m.session_cost) {
                parts.push(c);
            }
            if let Some((used, window)) = m.context {
                parts.push(context(used, window));
            }
            if !parts.is_empty() {
                lines.push(format!(
                    "<code>{}</code> {}",
                    esc(&m.name),
                    esc(&parts.join(" · "))
                ));
            }
        }
        let t = format!("<footer class=\"{class}\">{}</footer>", lines.join("<br>"));
        self.put(0, &t)
    }

    /// Input lines that could not be read (`FILE:LINE:COL: why`), named in the summary.
    pub fn unreadable(&mut self, lines: &[String]) {
        self.sum.unreadable.extend_from_slice(lines);
    }

    /// Ends the page: the summary (shown first), then the closing tags.
    pub fn finish(&mut self) -> io::Result<()> {
        self.begin()?;
        let s = &self.sum;
        let mut items: Vec<(&str, String)> = Vec::new();
        let join =
            |set: &BTreeSet<String>| set.iter().map(|x| esc(x)).collect::<Vec<_>>().join(", ");
        if !s.agents.is_empty() {
            items.push(("agent", join(&s.agents)));
        }
        if !s.models.is_empty() {
            items.push(("model", join(&s.models)));
        }
        if s.sessions.len() > 1 {
            items.push(("sessions", thousands(s.sessions.len() as u64)));
        }
        let mut turns = thousands(s.turns);
        if s.failed > 0 {
            turns.push_str(&format!(
                " <span class=\"bad\">({} failed)</span>",
                s.failed
            ));
        }
        items.push(("turns", turns));
        items.push(("tool calls", thousands(s.tools)));
        if s.tokens != Tokens::default() {
            items.push(("tokens", esc(&s.tokens.summary())));
        }
        if let Some(c) = s.cost {
            let mut text = format!("${c:.4}");
            if s.uncosted > 0 {
                let n = s.uncosted;
                text.push_str(&format!(
                    " and unknown ({n} turn{} without a cost)",
                    if n == 1 { "" } else { "s" }
                ));
            }
            items.push(("cost", text));
        }
        if let Some(d) = s.duration_ms {
            items.push(("duration", duration(d)));
        }
        if s.errors > 0 {
            items.push(("errors", format!("<span class=\"bad\">{}</span>", s.errors)));
        }
        if s.denials > 0 {
            items.push((
                "denied",
                format!("<span class=\"bad\">{}</span>", s.denials),
            ));
        }
        if s.cancels > 0 {
            items.push((
                "cancelled",
                format!("<span class=\"warn\">{}</span>", s.cancels),
            ));
        }
        let dl: String = items
            .iter()
            .map(|(k, v)| format!("<div><dt>{k}</dt><dd>{v}</dd></div>"))
            .collect();
        let mut bad = String::new();
        if !s.unreadable.is_empty() {
            let n = s.unreadable.len();
            bad = format!(
                "<div class=\"error\">✗ {n} input line{} could not be read; the transcript goes on without {}:<ul>{}</ul></div>",
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" },
                s.unreadable
                    .iter()
                    .map(|l| format!("<li><code>{}</code></li>", esc(l)))
                    .collect::<String>()
            );
        }
        write!(
            self.w,
            "<section class=\"summary\"><h1>Transcript</h1><dl>{dl}</dl>{bad}</section>\n</main></body></html>\n"
        )?;
        self.w.flush()
    }
}

fn status_class(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Failed | Status::Denied => "bad",
        _ => "warn",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_the_agent_wrote_becomes_markup() {
        let hostile = r#"<script>alert(1)</script><img src=x onerror="alert(2)"> & 'q'"#;
        let e = esc(hostile);
        assert!(!e.contains('<') && !e.contains('>') && !e.contains('"') && !e.contains('\''));
        assert_eq!(esc("a&b"), "a&amp;b");
    }
}
