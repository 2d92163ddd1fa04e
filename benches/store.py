#!/usr/bin/env python3
"""`insights store` against issue 44's goals, in one run.

    python3 benches/store.py INSIGHTS_BINARY                 # the ~400 MB home of benches/usage.py
    python3 benches/store.py INSIGHTS_BINARY --copies 4      # smaller, for a quick look

The home is benches/usage.py's (built once, kept in --dir): the session files the real CLIs
wrote (testdata/session-files/), copied with fresh ids. Each figure is printed with the goal
it is measured against:

1. first `insights store` of the home (its standard places) into a new database: events per
   second of elapsed time and of CPU time (goal: >= 100,000 events/s), peak RSS (<= 64 MiB);
2. `store` again, nothing changed: its time as a share of the first (<= 5%);
3. `insights usage --by day --json --db` against `insights usage --by day --json` on the files
   (>= 10x faster), best of --repeat each, and that both print the same;
4. a live pipe: InsightsEvent lines written one at a time to `insights store -`, each timed
   from its write until a reader sees it committed (max(rowid) grows): p50 and p99
   (<= 1 ms p99).
"""

import argparse
import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import usage as usage_bench  # noqa: E402


def run(cmd, env, stdout=subprocess.DEVNULL):
    """Elapsed seconds, CPU seconds (user + sys), peak RSS (KiB), stdout and stderr."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE)
    out = p.stdout.read() if stdout == subprocess.PIPE else b""
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({status}): {err.decode(errors='replace')}")
    return dt, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, out, err.decode(errors="replace")


def live(exe, workdir, n):
    """Per-event latency of `insights store -` fed one InsightsEvent line at a time."""
    db = os.path.join(workdir, "live.db")
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(db + ext):
            os.remove(db + ext)
    capture = os.path.join(ROOT, "testdata", "claude", "thinking-tool.jsonl")
    conv = subprocess.run([exe, "--no-timestamp", capture], capture_output=True, check=True)
    base = [json.loads(l) for l in conv.stdout.decode().splitlines()]
    lines = []
    for k in range(n):
        ev = dict(base[k % len(base)])
        ev["id"] = f"live-{k}:0"
        lines.append((json.dumps(ev, separators=(",", ":")) + "\n").encode())
    p = subprocess.Popen([exe, "store", "--db", db, "-"], stdin=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    # The first line makes the database; the reader opens it once it is there.
    p.stdin.write(lines[0])
    p.stdin.flush()
    conn = None
    while conn is None:
        try:
            c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            c.execute("select max(rowid) from events").fetchone()
            conn = c
        except sqlite3.Error:
            time.sleep(0.01)
    q = "select max(rowid) from events"
    while (conn.execute(q).fetchone()[0] or 0) < 1:
        pass
    lat = []
    for k in range(1, n):
        t0 = time.perf_counter()
        p.stdin.write(lines[k])
        p.stdin.flush()
        while (conn.execute(q).fetchone()[0] or 0) <= k:
            pass
        lat.append(time.perf_counter() - t0)
    p.stdin.close()
    p.wait()
    lat.sort()
    return lat[len(lat) // 2], lat[int(len(lat) * 0.99)], len(lat)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("insights")
    ap.add_argument("--dir", default="/tmp/insights-usage-bench")
    ap.add_argument("--copies", type=int, default=40)
    ap.add_argument("--repeat-lines", type=int, default=11)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each usage command (best kept)")
    ap.add_argument("--live", type=int, default=2000, help="events written to the live pipe")
    a = ap.parse_args()
    exe = os.path.abspath(a.insights)
    home = os.path.join(a.dir, f"home-{a.copies}x{a.repeat_lines}")
    usage_bench.build(home, a.copies, a.repeat_lines)
    files = sum(len([n for n in ns if n.endswith(".jsonl")]) for _, _, ns in os.walk(home))
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(home) for n in ns)
    print(f"home: {home}: {files} files, {size / 1e6:.0f} MB")
    work = os.path.join(a.dir, "store")
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "bench.db")
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(db + ext):
            os.remove(db + ext)
    env = dict(os.environ, HOME=home, TZ="UTC", NO_COLOR="1")
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_DATA_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env.pop(var, None)
    subprocess.run(["cat"] + [os.path.join(d, n) for d, _, ns in os.walk(home) for n in ns],
                   stdout=subprocess.DEVNULL)
    load = os.getloadavg()[0]

    dt, cpu, rss, _, err = run([exe, "store", "--db", db], env)
    m = re.search(r"stored (\d+) new events of (\d+) read", err)
    events = int(m.group(2)) if m else 0
    dbsize = sum(os.path.getsize(db + e) for e in ("", "-wal") if os.path.exists(db + e))
    print(f"1. first store: {events} events in {dt:.2f} s ({cpu:.2f} s CPU): "
          f"{events / dt:,.0f} events/s elapsed, {events / cpu:,.0f} events/s CPU "
          f"(goal >= 100,000); peak {rss / 1024:.1f} MiB (goal <= 64); database {dbsize / 1e6:.0f} MB")

    dt2, cpu2, rss2, _, _ = run([exe, "store", "--db", db], env)
    print(f"2. again, nothing changed: {dt2 * 1000:.0f} ms ({cpu2 * 1000:.0f} ms CPU): "
          f"{100 * dt2 / dt:.2f}% of the first (goal <= 5%)")

    files_cmd = [exe, "usage", "--by", "day", "--json"]
    db_cmd = files_cmd + [f"--db={db}"]
    best = {"files": float("inf"), "db": float("inf")}
    outs = {}
    for _ in range(a.repeat):
        for k, cmd in (("files", files_cmd), ("db", db_cmd)):
            t, _, _, out, _ = run(cmd, env, stdout=subprocess.PIPE)
            best[k] = min(best[k], t)
            outs[k] = out
    same = "the same output" if outs["files"] == outs["db"] else "DIFFERENT OUTPUT"
    print(f"3. usage --db {best['db'] * 1000:.0f} ms, usage on the files {best['files'] * 1000:.0f} ms: "
          f"{best['files'] / best['db']:.1f}x faster (goal >= 10x), {same}")

    p50, p99, n = live(exe, work, a.live)
    print(f"4. live pipe, {n} events one at a time, write to committed: p50 {p50 * 1e3:.3f} ms, "
          f"p99 {p99 * 1e3:.3f} ms (goal p99 <= 1 ms)")
    print(f"load average at the start: {load:.1f} (2 cores shared)")


if __name__ == "__main__":
    main()
