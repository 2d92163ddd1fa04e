//! `--format markdown`: a transcript to paste into an issue or a pull request.
//!
//! Prompts are quoted, the agent's text is kept as the Markdown it is, thinking is a
//! collapsed `<details>`, tool output and diffs are fenced code blocks (fences longer than any
//! backtick run inside), plans are task lists, and a subagent's traffic is nested in a
//! blockquote under its call. No colour, no terminal escapes: text was cleaned by the model,
//! and short untrusted strings (paths, names, commands) go into code spans or are escaped.

use super::model::{Block, Card, Footer, Header, PartialKind, Status, Tokens, Tone, ToolHead};
use super::term::{
    agent_name, context, cost, decision_word, glyph, status_word, Layout, DIFF_ROWS, OUTPUT_ROWS,
};
use super::text::{duration, one_line, thousands, truncate};
use std::io::{self, Write};

/// Synthetic prompts and notices are cut to this many columns unless `--full`.
const SHORT: usize = 160;

pub struct Markdown<W: Write> {
    w: W,
    lay: Layout,
    started: bool,
    /// The last line was written without its line end, so a card can go on with a hard break.
    open: bool,
    depth: usize,
}

/// Escapes Markdown punctuation in a short untrusted string shown as text.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        let special = matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&'
        ) || (i == 0 && matches!(c, '#' | '-' | '+' | '=' | '!'));
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code span that holds `s` whatever backticks it contains.
pub fn code(s: &str) -> String {
    let s = one_line(s);
    if s.is_empty() {
        return String::new();
    }
    let n = longest_run(&s, '`') + 1;
    let fence = "`".repeat(n);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        if c == ch {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

impl<W: Write> Markdown<W> {
    pub fn new(w: W, lay: Layout) -> Self {
        Markdown {
            w,
            lay,
            started: false,
            open: false,
            depth: 0,
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// Ends the transcript: closes a line left open.
    /// Names the input lines that could not be read (`FILE:LINE:COL: why`), after the
    /// transcript.
    pub fn unreadable(&mut self, lines: &[String]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        self.start(0)?;
        let n = lines.len();
        self.line(
            0,
            &format!(
                "**✗ {n} input line{} could not be read** (the transcript goes on without {}):",
                if n == 1 { "" } else { "s" },
                if n == 1 { "it" } else { "them" }
            ),
            false,
        )?;
        self.line(0, "", false)?;
        for l in lines {
            self.line(0, &format!("* {}", code(&super::text::clean(l))), false)?;
        }
        Ok(())
    }

    pub fn finish(&mut self) -> io::Result<()> {
        self.close()?;
        self.w.flush()
    }

    fn prefix(&self, depth: usize) -> String {
        "> ".repeat(depth)
    }

    fn close(&mut self) -> io::Result<()> {
        if self.open {
            self.w.write_all(b"\n")?;
            self.open = false;
        }
        Ok(())
    }

    /// A new paragraph (or fence, or list) at `depth`: ends what was open, then a blank line.
    fn start(&mut self, depth: usize) -> io::Result<()> {
        self.close()?;
        if self.started {
            let p = self.prefix(depth.min(self.depth));
            writeln!(self.w, "{}", p.trim_end())?;
        }
        self.started = true;
        self.depth = depth;
        Ok(())
    }

    /// Continues the open card line with a hard line break, or starts a paragraph.
    fn cont(&mut self, depth: usize, attached: bool) -> io::Result<()> {
        if attached && self.open && self.depth == depth {
            self.w.write_all(b"\\\n")?;
            self.open = false;
            Ok(())
        } else {
            self.start(depth)
        }
    }

    /// Writes one line; `open` leaves it without its line end.
    fn line(&mut self, depth: usize, text: &str, open: bool) -> io::Result<()> {
        write!(self.w, "{}{}", self.prefix(depth), text)?;
        if open {
            self.open = true;
        } else {
            self.w.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Lines of Markdown as they are, each behind the depth's prefix.
    fn lines(&mut self, depth: usize, text: &str) -> io::Result<()> {
        let p = self.prefix(depth);
        for l in text.trim_end_matches('\n').split('\n') {
            let l = format!("{p}{l}");
            writeln!(self.w, "{}", l.trim_end())?;
        }
        Ok(())
    }

    /// A fenced code block, cut after `limit` lines unless `--full`.
    fn fence(&mut self, depth: usize, lang: &str, text: &str, limit: usize) -> io::Result<()> {
        let text = text.trim_matches('\n');
        if text.trim().is_empty() {
            return Ok(());
        }
        let all: Vec<&str> = text.split('\n').collect();
        let shown = if self.lay.full || all.len() <= limit + 1 {
            all.len()
        } else {
            limit
        };
        let ticks = all
            .iter()
            .map(|l| {
                let t = l.trim_start();
                t.len() - t.trim_start_matches('`').len()
            })
            .max()
            .unwrap_or(0);
        let f = "`".repeat((ticks + 1).max(3));
        self.start(depth)?;
        self.line(depth, &format!("{f}{lang}"), false)?;
        for l in &all[..shown] {
            let l = format!("{}{l}", self.prefix(depth));
            writeln!(self.w, "{}", l.trim_end())?;
        }
        if shown < all.len() {
            self.line(
                depth,
                &format!("… {} more lines (--full shows all)", all.len() - shown),
                false,
            )?;
        }
        self.line(depth, &f, false)
    }

    fn head_text(&self, head: &ToolHead, reference: bool) -> String {
        let first = head.salient.split('\n').next().unwrap_or("");
        let mut t = format!(
            "{}**{} {}**",
            if reference { "↳ " } else { "" },
            glyph(&head.kind),
            escape(&head.name)
        );
        if !first.is_empty() {
            t.push(' ');
            t.push_str(&code(first));
            if head.salient.contains('\n') {
                t.push_str(" …");
            }
        }
        if let Some(title) = head.title.as_deref().filter(|_| !reference) {
            t.push_str(&format!(" — *{}*", escape(&one_line(title))));
        }
        t
    }

    /// Starts a block about a call: on the card's open line, or after a repeated head.
    fn card(&mut self, depth: usize, card: Option<&Card>) -> io::Result<()> {
        match card {
            Some(c) if c.attached => self.cont(depth, true),
            Some(c) => {
                self.start(depth)?;
                let h = self.head_text(&c.head, true);
                self.line(depth, &h, true)?;
                self.cont(depth, true)
            }
            None => self.start(depth),
        }
    }

    pub fn block(&mut self, b: &Block) -> io::Result<()> {
        match b {
            Block::Header(h) => self.header(h),
            Block::SessionChange { changes, attached } => {
                let depth = if *attached { self.depth } else { 0 };
                self.cont(depth, *attached)?;
                self.line(
                    depth,
                    &format!("*· {}*", escape(&changes.join(" · "))),
                    true,
                )
            }
            Block::Prompt {
                depth,
                text,
                synthetic,
            } => {
                self.start(*depth)?;
                if *synthetic {
                    // Not the user's: a note in italics, never a `❯` prompt.
                    let t = if self.lay.full {
                        one_line(text)
                    } else {
                        truncate(&one_line(text), SHORT)
                    };
                    self.line(*depth, &format!("*· {}*", escape(&t)), false)
                } else {
                    let quoted: Vec<String> = text
                        .trim_end_matches('\n')
                        .split('\n')
                        .enumerate()
                        .map(|(i, l)| {
                            if i == 0 {
                                format!("> **❯** {l}")
                            } else {
                                format!("> {l}")
                            }
                        })
                        .collect();
                    self.lines(*depth, &quoted.join("\n"))
                }
            }
            Block::Text { depth, text } => {
                self.start(*depth)?;
                self.lines(*depth, text)
            }
            Block::Thinking { depth, text } => {
                self.start(*depth)?;
                let open = if self.lay.thinking { " open" } else { "" };
                self.line(
                    *depth,
                    &format!("<details{open}><summary>∴ Thinking</summary>"),
                    false,
                )?;
                self.line(*depth, "", false)?;
                let body = text
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;");
                self.lines(*depth, &body)?;
                self.line(*depth, "", false)?;
                self.line(*depth, "</details>", false)
            }
            Block::Partial { depth, kind, text } => {
                self.start(*depth)?;
                let what = match kind {
                    PartialKind::Text => "text".to_string(),
                    PartialKind::Thinking => "thinking".to_string(),
                    PartialKind::ToolInput(t) if t.is_empty() => "tool input".to_string(),
                    PartialKind::ToolInput(t) => format!("input for {}", escape(t)),
                };
                self.line(
                    *depth,
                    &format!("*⋯ unfinished {what} (the stream stopped here)*"),
                    false,
                )?;
                match kind {
                    PartialKind::Text => {
                        self.start(*depth)?;
                        self.lines(*depth, text)
                    }
                    _ => self.fence(*depth, "text", text, OUTPUT_ROWS),
                }
            }
            Block::ToolStart { depth, head } => {
                self.start(*depth)?;
                let h = self.head_text(head, false);
                if head.salient.contains('\n') {
                    self.line(*depth, &h, false)?;
                    let lang = if head.kind == "execute" { "sh" } else { "text" };
                    self.fence(*depth, lang, &head.salient, usize::MAX - 1)
                } else {
                    self.line(*depth, &h, true)
                }
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
                self.card(*depth, Some(card))?;
                if !*decided {
                    let (g, w) = status_word(*status);
                    let mut t = format!("{g} {w}");
                    if let Some(d) = duration_ms {
                        t.push_str(&format!(" · {}", duration(*d)));
                    }
                    self.line(*depth, &t, true)?;
                }
                let body = [output.trim_end(), errors.trim_end()]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                self.fence(*depth, "text", &body, OUTPUT_ROWS)
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
                self.card(*depth, Some(card))?;
                let (g, w) = status_word(*status);
                let mut t = format!("{g} {}", if *status == Status::Ok { "done" } else { w });
                if let Some(d) = duration_ms {
                    t.push_str(&format!(" · {}", duration(*d)));
                }
                if let Some(n) = tokens {
                    t.push_str(&format!(" · {} tokens", thousands(*n)));
                }
                if let Some(n) = tool_uses {
                    t.push_str(&format!(
                        " · {n} tool use{}",
                        if *n == 1 { "" } else { "s" }
                    ));
                }
                self.line(*depth, &t, true)?;
                self.fence(*depth, "text", summary, OUTPUT_ROWS)
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
                self.card(*depth, card.as_ref())?;
                let mut t = format!("± {}", code(path));
                if let Some(m) = move_path {
                    t.push_str(&format!(" → {}", code(m)));
                }
                match change.as_str() {
                    "add" => t.push_str(" (new file)"),
                    "delete" => t.push_str(" (deleted)"),
                    _ => {}
                }
                if *proposed {
                    t.push_str(" *(proposed, not applied)*");
                }
                self.line(*depth, &t, true)?;
                match diff {
                    Some(d) => self.fence(*depth, "diff", d, DIFF_ROWS),
                    None => Ok(()),
                }
            }
            Block::Permission {
                depth,
                card,
                reason,
                blocked_path,
                suggestions,
            } => {
                self.card(*depth, Some(card))?;
                let mut t = "? permission requested".to_string();
                if let Some(r) = reason {
                    t.push_str(&format!(" · {}", escape(&one_line(r))));
                }
                if let Some(p) = blocked_path {
                    t.push_str(&format!(" · path {}", code(p)));
                }
                self.line(*depth, &t, true)?;
                for s in suggestions.iter().take(3) {
                    self.cont(*depth, true)?;
                    self.line(*depth, &format!("*option: {}*", escape(s)), true)?;
                }
                Ok(())
            }
            Block::Decision {
                depth,
                card,
                decision,
                message,
            } => {
                self.card(*depth, card.as_ref())?;
                let (g, w, _) = decision_word(decision);
                let mut t = if card.is_some() {
                    format!("{g} {w}")
                } else {
                    format!("{g} permission {w}")
                };
                if let Some(m) = message {
                    t.push_str(&format!(" · {}", escape(&one_line(m))));
                }
                self.line(*depth, &t, true)
            }
            Block::Plan {
                depth,
                card,
                entries,
                explanation,
            } => {
                self.card(*depth, card.as_ref())?;
                if card.is_none() {
                    self.line(*depth, "**☰ plan**", true)?;
                }
                if let Some(e) = explanation {
                    self.start(*depth)?;
                    self.lines(*depth, e)?;
                }
                self.start(*depth)?;
                for (status, content) in entries {
                    let t = match status.as_str() {
                        "completed" => format!("- [x] {}", escape(content)),
                        "in_progress" => format!("- [ ] **{}** *(in progress)*", escape(content)),
                        _ => format!("- [ ] {}", escape(content)),
                    };
                    self.line(*depth, &t, false)?;
                }
                Ok(())
            }
            Block::Compaction {
                trigger,
                pre,
                post,
                duration_ms,
            } => {
                self.start(0)?;
                self.line(0, "---", false)?;
                self.start(0)?;
                let mut t = if trigger == "cleared" {
                    "context cleared".to_string()
                } else {
                    format!("context compacted ({})", escape(trigger))
                };
                if let (Some(a), Some(b)) = (pre, post) {
                    t.push_str(&format!(" · {} → {} tokens", thousands(*a), thousands(*b)));
                }
                if let Some(d) = duration_ms {
                    t.push_str(&format!(" · {}", duration(*d)));
                }
                self.line(0, &format!("*┄ {t} ┄*"), false)?;
                self.start(0)?;
                self.line(0, "---", false)
            }
            Block::Status {
                depth,
                attached,
                tone,
                text,
            } => {
                self.cont(*depth, *attached)?;
                let g = match tone {
                    Tone::Quiet => "·",
                    Tone::Warn => "!",
                    Tone::Bad => "✗",
                };
                let t = format!("*{g} {}*", escape(text));
                self.line(*depth, &t, true)
            }
            Block::Error {
                depth,
                warning,
                message,
                details,
            } => {
                self.start(*depth)?;
                let g = if *warning { "!" } else { "✗" };
                let mut t = format!("**{g} {}**", escape(&one_line(message)));
                if !details.is_empty() {
                    t.push_str(&format!(" · *{}*", escape(&details.join(" · "))));
                }
                self.line(*depth, &t, false)
            }
            Block::Hook {
                depth,
                attached,
                name,
                outcome,
                output,
                ..
            } => {
                self.cont(*depth, *attached)?;
                let t = format!("*↪ hook {} · {}*", escape(name), escape(outcome));
                self.line(*depth, &t, true)?;
                self.fence(*depth, "text", output, 2)
            }
            Block::Notice { depth, text } => {
                self.start(*depth)?;
                let t = if self.lay.full {
                    text.clone()
                } else {
                    truncate(text, SHORT)
                };
                self.line(*depth, &format!("*· {}*", escape(&one_line(&t))), false)
            }
            Block::Footer(f) => self.footer(f),
        }
    }

    fn header(&mut self, h: &Header) -> io::Result<()> {
        self.start(0)?;
        let mut title: Vec<String> = Vec::new();
        if !h.provider.is_empty() {
            title.push(escape(&h.provider));
        }
        if let Some(m) = &h.model {
            title.push(escape(m));
        }
        if title.is_empty() {
            title.push("session".into());
        }
        self.line(0, &format!("## {}", title.join(" · ")), false)?;
        let mut facts = Vec::new();
        if let Some(c) = &h.cwd {
            facts.push(code(c));
        }
        if let Some(m) = &h.mode {
            facts.push(format!("permission mode {}", escape(m)));
        }
        if let Some(v) = &h.version {
            facts.push(escape(&format!("{} {v}", agent_name(&h.provider))));
        }
        if !h.session.is_empty() {
            facts.push(format!("session {}", code(&h.session)));
        }
        if !facts.is_empty() {
            self.start(0)?;
            self.line(0, &facts.join(" · "), false)?;
        }
        Ok(())
    }

    fn footer(&mut self, f: &Footer) -> io::Result<()> {
        self.start(0)?;
        self.line(0, "---", false)?;
        self.start(0)?;
        let mark = match (f.ok, &f.cancelled) {
            (true, _) => "✓",
            (false, Some(_)) => "■",
            (false, None) => "✗",
        };
        let mut title = format!("**{mark} Turn {}", f.turn);
        if let Some(w) = &f.cancelled {
            title.push_str(&format!(" {}", escape(w)));
        } else if !f.ok {
            title.push_str(&match &f.subtype {
                Some(s) => format!(" failed ({})", escape(s)),
                None => " failed".into(),
            });
        }
        title.push_str("**");
        if let Some(d) = f.duration_ms {
            title.push_str(&format!(" · {}", duration(d)));
        }
        if let Some(d) = f.api_ms.filter(|d| *d > 0) {
            title.push_str(&format!(" · API {}", duration(d)));
        }
        if let Some(n) = f.steps.filter(|n| *n > 0) {
            title.push_str(&format!(" · {n} step{}", if n == 1 { "" } else { "s" }));
        }
        let mut lines = vec![title];
        if let Some(r) = &f.result {
            lines.push(format!("result: {}", escape(&one_line(r))));
        }
        for e in &f.errors {
            lines.push(format!("✗ {}", escape(&one_line(e))));
        }
        for d in &f.denials {
            lines.push(format!("⊘ permission denied: {}", code(d)));
        }
        if let Some(s) = &f.stop {
            lines.push(format!("stopped: {}", escape(s)));
        }
        if let Some(t) = f.tokens.as_ref().filter(|t| **t != Tokens::default()) {
            lines.push(format!("tokens {}", t.summary()));
        }
        for m in &f.models {
            let mut parts = Vec::new();
            if let Some(c) = cost(m.cost, m.session_cost) {
                parts.push(c);
            }
            if let Some((i, o)) = m.tokens {
                parts.push(format!("{} in · {} out", thousands(i), thousands(o)));
            }
            if let Some((used, window)) = m.context {
                parts.push(context(used, window));
            }
            if parts.is_empty() {
                continue;
            }
            let parts = escape(&parts.join(" · "));
            lines.push(if m.name.is_empty() {
                parts
            } else {
                format!("{} {parts}", code(&m.name))
            });
        }
        let single = f.models.len() == 1
            && (f.models[0].cost.is_some() || f.models[0].session_cost.is_some());
        if let Some(c) = cost(f.cost, f.session_cost).filter(|_| !single) {
            lines.push(format!("cost {}", escape(&c)));
        }
        let n = lines.len();
        for (i, l) in lines.iter().enumerate() {
            let end = if i + 1 < n { "\\" } else { "" };
            self.line(0, &format!("{l}{end}"), false)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_hold_backticks() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("plain"), "`plain`");
    }

    #[test]
    fn escaping() {
        assert_eq!(escape("a*b_[c]"), "a\\*b\\_\\[c\\]");
        assert_eq!(escape("# not a heading"), "\\# not a heading");
        assert_eq!(escape("2 + 2 - 1"), "2 + 2 - 1");
    }

    #[test]
    fn fences_are_longer_than_backtick_runs_inside() {
        let mut m = Markdown::new(
            Vec::new(),
            Layout {
                width: 80,
                full: false,
                thinking: false,
            },
        );
        m.fence(0, "text", "```\ncode\n```", 5).unwrap();
        let s = String::from_utf8(m.w).unwrap();
        assert_eq!(s, "````text\n```\ncode\n```\n````\n");
    }
}
