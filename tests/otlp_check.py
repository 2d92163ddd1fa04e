#!/usr/bin/env python3
"""`insights export --to otlp` read back with the official OpenTelemetry protobuf types.

Usage: otlp_check.py INSIGHTS_BINARY REPO_ROOT

For every capture in testdata/ (provider captures and session files; not the hostile inputs
of invalid/ and malformed/), exports it twice as OTLP/JSON and reduces it with
`insights reduce`, then checks:

* every line decodes as an ExportTraceServiceRequest with the official types
  (opentelemetry-proto's Python package; OTLP/JSON's hex ids turned into the proto3 JSON
  mapping's base64 first, the one place where OTLP/JSON departs from it), strictly: an unknown
  member or a wrong type fails;
* the two exports are the same bytes (stable ids);
* the span tree: 16-byte trace ids, 8-byte span ids, unique; one root per trace, an
  `invoke_agent` span; every parent in the same trace;
* against the reducer's state: one root per ended turn (and none for a running one), with the
  turn's tokens, `error.type` and an error status exactly when the turn failed; one
  `execute_tool` span per call of the turn's tree, under the turn's span or under the
  `invoke_agent` span of the subagent it belongs to, `error.type` exactly when it failed; one
  `invoke_agent` span under each call that started a subagent; no content attributes without
  `--content`;
* with `--content`, tool arguments are there.

Then OTLP/HTTP: a local receiver decodes each request with the same types; it answers the
first request 503 (Retry-After: 0), and must receive every span the JSON export has, with the
headers and resource of the OTEL_* environment. An endpoint that refuses everything (400), and
one that is always unavailable (503), make the export fail with a non-zero exit.

Prints "skipped: ..." and exits 0 when opentelemetry-proto cannot be imported.
"""

import base64
import glob
import http.server
import json
import os
import subprocess
import sys
import threading

try:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
except ImportError as e:
    print(f"skipped: opentelemetry-proto is not installed ({e}); pip install opentelemetry-proto")
    sys.exit(0)

BIN, ROOT = sys.argv[1], sys.argv[2]
CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.tool.description",
}
failures = []
ops = {}


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    e["TZ"] = "UTC"
    e.update(extra)
    return e


def fail(label, msg):
    failures.append(f"{label}: {msg}")


def captures():
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "testdata", "**", "*.jsonl"), recursive=True)):
        rel = os.path.relpath(path, ROOT)
        parts = rel.split(os.sep)
        if path.endswith(".events.jsonl") or parts[1] in ("invalid", "malformed", "validate", "reduce", "replay"):
            continue
        # A Claude Code subagent's file is read with its session's (a folder of its own).
        if "subagents" in parts:
            continue
        meta = path[: -len(".jsonl")] + ".meta.json"
        args = []
        if os.path.exists(meta):
            with open(meta) as f:
                m = json.load(f)
            if isinstance(m, dict) and m.get("from"):
                args = ["--from", m["from"]]
        out.append((rel, args))
    return out


def run(args, **extra):
    return subprocess.run([BIN] + args, capture_output=True, env=env(**extra))


def decode_json_line(line):
    d = json.loads(line)
    for rs in d.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                for k in ("traceId", "spanId", "parentSpanId"):
                    if k in s:
                        s[k] = base64.b64encode(bytes.fromhex(s[k])).decode()
    req = ExportTraceServiceRequest()
    json_format.ParseDict(d, req)  # strict: unknown members fail
    return req


def spans_of(reqs):
    out = []
    for req in reqs:
        for rs in req.resource_spans:
            for ss in rs.scope_spans:
                out.extend(ss.spans)
    return out


def attrs(span):
    out = {}
    for kv in span.attributes:
        v = kv.value
        out[kv.key] = getattr(v, v.WhichOneof("value"))
    return out


def walk(nodes, parent_call=None):
    """(node, the call id of the subagent it belongs to) for every node, depth first."""
    for n in nodes:
        yield n, parent_call
        if n.get("children"):
            yield from walk(n["children"], n.get("callId"))


def check_capture(rel, args):
    path = os.path.join(ROOT, rel)
    a = run(["export", "--to", "otlp"] + args + [path])
    b = run(["export", "--to", "otlp"] + args + [path])
    if a.returncode != 0 and not a.stdout:
        fail(rel, f"export failed ({a.returncode}): {a.stderr.decode()[:300]}")
        return 0
    if a.stdout != b.stdout:
        fail(rel, "two exports of the same log differ")
    r = run(["reduce"] + args + [path])
    state = json.loads(r.stdout)
    reqs = []
    for line in a.stdout.decode().splitlines():
        try:
            reqs.append(decode_json_line(line))
        except Exception as e:  # noqa: BLE001 - any decoding error is a failure
            fail(rel, f"not an ExportTraceServiceRequest: {e}")
            return 0
    spans = spans_of(reqs)
    for s in spans:
        op = attrs(s).get("gen_ai.operation.name")
        ops[op] = ops.get(op, 0) + 1
    by_id = {}
    for s in spans:
        if len(s.trace_id) != 16 or len(s.span_id) != 8 or not any(s.trace_id) or not any(s.span_id):
            fail(rel, f"bad ids on {s.name}")
        if s.span_id in by_id:
            fail(rel, f"span id used twice ({s.name})")
        by_id[s.span_id] = s
        if s.end_time_unix_nano < s.start_time_unix_nano:
            fail(rel, f"{s.name} ends before it starts")
        if CONTENT_KEYS & set(attrs(s)):
            fail(rel, f"{s.name} has content without --content")
    roots = {}
    for s in spans:
        if s.parent_span_id:
            p = by_id.get(s.parent_span_id)
            if p is None or p.trace_id != s.trace_id:
                fail(rel, f"{s.name}: parent not in its trace")
        else:
            if s.trace_id in roots:
                fail(rel, "two roots in one trace")
            roots[s.trace_id] = s
            if attrs(s).get("gen_ai.operation.name") != "invoke_agent":
                fail(rel, f"root {s.name} is not invoke_agent")
    by_turn = {}
    for s in roots.values():
        at = attrs(s)
        by_turn[(at["gen_ai.conversation.id"], at["insights.turn.index"])] = s
    entries = state["entries"]
    expected = 0
    for sess in state["tree"]["sessions"]:
        for turn in sess["turns"]:
            key = (sess["sessionId"], turn["index"])
            root = by_turn.pop(key, None)
            if turn["status"] == "running":
                if root is not None:
                    fail(rel, f"running turn {key} exported")
                continue
            expected += 1
            if root is None:
                fail(rel, f"ended turn {key} not exported")
                continue
            check_turn(rel, key, turn, root, spans, entries)
    for key in by_turn:
        fail(rel, f"span for a turn the state does not have: {key}")
    check_totals(rel, state, roots.values())
    return expected


def check_totals(rel, state, roots):
    """A session whose turns all ended: its roots add up to reduce's totals of the session."""
    sums = {}
    for s in roots:
        a = attrs(s)
        n = sums.setdefault(a["gen_ai.conversation.id"], {})
        for k in ("output_tokens", "cache_read.input_tokens", "cache_creation.input_tokens", "input_tokens"):
            n[k] = n.get(k, 0) + a[f"gen_ai.usage.{k}"]
        n["turns"] = n.get("turns", 0) + (a["insights.turn.status"] != "incomplete")
        n["failed"] = n.get("failed", 0) + (a["insights.turn.status"] == "failed")
    for tot, tree in zip(state["totals"]["sessions"], state["tree"]["sessions"]):
        if any(t["status"] == "running" for t in tree["turns"]):
            continue
        got = sums.get(tot["sessionId"], {})
        want = {
            "output_tokens": tot["outputTokens"],
            "cache_read.input_tokens": tot["cacheReadTokens"],
            "cache_creation.input_tokens": tot["cacheCreationTokens"],
            "input_tokens": tot["inputTokens"] + tot["cacheReadTokens"] + tot["cacheCreationTokens"],
            "turns": tot["turns"],
            "failed": tot["failedTurns"],
        }
        for k, v in want.items():
            if got.get(k, 0) != v:
                fail(rel, f"session {tot['sessionId']}: {k} of its turns' spans {got.get(k, 0)}, reduce's totals {v}")


def check_turn(rel, key, turn, root, spans, entries):
    at = attrs(root)
    t = turn["tokens"]
    want = {
        "gen_ai.usage.input_tokens": t["inputTokens"] + t["cacheReadTokens"] + t["cacheCreationTokens"],
        "gen_ai.usage.output_tokens": t["outputTokens"],
        "gen_ai.usage.cache_read.input_tokens": t["cacheReadTokens"],
        "gen_ai.usage.cache_creation.input_tokens": t["cacheCreationTokens"],
        "insights.turn.tools": turn["tools"],
        "insights.turn.status": turn["status"],
    }
    for k, v in want.items():
        if at.get(k) != v:
            fail(rel, f"turn {key}: {k} = {at.get(k)!r}, reduce says {v!r}")
    failed = turn["status"] == "failed"
    if failed != ("error.type" in at) or failed != (root.status.code == Status.STATUS_CODE_ERROR):
        fail(rel, f"turn {key}: error.type/status do not say it {'failed' if failed else 'succeeded'}")
    if root.kind != Span.SPAN_KIND_INTERNAL or root.name != f"invoke_agent {at['gen_ai.agent.name']}":
        fail(rel, f"turn {key}: name or kind {root.name!r} {root.kind}")
    mine = [s for s in spans if s.trace_id == root.trace_id]
    tools = {}
    agents = {}
    for s in mine:
        a = attrs(s)
        if a.get("gen_ai.operation.name") == "execute_tool":
            cid = a["gen_ai.tool.call.id"]
            if cid in tools:
                fail(rel, f"turn {key}: call {cid} twice")
            tools[cid] = s
        elif a.get("gen_ai.operation.name") == "invoke_agent" and s.parent_span_id:
            agents[s.parent_span_id] = s
    calls = 0
    for node, parent_call in walk(turn["children"]):
        if node["type"] != "tool_call":
            continue
        calls += 1
        cid = node["callId"]
        s = tools.get(cid)
        if s is None:
            fail(rel, f"turn {key}: no execute_tool span for call {cid}")
            continue
        a = attrs(s)
        e = entries[node["entry"]]
        if a.get("gen_ai.tool.name") != (e.get("toolName") or e.get("kind") or "tool"):
            fail(rel, f"call {cid}: gen_ai.tool.name {a.get('gen_ai.tool.name')!r}")
        if (e["status"] == "failed") != ("error.type" in a):
            fail(rel, f"call {cid}: error.type does not follow its status {e['status']}")
        if parent_call is None:
            want_parent = root.span_id
        else:
            call_span = tools.get(parent_call)
            sub = agents.get(call_span.span_id) if call_span else None
            want_parent = sub.span_id if sub else None
        if s.parent_span_id != want_parent:
            fail(rel, f"call {cid}: not under its agent's span")
        if (node.get("children") or e.get("subagent")) and s.span_id not in agents:
            fail(rel, f"call {cid}: started a subagent, no invoke_agent span under it")
    if calls != len(tools):
        fail(rel, f"turn {key}: {len(tools)} execute_tool spans, the tree has {calls} calls")


def check_content():
    rel = "testdata/claude/nested-subagent.jsonl"
    out = run(["export", "--to", "otlp", "--content", os.path.join(ROOT, rel)])
    spans = spans_of([decode_json_line(l) for l in out.stdout.decode().splitlines()])
    keys = set()
    for s in spans:
        keys |= set(attrs(s))
    for k in ("gen_ai.tool.call.arguments", "gen_ai.output.messages"):
        if k not in keys:
            fail(rel, f"--content: no {k}")


class Receiver(http.server.ThreadingHTTPServer):
    """An OTLP/HTTP receiver: decodes every request with the official types."""

    def __init__(self, mode):
        self.mode = mode  # "once503", "refuse", "unavailable"
        self.requests = []
        self.headers_seen = []
        self.answered = 0
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        srv = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with srv.lock:
            srv.answered += 1
            n = srv.answered
        if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
            self.send_response(404)
            self.end_headers()
            return
        if srv.mode == "refuse":
            self.send_response(400)
            self.end_headers()
            return
        if srv.mode == "unavailable" or (srv.mode == "once503" and n == 1):
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.end_headers()
            return
        req = ExportTraceServiceRequest.FromString(body)
        with srv.lock:
            srv.requests.append(req)
            srv.headers_seen.append(dict(self.headers))
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def serve(mode):
    srv = Receiver(mode)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def check_http(files):
    label = "OTLP/HTTP"
    want = run(["export", "--to", "otlp"] + files)
    want_spans = spans_of([decode_json_line(l) for l in want.stdout.decode().splitlines()])
    srv = serve("once503")
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    got = run(
        ["export", "--to", "otlp"] + files,
        OTEL_EXPORTER_OTLP_ENDPOINT=url,
        OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20abc",
        OTEL_SERVICE_NAME="fleet-ci",
        OTEL_RESOURCE_ATTRIBUTES="team=tools,host.name=m1",
    )
    srv.shutdown()
    if got.returncode != 0:
        fail(label, f"exit {got.returncode}: {got.stderr.decode()[:300]}")
    got_spans = spans_of(srv.requests)
    key = lambda s: s.SerializeToString(deterministic=True)  # noqa: E731
    if sorted(map(key, got_spans)) != sorted(map(key, want_spans)):
        fail(label, f"received {len(got_spans)} spans, the JSON export has {len(want_spans)}")
    if srv.answered != len(srv.requests) + 1:
        fail(label, f"{srv.answered} requests answered, {len(srv.requests)} accepted: not one 503 retried")
    if any(h.get("authorization") != "Bearer abc" for h in srv.headers_seen):
        fail(label, "OTEL_EXPORTER_OTLP_HEADERS not sent")
    for req in srv.requests:
        for rs in req.resource_spans:
            res = {kv.key: kv.value.string_value for kv in rs.resource.attributes}
            if res != {"service.name": "fleet-ci", "team": "tools", "host.name": "m1"}:
                fail(label, f"resource {res}")
                break
    for mode in ("refuse", "unavailable"):
        srv = serve(mode)
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        out = run(["export", "--to", "otlp", "--endpoint", url] + files[:1])
        srv.shutdown()
        if out.returncode == 0:
            fail(label, f"an endpoint that is {mode} gave exit status 0")
        if srv.requests:
            fail(label, f"{mode}: a request was taken")
    return len(got_spans), len(srv.requests)


def main():
    turns = 0
    caps = captures()
    for rel, args in caps:
        turns += check_capture(rel, args)
    check_content()
    plain = [os.path.join(ROOT, rel) for rel, args in caps if not args and rel.startswith("testdata/claude/")]
    n, _ = check_http(plain)
    for f in failures:
        print("FAIL", f)
    print(
        f"{len(caps)} captures, {turns} ended turns checked against reduce "
        f"(spans: {', '.join(f'{k} {v}' for k, v in sorted(ops.items()))}); {n} spans over OTLP/HTTP"
    )
    sys.exit(1 if failures else 0)


main()
