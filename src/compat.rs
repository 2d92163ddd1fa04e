//! `--compat cc-insights`: output restricted to the 17 event types of CC-Insights.
//!
//! Additions are folded into the nearest CC-Insights type, as that project does itself;
//! what has no home there is dropped and counted:
//!
//! | addition | becomes |
//! |---|---|
//! | `plan_update` | `text` kind `plan`: the entries' content one per line, the entries in `extensions.planEntries` |
//! | `error` | `text` kind `error`: the message, the details in `extensions.error` |
//! | `session_status` with a status CC-Insights lacks (`idle`, `requesting`, …) | dropped |
//! | `turn_start`, `permission_response`, `tool_update`, `file_change`, `task_update`, `hook`, `notice`, `raw` | dropped |

use crate::event::*;
use std::borrow::Cow;

/// Folds one event body; `Err` names the type that was dropped.
pub fn fold<'a>(body: Body<'a>, ext: &mut Extensions<'a>) -> Result<Body<'a>, &'static str> {
    match body {
        Body::PlanUpdate(p) => {
            let text = p
                .entries
                .iter()
                .map(|e| e.content.as_ref())
                .collect::<Vec<_>>()
                .join("\n");
            let entries = serde_json::to_value(&p.entries).unwrap_or_default();
            ext.put("planEntries", entries);
            Ok(Body::Text(Text {
                text: Cow::Owned(text),
                kind: TextKind::Plan,
                parent_call_id: p.parent_call_id,
                model: None,
                message_id: None,
            }))
        }
        Body::Error(e) => {
            let text = e.message.clone();
            let parent = e.parent_call_id.clone();
            let detail = serde_json::to_value(&e).unwrap_or_default();
            ext.put("error", detail);
            Ok(Body::Text(Text {
                text,
                kind: TextKind::Error,
                parent_call_id: parent,
                model: None,
                message_id: None,
            }))
        }
        Body::SessionStatus(s) if !s.status.in_cc_insights() => Err("session_status"),
        b if CC_INSIGHTS_TYPES.contains(&b.kind()) => Ok(b),
        b => Err(b.kind()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_becomes_text_plan() {
        let mut ext = Extensions::default();
        let b = fold(
            PlanUpdate {
                entries: vec![
                    PlanEntry {
                        content: "a".into(),
                        status: PlanStatus::Pending,
                        priority: None,
                        active_form: None,
                    },
                    PlanEntry {
                        content: "b".into(),
                        status: PlanStatus::Completed,
                        priority: None,
                        active_form: None,
                    },
                ],
                call_id: None,
                parent_call_id: None,
                explanation: None,
            }
            .into(),
            &mut ext,
        )
        .unwrap();
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(v["text"], "a\nb");
        assert_eq!(v["kind"], "plan");
        assert_eq!(ext.0[0].0, "planEntries");
    }

    #[test]
    fn additions_without_a_home_are_dropped() {
        let mut ext = Extensions::default();
        let r = fold(TurnStart::default().into(), &mut ext);
        assert_eq!(r.err(), Some("turn_start"));
        let r = fold(
            SessionStatus {
                status: SessionStatusKind::Idle,
                message: None,
            }
            .into(),
            &mut ext,
        );
        assert_eq!(r.err(), Some("session_status"));
    }
}
