#!/usr/bin/env python3
"""`insights statusline` against `ccusage statusline`, warm, on a large home, in one run.

    python3 benches/statusline.py INSIGHTS_BINARY              # the 2,360-file home of usage.py
    python3 benches/statusline.py INSIGHTS_BINARY --copies 5   # smaller, for a quick look

The home is benches/usage.py's (kept in --dir; its sessions are of 2026-11-26 and the days
before), its files last written 30 days ago, plus one
Claude session moved to the last 40 minutes (written now): the history of a person who used
Claude Code today, as a status bar sees it. Each tool is run --runs times on the same status
JSON, alternating, after one run to warm the page cache; the script prints each one's median
and 99th percentile and the ratio. ccusage runs with --no-cache (each line computed, as
insights always does) and with its default cache.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
import ccusage_compare  # noqa: E402
import usage as usage_bench  # noqa: E402

MONTH_AGO = time.time() - 30 * 86400


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("insights")
    ap.add_argument("--dir", default="/tmp/insights-usage-bench")
    ap.add_argument("--copies", type=int, default=40)
    ap.add_argument("--repeat-lines", type=int, default=11)
    ap.add_argument("--runs", type=int, default=50)
    a = ap.parse_args()
    home = os.path.join(a.dir, f"home-v2-{a.copies}x{a.repeat_lines}")
    usage_bench.build(home, a.copies, a.repeat_lines)
    for d, _, names in os.walk(home):
        for n in names:
            os.utime(os.path.join(d, n), (MONTH_AGO, MONTH_AGO))
    today = os.path.join(a.dir, "today")
    ccusage_compare.active_home(home, today)
    src = os.path.join(today, ".claude", "projects", "-home-dev-work")
    name = os.listdir(src)[0]
    dest = os.path.join(home, ".claude", "projects", "-home-dev-work", name)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(os.path.join(src, name), "rb") as f, open(dest, "wb") as g:
        g.write(f.read())
    files = sum(len([n for n in ns if n.endswith(".jsonl")]) for _, _, ns in os.walk(home))
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(home) for n in ns)
    print(f"home: {home}: {files} files, {size / 1e6:.0f} MB, one written today")
    status = json.dumps({
        "hook_event_name": "Status", "session_id": name[:-6], "transcript_path": dest,
        "cwd": "/home/dev/work", "model": {"id": "claude-opus-4-8", "display_name": "Opus 4.8"},
        "workspace": {"current_dir": "/home/dev/work", "project_dir": "/home/dev/work"},
        "cost": {"total_cost_usd": 0.17},
        "context_window": {"total_input_tokens": 20000, "total_output_tokens": 400,
                           "context_window_size": 1000000},
    })
    env = dict(os.environ, HOME=home, TZ="UTC", NO_COLOR="1")
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_DATA_DIR", "XDG_CONFIG_HOME"):
        env.pop(var, None)
    cmds = {"insights": [os.path.abspath(a.insights), "statusline"]}
    exe = ccusage_compare.ccusage()
    if exe:
        cmds["ccusage --no-cache"] = [exe, "statusline", "--offline", "--no-cache"]
        cmds["ccusage (cache)"] = [exe, "statusline", "--offline"]
    else:
        print("ccusage: not installed and cannot be (no npm or no network): insights alone")
    times = {k: [] for k in cmds}
    for k, cmd in cmds.items():  # warm
        out = subprocess.run(cmd, input=status, env=env, capture_output=True, text=True)
        print(f"{k}: {out.stdout.strip()}")
    for _ in range(a.runs):
        for k, cmd in cmds.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, input=status, env=env, capture_output=True, text=True)
            times[k].append(time.perf_counter() - t0)
    for k, ts in times.items():
        print(f"{k:20} median {percentile(ts, 50) * 1000:7.1f} ms  p99 {percentile(ts, 99) * 1000:7.1f} ms")
    if exe:
        for k in ("ccusage --no-cache", "ccusage (cache)"):
            r = percentile(times[k], 50) / percentile(times["insights"], 50)
            print(f"ratio ({k} median / insights median): {r:.1f}")


if __name__ == "__main__":
    main()
