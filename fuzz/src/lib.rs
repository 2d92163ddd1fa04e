//! One entry point per fuzz target in [`targets`], calling into the `insights` library. Each entry point takes arbitrary bytes, runs a part of `insights` on
//! them in process, and panics when it breaks a guarantee, which the fuzzer reports as a crash.
#![allow(dead_code, unused_imports, unused_macros, clippy::all)]

pub mod targets {
    use clap::Parser;
    use insights::cli::{Cli, Command};
    use insights::convert::{Converter, Options};
    use insights::diag::Diag;
    use insights::input::{Line, LineReader, Source};
    use insights::output::{FlushPolicy, Out};
    use serde_json::value::RawValue;
    use std::collections::HashMap;
    use std::io::Write;
    use std::sync::OnceLock;

    /// The names `--from` takes: one target per provider, plus `auto`.
    pub fn providers() -> Vec<&'static str> {
        insights::providers::PROVIDERS
            .iter()
            .map(|p| p.name)
            .collect()
    }

    /// Options as `insights --no-timestamp --from FROM` resolves them, in block mode (parsed
    /// once per name).
    fn options(from: &str) -> Options {
        static CACHE: OnceLock<std::sync::Mutex<HashMap<String, Options>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(from.to_owned())
            .or_insert_with(|| parse_options(from))
            .clone()
    }

    fn parse_options(from: &str) -> Options {
        let cli = Cli::try_parse_from(["insights", "validate", "--from", from])
            .unwrap_or_else(|e| panic!("--from {from}: {e}"));
        let Some(Command::Validate(args)) = cli.command else {
            unreachable!()
        };
        let mut o = args.input.options().expect("options");
        o.clock = false;
        o.flush = FlushPolicy::Block;
        o
    }

    /// Converts `data` the way `run_source` does, into a string.
    fn convert_all(data: &[u8], opts: &Options) -> (Vec<u8>, u64) {
        let mut out = Out::new(Vec::new());
        let mut diag = Diag::new(false);
        let mut conv = Converter::new(opts, &mut out);
        conv.run_reader(data, "<fuzz>", &mut diag)
            .expect("writing to memory cannot fail");
        drop(conv);
        out.flush().unwrap();
        (out.w.into_inner().ok().unwrap(), diag.bad_lines)
    }

    /// Checks one output line: a JSON object whose `event` is a string and whose `seq` is
    /// `seq`. Nesting of any depth is allowed (members are not parsed into a tree).
    fn check_event(line: &[u8], seq: u64) {
        let text = std::str::from_utf8(line).expect("output is UTF-8");
        let m: HashMap<String, &RawValue> = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("output line is not a JSON object ({e}): {text}"));
        let ev = m.get("event").map(|v| v.get()).unwrap_or("");
        assert!(ev.starts_with('"'), "no string `event`: {text}");
        if let Some(reason) = m.get("reason").map(|r| r.get()) {
            // A converter panic caught by the safety net in convert.rs (not in fuzzing builds).
            assert!(!reason.starts_with("\"internal error in the"), "{reason}");
        }
        let got = m.get("seq").and_then(|v| v.get().parse::<u64>().ok());
        assert_eq!(got, Some(seq), "seq: {text}");
    }

    fn lines(out: &[u8]) -> impl Iterator<Item = &[u8]> {
        out.split(|&b| b == b'\n').filter(|l| !l.is_empty())
    }

    /// A provider converter, or detection (`auto`), on any bytes. Guarantees checked:
    ///
    /// * no panic, no hang;
    /// * every non-blank input line yields events or exactly one diagnostic, not both; blank
    ///   lines yield nothing; a line whose events wait for a later one (a prompt held for the
    ///   line that names its session) has them written by the end, with its line number;
    /// * every output line is a JSON object with a string `event`, `seq` counting from 1;
    /// * line by line and `run_reader` give the same output (and so does a second run);
    /// * converting the output again changes nothing; `--compat cc-insights` twice is once;
    /// * `--redact` keeps every line valid JSON and is idempotent.
    pub fn convert(from: &str, data: &[u8]) {
        let opts = options(from);

        // Line by line, watching what each line yields.
        let mut out = Out::new(Vec::new());
        let mut diag = Diag::new(false);
        let mut conv = Converter::new(&opts, &mut out);
        let mut rdr = LineReader::new(data, opts.max_line);
        let mut buf = Vec::new();
        // Lines that yielded nothing yet: their events must come by the end.
        let mut later: Vec<(u64, String)> = Vec::new();
        while let Some(l) = rdr.next_line(&mut buf).expect("reading memory cannot fail") {
            assert_eq!(l, Line::Ok, "no line is over 64 MiB here");
            let (events, bad) = (conv.stats.events, diag.bad_lines);
            let ok = conv
                .line(&buf, rdr.lineno(), rdr.unterminated(), "<fuzz>", &mut diag)
                .expect("writing to memory cannot fail");
            let (de, db) = (conv.stats.events - events, diag.bad_lines - bad);
            let blank = buf.iter().all(u8::is_ascii_whitespace);
            if blank {
                assert!(ok && de == 0 && db == 0, "a blank line yielded something");
            } else if de == 0 && db == 0 && ok {
                later.push((rdr.lineno(), String::from_utf8_lossy(&buf).into_owned()));
            } else {
                assert!(
                    (de > 0) != (db > 0) && db <= 1 && ok == (db == 0),
                    "line {}: {de} events and {db} diagnostics: {:?}",
                    rdr.lineno(),
                    String::from_utf8_lossy(&buf)
                );
            }
        }
        // The input's end, as `run_reader` ends it (a provider may end what is open).
        conv.close_input(rdr.lineno(), "<fuzz>", &mut diag)
            .expect("writing to memory cannot fail");
        drop(conv);
        out.flush().unwrap();
        let once = out.w.into_inner().ok().unwrap();
        let mut written = std::collections::HashSet::new();
        for (i, l) in lines(&once).enumerate() {
            check_event(l, i as u64 + 1);
            let m: HashMap<String, &RawValue> = serde_json::from_slice(l).unwrap_or_default();
            if let Some(n) = m.get("line").and_then(|v| v.get().parse::<u64>().ok()) {
                written.insert(n);
            }
        }
        for (n, text) in later {
            assert!(written.contains(&n), "line {n}: no events and no diagnostic: {text:?}");
        }

        let (again, _) = convert_all(data, &opts);
        assert!(once == again, "line by line and run_reader differ");

        let (twice, bad) = convert_all(&once, &options("auto"));
        assert_eq!(bad, 0, "the output does not read back");
        assert!(once == twice, "converting the output again changed it");

        let mut compat = opts.clone();
        compat.cc_insights = true;
        compat.raw = true;
        let (c1, _) = convert_all(data, &compat);
        for l in lines(&c1) {
            serde_json::from_slice::<HashMap<String, &RawValue>>(l).expect("compat output");
        }
        let (c2, _) = convert_all(&c1, &compat);
        assert!(c1 == c2, "--compat cc-insights twice differs from once");

        redact_lines(&once);
    }

    /// `--redact` on output lines: still one JSON object per line, and idempotent.
    fn redact_lines(text: &[u8]) {
        let r1 = insights::redact::redact(text);
        assert_eq!(
            r1.iter().filter(|&&b| b == b'\n').count(),
            text.iter().filter(|&&b| b == b'\n').count(),
            "redaction changed the number of lines"
        );
        for l in lines(&r1) {
            let s = std::str::from_utf8(l).expect("redacted output is UTF-8");
            serde_json::from_str::<HashMap<String, &RawValue>>(s)
                .unwrap_or_else(|e| panic!("redacted line is not JSON ({e}): {s}"));
        }
        let r2 = insights::redact::redact(&r1);
        assert!(r1 == r2, "redaction is not idempotent");
    }

    /// Redaction alone on any bytes: no panic, idempotent, and on lines that are JSON
    /// objects the result is a JSON object again.
    pub fn redact(data: &[u8]) {
        let r1 = insights::redact::redact(data);
        let r2 = insights::redact::redact(&r1);
        if r1 != r2 {
            let at = r1.iter().zip(r2.iter()).take_while(|(a, b)| a == b).count();
            let around = |s: &[u8]| {
                String::from_utf8_lossy(&s[at.saturating_sub(80)..(at + 80).min(s.len())])
                    .into_owned()
            };
            panic!(
                "redaction is not idempotent at byte {at}:\nonce:  {:?}\ntwice: {:?}",
                around(&r1),
                around(&r2)
            );
        }
        assert_eq!(
            r1.iter().filter(|&&b| b == b'\n').count(),
            data.iter().filter(|&&b| b == b'\n').count(),
            "redaction changed the number of lines"
        );
        for (l, r) in data.split(|&b| b == b'\n').zip(r1.split(|&b| b == b'\n')) {
            let Ok(s) = std::str::from_utf8(l) else {
                continue;
            };
            if serde_json::from_str::<HashMap<String, &RawValue>>(s).is_ok() {
                let r = std::str::from_utf8(r).expect("redaction keeps UTF-8");
                serde_json::from_str::<HashMap<String, &RawValue>>(r)
                    .unwrap_or_else(|e| panic!("redaction broke the JSON ({e}): {s}\n{r}"));
            }
        }
        // And with the line ends the writer gives it.
        let mut w = insights::output::WholeLines::new(Vec::new(), true);
        for chunk in data.chunks(7) {
            w.write_all(chunk).unwrap();
        }
        w.flush().unwrap();
    }

    struct Validate {
        schema: jsonschema::Validator,
        fast: insights::validate::fast::FastSchema,
        opts: Options,
        policy: insights::validate::rules::Policy,
    }

    fn validate_cx() -> &'static Validate {
        static CX: OnceLock<Validate> = OnceLock::new();
        CX.get_or_init(|| {
            let json: serde_json::Value =
                serde_json::from_str(insights::schema::EVENT_SCHEMA).unwrap();
            Validate {
                schema: insights::validate::compile(&json).unwrap(),
                fast: insights::validate::fast::FastSchema::compile(&json),
                opts: options("auto"),
                policy: insights::validate::rules::Policy::new(&[], &[]).unwrap(),
            }
        })
    }

    /// `insights validate` on one log: checking and every report format, without a panic.
    pub fn validate(data: &[u8]) {
        use insights::validate::{check, report, Format};
        let v = validate_cx();
        let cx = check::Context {
            schema: &v.schema,
            fast: &v.fast,
            opts: &v.opts,
            policy: &v.policy,
        };
        let pipelined = data.first().is_some_and(|b| b & 1 == 1);
        let r = check::check_reader(data, "<fuzz>".into(), &cx, pipelined);
        for format in [Format::Text, Format::Json, Format::Github] {
            let mut rep = report::Reporter::new(format, format == Format::Text);
            let mut w = Vec::new();
            rep.file(&mut w, &r).unwrap();
            rep.finish(&mut w).unwrap();
        }
    }

    /// `insights reduce` on one log: no panic; the state reads back; and reducing the log in
    /// two parts, resuming from the first part's state, gives the state of one go.
    pub fn reduce(data: &[u8]) {
        use insights::reduce::{read_source, state::State, summary, Reducer};
        let path = temp_file(data);
        let opts = options("auto");
        let src = Source::File(path.clone());
        let mut diag = Diag::new(false);
        let mut red = Reducer::new(State::new(), None);
        let mut seqs = Vec::new();
        read_source(&src, &opts, &mut diag, &mut red, &mut |r, _| {
            seqs.push(r.state.last_seq);
            Ok(())
        })
        .unwrap();
        red.state.finish();
        let whole = serde_json::to_string(&red.state).unwrap();
        let _ = summary::render(&red.state);
        // The state reads back byte for byte, whatever the kept JSON values hold (members
        // given twice, lone surrogate escapes, numbers beyond f64, deep nesting).
        let back = State::from_json(&whole)
            .unwrap_or_else(|e| panic!("the state does not read back: {e:#}\n{whole}"));
        let again = serde_json::to_string(&back).unwrap();
        assert!(again == whole, "state round trip:\n{whole}\n{again}");

        // Resume: the events up to the middle one, then the whole log again from that state.
        // (Only for logs numbered in order: resuming skips by `seq`.)
        let ordered = seqs.windows(2).all(|w| w[0] < w[1]);
        if let Some(&cut) = seqs.get(seqs.len() / 2).filter(|_| ordered) {
            let mut first = Reducer::new(State::new(), Some(cut));
            read_source(&src, &opts, &mut diag, &mut first, &mut |_, _| Ok(())).unwrap();
            first.state.finish();
            let snap = serde_json::to_string(&first.state).unwrap();
            let st = State::from_json(&snap)
                .unwrap_or_else(|e| panic!("the snapshot does not read back: {e:#}\n{snap}"));
            let mut rest = Reducer::new(st, None);
            read_source(&src, &opts, &mut diag, &mut rest, &mut |_, _| Ok(())).unwrap();
            rest.state.finish();
            let resumed = serde_json::to_string(&rest.state).unwrap();
            assert!(
                resumed == whole,
                "resuming after seq {cut} differs:\n{whole}\n{resumed}"
            );
        }
        let _ = std::fs::remove_file(path);
    }

    /// The input as a file of this process's own (the reducer reads sources, not bytes).
    fn temp_file(data: &[u8]) -> std::path::PathBuf {
        let dir = if std::path::Path::new("/dev/shm").is_dir() {
            std::path::PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let p = dir.join(format!("insights-fuzz-{}.jsonl", std::process::id()));
        std::fs::write(&p, data).expect("write the fuzz input");
        p
    }

    /// Detection (`convert("auto", …)`), and its one-pass probe: a line that
    /// `Probe::scan` reads, serde_json reads too, with the same members (as fields and by
    /// name, `Probe::member`); and a value read from the members the probe kept
    /// (`members::read`) is the one serde_json reads. A line that `json_reader` reads,
    /// serde_json reads too, as the same value.
    pub fn detect(data: &[u8]) {
        for line in data.split(|&b| b == b'\n') {
            let Ok(text) = std::str::from_utf8(line) else {
                continue;
            };
            let mut r = insights::json_reader::Reader::new(text);
            if let Ok(v) = <serde_json::Value as serde::Deserialize>::deserialize(&mut r) {
                if r.end().is_ok() {
                    let slow: serde_json::Value = serde_json::from_str(text)
                        .unwrap_or_else(|e| panic!("read, but serde_json says {e}: {text}"));
                    assert_eq!(v, slow, "{text}");
                }
            }
            if let Some(fast) = insights::detect::Probe::scan(text) {
                let slow: insights::detect::Probe = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("scanned, but serde_json says {e}: {text}"));
                assert_eq!(fast, slow, "{text}");
                for &(name, _) in fast.members().unwrap_or_default() {
                    assert_eq!(fast.member(name), slow.member(name), "{name}: {text}");
                }
                let by_members: Result<serde_json::Value, _> =
                    insights::members::read(text, fast.members());
                let by_text: Result<serde_json::Value, _> = serde_json::from_str(text);
                match (by_members, by_text) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                    (a, b) => panic!("by members {a:?}, by text {b:?}: {text}"),
                }
            }
        }
        convert("auto", data)
    }

    /// Every target by name: `convert_<provider>`, `detect`, `validate`, `reduce`, `redact`.
    /// `--jobs` on a regular file reads blocks ([`BlockReader`], split by [`BlockLines`]);
    /// one thread reads lines ([`LineReader`]): both give the same lines, numbers, lengths
    /// over the cap and final-newline flags. The first three bytes choose the cap, the block
    /// size and the read size, small enough that lines cross blocks and reads.
    pub fn lines_read(data: &[u8]) {
        let [a, b, c, rest @ ..] = data else { return };
        let (max, size, step) = (
            usize::from(*a % 64),
            usize::from(*b % 64) + 1,
            usize::from(*c % 64) + 1,
        );
        let want = insights::input::read_as_lines(rest, max).unwrap();
        let got = insights::input::read_as_blocks(rest, max, size, step).unwrap();
        assert_eq!(got, want, "max {max} size {size} step {step}");
    }

    /// The `convert` target: the first byte picks the provider (`--from`, [`providers`] in
    /// order, modulo their number), the rest is the input. One target for every provider.
    pub fn convert_any(data: &[u8]) {
        let Some((&pick, rest)) = data.split_first() else {
            return;
        };
        let names = providers();
        convert(names[usize::from(pick) % names.len()], rest)
    }

    /// A `convert` input that runs `data` through provider `from` ([`convert_any`]).
    pub fn convert_input(from: &str, data: &[u8]) -> Option<Vec<u8>> {
        let i = providers().iter().position(|n| *n == from)?;
        let mut v = Vec::with_capacity(data.len() + 1);
        v.push(u8::try_from(i).ok()?);
        v.extend_from_slice(data);
        Some(v)
    }

    /// A target by name: a cargo-fuzz target of [`names`], or `convert_PROVIDER` (the
    /// `convert` target with its provider fixed, as `stdfuzz` runs it).
    pub fn by_name(name: &str) -> Option<Box<dyn Fn(&[u8])>> {
        let f: Box<dyn Fn(&[u8])> = match name {
            "convert" => Box::new(convert_any),
            "detect" => Box::new(detect),
            "validate" => Box::new(validate),
            "reduce" => Box::new(reduce),
            "redact" => Box::new(redact),
            "lines" => Box::new(lines_read),
            _ => {
                let p = name.strip_prefix("convert_")?;
                let p: &'static str = providers().into_iter().find(|n| *n == p)?;
                Box::new(move |d| convert(p, d))
            }
        };
        Some(f)
    }

    /// The cargo-fuzz targets (one file each in `fuzz_targets/`).
    pub fn names() -> Vec<String> {
        ["convert", "detect", "validate", "reduce", "redact", "lines"]
            .map(String::from)
            .to_vec()
    }

    /// What `stdfuzz` runs by default: [`names`] with `convert` once per provider, since it has
    /// no coverage feedback to find the provider byte's values by itself.
    pub fn smoke_names() -> Vec<String> {
        let mut v: Vec<String> = providers()
            .into_iter()
            .map(|p| format!("convert_{p}"))
            .collect();
        v.extend(names().into_iter().filter(|n| n != "convert"));
        v
    }
}
