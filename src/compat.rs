//! `--compat cc-insights`: output restricted to the 17 event types of CC-Insights.
//!
//! Additions are folded into the nearest CC-Insights type, as that project does itself;
//! what has no home there is dropped and counted:
//!
//! | addition | becomes |
//! |---|---|
//! | `plan_update` | `text` kind `plan`: the entries' content one per line, the entries in `extensions.planEntries` |
//! | `error` | `text` kind `error`: the message, the other fields in `extensions.error` |
//! | `session_status` with a status CC-Insights lacks (`idle`, `requesting`, …) | dropped |
//! | `usage_update` without token counts (Claude's thinking-token estimates) | dropped |
//! | `stream_delta` of kind `toolOutput` (CC-Insights has no such kind) | dropped |
//! | `turn_start`, `permission_response`, `tool_update`, `file_change`, `task_update`, `hook`, `notice`, `raw` | dropped |
//!
//! Providers CC-Insights does not know are written as the nearest one it does (`qwen`, `amp`,
//! `cursor` as `claude`; `opencode`, `aceclaw` as `acp`), the real name in
//! `extensions["insights.provider"]`.
//!
//! The same folding applies to converted events and to InsightsEvents passing through.

use crate::event::{SessionStatusKind, CC_INSIGHTS_TYPES, EVENT_TYPES};
use serde_json::{Map, Value};

/// Members every event has, in output order.
const BASE: &[&str] = &[
    "event",
    "id",
    "seq",
    "line",
    "timestamp",
    "provider",
    "sessionId",
    "turnId",
];

/// A provider CC-Insights lacks (its `BackendProvider` is matched by name) is renamed to the
/// one whose wire format it follows ([`crate::providers::Provider::cc_name`]); the real name
/// is kept in `extensions["insights.provider"]`.
fn cc_provider(obj: &mut Map<String, Value>) {
    let Some(p) = obj.get("provider").and_then(Value::as_str) else {
        return;
    };
    let Some(known) = crate::providers::PROVIDERS.iter().find(|q| q.name == p) else {
        return;
    };
    if known.cc_name == known.name {
        return;
    }
    let (name, cc) = (known.name, known.cc_name);
    obj.insert("provider".into(), Value::from(cc));
    if let Value::Object(ext) = obj
        .entry("extensions")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        ext.insert("insights.provider".into(), Value::from(name));
    }
}

/// Folds one event in place; `Err` names the type that was dropped.
pub fn fold(obj: &mut Map<String, Value>) -> Result<(), &'static str> {
    cc_provider(obj);
    let kind = obj.get("event").and_then(Value::as_str).unwrap_or("");
    match kind {
        "plan_update" => {
            let entries = obj
                .get("entries")
                .cloned()
                .unwrap_or(Value::Array(Vec::new()));
            let text = entries
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|e| e.get("content").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            let parent = obj.get("parentCallId").cloned();
            retype(obj, "text", text, "plan", parent, ("planEntries", entries));
            Ok(())
        }
        "error" => {
            let text = obj
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let parent = obj.get("parentCallId").cloned();
            let detail: Map<String, Value> = obj
                .iter()
                .filter(|(k, _)| {
                    !BASE.contains(&k.as_str()) && !matches!(k.as_str(), "raw" | "extensions")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            retype(
                obj,
                "text",
                text,
                "error",
                parent,
                ("error", Value::Object(detail)),
            );
            Ok(())
        }
        "session_status" => {
            let status = obj.get("status").and_then(Value::as_str).unwrap_or("");
            let known = SessionStatusKind::ALL
                .iter()
                .zip(SessionStatusKind::CC)
                .any(|(s, cc)| *s == status && *cc);
            if known {
                Ok(())
            } else {
                Err("session_status")
            }
        }
        "stream_delta" if obj.get("kind").and_then(Value::as_str) == Some("toolOutput") => {
            Err("stream_delta")
        }
        "usage_update" => match obj.get("stepUsage") {
            Some(Value::Object(m)) if !m.is_empty() => Ok(()),
            _ => Err("usage_update"),
        },
        k if CC_INSIGHTS_TYPES.contains(&k) => Ok(()),
        k => Err(EVENT_TYPES
            .iter()
            .find(|t| **t == k)
            .copied()
            .unwrap_or("unknown")),
    }
}

/// Rewrites `obj` as a `text` event of `kind`, keeping the base members, `raw` and
/// `extensions`, and adding `extra` to the extensions.
fn retype(
    obj: &mut Map<String, Value>,
    event: &str,
    text: String,
    kind: &str,
    parent: Option<Value>,
    extra: (&str, Value),
) {
    let mut old = std::mem::take(obj);
    for key in BASE {
        if let Some(v) = old.remove(*key) {
            obj.insert((*key).to_owned(), v);
        }
    }
    obj.insert("event".into(), Value::from(event));
    obj.insert("text".into(), Value::from(text));
    obj.insert("kind".into(), Value::from(kind));
    if let Some(p) = parent {
        obj.insert("parentCallId".into(), p);
    }
    if let Some(raw) = old.remove("raw") {
        obj.insert("raw".into(), raw);
    }
    let mut ext = match old.remove("extensions") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    ext.insert(extra.0.to_owned(), extra.1);
    obj.insert("extensions".into(), Value::Object(ext));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn plan_becomes_text_plan() {
        let mut o = obj(
            serde_json::json!({"event":"plan_update","id":"i","seq":1,"line":1,"provider":"claude","sessionId":"s",
            "entries":[{"content":"a","status":"pending"},{"content":"b","status":"completed"}],"callId":"c"}),
        );
        fold(&mut o).unwrap();
        assert_eq!(o["event"], "text");
        assert_eq!(o["text"], "a\nb");
        assert_eq!(o["kind"], "plan");
        assert_eq!(o["extensions"]["planEntries"][1]["content"], "b");
        assert!(o.get("callId").is_none());
        let keys: Vec<&str> = o.keys().map(String::as_str).collect();
        assert_eq!(&keys[..3], &["event", "id", "seq"]);
    }

    #[test]
    fn error_becomes_text_error() {
        let mut o = obj(
            serde_json::json!({"event":"error","id":"i","seq":1,"line":1,"provider":"claude","sessionId":"s",
            "message":"boom","severity":"error","httpStatus":529}),
        );
        fold(&mut o).unwrap();
        assert_eq!(o["kind"], "error");
        assert_eq!(o["text"], "boom");
        assert_eq!(o["extensions"]["error"]["httpStatus"], 529);
    }

    #[test]
    fn additions_without_a_home_are_dropped() {
        let mut o = obj(serde_json::json!({"event":"turn_start"}));
        assert_eq!(fold(&mut o), Err("turn_start"));
        let mut o = obj(serde_json::json!({"event":"session_status","status":"idle"}));
        assert_eq!(fold(&mut o), Err("session_status"));
        let mut o = obj(serde_json::json!({"event":"session_status","status":"compacting"}));
        assert_eq!(fold(&mut o), Ok(()));
        let mut o = obj(serde_json::json!({"event":"usage_update","stepUsage":{}}));
        assert_eq!(fold(&mut o), Err("usage_update"));
    }
}
