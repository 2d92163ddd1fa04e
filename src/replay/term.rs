//! The terminal transcript: blocks laid out to a width, coloured by a [`Palette`].
//!
//! Layout: prompts start at the margin (`❯`), the agent's text and tool cards are indented by
//! two columns, a card's status, output, diff and permission lines by four and six. A subagent's
//! traffic is drawn behind a `│` gutter under the call that spawned it. Only the palette's
//! styles write escape sequences; with colour off every style is plain and none is written.

use super::model::{Block, Card, Footer, Header, PartialKind, Status, Tokens, Tone, ToolHead};
use super::text::{dollars, duration, one_line, thousands, truncate, width, wrap};
use owo_colors::{OwoColorize, Style};
use std::io::{self, Write};

/// Output lines shown per tool result, subagent summary or hook before `… N more lines`.
pub const OUTPUT_ROWS: usize = 5;
/// Diff lines shown before `… N more lines`.
pub const DIFF_ROWS: usize = 20;
/// The live ticker never takes more columns than this, so it stays on one terminal row
/// even when `--width` is wider than the terminal.
const TICKER_MAX: usize = 50;

/// The styles of a transcript, resolved once: all plain when colour is off.
#[derive(Debug, Clone)]
pub struct Palette {
    pub rule: Style,
    pub strong: Style,
    pub dim: Style,
    pub user: Style,
    pub prompt: Style,
    pub thinking: Style,
    pub ok: Style,
    pub bad: Style,
    pub warn: Style,
    pub add: Style,
    pub del: Style,
    pub hunk: Style,
    pub active: Style,
    pub execute: Style,
    pub read: Style,
    pub edit: Style,
    pub search: Style,
    pub agent: Style,
    pub memory: Style,
    pub other: Style,
}

impl Palette {
    pub fn new(color: bool) -> Palette {
        let s = Style::new();
        if !color {
            return Palette {
                rule: s,
                strong: s,
                dim: s,
                user: s,
                prompt: s,
                thinking: s,
                ok: s,
                bad: s,
                warn: s,
                add: s,
                del: s,
                hunk: s,
                active: s,
                execute: s,
                read: s,
                edit: s,
                search: s,
                agent: s,
                memory: s,
                other: s,
            };
        }
        Palette {
            rule: s.dimmed(),
            strong: s.bold(),
            dim: s.dimmed(),
            user: s.cyan().bold(),
            prompt: s.bold(),
            thinking: s.dimmed().italic(),
            ok: s.green(),
            bad: s.red(),
            warn: s.yellow(),
            add: s.green(),
            del: s.red(),
            hunk: s.cyan(),
            active: s.yellow().bold(),
            execute: s.yellow().bold(),
            read: s.blue().bold(),
            edit: s.magenta().bold(),
            search: s.cyan().bold(),
            agent: s.blue().bold(),
            memory: s.green().bold(),
            other: s.bold(),
        }
    }

    /// The style of a tool card's glyph and name, by ToolKind.
    pub fn kind(&self, kind: &str) -> Style {
        match kind {
            "execute" => self.execute,
            "read" => self.read,
            "edit" | "delete" | "move" => self.edit,
            "search" | "fetch" | "browse" | "mcp" => self.search,
            "think" => self.agent,
            "memory" | "ask" => self.memory,
            _ => self.other,
        }
    }
}

/// The glyph of a tool card, by ToolKind.
pub fn glyph(kind: &str) -> &'static str {
    match kind {
        "execute" => "$",
        "read" => "»",
        "edit" => "✎",
        "delete" => "⌫",
        "move" => "⇄",
        "search" => "⌕",
        "fetch" => "⇣",
        "browse" => "◎",
        "think" => "◆",
        "ask" => "?",
        "memory" => "☰",
        "mcp" => "⧉",
        _ => "•",
    }
}

/// The glyph and word of a call's end.
pub fn status_word(s: Status) -> (&'static str, &'static str) {
    match s {
        Status::Ok => ("✓", "ok"),
        Status::Failed => ("✗", "failed"),
        Status::Denied => ("⊘", "denied"),
        Status::Cancelled => ("◌", "cancelled"),
        Status::Interrupted => ("✗", "interrupted"),
        Status::Running => ("◌", "no result"),
        Status::Background => ("◐", "running in background"),
    }
}

/// The glyph and words of a permission decision.
pub fn decision_word(d: &str) -> (&'static str, String, bool) {
    match d {
        "allow" => ("✓", "allowed".into(), true),
        "allow_always" => ("✓", "allowed always".into(), true),
        "deny" => ("✗", "denied".into(), false),
        "deny_always" => ("✗", "denied always".into(), false),
        "cancelled" => ("◌", "cancelled".into(), false),
        other => ("·", other.replace('_', " "), true),
    }
}

/// The name an agent goes by, from its provider's name.
pub fn agent_name(provider: &str) -> &str {
    crate::providers::PROVIDERS
        .iter()
        .find(|p| p.name == provider)
        .map_or(provider, |p| p.display)
}

/// Settings of the layout.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub width: usize,
    /// `--full`: no truncation of outputs, diffs, commands and synthetic prompts.
    pub full: bool,
    /// `--thinking`: thinking in full instead of one folded line.
    pub thinking: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gap {
    /// A unit of its own: a blank line before it.
    Unit,
    /// A one-line note: a blank line before a run of them.
    Small,
    /// Continues the block above: no blank line.
    Attached,
}

/// One styled piece of a line.
type Span<'a> = (&'a str, Style);

pub struct Term<W: Write> {
    w: W,
    pal: Palette,
    lay: Layout,
    started: bool,
    prev: Gap,
    prev_depth: usize,
    /// Columns of the live ticker on screen, 0 when none is.
    ticker: usize,
    /// Asks the terminal its width before each block, to follow a resize.
    width_of: Option<fn() -> Option<usize>>,
    /// The last block was a diff: an output after it is labelled, not to be read as part
    /// of it.
    after_diff: bool,
}

impl<W: Write> Term<W> {
    pub fn new(w: W, pal: Palette, lay: Layout) -> Self {
        Term {
            w,
            pal,
            lay,
            started: false,
            prev: Gap::Unit,
            prev_depth: 0,
            ticker: 0,
            width_of: None,
            after_diff: false,
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    #[cfg(test)]
    pub fn into_inner(self) -> W {
        self.w
    }

    /// Shows (or with `None` removes) the one transient line of a live terminal: `label: text`,
    /// keeping the end of `text`. It is drawn with a carriage return and overwritten with
    /// spaces: no cursor movement, no erase sequences, and it is removed before anything else
    /// is written.
    pub fn ticker(&mut self, live: Option<(&str, &str)>) -> io::Result<()> {
        let Some((label, text)) = live else {
            return self.clear_ticker();
        };
        let max = self.lay.width.saturating_sub(1).min(TICKER_MAX);
        let head = truncate(&format!("{label}: "), max);
        let room = max.saturating_sub(width(&head));
        let tail = if width(text) <= room {
            text.to_string()
        } else {
            // The newest end, after an ellipsis.
            let mut kept: Vec<char> = Vec::new();
            let mut w = 1;
            for c in text.chars().rev() {
                let cw = super::text::char_width(c);
                if w + cw > room {
                    break;
                }
                w += cw;
                kept.push(c);
            }
            std::iter::once('…').chain(kept.into_iter().rev()).collect()
        };
        let t = format!("{head}{tail}");
        let w = width(&t);
        let pad = self.ticker.saturating_sub(w);
        write!(self.w, "\r{}{}", t.style(self.pal.dim), " ".repeat(pad))?;
        self.ticker = w.max(1);
        self.w.flush()
    }

    fn clear_ticker(&mut self) -> io::Result<()> {
        if self.ticker > 0 {
            write!(self.w, "\r{}\r", " ".repeat(self.ticker))?;
            self.ticker = 0;
        }
        Ok(())
    }

    /// Columns left for content at `depth`, after `indent`.
    fn avail(&self, depth: usize, indent: usize) -> usize {
        self.lay.width.saturating_sub(6 * depth + indent).max(20)
    }

    fn gutter(&mut self, depth: usize, blank: bool) -> io::Result<()> {
        for i in 0..depth {
            write!(self.w, "    {}", "│".style(self.pal.rule))?;
            if !(blank && i + 1 == depth) {
                self.w.write_all(b" ")?;
            }
        }
        Ok(())
    }

    /// Writes one line: the gutter, `indent` spaces, the spans.
    fn put(&mut self, depth: usize, indent: usize, spans: &[Span]) -> io::Result<()> {
        let last = spans.iter().rposition(|s| !s.0.trim_end().is_empty());
        let Some(last) = last else {
            return self.blank(depth);
        };
        let trimmed = spans[last].0.trim_end();
        let spans = &spans[..=last];
        self.gutter(depth, false)?;
        write!(self.w, "{:indent$}", "")?;
        for (i, (text, style)) in spans.iter().enumerate() {
            let text = if i == last { trimmed } else { text };
            if !text.is_empty() {
                write!(self.w, "{}", text.style(*style))?;
            }
        }
        self.w.write_all(b"\n")
    }

    fn blank(&mut self, depth: usize) -> io::Result<()> {
        self.gutter(depth, true)?;
        self.w.write_all(b"\n")
    }

    fn begin(&mut self, gap: Gap, depth: usize) -> io::Result<()> {
        self.clear_ticker()?;
        let blank = match gap {
            Gap::Attached => false,
            Gap::Small => self.prev != Gap::Small,
            Gap::Unit => true,
        };
        if blank && self.started {
            self.blank(depth.min(self.prev_depth))?;
        }
        self.started = true;
        if gap != Gap::Attached {
            self.prev = gap;
        }
        self.prev_depth = depth;
        Ok(())
    }

    /// Wrapped text: every line of `text` wrapped to the room left, the first line after
    /// `first`, the others after as many spaces.
    fn para(
        &mut self,
        depth: usize,
        indent: usize,
        first: Span,
        text: &str,
        style: Style,
    ) -> io::Result<()> {
        let lead = width(first.0);
        let room = self.avail(depth, indent + lead);
        let mut lead_span = Some(first);
        let pad = " ".repeat(lead);
        for src in text.trim_end_matches('\n').split('\n') {
            for row in wrap(src, room) {
                match lead_span.take() {
                    Some(f) => self.put(depth, indent, &[f, (&row, style)])?,
                    None if row.is_empty() => self.blank(depth)?,
                    None => self.put(depth, indent, &[(&pad, Style::new()), (&row, style)])?,
                }
            }
        }
        Ok(())
    }

    /// Output lines at `indent`, wrapped, cut after `limit` rows unless `--full`.
    fn rows(
        &mut self,
        depth: usize,
        indent: usize,
        parts: &[(&str, Style)],
        limit: usize,
    ) -> io::Result<()> {
        let room = self.avail(depth, indent);
        let mut rows: Vec<(String, Style)> = Vec::new();
        for (text, style) in parts {
            let text = text.trim_end_matches('\n');
            if text.trim().is_empty() {
                continue;
            }
            for src in text.split('\n') {
                for row in wrap(src, room) {
                    rows.push((row, *style));
                }
            }
        }
        // Leading and trailing blank rows say nothing.
        while rows.last().is_some_and(|r| r.0.trim().is_empty()) {
            rows.pop();
        }
        let skip = rows.iter().take_while(|r| r.0.trim().is_empty()).count();
        rows.drain(..skip);
        let shown = if self.lay.full || rows.len() <= limit + 1 {
            rows.len()
        } else {
            limit
        };
        for (row, style) in &rows[..shown] {
            if row.is_empty() {
                self.blank(depth)?;
            } else {
                self.put(depth, indent, &[(row, *style)])?;
            }
        }
        if shown < rows.len() {
            let more = format!("… {} more lines (--full shows all)", rows.len() - shown);
            self.put(depth, indent, &[(&more, self.pal.dim)])?;
        }
        Ok(())
    }

    /// The head of a card: glyph, name, salient input, title. `reference` dims it and marks
    /// it `↳`, for a card continued after other blocks.
    fn head(&mut self, depth: usize, head: &ToolHead, reference: bool) -> io::Result<()> {
        let kind_style = if reference {
            self.pal.dim
        } else {
            self.pal.kind(&head.kind)
        };
        let text_style = if reference {
            self.pal.dim
        } else {
            Style::new()
        };
        let mark = if reference { "↳ " } else { "" };
        let g = glyph(&head.kind);
        let fixed = width(mark) + width(g) + 1 + width(&head.name) + 2;
        let room = self.avail(depth, 2).saturating_sub(fixed);
        let mut lines = head.salient.trim_end_matches('\n').split('\n');
        let first = lines.next().unwrap_or("");
        let rest: Vec<&str> = lines.collect();
        let full = self.lay.full && !reference;
        let mut salient = if !rest.is_empty() && !full {
            format!("{first} …")
        } else {
            first.to_string()
        };
        let mut title_below = None;
        let mut title_inline = String::new();
        if let Some(t) = head.title.as_deref().filter(|_| !reference) {
            let inline = format!("  · {}", one_line(t));
            if width(&salient) + width(&inline) <= room {
                title_inline = inline;
            } else {
                title_below = Some(one_line(t));
            }
        }
        let mut wrapped_first = Vec::new();
        if full && width(&salient) > room {
            wrapped_first = wrap(&salient, room);
            salient = wrapped_first.remove(0);
        } else {
            salient = truncate(&salient, room);
        }
        let name = format!("{g} {}", head.name);
        self.put(
            depth,
            2,
            &[
                (mark, self.pal.dim),
                (&name, kind_style),
                ("  ", Style::new()),
                (&salient, text_style),
                (&title_inline, self.pal.dim),
            ],
        )?;
        if full {
            let pad = fixed - width(mark);
            let room = self.avail(depth, 2 + pad);
            let more = wrapped_first
                .into_iter()
                .chain(rest.iter().flat_map(|l| wrap(l, room)));
            for l in more {
                self.put(depth, 2 + pad, &[(&l, text_style)])?;
            }
        }
        if let Some(t) = title_below {
            let room = self.avail(depth, 4);
            let t = if self.lay.full { t } else { truncate(&t, room) };
            self.para(depth, 4, ("", Style::new()), &t, self.pal.dim)?;
        }
        Ok(())
    }

    /// Starts a block that continues a card: repeats the head unless it is attached.
    fn card_begin(&mut self, depth: usize, card: Option<&Card>) -> io::Result<()> {
        match card {
            Some(c) if c.attached => self.begin(Gap::Attached, depth),
            Some(c) => {
                self.begin(Gap::Unit, depth)?;
                self.head(depth, &c.head, true)
            }
            None => self.begin(Gap::Unit, depth),
        }
    }

    /// Lays out each block in the width `f` gives at the time (the terminal's, as it is
    /// resized).
    pub fn follow_width(&mut self, f: fn() -> Option<usize>) {
        self.width_of = Some(f);
    }

    pub fn block(&mut self, b: &Block) -> io::Result<()> {
        if let Some(w) = self.width_of.and_then(|f| f()) {
            self.lay.width = w;
        }
        let r = self.draw(b);
        self.after_diff = matches!(b, Block::Diff { .. });
        r
    }

    fn draw(&mut self, b: &Block) -> io::Result<()> {
        let pal = self.pal.clone();
        match b {
            Block::Header(h) => self.header(h),
            Block::SessionChange { changes, attached } => {
                let (gap, depth, indent) = if *attached {
                    (Gap::Attached, self.prev_depth, 4)
                } else {
                    (Gap::Small, 0, 2)
                };
                self.begin(gap, depth)?;
                let text = format!("· {}", changes.join(" · "));
                let t = truncate(&text, self.avail(depth, indent));
                self.put(depth, indent, &[(&t, pal.warn)])
            }
            Block::Prompt {
                depth,
                text,
                synthetic,
            } => {
                if *synthetic {
                    // Not the user's: a dimmed note, never a `❯` prompt.
                    self.begin(Gap::Small, *depth)?;
                    let t = if self.lay.full {
                        text.clone()
                    } else {
                        truncate(&one_line(text), self.avail(*depth, 4))
                    };
                    self.para(*depth, 2, ("· ", pal.dim), &t, pal.dim)
                } else {
                    self.begin(Gap::Unit, *depth)?;
                    self.para(*depth, 0, ("❯ ", pal.user), text, pal.prompt)
                }
            }
            Block::Text { depth, text } => {
                self.begin(Gap::Unit, *depth)?;
                self.para(*depth, 2, ("", Style::new()), text, Style::new())
            }
            Block::Thinking { depth, text } => {
                self.begin(Gap::Unit, *depth)?;
                if self.lay.thinking {
                    self.para(*depth, 2, ("∴ ", pal.thinking), text, pal.thinking)
                } else {
                    let t = truncate(&one_line(text), self.avail(*depth, 4));
                    self.put(*depth, 2, &[("∴ ", pal.thinking), (&t, pal.thinking)])
                }
            }
            Block::Partial { depth, kind, text } => {
                self.begin(Gap::Unit, *depth)?;
                let (what, style, fold) = match kind {
                    PartialKind::Text => ("text".to_string(), Style::new(), false),
                    PartialKind::Thinking => {
                        ("thinking".to_string(), pal.thinking, !self.lay.thinking)
                    }
                    PartialKind::ToolInput(t) if t.is_empty() => {
                        ("tool input".to_string(), pal.dim, true)
                    }
                    PartialKind::ToolInput(t) => (format!("input for {t}"), pal.dim, true),
                };
                let label = format!("⋯ unfinished {what} (the stream stopped here)");
                self.put(*depth, 2, &[(&label, pal.warn)])?;
                if fold && !self.lay.full {
                    let t = truncate(&one_line(text), self.avail(*depth, 4));
                    self.put(*depth, 4, &[(&t, style)])
                } else {
                    self.para(*depth, 4, ("", Style::new()), text, style)
                }
            }
            Block::ToolStart { depth, head } => {
                self.begin(Gap::Unit, *depth)?;
                self.head(*depth, head, false)
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
                self.card_begin(*depth, Some(card))?;
                if !*decided {
                    self.status_line(*depth, *status, None, *duration_ms, &[])?;
                } else if self.after_diff && !(output.trim().is_empty() && errors.trim().is_empty())
                {
                    // The decision gave the status; the result is told apart from a diff above.
                    self.put(*depth, 4, &[("result", pal.dim)])?;
                }
                let err_style = if *status == Status::Ok {
                    pal.warn
                } else {
                    pal.bad
                };
                self.rows(
                    *depth,
                    6,
                    &[(output, Style::new()), (errors, err_style)],
                    OUTPUT_ROWS,
                )
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
                self.card_begin(*depth, Some(card))?;
                let mut extra = Vec::new();
                if let Some(t) = tokens {
                    extra.push(format!("{} tokens", thousands(*t)));
                }
                if let Some(n) = tool_uses {
                    extra.push(format!("{n} tool use{}", if *n == 1 { "" } else { "s" }));
                }
                let word = if *status == Status::Ok {
                    Some("done")
                } else {
                    None
                };
                self.status_line(*depth, *status, word, *duration_ms, &extra)?;
                self.rows(*depth, 6, &[(summary, Style::new())], OUTPUT_ROWS)
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
                self.card_begin(*depth, card.as_ref())?;
                let what = match change.as_str() {
                    "add" => "  (new file)",
                    "delete" => "  (deleted)",
                    "move" => "  (moved)",
                    _ => "",
                };
                let what = if *proposed {
                    format!("{what}  (proposed, not applied)")
                } else {
                    what.to_string()
                };
                let what = what.as_str();
                let target = match move_path {
                    Some(m) => format!("{path} → {m}"),
                    None => path.clone(),
                };
                let line = truncate(&format!("± {target}"), self.avail(*depth, 4 + width(what)));
                self.put(*depth, 4, &[(&line, pal.strong), (what, pal.dim)])?;
                match diff {
                    Some(d) => self.diff(*depth, d),
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
                self.card_begin(*depth, Some(card))?;
                let mut more = String::new();
                if let Some(r) = reason {
                    more.push_str(&format!(" · {}", one_line(r)));
                }
                if let Some(p) = blocked_path {
                    more.push_str(&format!(" · path {p}"));
                }
                let label = "? permission requested";
                let more = truncate(&more, self.avail(*depth, 4 + width(label)));
                self.put(*depth, 4, &[(label, pal.warn), (&more, pal.dim)])?;
                for s in suggestions.iter().take(3) {
                    let t = truncate(&format!("option: {s}"), self.avail(*depth, 6));
                    self.put(*depth, 6, &[(&t, pal.dim)])?;
                }
                Ok(())
            }
            Block::Decision {
                depth,
                card,
                decision,
                message,
            } => {
                self.card_begin(*depth, card.as_ref())?;
                let (g, word, good) = decision_word(decision);
                let head = if card.is_some() {
                    format!("{g} {word}")
                } else {
                    format!("{g} permission {word}")
                };
                let style = match decision.as_str() {
                    "cancelled" => pal.warn,
                    _ if good => pal.ok,
                    _ => pal.bad,
                };
                let msg = message
                    .as_deref()
                    .map(|m| format!(" · {}", one_line(m)))
                    .unwrap_or_default();
                let msg = truncate(&msg, self.avail(*depth, 4 + width(&head)));
                self.put(*depth, 4, &[(&head, style), (&msg, pal.dim)])
            }
            Block::Plan {
                depth,
                card,
                entries,
                explanation,
            } => {
                self.card_begin(*depth, card.as_ref())?;
                if card.is_none() {
                    self.put(*depth, 2, &[("☰ plan", pal.memory)])?;
                }
                if let Some(e) = explanation {
                    self.para(*depth, 4, ("", Style::new()), e, pal.dim)?;
                }
                for (status, content) in entries {
                    let (mark, ms, ts) = match status.as_str() {
                        "completed" => ("✓ ", pal.ok, pal.dim),
                        "in_progress" => ("◐ ", pal.active, pal.strong),
                        _ => ("○ ", pal.dim, Style::new()),
                    };
                    let room = self.avail(*depth, 6);
                    let c = if self.lay.full {
                        content.clone()
                    } else {
                        truncate(content, room)
                    };
                    self.para(*depth, 4, (mark, ms), &c, ts)?;
                }
                Ok(())
            }
            Block::Compaction {
                trigger,
                pre,
                post,
                duration_ms,
            } => {
                self.begin(Gap::Unit, 0)?;
                let mut t = if trigger == "cleared" {
                    "context cleared".to_string()
                } else {
                    format!("context compacted ({trigger})")
                };
                match (pre, post) {
                    (Some(a), Some(b)) => {
                        t.push_str(&format!(" · {} → {} tokens", thousands(*a), thousands(*b)))
                    }
                    (Some(a), None) => t.push_str(&format!(" · {} tokens before", thousands(*a))),
                    _ => {}
                }
                if let Some(d) = duration_ms {
                    t.push_str(&format!(" · {}", duration(*d)));
                }
                self.rule_line("┄", &[(&t, pal.warn)], pal.warn)
            }
            Block::Status {
                depth,
                attached,
                tone,
                text,
            } => {
                let (gap, indent) = if *attached {
                    (Gap::Attached, 4)
                } else {
                    (Gap::Small, 2)
                };
                self.begin(gap, *depth)?;
                let (g, style) = match tone {
                    Tone::Quiet => ("·", pal.dim),
                    Tone::Warn => ("!", pal.warn),
                    Tone::Bad => ("✗", pal.bad),
                };
                let t = truncate(&format!("{g} {text}"), self.avail(*depth, indent));
                self.put(*depth, indent, &[(&t, style)])
            }
            Block::Error {
                depth,
                warning,
                message,
                details,
            } => {
                self.begin(Gap::Unit, *depth)?;
                let (g, style) = if *warning {
                    ("! ", pal.warn)
                } else {
                    ("✗ ", pal.bad)
                };
                self.para(*depth, 2, (g, style), message, style)?;
                if !details.is_empty() {
                    let d = details.join(" · ");
                    self.para(*depth, 4, ("", Style::new()), &d, pal.dim)?;
                }
                Ok(())
            }
            Block::Hook {
                depth,
                attached,
                name,
                ok,
                outcome,
                output,
            } => {
                let (gap, indent) = if *attached {
                    (Gap::Attached, 4)
                } else {
                    (Gap::Small, 2)
                };
                self.begin(gap, *depth)?;
                let style = if *ok { pal.dim } else { pal.bad };
                let t = truncate(
                    &format!("↪ hook {name} · {outcome}"),
                    self.avail(*depth, indent),
                );
                self.put(*depth, indent, &[(&t, style)])?;
                if !output.is_empty() {
                    self.rows(*depth, indent + 2, &[(output, style)], 2)?;
                }
                Ok(())
            }
            Block::Notice { depth, text } => {
                self.begin(Gap::Small, *depth)?;
                let t = format!("· {text}");
                if self.lay.full {
                    self.para(*depth, 2, ("", Style::new()), &t, pal.dim)
                } else {
                    let t = truncate(&t, self.avail(*depth, 2));
                    self.put(*depth, 2, &[(&t, pal.dim)])
                }
            }
            Block::Footer(f) => self.footer(f),
        }
    }

    fn status_line(
        &mut self,
        depth: usize,
        status: Status,
        word: Option<&str>,
        duration_ms: Option<u64>,
        extra: &[String],
    ) -> io::Result<()> {
        let pal = &self.pal;
        let (g, w) = status_word(status);
        let style = match status {
            Status::Ok => pal.ok,
            Status::Failed | Status::Denied => pal.bad,
            Status::Cancelled | Status::Interrupted | Status::Running => pal.warn,
            Status::Background => pal.dim,
        };
        let head = format!("{g} {}", word.unwrap_or(w));
        let mut more: Vec<String> = duration_ms.map(duration).into_iter().collect();
        more.extend(extra.iter().cloned());
        let more = if more.is_empty() {
            String::new()
        } else {
            format!(" · {}", more.join(" · "))
        };
        let dim = pal.dim;
        self.put(depth, 4, &[(&head, style), (&more, dim)])
    }

    fn diff(&mut self, depth: usize, diff: &str) -> io::Result<()> {
        let pal = self.pal.clone();
        let room = self.avail(depth, 6);
        let mut in_header = true;
        let mut rows: Vec<(String, Style)> = Vec::new();
        for l in diff.trim_end_matches('\n').split('\n') {
            if l.starts_with("diff ") || l.starts_with("index ") {
                in_header = true;
                continue;
            }
            if in_header && (l.starts_with("--- ") || l.starts_with("+++ ")) {
                continue;
            }
            let style = if l.starts_with("@@") {
                in_header = false;
                pal.hunk
            } else if l.starts_with('+') {
                pal.add
            } else if l.starts_with('-') {
                pal.del
            } else {
                Style::new()
            };
            if self.lay.full {
                for r in wrap(l, room) {
                    rows.push((r, style));
                }
            } else {
                rows.push((truncate(l.trim_end(), room), style));
            }
        }
        let shown = if self.lay.full || rows.len() <= DIFF_ROWS + 1 {
            rows.len()
        } else {
            DIFF_ROWS
        };
        for (r, s) in &rows[..shown] {
            self.put(depth, 6, &[(r, *s)])?;
        }
        if shown < rows.len() {
            let more = format!("… {} more lines (--full shows all)", rows.len() - shown);
            self.put(depth, 6, &[(&more, pal.dim)])?;
        }
        Ok(())
    }

    /// A full-width rule with `spans` in it: `ch ch spans ch ch ch …`; spans that do not fit
    /// are cut.
    fn rule_line(&mut self, ch: &str, spans: &[Span], rule: Style) -> io::Result<()> {
        let lead = format!("{ch}{ch} ");
        let mut budget = self.lay.width.saturating_sub(width(&lead) + 3);
        let mut fitted: Vec<(String, Style)> = Vec::new();
        for (text, style) in spans {
            if budget == 0 {
                break;
            }
            let t = truncate(text, budget);
            budget -= width(&t);
            fitted.push((t, *style));
        }
        let used: usize = width(&lead) + fitted.iter().map(|s| width(&s.0)).sum::<usize>() + 1;
        let fill = format!(" {}", ch.repeat(self.lay.width.saturating_sub(used).max(2)));
        let mut all: Vec<Span> = vec![(&lead, rule)];
        all.extend(fitted.iter().map(|(t, s)| (t.as_str(), *s)));
        all.push((&fill, rule));
        self.put(0, 0, &all)
    }

    fn header(&mut self, h: &Header) -> io::Result<()> {
        let pal = self.pal.clone();
        self.begin(Gap::Unit, 0)?;
        let mut title: Vec<String> = Vec::new();
        if !h.provider.is_empty() {
            title.push(h.provider.clone());
        }
        if let Some(m) = &h.model {
            title.push(m.clone());
        }
        if title.is_empty() {
            title.push("session".into());
        }
        let title = truncate(&title.join(" · "), self.lay.width.saturating_sub(8));
        self.rule_line("━", &[(&title, pal.strong)], pal.rule)?;
        let mut facts = Vec::new();
        if let Some(c) = &h.cwd {
            facts.push(c.clone());
        }
        if let Some(m) = &h.mode {
            facts.push(format!("permission mode {m}"));
        }
        if let Some(v) = &h.version {
            facts.push(format!("{} {v}", agent_name(&h.provider)));
        }
        if !facts.is_empty() {
            let t = truncate(&facts.join(" · "), self.avail(0, 3));
            self.put(0, 3, &[(&t, pal.dim)])?;
        }
        if !h.session.is_empty() {
            let t = truncate(&format!("session {}", h.session), self.avail(0, 3));
            self.put(0, 3, &[(&t, pal.dim)])?;
        }
        Ok(())
    }

    fn footer(&mut self, f: &Footer) -> io::Result<()> {
        let pal = self.pal.clone();
        self.begin(Gap::Unit, 0)?;
        let (mark, mark_style) = match (f.ok, &f.cancelled) {
            (true, _) => ("✓", pal.ok),
            (false, Some(_)) => ("■", pal.warn),
            (false, None) => ("✗", pal.bad),
        };
        let mut title = format!("turn {}", f.turn);
        if let Some(w) = &f.cancelled {
            title.push_str(&format!(" {w}"));
        } else if !f.ok {
            title.push_str(&match &f.subtype {
                Some(s) => format!(" failed ({s})"),
                None => " failed".into(),
            });
        }
        let mut facts = Vec::new();
        if let Some(d) = f.duration_ms {
            facts.push(duration(d));
        }
        if let Some(d) = f.api_ms.filter(|d| *d > 0) {
            facts.push(format!("API {}", duration(d)));
        }
        if let Some(n) = f.steps.filter(|n| *n > 0) {
            facts.push(format!("{n} step{}", if n == 1 { "" } else { "s" }));
        }
        let facts = if facts.is_empty() {
            String::new()
        } else {
            format!(" · {}", facts.join(" · "))
        };
        let title_style = match (f.ok, &f.cancelled) {
            (true, _) => pal.strong,
            (false, Some(_)) => pal.warn,
            (false, None) => pal.bad,
        };
        let title = format!(" {title}");
        self.rule_line(
            "─",
            &[(mark, mark_style), (&title, title_style), (&facts, pal.dim)],
            pal.rule,
        )?;
        let room = self.avail(0, 3);
        if let Some(r) = &f.result {
            self.para(0, 3, ("result: ", pal.dim), r, Style::new())?;
        }
        for e in &f.errors {
            self.para(0, 3, ("✗ ", pal.bad), e, pal.bad)?;
        }
        for d in &f.denials {
            let t = truncate(&format!("⊘ permission denied: {d}"), room);
            self.put(0, 3, &[(&t, pal.warn)])?;
        }
        if let Some(s) = &f.stop {
            let t = format!("stopped: {s}");
            self.put(0, 3, &[(&t, pal.warn)])?;
        }
        if let Some(t) = f.tokens.as_ref().filter(|t| **t != Tokens::default()) {
            let line = truncate(&format!("tokens {}", t.summary()), room);
            self.put(0, 3, &[(&line, pal.dim)])?;
        }
        for m in &f.models {
            self.put_model(m)?;
        }
        let single = f.models.len() == 1
            && (f.models[0].cost.is_some() || f.models[0].session_cost.is_some());
        if !single {
            if let Some(c) = cost(f.cost, f.session_cost) {
                let t = format!("cost {c}");
                self.put(0, 3, &[(&t, pal.dim)])?;
            }
        }
        Ok(())
    }

    fn put_model(&mut self, m: &super::model::ModelLine) -> io::Result<()> {
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
            return Ok(());
        }
        let line = if m.name.is_empty() {
            parts.join(" · ")
        } else {
            format!("{}  {}", m.name, parts.join(" · "))
        };
        let dim = self.pal.dim;
        self.para(0, 3, ("", Style::new()), &line, dim)
    }
}

/// A context window size: `1M`, `200k`, or the number.
pub fn round_size(n: u64) -> String {
    if n >= 1_000_000 && n % 1_000_000 == 0 {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 && n % 1000 == 0 {
        format!("{}k", n / 1000)
    } else {
        thousands(n)
    }
}

/// A turn's cost: `$0.0112`, `$0.0112 (session $0.1478)`, or `session $0.1478` when only the
/// running total is known.
pub fn cost(turn: Option<f64>, session: Option<f64>) -> Option<String> {
    match (turn, session) {
        (Some(t), Some(s)) => Some(format!("{} (session {})", dollars(t), dollars(s))),
        (Some(t), None) => Some(dollars(t)),
        (None, Some(s)) => Some(format!("session {}", dollars(s))),
        (None, None) => None,
    }
}

/// `context 19,231 of 1,000,000 (2%)`.
pub fn context(used: u64, window: Option<u64>) -> String {
    match window.filter(|w| *w > 0) {
        Some(w) => {
            let pct = used as f64 * 100.0 / w as f64;
            let pct = if pct > 0.0 && pct < 1.0 {
                "<1%".to_string()
            } else {
                format!("{pct:.0}%")
            };
            format!("context {} of {} ({pct})", thousands(used), round_size(w))
        }
        None => format!("context {}", thousands(used)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::model::Block;

    fn term(color: bool) -> Term<Vec<u8>> {
        Term::new(
            Vec::new(),
            Palette::new(color),
            Layout {
                width: 40,
                full: false,
                thinking: false,
            },
        )
    }

    #[test]
    fn no_escape_without_colour() {
        let mut t = term(false);
        t.block(&Block::Text {
            depth: 1,
            text: "hello".into(),
        })
        .unwrap();
        t.ticker(Some(("… writing", "hel"))).unwrap();
        t.ticker(None).unwrap();
        let out = String::from_utf8(t.into_inner()).unwrap();
        assert!(!out.contains('\x1b'), "{out:?}");
        assert_eq!(out, "    │   hello\n\r… writing: hel\r              \r");
    }

    #[test]
    fn the_ticker_is_cleared_before_a_block() {
        let mut t = term(false);
        t.ticker(Some(("… writing", "Hello wor"))).unwrap();
        t.ticker(Some(("… writing", "Hello world"))).unwrap();
        t.block(&Block::Text {
            depth: 0,
            text: "Hello world".into(),
        })
        .unwrap();
        let out = String::from_utf8(t.into_inner()).unwrap();
        let screen = out.rsplit('\r').next().unwrap();
        assert_eq!(screen, "  Hello world\n");
    }

    #[test]
    fn the_ticker_keeps_the_newest_text_on_one_row() {
        let mut t = term(false);
        let long = "word ".repeat(40) + "NEWEST";
        t.ticker(Some(("… writing", &long))).unwrap();
        let out = String::from_utf8(t.into_inner()).unwrap();
        let shown = out.trim_start_matches('\r');
        assert!(shown.ends_with("NEWEST"), "{shown:?}");
        assert!(shown.starts_with("… writing: …"), "{shown:?}");
        assert!(width(shown) <= 39, "{shown:?}");
    }

    #[test]
    fn long_output_is_cut() {
        let mut t = term(false);
        let out: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        t.rows(0, 6, &[(&out, Style::new())], OUTPUT_ROWS).unwrap();
        let s = String::from_utf8(t.into_inner()).unwrap();
        assert_eq!(s.lines().count(), OUTPUT_ROWS + 1);
        assert!(s.ends_with("… 15 more lines (--full shows all)\n"), "{s}");
    }
}
