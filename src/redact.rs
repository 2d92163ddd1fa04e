//! `--redact`: masks secrets in every string of the output, so logs can be shared and stored.
//!
//! Redaction works on the serialized JSON lines, just before they are written, so every string
//! is covered: event fields, `extensions`, tool input and output, and `raw`. Only the contents
//! of JSON strings (member names included) are changed, and a secret is replaced by
//! `[REDACTED:KIND]`, which needs no escaping: the line stays valid JSON with the same
//! structure. Redacting redacted output changes nothing.
//!
//! What is recognised (hand-written matchers, one byte scan per line, no regex):
//!
//! | kind | shape |
//! |---|---|
//! | `anthropic-key` | `sk-ant-` and at least 20 more of `A-Za-z0-9_-` |
//! | `openai-key` | `sk-` and at least 20 more of `A-Za-z0-9_-` (`sk-proj-…`, `sk-svcacct-…`) |
//! | `google-api-key` | `AIza` and at least 35 more of `A-Za-z0-9_-` |
//! | `github-token` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` and at least 30 more, or `github_pat_` and at least 22 more |
//! | `aws-access-key` | `AKIA` or `ASIA` and exactly 16 of `A-Z0-9` |
//! | `slack-token` | `xoxb-`, `xoxa-`, `xoxp-`, `xoxr-`, `xoxs-` and at least 10 more of `A-Za-z0-9-` |
//! | `bearer-token` | the token after `Bearer ` (or `bearer `), at least 16 of `A-Za-z0-9._~+/=-` |
//! | `private-key` | a `-----BEGIN … PRIVATE KEY…-----` block through its `-----END …-----` line (or the end of the string) |
//! | `url-password` | the password of `scheme://user:PASSWORD@host` |
//! | `password`, `secret` | the value of a pair whose name ends in `password` or `passwd` (`password`), or in `secret`, `token`, `apikey`, `accesskey`, `secretkey` or `privatekey` (`secret`), ignoring case and `_`, `-`, `.`: `DB_PASSWORD=…`, `--password=…`, `password: …`, `"api_key": "…"` inside a string, and JSON members such as `{"password": "…"}` whose value is a string |
//!
//! The prefixed kinds must start a word (not follow a letter, digit or `_`), so `task-…` is not
//! taken for an OpenAI key. A value that is already `[REDACTED:…]` or starts with `$` (a shell
//! variable) is left alone. The scan looks at strings as serialized: `serde_json` writes every
//! character other than `"`, `\` and control characters literally, so a secret is seen as
//! written, but one spelled with `\u` escapes in a passed-through line is not recognised.

use std::borrow::Cow;

/// Redacts the JSON lines in `src` (whole lines, each a JSON value). Borrowed when nothing
/// was found.
pub fn redact(src: &[u8]) -> Cow<'_, [u8]> {
    let mut r = Redactor {
        src,
        out: Vec::new(),
        copied: 0,
        changed: false,
    };
    r.scan();
    if r.changed {
        r.out.extend_from_slice(&src[r.copied..]);
        Cow::Owned(r.out)
    } else {
        Cow::Borrowed(src)
    }
}

struct Redactor<'a> {
    src: &'a [u8],
    /// The redacted text up to `copied`.
    out: Vec<u8>,
    copied: usize,
    changed: bool,
}

/// Bytes that need a look inside a string: its end, escapes, and the first bytes of the
/// matchers.
const fn interesting() -> [bool; 256] {
    let mut t = [false; 256];
    let bytes = b"\"\\\nsAgxBb-=:";
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}
static IN_STRING: [bool; 256] = interesting();

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn is_key_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}
fn is_bearer_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._~+/=-".contains(&b)
}
fn is_upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
/// Characters of a URL's userinfo (RFC 3986 unreserved, sub-delims, `%` and `:`), less `"`
/// and `\`, which cannot appear unescaped in a JSON string.
fn is_userinfo_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:".contains(&b)
}

impl<'a> Redactor<'a> {
    fn scan(&mut self) {
        let src = self.src;
        let mut i = 0;
        // The last string that ended outside a string (a member name candidate).
        let mut last_str: Option<(usize, usize)> = None;
        while i < src.len() {
            match src[i] {
                b'"' => {
                    let start = i + 1;
                    let end = self.string(start);
                    last_str = Some((start, end));
                    i = end + 1;
                }
                b':' => {
                    i += 1;
                    if let Some((ks, ke)) = last_str.take() {
                        if src[ke + 1..i - 1].iter().all(u8::is_ascii_whitespace) {
                            i = self.member_value(&src[ks..ke], i);
                        }
                    }
                }
                b'\n' => {
                    last_str = None;
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }

    /// Scans the contents of the string starting at `start`, redacting as it goes; returns the
    /// index of its closing quote (or the end of the line or input, for invalid JSON).
    fn string(&mut self, start: usize) -> usize {
        let src = self.src;
        let mut i = start;
        // Just past the last escape sequence or redaction: a word boundary (a redaction ends
        // with `]`, so a second pass sees one there too).
        let mut esc_end = start;
        while i < src.len() {
            let b = src[i];
            if !IN_STRING[b as usize] {
                i += 1;
                continue;
            }
            match b {
                b'"' | b'\n' => return i,
                b'\\' if src.get(i + 1) == Some(&b'\n') => return i + 1,
                b'\\' => {
                    i = (i + 2).min(src.len());
                    esc_end = i;
                }
                _ => {
                    let boundary = i == esc_end || !is_word(src[i - 1]);
                    if !boundary && b != b'=' && b != b':' {
                        i += 1; // inside a word: no matcher starts here
                        continue;
                    }
                    i = match self.at(i, start, boundary) {
                        Some(next) => {
                            esc_end = next;
                            next
                        }
                        None => i + 1,
                    };
                }
            }
        }
        src.len()
    }

    /// Tries the matchers at `i` inside a string that starts at `start`; returns where to go on
    /// after a redaction.
    fn at(&mut self, i: usize, start: usize, boundary: bool) -> Option<usize> {
        let src = self.src;
        let rest = &src[i..];
        match src[i] {
            b'=' | b':' => {
                if rest.starts_with(b"://") {
                    return None; // a URL's scheme, not a pair
                }
                if src[i] == b':' {
                    if let Some(next) = self.url_password(i, start) {
                        return Some(next);
                    }
                }
                self.pair(i, start)
            }
            _ if !boundary => None,
            b's' if rest.starts_with(b"sk-ant-") => {
                self.run(i, 7, 20, is_key_char, "anthropic-key")
            }
            b's' if rest.starts_with(b"sk-") => self.run(i, 3, 20, is_key_char, "openai-key"),
            b'A' if rest.starts_with(b"AIza") => self.run(i, 4, 35, is_key_char, "google-api-key"),
            b'A' if rest.starts_with(b"AKIA") || rest.starts_with(b"ASIA") => {
                let n = rest[4..].iter().take_while(|&&b| is_upper_digit(b)).count();
                let after = rest.get(4 + n).copied().unwrap_or(b'"');
                (n == 16 && !is_word(after)).then(|| self.replace(i, i + 20, "aws-access-key"))
            }
            b'g' if rest.starts_with(b"github_pat_") => {
                self.run(i, 11, 22, is_key_char, "github-token")
            }
            b'g' if rest.len() > 4
                && rest.starts_with(b"gh")
                && b"pousr".contains(&rest[2])
                && rest[3] == b'_' =>
            {
                self.run(i, 4, 30, is_key_char, "github-token")
            }
            b'x' if rest.len() > 5
                && rest.starts_with(b"xox")
                && b"baprs".contains(&rest[3])
                && rest[4] == b'-' =>
            {
                let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
                self.run(i, 5, 10, ok, "slack-token")
            }
            b'B' | b'b' if rest.starts_with(b"Bearer ") || rest.starts_with(b"bearer ") => {
                let t = i + 7;
                let n = src[t..].iter().take_while(|&&b| is_bearer_char(b)).count();
                (n >= 16).then(|| self.replace(t, t + n, "bearer-token"))
            }
            b'-' if rest.starts_with(b"-----BEGIN ") => self.private_key(i),
            _ => None,
        }
    }

    /// A secret of `prefix` bytes followed by at least `min` bytes that `ok` accepts.
    fn run(
        &mut self,
        i: usize,
        prefix: usize,
        min: usize,
        ok: impl Fn(u8) -> bool,
        kind: &str,
    ) -> Option<usize> {
        let n = self.src[i + prefix..]
            .iter()
            .take_while(|&&b| ok(b))
            .count();
        (n >= min).then(|| self.replace(i, i + prefix + n, kind))
    }

    /// `-----BEGIN X PRIVATE KEY-----` … `-----END X PRIVATE KEY-----`, within one string.
    fn private_key(&mut self, i: usize) -> Option<usize> {
        let src = self.src;
        let label_start = i + 11;
        let label_len = src[label_start..]
            .iter()
            .take_while(|&&b| is_upper_digit(b) || b == b' ')
            .count();
        let label = &src[label_start..label_start + label_len];
        let after = label_start + label_len;
        if !src[after..].starts_with(b"-----") || !contains(label, b"PRIVATE KEY") {
            return None;
        }
        let end = string_end(src, after);
        let body = &src[after + 5..end];
        let stop = match find(body, b"-----END ") {
            Some(k) => {
                let from = after + 5 + k + 9;
                let tail = src[from..end]
                    .iter()
                    .take_while(|&&b| is_upper_digit(b) || b == b' ')
                    .count();
                if src[from + tail..end].starts_with(b"-----") {
                    from + tail + 5
                } else {
                    end
                }
            }
            None => end,
        };
        Some(self.replace(i, stop, "private-key"))
    }

    /// The password of `scheme://user:password@host`, `i` at the colon after the user (which
    /// has been scanned like any text).
    fn url_password(&mut self, i: usize, start: usize) -> Option<usize> {
        let src = self.src;
        let user = src[start..i]
            .iter()
            .rev()
            .take_while(|&&b| is_userinfo_char(b) && b != b':')
            .count();
        if !src[start..i - user].ends_with(b"://") {
            return None;
        }
        let from = i + 1;
        let n = src[from..]
            .iter()
            .take_while(|&&b| is_userinfo_char(b))
            .count();
        (n > 0 && src.get(from + n) == Some(&b'@'))
            .then(|| self.replace(from, from + n, "url-password"))
    }

    /// `NAME=value` or `NAME: value` inside a string, `i` at the `=` or `:`, for a sensitive
    /// NAME (optionally in escaped quotes: `\"password\": \"…\"`).
    fn pair(&mut self, i: usize, start: usize) -> Option<usize> {
        let src = self.src;
        // The name is text after the last redaction: a secret already replaced is not part of
        // it (else a second pass would judge another name).
        let start = start.max(self.copied);
        if start > i {
            return None;
        }
        let mut name_end = i;
        while name_end > start && src[name_end - 1] == b' ' {
            name_end -= 1;
        }
        if name_end >= start + 2 && &src[name_end - 2..name_end] == b"\\\"" {
            name_end -= 2;
        } else if name_end > start && src[name_end - 1] == b'\'' {
            name_end -= 1;
        }
        let name_len = src[start..name_end]
            .iter()
            .rev()
            .take_while(|&&b| is_key_char(b) || b == b'.')
            .count();
        let kind = sensitive(&src[name_end - name_len..name_end])?;
        let mut v = i + 1;
        while src.get(v) == Some(&b' ') {
            v += 1;
        }
        let rest = &src[v..];
        let (from, len) = if rest.starts_with(b"\\\"") {
            let n = rest[2..]
                .iter()
                .take_while(|&&b| !b"\\\"\n".contains(&b))
                .count();
            (v + 2, n)
        } else if rest.starts_with(b"'") {
            let n = rest[1..]
                .iter()
                .take_while(|&&b| !b"'\\\"\n".contains(&b))
                .count();
            (v + 1, n)
        } else {
            let n = rest
                .iter()
                .take_while(|&&b| !b" \\\"'&,;)}]<>\n".contains(&b))
                .count();
            (v, n)
        };
        let value = &src[from..from + len];
        if len == 0 || value.starts_with(b"$") || contains(value, b"[REDACTED") {
            return None;
        }
        if rest.starts_with(b"Bearer ") || rest.starts_with(b"bearer ") {
            return None; // the bearer matcher takes the token itself
        }
        Some(self.replace_value(from, from + len, kind))
    }

    /// After `"NAME":` outside strings, `i` just past the colon: a string value of a sensitive
    /// member is redacted whole. Returns where scanning goes on.
    fn member_value(&mut self, name: &[u8], i: usize) -> usize {
        let src = self.src;
        let mut v = i;
        while v < src.len() && src[v].is_ascii_whitespace() && src[v] != b'\n' {
            v += 1;
        }
        if src.get(v) != Some(&b'"') {
            return i;
        }
        let Some(kind) = sensitive(name) else {
            return i;
        };
        let from = v + 1;
        let end = string_end(src, from);
        let value = &src[from..end];
        if value.is_empty() || value.starts_with(b"[REDACTED") || value.starts_with(b"$") {
            return i;
        }
        self.replace_value(from, end, kind);
        end + 1
    }

    /// Replaces a pair's value: by the kind a prefix matcher gives it if it is one whole
    /// known secret, else by `kind`.
    fn replace_value(&mut self, from: usize, to: usize, kind: &'static str) -> usize {
        let specific = known_kind(&self.src[from..to]);
        self.replace(from, to, specific.unwrap_or(kind))
    }

    fn replace(&mut self, from: usize, to: usize, kind: &str) -> usize {
        debug_assert!(self.copied <= from && from <= to);
        if !self.changed {
            self.out.reserve(self.src.len() + 16);
            self.changed = true;
        }
        self.out.extend_from_slice(&self.src[self.copied..from]);
        self.out.extend_from_slice(b"[REDACTED:");
        self.out.extend_from_slice(kind.as_bytes());
        self.out.push(b']');
        self.copied = to;
        to
    }
}

/// The kind of a pair's value when it is, from its start, a secret the prefix matchers know.
fn known_kind(value: &[u8]) -> Option<&'static str> {
    let mut probe = Redactor {
        src: value,
        out: Vec::new(),
        copied: 0,
        changed: false,
    };
    probe.at(0, 0, true)?;
    if probe.copied != value.len() {
        return None;
    }
    let kind = probe.out.strip_prefix(b"[REDACTED:")?;
    let kind = kind.strip_suffix(b"]")?;
    KINDS.iter().copied().find(|k| k.as_bytes() == kind)
}

/// Every kind, as written in `[REDACTED:KIND]`.
pub const KINDS: &[&str] = &[
    "anthropic-key",
    "openai-key",
    "google-api-key",
    "github-token",
    "aws-access-key",
    "slack-token",
    "bearer-token",
    "private-key",
    "url-password",
    "password",
    "secret",
];

/// Whether a pair's name is sensitive, and the kind of its value.
fn sensitive(name: &[u8]) -> Option<&'static str> {
    // Only names that are identifiers: a name holding anything else (quotes, spaces, or a
    // redaction of its own) is text, and judging it would make redaction not idempotent.
    if name.len() > 64 || !name.iter().all(|&b| is_key_char(b) || b == b'.') {
        return None;
    }
    let mut buf = [0u8; 64];
    let mut n = 0;
    for &b in name {
        if !matches!(b, b'_' | b'-' | b'.') {
            buf[n] = b.to_ascii_lowercase();
            n += 1;
        }
    }
    let key = &buf[..n];
    if key.ends_with(b"password") || key.ends_with(b"passwd") {
        Some("password")
    } else if [
        &b"secret"[..],
        b"token",
        b"apikey",
        b"accesskey",
        b"secretkey",
        b"privatekey",
    ]
    .iter()
    .any(|s| key.ends_with(s))
    {
        Some("secret")
    } else {
        None
    }
}

/// The index of the closing quote of the string whose contents start at `from` (the end of
/// the line or input if it has none).
fn string_end(src: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < src.len() {
        match src[i] {
            b'"' | b'\n' => return i,
            b'\\' if src.get(i + 1) == Some(&b'\n') => return i + 1,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    src.len()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> String {
        String::from_utf8(redact(s.as_bytes()).into_owned()).unwrap()
    }

    /// Redacts `{"text": TEXT}` and returns the text again.
    fn text(t: &str) -> String {
        let line = serde_json::json!({ "text": t }).to_string();
        let out = r(&line);
        let v: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
        v["text"].as_str().unwrap().to_owned()
    }

    // Fake keys with realistic shapes; none is real.
    const ANTHROPIC: &str =
        "sk-ant-api03-Xq3vN8bT2mK9pL4wR7yZ1cF6hJ0dG5sA8eU3iO2nB7vM4xQ9tY6rW1kP0jH5gD3fS8aL2zC7-AbCdEfAA";
    const OPENAI: &str = "sk-proj-4fR9tY2uI7oP3aS6dF1gH8jK5lZ0xC4vB9nM2qW7eR3tY6uI1oP8aS5dF0gH";

    #[test]
    fn provider_keys_keep_their_kind() {
        let cases = [
            (ANTHROPIC, "anthropic-key"),
            (OPENAI, "openai-key"),
            (
                "sk-4fR9tY2uI7oP3aS6dF1gH8jK5lZ0xC4vB9nM2qW7eR3tY6u",
                "openai-key",
            ),
            ("AIzaSyD4fR9tY2uI7oP3aS6dF1gH8jK5lZ0xC4v", "google-api-key"),
            ("ghp_4fR9tY2uI7oP3aS6dF1gH8jK5lZ0xC4vB9nM", "github-token"),
            ("gho_4fR9tY2uI7oP3aS6dF1gH8jK5lZ0xC4vB9nM", "github-token"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
                "github-token",
            ),
            ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
            ("ASIAIOSFODNN7EXAMPLE", "aws-access-key"),
            (
                "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
                "slack-token",
            ),
            (
                "xoxp-123456789012-123456789012-123456789012-abcdef",
                "slack-token",
            ),
        ];
        for (key, kind) in cases {
            assert_eq!(
                text(&format!("export KEY_VALUE {key} done")),
                format!("export KEY_VALUE [REDACTED:{kind}] done"),
                "{key}"
            );
            // At the start, at the end, after an escape.
            assert_eq!(text(key), format!("[REDACTED:{kind}]"));
            assert_eq!(
                text(&format!("a\n{key}\tb")),
                format!("a\n[REDACTED:{kind}]\tb")
            );
        }
    }

    #[test]
    fn look_alikes_are_left_alone() {
        for t in [
            "task-4fR9tY2uI7oP3aS6dF1gH8jK5lZ0xC4vB9nM",
            "sk-short",
            "risk-assessment-for-the-new-deployment-pipeline",
            "AKIAIOSFODNN7EXAMPLEX",
            "AKIA1234",
            "ghp_short",
            "xoxb-1",
            "Bearer token",
            "the bearer of bad news",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "https://example.com:8080/path@x",
            "git@github.com:org/repo.git",
            "password",
            "password=",
            "password=$DB_PASSWORD",
            "max_tokens: 100",
            "apiKeySource: ANTHROPIC_API_KEY",
            "02:20:02",
        ] {
            assert_eq!(text(t), t);
        }
    }

    #[test]
    fn bearer_tokens_private_keys_and_url_passwords() {
        assert_eq!(
            text("curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123' x"),
            "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' x"
        );
        let pem = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter";
        assert_eq!(text(pem), "key:\n[REDACTED:private-key]\nafter");
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA";
        assert_eq!(text(cut), "[REDACTED:private-key]");
        assert_eq!(
            text("DATABASE_URL=postgres://app:s3cr3t-P4ss@db.internal:5432/app"),
            "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app"
        );
    }

    #[test]
    fn password_style_pairs() {
        for (t, want) in [
            (
                "mysql --password=hunter2 -u root",
                "mysql --password=[REDACTED:password] -u root",
            ),
            ("DB_PASSWORD=hunter2", "DB_PASSWORD=[REDACTED:password]"),
            ("password: hunter2", "password: [REDACTED:password]"),
            (
                "{\"password\": \"hun ter2\"}",
                "{\"password\": \"[REDACTED:password]\"}",
            ),
            (
                "client_secret='abc def'",
                "client_secret='[REDACTED:secret]'",
            ),
            (
                "https://x/cb?access_token=abc123&x=1",
                "https://x/cb?access_token=[REDACTED:secret]&x=1",
            ),
            (
                &format!("ANTHROPIC_API_KEY={ANTHROPIC}"),
                "ANTHROPIC_API_KEY=[REDACTED:anthropic-key]",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = [REDACTED:secret]",
            ),
            (
                "auth_token: Bearer abcdefghijklmnopqrstuvwxyz0123",
                "auth_token: Bearer [REDACTED:bearer-token]",
            ),
            (
                "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key=[REDACTED:secret]",
            ),
        ] {
            assert_eq!(text(t), want, "{t}");
        }
    }

    #[test]
    fn json_members_with_sensitive_names() {
        assert_eq!(
            r(
                r#"{"event":"tool_invocation","input":{"user":"u","password":"hunter2","apiKey":"sk-ant-api03-Xq3vN8bT2mK9pL4wR7yZ1cF6hJ0dG5sA8e","n":{"token":7}}}"#
            ),
            r#"{"event":"tool_invocation","input":{"user":"u","password":"[REDACTED:password]","apiKey":"[REDACTED:anthropic-key]","n":{"token":7}}}"#
        );
        // Whitespace as a passed-through `raw` may have it, and escapes in the value.
        assert_eq!(
            r("{\"raw\": {\"secret\" : \"a\\\"b\\\\c\"}}\n"),
            "{\"raw\": {\"secret\" : \"[REDACTED:secret]\"}}\n"
        );
    }

    #[test]
    fn structure_is_kept_and_redaction_is_idempotent() {
        let line = format!(
            "{{\"event\":\"text\",\"text\":\"use {ANTHROPIC} and {OPENAI}\",\"raw\":{{\"k\":\"Bearer abcdefghijklmnopqrstuvwxyz\",\"{OPENAI}\":1}}}}\n{{\"event\":\"x\"}}\n"
        );
        let once = r(&line);
        assert_eq!(once.lines().count(), 2);
        for l in once.lines() {
            serde_json::from_str::<serde_json::Value>(l).expect("valid JSON");
        }
        assert!(!once.contains("sk-"), "{once}");
        assert_eq!(r(&once), once);
        assert!(matches!(
            redact(b"{\"a\":\"nothing here\"}\n"),
            Cow::Borrowed(_)
        ));
    }

    /// Found by fuzz target `redact`: a secret right after another one (no separator between
    /// them) was only seen on the second pass, where the first one's `]` is a word boundary.
    #[test]
    fn a_secret_right_after_a_redaction_is_seen_at_once() {
        let input = "{\"a\":\"- AKIA4444444444444445-----BEGIN RSA PRIVATE KEY-----2f\"}\n";
        let once = r(input);
        assert_eq!(
            once,
            "{\"a\":\"- [REDACTED:aws-access-key][REDACTED:private-key]\"}\n"
        );
        assert_eq!(r(&once), once, "idempotent");
    }

    #[test]
    fn invalid_json_never_loses_a_line_end() {
        // Found by fuzzing: a backslash before a line end, a pair value or a private key
        // running into the next line.
        for input in [
            "{\"a\":\"x\\\n-----BEGIN RSA PRIVATE KEY-----\"}\n",
            "{\"a\":\"-----BEGIN RSA PRIVATE KEY-----\\\nb\"}\n",
            "{\"a\":\"password=abc\ndef\"}\n",
            "{\"a\":\"\\\"password\\\": \\\"ab\nc\"}\n",
        ] {
            let out = r(input);
            assert_eq!(
                out.matches('\n').count(),
                input.matches('\n').count(),
                "{input:?} -> {out:?}"
            );
            assert_eq!(r(&out), out, "idempotent");
        }
        // Found by fuzzing: a URL scheme after a sensitive name was redacted twice, and a
        // secret in a URL's user name was only seen on the second pass.
        for (input, want) in [
            (
                "total_token://user:pw@s",
                "total_token://user:[REDACTED:url-password]@s",
            ),
            (
                "i://sk-ant-AIzaapi0ant-api03-m_:pw@h",
                "i://[REDACTED:anthropic-key]:[REDACTED:url-password]@h",
            ),
        ] {
            let once = text(input);
            assert_eq!(once, want);
            assert_eq!(text(&once), once);
        }
        // Found by fuzzing: a pair's name running into a secret redacted just before it.
        let once =
            text("ghp_R4nd0mL00k1ngT0k3nV4lu3F0rT3st1ng00AAAAAAAAAAAAAAAAAAAAAAAAAA.7token_=abc");
        assert_eq!(once, "[REDACTED:github-token].7token_=[REDACTED:secret]");
        assert_eq!(text(&once), once);
        // Found by fuzzing: a member name holding a pair (`\"password\": \"…\"`) was judged
        // sensitive only once its own value had been redacted.
        let line =
            r#"{"x\"password\": \"hunter2hunter2hunter2hunter2hunter2hunter2\" password":"v"}"#;
        let once = r(line);
        assert_eq!(
            once,
            r#"{"x\"password\": \"[REDACTED:password]\" password":"v"}"#
        );
        assert_eq!(r(&once), once);
    }

    #[test]
    fn numbers_and_names_outside_strings_are_untouched() {
        let line = r#"{"password":12345,"token":null,"secret":["x"],"a":"b"}"#;
        assert_eq!(r(line), line);
    }
}
