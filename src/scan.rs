//! One validating pass over a line's top-level JSON object, for detection's probe.
//!
//! [`members`] walks an object and hands out each member's key and the text of its value,
//! checking the JSON grammar on the way, so that a line it accepts is one serde_json accepts
//! too. It refuses more than JSON does (a key with an escape, nesting deeper than
//! [`MAX_DEPTH`]); whoever calls it then asks serde_json, which either says exactly what is
//! wrong with the line or reads what this refused. It is faster than serde_json's skipping of
//! values because it does less per token and looks at string contents 16 bytes at a time
//! ([`string_special`]).

/// The deepest nesting of a value that [`members`] reads (serde_json stops at 128).
pub const MAX_DEPTH: u32 = 100;

/// Calls `member(key, value)` for each top-level member of `text`, in order, where `value` is
/// the member's JSON text. `None` when `text` is not one JSON object (surrounded by nothing but
/// whitespace) by the rules above, or when `member` says `None`; `member` may have been called
/// for earlier members by then.
pub fn members<'a>(
    text: &'a str,
    mut member: impl FnMut(&'a str, &'a str) -> Option<()>,
) -> Option<()> {
    let b = text.as_bytes();
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let end = string_end(b, i + 1)?;
            let key = text.get(i + 1..end - 1)?;
            if has_backslash(key.as_bytes()) {
                return None;
            }
            i = ws(b, end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            let start = ws(b, i + 1);
            i = value_end(b, start)?;
            member(key, text.get(start..i)?)?;
            i = ws(b, i);
            match b.get(i)? {
                b',' => i = ws(b, i + 1),
                b'}' => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (ws(b, i) == b.len()).then_some(())
}

/// Whether a short piece of text (a member name, a type name) holds a backslash: a plain
/// loop, which costs less than `memchr`'s call and setup on a few bytes.
#[inline]
#[allow(clippy::manual_contains)] // `contains` is the memchr call this avoids
pub fn has_backslash(b: &[u8]) -> bool {
    b.iter().any(|&c| c == b'\\')
}

/// The index after the whitespace at `i`.
fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// The index of the first byte at or after `i` that ends a run of plain string contents: a
/// quote, a backslash or a control character (below 0x20); `b.len()` if there is none. JSON
/// strings are searched with this three times per line (here, by serde_json, and when an event
/// is written, [`crate::json_writer`]), so it looks at 16 bytes at a time where the CPU has
/// SSE2 (every x86-64) and 8 elsewhere.
#[inline]
pub fn string_special(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of the x86-64 baseline, and each load reads the 16 bytes
        // `b[i..i + 16]`, which the loop condition keeps inside `b` (unaligned loads allowed).
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let control = _mm_set1_epi8(0x1f);
            while i + 16 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(i).cast::<__m128i>());
                // `min(v, 0x1f) == v` exactly where v <= 0x1f (unsigned).
                let hit = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                    _mm_cmpeq_epi8(_mm_min_epu8(v, control), v),
                );
                let mask = _mm_movemask_epi8(hit) as u32;
                if mask != 0 {
                    return i + mask.trailing_zeros() as usize;
                }
                i += 16;
            }
        }
    }
    while let Some(chunk) = b.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = u64::from_le_bytes(word);
        let special = zero_bytes(v ^ (ONES * b'"' as u64))
            | zero_bytes(v ^ (ONES * b'\\' as u64))
            | (v.wrapping_sub(ONES * 0x20) & !v & HIGHS);
        if special != 0 {
            return i + (special.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c < 0x20 || c == b'"' || c == b'\\' {
            return i;
        }
        i += 1;
    }
    i
}

/// The bytes of `block` that [`string_special`] stops at, as bits (bit `k` for `block[k]`):
/// for a writer that escapes every such byte of a block in one pass (a JSON text written as a
/// string, where every few bytes is a quote) instead of searching again from each.
#[inline]
pub fn special_mask16(block: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of the x86-64 baseline; the load reads the 16 bytes of `block`
        // (unaligned loads allowed).
        unsafe {
            let v = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
            let hit = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                ),
                _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v),
            );
            _mm_movemask_epi8(hit) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut mask = 0;
        for (k, &c) in block.iter().enumerate() {
            if c < 0x20 || c == b'"' || c == b'\\' {
                mask |= 1 << k;
            }
        }
        mask
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `v` that is zero (exact for the lowest such byte; bytes of
/// 0x80 and more are never set).
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGHS
}

/// The index after the closing quote of the string whose contents start at `i`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    string_span(b, i).map(|(end, _)| end)
}

/// [`string_end`], and whether the string has an escape.
#[inline(always)]
pub fn string_span(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        i = string_special(b, i);
        match *b.get(i)? {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                match *b.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        let hex = b.get(i + 2..i + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        i += 6;
                    }
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

/// The index after the number that starts at `i`.
pub fn number_end(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match *b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(i + 1),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let end = digits(i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let end = digits(i);
        if end == i {
            return None;
        }
        i = end;
    }
    Some(i)
}

/// The index after `word` (a literal) at `i`.
fn literal_end(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    (b.get(i..i + word.len())? == word).then_some(i + word.len())
}

/// The index after the value that starts at `i`, any nesting read without recursion.
pub fn value_end(b: &[u8], mut i: usize) -> Option<usize> {
    // Bit d of `objects`: whether the container at depth d + 1 is an object.
    let mut objects: u128 = 0;
    let mut depth: u32 = 0;
    loop {
        // A value starts at `i`.
        match *b.get(i)? {
            open @ (b'{' | b'[') => {
                if depth == MAX_DEPTH {
                    return None;
                }
                let object = open == b'{';
                objects = objects << 1 | object as u128;
                depth += 1;
                i = ws(b, i + 1);
                let close = if object { b'}' } else { b']' };
                if b.get(i) == Some(&close) {
                    i += 1;
                    depth -= 1;
                    objects >>= 1;
                } else {
                    if object {
                        i = after_key(b, i)?;
                    }
                    continue;
                }
            }
            b'"' => i = string_end(b, i + 1)?,
            b't' => i = literal_end(b, i, b"true")?,
            b'f' => i = literal_end(b, i, b"false")?,
            b'n' => i = literal_end(b, i, b"null")?,
            b'-' | b'0'..=b'9' => i = number_end(b, i)?,
            _ => return None,
        }
        // A value ended at `i`: close containers until the next element.
        loop {
            if depth == 0 {
                return Some(i);
            }
            i = ws(b, i);
            let object = objects & 1 == 1;
            match (*b.get(i)?, object) {
                (b',', _) => {
                    i = ws(b, i + 1);
                    if object {
                        i = after_key(b, i)?;
                    }
                    break;
                }
                (b'}', true) | (b']', false) => {
                    i += 1;
                    depth -= 1;
                    objects >>= 1;
                }
                _ => return None,
            }
        }
    }
}

/// The start of the value after the key (and colon) at `i`.
fn after_key(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let i = ws(b, string_end(b, i + 1)?);
    if b.get(i) != Some(&b':') {
        return None;
    }
    Some(ws(b, i + 1))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::value::RawValue;

    #[test]
    fn special_mask16_marks_what_string_special_stops_at() {
        for b in 0..=255u8 {
            for at in 0..16 {
                let mut block = [b'a'; 16];
                block[at] = b;
                block[(at + 5) % 16] = b'"';
                let want = (0..16)
                    .filter(|&k| string_special(&block, k) == k)
                    .fold(0u32, |m, k| m | 1 << k);
                assert_eq!(special_mask16(&block), want, "{block:?}");
            }
        }
    }

    #[test]
    fn string_special_finds_what_a_byte_by_byte_search_finds() {
        let naive = |b: &[u8], i: usize| {
            (i..b.len())
                .find(|&j| b[j] < 0x20 || b[j] == b'"' || b[j] == b'\\')
                .unwrap_or(b.len())
        };
        // Each special byte and each near miss, at every position of lines up to 40 bytes,
        // searched from every start: crosses the 16- and 8-byte steps and the tail.
        let probes = [
            b'"', b'\\', 0x00, 0x1f, b'\n', 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0x9f, 0xff,
        ];
        for len in 0..40 {
            for at in 0..len {
                for &p in &probes {
                    let mut b = vec![b'a'; len];
                    b[at] = p;
                    for start in 0..=len {
                        assert_eq!(
                            string_special(&b, start),
                            naive(&b, start),
                            "{b:?} from {start}"
                        );
                    }
                }
            }
        }
        let mut rng = crate::test_support::Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..2000 {
            let len = rng.below(100);
            let b: Vec<u8> = (0..len)
                .map(|_| {
                    let x = rng.next();
                    // Mostly plain bytes, now and then anything.
                    if x % 23 == 0 {
                        (x >> 8) as u8
                    } else {
                        b'a' + (x % 26) as u8
                    }
                })
                .collect();
            for start in 0..=b.len() {
                assert_eq!(string_special(&b, start), naive(&b, start));
            }
        }
    }

    fn scan(text: &str) -> Option<Vec<(&str, &str)>> {
        let mut v = Vec::new();
        members(text, |k, val| {
            v.push((k, val));
            Some(())
        })?;
        Some(v)
    }

    /// What serde_json makes of the same text: `None` when it refuses it.
    fn serde(text: &str) -> Option<Vec<(String, String)>> {
        let m: Vec<(String, &RawValue)> =
            serde_json::from_str::<crate::event::Pairs<&RawValue>>(text)
                .ok()?
                .0
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v))
                .collect();
        Some(
            m.into_iter()
                .map(|(k, v)| (k, v.get().to_owned()))
                .collect(),
        )
    }

    /// Whatever `members` accepts, serde_json accepts with the same members.
    fn agrees(text: &str) {
        if let Some(ours) = scan(text) {
            let theirs =
                serde(text).unwrap_or_else(|| panic!("serde refuses what we read: {text}"));
            let ours: Vec<(String, String)> = ours
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect();
            assert_eq!(ours, theirs, "{text}");
        }
    }

    #[test]
    fn reads_members_and_their_text() {
        assert_eq!(
            scan(
                r#" {"type":"stream_event", "event" : {"a":[1,-2.5e+3,true,null,"x\"y"]},"n":0} "#
            ),
            Some(vec![
                ("type", r#""stream_event""#),
                ("event", r#"{"a":[1,-2.5e+3,true,null,"x\"y"]}"#),
                ("n", "0"),
            ])
        );
        assert_eq!(scan("{}"), Some(vec![]));
        assert_eq!(
            scan(r#"{"a":{},"b":[],"c":[[]],"d":""}"#).map(|v| v.len()),
            Some(4)
        );
    }

    /// Lines that are not one JSON object (for the tests of readers with this grammar).
    pub const NOT_JSON: &[&str] = &[
        "",
        "[]",
        "{",
        "{}x",
        r#"{"a"}"#,
        r#"{"a":}"#,
        r#"{"a":1,}"#,
        r#"{"a":[1,]}"#,
        r#"{"a":01}"#,
        r#"{"a":1.}"#,
        r#"{"a":.5}"#,
        r#"{"a":1e}"#,
        r#"{"a":+1}"#,
        r#"{"a":tru}"#,
        r#"{"a":nul}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":"\u12g4"}"#,
        "{\"a\":\"\u{1}\"}",
        "{\"a\":\"tab\there\"}",
        r#"{"a":{"b":1]}"#,
        r#"{"a":[1}"#,
        r#"{"a":{1:2}}"#,
        r#"{"a":"unterminated}"#,
        r#"{"a" 1}"#,
        r#"{"a":1 "b":2}"#,
    ];

    #[test]
    fn refuses_what_json_refuses() {
        for &bad in NOT_JSON {
            assert_eq!(scan(bad), None, "{bad:?}");
            agrees(bad);
        }
    }

    #[test]
    fn refuses_more_than_json_and_leaves_it_to_serde() {
        // A key with an escape names the same member as one without: serde decides.
        assert_eq!(scan(r#"{"typ\u0065":"x"}"#), None);
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(101), "]".repeat(101));
        assert_eq!(scan(&deep), None);
        let ok = format!("{{\"a\":{}{}}}", "[".repeat(100), "]".repeat(100));
        assert!(scan(&ok).is_some());
        agrees(&ok);
    }

    #[test]
    fn strings_across_the_eight_byte_steps() {
        for n in 0..20 {
            for tail in ["\"", "\\\"\"", "\\u00e9\"", "é\""] {
                let text = format!("{{\"k\":\"{}{tail}}}", "x".repeat(n));
                assert!(scan(&text).is_some(), "{text}");
                agrees(&text);
            }
            let bad = format!("{{\"k\":\"{}\u{7}\"}}", "x".repeat(n));
            assert_eq!(scan(&bad), None);
        }
    }

    /// Random token soup, mostly near-JSON: whatever the scan accepts, serde accepts alike.
    #[test]
    fn random_near_json_reads_as_serde_reads_it() {
        const TOKENS: &[&str] = &[
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            ",",
            ":",
            "0",
            "1",
            "9",
            "-",
            ".",
            "e",
            "E",
            "+",
            "true",
            "false",
            "null",
            "nul",
            "x",
            " ",
            "\t",
            "\\u00e9",
            "é",
            "\u{1}",
            "\"k\":",
            "\"type\":",
            "\"result\":",
            "\"id\":",
            "\"s\"",
            "{\"a\":1}",
            "[1,2]",
            "\\u12",
            "\\n",
            "\\\"",
            "1.5e-3",
            "-0",
            "01",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut accepted, mut n) = (0, 0);
        while n < 200_000 {
            let len = 1 + next() % 12;
            let mut text = String::from(if next() % 4 == 0 { "{" } else { "{\"k\":" });
            for _ in 0..len {
                text.push_str(TOKENS[(next() % TOKENS.len() as u64) as usize]);
            }
            if next() % 2 == 0 {
                text.push('}');
            }
            n += 1;
            if scan(&text).is_some() {
                accepted += 1;
            }
            agrees(&text);
        }
        assert!(accepted > 1000, "only {accepted} of {n} accepted");
    }

    #[test]
    fn every_testdata_line_reads_as_serde_reads_it() {
        let mut lines = 0;
        for path in crate::test_support::testdata_jsonl() {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for line in text.lines() {
                agrees(line);
                lines += 1;
            }
        }
        assert!(lines > 1000, "{lines} lines");
    }
}
