//! A turn's `modelUsage` for the Claude-like dialects whose `result` has none: Qwen Code and
//! Cursor, whose `system/init` names the session's model, and Amp, whose assistant messages
//! name theirs (Qwen's chat files name it on each response, [`super::qwen_chat`]).
//! The turn's `usage` is put under the model the session last named; a model the wire does
//! not name (Cursor's `Auto`, where Cursor picks one) gives no `modelUsage`.
//!
//! The model is remembered per session ([`Memory`]), and `reduce --from-state` tells a
//! resumed converter the models its state has ([`resumed`]).

use super::memo::Memo;
use super::Cx;
use crate::event::Body;

crate::providers::memo::remember! {
    /// The model each session last named, by session id.
    pub struct Memory {
        pub by_session: Memo<String>,
    }
}

/// The providers whose turns are priced here: a resumed converter is told their sessions'
/// models.
pub const PROVIDERS: &[&str] = &["amp", "cursor", "qwen"];

/// Whether `provider`'s `model` names one: Cursor's `Auto` says Cursor picks it.
pub fn is_model(provider: &str, model: &str) -> bool {
    !(provider == "cursor" && model.eq_ignore_ascii_case("auto"))
}

/// Notes the model the line's events name (a `session_init`'s, a message's or a call's) for
/// its session, a line of `provider`.
pub fn note(cx: &mut Cx<'_>, provider: &str) {
    let Some(session) = cx.session_id.clone().filter(|s| !s.is_empty()) else {
        return;
    };
    let model = cx.events.iter().find_map(|(b, _)| match b {
        Body::SessionInit(i) => i.model.as_deref(),
        Body::Text(t) => t.model.as_deref(),
        Body::ToolInvocation(t) => t.model.as_deref(),
        _ => None,
    });
    let Some(model) = model.map(str::to_owned) else {
        return;
    };
    let line = cx.line;
    let memo = &mut cx.memory().models.by_session;
    if !is_model(provider, &model) {
        memo.remove(&session);
    } else if memo.get(&session) != Some(&model) {
        memo.insert(&session, model, line);
    }
}

/// Puts the usage of the line's `turn_complete` under its session's model, when it has no
/// `modelUsage` of its own.
pub fn price(cx: &mut Cx<'_>) {
    let Some(session) = cx.session_id.clone() else {
        return;
    };
    let model = cx.memory().models.by_session.get(&session).cloned();
    for (b, _) in cx.events.iter_mut() {
        if let (Body::TurnComplete(tc), Some(model)) = (b, &model) {
            if let (None, Some(usage)) = (&tc.model_usage, &tc.usage) {
                tc.model_usage = Some(super::codex::usage_under(model.clone(), usage));
            }
        }
    }
}

/// A resumed converter's memory of the `models` (session id, provider, model) of a state.
pub fn resumed<'p>(
    m: &mut super::Memory,
    models: impl IntoIterator<Item = (&'p str, &'p str, &'p str)>,
) {
    for (session, provider, model) in models {
        if PROVIDERS.contains(&provider) && is_model(provider, model) {
            m.models.by_session.insert(session, model.to_owned(), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{convert_output, of_kind};

    fn turn_model_usage(provider: &str, file: &str) -> Vec<serde_json::Value> {
        let text =
            std::fs::read_to_string(format!("{}/testdata/{file}", env!("CARGO_MANIFEST_DIR")))
                .expect("the capture");
        let lines: Vec<&str> = text.lines().collect();
        let p = crate::providers::by_name(provider).expect("a provider");
        let evs = convert_output(p, &lines);
        of_kind(&evs, "turn_complete")
            .into_iter()
            .map(|t| t["modelUsage"].clone())
            .collect()
    }

    /// Amp's turn is priced under its messages' model, Cursor's under its init's, and a
    /// Cursor session on `Auto` names none.
    #[test]
    fn a_turn_s_usage_is_under_the_model_the_session_named() {
        let amp = turn_model_usage("amp", "amp/bash-edit.jsonl");
        assert_eq!(amp[0]["claude-sonnet-4-5"]["outputTokens"], 162);
        assert_eq!(amp[0]["claude-sonnet-4-5"]["cacheReadTokens"], 25599);
        let cursor = turn_model_usage("cursor", "cursor/edit-todos.jsonl");
        assert_eq!(cursor[0]["Claude 4 Sonnet"]["inputTokens"], 120);
        let auto = turn_model_usage("cursor", "cursor/shell-read.jsonl");
        assert!(auto.iter().all(serde_json::Value::is_null), "{auto:?}");
        assert!(!auto.is_empty());
    }
}
