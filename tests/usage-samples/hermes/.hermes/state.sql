-- Built into state.db by tests/ccusage_compare.py and the Rust test (src/usage/hermes.rs).
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    model TEXT,
    started_at REAL NOT NULL,
    message_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    billing_provider TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL
);
INSERT INTO sessions (id, source, model, started_at, message_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, billing_provider, estimated_cost_usd, actual_cost_usd)
VALUES ('session-1', 'cli', 'claude-sonnet-4-20250514', 1750000000.25, 42, 1200, 300, 50, 20, 10, 'anthropic', 0.12, 0.34);
