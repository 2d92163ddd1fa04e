-- The ClickHouse tables `insights export --to clickhouse` writes rows for (docs/fleet.md).
-- Created in the current database, so that
--   clickhouse-client -d insights < schemas/clickhouse.sql
-- sets them up in the database `insights` (create it first: CREATE DATABASE insights), and
--   insights export --to clickhouse ... | clickhouse-client -d insights -q 'INSERT INTO events FORMAT JSONEachRow'
-- loads them. Running this file again changes nothing.

-- Every event, once after merges: the table replaces rows by its sorting key, the event's
-- session and id (ids are unique within a session), so rows loaded twice (the same log
-- exported again, two machines exporting one shared file) are one copy once ClickHouse has
-- merged them; `SELECT ... FROM events FINAL` reads them merged now. Partitioned by the
-- month of the event's time (replacement happens within a partition: an event's time never
-- changes, so its copies are in one). Sorted by session, then id: a session's events are
-- read together.
CREATE TABLE IF NOT EXISTS events
(
    session_id String,                      -- sessionId ('' for an event that names none)
    id String,                              -- the event's id (docs/events.md)
    turn_id String,                         -- turnId, '' where the provider writes none
    seq UInt64,                             -- its place in the conversion that exported it
    time DateTime64(3, 'UTC'),              -- timestamp; 1970-01-01 for an event without one
    agent LowCardinality(String),           -- provider: claude, codex, gemini, ...
    event LowCardinality(String),           -- the type: session_init, tool_invocation, ...
    call_id String,                         -- callId of tool and permission events
    parent_call_id String,                  -- parentCallId: the call a subagent's event is in
    tool_name String,                       -- toolName of tool events
    is_error Nullable(Bool),                -- isError of tool_completion and turn_complete
    duration_ms Nullable(UInt64),           -- durationMs of tool_completion and turn_complete
    model LowCardinality(String),           -- model, where the event names one
    message_id String,                      -- messageId: the model response a usage is of
    -- A usage_update's stepUsage: the tokens of one model request, as `insights usage`
    -- counts them (input is uncached input; output includes reasoning).
    input_tokens UInt64,
    output_tokens UInt64,
    cache_read_tokens UInt64,
    cache_creation_tokens UInt64,
    reasoning_tokens UInt64,
    -- That request's cost in US dollars: the agent's own figure, else its tokens priced with
    -- insights' price table; NULL for another event, or a model without a price.
    cost_usd Nullable(Float64),
    json String                             -- the whole event, one InsightsEvent JSON object
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (session_id, id);

-- Tokens and cost by day (UTC), session, model and agent: the rows of
-- `insights usage --by day,session,model,agent --tz UTC --json`, their columns in
-- snake_case. A model response written more than once counts once, as `usage` counts it:
-- Claude writes one message's usage on each of its content blocks, and a resumed or forked
-- session (Claude, Codex) begins with copies of its parent's; a response is known by its
-- messageId, else (Codex) by its time, model and tokens. The copy with the most tokens
-- counts (between equal copies, the earliest, then the least session id). cost_usd is NULL
-- when a response of the group has no price.
CREATE VIEW IF NOT EXISTS usage AS
SELECT
    toDate(r.1, 'UTC') AS day,
    r.2 AS session,
    r.3 AS model,
    r.4 AS agent,
    sum(r.5) AS input_tokens,
    sum(r.6) AS output_tokens,
    sum(r.7) AS cache_read_tokens,
    sum(r.8) AS cache_creation_tokens,
    sum(r.9) AS reasoning_tokens,
    sum(r.5 + r.6 + r.7 + r.8) AS total_tokens,
    if(countIf(r.10 IS NULL) > 0, NULL, sum(assumeNotNull(r.10))) AS cost_usd
FROM
(
    SELECT
        argMin(
            (time, session_id, model, agent, input_tokens, output_tokens, cache_read_tokens,
             cache_creation_tokens, reasoning_tokens, cost_usd),
            (-toInt64(input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens),
             time, session_id)
        ) AS r
    FROM events FINAL
    WHERE event = 'usage_update'
    GROUP BY multiIf(
        message_id != '', message_id,
        -- no time to know it by (a stream's events): the event itself
        toUnixTimestamp64Milli(time) = 0, concat(session_id, '|', id),
        concat(toString(time), '|', model, '|', toString(input_tokens), '|',
               toString(cache_read_tokens), '|', toString(output_tokens), '|',
               toString(reasoning_tokens)))
)
GROUP BY day, session, model, agent
HAVING total_tokens > 0 OR reasoning_tokens > 0;
