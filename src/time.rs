//! RFC 3339 timestamps without a calendar crate: formatting the clock, checking provider times.

use std::time::{SystemTime, UNIX_EPOCH};

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// The clock's time stamp, formatted again only when the millisecond changes (many lines
/// are read in the same millisecond).
#[derive(Default)]
pub struct Clock {
    ms: u64,
    text: String,
}

impl Clock {
    /// The current UTC time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub fn now(&mut self) -> &str {
        let ms = now_millis();
        if ms != self.ms || self.text.is_empty() {
            self.ms = ms;
            self.text.clear();
            write_millis(&mut self.text, ms);
        }
        &self.text
    }
}

/// Formats milliseconds since the Unix epoch as RFC 3339 UTC.
pub fn format_millis(ms: u64) -> String {
    let mut s = String::with_capacity(24);
    write_millis(&mut s, ms);
    s
}

fn write_millis(out: &mut String, ms: u64) {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    if !(0..=9999).contains(&y) {
        use std::fmt::Write;
        let _ = write!(
            out,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60,
            ms % 1000
        );
        return;
    }
    // Fixed width: digits written in place, no formatting machinery (this runs per line
    // under `--jobs` and whenever the clock stamps).
    let mut b = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut v: u64| {
        for i in (at..at + width).rev() {
            b[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, y as u64);
    put(5, 2, u64::from(m));
    put(8, 2, u64::from(d));
    put(11, 2, rem / 3600);
    put(14, 2, rem % 3600 / 60);
    put(17, 2, rem % 60);
    put(20, 3, ms % 1000);
    out.push_str(std::str::from_utf8(&b).unwrap_or_default());
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Whether a provider's time string is an RFC 3339 date-time:
/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, fields in range.
pub fn looks_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(head) = b.get(..19) else {
        return false;
    };
    // Each byte once, without a parse per field: this runs on every line of Claude and
    // Gemini output (the per-field version took 2% of a Gemini conversion).
    const DIGITS: [usize; 14] = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
    let d = |i: usize| head[i].wrapping_sub(b'0');
    if DIGITS.iter().any(|&i| d(i) > 9)
        || head[4] != b'-'
        || head[7] != b'-'
        || !matches!(head[10], b'T' | b't')
        || head[13] != b':'
        || head[16] != b':'
    {
        return false;
    }
    let two = |i: usize| d(i) * 10 + d(i + 1);
    let (mo, day, h, mi, se) = (two(5), two(8), two(11), two(14), two(17));
    if !((1..=12).contains(&mo) && (1..=31).contains(&day) && h < 24 && mi < 60 && se <= 60) {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit())
                && (*h1 - b'0') * 10 + (*h2 - b'0') < 24
                && (*m1 - b'0') * 10 + (*m2 - b'0') < 60
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(format_millis(1_795_314_000_091), "2026-11-22T02:20:00.091Z");
        assert_eq!(
            format_millis(253_402_300_799_999),
            "9999-12-31T23:59:59.999Z"
        );
        assert_eq!(
            format_millis(253_402_300_800_000),
            "10000-01-01T00:00:00.000Z"
        );
        let mut c = Clock::default();
        assert!(looks_rfc3339(c.now()));
    }

    #[test]
    fn recognises_rfc3339() {
        assert!(looks_rfc3339("2026-11-22T02:19:59.933Z"));
        assert!(looks_rfc3339("2026-11-22T02:19:59+01:00"));
        assert!(!looks_rfc3339("2026-11-22 02:19"));
        assert!(!looks_rfc3339("yesterday"));
        assert!(!looks_rfc3339(""));
        assert!(!looks_rfc3339("2026-13-22T02:19:59Z"));
        assert!(!looks_rfc3339("2026-11-22T02:19:59+xx:yy"));
        assert!(!looks_rfc3339("2026-11-22T02:19:59.Z"));
        assert!(!looks_rfc3339("2026-11-22T02:19:59.123"));
        assert!(!looks_rfc3339("2026-11-22T02:19:59Zjunk"));
        assert!(looks_rfc3339("2026-11-22t23:59:60z"));
        assert!(looks_rfc3339("2026-12-31T00:00:00.5-23:59"));
        for bad in [
            "2026-00-22T02:19:59Z",
            "2026-11-00T02:19:59Z",
            "2026-11-32T02:19:59Z",
            "2026-11-22T24:19:59Z",
            "2026-11-22T02:60:59Z",
            "2026-11-22T02:19:61Z",
            "2026-11-22T02:19:59+24:00",
            "2026-11-22T02:19:59+01:60",
            "2026/11/22T02:19:59Z",
            "2026-11-22T02-19:59Z",
            "2026-11-22T02:19:5",
            "2026-1a-22T02:19:59Z",
            "2026-11-22T02:19:59é",
        ] {
            assert!(!looks_rfc3339(bad), "{bad}");
        }
    }
}
