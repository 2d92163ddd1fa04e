//! One conversation told by two recordings, stored once: each turn by the first to store it.
//!
//! A conversation can reach the store twice, in different forms: its live stream (agent
//! output piped in, a capture of it, or the InsightsEvents `insights` made of it) and the
//! agent's own session file. The forms tell the same turns, but in different wire
//! formats: most of their events share no id (a Codex stream numbers its items, its rollout
//! names its calls; Gemini CLI's stream and chat file have no ids in common), so the key
//! `(session_id, id)` alone would store the conversation twice.
//!
//! So each event is placed in its recording: the session it names, and the ordinal of its
//! turn within that recording (`0` before the recording's first `turn_start`, `n` from its
//! n-th). A turn is told by the first form that stores an event of it ([`Form`]); an event of
//! a turn another form told is not stored, nor is anything another form's recording says
//! before its first turn once another form told any part of the session. Recordings of one
//! form are parts of one story (a session resumed in a second stream, a file read again as
//! it grows) and never hide each other; their events are kept once by their ids.
//!
//! The turn ordinals of two forms agree because the converter starts a turn where the agent
//! did, whichever the form (the session files tell the turns the stream tells, checked
//! against the facts written from the wire: `tests/facts.rs`). Where one recording has a turn the other lacks at its end (a
//! stream cut short, a file that went on), that turn is stored from the one that has it.

use rusqlite::{CachedStatement, Connection};
use std::collections::HashMap;

/// The form of a recording: what kind of text it is, not whose. Turns of one session told by
/// different forms are the same turns; those told by one form are parts of one story.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// An agent's output: its stream (`stream-json`, `exec --json`, JSON-RPC), live or
    /// captured, or the InsightsEvents made of it (a log of `insights`, read as it is).
    Stream = 0,
    /// An agent's own session file (Claude Code's project files, Codex's rollouts, Gemini
    /// CLI's and Qwen Code's chats, OpenCode's database).
    File = 1,
}

/// What only a session file's first line says: the members and record types of Claude Code's
/// and Qwen Code's project files, Codex's rollouts and Gemini CLI's chat header. No stream
/// writes them (they say `session_id`, `thread.started`, `init`, JSON-RPC).
const FILE_MARKS: &[&[u8]] = &[
    b"\"parentUuid\":",
    b"\"leafUuid\":",
    b"\"type\":\"session_meta\"",
    b"\"type\":\"response_item\"",
    b"\"type\":\"event_msg\"",
    b"\"type\":\"turn_context\"",
    b"\"projectHash\":",
];

/// What streams say of their session: Claude Code's, Gemini CLI's and Qwen Code's
/// `session_id`, JSON-RPC's envelope (ACP's `sessionId` is in its params), and the
/// `provider` of InsightsEvents (a log of `insights`).
const STREAM_MARKS: &[&[u8]] = &[b"\"session_id\":", b"\"jsonrpc\":", b"\"provider\":"];

impl Form {
    /// The form of a recording whose first line is `line`: a session file when it says what
    /// only session files say ([`FILE_MARKS`]), or names its session `sessionId` where no
    /// stream's mark is ([`STREAM_MARKS`]: the other records of the agents' own files, such as
    /// Claude Code's `queue-operation`, `summary` or `custom-title` lines and Qwen Code's usage
    /// record); else a stream.
    pub fn of_first_line(line: &[u8]) -> Form {
        let has = |m: &&[u8]| memchr::memmem::find(line, m).is_some();
        let file = FILE_MARKS.iter().any(has)
            || (has(&&b"\"sessionId\":"[..]) && !STREAM_MARKS.iter().any(has));
        if file {
            Form::File
        } else {
            Form::Stream
        }
    }
}

/// Where a recording is in each of its sessions: the turns started so far.
#[derive(Default)]
pub struct Turns {
    /// The session of the last event, and its count (most recordings have one session).
    last: Option<(Vec<u8>, u32)>,
    others: HashMap<Vec<u8>, u32>,
}

impl Turns {
    /// The ordinal of the turn of an event `kind` of `session`: counts it first when it
    /// starts one.
    pub fn place(&mut self, session: &[u8], kind: &str) -> u32 {
        let starts = u32::from(kind == "turn_start");
        match &mut self.last {
            Some((s, n)) if s.as_slice() == session => {
                *n += starts;
                *n
            }
            last => {
                if let Some((s, n)) = last.take() {
                    self.others.insert(s, n);
                }
                let n = self.others.remove(session).unwrap_or(0) + starts;
                *last = Some((session.to_vec(), n));
                n
            }
        }
    }
}

/// The writer's side: whether an event's turn was told by another form, noting the turns it
/// tells.
pub struct Tellers<'c> {
    other: CachedStatement<'c>,
    tell: CachedStatement<'c>,
    /// The last turn asked about, and the answer (a recording's events come turn by turn).
    last: Option<((i64, Form, u32), bool)>,
}

impl<'c> Tellers<'c> {
    pub fn new(conn: &'c Connection) -> rusqlite::Result<Self> {
        Ok(Tellers {
            other: conn.prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM tellers
                   WHERE sid = ?1 AND form <> ?2 AND (turn = ?3 OR ?3 = 0))",
            )?,
            tell: conn.prepare_cached(
                "INSERT OR IGNORE INTO tellers (sid, turn, form) VALUES (?1, ?3, ?2)",
            )?,
            last: None,
        })
    }

    /// Forgets the last answer: a new recording begins (another writer may have told turns
    /// meanwhile).
    pub fn begin(&mut self) {
        self.last = None;
    }

    /// Whether the turn `turn` of session `sid` (`named`: the session has an id) is told by
    /// another form than `form`; when it is not, it is this form's from now on.
    pub fn told_elsewhere(
        &mut self,
        sid: i64,
        named: bool,
        form: Form,
        turn: u32,
    ) -> rusqlite::Result<bool> {
        if !named {
            return Ok(false);
        }
        let key = (sid, form, turn);
        if let Some((k, answer)) = self.last {
            if k == key {
                return Ok(answer);
            }
        }
        let params = rusqlite::params![sid, form as i64, turn];
        let elsewhere: bool = self.other.query_row(params, |r| r.get(0))?;
        if !elsewhere {
            self.tell.execute(params)?;
        }
        self.last = Some((key, elsewhere));
        Ok(elsewhere)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_files_are_told_from_streams_by_their_first_line() {
        for line in [
            r#"{"type":"queue-operation","operation":"enqueue","sessionId":"s"}"#,
            r#"{"uuid":"u","parentUuid":null,"sessionId":"s","type":"user"}"#,
            r#"{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}"#,
            r#"{"sessionId":"s","projectHash":"h","startTime":"t"}"#,
            r#"{"type":"custom-title","customTitle":"t","sessionId":"s"}"#,
            r#"{"version":1,"sessionId":"s","timestamp":1,"startTime":1,"models":{}}"#,
        ] {
            assert_eq!(Form::of_first_line(line.as_bytes()), Form::File, "{line}");
        }
        for line in [
            r#"{"type":"system","subtype":"init","session_id":"s","uuid":"u"}"#,
            r#"{"type":"thread.started","thread_id":"t"}"#,
            r#"{"type":"init","timestamp":"t","session_id":"s","model":"m"}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}"#,
            r#"{"event":"session_init","id":"i:0","seq":1,"provider":"claude","sessionId":"s"}"#,
            r#"{"type":"step_start","timestamp":1,"sessionID":"ses_1","part":{}}"#,
        ] {
            assert_eq!(Form::of_first_line(line.as_bytes()), Form::Stream, "{line}");
        }
    }

    #[test]
    fn turns_are_counted_per_session() {
        let mut t = Turns::default();
        assert_eq!(t.place(b"a", "session_init"), 0);
        assert_eq!(t.place(b"a", "turn_start"), 1);
        assert_eq!(t.place(b"b", "turn_start"), 1);
        assert_eq!(t.place(b"a", "text"), 1);
        assert_eq!(t.place(b"a", "turn_start"), 2);
        assert_eq!(t.place(b"b", "text"), 1);
    }
}
