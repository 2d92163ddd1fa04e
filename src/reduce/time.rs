//! RFC 3339 times as milliseconds since the Unix epoch, for durations.

/// `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)` in milliseconds since 1970-01-01T00:00:00Z.
pub fn millis(s: &str) -> Option<i64> {
    crate::time::millis(s)
}

#[cfg(test)]
mod tests {
    use super::millis;

    #[test]
    fn parses_rfc3339() {
        assert_eq!(millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(millis("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(millis("2026-11-22T02:20:02.024Z"), Some(1_795_314_002_024));
        assert_eq!(
            millis("2026-11-22T03:20:02.024+01:00"),
            millis("2026-11-22T02:20:02.024Z")
        );
        assert_eq!(millis("not a time"), None);
    }
}
