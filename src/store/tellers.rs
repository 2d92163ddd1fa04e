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
//! n-th). A turn is told by the first form that adds an event of it ([`Form`]); an event of
//! a turn another form told is not stored, nor is what a recording says before its first
//! turn once another form told any part of the session. Recordings of one
//! form are parts of one story (a session resumed in a second stream, a file read again as
//! it grows) and never hide each other; their events are kept once by their ids. A recording
//! read for the first time numbers its turns after those its form's recordings had before
//! (told, or found told by another form), so that a second stream's first turn is the
//! session's second; a copy of a recording, all of whose events are stored already, has
//! no turn of its own.
//!
//! The turn ordinals of two forms agree because the converter starts a turn where the agent
//! did, whichever the form (the session files tell the turns the stream tells, checked
//! against the facts written from the wire: `tests/facts.rs`). Where one recording has a turn
//! the other lacks at its end (a stream cut short, a file that went on), that turn is stored
//! from the one that has it. Where they do not line up (a resumed stream stored with no
//! stream of the turns before it) the turns are matched by position: `docs/store.md` says
//! what is stored then.

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

/// The writer's side: whether an event's turn was told by another form, noting the turns its
/// form tells.
pub struct Tellers<'c> {
    other: CachedStatement<'c>,
    tell: CachedStatement<'c>,
    cover: CachedStatement<'c>,
    last_of_form: CachedStatement<'c>,
    /// Whether the recording being stored is new: its turns follow those its form told of
    /// each of its sessions before (a session resumed in a second stream). A file read before
    /// and going on numbers its turns from its start, as it did.
    fresh: bool,
    /// The recording's sessions, and how many turns of each its form told before it.
    before: HashMap<i64, u32>,
    /// The last turn asked about, and the answer (a recording's events come turn by turn).
    last: Option<((i64, Form, u32), bool)>,
    /// The last turn noted as its form's, or as had by it.
    claimed: Option<(i64, Form, u32)>,
    covered: Option<(i64, Form, u32)>,
}

impl<'c> Tellers<'c> {
    pub fn new(conn: &'c Connection) -> rusqlite::Result<Self> {
        Ok(Tellers {
            other: conn.prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM tellers
                   WHERE sid = ?1 AND form <> ?2 AND told AND (turn = ?3 OR ?3 = 0))",
            )?,
            tell: conn.prepare_cached(
                "INSERT INTO tellers (sid, turn, form, told) VALUES (?1, ?3, ?2, 1)
                   ON CONFLICT DO UPDATE SET told = 1",
            )?,
            cover: conn.prepare_cached(
                "INSERT OR IGNORE INTO tellers (sid, turn, form, told) VALUES (?1, ?3, ?2, 0)",
            )?,
            last_of_form: conn.prepare_cached(
                "SELECT coalesce(max(turn), 0) FROM tellers WHERE sid = ?1 AND form = ?2",
            )?,
            fresh: false,
            before: HashMap::new(),
            last: None,
            claimed: None,
            covered: None,
        })
    }

    /// A recording begins; `fresh`: read for the first time. Forgets the last answers
    /// (another writer may have told turns meanwhile).
    pub fn begin(&mut self, fresh: bool) {
        self.fresh = fresh;
        self.before.clear();
        self.last = None;
        self.claimed = None;
        self.covered = None;
    }

    /// Whether the recording being stored is read for the first time.
    pub fn fresh(&self) -> bool {
        self.fresh
    }

    /// A batch was committed: another writer may tell turns before the next one begins, so
    /// the answers kept are asked again (within a batch, no other writer can).
    pub fn committed(&mut self) {
        self.last = None;
    }

    /// The turn of session `sid` that the recording's turn `nth` is: `nth` after the turns
    /// its form's recordings had before a fresh recording (told, or told by another form);
    /// `0` (what comes before its first turn) stays.
    pub fn turn(&mut self, sid: i64, form: Form, nth: u32) -> rusqlite::Result<u32> {
        if nth == 0 || !self.fresh {
            return Ok(nth);
        }
        let before = match self.before.get(&sid) {
            Some(&b) => b,
            None => {
                let b: u32 = self
                    .last_of_form
                    .query_row(rusqlite::params![sid, form as i64], |r| r.get(0))?;
                self.before.insert(sid, b);
                b
            }
        };
        Ok(nth.saturating_add(before))
    }

    /// Whether the turn `turn` of session `sid` was told by another form than `form` (for
    /// `0`, any turn of it).
    pub fn told_elsewhere(&mut self, sid: i64, form: Form, turn: u32) -> rusqlite::Result<bool> {
        let key = (sid, form, turn);
        if let Some((k, answer)) = self.last {
            if k == key {
                return Ok(answer);
            }
        }
        let told: bool = self
            .other
            .query_row(rusqlite::params![sid, form as i64, turn], |r| r.get(0))?;
        self.last = Some((key, told));
        Ok(told)
    }

    /// Notes that a recording of `form` had the turn `turn` of session `sid`, which another
    /// form told (an event of it not stored before was not stored): the form's next recording
    /// of the session numbers its turns after it.
    /// Whether [`Tellers::cover`] would note something of that turn now (it notes a turn
    /// once): asked first, to spare the caller's look-up.
    pub fn may_cover(&self, sid: i64, form: Form, turn: u32) -> bool {
        turn > 0 && self.covered != Some((sid, form, turn))
    }

    pub fn cover(&mut self, sid: i64, form: Form, turn: u32) -> rusqlite::Result<()> {
        let key = (sid, form, turn);
        if turn > 0 && self.covered != Some(key) {
            self.cover
                .execute(rusqlite::params![sid, form as i64, turn])?;
            self.covered = Some(key);
        }
        Ok(())
    }

    /// Notes the turn `turn` of session `sid` as told by `form`: an event of it was added.
    /// (An event stored before, as of a copy of a recording, tells nothing new.)
    pub fn claim(&mut self, sid: i64, form: Form, turn: u32) -> rusqlite::Result<()> {
        let key = (sid, form, turn);
        if self.claimed != Some(key) {
            self.tell
                .execute(rusqlite::params![sid, form as i64, turn])?;
            self.claimed = Some(key);
        }
        Ok(())
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
