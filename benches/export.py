#!/usr/bin/env python3
"""Benchmark of `insights export --to clickhouse` and `--to otlp`: events/s and peak memory,
against `insights` converting the same input and `cat` of the same bytes, in one run.

    python3 benches/export.py            # 50 MB per input (claude, codex), best of 3
    python3 benches/export.py --mb 100
    python3 benches/export.py --bin /tmp/insights   # a binary built before

Inputs are benches/bench.py's (`generate`: the captures repeated with fresh ids, seeded). For
each: `cat FILE`, `insights --no-timestamp FILE` (the conversion export does, with no clock)
and `insights export --to clickhouse FILE`, each into a pipe that counts lines; then the same
file stored (`insights store`) and `insights export --to clickhouse --db DB --all` (every
stored event, read back through store::query); then `--to otlp` of the file and of the store
(OTLP/JSON; the file is one of thousands of sessions, the case that held it whole). Prints
wall and CPU seconds, events/s by CPU time (the machine is shared: CPU time is the steadier
figure), peak RSS, and export's ratio to converting. The goal (issue 45): at least 100,000 events/s and at most 64 MiB.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

INPUTS = {"claude": bench.INPUTS["claude"], "codex": bench.INPUTS["codex"]}


def timed(cmd, stdin_path, repeat):
    """The best of `repeat` runs: (wall seconds, CPU seconds, output lines)."""
    best = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        secs, lines, _ = bench.run_once(cmd, stdin_path)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if best is None or cpu < best[1]:
            best = (secs, cpu, lines)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bin", help="this binary instead of building target/release/insights")
    a = ap.parse_args()
    if a.bin is None:
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=bench.ROOT, check=True)
    ins = a.bin or bench.BIN
    print(f"| input | command | wall s | CPU s | events/s (CPU) | peak RSS | CPU over converting |")
    print(f"|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, dirs in INPUTS.items():
            path = os.path.join(tmp, f"{name}.jsonl")
            size = bench.generate(path, dirs, a.mb, 1)
            db = os.path.join(tmp, f"{name}.db")
            subprocess.run([ins, "store", "--db", db, path], check=True, stderr=subprocess.DEVNULL)
            cmds = [
                ("insights --no-timestamp", [ins, "--no-timestamp", path]),
                ("cat", ["cat", path]),
                ("export --to clickhouse", [ins, "export", "--to", "clickhouse", path]),
                ("export --to clickhouse --db --all",
                 [ins, "export", "--to", "clickhouse", "--db", db, "--all"]),
                ("export --to otlp", [ins, "export", "--to", "otlp", path]),
                ("export --to otlp --db --all", [ins, "export", "--to", "otlp", "--db", db, "--all"]),
            ]
            convert_cpu = None
            events = None
            for label, cmd in cmds:
                wall, cpu, lines = timed(cmd, None, a.repeat)
                rss = bench.peak_rss(cmd, None)
                if label.startswith("insights"):
                    convert_cpu, events = cpu, lines
                rate = "" if label == "cat" else f"{events / cpu:,.0f}"
                ratio = f"{cpu / convert_cpu:.2f}" if convert_cpu and label.startswith("export") else ""
                print(
                    f"| {name} ({size / 1e6:.0f} MB, {events:,} events) | `{label}` | "
                    f"{wall:.2f} | {cpu:.2f} | {rate} | {rss / 1024:.1f} MiB | {ratio} |"
                )
                sys.stdout.flush()


if __name__ == "__main__":
    main()
