//! Text for people: untrusted strings made safe for a terminal, display widths, wrapping.
//!
//! Everything an agent, a tool or a provider wrote is untrusted. [`clean`] runs on each such
//! string before it is laid out, so the only escape sequences in replay's output are the colours
//! of its own palette.

/// Untrusted text made safe to print: what remains is printable characters and `\n`.
///
/// * Escape sequences are removed whole: CSI (`ESC [` … final byte, which includes colours and
///   cursor movement), OSC (`ESC ]` … BEL or ST: titles, OSC 8 links, OSC 52 clipboard writes),
///   DCS, SOS, PM and APC strings, and two-character escapes. Their 8-bit C1 forms (U+009B CSI,
///   U+009D OSC, …) are removed the same way, and any other C1 control is dropped.
/// * Other C0 controls and DEL become their visible Unicode control pictures (BEL is `␇`).
/// * Bidirectional overrides, embeddings, isolates and marks become a visible `<U+202E>`, so
///   text cannot be reordered on screen.
/// * Tabs are expanded to 8-column stops; `\r\n` is `\n`; a lone `\r` starts its line over,
///   as a terminal would show it; U+2028 and U+2029 are line breaks; a BOM is dropped.
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut line_start = 0usize;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\u{2028}' | '\u{2029}' => {
                out.push('\n');
                line_start = out.len();
            }
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    continue;
                }
                // Overprinting: what follows replaces the line so far.
                out.truncate(line_start);
            }
            '\t' => {
                let col = width(&out[line_start..]);
                let n = 8 - col % 8;
                out.extend(std::iter::repeat_n(' ', n));
            }
            '\x1b' => skip_escape(&mut chars),
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\u{80}'..='\u{9f}' => {}
            '\0'..='\x1f' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?')),
            '\x7f' => out.push('\u{2421}'),
            '\u{feff}' => {}
            c if is_bidi_control(c) => {
                out.push_str(&format!("<U+{:04X}>", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters that reorder text (Unicode bidi embeddings, overrides, isolates and marks).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// After ESC: skips the rest of the sequence.
fn skip_escape(chars: &mut Chars) {
    match chars.peek().copied() {
        Some('[') => {
            chars.next();
            skip_csi(chars);
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            chars.next();
            skip_string(chars);
        }
        Some(c) if ('\x20'..='\x2f').contains(&c) => {
            // Intermediates, then one final byte (`ESC ( B`, `ESC # 8`).
            while chars.next_if(|c| ('\x20'..='\x2f').contains(c)).is_some() {}
            chars.next_if(|c| ('\x30'..='\x7e').contains(c));
        }
        Some(c) if ('\x30'..='\x7e').contains(&c) => {
            chars.next();
        }
        _ => {}
    }
}

/// A CSI sequence after its introducer: parameters and intermediates, then a final byte.
fn skip_csi(chars: &mut Chars) {
    while let Some(&c) = chars.peek() {
        if ('\x20'..='\x3f').contains(&c) {
            chars.next();
        } else {
            if ('\x40'..='\x7e').contains(&c) {
                chars.next();
            }
            return;
        }
    }
}

/// An OSC, DCS, SOS, PM or APC string: up to BEL, ST (`ESC \` or U+009C), or the end.
fn skip_string(chars: &mut Chars) {
    while let Some(c) = chars.next() {
        match c {
            '\x07' | '\u{9c}' => return,
            '\x1b' => {
                chars.next_if_eq(&'\\');
                return;
            }
            _ => {}
        }
    }
}

/// Columns a character takes in a terminal: 0 for combining marks and joiners, 2 for wide
/// (East Asian wide and most emoji), else 1. An approximation without tables, good for layout.
pub fn char_width(c: char) -> usize {
    let u = c as u32;
    match u {
        0x0300..=0x036f
        | 0x0483..=0x0489
        | 0x0591..=0x05bd
        | 0x0610..=0x061a
        | 0x064b..=0x065f
        | 0x1ab0..=0x1aff
        | 0x1dc0..=0x1dff
        | 0x200b..=0x200d
        | 0x20d0..=0x20ff
        | 0xfe00..=0xfe0f
        | 0xfe20..=0xfe2f
        | 0xe0000..=0xe007f => 0,
        0x1100..=0x115f
        | 0x231a..=0x231b
        | 0x2329..=0x232a
        | 0x23e9..=0x23ec
        | 0x23f0
        | 0x23f3
        | 0x25fd..=0x25fe
        | 0x2614..=0x2615
        | 0x2648..=0x2653
        | 0x267f
        | 0x2693
        | 0x26a1
        | 0x26aa..=0x26ab
        | 0x26bd..=0x26be
        | 0x26c4..=0x26c5
        | 0x26ce
        | 0x26d4
        | 0x26ea
        | 0x26f2..=0x26f5
        | 0x26fa
        | 0x26fd
        | 0x2705
        | 0x270a..=0x270b
        | 0x2728
        | 0x274c
        | 0x274e
        | 0x2753..=0x2755
        | 0x2757
        | 0x2795..=0x2797
        | 0x27b0
        | 0x27bf
        | 0x2b1b..=0x2b1c
        | 0x2b50
        | 0x2b55
        | 0x2e80..=0x303e
        | 0x3041..=0x33ff
        | 0x3400..=0x4dbf
        | 0x4e00..=0x9fff
        | 0xa000..=0xa4cf
        | 0xa960..=0xa97f
        | 0xac00..=0xd7a3
        | 0xf900..=0xfaff
        | 0xfe10..=0xfe19
        | 0xfe30..=0xfe6f
        | 0xff00..=0xff60
        | 0xffe0..=0xffe6
        | 0x1f004
        | 0x1f0cf
        | 0x1f18e
        | 0x1f191..=0x1f19a
        | 0x1f200..=0x1f251
        | 0x1f300..=0x1f64f
        | 0x1f680..=0x1f6ff
        | 0x1f900..=0x1f9ff
        | 0x1fa70..=0x1faff
        | 0x20000..=0x3fffd => 2,
        _ => 1,
    }
}

/// Display width of text without line breaks.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// `s` cut to at most `max` columns, ending in `…` when something was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    if max > 0 {
        out.push('…');
    }
    out
}

/// The text as one line: line breaks and runs of spaces become one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Word-wraps one line (no `\n`) to `max` columns. Continuation lines keep the line's
/// indentation, and hang under the text of a list item (`- `, `* `, `1. `). Words longer than
/// a line are broken.
pub fn wrap(line: &str, max: usize) -> Vec<String> {
    let max = max.max(8);
    if width(line) <= max {
        return vec![line.trim_end().to_string()];
    }
    let indent_len = line.len() - line.trim_start_matches(' ').len();
    let body = &line[indent_len..];
    let hang = indent_len + list_marker(body);
    let hang = if hang + 8 > max { 0 } else { hang };
    let mut out = Vec::new();
    let mut cur = line[..indent_len].to_string();
    let mut cur_w = indent_len;
    let mut fresh = true; // nothing but indentation on `cur`
    for word in body.split(' ').filter(|w| !w.is_empty()) {
        let ww = width(word);
        let sep = usize::from(!fresh);
        if cur_w + sep + ww <= max {
            if !fresh {
                cur.push(' ');
            }
            cur.push_str(word);
            cur_w += sep + ww;
            fresh = false;
            continue;
        }
        if !fresh {
            out.push(std::mem::take(&mut cur));
            cur = " ".repeat(hang);
            cur_w = hang;
        }
        // Break a word longer than the room left.
        let mut rest = word;
        while cur_w + width(rest) > max {
            let room = max - cur_w;
            let mut taken = 0;
            let mut w = 0;
            for (i, c) in rest.char_indices() {
                let cw = char_width(c);
                if w + cw > room {
                    break;
                }
                w += cw;
                taken = i + c.len_utf8();
            }
            if taken == 0 {
                taken = rest.chars().next().map_or(rest.len(), char::len_utf8);
            }
            cur.push_str(&rest[..taken]);
            out.push(std::mem::take(&mut cur));
            cur = " ".repeat(hang);
            cur_w = hang;
            rest = &rest[taken..];
        }
        cur.push_str(rest);
        cur_w += width(rest);
        fresh = rest.is_empty();
    }
    if !fresh || out.is_empty() {
        out.push(cur);
    }
    out
}

/// Width of a list marker at the start of `s` (`- `, `* `, `+ `, `12. `), else 0.
fn list_marker(s: &str) -> usize {
    let b = s.as_bytes();
    if b.len() >= 2 && matches!(b[0], b'-' | b'*' | b'+') && b[1] == b' ' {
        return 2;
    }
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && digits < 4 && b.get(digits) == Some(&b'.') && b.get(digits + 1) == Some(&b' ')
    {
        return digits + 2;
    }
    0
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration for people: `850ms`, `1.2s`, `2m 03s`, `1h 02m`.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        format!("{}m {:02}s", ms / 60_000, ms % 60_000 / 1000)
    } else {
        format!("{}h {:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000)
    }
}

/// A cost in US dollars: four decimals under a dollar, else two.
pub fn dollars(c: f64) -> String {
    if c < 1.0 {
        format!("${c:.4}")
    } else {
        format!("${c:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_removed_whole() {
        let s = "a\x1b[31mred\x1b[0m b\x1b]0;title\x07c\x1b]52;c;aGk=\x1b\\d\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\";
        assert_eq!(clean(s), "ared bcdlink");
        assert_eq!(clean("x\u{9b}2Jy\u{9d}0;t\u{9c}z"), "xyz");
        assert_eq!(clean("\x1bPq#0;2;0;0;0\x1b\\ok\x1b(Bz\x1bc!"), "okz!");
        assert_eq!(clean("cut\x1b[12"), "cut");
    }

    #[test]
    fn controls_become_visible_and_bidi_is_named() {
        assert_eq!(clean("bell\x07 nul\0 del\x7f"), "bell␇ nul␀ del␡");
        assert_eq!(clean("abc\u{202e}def\u{2066}"), "abc<U+202E>def<U+2066>");
        assert_eq!(clean("a\r\nb\rc\u{2028}d"), "a\nc\nd");
        assert_eq!(clean("a\tb\n\tc"), "a       b\n        c");
    }

    #[test]
    fn clean_output_has_no_controls() {
        let nasty: String = (0u32..0x300).filter_map(char::from_u32).collect();
        let out = clean(&nasty);
        assert!(!out
            .chars()
            .any(|c| c != '\n' && (c.is_control() || is_bidi_control(c))));
    }

    #[test]
    fn widths() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(truncate("hello world", 8), "hello w…");
        assert_eq!(truncate("hello world", 7), "hello…");
        assert_eq!(truncate("hello", 8), "hello");
    }

    #[test]
    fn wrapping_keeps_indentation_and_hangs_lists() {
        assert_eq!(
            wrap("- one two three four five", 12),
            ["- one two", "  three four", "  five"]
        );
        assert_eq!(
            wrap("    code code code", 12),
            ["    code", "    code", "    code"]
        );
        assert_eq!(
            wrap("abcdefghijklmnopqrst", 8),
            ["abcdefgh", "ijklmnop", "qrst"]
        );
        assert_eq!(wrap("", 10), [""]);
    }

    #[test]
    fn numbers_and_times() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(duration(228), "228ms");
        assert_eq!(duration(1234), "1.2s");
        assert_eq!(duration(123_000), "2m 03s");
        assert_eq!(dollars(0.13091625), "$0.1309");
        let a = crate::time::millis("2026-11-22T02:20:02.024Z").unwrap();
        let b = crate::time::millis("2026-11-22T03:20:03.5+01:00").unwrap();
        assert_eq!(b - a, 1476);
        assert_eq!(crate::time::millis("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(crate::time::millis("nope"), None);
    }
}
