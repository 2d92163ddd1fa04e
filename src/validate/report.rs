//! The report in its three formats: text for people, one JSON document for programs, and
//! GitHub Actions workflow commands. Each ends with the totals.

use super::check::{FileReport, Health};
use super::rules::{Finding, Level};
use super::Format;
use owo_colors::{OwoColorize, Style};
use serde_json::{json, Map, Value};
use std::io::{self, Write};

/// The totals over every log.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub files: u64,
    pub events: u64,
    pub errors: u64,
    pub warnings: u64,
    /// Logs that could not be opened or read to the end.
    pub io_errors: u64,
    /// How the provider lines of all logs converted (raw reasons are left to each log).
    pub conversion: Health,
}

impl Summary {
    fn add(&mut self, r: &FileReport) {
        self.files += 1;
        self.events += r.events;
        self.errors += r.errors;
        self.warnings += r.warnings;
        if r.io_error.is_some() {
            self.io_errors += 1;
        }
        let c = &mut self.conversion;
        c.normalized += r.health.normalized;
        c.unreadable += r.health.unreadable;
        for (name, p) in &r.health.providers {
            let t = c.providers.entry(name).or_default();
            t.lines += p.lines;
            t.events += p.events;
            t.raw += p.raw;
        }
    }
}

/// Writes the reports of the logs in order, then the summary.
pub struct Reporter {
    format: Format,
    palette: Palette,
    sum: Summary,
    /// For `json`: the file objects, written at the end as one document.
    files: Vec<Value>,
}

/// Styles of the text format; all plain when colour is off.
struct Palette {
    file: Style,
    error: Style,
    warning: Style,
    rule: Style,
    note: Style,
}

impl Palette {
    fn new(color: bool) -> Palette {
        if !color {
            let s = Style::new();
            return Palette {
                file: s,
                error: s,
                warning: s,
                rule: s,
                note: s,
            };
        }
        Palette {
            file: Style::new().bold(),
            error: Style::new().red().bold(),
            warning: Style::new().yellow().bold(),
            rule: Style::new().cyan(),
            note: Style::new().dimmed(),
        }
    }

    fn level(&self, l: Level) -> Style {
        match l {
            Level::Error => self.error,
            Level::Warning => self.warning,
        }
    }
}

impl Reporter {
    pub fn new(format: Format, color: bool) -> Reporter {
        Reporter {
            format,
            palette: Palette::new(color && format == Format::Text),
            sum: Summary::default(),
            files: Vec::new(),
        }
    }

    pub fn summary(&self) -> &Summary {
        &self.sum
    }

    /// Adds one log's report (and writes it, except for `json`).
    pub fn file(&mut self, w: &mut impl Write, r: &FileReport) -> io::Result<()> {
        self.sum.add(r);
        match self.format {
            Format::Text => self.text(w, r),
            Format::Github => github(w, r),
            Format::Json => {
                self.files.push(file_json(r));
                Ok(())
            }
        }
    }

    /// Writes the summary (for `json`, the whole document).
    pub fn finish(&mut self, w: &mut impl Write) -> io::Result<()> {
        let s = &self.sum;
        match self.format {
            Format::Json => {
                let doc = json!({
                    "files": std::mem::take(&mut self.files),
                    "summary": {
                        "files": s.files,
                        "events": s.events,
                        "errors": s.errors,
                        "warnings": s.warnings,
                        "ioErrors": s.io_errors,
                        "conversion": health_json(&s.conversion),
                    },
                });
                serde_json::to_writer_pretty(&mut *w, &doc).map_err(io::Error::from)?;
                writeln!(w)
            }
            Format::Text => {
                let p = &self.palette;
                for line in health_lines(&s.conversion) {
                    writeln!(w, "{} {}", "conversion:".style(p.note), sanitize(&line))?;
                }
                let errors = plural(s.errors, "error");
                let errors = if s.errors > 0 {
                    format!("{}", errors.style(p.error))
                } else {
                    errors
                };
                let warnings = plural(s.warnings, "warning");
                let warnings = if s.warnings > 0 {
                    format!("{}", warnings.style(p.warning))
                } else {
                    warnings
                };
                writeln!(w, "{}, {errors}, {warnings}{}", counts(s), unread(s))
            }
            Format::Github => {
                for line in health_lines(&s.conversion) {
                    writeln!(w, "conversion: {}", gh_data(&line))?;
                }
                let (e, wn) = (plural(s.errors, "error"), plural(s.warnings, "warning"));
                writeln!(w, "{}, {e}, {wn}{}", counts(s), unread(s))
            }
        }
    }

    fn text(&self, w: &mut impl Write, r: &FileReport) -> io::Result<()> {
        let p = &self.palette;
        for f in &r.findings {
            writeln!(
                w,
                "{}: {}: {}: {}",
                location(&r.name, f).style(p.file),
                f.level.as_str().style(p.level(f.level)),
                f.rule.id().style(p.rule),
                sanitize(&f.text())
            )?;
        }
        for (rule, n) in &r.omitted {
            writeln!(
                w,
                "{}: {} {} more {} findings not listed",
                sanitize(&r.name).style(p.file),
                "note:".style(p.note),
                n,
                rule.id()
            )?;
        }
        for line in trouble_lines(&r.health) {
            writeln!(
                w,
                "{}: {} {}",
                sanitize(&r.name).style(p.file),
                "conversion:".style(p.note),
                sanitize(&line)
            )?;
        }
        Ok(())
    }
}

fn counts(s: &Summary) -> String {
    format!("{}, {}", plural(s.files, "file"), plural(s.events, "event"))
}

fn unread(s: &Summary) -> String {
    match s.io_errors {
        0 => String::new(),
        n => format!(", {} could not be read", plural(n, "file")),
    }
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn location(name: &str, f: &Finding) -> String {
    let name = sanitize(name);
    match f.column {
        Some(c) => format!("{name}:{}:{c}", f.line),
        None => format!("{name}:{}", f.line),
    }
}

/// Control characters from the input (in ids, reasons, paths) escaped, so a report cannot
/// drive the terminal.
fn sanitize(s: &str) -> String {
    if !s.chars().any(needs_escape) {
        return s.to_owned();
    }
    s.chars()
        .map(|c| {
            if needs_escape(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A log's conversion in detail, when some of its lines fell back to `raw` or could not be read.
fn trouble_lines(h: &Health) -> Vec<String> {
    let raw = h.providers.values().any(|p| p.raw > 0);
    if raw || (h.converted() && h.unreadable > 0) {
        health_lines(h)
    } else {
        Vec::new()
    }
}

/// How the provider lines converted, one line per provider and per raw reason; nothing when no
/// line was provider output.
fn health_lines(h: &Health) -> Vec<String> {
    if !h.converted() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (name, p) in &h.providers {
        out.push(format!(
            "{name}: {}, {}, {} raw",
            plural(p.lines, "line"),
            plural(p.events, "event"),
            p.raw
        ));
        for (reason, n) in &p.reasons {
            out.push(format!("{name}: {n} raw: {reason}"));
        }
    }
    if h.normalized > 0 {
        out.push(format!(
            "{} already InsightsEvents",
            plural(h.normalized, "line")
        ));
    }
    if h.unreadable > 0 {
        out.push(plural(h.unreadable, "unreadable line"));
    }
    out
}

fn github(w: &mut impl Write, r: &FileReport) -> io::Result<()> {
    let file = gh_property(&r.name);
    if let Some(e) = &r.io_error {
        writeln!(
            w,
            "::error file={file},title=insights validate::cannot read {}: {}",
            gh_data(&r.name),
            gh_data(e)
        )?;
    }
    for f in &r.findings {
        let col = f.column.map(|c| format!(",col={c}")).unwrap_or_default();
        writeln!(
            w,
            "::{} file={file},line={}{col},title={}::{}",
            f.level.as_str(),
            f.line,
            gh_property(f.rule.id()),
            gh_data(&f.text())
        )?;
    }
    for (rule, n) in &r.omitted {
        writeln!(w, "{}: {n} more {} findings not listed", r.name, rule.id())?;
    }
    for line in trouble_lines(&r.health) {
        writeln!(w, "{}: conversion: {}", r.name, gh_data(&line))?;
    }
    Ok(())
}

/// Escapes for the message of a workflow command.
fn gh_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes for a property value of a workflow command.
fn gh_property(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn health_json(h: &Health) -> Value {
    let providers: Map<String, Value> = h
        .providers
        .iter()
        .map(|(name, p)| {
            let mut o = json!({"lines": p.lines, "events": p.events, "raw": p.raw});
            if !p.reasons.is_empty() {
                o["reasons"] = json!(p.reasons);
            }
            ((*name).to_owned(), o)
        })
        .collect();
    json!({
        "normalized": h.normalized,
        "providers": providers,
        "unreadable": h.unreadable,
    })
}

fn file_json(r: &FileReport) -> Value {
    let mut m = Map::new();
    m.insert("path".into(), r.name.clone().into());
    m.insert("lines".into(), r.lines.into());
    m.insert("events".into(), r.events.into());
    m.insert("errors".into(), r.errors.into());
    m.insert("warnings".into(), r.warnings.into());
    if let Some(e) = &r.io_error {
        m.insert("ioError".into(), e.clone().into());
    }
    m.insert("conversion".into(), health_json(&r.health));
    let findings: Vec<Value> = r
        .findings
        .iter()
        .map(|f| {
            let mut o = Map::new();
            o.insert("line".into(), f.line.into());
            if let Some(c) = f.column {
                o.insert("column".into(), c.into());
            }
            o.insert("level".into(), f.level.as_str().into());
            o.insert("rule".into(), f.rule.id().into());
            if let Some(p) = &f.pointer {
                o.insert("pointer".into(), p.clone().into());
            }
            o.insert("message".into(), f.message.clone().into());
            Value::Object(o)
        })
        .collect();
    m.insert("findings".into(), findings.into());
    if !r.omitted.is_empty() {
        let o: Map<String, Value> = r
            .omitted
            .iter()
            .map(|(rule, n)| (rule.id().to_owned(), (*n).into()))
            .collect();
        m.insert("omitted".into(), o.into());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::super::rules::Rule;
    use super::*;

    fn report() -> FileReport {
        FileReport {
            name: "a,b:c.jsonl".into(),
            lines: 2,
            events: 2,
            errors: 1,
            warnings: 1,
            findings: vec![
                Finding {
                    line: 1,
                    column: Some(3),
                    rule: Rule::UnreadableLine,
                    level: Level::Error,
                    pointer: None,
                    message: "100% bad\nreally \u{1b}[31m".into(),
                },
                Finding {
                    line: 2,
                    column: None,
                    rule: Rule::RawEvent,
                    level: Level::Warning,
                    pointer: None,
                    message: "unmapped".into(),
                },
            ],
            ..FileReport::default()
        }
    }

    fn render(format: Format, color: bool) -> String {
        let mut w = Vec::new();
        let mut r = Reporter::new(format, color);
        r.file(&mut w, &report()).unwrap();
        r.finish(&mut w).unwrap();
        String::from_utf8(w).unwrap()
    }

    #[test]
    fn text_escapes_control_characters() {
        let t = render(Format::Text, false);
        assert_eq!(
            t,
            "a,b:c.jsonl:1:3: error: unreadable-line: 100% bad\\u{a}really \\u{1b}[31m\n\
             a,b:c.jsonl:2: warning: raw-event: unmapped\n\
             1 file, 2 events, 1 error, 1 warning\n"
        );
        assert!(render(Format::Text, true).contains("\u{1b}[31;1merror"));
    }

    #[test]
    fn github_escapes_properties_and_data() {
        let t = render(Format::Github, false);
        assert_eq!(
            t.lines().next(),
            Some("::error file=a%2Cb%3Ac.jsonl,line=1,col=3,title=unreadable-line::100%25 bad%0Areally \u{1b}[31m")
        );
        assert!(t.contains("::warning file=a%2Cb%3Ac.jsonl,line=2,title=raw-event::unmapped"));
        assert!(!render(Format::Github, true).contains("\u{1b}[1"));
    }

    #[test]
    fn findings_over_the_cap_are_counted() {
        let mut r = report();
        r.omitted = vec![(Rule::SeqOrder, 5)];
        let mut w = Vec::new();
        Reporter::new(Format::Text, false).file(&mut w, &r).unwrap();
        let text = String::from_utf8(w).unwrap();
        assert!(
            text.ends_with("a,b:c.jsonl: note: 5 more seq-order findings not listed\n"),
            "{text}"
        );
        let mut rep = Reporter::new(Format::Json, false);
        let mut w = Vec::new();
        rep.file(&mut w, &r).unwrap();
        rep.finish(&mut w).unwrap();
        let v: Value = serde_json::from_slice(&w).unwrap();
        assert_eq!(v["files"][0]["omitted"]["seq-order"], 5);
    }

    #[test]
    fn json_is_one_document() {
        let v: Value = serde_json::from_str(&render(Format::Json, true)).unwrap();
        assert_eq!(v["summary"]["errors"], 1);
        assert_eq!(v["files"][0]["findings"][0]["column"], 3);
        assert_eq!(v["files"][0]["findings"][1]["rule"], "raw-event");
    }
}
