-- The database `insights store` writes (schema version 5). docs/store.md describes it; the
-- program runs this text (src/store/schema.rs includes it) when it creates a database, so
-- this file is the one copy. A plain SQLite 3 file: `sqlite3 insights.db 'select * from usage'`
-- needs no insights.

-- The schema's version: one row. A database of a newer version is refused, an older one is
-- migrated (src/store/schema.rs). Beside it, `PRAGMA user_version` holds the version of the
-- readers that read the usage facts below (docs/store.md: an older one's files are read again).
CREATE TABLE schema_version (
  version INTEGER NOT NULL
);

-- What was read of each file, to read only what was appended next time: its size and
-- modification time when read, the byte offset of the end of the last whole line read, the
-- number of lines up to there (ids of lines without a provider id hold their line number),
-- the last seq given, and a hash of its first bytes (a file rewritten reads again from its
-- start).
CREATE TABLE sources (
  path TEXT PRIMARY KEY,      -- absolute path
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  lines INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  head_len INTEGER NOT NULL,  -- how many first bytes head_hash covers (at most 4096)
  head_hash TEXT NOT NULL,
  closing TEXT NOT NULL,      -- JSON [[session_id, id], ...]: the events the end of the read
                              -- inferred (the end of a turn left open), taken back when the
                              -- file goes on
  stored_at TEXT NOT NULL     -- when it was last read (UTC)
);

-- Changed in version 3 (a store of version 1 or 2 is brought to it: the tables of usage are
-- made again, and its files are read again so that they are filled; the events stored are
-- not stored twice).

-- What `insights usage` and `insights sessions` read of each file, so that `--db` gives
-- exactly what they give on the files: one row per file stored, its entries (one per line
-- that says something of usage: a model response's tokens, a prompt that starts a turn, the
-- session's id or directory, as the usage reader, src/usage/scan.rs, reads it) packed in one
-- BLOB, so that `usage --db` reads the store in one pass. docs/store.md gives the BLOB's
-- layout. Written again whole when the file is read.
CREATE TABLE usage_files (
  path TEXT PRIMARY KEY,      -- the file (absolute), as in sources
  first_ms INTEGER,           -- the time of its first line (the order `usage` reads a
                              -- subagents folder in), Unix milliseconds
  facts BLOB NOT NULL         -- its entries, packed (docs/store.md)
);

-- Changed in version 4 (a store of an older version is brought to it: its events are
-- copied into these tables, in the order they were stored, and the views made again).

-- The sessions, numbered in the order they were first stored. The events' indexes begin
-- with this number rather than the session's id: a first store's sessions are new, so their
-- entries go at the end of each index instead of all over it (version 3 wrote each index
-- page again and again: 3.8 GB for a 0.7 GB store of a generated home, 1.3 GB now), and
-- the entries are 35 bytes shorter.
CREATE TABLE session_ids (
  sid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL UNIQUE  -- sessionId ('' for events that name no session)
);

-- Every event, once: its key is (sid, id), its session and its id, so a file stored again,
-- a copy of it, or a run killed and run again adds nothing twice. The rowid is the order
-- events were stored in.
CREATE TABLE events (
  sid INTEGER NOT NULL,       -- session_ids.sid of its session_id
  session_id TEXT NOT NULL,   -- sessionId ('' for an event that names no session)
  id TEXT NOT NULL,           -- the event's id (docs/events.md: <anchor>:<index>)
  turn_id TEXT,               -- turnId, where the provider writes one
  seq INTEGER,                -- seq as written by the conversion that stored it
  time TEXT,                  -- timestamp (RFC 3339), where the event has one
  provider TEXT,              -- provider
  event TEXT NOT NULL,        -- the event type (session_init, text, tool_invocation, ...)
  call_id TEXT,               -- callId of tool and permission events
  json TEXT NOT NULL,         -- the whole event, one InsightsEvent JSON object
  UNIQUE (sid, id)
);
-- For the views: a session's tool calls, and its events by type.
CREATE INDEX events_by_call ON events (sid, call_id) WHERE call_id IS NOT NULL;
CREATE INDEX events_by_type ON events (sid, event);

-- One row per session: its agent, first and last time, events, turns started, model and
-- working directory (from its first session_init that names them).
CREATE VIEW sessions AS
SELECT
  e.session_id,
  min(e.provider) AS provider,
  min(e.time) AS started,
  max(e.time) AS ended,
  count(*) AS events,
  sum(e.event = 'turn_start') AS turns,
  sum(e.event = 'tool_invocation') AS tool_calls,
  (SELECT json_extract(i.json, '$.model') FROM events i
    WHERE i.sid = e.sid AND i.event = 'session_init'
      AND json_extract(i.json, '$.model') IS NOT NULL ORDER BY i.rowid LIMIT 1) AS model,
  (SELECT json_extract(i.json, '$.cwd') FROM events i
    WHERE i.sid = e.sid AND i.event = 'session_init'
      AND json_extract(i.json, '$.cwd') IS NOT NULL ORDER BY i.rowid LIMIT 1) AS cwd
FROM events e
WHERE e.session_id <> ''
GROUP BY e.sid;

-- One row per turn: a turn is what a turn_start opens, up to the next one (in the order
-- stored); its end is the last turn_complete before the next start.
CREATE VIEW turns AS
WITH marks AS (
  SELECT sid, session_id, rowid AS r, event, time, turn_id, json,
         sum(event = 'turn_start') OVER (PARTITION BY sid ORDER BY rowid) AS n
  FROM events
  WHERE event IN ('turn_start', 'turn_complete') AND session_id <> ''
)
SELECT
  session_id,
  n AS turn,                  -- 1, 2, ... within the session (0: an end before any start)
  max(turn_id) AS turn_id,
  min(CASE WHEN event = 'turn_start' THEN time END) AS started,
  max(CASE WHEN event = 'turn_complete' THEN time END) AS ended,
  max(CASE WHEN event = 'turn_complete' THEN json_extract(json, '$.subtype') END) AS subtype,
  max(CASE WHEN event = 'turn_complete' THEN json_extract(json, '$.isError') END) AS is_error,
  max(CASE WHEN event = 'turn_complete' THEN json_extract(json, '$.durationMs') END) AS duration_ms,
  max(CASE WHEN event = 'turn_complete' THEN json_extract(json, '$.costUsd') END) AS cost_usd
FROM marks
GROUP BY sid, n;

-- One row per tool call: its invocation and its last completion, if any.
CREATE VIEW tool_calls AS
SELECT
  i.session_id,
  i.call_id,
  i.turn_id,
  i.provider,
  json_extract(i.json, '$.toolName') AS tool_name,
  json_extract(i.json, '$.kind') AS kind,
  json_extract(i.json, '$.title') AS title,
  json_extract(i.json, '$.parentCallId') AS parent_call_id,
  i.time AS started,
  c.time AS ended,
  json_extract(c.json, '$.status') AS status,
  json_extract(c.json, '$.isError') AS is_error,
  json_extract(c.json, '$.durationMs') AS duration_ms
FROM events i
LEFT JOIN (
  SELECT sid, call_id, max(rowid) AS r FROM events
  WHERE event = 'tool_completion' AND call_id IS NOT NULL
  GROUP BY sid, call_id
) last ON last.sid = i.sid AND last.call_id = i.call_id
LEFT JOIN events c ON c.rowid = last.r
WHERE i.event = 'tool_invocation';

-- Tokens by day (UTC), session, model and agent: the columns of `insights usage --json`
-- rows, from the usage_update events' stepUsage. A response written again (Claude writes one
-- message's usage once per content block) counts once, with its largest counts. costUsd is
-- the agent's own figure where its events carry one (OpenCode's stepUsage.cost), else null:
-- the price table is the program's.
CREATE VIEW usage AS
WITH steps AS (
  SELECT
    session_id,
    provider,
    time,
    json_extract(json, '$.model') AS model,
    coalesce(json_extract(json, '$.messageId'), id) AS response,
    coalesce(json_extract(json, '$.stepUsage.input_tokens'), 0) AS input,
    coalesce(json_extract(json, '$.stepUsage.output_tokens'), 0) AS output,
    coalesce(json_extract(json, '$.stepUsage.cache_read_input_tokens'), 0) AS cache_read,
    coalesce(json_extract(json, '$.stepUsage.cache_creation_input_tokens'), 0) AS cache_creation,
    coalesce(json_extract(json, '$.stepUsage.reasoning_output_tokens'),
             json_extract(json, '$.stepUsage.reasoning_tokens'), 0) AS reasoning,
    json_extract(json, '$.stepUsage.cost') AS cost
  FROM events
  WHERE event = 'usage_update' AND json_extract(json, '$.stepUsage') IS NOT NULL
),
responses AS (
  SELECT session_id, provider, min(time) AS time, max(model) AS model,
         max(input) AS input, max(output) AS output, max(cache_read) AS cache_read,
         max(cache_creation) AS cache_creation, max(reasoning) AS reasoning, max(cost) AS cost
  FROM steps
  GROUP BY session_id, response
)
SELECT
  date(time) AS day,
  session_id AS session,
  model,
  provider AS agent,
  sum(input) AS inputTokens,
  sum(output) AS outputTokens,
  sum(cache_read) AS cacheReadTokens,
  sum(cache_creation) AS cacheCreationTokens,
  sum(reasoning) AS reasoningTokens,
  sum(input + output + cache_read + cache_creation) AS totalTokens,
  sum(cost) AS costUsd
FROM responses
GROUP BY day, session_id, model, provider
HAVING totalTokens > 0 OR reasoningTokens > 0;

-- Changed in version 5 (a store of an older version is brought to it; its next `insights
-- store` merges the usage facts):
-- The usage facts of every file merged as `usage` merges the files it reads (each response
-- once), kept so that `usage --db` reads one row, not a row per file. `insights store` makes
-- it again after a run that changed usage_files; any change of usage_files deletes it (the
-- triggers below, in the same transaction), so the row, when there is one, is current.
CREATE TABLE usage_merged (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  scan BLOB NOT NULL          -- the merged entries, packed (docs/store.md)
);
CREATE TRIGGER usage_files_added AFTER INSERT ON usage_files
  BEGIN DELETE FROM usage_merged; END;
CREATE TRIGGER usage_files_changed AFTER UPDATE ON usage_files
  BEGIN DELETE FROM usage_merged; END;
CREATE TRIGGER usage_files_removed AFTER DELETE ON usage_files
  BEGIN DELETE FROM usage_merged; END;

-- Changed in version 6 (a store of an older version is brought to it; its files are read
-- again to fill it, their events stored before are not stored twice):
-- Which form of recording told each turn of a session: 0 its stream (agent output, live or
-- captured, or InsightsEvents read as they are), 1 the agent's own session file. A turn is
-- the turn-th `turn_start` of the recording (0: what comes before its first). A conversation
-- stored from two forms (its stream and its session file) is stored once: each turn from the
-- first form that stored it (docs/store.md, "A stream and its session file").
CREATE TABLE tellers (
  sid INTEGER NOT NULL,       -- session_ids.sid
  turn INTEGER NOT NULL,
  form INTEGER NOT NULL,
  told INTEGER NOT NULL,      -- 1: an event of it was added from this form; 0: a recording of
                              -- this form had it, another form told it (the form's next
                              -- recording of the session numbers its turns after it)
  PRIMARY KEY (sid, turn, form)
) WITHOUT ROWID;
