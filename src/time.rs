//! RFC 3339 timestamps without a calendar crate: formatting the clock, checking provider times.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current UTC time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_millis(d.as_millis() as u64)
}

/// Formats milliseconds since the Unix epoch as RFC 3339 UTC.
pub fn format_millis(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
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
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let d = b.get(r)?;
        d.iter().try_fold(0u32, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let date_time_ok = (|| {
        let (_y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let seps = b[4] == b'-'
            && b[7] == b'-'
            && matches!(b[10], b'T' | b't')
            && b[13] == b':'
            && b[16] == b':';
        Some(
            seps && (1..=12).contains(&mo)
                && (1..=31).contains(&d)
                && h < 24
                && mi < 60
                && se <= 60,
        )
    })();
    if date_time_ok != Some(true) {
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
    }
}
