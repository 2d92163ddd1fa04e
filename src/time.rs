//! RFC 3339 timestamps without a calendar crate: formatting the clock, checking provider times,
//! and the days of `usage` and `sessions` in a time zone ([`Zone`], [`parse_day`]).

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
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
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

/// An RFC 3339 date-time, as [`parse`] read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    /// 0 to 60 (a leap second, only at 23:59 UTC).
    pub second: u8,
    /// The fraction of the second, in milliseconds (further digits dropped).
    pub millis: u16,
    /// The offset from UTC in minutes (`Z` is 0).
    pub offset_min: i16,
    /// Written with upper-case `T` and `Z`.
    pub upper: bool,
}

impl DateTime {
    /// Milliseconds since 1970-01-01T00:00:00Z (a leap second counts as the second before
    /// the next minute).
    pub fn unix_millis(&self) -> i64 {
        let days = days_from_civil(
            i64::from(self.year),
            i64::from(self.month),
            i64::from(self.day),
        );
        let secs = ((days * 24 + i64::from(self.hour)) * 60 + i64::from(self.minute)
            - i64::from(self.offset_min))
            * 60
            + i64::from(self.second);
        secs * 1000 + i64::from(self.millis)
    }
}

/// Whether `year` has a February 29th (proleptic Gregorian).
pub fn is_leap_year(year: u16) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// The number of days of a month (1 to 12) of `year`.
pub fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 31,
    }
}

/// The one RFC 3339 date-time reader of the program (convert's check of provider times,
/// `validate`'s fast path, `reduce`'s and `replay`'s durations):
/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, `T` and `Z` in either case, a real calendar
/// date (leap years), hours to 23, minutes to 59, seconds to 59 or a leap second 60 when the
/// time is 23:59 in UTC, offsets to ±23:59. It accepts what JSON Schema's `date-time` format
/// accepts (as the `jsonschema` crate checks it), so a time convert passes through is one
/// `validate` accepts.
pub fn parse(s: &str) -> Option<DateTime> {
    let b = s.as_bytes();
    let head = b.get(..19)?;
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
        return None;
    }
    let two = |i: usize| d(i) * 10 + d(i + 1);
    let year = u16::from(two(0)) * 100 + u16::from(two(2));
    let (month, day, hour, minute, second) = (two(5), two(8), two(11), two(14), two(17));
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &b[19..];
    let mut millis = 0u16;
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let mut scale = 100;
        for c in &frac[..n.min(3)] {
            millis += u16::from(c - b'0') * scale;
            scale /= 10;
        }
        rest = &frac[n..];
    }
    let (offset_min, z_upper) = match rest {
        [z @ (b'Z' | b'z')] => (0i16, *z == b'Z'),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            if ![h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let (oh, om) = (
                (h1 - b'0') * 10 + (h2 - b'0'),
                (m1 - b'0') * 10 + (m2 - b'0'),
            );
            if oh > 23 || om > 59 {
                return None;
            }
            let m = i16::from(oh) * 60 + i16::from(om);
            (if *sign == b'+' { m } else { -m }, true)
        }
        _ => return None,
    };
    if second == 60 {
        // A leap second is the last second of a UTC day.
        let utc = (i16::from(hour) * 60 + i16::from(minute) - offset_min).rem_euclid(1440);
        if utc != 23 * 60 + 59 {
            return None;
        }
    }
    Some(DateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
        millis,
        offset_min,
        upper: head[10] == b'T' && z_upper,
    })
}

/// Whether a provider's time string is an RFC 3339 date-time ([`parse`]).
pub fn looks_rfc3339(s: &str) -> bool {
    parse(s).is_some()
}

/// Milliseconds since the Unix epoch of an RFC 3339 date-time ([`parse`]); `None` if it is
/// not one.
pub fn millis(s: &str) -> Option<i64> {
    parse(s).map(|t| t.unix_millis())
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 as YYYY-MM-DD.
pub fn format_day(d: i64) -> String {
    let (y, m, day) = civil_from_days(d);
    format!("{y:04}-{m:02}-{day:02}")
}

/// A day as `--since` and `--until` take it, in days since 1970-01-01: `YYYY-MM-DD`, or
/// `YYYYMMDD` as ccusage also takes it.
pub fn parse_day(s: &str) -> Result<i64, String> {
    let b = s.as_bytes();
    let dashed = if b.len() == 8 && b.iter().all(u8::is_ascii_digit) {
        format!("{}-{}-{}", &s[..4], &s[4..6], &s[6..])
    } else {
        s.to_owned()
    };
    let t = parse(&format!("{dashed}T00:00:00Z"))
        .ok_or_else(|| format!("{s:?}: expected a day as YYYY-MM-DD or YYYYMMDD"))?;
    Ok(days_from_civil(
        i64::from(t.year),
        i64::from(t.month),
        i64::from(t.day),
    ))
}

/// The time zone that days are counted in (`usage --tz`).
#[derive(Debug)]
pub enum Zone {
    /// A fixed offset from UTC, in milliseconds.
    Fixed(i64),
    /// The C library's zone: `TZ` as set from `--tz NAME`, or the system's for `local` (`TZ`
    /// when set, else `/etc/localtime`, else UTC). For a zone of the time zone database it keeps
    /// the offset of each hour asked for whose offset is the same at both ends (`None` for a
    /// POSIX rule in `TZ`, which may change twice in an hour): `localtime_r` costs a lock and
    /// a search of the zone's rules, and `usage` asks for the day of every response.
    System(Option<std::cell::RefCell<std::collections::HashMap<i64, i64>>>),
}

impl Zone {
    /// `UTC` (or `Z`), `local`, an offset such as `+09:00`, or a name from
    /// `/usr/share/zoneinfo` such as `Europe/Paris`. Call it before any thread starts: a
    /// name is set as `TZ` for the C library.
    pub fn parse(s: &str) -> Result<Zone, String> {
        if s.eq_ignore_ascii_case("utc") || s == "Z" {
            return Ok(Zone::Fixed(0));
        }
        if let Some(rest) = s.strip_prefix(['+', '-']) {
            let sign = if s.starts_with('-') { -1 } else { 1 };
            let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
            let bad = || format!("--tz {s:?}: expected an offset such as +09:00");
            let (Ok(h), Ok(m)) = (h.parse::<i64>(), m.parse::<i64>()) else {
                return Err(bad());
            };
            if h > 23 || m > 59 {
                return Err(bad());
            }
            return Ok(Zone::Fixed(sign * (h * 60 + m) * 60_000));
        }
        if s != "local" {
            if s.contains("..")
                || !std::path::Path::new("/usr/share/zoneinfo")
                    .join(s)
                    .is_file()
            {
                return Err(format!(
                    "--tz {s:?}: no such time zone (try local, UTC, +09:00 or Europe/Paris)"
                ));
            }
            // Set before any thread starts: the C library reads it in tzset().
            std::env::set_var("TZ", s);
        }
        #[cfg(unix)]
        {
            extern "C" {
                // POSIX; the libc crate does not declare it.
                fn tzset();
            }
            // SAFETY: tzset reads TZ; no other thread runs yet.
            unsafe { tzset() };
            Ok(Zone::System(from_database().then(Default::default)))
        }
        #[cfg(not(unix))]
        if s == "local" {
            Ok(Zone::Fixed(0))
        } else {
            Err(format!(
                "--tz {s:?}: only local (UTC here), UTC and offsets on this system"
            ))
        }
    }

    /// The day (days since 1970-01-01) of a time (milliseconds since the epoch) in this zone.
    pub fn day(&self, ms: i64) -> i64 {
        (ms + self.offset(ms)).div_euclid(86_400_000)
    }

    /// A time as `YYYY-MM-DD HH:MM` in this zone (the tables of `sessions`).
    pub fn minute(&self, ms: i64) -> String {
        let local = ms + self.offset(ms);
        let m = local.div_euclid(60_000);
        let (day, min) = (m.div_euclid(1440), m.rem_euclid(1440));
        format!("{} {:02}:{:02}", format_day(day), min / 60, min % 60)
    }

    /// How far this zone's clock is ahead of UTC at `ms`, in milliseconds.
    pub fn offset(&self, ms: i64) -> i64 {
        match self {
            Zone::Fixed(o) => *o,
            #[cfg(unix)]
            Zone::System(None) => system_offset(ms),
            #[cfg(unix)]
            Zone::System(Some(hours)) => {
                const HOUR: i64 = 3_600_000;
                let hour = ms.div_euclid(HOUR);
                if let Some(&o) = hours.borrow().get(&hour) {
                    return o;
                }
                let o = system_offset(ms);
                // The database's zones change their offset at most once in an hour: the same
                // offset at both ends holds all along.
                let start = hour * HOUR;
                if system_offset(start) == o && system_offset(start.saturating_add(HOUR - 1)) == o {
                    hours.borrow_mut().insert(hour, o);
                }
                o
            }
            #[cfg(not(unix))]
            Zone::System(_) => 0,
        }
    }
}

/// Whether the C library's zone comes from the time zone database: `TZ` unset or empty
/// (`/etc/localtime`), a file (`:` before it or not), or a name in `/usr/share/zoneinfo`;
/// not a POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`.
#[cfg(unix)]
fn from_database() -> bool {
    let Some(tz) = std::env::var_os("TZ").filter(|v| !v.is_empty()) else {
        return true;
    };
    let tz = tz.to_string_lossy();
    let tz = tz.strip_prefix(':').unwrap_or(&tz);
    let path = std::path::Path::new(tz);
    path.is_absolute() && path.is_file()
        || (!tz.is_empty()
            && !tz.contains("..")
            && std::path::Path::new("/usr/share/zoneinfo")
                .join(tz)
                .is_file())
}

/// The C library's offset from UTC at `ms` (the second it falls in), in milliseconds.
#[cfg(unix)]
fn system_offset(ms: i64) -> i64 {
    let t = ms.div_euclid(1000) as libc::time_t;
    // SAFETY: localtime_r writes only the tm it is given.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        0
    } else {
        tm.tm_gmtoff * 1000
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
        assert!(looks_rfc3339("2026-11-23T00:59:60+01:00"));
        assert!(!looks_rfc3339("2026-11-22T12:59:60Z"));
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
            "2026-02-31T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
        ] {
            assert!(!looks_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn calendar_dates_and_epoch_millis() {
        for good in [
            "2024-02-29T00:00:00Z",
            "2000-02-29T00:00:00Z",
            "2026-01-31T00:00:00Z",
        ] {
            assert!(looks_rfc3339(good), "{good}");
        }
        assert_eq!(millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(millis("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(millis("1970-01-01T00:00:01.5678Z"), Some(1567));
        assert_eq!(millis("2026-11-22T02:20:02.024Z"), Some(1_795_314_002_024));
        assert_eq!(
            millis("2026-11-22T03:20:02.024+01:00"),
            millis("2026-11-22T02:20:02.024Z")
        );
        assert_eq!(millis("2026-02-31T00:00:00Z"), None);
        assert_eq!(millis("not a time"), None);
        // Every instant the clock writes reads back.
        for ms in [0, 951_782_400_123, 1_795_314_000_091, 253_402_300_799_999] {
            assert_eq!(millis(&format_millis(ms)), Some(ms as i64));
        }
        let t = parse("2026-11-22t02:19:59z").unwrap();
        assert!(!t.upper);
        assert!(parse("2026-11-22T02:19:59+01:00").unwrap().upper);
    }

    #[test]
    fn days_come_in_both_forms() {
        let d = parse_day("2026-11-26").unwrap();
        assert_eq!(parse_day("20261126"), Ok(d));
        assert_eq!(format_day(d), "2026-11-26");
        for bad in [
            "26.11.2026",
            "2026-13-01",
            "20261131",
            "2026112",
            "2026-11-26T00:00:00Z",
        ] {
            assert!(parse_day(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fixed_zones_move_the_day_and_the_minute() {
        // 2026-11-26T05:30:00Z
        let t = millis("2026-11-26T05:30:00Z").unwrap();
        let la = Zone::parse("-08:00").unwrap();
        assert_eq!(format_day(la.day(t)), "2026-11-25");
        assert_eq!(la.minute(t), "2026-11-25 21:30");
        let utc = Zone::parse("UTC").unwrap();
        assert_eq!(utc.minute(t), "2026-11-26 05:30");
        assert!(Zone::parse("+24:00").is_err());
        assert!(Zone::parse("Mars/Olympus").is_err());
    }
}
