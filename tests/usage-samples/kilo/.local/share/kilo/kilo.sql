-- Built into kilo.db by tests/ccusage_compare.py and the Rust test (src/usage/kilo.rs).
CREATE TABLE message (id TEXT, session_id TEXT, data TEXT);
INSERT INTO message VALUES ('row-1', 'session-a', '{"id":"msg-1","role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-20250514","time":{"created":1767312000000},"tokens":{"input":100,"output":50,"reasoning":5,"cache":{"read":10,"write":20}},"cost":0.02,"agent":"build"}');
INSERT INTO message VALUES ('row-2', 'session-a', '{"role":"assistant","providerID":"openai","modelID":"gpt-5","tokens":{"input":1,"output":1,"cache":{"read":0,"write":0}}}');
INSERT INTO message VALUES ('row-3', 'session-b', '{"id":"msg-2","role":"assistant","providerID":"openai","modelID":"gpt-5","time":{"created":1767312000000},"tokens":{"total":234}}');
INSERT INTO message VALUES ('row-4', 'session-b', '{"id":"embedded-msg-1","role":"assistant","providerID":"openai","modelID":"gpt-5","time":{"created":1767312000000},"tokens":{"input":10,"output":1,"cache":{"read":0,"write":0}}}');
