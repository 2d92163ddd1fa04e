#!/usr/bin/env python3
"""`insights export --to otlp` throughput and peak memory, against issue 45's goal (100,000
events/s, 64 MiB).

Usage: python3 benches/otlp.py [BINARY] [--mb N] [--keep DIR]

Generates `benches/bench.py`'s inputs (Claude and Codex captures repeated with fresh ids, one
file of N MB each, default 50), and for each runs, once:

* `insights export --to otlp FILE` into a pipe that is read and counted (OTLP/JSON lines);
* the same input split into one file per session (a fleet machine's session folder), as one
  folder;
* `insights reduce -j1 FILE` to /dev/null, its bound (the export reduces, then writes spans);

and prints events (as `insights` converts them), seconds, events/s, the ratio to `reduce`'s
time, and peak RSS. One run each on a shared machine: read user + sys CPU as the figure.
"""

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def bench_module():
    spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(cmd):
    """(elapsed s, user+sys CPU s, peak RSS MiB, stdout lines) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = 0
    for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
        lines += chunk.count(b"\n")
    p.wait()
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit(f"{cmd}: exit {p.returncode}")
    # ru_maxrss of the children is the largest of any child so far: the runs go from the
    # smallest expected peak up, and each is also measured alone below when in doubt.
    return elapsed, cpu, after.ru_maxrss / 1024, lines


def split_by_session(path, outdir):
    """One file per session id of `path` (lines without one follow the last named)."""
    os.makedirs(outdir, exist_ok=True)
    files = {}
    current = "none"
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                v = json.loads(line)
            except ValueError:
                v = {}
            sid = None
            if isinstance(v, dict):
                sid = v.get("session_id") or v.get("sessionId") or (v.get("params") or {}).get("threadId")
            if sid:
                current = sid
            if current not in files:
                files[current] = open(os.path.join(outdir, f"{len(files):06d}.jsonl"), "w", encoding="utf-8")
            files[current].write(line)
    for f in files.values():
        f.close()
    return len(files)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", nargs="?", default="target/release/insights")
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--keep", default="/tmp/insights-otlp-bench")
    args = ap.parse_args()
    b = bench_module()
    os.makedirs(args.keep, exist_ok=True)
    print(f"{'input':<22} {'events':>9} {'elapsed':>8} {'CPU':>7} {'events/s (CPU)':>15} {'/ reduce':>9} {'peak RSS':>9}")
    for name, seed in (("claude", 6), ("codex", 5)):
        path = os.path.join(args.keep, f"{name}-{args.mb}.jsonl")
        if not os.path.exists(path):
            b.generate(path, b.INPUTS[name], args.mb, seed=seed)
        folder = os.path.join(args.keep, f"{name}-{args.mb}-sessions")
        if not os.path.isdir(folder):
            split_by_session(path, folder)
        _, _, _, events = run([args.binary, "--no-timestamp", path])
        _, red_cpu, red_rss, _ = run([args.binary, "reduce", "-j1", path])
        rows = [
            (f"{name} one file", [args.binary, "export", "--to", "otlp", path]),
            (f"{name} per session", [args.binary, "export", "--to", "otlp", folder]),
        ]
        for label, cmd in rows:
            # Alone, so that ru_maxrss is this run's.
            out = subprocess.run(
                [sys.executable, "-c", RUN_ONE, json.dumps(cmd)], capture_output=True, text=True, check=True
            )
            elapsed, cpu, rss, lines = json.loads(out.stdout)
            print(
                f"{label:<22} {events:>9,} {elapsed:>7.2f}s {cpu:>6.2f}s {events / cpu:>15,.0f} "
                f"{cpu / red_cpu:>8.2f}x {rss:>7.1f}MiB"
            )
        print(f"{name + ' reduce -j1':<22} {events:>9,} {'':>8} {red_cpu:>6.2f}s {events / red_cpu:>15,.0f} {'1.00x':>9} {red_rss:>7.1f}MiB")


RUN_ONE = """
import json, resource, subprocess, sys, time
cmd = json.loads(sys.argv[1])
t0 = time.perf_counter()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
lines = 0
for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
    lines += chunk.count(b"\\n")
p.wait()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps([time.perf_counter() - t0, r.ru_utime + r.ru_stime, r.ru_maxrss / 1024, lines]))
"""

main()
