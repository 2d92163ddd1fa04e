#!/usr/bin/env python3
"""ClickHouse check of `insights export --to clickhouse` with a real engine: chDB, ClickHouse
in-process (`pip install chdb`).

    python3 tests/clickhouse_check.py INSIGHTS [PATH...]

Loads schemas/clickhouse.sql into a fresh database, exports PATH... (default:
testdata/session-files) and loads the rows twice, then checks that
  * every row loaded is one event after merges (`FINAL`, and after `OPTIMIZE ... FINAL`),
    none lost: as many events as distinct (session_id, id) keys exported;
  * the questions docs/fleet.md shows run;
  * the `usage` view equals `insights usage --by day,session,model,agent --tz UTC --json`
    on the same input, row for row (tokens exactly, cost to 1e-6 dollars).
Prints what it checked and exits 0, or says what differs and exits 1. Exit status 77 (the
automake convention for "skipped") when chDB cannot be imported: tests/clickhouse.rs installs
it with pip and skips, with a message, only when that fails.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def statements(sql):
    """The statements of a SQL file: comments dropped, split at `;`."""
    text = "\n".join(re.sub(r"--.*$", "", line) for line in sql.splitlines())
    return [s.strip() for s in text.split(";") if s.strip()]


def snake(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


COLUMNS = (
    "toString(day) AS day, session, model, agent, input_tokens, output_tokens, "
    "cache_read_tokens, cache_creation_tokens, reasoning_tokens, total_tokens, cost_usd"
)


class Engine:
    """A chDB session holding the schema in the database `insights`."""

    def __init__(self, chs, path):
        self.db = chs.Session(path)
        self.db.query("CREATE DATABASE insights")
        self.db.query("USE insights")
        with open(os.path.join(ROOT, "schemas", "clickhouse.sql")) as f:
            ddl = statements(f.read())
        # Twice: the file can be run again.
        for stmt in ddl + ddl:
            self.db.query(stmt)

    def value(self, q):
        return json.loads(self.db.query(q, "JSONCompact").bytes())["data"][0][0]

    def rows(self, q):
        data = json.loads(self.db.query(q, "JSON").bytes())["data"]
        for r in data:
            for k, v in r.items():
                if k.endswith("_tokens"):
                    r[k] = int(v)
        return data

    def load(self, rows):
        self.db.query("TRUNCATE TABLE events")
        if rows:
            self.db.query((b"INSERT INTO events FORMAT JSONEachRow\n" + rows).decode())


def export(insights, paths):
    return subprocess.run(
        [insights, "export", "--to", "clickhouse", *paths], check=True, capture_output=True
    ).stdout


def usage(insights, paths):
    out = subprocess.run(
        [insights, "usage", "--by", "day,session,model,agent", "--tz", "UTC", "--json",
         "--allow-empty", *paths],
        check=True, capture_output=True,
    ).stdout
    d = json.loads(out)
    rows = [{snake(k): v for k, v in r.items()} for r in d["rows"]]
    return rows, {snake(k): v for k, v in d["totals"].items()}


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(a - b) < 1e-6
    return a == b


def compare(what, want, got, failures):
    """Usage rows of `insights usage` (want) against the view's (got), by their keys."""
    key = lambda r: (r["day"], r["session"], r["model"], r["agent"])
    w = {key(r): r for r in want}
    g = {key(r): r for r in got}
    for k in sorted(set(w) | set(g)):
        if k not in w or k not in g:
            failures.append(f"{what}: usage row {k}: insights usage {w.get(k)}, the view {g.get(k)}")
            continue
        for col, v in w[k].items():
            if not same(v, g[k][col]):
                failures.append(
                    f"{what}: usage row {k}: {col} {v} by insights usage, {g[k][col]} by the view"
                )


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    insights = sys.argv[1]
    paths = sys.argv[2:] or [os.path.join(ROOT, "testdata", "session-files")]
    try:
        from chdb import session as chs
    except ImportError as e:
        print(f"chDB is not installed ({e}): pip install chdb", file=sys.stderr)
        return 77

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        ch = Engine(chs, os.path.join(tmp, "ch"))

        # Everything, loaded twice (two inserts: two parts, merged later).
        rows = export(insights, paths)
        keys = {(r["session_id"], r["id"]) for r in map(json.loads, rows.splitlines())}
        exported = len(rows.splitlines())
        ch.load(rows)
        ch.db.query((b"INSERT INTO events FORMAT JSONEachRow\n" + rows).decode())
        raw = int(ch.value("SELECT count() FROM events"))
        final = int(ch.value("SELECT count() FROM events FINAL"))
        distinct = int(ch.value("SELECT uniqExact(session_id, id) FROM events"))
        if raw != 2 * exported:
            failures.append(f"{raw} rows stored of the {2 * exported} loaded")
        if final != len(keys) or distinct != len(keys):
            failures.append(f"FINAL reads {final} events, {distinct} distinct, of {len(keys)} exported")
        # The usage view reads FINAL: its numbers are those of one copy before any merge.
        want_rows, want_totals = usage(insights, paths)
        got = ch.rows(
            "SELECT sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, "
            "sum(cache_read_tokens) AS cache_read_tokens, "
            "sum(cache_creation_tokens) AS cache_creation_tokens, "
            "sum(reasoning_tokens) AS reasoning_tokens, sum(total_tokens) AS total_tokens, "
            # As the view's rows and `insights usage` total it: unknown when a part has no
            # price (ClickHouse's sum would leave the NULLs out).
            "if(countIf(cost_usd IS NULL) > 0, NULL, sum(assumeNotNull(cost_usd))) AS cost_usd "
            "FROM usage"
        )[0]
        for col, v in want_totals.items():
            if not same(v, got[col]):
                failures.append(f"all of it: total {col} {v} by insights usage, {got[col]} by the view")
        # The questions docs/fleet.md shows run on these rows.
        with open(os.path.join(ROOT, "docs", "fleet.md")) as f:
            doc = f.read()
        asked = [q for block in doc.split("```sql")[1:] for q in statements(block.split("```")[0])]
        for q in asked:
            try:
                ch.db.query(q)
            except Exception as e:  # noqa: BLE001 (chDB raises its own types)
                failures.append(f"docs/fleet.md: {q.splitlines()[0]}...: {e}")
        ch.db.query("OPTIMIZE TABLE events FINAL")
        merged = int(ch.value("SELECT count() FROM events"))
        if merged != len(keys):
            failures.append(f"after OPTIMIZE FINAL {merged} rows, of {len(keys)} events")

        # Row for row, each recording on its own: the scripted model of the recordings
        # gives the same message ids in different recordings, which `usage` (and the view)
        # count once, crediting one of the sessions (usage: the first file read).
        dirs = []
        for p in paths:
            if os.path.isdir(p):
                for provider in sorted(os.listdir(p)):
                    d = os.path.join(p, provider)
                    if os.path.isdir(d):
                        dirs += [os.path.join(d, s) for s in sorted(os.listdir(d))
                                 if os.path.isdir(os.path.join(d, s))]
        checked = 0
        for d in dirs:
            want, _ = usage(insights, [d])
            ch.load(export(insights, [d]))
            compare(os.path.relpath(d, ROOT), want, ch.rows(f"SELECT {COLUMNS} FROM usage"), failures)
            checked += len(want)
        ch.db.close()

    if failures:
        for f in failures:
            print("clickhouse_check: " + f, file=sys.stderr)
        return 1
    print(
        f"clickhouse_check: {exported} rows loaded twice are {len(keys)} events after FINAL; "
        f"the {len(asked)} questions of docs/fleet.md run; "
        f"the usage view's totals equal insights usage's ({len(want_rows)} rows), and its rows, "
        f"recording by recording ({len(dirs)} recordings, {checked} rows)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
