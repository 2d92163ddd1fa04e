//! What unit tests share: the recorded captures, and converting lines as one stream.

use crate::detect::Probe;
use crate::event::{Body, Extensions};
use crate::providers::{Cx, Provider};
use serde_json::Value;
use std::path::{Path, PathBuf};

mod rng;
pub use rng::Rng;

/// Every `.jsonl` file under `testdata/`, sorted.
pub fn testdata_jsonl() -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(d) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"),
        &mut v,
    );
    v.sort();
    v
}

/// The events `provider` makes of `lines` as one stream (what it remembers carried from line
/// to line), each as JSON with its `event` and, when there are any, its `extensions`; the
/// envelope (`id`, `seq`) is left to the converter's own tests, except `sessionId`, the
/// line's (`""` when the provider named none).
pub fn convert_stream(provider: &Provider, lines: &[&str]) -> Vec<Value> {
    convert_stream_with(provider, lines, |b, e, cx| {
        let mut v = serde_json::to_value(b).expect("an event serializes");
        v["event"] = Value::from(b.kind());
        v["sessionId"] = Value::from(cx.session_id.as_deref().unwrap_or(""));
        if !e.is_empty() {
            v["extensions"] = serde_json::to_value(e).expect("extensions serialize");
        }
        v
    })
}

/// [`convert_stream`] of one line, as `--from` converts it: whatever its shape.
pub fn convert_line(provider: &Provider, line: &str) -> Vec<Value> {
    convert_stream(provider, &[line])
}

/// [`convert_line`] of a line that `provider`'s detection rule takes (it fails the test if
/// not).
pub fn convert_sniffed(provider: &Provider, line: &str) -> Vec<Value> {
    assert!(sniffs(provider, line), "not {}'s: {line}", provider.name);
    convert_line(provider, line)
}

/// Whether `provider`'s detection rule takes `line`, a JSON object.
pub fn sniffs(provider: &Provider, line: &str) -> bool {
    let mut probe = Probe::default();
    probe.fill(line).expect("a JSON object");
    (provider.sniff)(&probe)
}

/// The events of `evs` whose `event` is `kind`.
pub fn of_kind<'v>(evs: &'v [Value], kind: &str) -> Vec<&'v Value> {
    evs.iter().filter(|e| e["event"] == kind).collect()
}

/// The `event` of each of `evs`, in order.
pub fn kinds(evs: &[Value]) -> Vec<&str> {
    evs.iter()
        .map(|e| e["event"].as_str().expect("an event kind"))
        .collect()
}

/// Converts `lines` as [`convert_stream`] does, and gives what `each` makes of every event
/// (its body, its extensions, and the context its line left).
pub fn convert_stream_with<T>(
    provider: &Provider,
    lines: &[&str],
    mut each: impl FnMut(&Body<'_>, &Extensions<'_>, &Cx<'_>) -> T,
) -> Vec<T> {
    let mut memory = None;
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut probe = Probe::default();
        probe.fill(line).expect("a JSON object");
        let mut cx = Cx {
            line: i as u64 + 1,
            memory: memory.take(),
            ..Default::default()
        };
        (provider.convert)(line, &probe, &mut cx)
            .unwrap_or_else(|e| panic!("line {}: {}", i + 1, e.0));
        out.extend(cx.events.iter().map(|(b, e)| each(b, e, &cx)));
        memory = cx.memory.take();
    }
    out
}

/// The events the converter writes for `lines` (one input, read to its end, `--from`
/// `provider`, no clock): the whole envelope (`id`, `seq`), what the converter adds to a
/// provider's events (inferred turn starts, whole messages) and what it writes at the end of
/// the input.
pub fn convert_output(provider: &Provider, lines: &[&str]) -> Vec<Value> {
    let mut opts = crate::convert::Options::for_tests(1 << 20);
    opts.forced = crate::providers::by_name(provider.name);
    let input = lines.join("\n") + "\n";
    convert_text(&opts, &input)
        .iter()
        .map(|l| serde_json::from_str(l).expect("an event is JSON"))
        .collect()
}

/// The lines the converter writes for `input` (one input, read to its end) with `opts`.
pub fn convert_text(opts: &crate::convert::Options, input: &str) -> Vec<String> {
    let mut out = crate::output::Out::new(Vec::new());
    let mut diag = crate::diag::Diag::new(false);
    let mut c = crate::convert::Converter::new(opts, &mut out);
    c.run_reader(input.as_bytes(), "<test>", &mut diag)
        .expect("converts");
    drop(c);
    out.flush().expect("flushes");
    let text = String::from_utf8(out.w.into_inner().expect("the output")).expect("UTF-8");
    text.lines().map(str::to_owned).collect()
}

/// A line's context for a provider step's unit test: session `session`, the memory carried
/// over from the line before (taken out of `memory`; put it back with `cx.memory.take()`),
/// and `bodies` as the line's events.
pub fn line_cx<'a>(
    memory: &mut Option<Box<crate::providers::Memory>>,
    session: &'a str,
    bodies: Vec<Body<'a>>,
) -> Cx<'a> {
    let mut cx = Cx {
        session_id: Some(std::borrow::Cow::Borrowed(session)),
        memory: memory.take(),
        ..Cx::default()
    };
    for b in bodies {
        cx.push(b);
    }
    cx
}
