-- Built into sessions.db by tests/ccusage_compare.py and the Rust test (src/usage/goose.rs).
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    model_config_json TEXT,
    provider_name TEXT,
    created_at TEXT,
    total_tokens INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    accumulated_total_tokens INTEGER,
    accumulated_input_tokens INTEGER,
    accumulated_output_tokens INTEGER
);
INSERT INTO sessions (id, model_config_json, provider_name, created_at, accumulated_total_tokens, accumulated_input_tokens, accumulated_output_tokens)
VALUES ('session-a', '{"model_name":"claude-sonnet-4-20250514"}', 'anthropic', '2026-05-01 01:02:03', 180, 100, 50);
