//! OTLP/HTTP: `POST {endpoint}/v1/traces` with a binary protobuf `ExportTraceServiceRequest`,
//! as the OTLP specification (protocol/exporter.md and otlp.md, "OTLP/HTTP") says a client
//! sends, retries and gives up.
//!
//! * Retried: 429, 502, 503 and 504 (the retryable codes of "Failures"), and a request that
//!   could not be sent or whose answer could not be read (the server may not have been
//!   reached). The wait is the server's `Retry-After` (seconds) when it gives one, else an
//!   exponential backoff from 1 s, doubled each try up to 16 s, with up to a quarter of jitter;
//!   [`MAX_TRIES`] tries in all.
//! * Any other status is an error at once (the request is malformed or refused for good).
//! * A 2xx answer whose `partial_success` rejected spans is reported, counted, and makes the
//!   export fail at the end: nothing is dropped silently.
//!
//! The client is `ureq` (blocking, no async runtime) with rustls, so `https://` endpoints work
//! with the web PKI's roots (webpki-roots), nothing needed on the machine.

use super::proto::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use anyhow::{bail, Context as _};
use prost::Message as _;
use std::time::Duration;

/// Tries per request, the first included.
pub const MAX_TRIES: u32 = 6;
/// The first backoff; it doubles each try, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(16);
/// A `Retry-After` longer than this is taken as this long: an export is not held for hours.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The default of `OTEL_EXPORTER_OTLP_TIMEOUT`, per request.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how spans are sent.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The full URL requests go to (`…/v1/traces`).
    pub url: String,
    /// Headers of every request (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TRACES_HEADERS`).
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
}

impl Endpoint {
    /// The endpoint of `--endpoint URL` (a base URL: `/v1/traces` is appended), else of the
    /// environment as the OTLP exporter specification reads it:
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is), then
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL); `None` when none is set. Headers come from
    /// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (the latter
    /// wins), the timeout from `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` or
    /// `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds).
    pub fn configure(
        flag: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Option<Endpoint>> {
        let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let url = match flag {
            Some(base) => traces_url(base),
            None => match env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
                Some(url) => url.trim().to_owned(),
                None => match env("OTEL_EXPORTER_OTLP_ENDPOINT") {
                    Some(base) => traces_url(base.trim()),
                    None => return Ok(None),
                },
            },
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!("the OTLP endpoint {url:?} is not an http:// or https:// URL");
        }
        let mut headers = Vec::new();
        for var in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ] {
            if let Some(v) = env(var) {
                for (k, v) in super::key_values(&v).with_context(|| format!("in {var}"))? {
                    headers.retain(|(h, _): &(String, String)| !h.eq_ignore_ascii_case(&k));
                    headers.push((k, v));
                }
            }
        }
        let timeout = match env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .or_else(|| env("OTEL_EXPORTER_OTLP_TIMEOUT"))
        {
            Some(ms) => Duration::from_millis(ms.trim().parse().with_context(|| {
                format!("OTEL_EXPORTER_OTLP_TIMEOUT {ms:?} is not a number of milliseconds")
            })?),
            None => DEFAULT_TIMEOUT,
        };
        Ok(Some(Endpoint {
            url,
            headers,
            timeout,
        }))
    }
}

/// `base` with the traces path: `http://host:4318` → `http://host:4318/v1/traces`.
fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

/// Sends requests to one endpoint.
pub struct Sender {
    agent: ureq::Agent,
    endpoint: Endpoint,
    /// Spans the server said it rejected (`partial_success`).
    pub rejected: i64,
    /// Requests tried again, in all.
    pub retries: u64,
}

/// What one try came to.
enum Try {
    Done(Vec<u8>),
    /// Worth another try, after the server's wait when it named one.
    Again(String, Option<Duration>),
}

impl Sender {
    pub fn new(endpoint: Endpoint) -> Sender {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(endpoint.timeout))
            .user_agent(concat!("insights/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Sender {
            agent,
            endpoint,
            rejected: 0,
            retries: 0,
        }
    }

    /// Sends one request, trying again as the module says; an error once the tries are
    /// spent or the server refused it.
    pub fn send(&mut self, req: &ExportTraceServiceRequest) -> anyhow::Result<()> {
        let body = req.encode_to_vec();
        let mut backoff = FIRST_BACKOFF;
        let mut tries = 0;
        loop {
            tries += 1;
            let (why, wait) = match self.try_once(&body)? {
                Try::Done(answer) => {
                    self.answered(&answer);
                    return Ok(());
                }
                Try::Again(why, wait) => (why, wait),
            };
            if tries >= MAX_TRIES {
                bail!(
                    "cannot send spans to {}: {why}, {tries} tries",
                    self.endpoint.url
                );
            }
            let wait = wait.unwrap_or_else(|| jitter(backoff));
            backoff = (backoff * 2).min(MAX_BACKOFF);
            self.retries += 1;
            std::thread::sleep(wait);
        }
    }

    fn try_once(&self, body: &[u8]) -> anyhow::Result<Try> {
        let mut req = self
            .agent
            .post(&self.endpoint.url)
            .header("Content-Type", "application/x-protobuf");
        for (k, v) in &self.endpoint.headers {
            req = req.header(k, v);
        }
        let mut resp = match req.send(body) {
            Ok(r) => r,
            Err(e) => return Ok(Try::Again(e.to_string(), None)),
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
        let answer = resp.body_mut().with_config().limit(4 << 20).read_to_vec();
        match status {
            200..=299 => Ok(Try::Done(answer.unwrap_or_default())),
            429 | 502 | 503 | 504 => Ok(Try::Again(format!("HTTP {status}"), retry_after)),
            _ => {
                let why = answer
                    .ok()
                    .and_then(|b| status_message(&b))
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                bail!(
                    "{} refused the spans: HTTP {status}{why}",
                    self.endpoint.url
                )
            }
        }
    }

    /// Counts the spans a successful answer says were rejected.
    fn answered(&mut self, answer: &[u8]) {
        let Ok(resp) = ExportTraceServiceResponse::decode(answer) else {
            return;
        };
        if let Some(p) = resp.partial_success {
            if p.rejected_spans > 0 {
                self.rejected += p.rejected_spans;
                eprintln!(
                    "insights: {} rejected {} spans: {}",
                    self.endpoint.url, p.rejected_spans, p.error_message
                );
            }
        }
    }
}

/// The message of a `google.rpc.Status` an OTLP server answers an error with (field 2,
/// `string message`), when the body is one; else the body as text, when it is short text.
fn status_message(body: &[u8]) -> Option<String> {
    #[derive(Clone, PartialEq, prost::Message)]
    struct RpcStatus {
        #[prost(int32, tag = "1")]
        code: i32,
        #[prost(string, tag = "2")]
        message: String,
    }
    if let Ok(s) = RpcStatus::decode(body) {
        if !s.message.is_empty() {
            return Some(s.message);
        }
    }
    let text = std::str::from_utf8(body).ok()?.trim();
    (!text.is_empty() && text.len() <= 300).then(|| text.to_owned())
}

/// `d` plus up to a quarter of it, so that many machines retrying do not retry together.
fn jitter(d: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.subsec_nanos());
    d + d.mul_f64(f64::from(nanos % 1000) / 4000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn endpoint_from_flag_and_environment() {
        let none = env(&[]);
        assert!(Endpoint::configure(None, &none).unwrap().is_none());
        let e = Endpoint::configure(Some("http://c:4318/"), &none)
            .unwrap()
            .unwrap();
        assert_eq!(e.url, "http://c:4318/v1/traces");
        let vars = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c.example"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "a=1,Authorization=Basic%20eDp5",
            ),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "a=2"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ]);
        let e = Endpoint::configure(None, &vars).unwrap().unwrap();
        assert_eq!(e.url, "https://c.example/v1/traces");
        assert_eq!(
            e.headers,
            vec![
                ("Authorization".to_owned(), "Basic eDp5".to_owned()),
                ("a".to_owned(), "2".to_owned())
            ]
        );
        assert_eq!(e.timeout, Duration::from_millis(2500));
        let vars = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c.example"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom"),
        ]);
        let e = Endpoint::configure(None, &vars).unwrap().unwrap();
        assert_eq!(e.url, "http://t:1/custom");
        assert!(Endpoint::configure(Some("c:4318"), &none).is_err());
    }
}
