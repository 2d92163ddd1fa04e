//! File changes taken from a call's input, for wire formats whose tool results carry no
//! change (Gemini CLI's `write_file`/`replace`, Qwen Code's `write_file`/`edit`, Amp's
//! `create_file`/`edit_file`): the provider remembers what the call asked for in a
//! [`Memo`] of its own until the result, and a successful result makes it a `file_change`.

use super::memo::Memo;
use super::Cx;
use crate::event::*;
use crate::wire::OptStr;
use serde::Deserialize;
use std::borrow::Cow;

/// A file change a call asked for: what its input said.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub path: String,
    /// The text replaced; `None` when the call writes the whole file.
    pub old: Option<String>,
    /// The new text: the whole file, or what replaces `old`.
    pub new: String,
    /// The tool says it creates the file (Amp's `create_file`), rather than writes it
    /// whether or not it existed.
    pub creates: bool,
    /// `old` and `new` are the whole file before and after (Gemini CLI's chat files keep
    /// them), not the replaced text.
    pub whole: bool,
}

/// The members of an edit tool's input, by the names the agents use.
#[derive(Deserialize, Default)]
struct Input<'a> {
    #[serde(borrow)]
    file_path: OptStr<'a>,
    path: OptStr<'a>,
    content: OptStr<'a>,
    old_string: OptStr<'a>,
    new_string: OptStr<'a>,
    old_str: OptStr<'a>,
    new_str: OptStr<'a>,
}

/// The change a call's input asks for: `write` tools give the whole file (`content`),
/// `edit` tools a replacement (`old_string`/`new_string`, or `old_str`/`new_str`).
pub fn from_input(input: &str, write: bool, creates: bool) -> Option<Edit> {
    let i: Input = serde_json::from_str(input).ok()?;
    let path = i.file_path.0.or(i.path.0)?.into_owned();
    if write {
        return Some(Edit {
            path,
            old: None,
            new: i.content.0?.into_owned(),
            creates,
            whole: false,
        });
    }
    Some(Edit {
        path,
        old: Some(i.old_string.0.or(i.old_str.0)?.into_owned()),
        new: i.new_string.0.or(i.new_str.0)?.into_owned(),
        creates: false,
        whole: false,
    })
}

/// The `file_change` of a successful call that asked for `edit`.
///
/// A whole-file write whose tool does not say the file is new is an `add` of the content,
/// marked `insights.inferred` (the wire does not say whether the file existed). A
/// replacement is an `update` whose diff covers the replaced text only, its line numbers
/// counted from that text (`insights.diffScope: "replaced text"`): the file around it is not
/// on the wire. An empty old text creates the file. An edit of the `whole` file is its diff.
pub fn file_change<'a>(edit: Edit, call_id: Str<'a>, parent: Option<Str<'a>>, cx: &mut Cx<'a>) {
    let created = edit.old.as_deref().is_none_or(str::is_empty);
    let diff = crate::diff::unified(
        &edit.path,
        edit.old.as_deref().filter(|o| !o.is_empty()),
        &edit.new,
    );
    let ext = cx.push(FileChange {
        path: Cow::Owned(edit.path),
        change_kind: if created {
            ChangeKind::Add
        } else {
            ChangeKind::Update
        },
        move_path: None,
        diff: Some(Cow::Owned(diff)),
        cumulative: false,
        call_id: Some(call_id),
        parent_call_id: parent,
    });
    if edit.old.is_none() && !edit.creates {
        ext.put("insights.inferred", true);
    } else if !created && !edit.whole {
        ext.put("insights.diffScope", "replaced text");
    }
}

/// For a provider whose lines go through the Claude converter: remembers the change each
/// write or edit invocation among the line's events asks for (`kind` says which tools do,
/// by name: `Some(write, creates)`), and turns the completion of a remembered call into a
/// `file_change` when it succeeded and the line made none for it.
pub fn follow<'a>(
    cx: &mut Cx<'a>,
    memo: for<'r> fn(&'r mut Cx<'a>) -> &'r mut Memo<Edit>,
    kind: fn(&str) -> Option<(bool, bool)>,
) {
    let mut asked = Vec::new();
    let mut ended = Vec::new();
    for (i, (body, _)) in cx.events.iter().enumerate() {
        match body {
            Body::ToolInvocation(t) if t.kind == ToolKind::Edit && !t.call_id.is_empty() => {
                let Some((write, creates)) = kind(&t.tool_name) else {
                    continue;
                };
                let text = match &t.input {
                    Json::Raw(r) => Cow::Borrowed(r.get()),
                    Json::RawOwned(r) => Cow::Borrowed(r.get()),
                    Json::Value(v) => Cow::Owned(v.to_string()),
                    _ => continue,
                };
                if let Some(e) = from_input(&text, write, creates) {
                    asked.push((t.call_id.to_string(), e));
                }
            }
            Body::ToolCompletion(c) if !c.call_id.is_empty() => {
                let changed = cx.events.iter().any(|(b, _)| {
                    matches!(b, Body::FileChange(f) if f.call_id.as_deref() == Some(&*c.call_id))
                });
                ended.push((
                    i,
                    c.call_id.clone(),
                    c.parent_call_id.clone(),
                    c.status == ToolCallStatus::Completed && !changed,
                ));
            }
            _ => {}
        }
    }
    let line = cx.line;
    for (id, e) in asked {
        memo(cx).insert(&id, e, line);
    }
    // Changes go right after their completions, in order.
    let mut shift = 0;
    for (i, call_id, parent, ok) in ended {
        let Some(edit) = memo(cx).remove(&call_id) else {
            continue;
        };
        if !ok {
            continue;
        }
        let before = cx.events.len();
        file_change(edit, call_id, parent, cx);
        if before + 1 == cx.events.len() {
            let ev = cx.events.pop().expect("just pushed");
            cx.events.insert(i + 1 + shift, ev);
            shift += 1;
        }
    }
}
