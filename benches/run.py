#!/usr/bin/env python3
"""`insights run`'s two figures, each against its bound, measured in one run.

    python3 benches/run.py                       # builds the release binary first
    python3 benches/run.py --bin target/release/insights --samples 2000 --mb 50

1. Command latency: the time from writing a command line into `insights run`'s standard input
   to the agent reading what it became, p50 and p99, against the same line relayed by `cat`
   (the bound a pipe and the scheduler set). The agent is a small fake of Claude Code's
   control protocol (this file, `--fake-agent`): it answers `initialize`, and each prompt with
   a `result` at once, noting when it read the prompt. Prompts are sent one at a time, each
   once the previous `result` has come out as an event, so each waits on nothing.
2. Event throughput: a Claude capture of MB megabytes (generated as benches/bench.py makes
   them) written by a one-shot agent (`cat FILE`) under `insights run`, against
   `cat FILE | insights --no-timestamp`: the same bytes through a pipe, the same events, the
   ratio of the times.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def fake_agent(stamps_path):
    """Claude Code's control protocol, as little as a driver needs: stamps each prompt read."""
    import json

    out = sys.stdout
    with open(stamps_path, "w") as stamps:
        for line in sys.stdin:
            now = time.monotonic_ns()
            msg = json.loads(line)
            if msg.get("type") == "control_request":
                rid = msg.get("request_id")
                out.write(json.dumps({"type": "control_response", "response": {
                    "subtype": "success", "request_id": rid, "response": {}}}) + "\n")
                out.write(json.dumps({"type": "system", "subtype": "init", "session_id": "s1",
                                      "model": "m", "tools": []}) + "\n")
            elif msg.get("type") == "user":
                stamps.write(f"{now}\n")
                out.write(json.dumps({"type": "result", "subtype": "success", "session_id": "s1",
                                      "is_error": False, "result": "ok", "num_turns": 1,
                                      "duration_ms": 1, "usage": {}}) + "\n")
            out.flush()


def relay_latency(samples):
    """The bound: a line written into `cat`'s input to the moment it is read from its output."""
    p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    out = []
    for _ in range(samples):
        t0 = time.monotonic_ns()
        p.stdin.write(b'{"command":"send_message","text":"hi"}\n')
        p.stdout.readline()
        out.append(time.monotonic_ns() - t0)
    p.stdin.close()
    p.wait()
    return out


def run_latency(binary, samples):
    stamps = tempfile.NamedTemporaryFile(delete=False, suffix=".stamps").name
    cmd = [binary, "run", "--protocol", "claude", "--no-timestamp", "--", sys.executable,
           os.path.abspath(__file__), "--fake-agent", stamps]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    sent = []
    for _ in range(samples):
        t0 = time.monotonic_ns()
        p.stdin.write(b'{"command":"send_message","text":"hi"}\n')
        sent.append(t0)
        # Wait for the turn's end as an event: the agent is idle again.
        while True:
            line = p.stdout.readline()
            if not line or b'"event":"turn_complete"' in line:
                break
    p.stdin.close()
    p.wait()
    with open(stamps) as f:
        got = [int(x) for x in f.read().split()]
    os.unlink(stamps)
    return [b - a for a, b in zip(sent, got)]


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def best_time(cmd, stdin_path=None, repeat=3):
    best = None
    for _ in range(repeat):
        with open(stdin_path or os.devnull, "rb") as stdin:
            t = time.perf_counter()
            subprocess.run(cmd, stdin=stdin, stdout=subprocess.DEVNULL, check=True)
            t = time.perf_counter() - t
        best = t if best is None else min(best, t)
    return best


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--fake-agent":
        return fake_agent(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "insights"))
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if a.bin == os.path.join(ROOT, "target", "release", "insights"):
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    us = lambda ns: ns / 1000.0  # noqa: E731
    bound = relay_latency(a.samples)
    ran = run_latency(a.bin, a.samples)
    print(f"command latency, {a.samples} prompts: insights run p50 {us(pct(ran, .5)):.0f} us, "
          f"p99 {us(pct(ran, .99)):.0f} us; cat relay p50 {us(pct(bound, .5)):.0f} us, "
          f"p99 {us(pct(bound, .99)):.0f} us; p99 ratio {pct(ran, .99) / pct(bound, .99):.2f}")
    import bench
    data = tempfile.NamedTemporaryFile(delete=False, suffix=".jsonl").name
    bench.generate(data, bench.INPUTS["claude"], a.mb, 1)
    size = os.path.getsize(data) / 1e6
    # A real pipe, as `claude -p … | insights` is (a file on standard input would let
    # insights convert it on several threads).
    pipe = best_time(["sh", "-c", 'cat "$1" | "$0" --no-timestamp', a.bin, data], None, a.repeat)
    run = best_time([a.bin, "run", "--no-timestamp", "--protocol", "one-shot", "--", "cat", data],
                    None, a.repeat)
    print(f"events, {size:.0f} MB Claude capture: insights run {size / run:.0f} MB/s, "
          f"insights in a pipe {size / pipe:.0f} MB/s; ratio (time) {run / pipe:.2f}")
    os.unlink(data)
    print(f"(statistics: {statistics.mean(ran) / 1000:.0f} us mean over {len(ran)} prompts)")


if __name__ == "__main__":
    main()
